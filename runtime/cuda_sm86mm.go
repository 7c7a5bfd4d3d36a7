//go:build cuda

package runtime

import (
	"github.com/tcrt-go/tcrt/kernels/sm86mm"
	"github.com/tcrt-go/tcrt/tile"
)

// Registers the hand-scheduled SM86/SM89 matmul (rule and plan in
// sm86mm.go). Unverified on a GPU: no run has loaded these cubins.
func init() {
	Register(sm86mmKernel(sm86mm.Module, sm86mmName))
}

// sm86mmName is the kernel symbol for a tile, input and output type and
// operand layout.
func sm86mmName(t int, in, out tile.DType, split, transA, transB bool) string {
	return sm86mmConfig(t, in, out, split, transA, transB).Name()
}

func sm86mmConfig(t int, in, out tile.DType, split, transA, transB bool) sm86mm.Config {
	c := sm86mm.Config{Tile: sm86mm.Tile(t), SplitK: split, TransA: transA, TransB: transB}
	if in == tile.BF16 {
		c.In = sm86mm.BF16
	}
	switch out {
	case tile.F16:
		c.Out = sm86mm.OutF16
	case tile.BF16:
		c.Out = sm86mm.OutBF16
	}
	return c
}
