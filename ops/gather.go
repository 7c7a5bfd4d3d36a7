package ops

import (
	"context"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// IndexMode says what an index of a gather or scatter selects.
type IndexMode = tile.IndexMode

// Index modes for GatherOptions.Mode and ScatterOptions.Mode.
const (
	// IndexRows: idx[r] selects a whole table row (the default).
	IndexRows = tile.IndexRows
	// IndexElements: idx[r, c] selects one element of a flat memory.
	IndexElements = tile.IndexElements
)

// OOB is the out-of-bounds policy for gather and scatter indices.
type OOB = tile.OOB

// Out-of-bounds policies (see tile.OOB).
const (
	OOBError = tile.OOBError
	OOBClamp = tile.OOBClamp
	OOBWrap  = tile.OOBWrap
	OOBZero  = tile.OOBZero
	OOBSkip  = tile.OOBSkip
)

// GatherOptions are the optional parts of MGather; the zero value (or nil)
// is a row gather that faults on an out-of-bounds index.
type GatherOptions struct {
	// Mode selects row or element gathering.
	Mode IndexMode
	// OOB is OOBError (default), OOBClamp, OOBWrap or OOBZero.
	OOB OOB
	// Stream, if set, makes the call asynchronous on that stream (index
	// faults are then reported by its Synchronize); nil runs it on the
	// default stream and waits.
	Stream *runtime.Stream
}

var opGather = engine.OpGather.Name()

var gatherContract = tile.Contract{Op: opGather}

// MGather gathers from mem into the tile dst under the tile contract
// (tile.Contract): legality, then a preflight of every index, then the
// copies, then dst published with its non-valid region padded.
//
// Row mode: mem is a table (a 2-D buffer [rows, cols], or 1-D as rows × 1)
// whose cols equal dst's ValidCols; idx has the valid shape ValidRows × 1
// and dst[r, :] = table[idx[r], :]. Element mode: idx has dst's valid shape
// and dst[r, c] = mem[idx[r, c]], mem taken as a flat array. Elements are
// copied as raw bits; mem and dst have the same element type (any type but
// the packed 4-bit ones). Indices are s32, u32, s64 or u64.
//
// A bad descriptor or option returns a legality fault (wrapping
// ErrTileLegality and ErrShape, ErrDType or ErrArgument); an index outside
// mem under OOBError returns an access fault (ErrBounds). Either way dst is
// unchanged. The copies are plain reads: a gather racing with writers to
// mem on another stream is a data race, so order them with events.
func MGather(ctx context.Context, rt *runtime.Runtime, dst Tile, mem *runtime.Buffer, idx Tile, opt *GatherOptions) error {
	args, s, err := mGatherArgs(rt, dst, mem, idx, opt)
	if err != nil {
		return err
	}
	return runPooled(ctx, rt, s, engine.OpGather.Name(), args, &gatherPool)
}

// ExplainMGather says which kernel MGather would select and why.
func ExplainMGather(rt *runtime.Runtime, dst Tile, mem *runtime.Buffer, idx Tile, opt *GatherOptions) (Explanation, error) {
	args, _, err := mGatherArgs(rt, dst, mem, idx, opt)
	if err != nil {
		return Explanation{}, err
	}
	return explain(rt, engine.OpGather.Name(), args)
}

// mGatherArgs runs MGather's legality checks and returns the runtime's
// argument struct and the stream, without launching.
func mGatherArgs(rt *runtime.Runtime, dst Tile, mem *runtime.Buffer, idx Tile, opt *GatherOptions) (*engine.GatherArgs, *runtime.Stream, error) {
	c := gatherContract
	var o GatherOptions
	if opt != nil {
		o = *opt
	}
	if err := checkRuntime(rt, o.Stream, c.Op); err != nil {
		return nil, nil, err
	}
	if !o.Mode.Valid() {
		return nil, nil, c.Legality(ErrArgument, "Mode", "unknown index mode %d", o.Mode)
	}
	switch o.OOB {
	case OOBError, OOBClamp, OOBWrap, OOBZero:
	default:
		return nil, nil, c.Legality(ErrArgument, "OOB", "policy %v is not one of error, clamp, wrap, zero", o.OOB)
	}
	d, err := checkTile(c, rt, "dst", dst)
	if err != nil {
		return nil, nil, err
	}
	ix, err := checkIndexTile(c, rt, idx, o.Mode, d.Desc)
	if err != nil {
		return nil, nil, err
	}
	rows, err := checkMemory(c, rt, "mem", mem, d.Desc.DType, o.Mode, d.Desc.ValidCols)
	if err != nil {
		return nil, nil, err
	}
	if dst.Buf == mem || dst.Buf == idx.Buf {
		return nil, nil, tile.Errorf(ErrAlias, opGather, "dst", "the destination shares a buffer with mem or idx")
	}
	args, _ := gatherPool.get()
	*args = engine.GatherArgs{Mode: o.Mode, Mem: ebuf(mem), MemRows: rows, Idx: ix.eng(), Dst: d.eng(), OOB: o.OOB}
	return args, o.Stream, nil
}

// checkTile is the legality check of a tile argument: a buffer that is
// present, open and of rt, a legal descriptor under c whose element type is
// the buffer's, and a buffer holding exactly the physical tile.
func checkTile(c tile.Contract, rt *runtime.Runtime, arg string, t Tile) (Tile, error) {
	if t.Buf == nil {
		return t, c.Legality(ErrArgument, arg, "missing tile (nil buffer)")
	}
	if err := checkBuf(t.Buf, rt, c.Op, arg); err != nil {
		return t, err
	}
	desc, err := c.CheckTile(arg, t.Desc)
	if err != nil {
		return t, err
	}
	if desc.DType != t.Buf.DType() {
		return t, c.Legality(ErrDType, arg, "descriptor says %v, the buffer holds %v", desc.DType, t.Buf.DType())
	}
	if n := desc.Elements(); t.Buf.Len() != n {
		return t, c.Legality(ErrShape, arg, "a %dx%d physical tile needs a buffer of %d elements, got %d", desc.Rows, desc.Cols, n, t.Buf.Len())
	}
	return Tile{Buf: t.Buf, Desc: desc}, nil
}

// checkIndexTile checks an index tile of a gather or scatter: s32, u32, s64
// or u64, of the valid shape the mode needs (ValidRows × 1 for rows, the
// data tile's valid shape for elements).
func checkIndexTile(c tile.Contract, rt *runtime.Runtime, idx Tile, mode IndexMode, data tile.Tile) (Tile, error) {
	ix, err := checkTile(c, rt, "idx", idx)
	if err != nil {
		return ix, err
	}
	if !tile.IsIndexType(ix.Desc.DType) {
		return ix, c.Legality(ErrDType, "idx", "index type %v is not s32, u32, s64 or u64", ix.Desc.DType)
	}
	cols := data.ValidCols
	if mode == IndexRows {
		cols = 1
	}
	return ix, c.SameValidShape("idx", ix.Desc, data.ValidRows, cols)
}

// checkMemory checks the memory of a gather or scatter and returns its rows
// (row mode: rows of cols elements) or elements (element mode).
func checkMemory(c tile.Contract, rt *runtime.Runtime, arg string, mem *runtime.Buffer, d tile.DType, mode IndexMode, cols int) (int, error) {
	if mem == nil {
		return 0, c.Legality(ErrArgument, arg, "missing memory (nil buffer)")
	}
	if err := checkBuf(mem, rt, c.Op, arg); err != nil {
		return 0, err
	}
	if mem.DType() != d {
		return 0, c.Legality(ErrDType, arg, "memory of %v for a tile of %v", mem.DType(), d)
	}
	if mode == IndexElements {
		return mem.Len(), nil
	}
	tc := 1
	if r := mem.Rank(); r >= 2 {
		tc = mem.Dim(r - 1)
	}
	if tc != cols {
		return 0, c.Legality(ErrShape, arg, "table rows of %d elements for a tile of %d valid columns", tc, cols)
	}
	return mem.Len() / tc, nil
}

// MGatherPlan validates an MGather call and selects its kernel once, without
// launching it: the returned Call runs it (Call.Run) and explains the choice
// (Call.Explain).
func MGatherPlan(rt *runtime.Runtime, dst Tile, mem *runtime.Buffer, idx Tile, opt *GatherOptions) (*Call, error) {
	args, s, err := mGatherArgs(rt, dst, mem, idx, opt)
	return newCall(rt, s, engine.OpGather.Name(), args, err)
}
