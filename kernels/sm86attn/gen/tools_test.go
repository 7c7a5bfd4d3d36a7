package gen

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/internal/sasscheck"
	"github.com/tcrt-go/tcrt/kernels/sm86attn"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/sass/sched"
)

// TestNvdisasmOracle: every word of every variant decodes under nvdisasm
// -b SM86 and -b SM89 to exactly the model's text. Each distinct word is
// disassembled once (the variants share most of theirs; a branch's text
// is checked at the position it is disassembled at, which its relative
// target makes equivalent).
func TestNvdisasmOracle(t *testing.T) {
	var progs []sasscheck.Program
	for _, c := range sm86attn.Variants() {
		p, err := Generate(c)
		if err != nil {
			t.Fatal(err)
		}
		progs = append(progs, sasscheck.Program{Name: c.Name(), Insts: p.Insts})
	}
	for _, c := range sm86attn.CombineVariants() {
		p, err := GenerateCombine(c)
		if err != nil {
			t.Fatal(err)
		}
		progs = append(progs, sasscheck.Program{Name: c.Name(), Insts: p.Insts})
	}
	for _, arch := range []int{86, 89} {
		sasscheck.Oracle(t, arch, progs)
	}
}

// TestSchedule: the schedule checker finds no hazard in any variant.
func TestSchedule(t *testing.T) {
	for _, c := range sm86attn.Variants() {
		p, err := Generate(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range sched.Check(p.Insts, sched.Options{Strict: true}) {
			t.Errorf("%s: %s", c.Name(), f)
		}
	}
	for _, c := range sm86attn.CombineVariants() {
		p, err := GenerateCombine(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range sched.Check(p.Insts, sched.Options{Strict: true}) {
			t.Errorf("%s: %s", c.Name(), f)
		}
	}
}

// TestEmbeddedCubinsCurrent: the embedded cubins are what the generator
// produces now (regenerate with go generate ./kernels/sm86attn), and they
// read back with every kernel, its registers and dynamic shared memory.
func TestEmbeddedCubinsCurrent(t *testing.T) {
	m := sm86attn.Module()
	for _, arch := range []int{86, 89} {
		b, err := ModuleCubin(arch)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, m.Cubins[arch]) {
			t.Errorf("cubin/%s.sm_%d.cubin is stale: run go generate ./kernels/sm86attn", sm86attn.ModuleName, arch)
		}
		cu, err := cubin.Read(m.Cubins[arch])
		if err != nil {
			t.Fatal(err)
		}
		if len(cu.Kernels) != len(sm86attn.Variants())+len(sm86attn.CombineVariants()) {
			t.Fatalf("sm_%d: %d kernels, want %d", arch, len(cu.Kernels), len(sm86attn.Variants())+len(sm86attn.CombineVariants()))
		}
		for k, c := range sm86attn.CombineVariants() {
			kk := cu.Kernels[len(sm86attn.Variants())+k].Kernel
			if kk.Name != c.Name() || kk.Registers != CombineRegisters {
				t.Errorf("sm_%d: combine kernel %d: %s, %d registers", arch, k, kk.Name, kk.Registers)
			}
		}
		for k, c := range sm86attn.Variants() {
			kk := cu.Kernels[k].Kernel
			if kk.Name != c.Name() || kk.Registers != registers(c) || !kk.DynamicShared {
				t.Errorf("sm_%d kernel %d: %s, %d registers, dynamic %v", arch, k, kk.Name, kk.Registers, kk.DynamicShared)
			}
		}
	}
}

// TestModuleCubinTools: the embedded module passes cuobjdump -elf, which
// names every kernel, and nvdisasm -c shows the HMMAs of both loops.
func TestModuleCubinTools(t *testing.T) {
	var names []string
	want := 0
	for _, c := range sm86attn.Variants() {
		names = append(names, c.Name())
		// 2 loops x (Q·Kᵀ + P·V HMMAs a warp a block)
		want += 2 * (dw(c)/16*nTiles(c) + nKK(c)*dw(c)/8)
	}
	for _, c := range sm86attn.CombineVariants() {
		names = append(names, c.Name())
	}
	for arch, b := range sm86attn.Module().Cubins {
		dis := sasscheck.CubinNames(t, b, names)
		if n := strings.Count(dis, "HMMA.16816.F32"); n != want {
			t.Errorf("sm_%d: nvdisasm -c shows %d HMMA, want %d", arch, n, want)
		}
	}
}
