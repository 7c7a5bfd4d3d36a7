package fallback

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLightVecExpBits: the vector exponential gives ExpF32's bits for
// every input (ordinary values, both limits, underflow, overflow, ±0,
// ±Inf, NaN), so the sampling weights do not depend on which path ran.
// So does the vector SiLU against silu32.
func TestLightVecExpBits(t *testing.T) {
	vk := lightVec()
	if vk == nil {
		t.Skip("no vector kernels on this CPU or build")
	}
	rng := rand.New(rand.NewPCG(8, 8))
	x := []float32{0, float32(math.Copysign(0, -1)), -87.33654, -87.33655, -87.3365, 88.72283, 88.72284, 88.7228,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), -1e30, 1e30, 1e-30, -126 * 0.6931472, 127 * 0.6931472}
	for range 200000 {
		switch rng.IntN(3) {
		case 0:
			x = append(x, float32(rng.Float64()*180-90))
		case 1:
			x = append(x, float32(rng.NormFloat64()*5))
		default:
			x = append(x, math.Float32frombits(rng.Uint32()))
		}
	}
	for len(x)%8 != 5 { // a tail too
		x = append(x, -3)
	}
	got := make([]float32, len(x))
	vecExpSum(vk, got, x, 0, 1)
	for i, v := range x {
		if w := ExpF32(v); math.Float32bits(got[i]) != math.Float32bits(w) && !(w != w && got[i] != got[i]) {
			t.Fatalf("exp(%v = %#08x): vector %v (%#08x), scalar %v (%#08x)", v, math.Float32bits(v), got[i], math.Float32bits(got[i]), w, math.Float32bits(w))
		}
	}
	b := make([]float32, len(x))
	for i := range b {
		b[i] = float32(rng.NormFloat64())
	}
	vecSilu(vk, got, x, b)
	for i, v := range x {
		w := silu32(v) * b[i]
		if math.Float32bits(got[i]) != math.Float32bits(w) && !(w != w && got[i] != got[i]) {
			t.Fatalf("silu(%v)·%v: vector %v, scalar %v", v, b[i], got[i], w)
		}
	}
}

// TestLightVecReductions bounds the vector sum of squares and the affine
// row against float64.
func TestLightVecReductions(t *testing.T) {
	vk := lightVec()
	if vk == nil {
		t.Skip("no vector kernels on this CPU or build")
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{1, 7, 8, 9, 31, 32, 33, 129, 1000, 4099} {
		x, w, b, out := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
		var ss float64
		for i := range x {
			x[i], w[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64())
			ss += float64(x[i]) * float64(x[i])
		}
		if got := float64(vecSumSq(vk, x)); math.Abs(got-ss) > 1e-6*ss*math.Sqrt(float64(n)) {
			t.Errorf("n %d: Σx² %v, want %v", n, got, ss)
		}
		vecAffine(vk, out, x, w, b, 0.25, 1.5, make([]float32, n))
		for i := range x {
			want := (float64(x[i])-0.25)*1.5*float64(w[i]) + float64(b[i])
			if math.Abs(float64(out[i])-want) > 1e-6*(1+math.Abs(want)) {
				t.Fatalf("n %d: affine[%d] = %v, want %v", n, i, out[i], want)
			}
		}
	}
}
