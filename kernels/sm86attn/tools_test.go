package sm86attn

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/sass"
)

// cudaTool returns $TCRT_CUDA_HOME/bin/<name> or <name> on PATH; without
// it the test is skipped, or fails when CI=true.
func cudaTool(t *testing.T, name string) string {
	t.Helper()
	if home := os.Getenv("TCRT_CUDA_HOME"); home != "" {
		p := filepath.Join(home, "bin", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	msg := fmt.Sprintf("%s not found in $TCRT_CUDA_HOME/bin or on PATH (source $(scripts/cuda-tools.sh)/env)", name)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func runTool(t *testing.T, tool string, args ...string) string {
	t.Helper()
	cmd := exec.Command(tool, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(tool), strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

var disasmLine = regexp.MustCompile(`^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*/\* 0x[0-9a-f]{16} \*/\s*$`)

// sm89Alias maps nvdisasm -b SM89's spelling of a word to the model's.
var sm89Alias = strings.NewReplacer("F2FP.F16.F32.PACK_AB", "F2FP.PACK_AB", "F2FP.BF16.F32.PACK_AB", "F2FP.BF16.PACK_AB")

// TestNvdisasmOracle: every word of every variant decodes under nvdisasm
// -b SM86 and -b SM89 to exactly the model's text. Each distinct word is
// disassembled once (the variants share most of theirs; a branch's text
// is checked at the position it is disassembled at, which its relative
// target makes equivalent).
func TestNvdisasmOracle(t *testing.T) {
	nv := cudaTool(t, "nvdisasm")
	var all []byte
	type span struct {
		name  string
		insts sass.Program
	}
	var spans []span
	seen := map[string]bool{}
	words := 0
	keep := func(name string, insts sass.Program, code []byte) {
		var sp span
		sp.name = name
		for k, i := range insts {
			w := code[16*k : 16*k+16]
			words++
			if seen[string(w)] {
				continue
			}
			seen[string(w)] = true
			all = append(all, w...)
			sp.insts = append(sp.insts, i)
		}
		spans = append(spans, sp)
	}
	for _, c := range Variants() {
		p, err := Generate(c)
		if err != nil {
			t.Fatal(err)
		}
		code, err := p.Code()
		if err != nil {
			t.Fatal(err)
		}
		keep(c.Name(), p.Insts, code)
	}
	for _, c := range CombineVariants() {
		p, err := GenerateCombine(c)
		if err != nil {
			t.Fatal(err)
		}
		code, err := sass.Encode(p.Insts)
		if err != nil {
			t.Fatal(err)
		}
		keep(c.Name(), p.Insts, code)
	}
	path := filepath.Join(t.TempDir(), "words.bin")
	if err := os.WriteFile(path, all, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, arch := range []string{"SM86", "SM89"} {
		out := runTool(t, nv, "-b", arch, "-hex", path)
		var texts []string
		for _, l := range strings.Split(out, "\n") {
			if m := disasmLine.FindStringSubmatch(l); m != nil {
				texts = append(texts, m[2])
			}
		}
		if len(texts) != len(all)/16 {
			t.Fatalf("%s: nvdisasm printed %d instructions, want %d", arch, len(texts), len(all)/16)
		}
		bad, at := 0, 0
		for _, sp := range spans {
			for k, i := range sp.insts {
				got := texts[at+k]
				if arch == "SM89" {
					got = sm89Alias.Replace(got)
				}
				if want := i.Text(int64(16 * (at + k))); got != want {
					if bad++; bad < 10 {
						t.Errorf("%s %s: word %d: nvdisasm %q, model %q", sp.name, arch, k, got, want)
					}
				}
			}
			at += len(sp.insts)
		}
		t.Logf("%s: %d distinct words (of %d) of %d variants", arch, len(texts), words, len(spans))
	}
}

// TestSchedule: the schedule checker finds no hazard in any variant.
func TestSchedule(t *testing.T) {
	for _, c := range Variants() {
		p, err := Generate(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range sass.CheckSchedule(p.Insts, sass.CheckOptions{}) {
			t.Errorf("%s: %s", c.Name(), f)
		}
	}
	for _, c := range CombineVariants() {
		p, err := GenerateCombine(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range sass.CheckSchedule(p.Insts, sass.CheckOptions{}) {
			t.Errorf("%s: %s", c.Name(), f)
		}
	}
}

// TestEmbeddedCubinsCurrent: the embedded cubins are what the generator
// produces now (regenerate with go generate ./kernels/sm86attn), and they
// read back with every kernel, its registers and dynamic shared memory.
func TestEmbeddedCubinsCurrent(t *testing.T) {
	m := Module()
	for _, arch := range []int{86, 89} {
		b, err := ModuleCubin(arch)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, m.Cubins[arch]) {
			t.Errorf("cubin/%s.sm_%d.cubin is stale: run go generate ./kernels/sm86attn", ModuleName, arch)
		}
		cu, err := sass.ReadCubin(m.Cubins[arch])
		if err != nil {
			t.Fatal(err)
		}
		if len(cu.Kernels) != len(Variants())+len(CombineVariants()) {
			t.Fatalf("sm_%d: %d kernels, want %d", arch, len(cu.Kernels), len(Variants())+len(CombineVariants()))
		}
		for k, c := range CombineVariants() {
			kk := cu.Kernels[len(Variants())+k].Kernel
			if kk.Name != c.Name() || kk.Registers != CombineRegisters {
				t.Errorf("sm_%d: combine kernel %d: %s, %d registers", arch, k, kk.Name, kk.Registers)
			}
		}
		for k, c := range Variants() {
			kk := cu.Kernels[k].Kernel
			if kk.Name != c.Name() || kk.Registers != c.Registers() || !kk.DynamicShared {
				t.Errorf("sm_%d kernel %d: %s, %d registers, dynamic %v", arch, k, kk.Name, kk.Registers, kk.DynamicShared)
			}
		}
	}
}

// TestModuleCubinTools: the embedded module passes cuobjdump -elf, which
// names every kernel, and nvdisasm -c shows the HMMAs of both loops.
func TestModuleCubinTools(t *testing.T) {
	cuobj := cudaTool(t, "cuobjdump")
	nv := cudaTool(t, "nvdisasm")
	for arch, b := range Module().Cubins {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("m%d.cubin", arch))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		elf := runTool(t, cuobj, "-elf", path)
		want := 0
		for _, c := range Variants() {
			if !strings.Contains(elf, c.Name()) {
				t.Errorf("sm_%d: cuobjdump -elf does not name %s", arch, c.Name())
			}
			// 2 loops x (Q·Kᵀ + P·V HMMAs a warp a block)
			want += 2 * (c.dw()/16*c.nTiles() + c.nKK()*c.dw()/8)
		}
		for _, c := range CombineVariants() {
			if !strings.Contains(elf, c.Name()) {
				t.Errorf("sm_%d: cuobjdump -elf does not name %s", arch, c.Name())
			}
		}
		dis := runTool(t, nv, "-c", path)
		if n := strings.Count(dis, "HMMA.16816.F32"); n != want {
			t.Errorf("sm_%d: nvdisasm -c shows %d HMMA, want %d", arch, n, want)
		}
	}
}
