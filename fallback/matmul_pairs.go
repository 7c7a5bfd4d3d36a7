package fallback

import (
	"unsafe"

	"github.com/tcrt-go/tcrt/tile"
)

// bf16 pair panels. A variant with BF16Pairs multiplies bf16 values with a
// dot-product instruction that takes two k steps at once (VDPBF16PS): each
// 32-bit lane of a panel step holds op(A)(i, 2s) or op(B)(2s, j) in its low
// half and the value at k = 2s+1 in its high half, zero past K. A panel of
// width W and kc values of K has kp = ⌈kc/2⌉ steps of W words; the words live
// in the same []float32 buffers as the f32 panels.
//
// The inputs are bf16 (used as they are) or float8, decoded into bf16 while
// packing: every e4m3 and e5m2 value, subnormals and NaN included, is exact
// in bf16, so nothing is rounded and no f32 copy of A or B is made. Alpha
// and the float8 scales are applied to the f32 sums in the epilogue.
//
// Numerics of VDPBF16PS against the f32 path: each product of two bf16 is
// exact in f32; the two products of a pair and the running sum are added
// with round-to-nearest-even in another order than one FMA per k, so the
// sums differ from the f32 kernel's by f32 rounding (the tests hold both to
// the same tolerance against the float64 reference). The instruction also
// treats subnormal inputs as zero and flushes subnormal results: bf16
// inputs below 2^-126 in magnitude count as zero (float8 values never
// are: the smallest, e5m2's 2^-16, is normal in bf16), and partial sums
// below 2^-126 become zero.

// pairInput reports whether an operand of type t can be packed in bf16 pairs.
func pairInput(t tile.DType) bool {
	return t == tile.BF16 || t == tile.E4M3 || t == tile.E5M2
}

// fp8ToBF16Fast, when set, decodes a prefix of src (e4m3 or e5m2) into dst
// with vector code and returns its length.
var fp8ToBF16Fast func(d tile.DType, dst []uint16, src []byte) int

// float8 to bf16 decoding tables.
var e4m3BF16, e5m2BF16 [256]uint16

func init() {
	for i := range 256 {
		e4m3BF16[i] = tile.F32ToBF16(tile.E4M3ToF32(uint8(i)))
		e5m2BF16[i] = tile.F32ToBF16(tile.E5M2ToF32(uint8(i)))
	}
}

// loadBF16Run returns elements [off, off+n) of m's data as bf16: a view of
// the data when it is bf16, else decoded into buf.
func loadBF16Run(m *Matrix, off, n int, buf []uint16) []uint16 {
	if n == 0 {
		return nil
	}
	var table *[256]uint16
	switch m.DType {
	case tile.BF16:
		return unsafe.Slice((*uint16)(unsafe.Pointer(&m.Data[2*off])), n)
	case tile.E4M3:
		table = &e4m3BF16
	case tile.E5M2:
		table = &e5m2BF16
	default:
		panic("fallback: bf16 pairs of " + m.DType.String())
	}
	buf = buf[:n]
	src := m.Data[off : off+n]
	k := 0
	if fp8ToBF16Fast != nil {
		k = fp8ToBF16Fast(m.DType, buf, src)
	}
	for ; k < n; k++ {
		buf[k] = table[src[k]]
	}
	return buf
}

// packPairsA is packA for pair panels: op(A) rows [i0, i0+mc), K values
// [k0, k0+kc).
func (v *variant) packPairsA(dst []float32, m *Matrix, b, i0, mc, k0, kc int, h []uint16) {
	if kc == 0 {
		return
	}
	base := b * m.BatchStride
	if m.Trans {
		v.pairRowsPack(dst, m, base+k0*m.LD+i0, m.LD, kc, mc, v.MR, h)
	} else {
		v.pairColsPack(dst, m, base+i0*m.LD+k0, m.LD, kc, mc, v.MR, h)
	}
}

// packPairsB is packB for pair panels.
func (v *variant) packPairsB(dst []float32, m *Matrix, b, k0, kc, j0, nc int, h []uint16) {
	if kc == 0 {
		return
	}
	base := b * m.BatchStride
	if m.Trans {
		v.pairColsPack(dst, m, base+j0*m.LD+k0, m.LD, kc, nc, v.NR, h)
	} else {
		v.pairRowsPack(dst, m, base+k0*m.LD+j0, m.LD, kc, nc, v.NR, h)
	}
}

// pairRowsPack fills pair panels of width W from kc stored rows of w
// contiguous elements (the first at element off, row stride ld): lane c of
// step s of panel p is element p·W+c of rows 2s and 2s+1. h holds 2w values.
func (v *variant) pairRowsPack(dst []float32, m *Matrix, off, ld, kc, w, W int, h []uint16) {
	kp := ceilDiv(kc, 2)
	d32 := unsafe.Slice((*uint32)(unsafe.Pointer(&dst[0])), len(dst))
	zero := h[2*w : 3*w]
	clear(zero)
	for s := range kp {
		lo := loadBF16Run(m, off+2*s*ld, w, h[:w])
		hi := zero
		if 2*s+1 < kc {
			hi = loadBF16Run(m, off+(2*s+1)*ld, w, h[w:2*w])
		}
		p := 0
		if v.pairRows != nil {
			p = v.pairRows(dst[s*W:], lo, hi, W, kp)
		}
		for ; p < w; p += W {
			d := d32[p*kp+s*W : p*kp+s*W+W]
			n := min(W, w-p)
			for c := range n {
				d[c] = uint32(lo[p+c]) | uint32(hi[p+c])<<16
			}
			clear(d[n:])
		}
	}
}

// pairColsPack fills pair panels of width W from w stored rows of kc
// contiguous elements (the first at element off, row stride ld): lane c of
// step s of panel p is elements 2s and 2s+1 of row p·W+c. h holds
// W·2⌈kc/2⌉ values.
func (v *variant) pairColsPack(dst []float32, m *Matrix, off, ld, kc, w, W int, h []uint16) {
	kp := ceilDiv(kc, 2)
	d32 := unsafe.Slice((*uint32)(unsafe.Pointer(&dst[0])), len(dst))
	for p := 0; p < w; p += W {
		panel := d32[p*kp : (p+W)*kp]
		n := min(W, w-p)
		// rows[r] is row p+r as bf16, ldr apart, padded with a zero to
		// an even length when it is a copy.
		var rows []uint16
		ldr := 0
		if m.DType == tile.BF16 && ld%2 == 0 && off%2 == 0 {
			rows = unsafe.Slice((*uint16)(unsafe.Pointer(&m.Data[2*(off+p*ld)])), (n-1)*ld+kc)
			ldr = ld
		} else {
			ldr = 2 * kp
			rows = h[:n*ldr]
			for r := range n {
				if x := loadBF16Run(m, off+(p+r)*ld, kc, rows[r*ldr:]); m.DType == tile.BF16 {
					copy(rows[r*ldr:], x)
				}
				if kc%2 != 0 {
					rows[r*ldr+kc] = 0
				}
			}
		}
		s0 := 0 // steps [0, s0) are packed by transPack
		if full := (kc / 2) &^ 15; n == W && full > 0 && v.transPack != nil && len(dst) >= (p+W)*kp+panelSlack {
			if v.transPack((*float32)(unsafe.Pointer(&panel[0])), (*float32)(unsafe.Pointer(&rows[0])), ldr/2, full, W) {
				s0 = full
			}
		}
		for r := range n {
			row := rows[r*ldr:]
			for s := s0; s < kp; s++ {
				hi := uint16(0)
				if 2*s+1 < kc {
					hi = row[2*s+1]
				}
				panel[s*W+r] = uint32(row[2*s]) | uint32(hi)<<16
			}
		}
		for r := n; r < W; r++ {
			for s := s0; s < kp; s++ {
				panel[s*W+r] = 0
			}
		}
	}
}
