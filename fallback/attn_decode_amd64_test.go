//go:build amd64 && !purego

package fallback

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/cpuid/v2"

	"github.com/tcrt-go/tcrt/tile"
)

// TestDecodeKernelsAVX512 compares the assembly qk4 and pv4 kernels
// (AVX-512 and AVX2) with qk4Go and pv4Go on strided rows of every dtype.
func TestDecodeKernelsAVX512(t *testing.T) {
	for _, set := range []struct {
		name     string
		features []cpuid.FeatureID
		qk       [3]qk4Func
		pv       [3]pv4Func
		dims     []int
	}{
		{"avx512", []cpuid.FeatureID{cpuid.AVX512F, cpuid.AVX512VL}, qk4AVX512, pv4AVX512, []int{64, 128, 256}},
		{"avx2", []cpuid.FeatureID{cpuid.AVX2, cpuid.FMA3, cpuid.F16C}, qk4AVX2, pv4AVX2, []int{16, 48, 64, 128, 256}},
	} {
		t.Run(set.name, func(t *testing.T) {
			if !cpuid.CPU.Supports(set.features...) {
				t.Skipf("the CPU lacks %v", set.features)
			}
			testDecodeKernels(t, set.qk, set.pv, set.dims)
		})
	}
}

func testDecodeKernels(t *testing.T, qk4 [3]qk4Func, pv4 [3]pv4Func, dims []int) {
	rng := rand.New(rand.NewPCG(rand.Uint64(), 8))
	for _, dt := range []tile.DType{tile.F32, tile.BF16, tile.F16} {
		x := kvIndex(dt)
		for _, d := range dims {
			for _, nk := range []int{0, 4, 8, 20, 64, 100} { // 20, 100: a last group of keys short of 16 (pvGrouped)
				const ldkRows = 3 // row stride, in rows of d elements
				sz := dt.Size()
				ld := ldkRows * d * sz
				kv := make([]byte, max(nk, 1)*ld)
				for i := 0; i < len(kv)/sz; i++ {
					storeF32(dt, kv, i, rng.Float32()*2-1)
				}
				ldq := d + 16
				q := make([]float32, 4*ldq)
				for i := range q {
					q[i] = rng.Float32()*2 - 1
				}
				want := make([]float32, 4*nk+16)
				got := make([]float32, 4*nk+16)
				qk4Go(dt)(&want[0], &kv[0], ld, &q[0], ldq, d, nk, 4*ld)
				qk4[x](&got[0], &kv[0], ld, &q[0], ldq, d, nk, 4*ld)
				if e := maxDiff(got, want); e > 1e-5*float64(d) {
					t.Errorf("qk4 %v d%d nk%d: max diff %g", dt, d, nk, e)
				}
				p := make([]float32, 4*nk+1)
				for i := range p {
					p[i] = rng.Float32()
				}
				ldo := d + 32
				o0 := make([]float32, 4*ldo)
				for i := range o0 {
					o0[i] = rng.Float32()*2 - 1
				}
				corr := []float32{0.5, 1, 0, 0.25}
				ow := append([]float32(nil), o0...)
				og := append([]float32(nil), o0...)
				pv4Go(dt)(&ow[0], ldo, &p[0], &kv[0], ld, nk, d, &corr[0], 4*ld)
				pv4[x](&og[0], ldo, &p[0], &kv[0], ld, nk, d, &corr[0], 4*ld)
				if e := maxDiff(og, ow); e > 1e-5*float64(max(nk, 1)) {
					t.Errorf("pv4 %v d%d nk%d: max diff %g", dt, d, nk, e)
				}
			}
		}
	}
}

func maxDiff(a, b []float32) float64 {
	w := 0.0
	for i := range a {
		e := math.Abs(float64(a[i]) - float64(b[i]))
		if math.IsNaN(e) {
			return math.Inf(1)
		}
		w = max(w, e)
	}
	return w
}
