package fallback

import (
	"math"

	"github.com/klauspost/cpuid/v2"
	"github.com/tcrt-go/tcrt/internal/cpufeat"
)

// lightKernels are the light ops' vector row kernels (light_amd64.go: the
// float32 fused kernels of light_fused_amd64.s),
// each over the largest multiple of 8 elements of its count; nil where the
// build has none (purego, other architectures).
type lightKernels struct {
	features []cpuid.FeatureID
	sumSq    func(x *float32, n int) float32
	affine   func(dst, x, w, b *float32, m, s float32, n int)
	scale    func(dst, x *float32, s float32, n int)
	expSum   func(dst, x *float32, m, inv float32, n int) float32
	silu     func(dst, a, b *float32, n int)
	rot      func(olo, ohi, xlo, xhi, c, s *float32, n int)
	max      func(x *float32, n int) float32
	geluTanh func(dst, a, b *float32, n int)
	sum      func(x *float32, n int) float32
}

var lightAsm *lightKernels

// lightVec returns the vector kernels if the CPU (and the CPU feature
// mask) allows them, else nil: the fast paths then run their Go loops.
func lightVec() *lightKernels {
	if lightAsm != nil && cpufeat.Supports(lightAsm.features...) {
		return lightAsm
	}
	return nil
}

// vecSumSq is Σ x².
func vecSumSq(vk *lightKernels, x []float32) float32 {
	if vk == nil || len(x) < 8 {
		return sumSquares(x)
	}
	n := len(x) &^ 7
	return vk.sumSq(&x[0], n) + sumSquares(x[n:])
}

// vecSum is Σ x.
func vecSum(vk *lightKernels, x []float32) float32 {
	if vk == nil || len(x) < 8 {
		return sum(x)
	}
	n := len(x) &^ 7
	return vk.sum(&x[0], n) + sum(x[n:])
}

// vecAffine writes dst = (x − m)·s·w + b (b nil: 0).
func vecAffine(vk *lightKernels, dst, x, w, b []float32, m, s float32, zeros []float32) {
	n := 0
	if vk != nil && len(x) >= 8 {
		n = len(x) &^ 7
		bb := b
		if bb == nil {
			bb = zeros
		}
		vk.affine(&dst[0], &x[0], &w[0], &bb[0], m, s, n)
	}
	for j := n; j < len(x); j++ {
		y := (x[j] - m) * s * w[j]
		if b != nil {
			y += b[j]
		}
		dst[j] = y
	}
}

// vecScale writes dst = s·x.
func vecScale(vk *lightKernels, dst, x []float32, s float32) {
	n := 0
	if vk != nil && len(x) >= 8 {
		n = len(x) &^ 7
		vk.scale(&dst[0], &x[0], s, n)
	}
	for j := n; j < len(x); j++ {
		dst[j] = s * x[j]
	}
}

// vecExpSum writes dst = ExpF32((x − m)·inv) (the same bits as the scalar
// loop) and returns their sum.
func vecExpSum(vk *lightKernels, dst, x []float32, m, inv float32) float32 {
	n := 0
	var s float32
	if vk != nil && len(x) >= 8 {
		n = len(x) &^ 7
		s = vk.expSum(&dst[0], &x[0], m, inv, n)
	}
	for j := n; j < len(x); j++ {
		dst[j] = ExpF32((x[j] - m) * inv)
		s += dst[j]
	}
	return s
}

// vecSilu writes dst = silu(a)·b (b nil: silu(a)).
func vecSilu(vk *lightKernels, dst, a, b []float32) {
	var k func(dst, a, b *float32, n int)
	if vk != nil {
		k = vk.silu
	}
	vecGated(k, silu32, dst, a, b)
}

// vecGeluTanh writes dst = gelu_tanh(a)·b (b nil: gelu_tanh(a)).
func vecGeluTanh(vk *lightKernels, dst, a, b []float32) {
	var k func(dst, a, b *float32, n int)
	if vk != nil {
		k = vk.geluTanh
	}
	vecGated(k, geluTanh32, dst, a, b)
}

// vecGated runs the vector kernel k (nil: none) over the multiple of 8
// and f over the tail.
func vecGated(k func(dst, a, b *float32, n int), f func(float32) float32, dst, a, b []float32) {
	n := 0
	if k != nil && len(a) >= 8 {
		n = len(a) &^ 7
		var bp *float32
		if b != nil {
			bp = &b[0]
		}
		k(&dst[0], &a[0], bp, n)
	}
	for j := n; j < len(a); j++ {
		y := f(a[j])
		if b != nil {
			y *= b[j]
		}
		dst[j] = y
	}
}

// vecRot writes the NeoX rotation olo = xlo·c − xhi·s, ohi = xhi·c + xlo·s
// (the scalar loop's bits).
func vecRot(vk *lightKernels, olo, ohi, xlo, xhi, c, s []float32) {
	n := 0
	if vk != nil && len(c) >= 8 {
		n = len(c) &^ 7
		vk.rot(&olo[0], &ohi[0], &xlo[0], &xhi[0], &c[0], &s[0], n)
	}
	for i := n; i < len(c); i++ {
		x0, x1 := xlo[i], xhi[i]
		olo[i] = x0*c[i] - x1*s[i]
		ohi[i] = x1*c[i] + x0*s[i]
	}
}

// vecMax returns the maximum of x ignoring NaN (−Inf when there is none),
// the value `if v > m { m = v }` from −Inf finds.
func vecMax(vk *lightKernels, x []float32) float32 {
	m := float32(math.Inf(-1))
	n := 0
	if vk != nil && len(x) >= 8 {
		n = len(x) &^ 7
		m = vk.max(&x[0], n)
	}
	for _, v := range x[n:] {
		if v > m {
			m = v
		}
	}
	return m
}

// argmaxBlock is the block vecArgmax looks for the maximum in.
const argmaxBlock = 2048

// vecArgmax is rule 1 of sampling: the lowest index of the maximum, NaN
// counted as −Inf (0 when nothing is above −Inf). After the maximum m,
// the first block whose own maximum equals m holds the first element
// equal to m (a block without one has a smaller maximum), so only that
// block is scanned element by element.
func vecArgmax(vk *lightKernels, x []float32) int {
	m := vecMax(vk, x)
	if math.IsInf(float64(m), -1) {
		return 0
	}
	for lo := 0; lo < len(x); lo += argmaxBlock {
		b := x[lo:min(lo+argmaxBlock, len(x))]
		if vecMax(vk, b) != m {
			continue
		}
		for i, v := range b {
			if v == m {
				return lo + i
			}
		}
	}
	return 0
}
