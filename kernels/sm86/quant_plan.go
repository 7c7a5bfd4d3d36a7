package sm86

import (
	"math"
	"strings"

	"github.com/tcrt-go/tcrt/tile"
)

// SGQuantizeBlocks is one quantisation with scales computed from each
// block's amax (fallback.QuantizeArgs with Scales nil and Mode
// tile.Saturate, or tile.NonSaturating with NonSaturating) over device
// memory: X (f32) and Q (QType E4M3 or E5M2) dense row-major Rows × Cols in blocks of BlockRows × BlockCols; Inv, if
// not 0, receives the float32 1/s per block (block-row-major); Work is
// scratch of 4 bytes per block.
type SGQuantizeBlocks struct {
	Q, X, Inv, Work                  uint64
	QType                            tile.DType
	Rows, Cols, BlockRows, BlockCols int
	Margin                           int
	PowerOfTwo                       bool
	// Given, per tensor only: Scale is the scale (positive, finite, with a
	// finite inverse: the caller checked it), no amax is taken.
	Given bool
	Scale float32
	// Scales, if not 0, holds a given float32 scale per block
	// (block-row-major; positive, finite, with a finite inverse: the caller
	// checked them): no amax is taken, no scale is computed, Inv and Work are
	// not used, and the encoding reads its multipliers from Scales.
	Scales uint64
	// NonSaturating encodes overflow as the format's overflow code
	// (tile.NonSaturating: E4M3 NaN, E5M2 Inf) instead of saturating.
	NonSaturating bool
}

// QuantBlock is the thread-block size of the quantisation kernels (the
// code computes the group index as ctaid·256 + tid).
const QuantBlock = 256

// QuantGrid returns the number of blocks for n elements: one thread per
// group of four.
func QuantGrid(n int) int {
	groups := (n + 3) / 4
	return max(1, (groups+QuantBlock-1)/QuantBlock)
}

// QuantizeBlocksSupports reports whether PlanQuantizeBlocks covers a: nil,
// or an error wrapping ErrSGUnsupported naming the rule. Covered: f32
// input, E4M3 and E5M2, either overflow mode (the caller checks it), any
// Cols (when a group of four may span blocks, the encoder loads a
// multiplier per element), blocks a multiple of 8 wide, the whole row or
// one column of every row (per tensor, per row, per column, 1×128,
// 128×128), any margin, fewer than 2^31 elements.
func QuantizeBlocksSupports(a SGQuantizeBlocks) error {
	if a.QType != tile.E4M3 && a.QType != tile.E5M2 {
		return unsupported("quantise to %v", a.QType)
	}
	if a.Rows < 1 || a.Cols < 1 || a.Rows*a.Cols >= SGLimit {
		return unsupported("quantise %d × %d (fewer than 2^31 elements)", a.Rows, a.Cols)
	}
	if a.Given && a.Scales == 0 && (a.BlockRows < a.Rows || a.BlockCols < a.Cols || !tile.ValidScale(a.Scale)) {
		return unsupported("a given scale %v for blocks of %d × %d (one valid scale per tensor)", a.Scale, a.BlockRows, a.BlockCols)
	}
	if a.BlockRows < 1 || a.BlockCols < 1 || (a.BlockCols%AmaxRun != 0 && a.BlockCols < a.Cols && !a.PerColumn()) {
		return unsupported("blocks of %d × %d (a multiple of %d wide, the whole row, or one column of every row)", a.BlockRows, a.BlockCols, AmaxRun)
	}
	return nil
}

// PlanQuantizeBlocks returns the launches of a: amax per block into Work,
// the scales (into Work, their inverses into Inv), the encoding; with given
// Scales, the encoding alone.
func PlanQuantizeBlocks(a SGQuantizeBlocks) ([]Launch, error) {
	if err := QuantizeBlocksSupports(a); err != nil {
		return nil, err
	}
	bc := min(a.BlockCols, a.Cols)
	var ls []Launch
	if !a.Given && a.Scales == 0 {
		var err error
		ls, err = PlanAmax(SGAmax{Out: a.Work, X: a.X, XType: tile.F32, Rows: a.Rows, Cols: a.Cols, BlockRows: a.BlockRows, BlockCols: bc})
		if err != nil {
			return nil, err
		}
	}
	sr, sc := (a.Rows+a.BlockRows-1)/a.BlockRows, (a.Cols+bc-1)/bc
	blocks := sr * sc
	fmax := math.Float64bits(float64(tile.Float8Max(a.QType)))
	m := min(max(a.Margin, -400), 400) // beyond ±400 every scale clamps the same way
	mask := uint64(math.MaxUint32)
	if a.PowerOfTwo {
		mask = 0xff800000
	}
	n := a.Rows * a.Cols
	// the encoder's view: with one block, a single row of n elements
	// rounded up to whole groups of four (every group's block is 0)
	cols, brows := a.Cols, a.BlockRows
	if a.OneBlock() {
		cols, brows, bc = (n+3)&^3, 1, (n+3)&^3
	}
	magic, shift := DivMagic(uint32(cols))
	brm, brs := DivMagic(uint32(brows))
	bcm, bcs := DivMagic(uint32(bc))
	scale := Launch{Func: "tcrt_sass_f8_scale", Grid: [3]int{laneGrid(blocks), 1, 1}, Block: [3]int{SGBlock, 1, 1},
		Params: []uint64{a.Work, a.Inv, uint64(blocks), 1, 0, 0, math.MaxUint32, fmax & math.MaxUint32, fmax >> 32,
			uint64(uint32(1023-m) << 20), mask}}
	if a.Given {
		scale = Launch{Func: "tcrt_sass_f8_given", Grid: [3]int{1, 1, 1}, Block: [3]int{SGBlock, 1, 1},
			Params: []uint64{a.Work, a.Inv, uint64(math.Float32bits(a.Scale)), uint64(math.Float32bits(1 / a.Scale))}}
	}
	words := a.Work
	if a.Scales != 0 {
		words = a.Scales
	} else {
		ls = append(ls, scale)
	}
	enc := EncodeKernel(a.QType, a.NonSaturating)
	if a.PerElement() {
		enc = EncodeElemKernel(a.QType, a.NonSaturating)
	}
	return append(ls,
		Launch{Func: enc, Grid: [3]int{QuantGrid(n), 1, 1}, Block: [3]int{QuantBlock, 1, 1},
			Params: []uint64{a.Q, a.X, uint64(n), uint64(math.Float32bits(1)), words, uint64(cols), uint64(magic),
				uint64(shift), uint64(uint32(-cols)), uint64(brm), uint64(brs), uint64(bcm), uint64(bcs), uint64(sc)}}), nil
}

// SGQuantizeMX is one MX quantisation over device memory: X (f32) and Q
// (QType E4M3 or E5M2) dense row-major Rows × Cols; E8M0 receives one
// scale byte per 32-element block of a row (⌈Cols/32⌉ a row, rows first);
// Work is scratch of 4 bytes per block.
type SGQuantizeMX struct {
	Q, X, E8M0, Work uint64
	QType            tile.DType
	Rows, Cols       int
	// NonSaturating encodes overflow as the format's overflow code
	// (tile.NonSaturating) instead of saturating.
	NonSaturating bool
}

// QuantizeMXSupports reports whether PlanQuantizeMX covers a: nil, or an
// error wrapping ErrSGUnsupported naming the rule. Covered: f32 input,
// E4M3 and E5M2, tile.Saturate or NonSaturating (the caller checks the
// mode), any Cols (not a multiple of 4: the encoder loads a multiplier per
// element), fewer than 2^31 elements.
func QuantizeMXSupports(a SGQuantizeMX) error {
	if a.QType != tile.E4M3 && a.QType != tile.E5M2 {
		return unsupported("quantise to %v", a.QType)
	}
	if a.Rows < 1 || a.Cols < 1 || a.Rows*a.Cols >= SGLimit {
		return unsupported("MX quantise of %d × %d (fewer than 2^31 elements)", a.Rows, a.Cols)
	}
	return nil
}

// PlanQuantizeMX returns the launches of MX quantisation a: amax per block
// into Work, the scales (E8M0 out, multipliers into Work), the encoding.
func PlanQuantizeMX(a SGQuantizeMX) ([]Launch, error) {
	if err := QuantizeMXSupports(a); err != nil {
		return nil, err
	}
	ls, err := PlanAmax(SGAmax{Out: a.Work, X: a.X, XType: tile.F32, Rows: a.Rows, Cols: a.Cols, BlockRows: 1, BlockCols: MXBlock})
	if err != nil {
		return nil, err
	}
	sc := (a.Cols + MXBlock - 1) / MXBlock
	blocks := a.Rows * sc
	n := a.Rows * a.Cols
	magic, shift := DivMagic(uint32(a.Cols))
	bcm, bcs := DivMagic(MXBlock)
	enc := EncodeKernel(a.QType, a.NonSaturating)
	if a.Cols%4 != 0 {
		enc = EncodeElemKernel(a.QType, a.NonSaturating)
	}
	ls = append(ls,
		Launch{Func: "tcrt_sass_mx_scale_" + a.QType.String(), Grid: [3]int{laneGrid(blocks), 1, 1}, Block: [3]int{SGBlock, 1, 1},
			Params: []uint64{a.Work, a.E8M0, uint64(blocks), 1, 0, 0, math.MaxUint32}},
		Launch{Func: enc, Grid: [3]int{QuantGrid(n), 1, 1}, Block: [3]int{QuantBlock, 1, 1},
			Params: []uint64{a.Q, a.X, uint64(n), uint64(math.Float32bits(1)), a.Work, uint64(a.Cols), uint64(magic),
				uint64(shift), uint64(uint32(-a.Cols)), 0, 0, uint64(bcm), uint64(bcs), uint64(sc)}})
	return ls, nil
}

// PerColumn says whether a's blocks are the columns (one column of every
// row).
func (a SGQuantizeBlocks) PerColumn() bool { return a.BlockCols == 1 && a.BlockRows >= a.Rows }

// PerElement says whether a group of four elements may span blocks, so
// the encoder must load a multiplier per element: rows not a multiple of
// 4 long, or blocks not a multiple of 4 wide, unless one block covers all.
func (a SGQuantizeBlocks) PerElement() bool {
	return !a.OneBlock() && (a.Cols%4 != 0 || min(a.BlockCols, a.Cols)%4 != 0)
}

// OneBlock says whether a's blocks cover the whole tensor (per tensor).
func (a SGQuantizeBlocks) OneBlock() bool { return a.BlockRows >= a.Rows && a.BlockCols >= a.Cols }

// EncodeKernel names the block-scale encoder for q and the overflow mode.
func EncodeKernel(q tile.DType, nonSat bool) string {
	if nonSat {
		return "tcrt_sass_quantize_mx_" + q.String() + "_nonsat"
	}
	return "tcrt_sass_quantize_mx_" + q.String()
}

// EncodeElemKernel names the block-scale encoder that loads a multiplier
// per element (any Cols, any block width: per column, rows whose length is
// not a multiple of 4) for q and the overflow mode.
func EncodeElemKernel(q tile.DType, nonSat bool) string {
	return strings.Replace(EncodeKernel(q, nonSat), "_mx_", "_elem_", 1)
}

// MXBlock is the OCP MX block (fallback.MXBlock).
const MXBlock = 32
