package fallback

import "github.com/tcrt-go/tcrt/tile"

// scaleAt is element i of a per-row/column scale vector, its only element
// for a per-tensor scale, or 1 for none.
func scaleAt(s []float32, i int) float64 {
	switch len(s) {
	case 0:
		return 1
	case 1:
		return float64(s[0])
	}
	return float64(s[i])
}

// DequantizeOperand writes op(m) of batch b, scaled, as a dense rows×cols
// float32 matrix into dst (len rows·cols): dst[i][j] = op(m)_ij ·
// rowScale[i] · colScale[j], a nil scale vector meaning 1. It is how the CPU
// float8 matmul "dequantises while packing": the fast f32 kernels then run
// on dst.
func DequantizeOperand(dst []float32, m *Matrix, b, rows, cols int, rowScale, colScale []float32) {
	for i := range rows {
		rs := float32(1)
		if rowScale != nil {
			rs = rowScale[i]
		}
		d := dst[i*cols : (i+1)*cols]
		if !m.Trans && tile.IsFloat8(m.DType) && (rowScale == nil || colScale == nil) {
			src := m.Data[b*m.BatchStride+i*m.LD:][:cols]
			if colScale != nil {
				_ = tile.DecodeFloat8ToF32Scales(m.DType, d, src, colScale[:cols])
			} else {
				_ = tile.DecodeFloat8ToF32(m.DType, d, src, rs)
			}
			continue
		}
		for j := range d {
			var v float32
			if m.Trans {
				v = loadF32(m.DType, m.Data, b*m.BatchStride+j*m.LD+i)
			} else {
				v = loadF32(m.DType, m.Data, b*m.BatchStride+i*m.LD+j)
			}
			v *= rs
			if colScale != nil {
				v *= colScale[j]
			}
			d[j] = v
		}
	}
}

// SkinnyFloat8 reports whether variant's fast path (MatMulFast) multiplies
// a's float8 B where it lies, widened to f32 in registers by its skinny
// kernels (the AVX2 strip and dot kernels, M ≤ 16), with a's scales
// applied to the f32 sums: the float8 matmul then needs no dequantised
// copy of B.
func SkinnyFloat8(variant string, a *MatMulArgs) bool {
	if !tile.IsFloat8(a.B.DType) {
		return false
	}
	for _, v := range variants {
		if v.Name == variant {
			j := job{a: a, v: v}
			return v.Available() && v.Accepts(a.A.DType, a.B.DType) && j.skinnyPath()
		}
	}
	return false
}
