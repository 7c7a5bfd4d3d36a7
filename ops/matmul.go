package ops

import (
	"context"
	"math"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// Activation is the matmul epilogue's element-wise function.
type Activation = tile.Activation

// Activations for MatMulOptions.Act.
const (
	ActNone = tile.ActNone
	ActReLU = tile.ActReLU
	ActGELU = tile.ActGELU // tanh form
	ActSiLU = tile.ActSiLU
)

// MatMulOptions are the optional parts of a matmul. The zero value (or nil
// options) computes D = A·B: an Alpha of 0 means 1.
type MatMulOptions struct {
	// Alpha scales the product; 0 means 1 (a zero product is not a matmul:
	// to compute D = Beta·C, scale C instead).
	Alpha float32
	// Beta scales C. C and Beta go together: a C with Beta 0, or a Beta
	// without C, is an ErrArgument rather than silently ignored.
	Beta float32
	// C is added, scaled by Beta; it may be exactly the same view as D (an
	// in-place update, D += A·B with Beta 1), but may not otherwise overlap
	// it.
	C *Matrix
	// Bias, if set, is a vector of N values (f32, f16 or bf16) added to every
	// row before the activation.
	Bias *runtime.Buffer
	// Act is applied last.
	Act Activation
	// Batch is the number of matrices (0 means 1); each operand steps by its
	// BatchStride.
	Batch int
	// ScaleA and ScaleB are f32 dequantisation scales for float8 (e4m3,
	// e5m2) operands, as Quantize's ScaleInv gives them: one value per
	// tensor, or M values (rows of op(A)) / N values (columns of op(B)),
	// shared by every batch; see MatMul.
	ScaleA, ScaleB *runtime.Buffer
	// Stream, if set, makes the call asynchronous on that stream; nil runs
	// it on the default stream and waits.
	Stream *runtime.Stream
}

// DefaultMatMulOptions returns options for D = A·B (the zero value with
// Alpha written out).
func DefaultMatMulOptions() MatMulOptions { return MatMulOptions{Alpha: 1} }

// MatMul computes, for each batch b,
//
//	D[b] = act(Alpha·op(A[b])·op(B[b]) + Beta·C[b] + Bias)
//
// with f32 accumulation. A and B may be f32, f16, bf16, e4m3 or e5m2
// (independently); float8 operands may carry scales, and then
//
//	D[b] = act(Alpha·ScaleA_i·ScaleB_j·(op(A[b])·op(B[b]))_ij + Beta·C[b] + Bias)
//
// (ScaleA_i is ScaleA's only value per tensor, or its i-th per row; ScaleB_j
// likewise per column). Scale values must be valid scales (tile.ValidScale:
// in [2^-126, 2^126]); they are device data, so every kernel checks them
// before writing D (the CPU kernels in the kernel, the GPU kernels in a host
// task ahead of the launch on the same stream) and a bad one is an
// ErrArgument from the call, or from Synchronize for an async call, with D
// unchanged. Either operand may be transposed
// (Matrix.Trans); D may be f32, f16 or bf16. Every
// argument is checked before any memory is touched; an error names the
// argument and wraps ErrShape, ErrDType, ErrBounds, ErrAlias, ErrClosed or
// ErrArgument, and leaves D unchanged.
func MatMul(ctx context.Context, rt *runtime.Runtime, d, a, b Matrix, opt *MatMulOptions) error {
	args, s, err := matMulArgs(rt, d, a, b, opt)
	if err != nil {
		return err
	}
	return runPooled(ctx, rt, s, engine.OpMatMul.Name(), args, &matMulPool)
}

// ExplainMatMul says which kernel MatMul would select for these arguments
// and why each candidate was taken or rejected.
func ExplainMatMul(rt *runtime.Runtime, d, a, b Matrix, opt *MatMulOptions) (Explanation, error) {
	args, _, err := matMulArgs(rt, d, a, b, opt)
	if err != nil {
		return Explanation{}, err
	}
	return explain(rt, engine.OpMatMul.Name(), args)
}

const opMatMul = "matmul"

var matmulFloat = map[tile.DType]bool{tile.F32: true, tile.F16: true, tile.BF16: true}

// matMulArgs validates a matmul and returns the runtime's argument struct and
// the stream, without launching.
func matMulArgs(rt *runtime.Runtime, d, a, b Matrix, opt *MatMulOptions) (*engine.MatMulArgs, *runtime.Stream, error) {
	o := DefaultMatMulOptions()
	if opt != nil {
		o = *opt
	}
	if err := checkRuntime(rt, o.Stream, opMatMul); err != nil {
		return nil, nil, err
	}
	batch := o.Batch
	if batch == 0 {
		batch = 1
	}
	if batch < 0 {
		return nil, nil, tile.Errorf(ErrShape, opMatMul, "Batch", "batch count %d is negative", o.Batch)
	}
	var err error
	if a, err = checkMatrix(rt, "A", a, batch, matmulInput); err != nil {
		return nil, nil, err
	}
	if b, err = checkMatrix(rt, "B", b, batch, matmulInput); err != nil {
		return nil, nil, err
	}
	if d, err = checkMatrix(rt, "D", d, batch, matmulFloat); err != nil {
		return nil, nil, err
	}
	if d.Trans {
		return nil, nil, tile.Errorf(ErrArgument, opMatMul, "D.Trans", "the output cannot be transposed; transpose the operands instead (Dᵀ = Bᵀ·Aᵀ)")
	}
	m, k := a.OpRows(), a.OpCols()
	if b.OpRows() != k {
		return nil, nil, tile.Errorf(ErrShape, opMatMul, "B", "op(B) has %d rows, op(A) has %d columns (K must agree)", b.OpRows(), k)
	}
	n := b.OpCols()
	if d.Rows != m || d.Cols != n {
		return nil, nil, tile.Errorf(ErrShape, opMatMul, "D", "D is %dx%d, want op(A)·op(B) = %dx%d", d.Rows, d.Cols, m, n)
	}
	if batch > 1 && d.BatchStride < (d.Rows-1)*d.LD+d.Cols {
		return nil, nil, tile.Errorf(ErrShape, opMatMul, "D.BatchStride", "batch stride %d makes output matrices of %d elements overlap", d.BatchStride, (d.Rows-1)*d.LD+d.Cols)
	}
	if o.Alpha == 0 {
		o.Alpha = 1
	}
	if isNonFinite(o.Alpha) {
		return nil, nil, tile.Errorf(ErrArgument, opMatMul, "Alpha", "%v is not finite", o.Alpha)
	}
	if isNonFinite(o.Beta) {
		return nil, nil, tile.Errorf(ErrArgument, opMatMul, "Beta", "%v is not finite", o.Beta)
	}
	if !o.Act.Valid() {
		return nil, nil, tile.Errorf(ErrArgument, opMatMul, "Act", "unknown activation %d", o.Act)
	}
	args, _ := matMulPool.get()
	*args = engine.MatMulArgs{M: m, N: n, K: k, Batch: batch, A: a.eng(), B: b.eng(), D: d.eng(), Alpha: o.Alpha, Beta: o.Beta, Act: o.Act}
	if err := checkMatMulScales(rt, &o, args); err != nil {
		return nil, nil, err
	}
	if o.C != nil && o.Beta == 0 {
		return nil, nil, tile.Errorf(ErrArgument, opMatMul, "Beta", "C is set but Beta is 0, so C would be ignored: set Beta (1 adds C), or leave C nil")
	}
	if o.Beta != 0 {
		if o.C == nil {
			return nil, nil, tile.Errorf(ErrArgument, opMatMul, "C", "Beta is %v but C is nil", o.Beta)
		}
		c, err := checkMatrix(rt, "C", *o.C, batch, matmulFloat)
		if err != nil {
			return nil, nil, err
		}
		if c.Trans {
			return nil, nil, tile.Errorf(ErrArgument, opMatMul, "C.Trans", "C cannot be transposed")
		}
		if c.Rows != m || c.Cols != n {
			return nil, nil, tile.Errorf(ErrShape, opMatMul, "C", "C is %dx%d, want %dx%d", c.Rows, c.Cols, m, n)
		}
		if c.Buf == d.Buf && c != d {
			return nil, nil, tile.Errorf(ErrAlias, opMatMul, "C", "C shares D's buffer but is not the same view (only an exact in-place update is allowed)")
		}
		args.C = c.eng()
	}
	if o.Bias != nil {
		if err := checkBuf(o.Bias, rt, opMatMul, "Bias"); err != nil {
			return nil, nil, err
		}
		if !matmulFloat[o.Bias.DType()] {
			return nil, nil, tile.Errorf(ErrDType, opMatMul, "Bias", "bias of %v; want f32, f16 or bf16", o.Bias.DType())
		}
		if o.Bias.Len() != n {
			return nil, nil, tile.Errorf(ErrShape, opMatMul, "Bias", "bias of %d values for N = %d", o.Bias.Len(), n)
		}
		if o.Bias == d.Buf {
			return nil, nil, tile.Errorf(ErrAlias, opMatMul, "Bias", "bias is the output buffer")
		}
		args.Bias = ebuf(o.Bias)
	}
	if d.Buf == a.Buf {
		return nil, nil, tile.Errorf(ErrAlias, opMatMul, "D", "output shares its buffer with input A")
	}
	if d.Buf == b.Buf {
		return nil, nil, tile.Errorf(ErrAlias, opMatMul, "D", "output shares its buffer with input B")
	}
	return args, o.Stream, nil
}

func isNonFinite(f float32) bool { return math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) }

// checkMatrix validates one operand and resolves its defaults (LD 0 →
// Cols, BatchStride 0 → Rows·LD). allowed lists the accepted element types.
func checkMatrix(rt *runtime.Runtime, name string, m Matrix, batch int, allowed map[tile.DType]bool) (Matrix, error) {
	if err := checkBuf(m.Buf, rt, opMatMul, name); err != nil {
		return m, err
	}
	if dt := m.Buf.DType(); !allowed[dt] {
		return m, tile.Errorf(ErrDType, opMatMul, name, "element type %v is not accepted here", dt)
	}
	if m.Rows <= 0 || m.Cols <= 0 {
		return m, tile.Errorf(ErrShape, opMatMul, name, "shape %dx%d: dimensions must be positive", m.Rows, m.Cols)
	}
	if m.LD == 0 {
		m.LD = m.Cols
	}
	if m.LD < m.Cols {
		return m, tile.Errorf(ErrShape, opMatMul, name+".LD", "leading dimension %d is smaller than the row length %d", m.LD, m.Cols)
	}
	if m.Offset < 0 {
		return m, tile.Errorf(ErrBounds, opMatMul, name+".Offset", "negative offset %d", m.Offset)
	}
	if m.BatchStride < 0 {
		return m, tile.Errorf(ErrShape, opMatMul, name+".BatchStride", "negative batch stride %d", m.BatchStride)
	}
	if m.BatchStride == 0 {
		bs, ok := tile.MulSize(m.Rows, m.LD)
		if !ok {
			return m, tile.Errorf(ErrBounds, opMatMul, name+".LD", "%d rows of leading dimension %d overflow", m.Rows, m.LD)
		}
		m.BatchStride = bs
	}
	// The view ends at Offset + (batch−1)·BatchStride + (Rows−1)·LD + Cols.
	last, ok := tile.MulAddSize(batch-1, m.BatchStride, m.Offset)
	if ok {
		last, ok = tile.MulAddSize(m.Rows-1, m.LD, last)
	}
	if ok {
		last, ok = tile.AddSize(last, m.Cols)
	}
	if !ok || last > m.Buf.Len() {
		return m, tile.Errorf(ErrBounds, opMatMul, name, "view (offset %d, %d batches of stride %d, %dx%d with LD %d) reaches past the %d elements of its buffer",
			m.Offset, batch, m.BatchStride, m.Rows, m.Cols, m.LD, m.Buf.Len())
	}
	return m, nil
}

// MatMulPlan validates a MatMul call and selects its kernel once, without
// launching it: the returned Call runs it (Call.Run) and explains the choice
// (Call.Explain).
func MatMulPlan(rt *runtime.Runtime, d, a, b Matrix, opt *MatMulOptions) (*Call, error) {
	args, s, err := matMulArgs(rt, d, a, b, opt)
	return newCall(rt, s, engine.OpMatMul.Name(), args, err)
}
