package ops

import (
	"context"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// MaskAll enables every lane group (the four PEs of the tile contract).
const MaskAll uint8 = 0xF

// GatherCASOptions are the optional parts of MGatherCAS. The values are
// taken literally — a zero Mask makes the call a no-op — so start from
// DefaultGatherCASOptions, or pass nil options for base 0 and all lanes.
type GatherCASOptions struct {
	// Base is the byte address, inside mem, the displacements count from:
	// 0 ≤ Base ≤ mem.Bytes().
	Base int
	// Mask is the lane (PE) mask, four bits. All-zero makes the call a
	// strict no-op before any check; any other value runs the op once (the
	// CPU backend is one PE group). Bits above the low four are illegal.
	Mask uint8
	// Stream, if set, makes the call asynchronous on that stream (access
	// faults are then reported by its Synchronize); nil runs it on the
	// default stream and waits.
	Stream *runtime.Stream
}

// DefaultGatherCASOptions returns base 0 and all lanes enabled.
func DefaultGatherCASOptions() GatherCASOptions { return GatherCASOptions{Mask: MaskAll} }

var opGatherCAS = engine.OpGatherCAS.Name()

// gatherCASContract: the destination's physical dimensions are powers of
// two; packed 4-bit transfer types are rejected.
var gatherCASContract = tile.Contract{Op: opGatherCAS, Pow2: true}

// MGatherCAS is MGATHER_CAS: for each valid coordinate (r, c) of dst it
// atomically compares the element at byte address Base + idx[r, c] of mem
// with expected[r, c] and, when the raw bits are equal, stores
// replacement[r, c]; dst[r, c] receives the value the compare-and-swap
// observed. The transfer type is dst's element type, any 8-, 16-, 32- or
// 64-bit type, compared and stored as raw bits (no numeric validity: NaNs
// compare by their bits, −0 differs from +0). Displacements are s32 or s64
// (sign-extended) or u32 or u64 (zero-extended) and must give addresses that
// are multiples of the transfer size. idx, expected and replacement have
// dst's valid shape; expected and replacement have dst's element type; dst's
// physical Rows and Cols are powers of two, and its non-valid elements get
// its pad value. mem may be a buffer of any element type: it is addressed
// in bytes.
//
// Order: an all-zero Mask returns nil at once, before any check. Then
// legality (a packed 4-bit type, a non-integer index type, a missing or
// mis-shaped tile, a zero dimension: ErrTileLegality), then every address
// preflighted (outside mem or misaligned: ErrBounds) before the first
// compare-and-swap, then the lanes, then dst published whole. A fault leaves
// mem and dst unchanged. Lanes with the same address serialise in an
// unspecified order; every lane is one atomic operation, also against
// gather-CAS and scatter calls running on other streams.
func MGatherCAS(ctx context.Context, rt *runtime.Runtime, dst Tile, mem *runtime.Buffer, idx, expected, replacement Tile, opt *GatherCASOptions) error {
	args, s, err := mGatherCASArgs(rt, dst, mem, idx, expected, replacement, opt)
	if err != nil || args == nil {
		return err
	}
	return ert(rt).Run(ctx, estream(s), engine.OpGatherCAS.Name(), args)
}

// ExplainMGatherCAS says which kernel MGatherCAS would select and why (an
// empty explanation for an all-zero mask, which runs nothing).
func ExplainMGatherCAS(rt *runtime.Runtime, dst Tile, mem *runtime.Buffer, idx, expected, replacement Tile, opt *GatherCASOptions) (Explanation, error) {
	args, _, err := mGatherCASArgs(rt, dst, mem, idx, expected, replacement, opt)
	if err != nil || args == nil {
		return Explanation{Op: opGatherCAS}, err
	}
	return explain(rt, engine.OpGatherCAS.Name(), args)
}

// mGatherCASArgs runs MGatherCAS's legality checks and returns the runtime's
// argument struct and the stream, without launching. It returns nil
// arguments and no error for an all-zero mask.
func mGatherCASArgs(rt *runtime.Runtime, dst Tile, mem *runtime.Buffer, idx, expected, replacement Tile, opt *GatherCASOptions) (*engine.GatherCASArgs, *runtime.Stream, error) {
	o := DefaultGatherCASOptions()
	if opt != nil {
		o = *opt
	}
	if o.Mask == 0 {
		return nil, nil, nil // strict no-op, before any check
	}
	c := gatherCASContract
	if err := checkRuntime(rt, o.Stream, c.Op); err != nil {
		return nil, nil, err
	}
	if o.Mask > MaskAll {
		return nil, nil, c.Legality(ErrArgument, "Mask", "lane mask %#x has bits above the low four", o.Mask)
	}
	d, err := checkTile(c, rt, "dst", dst)
	if err != nil {
		return nil, nil, err
	}
	vr, vc, td := d.Desc.ValidRows, d.Desc.ValidCols, d.Desc.DType
	c.Pow2 = false // only the destination's physical shape must be powers of two
	ix, err := checkTile(c, rt, "idx", idx)
	if err != nil {
		return nil, nil, err
	}
	if !tile.IsIndexType(ix.Desc.DType) {
		return nil, nil, c.Legality(ErrDType, "idx", "displacement type %v is not s32, u32, s64 or u64", ix.Desc.DType)
	}
	if err := c.SameValidShape("idx", ix.Desc, vr, vc); err != nil {
		return nil, nil, err
	}
	ins := [2]Tile{}
	for i, in := range []struct {
		name string
		t    Tile
	}{{"expected", expected}, {"replacement", replacement}} {
		t, err := checkTile(c, rt, in.name, in.t)
		if err != nil {
			return nil, nil, err
		}
		if t.Desc.DType != td {
			return nil, nil, c.Legality(ErrDType, in.name, "%v values for a %v transfer type", t.Desc.DType, td)
		}
		if err := c.SameValidShape(in.name, t.Desc, vr, vc); err != nil {
			return nil, nil, err
		}
		ins[i] = t
	}
	if mem == nil {
		return nil, nil, c.Legality(ErrArgument, "mem", "missing memory (nil buffer)")
	}
	if err := checkBuf(mem, rt, opGatherCAS, "mem"); err != nil {
		return nil, nil, err
	}
	if o.Base < 0 || o.Base > mem.Bytes() {
		return nil, nil, tile.Errorf(ErrBounds, opGatherCAS, "Base", "base %d is outside the %d-byte memory", o.Base, mem.Bytes())
	}
	for _, b := range []*runtime.Buffer{idx.Buf, expected.Buf, replacement.Buf} {
		if b == mem {
			return nil, nil, tile.Errorf(ErrAlias, opGatherCAS, "mem", "the memory shares a buffer with an input tile")
		}
	}
	if dst.Buf == mem || dst.Buf == idx.Buf || dst.Buf == expected.Buf || dst.Buf == replacement.Buf {
		return nil, nil, tile.Errorf(ErrAlias, opGatherCAS, "dst", "the destination shares a buffer with mem or an input tile")
	}
	return &engine.GatherCASArgs{Mem: ebuf(mem), Base: o.Base, Idx: ix.eng(), Expected: ins[0].eng(), Replacement: ins[1].eng(), Dst: d.eng()}, o.Stream, nil
}

// MGatherCASPlan validates an MGatherCAS call and selects its kernel once,
// without launching it: the returned Call runs it (Call.Run) and explains
// the choice (Call.Explain).
func MGatherCASPlan(rt *runtime.Runtime, dst Tile, mem *runtime.Buffer, idx, expected, replacement Tile, opt *GatherCASOptions) (*Call, error) {
	args, s, err := mGatherCASArgs(rt, dst, mem, idx, expected, replacement, opt)
	return newCall(rt, s, engine.OpGatherCAS.Name(), args, err)
}
