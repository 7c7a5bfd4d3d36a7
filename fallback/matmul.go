package fallback

import (
	"unsafe"

	"github.com/tcrt-go/tcrt/tile"
)

// Activation is the matmul epilogue's element-wise function (defined in
// package tile).
type Activation = tile.Activation

// Activations.
const (
	ActNone = tile.ActNone
	ActReLU = tile.ActReLU
	ActGELU = tile.ActGELU
	ActSiLU = tile.ActSiLU
)

// Matrix is a strided batch of row-major matrices in host memory.
// Element (i, j) of batch b is at Data[(b*BatchStride + i*LD + j) * size].
// Rows and Cols are the stored shape; when Trans is set the operand used in
// the product is the transpose of the stored matrix.
type Matrix struct {
	DType       tile.DType
	Data        []byte
	Rows, Cols  int
	LD          int
	BatchStride int
	Trans       bool
}

// at returns element (i, j) of the stored matrix of batch b as float64.
func (m *Matrix) at(b, i, j int) float64 {
	return float64(loadF32(m.DType, m.Data, b*m.BatchStride+i*m.LD+j))
}

// opAt returns element (i, j) of op(M).
func (m *Matrix) opAt(b, i, j int) float64 {
	if m.Trans {
		return m.at(b, j, i)
	}
	return m.at(b, i, j)
}

// MatMulArgs is one matmul on host memory:
//
//	D[b] = act(Alpha·op(A[b])·op(B[b]) + Beta·C[b] + bias)
//
// for b in [0, Batch). op(A) is M×K, op(B) is K×N, C and D are M×N; bias is a
// vector of N values added to every row (nil for none). C is read only when
// Beta is not zero. The arguments are assumed valid: the ops package checks
// them before any kernel runs.
type MatMulArgs struct {
	M, N, K, Batch int
	A, B           Matrix
	C              *Matrix
	D              Matrix
	Alpha, Beta    float32
	Bias           []float32
	Act            Activation
	// ScaleA and ScaleB are dequantisation scales (nil: 1), set only for
	// float8 operands: one value (per tensor), or M values for the rows of
	// op(A) / N values for the columns of op(B), the same for every batch.
	// They multiply the product: Alpha·ScaleA[i]·ScaleB[j]·Σ_k op(A)_ik·op(B)_kj.
	ScaleA, ScaleB []float32
	// Threads bounds the goroutines used; 0 means GOMAXPROCS.
	Threads int
}

// MatMulRef is the reference matmul: every output element is a float64 dot
// product of the float32 values of the inputs, then the epilogue in float64,
// then one rounding to D's element type.
func MatMulRef(a *MatMulArgs) {
	for b := 0; b < a.Batch; b++ {
		for i := 0; i < a.M; i++ {
			for j := 0; j < a.N; j++ {
				var s float64
				for k := 0; k < a.K; k++ {
					s += a.A.opAt(b, i, k) * a.B.opAt(b, k, j)
				}
				storeF32(a.D.DType, a.D.Data, b*a.D.BatchStride+i*a.D.LD+j, float32(epilogue(a, s, b, i, j)))
			}
		}
	}
}

// epilogue applies alpha, beta·C, bias and the activation to one accumulated
// value in float64.
func epilogue(a *MatMulArgs, s float64, b, i, j int) float64 {
	v := float64(a.Alpha) * scaleAt(a.ScaleA, i) * scaleAt(a.ScaleB, j) * s
	if a.Beta != 0 && a.C != nil {
		v += float64(a.Beta) * a.C.at(b, i, j)
	}
	if a.Bias != nil {
		v += float64(a.Bias[j])
	}
	return a.Act.Apply(v)
}

// loadF32 reads element i of a float array of type d as float32.
func loadF32(d tile.DType, data []byte, i int) float32 {
	switch d {
	case tile.F32:
		return *(*float32)(unsafe.Pointer(&data[4*i]))
	case tile.F16:
		return tile.F16ToF32(*(*uint16)(unsafe.Pointer(&data[2*i])))
	case tile.BF16:
		return tile.BF16ToF32(*(*uint16)(unsafe.Pointer(&data[2*i])))
	case tile.E4M3:
		return tile.E4M3ToF32(data[i])
	case tile.E5M2:
		return tile.E5M2ToF32(data[i])
	}
	panic("fallback: loadF32 of " + d.String())
}

// storeF32 writes v as element i of a float array of type d, rounding to
// nearest even.
func storeF32(d tile.DType, data []byte, i int, v float32) {
	switch d {
	case tile.F32:
		*(*float32)(unsafe.Pointer(&data[4*i])) = v
	case tile.F16:
		*(*uint16)(unsafe.Pointer(&data[2*i])) = tile.F32ToF16(v)
	case tile.BF16:
		*(*uint16)(unsafe.Pointer(&data[2*i])) = tile.F32ToBF16(v)
	default:
		panic("fallback: storeF32 of " + d.String())
	}
}
