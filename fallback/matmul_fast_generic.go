package fallback

import (
	"unsafe"

	"github.com/tcrt-go/tcrt/tile"
)

// The plain-Go kernel's register tile: 16 float32 accumulators, which the
// compiler keeps in the 16 SSE registers of amd64 (or the 32 of arm64).
const (
	genericMR = 4
	genericNR = 4
)

// kernelGeneric is the plain-Go micro-kernel (see kernelFunc).
func kernelGeneric(kc int, a, b, c *float32, ldc, accum int) {
	ap := unsafe.Slice(a, kc*genericMR)
	bp := unsafe.Slice(b, kc*genericNR)
	var c00, c01, c02, c03 float32
	var c10, c11, c12, c13 float32
	var c20, c21, c22, c23 float32
	var c30, c31, c32, c33 float32
	for k := range kc {
		av := ap[k*genericMR : k*genericMR+genericMR : k*genericMR+genericMR]
		bv := bp[k*genericNR : k*genericNR+genericNR : k*genericNR+genericNR]
		b0, b1, b2, b3 := bv[0], bv[1], bv[2], bv[3]
		a0 := av[0]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		a1 := av[1]
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		a2 := av[2]
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		a3 := av[3]
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
	}
	rows := [genericMR][genericNR]float32{
		{c00, c01, c02, c03},
		{c10, c11, c12, c13},
		{c20, c21, c22, c23},
		{c30, c31, c32, c33},
	}
	for r := range genericMR {
		d := unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(c), 4*r*ldc)), genericNR)
		if accum != 0 {
			for j := range d {
				d[j] += rows[r][j]
			}
		} else {
			copy(d, rows[r][:])
		}
	}
}

// genericConverters convert in plain Go.
var genericConverters = converters{
	f16ToF32: func(dst []float32, src []uint16) {
		for i, h := range src[:len(dst)] {
			dst[i] = tile.F16ToF32(h)
		}
	},
	bf16ToF32: bf16ToF32Go,
	f32ToF16: func(dst []uint16, src []float32) {
		for i, x := range src[:len(dst)] {
			dst[i] = tile.F32ToF16(x)
		}
	},
	f32ToBF16: f32ToBF16Go,
}

func f32ToBF16Go(dst []uint16, src []float32) {
	for i, x := range src[:len(dst)] {
		dst[i] = tile.F32ToBF16(x)
	}
}

func bf16ToF32Go(dst []float32, src []uint16) {
	d := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst))
	for i, h := range src[:len(d)] {
		d[i] = uint32(h) << 16
	}
}
