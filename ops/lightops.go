package ops

import (
	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// The light ops of a transformer layer (norm.go, rope.go, act.go,
// softmax.go, sample.go, pooling.go) take their tensors as row views: a
// Matrix of Rows × Cols elements, row r at element Offset + r·LD of Buf (LD
// 0 means Cols; BatchStride and Trans must be zero). Rows may be 0 (the
// call does nothing) or any positive count; Cols must be positive. RowsOf
// views a dense buffer with all leading dimensions as rows. Every view is
// f32, f16 or bf16 (arithmetic is float32 or wider inside), and the
// element types of inputs and outputs may differ.
//
// Aliasing: an output may be exactly the same view as the input the op
// documents as allowed (in place); any other overlap of an output's span
// (from its first to its last element) with another operand on the same
// buffer is rejected with ErrAlias. The check is by byte spans
// (spansOverlap), so two interleaved views of one buffer count as
// overlapping unless they share a row stride over disjoint columns.

// The light ops' vocabulary.
type (
	// ActFunc is an activation function: SiLU, GELU or GELUTanh.
	ActFunc = fallback.ActFunc
	// EltOp is an element-wise op: EltAdd, EltMul, EltScale.
	EltOp = fallback.EltOp
	// RoPEScaling is a rotary embedding's frequency scaling.
	RoPEScaling = fallback.RoPEScaling
	// RoPEScalingKind names the scaling rule.
	RoPEScalingKind = fallback.RoPEScalingKind
	// PoolMode is an embedding pooling: PoolMean, PoolCLS, PoolLast.
	PoolMode = fallback.PoolMode
)

var lightFloat = map[tile.DType]bool{tile.F32: true, tile.F16: true, tile.BF16: true}

// checkRows validates a row view of an op and resolves LD. cols, when
// positive, is the column count the view must have.
func checkRows(rt *runtime.Runtime, op, name string, m Matrix, cols int) (Matrix, error) {
	if err := checkBuf(m.Buf, rt, op, name); err != nil {
		return m, err
	}
	if dt := m.Buf.DType(); !lightFloat[dt] {
		return m, tile.Errorf(ErrDType, op, name, "element type %v; want f32, f16 or bf16", dt)
	}
	if m.BatchStride != 0 || m.Trans {
		return m, tile.Errorf(ErrArgument, op, name, "a row view has no BatchStride or Trans")
	}
	if m.Rows < 0 || m.Cols <= 0 {
		return m, tile.Errorf(ErrShape, op, name, "shape %dx%d: rows must be non-negative and columns positive", m.Rows, m.Cols)
	}
	if cols > 0 && m.Cols != cols {
		return m, tile.Errorf(ErrShape, op, name, "%d columns; want %d", m.Cols, cols)
	}
	if m.LD == 0 {
		m.LD = m.Cols
	}
	if m.LD < m.Cols {
		return m, tile.Errorf(ErrShape, op, name+".LD", "row stride %d is smaller than the row length %d", m.LD, m.Cols)
	}
	if m.Offset < 0 {
		return m, tile.Errorf(ErrBounds, op, name+".Offset", "negative offset %d", m.Offset)
	}
	if m.Rows == 0 {
		return m, nil
	}
	end, ok := tile.MulAddSize(m.Rows-1, m.LD, m.Offset)
	if ok {
		end, ok = tile.AddSize(end, m.Cols)
	}
	if !ok || end > m.Buf.Len() {
		return m, tile.Errorf(ErrBounds, op, name, "view (offset %d, %dx%d with row stride %d) reaches past the %d elements of its buffer",
			m.Offset, m.Rows, m.Cols, m.LD, m.Buf.Len())
	}
	return m, nil
}

// checkVec validates an optional vector of n values (f32, f16 or bf16).
func checkVec(rt *runtime.Runtime, op, name string, b *runtime.Buffer, n int) error {
	if b == nil {
		return nil
	}
	if err := checkBuf(b, rt, op, name); err != nil {
		return err
	}
	if !lightFloat[b.DType()] {
		return tile.Errorf(ErrDType, op, name, "element type %v; want f32, f16 or bf16", b.DType())
	}
	if b.Len() != n {
		return tile.Errorf(ErrShape, op, name, "%d elements; want %d (one per column)", b.Len(), n)
	}
	return nil
}

// rowsOperand is a resolved row view's operand: its byte span, in rows.
func rowsOperand(m Matrix) engine.Operand { return engine.MatrixOperand("", m.eng(), 1) }

// sameView reports whether two resolved views are the same elements in the
// same order.
func sameView(a, b Matrix) bool { return rowsOperand(a).SameView(rowsOperand(b)) }

// spansOverlap reports whether two resolved views on one buffer may share
// an element: the runtime's aliasing rule (engine.Operand.Overlaps, on
// byte spans), which also allows two views stepping by the same row stride
// with disjoint column ranges (the q and k columns of one fused QKV
// buffer).
func spansOverlap(a, b Matrix) bool { return rowsOperand(a).Overlaps(rowsOperand(b)) }

// operand is an input (or other output) an output is checked against.
type operand struct {
	m       Matrix
	name    string
	inPlace bool // the output may be exactly this view
}

// checkOut rejects an output view that overlaps an operand, unless it is
// exactly an operand marked inPlace.
func checkOut(op, name string, out Matrix, ops ...operand) error {
	for _, v := range ops {
		if v.m.Buf == nil || v.inPlace && sameView(out, v.m) {
			continue
		}
		if spansOverlap(out, v.m) {
			if v.inPlace {
				return tile.Errorf(ErrAlias, op, name, "overlaps %s without being the same view (in place)", v.name)
			}
			return tile.Errorf(ErrAlias, op, name, "overlaps %s, which may not share memory with it", v.name)
		}
	}
	return nil
}

// checkBufAlias rejects a small buffer (weights, positions) that shares
// memory with an output.
func checkBufAlias(op, name string, b *runtime.Buffer, outs ...Matrix) error {
	for _, o := range outs {
		if b != nil && engine.Overlaps(ebuf(b), ebuf(o.Buf)) {
			return tile.Errorf(ErrAlias, op, name, "shares its buffer with an output")
		}
	}
	return nil
}

func explainOf[A any](rt *runtime.Runtime, op string, args A, err error) (Explanation, error) {
	if err != nil {
		return Explanation{}, err
	}
	return explain(rt, op, args)
}
