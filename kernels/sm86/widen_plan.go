package sm86

import (
	"github.com/tcrt-go/tcrt/tile"
)

// SGWiden is one widening of N elements of XType (f16 or bf16) at X to
// binary32 at Out (4·N bytes).
type SGWiden struct {
	Out, X uint64
	XType  tile.DType
	N      int
}

// PlanWiden returns the launch of widening a.
func PlanWiden(a SGWiden) ([]Launch, error) {
	if err := WidenSupports(a); err != nil {
		return nil, err
	}
	k := "tcrt_sass_widen_bf16"
	if a.XType == tile.F16 {
		k = "tcrt_sass_widen_f16"
	}
	groups := (a.N + WidenPer - 1) / WidenPer
	return []Launch{{Func: k, Grid: [3]int{laneGrid(groups), 1, 1}, Block: [3]int{SGBlock, 1, 1},
		Params: []uint64{a.Out, a.X, uint64(groups), 1, 0, 0, 0xffffffff, uint64(a.N)}}}, nil
}

// WidenPer is the elements a widen thread converts.
const WidenPer = 4

// WidenSupports reports whether PlanWiden covers a: nil, or an error
// wrapping ErrSGUnsupported naming the rule. Covered: f16 and bf16, 1 to
// 2^31−1 elements.
func WidenSupports(a SGWiden) error {
	if a.XType != tile.F16 && a.XType != tile.BF16 {
		return unsupported("widen %v (covered: f16, bf16)", a.XType)
	}
	if a.N < 1 || a.N >= SGLimit {
		return unsupported("widen %d elements", a.N)
	}
	return nil
}
