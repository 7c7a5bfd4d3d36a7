package fallback

import (
	"math"
	"unsafe"

	"github.com/klauspost/cpuid/v2"
	"github.com/tcrt-go/tcrt/internal/cpufeat"
	"github.com/tcrt-go/tcrt/tile"
)

// The fused row kernels (light_fused_amd64.s, written by light_gen.go):
// each reads its rows in their own element type, widens, computes and
// narrows in registers and writes the output row directly, so a light op
// makes one pass over memory (a reduction's second pass reads the row
// from L1 or L2) and keeps no float32 copy of its rows. Indices are
// lightTypeIndex's: [input] or [input][output] (addRes: [residual][x]).
// The kernels whose 16-bit rows are all bf16 work on 16-element blocks
// in unpacked order (light_gen.go's typ): their float32 row operands are
// given in it (unpackedOrder).
// The zero value (purego, other architectures) has no kernels.
type lightFused struct {
	sumSq, sum, max [3]func(x unsafe.Pointer, n int) float32
	sumSqDev        [3]func(x unsafe.Pointer, m float32, n int) float32
	// expSum writes softmaxExp's values, 2^max(−127, (x − m)·a);
	// expSumU is expSum[2] writing them in unpacked order, for scaleU.
	expSum  [3]func(dst *float32, x unsafe.Pointer, m, a float32, n int) float32
	expSumU func(dst *float32, x unsafe.Pointer, m, a float32, n int) float32
	// expSumExact writes ExpF32((x − m)·inv), its bits (the sampling
	// paths' exponential).
	expSumExact func(dst *float32, x unsafe.Pointer, m, inv float32, n int) float32
	// affine and scaleW, the norms' last pass, prefetch pf (the next
	// row's input) as they go, so that the next row's reductions read
	// from the caches while this row's stores stream out.
	affine               [3][3]func(dst, x unsafe.Pointer, w, b *float32, m, s float32, pf unsafe.Pointer, n, nt int)
	scaleW               [3][3]func(dst, x unsafe.Pointer, w *float32, s float32, pf unsafe.Pointer, n, nt int)
	addRes               [3][3]func(res, x unsafe.Pointer, n int) float32
	silu, geluTanh, gelu [3][3]func(dst, a, b unsafe.Pointer, n, nt int)
	rot                  [3][3]func(olo, ohi, xlo, xhi unsafe.Pointer, c, s *float32, n int)
	scale                [3]func(dst unsafe.Pointer, x *float32, s float32, pf unsafe.Pointer, n, nt int)
	scaleU               func(dst unsafe.Pointer, x *float32, s float32, pf unsafe.Pointer, n, nt int)
	// sampleWeights writes the sampling weights of x·inv − m, 16 a trip,
	// and returns their sum (sampleWeightSum only returns it, w unused);
	// sampleSelect lists the indices with
	// x·inv ≥ sigma, writing up to 8 entries past them (sample_fast.go).
	sampleWeights   func(w *uint64, x *float32, inv, m float32, n int) uint64
	sampleWeightSum func(w *uint64, x *float32, inv, m float32, n int) uint64
	sampleSelect    func(idx *int32, x *float32, inv, sigma float32, n int) int
}

var lightFusedAsm lightFused

var lightFusedFeatures = []cpuid.FeatureID{cpuid.AVX2, cpuid.FMA3, cpuid.F16C, cpuid.POPCNT}

// lightFusedK returns the fused kernels if the build has them and the CPU
// (and the CPU feature mask) allows them, else nil.
func lightFusedK() *lightFused {
	if lightFusedAsm.sumSq[0] != nil && cpufeat.Supports(lightFusedFeatures...) {
		return &lightFusedAsm
	}
	return nil
}

// lightTypeIndex is a type's index in the fused tables (−1: none).
func lightTypeIndex(d tile.DType) int {
	switch d {
	case tile.F32:
		return 0
	case tile.F16:
		return 1
	case tile.BF16:
		return 2
	}
	return -1
}

// lightNTBytes is the output size from which the fused kernels store with
// non-temporal stores: an output that large does not stay in the caches
// for its reader anyway, and streaming it saves the read of each line
// before its write (a third of a copy's traffic).
var lightNTBytes float64 = 8 << 20

// ntFor says whether an output of this size is streamed.
func ntFor(m *Matrix) bool {
	return float64(m.Rows)*float64(m.Cols)*float64(m.DType.Size()) >= lightNTBytes
}

// ntAt is the nt argument of a kernel storing at p: 1 when nt and p is
// 32-byte aligned, as the kernels' non-temporal stores need.
func ntAt(nt bool, p unsafe.Pointer) int {
	if nt && uintptr(p)%32 == 0 {
		return 1
	}
	return 0
}

// lightNoNaN is the bit of the nt argument of scaleW, affine and scale
// that says the values stored hold no NaN: their bf16 narrowing then
// skips its NaN test.
const lightNoNaN = 2

// noNaNIf is lightNoNaN when ok, else 0.
func noNaNIf(ok bool) int {
	if ok {
		return lightNoNaN
	}
	return 0
}

// finite32 reports whether every v is finite.
func finite32(v []float32) bool {
	for _, x := range v {
		if x-x != 0 {
			return false
		}
	}
	return true
}

// isFinite reports whether x is finite.
func isFinite(x float32) bool { return x-x == 0 }

// elem returns the address of element (r, j) of m.
func elem(m *Matrix, r, j int) unsafe.Pointer {
	return unsafe.Pointer(&m.Data[(r*m.LD+j)*m.DType.Size()])
}

// fusedTypes reports whether every matrix has a fused-kernel type.
func fusedTypes(ms ...*Matrix) bool {
	for _, m := range ms {
		if m != nil && lightTypeIndex(m.DType) < 0 {
			return false
		}
	}
	return true
}

// normFused is NormFast with the fused kernels: per row, one pass adds
// the residual (storing the rounded sum) or reads x while summing squares
// (LayerNorm: the sum, then the squared deviations from L1), and one pass
// writes y. It reports false, doing nothing, where it does not apply.
func normFused(a *NormArgs, fk *lightFused, w []float32) bool {
	if fk == nil || !fusedTypes(&a.X, &a.Y, a.Residual) {
		return false
	}
	n := a.X.Cols
	if n == 0 {
		return true
	}
	n8 := n &^ 7
	b := a.Bias
	if b == nil {
		b = zeroRow(n)
	}
	nt := ntFor(&a.Y)
	tx, ty := lightTypeIndex(a.X.DType), lightTypeIndex(a.Y.DType)
	// The last pass reads the residual when there is one, else x.
	if src := &a.X; a.Y.DType == tile.BF16 && (a.Residual != nil && a.Residual.DType == tile.BF16 || a.Residual == nil && src.DType == tile.BF16) {
		wp, bp := getFloats(n), getFloats(n)
		defer putFloats(wp)
		defer putFloats(bp)
		w, b = unpackedOrder(*wp, w[:n]), unpackedOrder(*bp, b[:n])
	}
	// Finite weights, bias, sum of squares and scale make the outputs
	// finite or ±Inf, never NaN.
	wb := finite32(w) && finite32(b)
	forRowsOf(&normFusedRows, a.X.Rows, n, a.Threads, 0, normFusedState{a, fk, w, b, n, n8, nt, wb, tx, ty}, func(st *normFusedState, lo, hi int, _ []float32) {
		a, fk, w, b, n, n8, nt, wb, tx, ty := st.a, st.fk, st.w, st.b, st.n, st.n8, st.nt, st.wb, st.tx, st.ty
		for r := lo; r < hi; r++ {
			src := &a.X
			var ss float32
			if res := a.Residual; res != nil {
				tr := lightTypeIndex(res.DType)
				ss = fk.addRes[tr][tx](elem(res, r, 0), elem(&a.X, r, 0), n8)
				for j := n8; j < n; j++ {
					i := r*res.LD + j
					storeF32(res.DType, res.Data, i, loadF32(res.DType, res.Data, i)+loadF32(a.X.DType, a.X.Data, r*a.X.LD+j))
					v := loadF32(res.DType, res.Data, i)
					ss += v * v
				}
				src = res
			}
			ts := lightTypeIndex(src.DType)
			sp := elem(src, r, 0)
			var mean float32
			if a.Kind == NormLayer {
				s := fk.sum[ts](sp, n8)
				for j := n8; j < n; j++ {
					s += loadF32(src.DType, src.Data, r*src.LD+j)
				}
				mean = s / float32(n)
				ss = fk.sumSqDev[ts](sp, mean, n8)
				for j := n8; j < n; j++ {
					d := loadF32(src.DType, src.Data, r*src.LD+j) - mean
					ss += d * d
				}
			} else if a.Residual == nil {
				ss = fk.sumSq[ts](sp, n8)
				for j := n8; j < n; j++ {
					v := loadF32(src.DType, src.Data, r*src.LD+j)
					ss += v * v
				}
			}
			inv := float32(1 / math.Sqrt(float64(ss)/float64(n)+float64(a.Eps)))
			yp, pf := elem(&a.Y, r, 0), elem(src, min(r+1, a.X.Rows-1), 0)
			f := ntAt(nt, yp) | noNaNIf(wb && isFinite(ss) && isFinite(inv) && isFinite(mean))
			if a.Kind == NormLayer || a.Bias != nil {
				fk.affine[ts][ty](yp, sp, &w[0], &b[0], mean, inv, pf, n8, f)
			} else {
				fk.scaleW[ts][ty](yp, sp, &w[0], inv, pf, n8, f)
			}
			for j := n8; j < n; j++ {
				y := (loadF32(src.DType, src.Data, r*src.LD+j) - mean) * inv * w[j]
				if a.Bias != nil {
					y += a.Bias[j]
				}
				storeF32(a.Y.DType, a.Y.Data, r*a.Y.LD+j, y)
			}
		}
	})
	return true
}

// actFused is ActFast with the fused kernels (the bits of silu32, gelu32
// and geluTanh32); false where it does not apply.
func actFused(a *ActArgs, fk *lightFused) bool {
	if fk == nil || !a.Func.Valid() || !fusedTypes(&a.A, &a.Y, a.B) || (a.B != nil && a.B.DType != a.A.DType) {
		return false
	}
	n := a.A.Cols
	if n == 0 {
		return true
	}
	n8 := n &^ 7
	k := [numActFuncs]*[3][3]func(dst, a, b unsafe.Pointer, n, nt int){&fk.silu, &fk.gelu, &fk.geluTanh}[a.Func][lightTypeIndex(a.A.DType)][lightTypeIndex(a.Y.DType)]
	f := actFast[a.Func]
	nt := ntFor(&a.Y)
	forRowsOf(&actFusedRows, a.A.Rows, n, a.Threads, 0, actFusedState{a, k, f, n, n8, nt}, func(st *actFusedState, lo, hi int, _ []float32) {
		a, k, f, n, n8, nt := st.a, st.k, st.f, st.n, st.n8, st.nt
		for r := lo; r < hi; r++ {
			var bp unsafe.Pointer
			if a.B != nil {
				bp = elem(a.B, r, 0)
			}
			yp := elem(&a.Y, r, 0)
			k(yp, elem(&a.A, r, 0), bp, n8, ntAt(nt, yp))
			for j := n8; j < n; j++ {
				y := f(loadF32(a.A.DType, a.A.Data, r*a.A.LD+j))
				if a.B != nil {
					y *= loadF32(a.B.DType, a.B.Data, r*a.B.LD+j)
				}
				storeF32(a.Y.DType, a.Y.Data, r*a.Y.LD+j, y)
			}
		}
	})
	return true
}

// unpackedOrder writes v's 16-element blocks into dst in the kernels'
// unpacked order (elements 0–3, 8–11, then 4–7, 12–15; the last len(v) %
// 16 as they are) and returns dst, len(v) long.
func unpackedOrder(dst, v []float32) []float32 {
	dst = dst[:len(v)]
	n16 := len(v) &^ 15
	for k := 0; k < n16; k += 16 {
		b, d := v[k:k+16:k+16], dst[k:k+16:k+16]
		copy(d[0:4], b[0:4])
		copy(d[4:8], b[8:12])
		copy(d[8:12], b[4:8])
		copy(d[12:16], b[12:16])
	}
	copy(dst[n16:], v[n16:])
	return dst
}

// softmaxFused is SoftmaxFast (not Log) with the fused kernels: the
// maximum from memory, the exponentials (softmaxExp) into a float32 row
// in L1 while summing them, the scaled row narrowed into Y; false where
// it does not apply.
func softmaxFused(a *SoftmaxArgs, fk *lightFused) bool {
	if fk == nil || a.Log || !fusedTypes(&a.X, &a.Y) {
		return false
	}
	n := a.X.Cols
	if n == 0 {
		return true
	}
	n8 := n &^ 7
	l2 := float32(math.Log2E / float64(a.Temperature))
	tx, ty := lightTypeIndex(a.X.DType), lightTypeIndex(a.Y.DType)
	nt := ntFor(&a.Y)
	expSum, scale := fk.expSum[tx], fk.scale[ty]
	if a.X.DType == tile.BF16 && a.Y.DType == tile.BF16 {
		expSum, scale = fk.expSumU, fk.scaleU // e in unpacked order
	}
	forRows(a.X.Rows, n, a.Threads, n, func(lo, hi int, e []float32) {
		e = e[:n]
		for r := lo; r < hi; r++ {
			xp := elem(&a.X, r, 0)
			m := fk.max[tx](xp, n8)
			if n8 == 0 {
				m = float32(math.Inf(-1))
			}
			for j := n8; j < n; j++ {
				if v := loadF32(a.X.DType, a.X.Data, r*a.X.LD+j); v > m {
					m = v
				}
			}
			s := expSum(&e[0], xp, m, l2, n8)
			for j := n8; j < n; j++ {
				e[j] = softmaxExp(loadF32(a.X.DType, a.X.Data, r*a.X.LD+j), m, l2)
				s += e[j]
			}
			// A sum that is not NaN is at least 1 (the maximum's term):
			// every output is then finite.
			f := noNaNIf(s == s)
			s = 1 / s
			yp := elem(&a.Y, r, 0)
			scale(yp, &e[0], s, elem(&a.X, min(r+1, a.X.Rows-1), 0), n8, ntAt(nt, yp)|f)
			for j := n8; j < n; j++ {
				storeF32(a.Y.DType, a.Y.Data, r*a.Y.LD+j, s*e[j])
			}
		}
	})
	return true
}

// rotateFused is rotateRow for the NeoX layout with the fused kernels:
// each head's halves rotated from x's row into y's, the rest of the head
// copied when y is not x; false where it does not apply.
func (a *RoPEArgs) rotateFused(fk *lightFused, x, y *Matrix, t, heads int, c, s []float32) bool {
	if fk == nil || a.Interleaved || !fusedTypes(x, y) {
		return false
	}
	half := a.RotaryDim / 2
	h8 := half &^ 7
	k := fk.rot[lightTypeIndex(x.DType)][lightTypeIndex(y.DType)]
	same := x.DType == y.DType && elem(x, t, 0) == elem(y, t, 0)
	// The token's rows, bounds-checked once (their last elements).
	n := heads * a.HeadDim
	_, _ = elem(x, t, n-1), elem(y, t, n-1)
	xp, yp := elem(x, t, 0), elem(y, t, 0)
	xs, ys := x.DType.Size(), y.DType.Size()
	for h := 0; h < heads; h++ {
		o := h * a.HeadDim
		if h8 > 0 {
			k(unsafe.Add(yp, o*ys), unsafe.Add(yp, (o+half)*ys), unsafe.Add(xp, o*xs), unsafe.Add(xp, (o+half)*xs), &c[0], &s[0], h8)
		}
		xi, yi := t*x.LD+o, t*y.LD+o
		for i := h8; i < half; i++ {
			x0, x1 := loadF32(x.DType, x.Data, xi+i), loadF32(x.DType, x.Data, xi+i+half)
			storeF32(y.DType, y.Data, yi+i, x0*c[i]-x1*s[i])
			storeF32(y.DType, y.Data, yi+i+half, x1*c[i]+x0*s[i])
		}
		if !same {
			for j := a.RotaryDim; j < a.HeadDim; j++ {
				storeF32(y.DType, y.Data, yi+j, loadF32(x.DType, x.Data, xi+j))
			}
		}
	}
	return true
}

// normFusedState is the state of normFusedRows's row function.
type normFusedState struct {
	a      *NormArgs
	fk     *lightFused
	w, b   []float32
	n, n8  int
	nt, wb bool
	tx, ty int
}

var normFusedRows rowTasks[normFusedState]

// actFusedState is the state of actFusedRows's row function.
type actFusedState struct {
	a     *ActArgs
	k     func(dst, a, b unsafe.Pointer, n, nt int)
	f     func(float32) float32
	n, n8 int
	nt    bool
}

var actFusedRows rowTasks[actFusedState]

// softmaxExp is the fused softmax's exponential, e^((x − m)/T) as
// 2^max(−127, (x − m)·a) with a = log2(e)/T (pow2F32, the kernels' bits):
// within 2e-7 + 6e-8·|(x − m)·a| relative of e^((x − m)/T) for an exponent
// above −126, exactly 0 from −127 down, NaN for NaN.
func softmaxExp(x, m, a float32) float32 {
	t := (x - m) * a
	if -127 > t {
		t = -127
	}
	return pow2F32(t)
}
