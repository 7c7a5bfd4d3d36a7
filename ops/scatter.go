package ops

import (
	"context"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// ScatterOp is what MScatter does with each value.
type ScatterOp = tile.ScatterOp

// Scatter operations for ScatterOptions.Op.
const (
	ScatterStore = tile.ScatterStore // plain scatter (the default)
	ScatterAdd   = tile.ScatterAdd   // f32, f16, bf16, f64, s32, u32
	ScatterMax   = tile.ScatterMax   // s32, u32, f32
	ScatterMin   = tile.ScatterMin   // s32, u32, f32
)

// ScatterOptions are the optional parts of MScatter; the zero value (or
// nil) is a plain, unordered row scatter that faults on an out-of-bounds
// index.
type ScatterOptions struct {
	// Mode selects row or element scattering.
	Mode IndexMode
	// Op is ScatterStore, ScatterAdd, ScatterMax or ScatterMin.
	Op ScatterOp
	// Deterministic applies the updates of each destination element in
	// increasing lane order: a plain scatter keeps the value of the largest
	// source index, and reductions give the same bits on every run. Without
	// it lanes run in any order (faster): a plain scatter keeps one of the
	// values of each element, integer adds and all max/min are still exact,
	// float adds may round differently from run to run.
	Deterministic bool
	// OOB is OOBError (default), OOBSkip, OOBClamp or OOBWrap.
	OOB OOB
	// Stream, if set, makes the call asynchronous on that stream; nil runs
	// it on the default stream and waits.
	Stream *runtime.Stream
}

var opScatter = engine.OpScatter.Name()

var scatterContract = tile.Contract{Op: opScatter}

// scatterTypes lists the element types each operation accepts (ScatterStore
// takes any byte-sized type).
var scatterTypes = map[ScatterOp]map[tile.DType]bool{
	ScatterAdd: {tile.F32: true, tile.F16: true, tile.BF16: true, tile.F64: true, tile.S32: true, tile.U32: true},
	ScatterMax: {tile.S32: true, tile.U32: true, tile.F32: true},
	ScatterMin: {tile.S32: true, tile.U32: true, tile.F32: true},
}

// MScatter sends the valid region of src into mem under the tile contract:
// legality, then a preflight of every index, then one atomic update per
// element. Row mode: mem is a table whose rows have src's ValidCols
// elements and src[r, :] goes to row idx[r] (idx is ValidRows × 1); element
// mode: src[r, c] goes to element idx[r, c] of mem taken flat. src and mem
// have the same element type. See fallback.Combine for the arithmetic of
// each operation (float max/min order −0 below +0 and ignore NaNs).
//
// Every element update is atomic, so scatters on different streams may
// target the same memory at once. A fault (legality: ErrTileLegality; an
// index outside mem under OOBError: ErrBounds) leaves mem unchanged.
func MScatter(ctx context.Context, rt *runtime.Runtime, mem *runtime.Buffer, idx, src Tile, opt *ScatterOptions) error {
	args, s, err := mScatterArgs(rt, mem, idx, src, opt)
	if err != nil {
		return err
	}
	return ert(rt).Run(ctx, estream(s), engine.OpScatter.Name(), args)
}

// ExplainMScatter says which kernel MScatter would select and why.
func ExplainMScatter(rt *runtime.Runtime, mem *runtime.Buffer, idx, src Tile, opt *ScatterOptions) (Explanation, error) {
	args, _, err := mScatterArgs(rt, mem, idx, src, opt)
	if err != nil {
		return Explanation{}, err
	}
	return explain(rt, engine.OpScatter.Name(), args)
}

// mScatterArgs runs MScatter's legality checks and returns the runtime's
// argument struct and the stream, without launching.
func mScatterArgs(rt *runtime.Runtime, mem *runtime.Buffer, idx, src Tile, opt *ScatterOptions) (*engine.ScatterArgs, *runtime.Stream, error) {
	c := scatterContract
	var o ScatterOptions
	if opt != nil {
		o = *opt
	}
	if err := checkRuntime(rt, o.Stream, c.Op); err != nil {
		return nil, nil, err
	}
	if !o.Mode.Valid() {
		return nil, nil, c.Legality(ErrArgument, "Mode", "unknown index mode %d", o.Mode)
	}
	if !o.Op.Valid() {
		return nil, nil, c.Legality(ErrArgument, "Op", "unknown scatter operation %d", o.Op)
	}
	switch o.OOB {
	case OOBError, OOBSkip, OOBClamp, OOBWrap:
	default:
		return nil, nil, c.Legality(ErrArgument, "OOB", "policy %v is not one of error, skip, clamp, wrap", o.OOB)
	}
	s, err := checkTile(c, rt, "src", src)
	if err != nil {
		return nil, nil, err
	}
	if ok := scatterTypes[o.Op]; ok != nil && !ok[s.Desc.DType] {
		return nil, nil, c.Legality(ErrDType, "src", "scatter-%v is not defined on %v", o.Op, s.Desc.DType)
	}
	ix, err := checkIndexTile(c, rt, idx, o.Mode, s.Desc)
	if err != nil {
		return nil, nil, err
	}
	rows, err := checkMemory(c, rt, "mem", mem, s.Desc.DType, o.Mode, s.Desc.ValidCols)
	if err != nil {
		return nil, nil, err
	}
	if mem == src.Buf || mem == idx.Buf {
		return nil, nil, tile.Errorf(ErrAlias, opScatter, "mem", "the memory shares a buffer with src or idx")
	}
	return &engine.ScatterArgs{Mode: o.Mode, Op: o.Op, Deterministic: o.Deterministic, Mem: ebuf(mem), MemRows: rows,
		Idx: ix.eng(), Src: s.eng(), OOB: o.OOB}, o.Stream, nil
}

// MScatterPlan validates an MScatter call and selects its kernel once,
// without launching it: the returned Call runs it (Call.Run) and explains
// the choice (Call.Explain).
func MScatterPlan(rt *runtime.Runtime, mem *runtime.Buffer, idx, src Tile, opt *ScatterOptions) (*Call, error) {
	args, s, err := mScatterArgs(rt, mem, idx, src, opt)
	return newCall(rt, s, engine.OpScatter.Name(), args, err)
}
