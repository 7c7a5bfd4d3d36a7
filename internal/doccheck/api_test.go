package doccheck

import (
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// engineNames are the engine's identifiers (package internal/engine),
// which the public runtime package must not show: the registry, the
// launches, the argument structs and their converters, the views.
var engineNames = []string{
	"Kernel", "Kernels", "Register", "Arch", "ISA", "Launch", "Run", "Select",
	"Prepare", "Prepared", "LaunchKernel", "CheckArgs", "Args", "CheckAlias",
	"CheckHostAlloc", "EncodeFloat32", "DecodeFloat32", "DevicePtr",
	"CPUKernel", "CPUHas", "LaunchGPU", "LaunchGPUAfter", "GPULaunch",
	"Operand", "Operands", "MatrixOperand", "MaxOperands", "Matrix", "MatrixOf",
	"AttnTensor", "AttnView", "Tile", "DenseTile", "Overlaps", "Host", "Check",
	"Use", "WithHostArgs", "Explain", "ExplainOn", "Explanation", "Candidate",
	"DefaultCanLoad", "Handles", "Wrap",
}

// engineName matches what engineNames forbids: one of them, an Op…
// constant, a …Args struct or a Host…Args converter, or an alias of a
// fallback enum.
func engineName(name string) bool {
	return slices.Contains(engineNames, name) || regexp.MustCompile(`^(Op[A-Z]\w*|\w+Args|Host\w+Args|ActFunc|EltOp|NormKind|PoolMode|RoPEScaling\w*|Activation|Granularity|IndexMode|ScatterOp)$`).MatchString(name)
}

// TestRuntimeShowsNoEngine: `go doc -all ./runtime` (what a user of the
// public package sees) declares no engine identifier, as a name or as a
// method, and names no engine package.
func TestRuntimeShowsNoEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go doc")
	}
	cmd := exec.Command("go", "doc", "-all", "./runtime")
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go doc: %v", err)
	}
	decl := regexp.MustCompile(`^(?:func (?:\([^)]*\) )?|type |const |var |\t)([A-Z]\w*)`)
	var names []string
	inStruct := false // struct fields are not declarations
	for line := range strings.Lines(string(out)) {
		if strings.Contains(line, "engine") {
			t.Errorf("go doc names the engine: %s", strings.TrimSpace(line))
		}
		switch {
		case strings.HasPrefix(line, "type ") && strings.HasSuffix(line, "struct {\n"):
			inStruct = true
		case line == "}\n":
			inStruct = false
		}
		if m := decl.FindStringSubmatch(line); m != nil && !(inStruct && line[0] == '\t') {
			names = append(names, m[1])
		}
	}
	if len(names) < 20 {
		t.Fatalf("read only %d declarations from go doc; the pattern is stale", len(names))
	}
	for _, n := range names {
		if engineName(n) {
			t.Errorf("package runtime exports %s, an engine identifier", n)
		}
	}
}

// TestExamplesArePublic: examples/quickstart imports only ops and runtime
// of this module (a user's two imports), and examples/cpuinit nothing
// under internal/.
func TestExamplesArePublic(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./examples/quickstart", "./examples/cpuinit")
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/tcrt-go/tcrt/"
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		for _, imp := range f[1:] {
			rel, ok := strings.CutPrefix(imp, mod)
			switch {
			case !ok:
			case strings.HasSuffix(f[0], "quickstart") && rel != "ops" && rel != "runtime":
				t.Errorf("%s imports %s; the quickstart uses ops and runtime only", f[0], rel)
			case strings.Contains("/"+rel+"/", "/internal/"):
				t.Errorf("%s imports %s, an internal package", f[0], rel)
			}
		}
	}
}

// TestEngineName checks the matcher on names it must and must not take.
func TestEngineName(t *testing.T) {
	for _, n := range []string{"Kernel", "OpMatMul", "MatMulArgs", "HostNormArgs", "Launch", "Explain", "AttnView"} {
		if !engineName(n) {
			t.Errorf("engineName(%q) = false", n)
		}
	}
	for _, n := range []string{"Open", "Buffer", "Stream", "HostMemory", "ReadRaw", "Options", "Opens"} {
		if engineName(n) {
			t.Errorf("engineName(%q) = true", n)
		}
	}
}
