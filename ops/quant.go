package ops

import (
	"context"
	"math"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// Granularity is how a float8 quantisation shares scales. A tensor is seen
// as a Rows×Cols matrix: its last dimension is the columns and all leading
// dimensions are flattened into rows (a 1-D tensor is one row, a scalar
// 1×1). Partial last blocks are allowed: a block at the right or bottom edge
// holds the remaining columns or rows and gets its own scale from the values
// it holds.
type Granularity = tile.Granularity

// Granularities, with the shape of their scales tensor (ScaleShape) for an
// R×C input.
const (
	PerTensor    = tile.PerTensor    // [1]
	PerRow       = tile.PerRow       // [R]: per token
	PerColumn    = tile.PerColumn    // [C]: per channel
	Block1x128   = tile.Block1x128   // [R, ⌈C/128⌉]: activations
	Block128x128 = tile.Block128x128 // [⌈R/128⌉, ⌈C/128⌉]: weights
	MX           = tile.MX           // [R, ⌈C/32⌉] E8M0 bytes in a U8 tensor
)

// ScaleSource says where the scales of a quantisation come from.
type ScaleSource uint8

const (
	// ScaleFromAmax computes each block's scale from its current amax:
	// scale = (fmax/amax)/2^Margin (fallback.ScaleFromAmax), or for MX the
	// OCP rule (fallback.MXScale).
	ScaleFromAmax ScaleSource = iota
	// ScaleGiven uses QuantizeOptions.Scales, or Scale per tensor.
	ScaleGiven
)

// QuantizeOptions are the optional parts of a quantisation. The zero value
// (or nil options) is per-tensor current scaling, saturating.
//
// A scale multiplies values before encoding (q = encode(x·scale)); the
// inverse scale 1/scale is what dequantisation and MatMul's ScaleA/ScaleB
// multiply by.
type QuantizeOptions struct {
	// Granularity of the scales.
	Granularity Granularity
	// Mode is the overflow rule; tile.Saturate (the zero value) is what the
	// hardware satfinite convert does.
	Mode tile.OverflowMode
	// Source of the scales. MX takes only ScaleFromAmax.
	Source ScaleSource
	// Scale is the given per-tensor scale (ScaleGiven, PerTensor, Scales
	// nil); it must be positive and finite, and is clamped into
	// [tile.MinScale, tile.MaxScale] = [2^-126, 2^126] (tile.ClampScale), so
	// that the inverse written to ScaleInv is normal and Dequantize accepts
	// it.
	Scale float32
	// Scales is the given scales tensor (ScaleGiven): f32 of ScaleShape.
	// Every value must be a valid scale (tile.ValidScale: in [2^-126,
	// 2^126]); values are data, so they are refused rather than clamped.
	// The kernel checks them before writing anything, so the error arrives
	// from the call (nil Stream) or from the stream's Synchronize.
	Scales *runtime.Buffer
	// Margin, for ScaleFromAmax, divides the computed scale by 2^Margin
	// (0 ≤ Margin ≤ 64) to leave headroom.
	Margin int
	// PowerOfTwo rounds computed scales down to powers of two.
	PowerOfTwo bool
	// ScaleInv, if set, receives the inverse scales: f32 of ScaleShape, or
	// for MX the E8M0 scale bytes in a U8 tensor of ScaleShape.
	ScaleInv *runtime.Buffer
	// Amax, if set, receives max |x| over the whole input (f32, one
	// element; NaN if any element is NaN).
	Amax *runtime.Buffer
	// Stream makes the call asynchronous; nil runs it synchronously.
	Stream *runtime.Stream
}

// DequantizeOptions are the optional parts of a dequantisation.
type DequantizeOptions struct {
	// Granularity of ScaleInv.
	Granularity Granularity
	// ScaleInv holds the inverse scales, f32 of ScaleShape (U8 E8M0 bytes
	// for MX), as Quantize writes them. nil means 1 and is allowed only per
	// tensor. The kernel rejects f32 values that are not positive and finite
	// before writing anything.
	ScaleInv *runtime.Buffer
	// Stream makes the call asynchronous; nil runs it synchronously.
	Stream *runtime.Stream
}

// AmaxOptions are the optional parts of an amax reduction.
type AmaxOptions struct {
	// Granularity of the result: one amax per block (ScaleShape).
	Granularity Granularity
	// Stream makes the call asynchronous; nil runs it synchronously.
	Stream *runtime.Stream
}

// matrixShape is the rows×cols view of a tensor shape.
func matrixShape(shape []int) (rows, cols int) {
	if len(shape) == 0 {
		return 1, 1
	}
	cols = shape[len(shape)-1]
	rows = 1
	for _, d := range shape[:len(shape)-1] {
		rows *= d
	}
	return rows, cols
}

// ScaleShape is the shape of the scales tensor of granularity g for an input
// of the given shape: [1] per tensor, [R] per row, [C] per column,
// [⌈R/br⌉, ⌈C/bc⌉] for blocks and MX. It returns nil for an unknown g.
func ScaleShape(g Granularity, shape []int) []int {
	rows, cols := matrixShape(shape)
	sr, sc := g.ScaleGrid(rows, cols)
	switch g {
	case PerTensor:
		return []int{1}
	case PerRow:
		return []int{sr}
	case PerColumn:
		return []int{sc}
	case Block1x128, Block128x128, MX:
		return []int{sr, sc}
	}
	return nil
}

var quantInput = map[tile.DType]bool{tile.F32: true, tile.F16: true, tile.BF16: true}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// checkScaleBuf checks a scales tensor: open, of element type dt, holding
// sr·sc values shaped as ScaleShape, as [sr, sc], or flat.
func checkScaleBuf(rt *runtime.Runtime, op, arg string, b *runtime.Buffer, dt tile.DType, g Granularity, xshape []int) error {
	if err := checkBuf(b, rt, op, arg); err != nil {
		return err
	}
	if b.DType() != dt {
		return tile.Errorf(ErrDType, op, arg, "element type %v; %v scales are %v", b.DType(), g, dt)
	}
	want := ScaleShape(g, xshape)
	rows, cols := matrixShape(xshape)
	sr, sc := g.ScaleGrid(rows, cols)
	s := b.Shape()
	if sameShape(s, want) || sameShape(s, []int{sr, sc}) || (len(s) == 1 && s[0] == sr*sc) || (len(s) == 0 && sr*sc == 1) {
		return nil
	}
	return tile.Errorf(ErrShape, op, arg, "shape %v; %v scales of an input of shape %v have shape %v", s, g, xshape, want)
}

func checkCommon(rt *runtime.Runtime, op string, s *runtime.Stream, g Granularity) error {
	if rt == nil {
		return tile.Errorf(ErrArgument, op, "rt", "runtime is nil")
	}
	if s != nil && s.Runtime() != rt {
		return tile.Errorf(ErrArgument, op, "Stream", "stream belongs to another runtime")
	}
	if !g.Valid() {
		return tile.Errorf(ErrArgument, op, "Granularity", "unknown granularity %d", g)
	}
	return nil
}

// checkAmaxBuf checks a one-element f32 amax buffer (open already): the
// element type first (ErrDType), then the count (ErrShape).
func checkAmaxBuf(op string, b *runtime.Buffer) error {
	if b.DType() != tile.F32 {
		return tile.Errorf(ErrDType, op, "Amax", "element type %v; the amax is one f32", b.DType())
	}
	if b.Len() != 1 {
		return tile.Errorf(ErrShape, op, "Amax", "%d elements; the amax is one f32", b.Len())
	}
	return nil
}

const (
	opQuantize   = "quantize"
	opDequantize = "dequantize"
	opAmax       = "amax"
)

// Quantize encodes x (f32, f16 or bf16) into q (E4M3 or E5M2, the same
// shape):
//
//	q[i] = encode(float32(x[i]) · scale_b, Mode)
//
// for the block b holding element i, the product rounded to float32 and the
// encoding rounded to nearest even. Scales are given or computed from each
// block's current amax (see QuantizeOptions, ScaleFromAmax); MX uses the OCP
// rule X = 2^(⌊log2 amax⌋ − emax) and encodes x/X (fallback.MXScale). The
// inverse scales and the tensor's amax are written when asked for.
//
// Every argument is checked before any memory is touched; an error names the
// argument and wraps ErrDType, ErrShape, ErrArgument, ErrAlias or ErrClosed,
// and nothing is written.
func Quantize(ctx context.Context, rt *runtime.Runtime, q, x *runtime.Buffer, opt *QuantizeOptions) error {
	args, s, err := quantizeArgs(rt, q, x, opt)
	if err != nil {
		return err
	}
	return ert(rt).Run(ctx, estream(s), engine.OpQuantize.Name(), args)
}

// ExplainQuantize says which kernel Quantize would select and why.
func ExplainQuantize(rt *runtime.Runtime, q, x *runtime.Buffer, opt *QuantizeOptions) (Explanation, error) {
	args, _, err := quantizeArgs(rt, q, x, opt)
	if err != nil {
		return Explanation{}, err
	}
	return explain(rt, engine.OpQuantize.Name(), args)
}

// quantizeArgs validates a quantisation and returns the runtime's argument
// struct and the stream, without launching.
func quantizeArgs(rt *runtime.Runtime, q, x *runtime.Buffer, opt *QuantizeOptions) (*engine.QuantizeArgs, *runtime.Stream, error) {
	const op = opQuantize
	var o QuantizeOptions
	if opt != nil {
		o = *opt
	}
	if err := checkCommon(rt, op, o.Stream, o.Granularity); err != nil {
		return nil, nil, err
	}
	if err := checkBuf(x, rt, op, "x"); err != nil {
		return nil, nil, err
	}
	if !quantInput[x.DType()] {
		return nil, nil, tile.Errorf(ErrDType, op, "x", "element type %v cannot be quantised; want f32, f16 or bf16", x.DType())
	}
	if err := checkBuf(q, rt, op, "q"); err != nil {
		return nil, nil, err
	}
	if !tile.IsFloat8(q.DType()) {
		return nil, nil, tile.Errorf(ErrDType, op, "q", "element type %v; want e4m3 or e5m2", q.DType())
	}
	if !sameShape(q.Shape(), x.Shape()) {
		return nil, nil, tile.Errorf(ErrShape, op, "q", "shape %v differs from x's %v", q.Shape(), x.Shape())
	}
	if !o.Mode.Valid() {
		return nil, nil, tile.Errorf(ErrArgument, op, "Mode", "unknown overflow mode %d", o.Mode)
	}
	g := o.Granularity
	rows, cols := matrixShape(x.Shape())
	args := &engine.QuantizeArgs{X: ebuf(x), Q: ebuf(q), Rows: rows, Cols: cols, Gran: g, Mode: o.Mode, Margin: o.Margin, PowerOfTwo: o.PowerOfTwo}
	switch o.Source {
	case ScaleFromAmax:
		if o.Scales != nil {
			return nil, nil, tile.Errorf(ErrArgument, op, "Scales", "scales given with ScaleFromAmax; set Source to ScaleGiven")
		}
		if o.Scale != 0 {
			return nil, nil, tile.Errorf(ErrArgument, op, "Scale", "scale %v given with ScaleFromAmax; set Source to ScaleGiven", o.Scale)
		}
		if o.Margin < 0 || o.Margin > 64 {
			return nil, nil, tile.Errorf(ErrArgument, op, "Margin", "margin %d outside [0, 64]", o.Margin)
		}
	case ScaleGiven:
		if g == MX {
			return nil, nil, tile.Errorf(ErrArgument, op, "Source", "MX scales are computed by the OCP rule; use ScaleFromAmax")
		}
		if o.Margin != 0 || o.PowerOfTwo {
			return nil, nil, tile.Errorf(ErrArgument, op, "Margin", "Margin and PowerOfTwo apply to computed scales only")
		}
		args.Given = true
		switch {
		case o.Scales != nil:
			if o.Scale != 0 {
				return nil, nil, tile.Errorf(ErrArgument, op, "Scale", "both Scale and Scales are given")
			}
			if err := checkScaleBuf(rt, op, "Scales", o.Scales, tile.F32, g, x.Shape()); err != nil {
				return nil, nil, err
			}
			args.Scales = ebuf(o.Scales)
		case g != PerTensor:
			return nil, nil, tile.Errorf(ErrArgument, op, "Scales", "%v scaling with ScaleGiven needs a Scales tensor of shape %v", g, ScaleShape(g, x.Shape()))
		case !(o.Scale > 0) || o.Scale > math.MaxFloat32:
			return nil, nil, tile.Errorf(ErrArgument, op, "Scale", "scale %v; it must be positive and finite", o.Scale)
		default:
			args.Scale = tile.ClampScale(o.Scale)
		}
	default:
		return nil, nil, tile.Errorf(ErrArgument, op, "Source", "unknown scale source %d", o.Source)
	}
	if o.ScaleInv != nil {
		dt := tile.F32
		if g == MX {
			dt = tile.U8
		}
		if err := checkScaleBuf(rt, op, "ScaleInv", o.ScaleInv, dt, g, x.Shape()); err != nil {
			return nil, nil, err
		}
		if o.ScaleInv == o.Scales || o.ScaleInv == x {
			return nil, nil, tile.Errorf(ErrAlias, op, "ScaleInv", "ScaleInv is an input buffer")
		}
		args.ScaleInv = ebuf(o.ScaleInv)
	}
	if o.Amax != nil {
		if err := checkBuf(o.Amax, rt, op, "Amax"); err != nil {
			return nil, nil, err
		}
		if err := checkAmaxBuf(op, o.Amax); err != nil {
			return nil, nil, err
		}
		if o.Amax == o.Scales || o.Amax == o.ScaleInv || o.Amax == x {
			return nil, nil, tile.Errorf(ErrAlias, op, "Amax", "Amax shares a buffer with x, Scales or ScaleInv")
		}
		args.Amax = ebuf(o.Amax)
	}
	return args, o.Stream, nil
}

// Dequantize decodes q (E4M3 or E5M2) into y (f32, f16 or bf16, the same
// shape):
//
//	y[i] = round(decode(q[i]) · scale_inv_b)
//
// with the product in float32 and one rounding to y's type. Errors are as
// for Quantize; nothing is written on error.
func Dequantize(ctx context.Context, rt *runtime.Runtime, y, q *runtime.Buffer, opt *DequantizeOptions) error {
	args, s, err := dequantizeArgs(rt, y, q, opt)
	if err != nil {
		return err
	}
	return ert(rt).Run(ctx, estream(s), engine.OpDequantize.Name(), args)
}

// dequantizeArgs validates a dequantisation without launching it.
func dequantizeArgs(rt *runtime.Runtime, y, q *runtime.Buffer, opt *DequantizeOptions) (*engine.DequantizeArgs, *runtime.Stream, error) {
	const op = opDequantize
	var o DequantizeOptions
	if opt != nil {
		o = *opt
	}
	if err := checkCommon(rt, op, o.Stream, o.Granularity); err != nil {
		return nil, nil, err
	}
	if err := checkBuf(q, rt, op, "q"); err != nil {
		return nil, nil, err
	}
	if !tile.IsFloat8(q.DType()) {
		return nil, nil, tile.Errorf(ErrDType, op, "q", "element type %v; want e4m3 or e5m2", q.DType())
	}
	if err := checkBuf(y, rt, op, "y"); err != nil {
		return nil, nil, err
	}
	if !quantInput[y.DType()] {
		return nil, nil, tile.Errorf(ErrDType, op, "y", "element type %v; want f32, f16 or bf16", y.DType())
	}
	if !sameShape(q.Shape(), y.Shape()) {
		return nil, nil, tile.Errorf(ErrShape, op, "y", "shape %v differs from q's %v", y.Shape(), q.Shape())
	}
	rows, cols := matrixShape(q.Shape())
	args := &engine.DequantizeArgs{Q: ebuf(q), Y: ebuf(y), Rows: rows, Cols: cols, Gran: o.Granularity}
	if o.ScaleInv == nil {
		if o.Granularity != PerTensor {
			return nil, nil, tile.Errorf(ErrArgument, op, "ScaleInv", "%v dequantisation needs ScaleInv", o.Granularity)
		}
		return args, o.Stream, nil
	}
	dt := tile.F32
	if o.Granularity == MX {
		dt = tile.U8
	}
	if err := checkScaleBuf(rt, op, "ScaleInv", o.ScaleInv, dt, o.Granularity, q.Shape()); err != nil {
		return nil, nil, err
	}
	if o.ScaleInv == y {
		return nil, nil, tile.Errorf(ErrAlias, op, "ScaleInv", "ScaleInv is the output buffer y")
	}
	args.ScaleInv = ebuf(o.ScaleInv)
	return args, o.Stream, nil
}

// Amax writes max |x| over each block of x (f32, f16 or bf16) into out (f32
// of ScaleShape; one element per tensor). A block holding a NaN gives NaN.
func Amax(ctx context.Context, rt *runtime.Runtime, out, x *runtime.Buffer, opt *AmaxOptions) error {
	args, s, err := amaxArgs(rt, out, x, opt)
	if err != nil {
		return err
	}
	return ert(rt).Run(ctx, estream(s), engine.OpAmax.Name(), args)
}

// amaxArgs validates an amax reduction without launching it.
func amaxArgs(rt *runtime.Runtime, out, x *runtime.Buffer, opt *AmaxOptions) (*engine.AmaxArgs, *runtime.Stream, error) {
	const op = opAmax
	var o AmaxOptions
	if opt != nil {
		o = *opt
	}
	if err := checkCommon(rt, op, o.Stream, o.Granularity); err != nil {
		return nil, nil, err
	}
	if err := checkBuf(x, rt, op, "x"); err != nil {
		return nil, nil, err
	}
	if !quantInput[x.DType()] {
		return nil, nil, tile.Errorf(ErrDType, op, "x", "element type %v; want f32, f16 or bf16", x.DType())
	}
	if err := checkScaleBuf(rt, op, "out", out, tile.F32, o.Granularity, x.Shape()); err != nil {
		return nil, nil, err
	}
	if out == x {
		return nil, nil, tile.Errorf(ErrAlias, op, "out", "out is the input buffer")
	}
	rows, cols := matrixShape(x.Shape())
	return &engine.AmaxArgs{X: ebuf(x), Out: ebuf(out), Rows: rows, Cols: cols, Gran: o.Granularity}, o.Stream, nil
}

// ExplainAmax validates the call and explains the kernel selection.
func ExplainAmax(rt *runtime.Runtime, out, x *runtime.Buffer, opt *AmaxOptions) (Explanation, error) {
	args, _, err := amaxArgs(rt, out, x, opt)
	if err != nil {
		return Explanation{}, err
	}
	return explain(rt, engine.OpAmax.Name(), args)
}

// ExplainDequantize validates the call and explains the kernel selection.
func ExplainDequantize(rt *runtime.Runtime, y, q *runtime.Buffer, opt *DequantizeOptions) (Explanation, error) {
	args, _, err := dequantizeArgs(rt, y, q, opt)
	if err != nil {
		return Explanation{}, err
	}
	return explain(rt, engine.OpDequantize.Name(), args)
}

// AmaxPlan validates an Amax call and selects its kernel once, without
// launching it: the returned Call runs it (Call.Run) and explains the choice
// (Call.Explain).
func AmaxPlan(rt *runtime.Runtime, out, x *runtime.Buffer, opt *AmaxOptions) (*Call, error) {
	args, s, err := amaxArgs(rt, out, x, opt)
	return newCall(rt, s, engine.OpAmax.Name(), args, err)
}

// DequantizePlan validates a Dequantize call and selects its kernel once,
// without launching it: the returned Call runs it (Call.Run) and explains
// the choice (Call.Explain).
func DequantizePlan(rt *runtime.Runtime, y, q *runtime.Buffer, opt *DequantizeOptions) (*Call, error) {
	args, s, err := dequantizeArgs(rt, y, q, opt)
	return newCall(rt, s, engine.OpDequantize.Name(), args, err)
}

// QuantizePlan validates a Quantize call and selects its kernel once,
// without launching it: the returned Call runs it (Call.Run) and explains
// the choice (Call.Explain).
func QuantizePlan(rt *runtime.Runtime, q, x *runtime.Buffer, opt *QuantizeOptions) (*Call, error) {
	args, s, err := quantizeArgs(rt, q, x, opt)
	return newCall(rt, s, engine.OpQuantize.Name(), args, err)
}
