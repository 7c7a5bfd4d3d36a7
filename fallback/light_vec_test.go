package fallback

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

// TestLightVecExpBits: the vector exponential gives ExpF32's bits for
// every input (ordinary values, both limits, underflow, overflow, ±0,
// ±Inf, NaN), so the sampling weights do not depend on which path ran.
// So do the vector SiLU and tanh GELU against silu32 and geluTanh32.
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
	vecGeluTanh(vk, got, x, b)
	for i, v := range x {
		w := geluTanh32(v) * b[i]
		if math.Float32bits(got[i]) != math.Float32bits(w) && !(w != w && got[i] != got[i]) {
			t.Fatalf("gelu_tanh(%v)·%v: vector %v (%#08x), scalar %v (%#08x)", v, b[i], got[i], math.Float32bits(got[i]), w, math.Float32bits(w))
		}
	}
	vecGeluTanh(vk, got, x, nil)
	for i, v := range x {
		w := geluTanh32(v)
		if math.Float32bits(got[i]) != math.Float32bits(w) && !(w != w && got[i] != got[i]) {
			t.Fatalf("gelu_tanh(%v): vector %v, scalar %v", v, got[i], w)
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
		var sx, sa float64
		for _, v := range x {
			sx += float64(v)
			sa += math.Abs(float64(v))
		}
		if got := float64(vecSum(vk, x)); math.Abs(got-sx) > 1e-6*sa*math.Sqrt(float64(n)) {
			t.Errorf("n %d: Σx %v, want %v", n, got, sx)
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

// TestLightVecRotBits: the vector NeoX rotation writes the scalar loop's
// bits.
func TestLightVecRotBits(t *testing.T) {
	vk := lightVec()
	if vk == nil {
		t.Skip("no vector kernels on this CPU or build")
	}
	rng := rand.New(rand.NewPCG(10, 10))
	for _, n := range []int{1, 8, 13, 64, 1001} {
		v := func() []float32 {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			return x
		}
		xlo, xhi, c, s := v(), v(), v(), v()
		olo, ohi := make([]float32, n), make([]float32, n)
		vecRot(vk, olo, ohi, xlo, xhi, c, s)
		for i := range c {
			w0, w1 := xlo[i]*c[i]-xhi[i]*s[i], xhi[i]*c[i]+xlo[i]*s[i]
			if math.Float32bits(olo[i]) != math.Float32bits(w0) || math.Float32bits(ohi[i]) != math.Float32bits(w1) {
				t.Fatalf("n %d, pair %d: vector (%v, %v), scalar (%v, %v)", n, i, olo[i], ohi[i], w0, w1)
			}
		}
	}
}

// TestLightVecArgmax: the vector maximum and argmax agree with the scalar
// greedy rule on rows with NaN, ±Inf, ties and signed zeros.
func TestLightVecArgmax(t *testing.T) {
	vk := lightVec()
	if vk == nil {
		t.Skip("no vector kernels on this CPU or build")
	}
	rng := rand.New(rand.NewPCG(11, 11))
	specials := []float32{float32(math.NaN()), float32(math.Inf(-1)), float32(math.Inf(1)), 0, float32(math.Copysign(0, -1)), 3, 3}
	for trial := range 3000 {
		n := 1 + rng.IntN(80)
		x := make([]float32, n)
		for i := range x {
			if rng.IntN(3) == 0 {
				x[i] = specials[rng.IntN(len(specials))]
			} else {
				x[i] = float32(rng.IntN(7) - 3)
			}
		}
		if trial%5 == 0 { // rows of NaN and −Inf only
			for i := range x {
				x[i] = specials[rng.IntN(2)]
			}
		}
		if got, want := vecArgmax(vk, x), greedy(x); got != want {
			t.Fatalf("%v: vector argmax %d, scalar %d", x, got, want)
		}
	}
	// Rows of several argmaxBlock blocks: the maximum (or its equals,
	// ±0 among them) once or a few times anywhere, NaN and ±Inf sprinkled.
	for trial := range 300 {
		n := 1 + rng.IntN(4*argmaxBlock+100)
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.IntN(1000)) - 2000
		}
		for range rng.IntN(4) {
			x[rng.IntN(n)] = specials[rng.IntN(len(specials))]
		}
		top := specials[3+rng.IntN(4)] // 0, −0 or 3
		for range 1 + rng.IntN(3) {
			x[rng.IntN(n)] = top
		}
		if trial%7 == 0 {
			x[rng.IntN(n)] = float32(math.Copysign(0, -1)) // −0 before or after +0
		}
		if got, want := vecArgmax(vk, x), greedy(x); got != want {
			t.Fatalf("trial %d, n %d: vector argmax %d (%v), scalar %d (%v)", trial, n, got, x[got], want, x[want])
		}
	}
}

// TestSoftmaxSpecialRows: rows with a NaN, a +Inf or only −Inf give NaN
// rows on both paths.
func TestSoftmaxSpecialRows(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	rows := [][]float32{
		{1, 2, nan, 3, 4, 5, 6, 7, 8, 9, 10},
		{1, 2, inf, 3, 4, 5, 6, 7, 8, 9, 10},
		{-inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf},
	}
	for _, log := range []bool{false, true} {
		for i, r := range rows {
			x := make([]byte, 4*len(r))
			copy(F32s(x), r)
			for _, f := range []func(*SoftmaxArgs){SoftmaxRef, SoftmaxFast} {
				y := make([]byte, len(x))
				m := Matrix{DType: tile.F32, Data: x, Rows: 1, Cols: len(r), LD: len(r)}
				o := m
				o.Data = y
				f(&SoftmaxArgs{X: m, Y: o, Temperature: 1, Log: log})
				for j, v := range F32s(y) {
					if v == v {
						t.Fatalf("row %d (log %v): element %d is %v, want NaN", i, log, j, v)
					}
				}
			}
		}
	}
}
