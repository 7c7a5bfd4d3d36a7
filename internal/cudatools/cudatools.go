// Package cudatools finds and runs NVIDIA's command-line tools (ptxas,
// nvdisasm, cuobjdump) for the project's tests: the golden and oracle tests
// of the SASS model, the kernels' cubin checks and the ptxas builds of the
// PTX modules. The tools come from scripts/cuda-tools.sh; they run without a
// GPU.
//
// A tool is looked up in $TCRT_CUDA_HOME/bin first, then on PATH. Where it
// is missing, a test that needs it is skipped, except under CI=true, where
// that is a failure: CI installs the tools, so a missing one there is a
// broken build, not a reason to skip.
package cudatools

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Path returns the tool's path, or "" when it is not installed.
func Path(name string) string {
	if h := os.Getenv("TCRT_CUDA_HOME"); h != "" {
		p := filepath.Join(h, "bin", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, _ := exec.LookPath(name)
	return p
}

// Require returns the tool's path; without it the test is skipped, or
// fails when CI=true.
func Require(tb testing.TB, name string) string {
	tb.Helper()
	if p := Path(name); p != "" {
		return p
	}
	msg := fmt.Sprintf("%s not found in $TCRT_CUDA_HOME/bin or on PATH (source $(scripts/cuda-tools.sh)/env)", name)
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg + " and CI=true")
	}
	tb.Skip(msg)
	return ""
}

// Run runs the tool and returns its standard output; a failure or anything
// on standard error fails the test.
func Run(tb testing.TB, tool string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(tool, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		tb.Fatalf("%s %s: %v\n%s", filepath.Base(tool), strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// Line matches an instruction line of nvdisasm -hex (and cuobjdump -sass)
// output: the address, the text, the low or only hex word.
var Line = regexp.MustCompile(`^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*/\* 0x[0-9a-f]{16} \*/\s*$`)

// Disasm runs nvdisasm -b SM<arch> -hex on raw instruction words and
// returns the text of each word by byte address, as nvdisasm prints it.
func Disasm(tb testing.TB, nvdisasm string, arch int, words []byte) map[int64]string {
	tb.Helper()
	f := filepath.Join(tb.TempDir(), "words.bin")
	if err := os.WriteFile(f, words, 0o644); err != nil {
		tb.Fatal(err)
	}
	out := Run(tb, nvdisasm, "-b", fmt.Sprintf("SM%d", arch), "-hex", f)
	texts := map[int64]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		m := Line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		a, _ := strconv.ParseInt(m[1], 16, 64)
		texts[a] = strings.TrimSpace(m[2])
	}
	return texts
}

// NVCCHostFlags returns the flags nvcc needs for a host compiler it
// accepts. nvcc 11.8 takes gcc up to 11 and refuses newer ones; it only
// preprocesses with the host compiler when it builds device code (-cubin,
// -ptx), so where no g++-11 is installed (Debian 12 ships gcc 12) the
// version check is lifted with --allow-unsupported-compiler.
func NVCCHostFlags() []string {
	if p, err := exec.LookPath("g++-11"); err == nil && p != "" {
		return []string{"-ccbin", "g++-11"}
	}
	return []string{"--allow-unsupported-compiler"}
}
