package sass

import (
	"os"
	"path/filepath"
	"testing"
)

// ptxasKernels assembles testdata/sched/<file> with ptxas -arch=sm_86 and
// returns each kernel's code decoded with Decode, by kernel name. It skips
// the test (fails when CI=true) without ptxas.
func ptxasKernels(t *testing.T, file string) map[string]Program {
	t.Helper()
	ptxas := cudaTool(t, "ptxas")
	dir := t.TempDir()
	out := filepath.Join(dir, "k.cubin")
	runTool(t, ptxas, "-arch=sm_86", filepath.Join("testdata", "sched", file), "-o", out)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ReadCubin(b)
	if err != nil {
		t.Fatalf("ReadCubin: %v", err)
	}
	progs := map[string]Program{}
	for _, k := range c.Kernels {
		p, err := Decode(trimTail(k.Kernel.Code))
		if err != nil {
			t.Fatalf("%s: kernel %s: %v", file, k.Kernel.Name, err)
		}
		progs[k.Kernel.Name] = p
	}
	return progs
}

// trimTail drops ptxas's padding after the last EXIT: the self-branch
// "BRA ." and the NOPs that fill the section to a multiple of 128 bytes.
func trimTail(code []byte) []byte {
	n := len(code) / 16
	for n > 0 {
		w := code[16*(n-1) : 16*n]
		op := uint64(w[0]) | uint64(w[1]&0x0f)<<8
		if op == 0x918 || op == 0x947 { // NOP, BRA
			n--
			continue
		}
		break
	}
	return code[:16*n]
}
