package gen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/internal/cudatools"
	"github.com/tcrt-go/tcrt/internal/sasscheck"
	"github.com/tcrt-go/tcrt/kernels/sm86mm"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/sass/sched"
	"github.com/tcrt-go/tcrt/tile"
)

// variants is the f32-output 128x128 pair the main-loop figures are
// quoted for.
func variants() []sm86mm.Config {
	return []sm86mm.Config{{In: tile.F16, Out: tile.F32}, {In: tile.BF16, Out: tile.F32}}
}

// allVariants is every generated kernel.
func allVariants() []sm86mm.Config { return sm86mm.Variants() }

// TestNvdisasmOracle: every word of every variant decodes under nvdisasm
// -b SM86 and -b SM89 to exactly the model's text (sasscheck.Oracle).
func TestNvdisasmOracle(t *testing.T) {
	var progs []sasscheck.Program
	for _, c := range allVariants() {
		p, err := Generate(c)
		if err != nil {
			t.Fatal(err)
		}
		progs = append(progs, sasscheck.Program{Name: c.Name(), Insts: p.Insts})
	}
	for _, arch := range []int{86, 89} {
		sasscheck.Oracle(t, arch, progs)
	}
}

// TestCubinTools: the cubins pass cuobjdump -elf and nvdisasm, and
// cubin.Read reads back the description.
func TestCubinTools(t *testing.T) {
	cuobj := cudatools.Require(t, "cuobjdump")
	nv := cudatools.Require(t, "nvdisasm")
	for _, c := range variants() {
		p, err := Generate(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, arch := range []int{86, 89} {
			b, err := p.Cubin(arch)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), fmt.Sprintf("k%d.cubin", arch))
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			elf := cudatools.Run(t, cuobj, "-elf", path)
			if !strings.Contains(elf, c.Name()) {
				t.Errorf("cuobjdump -elf does not name %s", c.Name())
			}
			dis := cudatools.Run(t, nv, "-c", path)
			if n := strings.Count(dis, "HMMA.16816.F32"); n != 32 {
				t.Errorf("sm_%d: nvdisasm shows %d HMMA, want 32", arch, n)
			}
			cu, err := cubin.Read(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(cu.Kernels) != 1 || cu.Kernels[0].Kernel.Registers != Registers || !cu.Kernels[0].Kernel.DynamicShared {
				t.Errorf("cubin.Read: %+v", cu.Kernels)
			}
		}
	}
}

// TestSchedule: the schedule checker finds no hazard.
func TestSchedule(t *testing.T) {
	for _, c := range allVariants() {
		p, err := Generate(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range sched.Check(p.Insts, sched.Options{Strict: true}) {
			t.Errorf("%s: %s", c.Name(), f)
		}
	}
}

// TestEmbeddedCubinsCurrent: the embedded cubins are what the generator
// produces now (regenerate with go generate ./kernels/sm86mm).
func TestEmbeddedCubinsCurrent(t *testing.T) {
	m := sm86mm.Module()
	for _, arch := range []int{86, 89} {
		b, err := ModuleCubin(arch)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, m.Cubins[arch]) {
			t.Errorf("cubin/%s.sm_%d.cubin is stale: run go generate ./kernels/sm86mm", sm86mm.ModuleName, arch)
		}
		cu, err := cubin.Read(m.Cubins[arch])
		if err != nil {
			t.Fatal(err)
		}
		if len(cu.Kernels) != len(sm86mm.Variants()) {
			t.Errorf("sm_%d: %d kernels, want %d", arch, len(cu.Kernels), len(sm86mm.Variants()))
		}
	}
}

// TestModuleCubinTools: the embedded module passes cuobjdump -elf and
// names every kernel.
func TestModuleCubinTools(t *testing.T) {
	var names []string
	for _, c := range sm86mm.Variants() {
		names = append(names, c.Name())
	}
	for _, b := range sm86mm.Module().Cubins {
		sasscheck.CubinNames(t, b, names)
	}
}
