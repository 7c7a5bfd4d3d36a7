// Package sasscheck is the test harness every hand-scheduled SASS kernel
// package shares: the checks against NVIDIA's tools (the nvdisasm oracle:
// each word prints as the model prints it; the cubin listing: cuobjdump
// -elf names each kernel) and the ptxas reference loop a hand-scheduled
// loop's cycle model is compared with (PtxasLoop). Tests call them; they
// need the CUDA tools (internal/cudatools).
package sasscheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/internal/cudatools"
	"github.com/tcrt-go/tcrt/sass"
)

// Program is one kernel's instructions under its name.
type Program struct {
	Name  string
	Insts sass.Program
}

// Oracle checks that nvdisasm -b SM<arch> prints every word of progs
// exactly as the model's printer does for arch. Words are encoded and
// their distinct encodings disassembled once, in one nvdisasm run, each at
// the position it lands in that stream; the model's text is taken at the
// same position, so a relative branch target prints alike in both. It
// reports at most ten mismatches.
func Oracle(tb testing.TB, arch int, progs []Program) {
	tb.Helper()
	nv := cudatools.Require(tb, "nvdisasm")
	var all []byte
	var insts []sass.Inst
	var names []string
	seen := map[string]bool{}
	words := 0
	for _, p := range progs {
		code, err := sass.Encode(p.Insts)
		if err != nil {
			tb.Fatalf("%s: %v", p.Name, err)
		}
		for k, i := range p.Insts {
			w := code[16*k : 16*k+16]
			words++
			if seen[string(w)] {
				continue
			}
			seen[string(w)] = true
			all = append(all, w...)
			insts = append(insts, i)
			names = append(names, fmt.Sprintf("%s word %d", p.Name, k))
		}
	}
	texts := cudatools.Disasm(tb, nv, arch, all)
	if len(texts) != len(insts) {
		tb.Fatalf("SM%d: nvdisasm printed %d instructions, want %d", arch, len(texts), len(insts))
	}
	bad := 0
	for k, i := range insts {
		pc := int64(16 * k)
		if got, want := texts[pc], i.TextArch(arch, pc); got != want {
			if bad++; bad <= 10 {
				tb.Errorf("SM%d %s: nvdisasm %q, model %q", arch, names[k], got, want)
			}
		}
	}
	tb.Logf("SM%d: %d distinct words (of %d) of %d programs", arch, len(insts), words, len(progs))
}

// CubinNames checks that cuobjdump -elf reads the cubin and lists a
// .text section for every name, and returns nvdisasm -c's listing of it.
func CubinNames(tb testing.TB, cubin []byte, names []string) string {
	tb.Helper()
	cuobj := cudatools.Require(tb, "cuobjdump")
	nv := cudatools.Require(tb, "nvdisasm")
	path := filepath.Join(tb.TempDir(), "module.cubin")
	if err := os.WriteFile(path, cubin, 0o644); err != nil {
		tb.Fatal(err)
	}
	elf := cudatools.Run(tb, cuobj, "-elf", path)
	for _, n := range names {
		if !strings.Contains(elf, ".text."+n) {
			tb.Errorf("cuobjdump -elf shows no .text.%s", n)
		}
	}
	return cudatools.Run(tb, nv, "-c", path)
}
