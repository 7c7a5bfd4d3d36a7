package sm86

import (
	"math"

	"github.com/tcrt-go/tcrt/tile"
)

// SGAmax is one amax reduction (fallback.AmaxArgs' meaning) over device
// memory: X is a dense row-major Rows × Cols matrix of XType (f32, bf16 or
// f16); Out receives one binary32 per block of BlockRows × BlockCols
// (block-row-major over ⌈Rows/BlockRows⌉ × ⌈Cols/BlockCols⌉; the caller
// turns a granularity into its block shape with fallback.Granularity.Block).
type SGAmax struct {
	Out, X                           uint64
	XType                            tile.DType
	Rows, Cols, BlockRows, BlockCols int
}

// AmaxSupports reports whether PlanAmax covers a: nil, or an error wrapping
// ErrSGUnsupported naming the rule. Covered: f32, bf16 and f16 input;
// blocks whose width is a multiple of 8 or spans the row (per tensor, per
// row, 1×128, 128×128, MX) or one column wide spanning every row (per
// column, the column kernels); fewer than
// 2^31 elements.
func AmaxSupports(a SGAmax) error {
	if a.XType != tile.F32 && a.XType != tile.BF16 && a.XType != tile.F16 {
		return unsupported("amax of %v", a.XType)
	}
	if a.Rows < 1 || a.Cols < 1 || a.BlockRows < 1 || a.BlockCols < 1 || a.Rows*a.Cols >= SGLimit {
		return unsupported("amax of %d × %d in blocks of %d × %d", a.Rows, a.Cols, a.BlockRows, a.BlockCols)
	}
	if a.BlockCols%AmaxRun != 0 && a.BlockCols < a.Cols && !a.PerColumn() {
		return unsupported("amax blocks %d × %d (a multiple of %d wide, the whole row, or one column of every row)", a.BlockRows, a.BlockCols, AmaxRun)
	}
	return nil
}

// PlanAmax returns the launches of amax reduction a: zero the block words,
// reduce, finish.
func PlanAmax(a SGAmax) ([]Launch, error) {
	if err := AmaxSupports(a); err != nil {
		return nil, err
	}
	if a.PerColumn() && a.Cols > 1 {
		return amaxColPlan(a), nil
	}
	sr, sc := (a.Rows+a.BlockRows-1)/a.BlockRows, (a.Cols+a.BlockCols-1)/a.BlockCols
	blocks := sr * sc
	fin := func(k string, n int) Launch {
		return Launch{Func: k, Grid: [3]int{laneGrid(n), 1, 1}, Block: [3]int{SGBlock, 1, 1}, Params: []uint64{a.Out, uint64(n), 1, 0, 0, math.MaxUint32}}
	}
	runs := (a.Cols + AmaxRun - 1) / AmaxRun
	lanes := a.Rows * runs
	magic, shift := DivMagic(uint32(runs))
	brm, brs := DivMagic(uint32(a.BlockRows))
	bcm, bcs := DivMagic(uint32(a.BlockCols))
	name, finName := "tcrt_sass_amax_f32", "tcrt_sass_amax_fin"
	switch a.XType {
	case tile.BF16:
		name = "tcrt_sass_amax_bf16"
	case tile.F16:
		name, finName = "tcrt_sass_amax_f16", "tcrt_sass_amax_fin_f16"
	}
	return []Launch{
		fin("tcrt_sass_amax_zero", blocks),
		{Func: name, Grid: [3]int{laneGrid(lanes), 1, 1}, Block: [3]int{SGBlock, 1, 1}, Params: []uint64{a.Out, a.X, uint64(lanes), uint64(runs),
			uint64(magic), uint64(shift), uint64(uint32(-runs)), uint64(a.Cols), uint64(brm), uint64(brs), uint64(bcm),
			uint64(bcs), uint64(sc)}},
		fin(finName, blocks),
	}, nil
}

// AmaxRun is the elements one reduction thread reads.
const AmaxRun = 8

// PerColumn says whether a's blocks are the columns (fallback.PerColumn).
func (a SGAmax) PerColumn() bool { return a.BlockCols == 1 && a.BlockRows >= a.Rows }

// amaxColPlan is PlanAmax for blocks one column wide spanning every row.
func amaxColPlan(a SGAmax) []Launch {
	segs := (a.Rows + AmaxRun - 1) / AmaxRun
	lanes := segs * a.Cols
	magic, shift := DivMagic(uint32(a.Cols))
	name, finName := "tcrt_sass_amax_col_f32", "tcrt_sass_amax_fin"
	switch a.XType {
	case tile.BF16:
		name = "tcrt_sass_amax_col_bf16"
	case tile.F16:
		name, finName = "tcrt_sass_amax_col_f16", "tcrt_sass_amax_fin_f16"
	}
	fin := func(k string) Launch {
		return Launch{Func: k, Grid: [3]int{laneGrid(a.Cols), 1, 1}, Block: [3]int{SGBlock, 1, 1}, Params: []uint64{a.Out, uint64(a.Cols), 1, 0, 0, 0xffffffff}}
	}
	return []Launch{
		fin("tcrt_sass_amax_zero"),
		{Func: name, Grid: [3]int{laneGrid(lanes), 1, 1}, Block: [3]int{SGBlock, 1, 1}, Params: []uint64{a.Out, a.X, uint64(lanes), uint64(a.Cols),
			uint64(magic), uint64(shift), uint64(uint32(-a.Cols)), uint64(a.Rows)}},
		fin(finName),
	}
}
