package engine

import (
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

func TestDenseTileAndKernels(t *testing.T) {
	rt, err := Open(Options{Backend: BackendCPU})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	for _, c := range []struct {
		shape      []int
		rows, cols int
	}{{[]int{5}, 5, 1}, {[]int{3, 4}, 3, 4}, {[]int{2, 3, 4}, 6, 4}} {
		b, err := rt.Alloc(tile.F32, c.shape...)
		if err != nil {
			t.Fatal(err)
		}
		if d := DenseTile(b).Desc; d.ValidRows != c.rows || d.ValidCols != c.cols || d.Rows != c.rows || d.Cols != c.cols {
			t.Errorf("%v: %+v", c.shape, d)
		}
	}
	for _, op := range []string{OpGather.name, OpScatter.name, OpGatherCAS.name} {
		var ks []*Kernel // the CPU kernels (GPU ones, such as the SASS scatter-add, may join them)
		for _, k := range Kernels(op) {
			if k.Arch.ISA == ISACPU {
				ks = append(ks, k)
			}
		}
		if len(ks) != 2 || ks[0].Preference <= ks[1].Preference || ks[1].Preference != 0 {
			t.Errorf("%s: kernels %v", op, ks)
		}
	}
}
