package ops

import (
	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// Matrix is a strided batch of row-major matrices stored in a buffer.
// Element (i, j) of batch b is element Offset + b·BatchStride + i·LD + j of
// Buf. Rows × Cols is the stored shape; Trans uses the transpose in the
// product. LD 0 means Cols; BatchStride 0 means Rows·LD. MatrixOf and
// RowsOf make one from a dense buffer.
type Matrix struct {
	Buf         *runtime.Buffer
	Offset      int
	Rows, Cols  int
	LD          int
	BatchStride int
	Trans       bool
}

// MatrixOf views a dense buffer as a matrix: its last two dimensions are
// the rows and columns (a 1-D buffer is one row), any leading dimensions
// the batch.
func MatrixOf(b *runtime.Buffer) Matrix {
	switch b.Rank() {
	case 0:
		if b == nil {
			return Matrix{}
		}
		return Matrix{Buf: b, Rows: 1, Cols: 1}
	case 1:
		return Matrix{Buf: b, Rows: 1, Cols: b.Dim(0)}
	}
	return Matrix{Buf: b, Rows: b.Dim(b.Rank() - 2), Cols: b.Dim(b.Rank() - 1)}
}

// RowsOf views a dense buffer as rows: its last dimension is the columns
// and all leading dimensions are flattened into rows (a scalar is 1×1).
func RowsOf(b *runtime.Buffer) Matrix {
	if b == nil {
		return Matrix{}
	}
	r, c := matrixShape(b.Shape())
	return Matrix{Buf: b, Rows: r, Cols: c}
}

// OpRows is the row count of op(M): Cols when Trans is set, else Rows.
func (m Matrix) OpRows() int {
	if m.Trans {
		return m.Cols
	}
	return m.Rows
}

// OpCols is the column count of op(M).
func (m Matrix) OpCols() int {
	if m.Trans {
		return m.Rows
	}
	return m.Cols
}

// T returns m with Trans flipped.
func (m Matrix) T() Matrix { m.Trans = !m.Trans; return m }

// eng is m over the engine's buffer.
func (m Matrix) eng() engine.Matrix {
	return engine.Matrix{Buf: ebuf(m.Buf), Offset: m.Offset, Rows: m.Rows, Cols: m.Cols, LD: m.LD, BatchStride: m.BatchStride, Trans: m.Trans}
}

// AttnTensor is a strided view of a buffer as [batch, seq, heads, headDim]
// (or [seq, heads, headDim], a batch of one), the layout of attention's
// queries, keys, values and outputs. Element (b, s, h, d) is element
// Offset + b·Strides[0] + s·Strides[1] + h·Strides[2] + d·Strides[3] of
// Buf; nil Strides means dense row-major. The headDim stride must be 1.
// AttnTensorOf makes a dense one.
type AttnTensor struct {
	Buf     *runtime.Buffer
	Offset  int
	Shape   []int
	Strides []int
}

// AttnTensorOf views a dense buffer of rank 3 or 4 as an AttnTensor.
func AttnTensorOf(b *runtime.Buffer) AttnTensor {
	if b == nil {
		return AttnTensor{}
	}
	return AttnTensor{Buf: b, Shape: b.Shape()}
}

// Tile is a tile stored in a buffer: the buffer holds exactly the physical
// tile (Desc.Elements() elements of Desc.DType) in Desc's layout.
type Tile struct {
	Buf  *runtime.Buffer
	Desc tile.Tile
}

// DenseTile views a buffer as a tile whose valid region is all of it: a
// 2-D buffer [rows, cols] as rows × cols, a 1-D buffer of n elements as
// n × 1 (a column), a scalar as 1 × 1.
func DenseTile(b *runtime.Buffer) Tile {
	if b == nil {
		return Tile{}
	}
	return Tile{Buf: b, Desc: engine.DenseTile(ebuf(b)).Desc}
}

// TileOf pairs a buffer with a descriptor.
func TileOf(b *runtime.Buffer, desc tile.Tile) Tile { return Tile{Buf: b, Desc: desc} }

// eng is t over the engine's buffer.
func (t Tile) eng() engine.Tile { return engine.Tile{Buf: ebuf(t.Buf), Desc: t.Desc} }

// ert, ebuf and estream are the engine objects behind public handles (nil
// for nil).
// checkBuf is the engine's buffer check (set, open, of runtime rt when rt is
// not nil) for b, named arg of op.
func checkBuf(b *runtime.Buffer, rt *runtime.Runtime, op, arg string) error {
	return ebuf(b).Check(ert(rt), op, arg)
}

func ert(r *runtime.Runtime) *engine.Runtime { return engine.Handles.Runtime(r) }
func ebuf(b *runtime.Buffer) *engine.Buffer  { return engine.Handles.Buffer(b) }
func estream(s *runtime.Stream) *engine.Stream {
	return engine.Handles.Stream(s)
}
