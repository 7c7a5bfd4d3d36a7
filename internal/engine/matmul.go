package engine

import (
	"fmt"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/tile"
)

// OpMatMul is the matmul op.
var OpMatMul = Op[MatMulArgs]{"matmul"}

// Activation is the matmul epilogue's element-wise function.
type Activation = tile.Activation

// Matrix is a strided batch of row-major matrices stored in a buffer.
// Element (i, j) of batch b is element Offset + b·BatchStride + i·LD + j of
// Buf. Rows × Cols is the stored shape; Trans uses the transpose in the
// product. LD 0 means Cols; BatchStride 0 means Rows·LD.
type Matrix struct {
	Buf         *Buffer
	Offset      int
	Rows, Cols  int
	LD          int
	BatchStride int
	Trans       bool
}

// OpRows and OpCols are the shape of op(M).
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

// MatMulArgs is a validated matmul call:
//
//	D[b] = act(Alpha·op(A[b])·op(B[b]) + Beta·C[b] + Bias)   for b < Batch
//
// with LD and BatchStride already resolved (never 0). C.Buf is nil when Beta
// is 0; Bias is nil or N values of f32, f16 or bf16. Kernels receive it
// typed (RegisterKernel).
type MatMulArgs struct {
	M, N, K, Batch int
	A, B, C, D     Matrix
	Alpha, Beta    float32
	Bias           *Buffer
	Act            Activation
	// ScaleA and ScaleB (nil: none) are f32 dequantisation scales of float8
	// operands: 1 value, or M (rows of op(A)) / N (columns of op(B)).
	ScaleA, ScaleB *Buffer
}

// DTypes returns the element types of A, B and D.
func (a *MatMulArgs) DTypes() (ta, tb, td tile.DType) {
	return a.A.Buf.DType(), a.B.Buf.DType(), a.D.Buf.DType()
}

// hostMatrix views m's host memory as a fallback.Matrix.
func hostMatrix(m Matrix) fallback.Matrix {
	d := m.Buf.DType()
	return fallback.Matrix{
		DType: d, Data: m.Buf.Host()[m.Offset*d.Size():],
		Rows: m.Rows, Cols: m.Cols, LD: m.LD, BatchStride: m.BatchStride, Trans: m.Trans,
	}
}

// HostMatMulArgs converts a CPU-backend call into the fallback's form.
func HostMatMulArgs(a *MatMulArgs, threads int) *fallback.MatMulArgs {
	return hostMatMulInto(new(hostCall[fallback.MatMulArgs]), a, threads)
}

// hostMatMulInto is HostMatMulArgs into c.
func hostMatMulInto(c *hostCall[fallback.MatMulArgs], a *MatMulArgs, threads int) *fallback.MatMulArgs {
	h := &c.h
	*h = fallback.MatMulArgs{
		M: a.M, N: a.N, K: a.K, Batch: a.Batch,
		A: hostMatrix(a.A), B: hostMatrix(a.B), D: hostMatrix(a.D),
		Alpha: a.Alpha, Beta: a.Beta, Act: a.Act, Threads: threads,
	}
	if a.C.Buf != nil {
		c.opt[0] = hostMatrix(a.C)
		h.C = &c.opt[0]
	}
	if a.Bias != nil {
		h.Bias = hostVec(a.Bias)[:a.N]
	}
	h.ScaleA, h.ScaleB = hostScales(a.ScaleA), hostScales(a.ScaleB)
	return h
}

// Element types the CPU matmul kernels load and store.
var (
	cpuMatMulFloatIn = map[tile.DType]bool{tile.F32: true, tile.F16: true, tile.BF16: true}
	cpuMatMulAnyIn   = map[tile.DType]bool{tile.F32: true, tile.F16: true, tile.BF16: true, tile.E4M3: true, tile.E5M2: true}
	cpuMatMulOut     = cpuMatMulFloatIn
)

// cpuMatMulTypes accepts a call whose A and B element types are in
// in and whose D element type the fallback can store.
func cpuMatMulTypes(a *MatMulArgs, in map[tile.DType]bool) error {
	ta, tb, td := a.DTypes()
	for _, t := range []tile.DType{ta, tb} {
		if !in[t] {
			return fmt.Errorf("input element type %v not supported", t)
		}
	}
	if !cpuMatMulOut[td] {
		return fmt.Errorf("output element type %v not supported", td)
	}
	return nil
}

// cpuMatMulPairsIn are the inputs of the bf16 pair kernels.
var cpuMatMulPairsIn = map[tile.DType]bool{tile.BF16: true, tile.E4M3: true, tile.E5M2: true}

// cpuMatMulPairsSupports accepts bf16 and float8 inputs.
func cpuMatMulPairsSupports(a *MatMulArgs) error { return cpuMatMulTypes(a, cpuMatMulPairsIn) }

// cpuMatMulSupports accepts float inputs the fallback can load and float
// outputs it can store.
func cpuMatMulSupports(a *MatMulArgs) error { return cpuMatMulTypes(a, cpuMatMulFloatIn) }

func init() {
	for i, v := range fallback.MatMulVariants() {
		name := v.Name
		k := TypedKernel[MatMulArgs]{
			Name:       "cpu.matmul." + name,
			Arch:       Arch{ISA: ISACPU, CPUFeatures: v.Features},
			Preference: 100 - i,
			Doc:        fmt.Sprintf("packed, blocked, parallel; %dx%d %s micro-kernel", v.MR, v.NR, name),
			Supports:   cpuMatMulSupports,
			Launch: CPUKernel(func(l *Launch, a *MatMulArgs) error {
				return withHost(&hostMatMuls, a, l.Threads, hostMatMulInto,
					func(h *fallback.MatMulArgs) error { return fallback.MatMulFast(name, h) })
			}),
		}
		if v.Skinny {
			k.Doc += "; at most 16 rows with B by rows: B read in place by the skinny kernels"
		}
		if v.BF16Pairs {
			// bf16 and float8 operands only, packed in bf16 pairs with
			// float8 decoded exactly; ahead of cpu.matmul.fp8.
			k.Preference = 200 - i
			k.Doc = fmt.Sprintf("bf16/float8 operands packed in bf16 K pairs (float8 decoded exactly), scales in the f32 epilogue; %dx%d %s dot-product micro-kernel", v.MR, v.NR, name)
			if v.Skinny {
				k.Doc += "; at most 16 rows with bf16 B by rows: B read in place by the skinny kernels"
			}
			k.Supports = cpuMatMulPairsSupports
			k.Launch = CPUKernel(func(l *Launch, a *MatMulArgs) error {
				return withHost(&hostMatMuls, a, l.Threads, hostMatMulInto, func(h *fallback.MatMulArgs) error {
					if err := checkMatMulScales(h); err != nil {
						return err
					}
					return fallback.MatMulFast(name, h)
				})
			})
		}
		RegisterKernel(OpMatMul, k)
	}
	RegisterKernel(OpMatMul, TypedKernel[MatMulArgs]{
		Name:       "cpu.matmul.reference",
		Arch:       Arch{ISA: ISACPU},
		Preference: 0,
		Doc:        "plain float64 reference (the oracle); force it with TCRT_KERNEL=cpu.matmul.reference",
		Supports:   cpuMatMulRefSupports,
		Launch: CPUKernel(func(l *Launch, a *MatMulArgs) error {
			return withHost(&hostMatMuls, a, l.Threads, hostMatMulInto, func(h *fallback.MatMulArgs) error {
				if err := checkMatMulScales(h); err != nil {
					return err
				}
				fallback.MatMulRef(h)
				return nil
			})
		}),
	})
}

// MatrixOf views a dense buffer as a matrix: its last two dimensions are the
// rows and columns (a 1-D buffer is one row), any leading dimensions the
// batch.
func MatrixOf(b *Buffer) Matrix {
	if b == nil {
		return Matrix{}
	}
	s := b.shape
	switch len(s) {
	case 0:
		return Matrix{Buf: b, Rows: 1, Cols: 1}
	case 1:
		return Matrix{Buf: b, Rows: 1, Cols: s[0]}
	}
	return Matrix{Buf: b, Rows: s[len(s)-2], Cols: s[len(s)-1]}
}

// T returns m with Trans flipped.
func (m Matrix) T() Matrix { m.Trans = !m.Trans; return m }
