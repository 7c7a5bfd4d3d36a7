package fallback

import (
	"github.com/klauspost/cpuid/v2"
	"github.com/tcrt-go/tcrt/internal/cpufeat"
)

// lightKernels are the light ops' vector row kernels (light_amd64.s),
// each over the largest multiple of 8 elements of its count; nil where the
// build has none (purego, other architectures).
type lightKernels struct {
	features []cpuid.FeatureID
	sumSq    func(x *float32, n int) float32
	affine   func(dst, x, w, b *float32, m, s float32, n int)
	scale    func(dst, x *float32, s float32, n int)
	expSum   func(dst, x *float32, m, inv float32, n int) float32
	silu     func(dst, a, b *float32, n int)
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
	n := 0
	if vk != nil && len(a) >= 8 {
		n = len(a) &^ 7
		var bp *float32
		if b != nil {
			bp = &b[0]
		}
		vk.silu(&dst[0], &a[0], bp, n)
	}
	for j := n; j < len(a); j++ {
		y := silu32(a[j])
		if b != nil {
			y *= b[j]
		}
		dst[j] = y
	}
}
