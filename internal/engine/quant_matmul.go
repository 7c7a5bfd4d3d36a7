package engine

import (
	"errors"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/tile"
)

// Float8 operands of matmul. Where the CPU has AVX512_BF16,
// cpu.matmul.avx512bf16 (preference 200) takes float8 and bf16 operands: it
// decodes float8 exactly into bf16 K pairs while packing and applies Alpha
// and the scales to the f32 sums (see fallback/matmul_pairs.go). Otherwise,
// and for float8 beside f32 or f16, cpu.matmul.fp8 dequantises: op(A)
// and op(B) of each batch are decoded into dense f32 panels with the
// per-row scales of op(A) and the per-column scales of op(B) applied
// (value·scale rounded to f32, exact for power-of-two scales), per-tensor
// scales are folded into Alpha (Alpha·sA·sB in f32), and the best f32
// matmul variant runs on the panels. The reference (cpu.matmul.reference)
// instead multiplies the float64 dot product by Alpha·sA_i·sB_j, so the two
// agree to f32 rounding of the scales. Float8 B that the fast path's skinny
// kernels read in place (fallback.SkinnyFloat8: M ≤ 16, AVX2) skips the
// panels: MatMulFast widens it in registers and scales the f32 sums.

func hostScales(b *Buffer) []float32 {
	if b == nil {
		return nil
	}
	return append([]float32(nil), fallback.F32s(b.Host())[:b.Len()]...)
}

// checkMatMulScales rejects scale values that are not positive and finite
// (scale values are data: only the kernel sees them).
func checkMatMulScales(h *fallback.MatMulArgs) error {
	if err := fallback.CheckScales(OpMatMul.name, "ScaleA", h.ScaleA); err != nil {
		return err
	}
	return fallback.CheckScales(OpMatMul.name, "ScaleB", h.ScaleB)
}

// cpuMatMulRefSupports is cpuMatMulSupports plus float8 operands.
func cpuMatMulRefSupports(a *MatMulArgs) error { return cpuMatMulTypes(a, cpuMatMulAnyIn) }

func cpuMatMulFP8Supports(a *MatMulArgs) error {
	if err := cpuMatMulRefSupports(a); err != nil {
		return err
	}
	ta, tb, _ := a.DTypes()
	if !tile.IsFloat8(ta) && !tile.IsFloat8(tb) {
		return errNoFloat8
	}
	return nil
}

// errNoFloat8 is the float8 kernel's refusal of a call without a float8
// operand: a value, since selection asks on every non-float8 matmul.
var errNoFloat8 = errors.New("no float8 operand")

func bestMatMulVariant() string {
	for _, v := range fallback.MatMulVariants() {
		if v.Available() && !v.BF16Pairs { // the panels are f32
			return v.Name
		}
	}
	return "generic"
}

// matMulFP8 dequantises op(A) and op(B) into f32 panels and runs the f32
// fast path on them.
func matMulFP8(h *fallback.MatMulArgs) error {
	if err := checkMatMulScales(h); err != nil {
		return err
	}
	if v := bestMatMulVariant(); fallback.SkinnyFloat8(v, h) {
		// Few rows of A: the skinny kernels widen B in registers.
		return fallback.MatMulFast(v, h)
	}
	alpha := h.Alpha
	var rowA, colB []float32
	switch len(h.ScaleA) {
	case 0:
	case 1:
		alpha *= h.ScaleA[0]
	default:
		rowA = h.ScaleA
	}
	switch len(h.ScaleB) {
	case 0:
	case 1:
		alpha *= h.ScaleB[0]
	default:
		colB = h.ScaleB
	}
	pa := make([]float32, h.M*h.K)
	pb := make([]float32, h.K*h.N)
	for b := range h.Batch {
		fallback.DequantizeOperand(pa, &h.A, b, h.M, h.K, rowA, nil)
		fallback.DequantizeOperand(pb, &h.B, b, h.K, h.N, nil, colB)
		f := *h
		f.Batch, f.Alpha, f.ScaleA, f.ScaleB = 1, alpha, nil, nil
		f.A = fallback.Matrix{DType: tile.F32, Data: f32Bytes(pa), Rows: h.M, Cols: h.K, LD: h.K, BatchStride: h.M * h.K}
		f.B = fallback.Matrix{DType: tile.F32, Data: f32Bytes(pb), Rows: h.K, Cols: h.N, LD: h.N, BatchStride: h.K * h.N}
		f.D = h.D
		f.D.Data = h.D.Data[b*h.D.BatchStride*h.D.DType.Size():]
		if h.C != nil {
			c := *h.C
			c.Data = c.Data[b*c.BatchStride*c.DType.Size():]
			f.C = &c
		}
		if err := fallback.MatMulFast(bestMatMulVariant(), &f); err != nil {
			return err
		}
	}
	return nil
}

func f32Bytes(v []float32) []byte { return asBytes(v) }

func init() {
	RegisterKernel(OpMatMul, TypedKernel[MatMulArgs]{
		Name:       "cpu.matmul.fp8",
		Arch:       Arch{ISA: ISACPU},
		Preference: 150,
		Doc:        "float8 operands: dequantise op(A), op(B) with their scales into f32 panels, then the f32 fast path",
		Supports:   cpuMatMulFP8Supports,
		Launch: CPUKernel(func(l *Launch, a *MatMulArgs) error {
			return matMulFP8(HostMatMulArgs(a, l.Threads))
		}),
	})
}
