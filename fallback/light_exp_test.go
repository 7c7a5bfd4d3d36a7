package fallback

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestFma32 checks fma32 against x·y + z computed exactly and rounded
// once (math/big), on random triples and on triples built so that the
// sum falls on or next to a float32 rounding tie (where rounding the
// float64 sum to nearest and then to float32 would round twice).
func TestFma32(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	exact := func(x, y, z float32) float32 {
		a, b, c := new(big.Float).SetPrec(2000), new(big.Float).SetPrec(2000), new(big.Float).SetPrec(2000)
		a.SetFloat64(float64(x))
		b.SetFloat64(float64(y))
		c.SetFloat64(float64(z))
		a.Mul(a, b).Add(a, c)
		f, _ := a.Float32()
		return f
	}
	r32 := func() float32 { return float32(rng.NormFloat64() * math.Exp2(float64(rng.IntN(40)-20))) }
	for i := range 200000 {
		x, y, z := r32(), r32(), r32()
		switch i % 4 {
		case 1: // z cancels most of x·y
			z = -float32(float64(x) * float64(y))
		case 2: // x·y lands just off a float32 tie; z is its tiny part
			p := float64(x) * float64(y)
			h := float64(float32(p))
			ulp := math.Abs(float64(math.Nextafter32(float32(h), float32(math.Inf(1)))) - h)
			z = float32(h + ulp/2 - p)
			if rng.IntN(2) == 0 {
				z = math.Nextafter32(z, 0)
			}
		case 3: // z far larger or smaller than x·y
			z *= float32(math.Exp2(float64(rng.IntN(60) - 30)))
		}
		if g, w := fma32(x, y, z), exact(x, y, z); math.Float32bits(g) != math.Float32bits(w) {
			t.Fatalf("fma32(%g, %g, %g) = %g (%#08x), want %g (%#08x)", x, y, z, g, math.Float32bits(g), w, math.Float32bits(w))
		}
	}
}

// TestPow2F32Bound states pow2F32's error: within 1.7e-7 of 2^t relative
// for t in [−126, 128), exact at the integers, +Inf at 128, 0 at −127
// and below 2^−126 in (−127, −126); NaN for NaN.
func TestPow2F32Bound(t *testing.T) {
	var worst float64
	for i := 0; i <= 1<<22; i++ {
		tt := float32(-126 + 254*float64(i)/(1<<22))
		if tt >= 128 {
			break
		}
		e := math.Abs(float64(pow2F32(tt))/math.Exp2(float64(tt)) - 1)
		worst = math.Max(worst, e)
		if !(e <= 1.7e-7) {
			t.Fatalf("pow2F32(%v) = %v, want %v", tt, pow2F32(tt), math.Exp2(float64(tt)))
		}
	}
	t.Logf("largest relative error %.3g", worst)
	for n := -126; n < 128; n++ {
		if g := pow2F32(float32(n)); float64(g) != math.Exp2(float64(n)) {
			t.Fatalf("pow2F32(%d) = %v", n, g)
		}
	}
	if g := pow2F32(128); !math.IsInf(float64(g), 1) {
		t.Fatalf("pow2F32(128) = %v, want +Inf", g)
	}
	if g := pow2F32(-127); math.Float32bits(g) != 0 {
		t.Fatalf("pow2F32(−127) = %v, want +0", g)
	}
	if g := pow2F32(-126.7); !(g >= 0 && g < 0x1p-126) {
		t.Fatalf("pow2F32(−126.7) = %v, want in [0, 2^−126)", g)
	}
	if g := pow2F32(float32(math.NaN())); g == g {
		t.Fatalf("pow2F32(NaN) = %v", g)
	}
}

// TestGateBounds states silu32's and geluTanh32's error against the
// float64 functions (the tanh GELU as x/(1 + e^−2u), which does not
// cancel to 0 where x/2·(1 + tanh u) does): within (3e-7 + c·|t|)·|f(x)|
// + 2^−120 (the gates are −0 once t reaches 128, where |f(x)| < 2^−121),
// t the exponent gate32 takes (c = 6e-8 for SiLU, 2e-7 for the tanh
// GELU), on a sweep of [−100, 100]; and their special values.
func TestGateBounds(t *testing.T) {
	u2 := func(x float32) float64 { v := float64(x); return 2 * math.Sqrt(2/math.Pi) * (v + 0.044715*v*v*v) }
	cases := []struct {
		ref  func(float64) float64
		f    func(float32) float32
		arg  func(float32) float64 // |t|
		c    float64
		name string
	}{
		{func(x float64) float64 { return actRef(FnSiLU, x) }, silu32, func(x float32) float64 { return math.Abs(float64(x)) * math.Log2E }, 6e-8, "silu"},
		{func(x float64) float64 { return x / (1 + math.Exp(-u2(float32(x)))) }, geluTanh32,
			func(x float32) float64 { return math.Abs(u2(x)) * math.Log2E }, 2e-7, "gelu_tanh"},
	}
	for _, c := range cases {
		var worst float64
		for i := 0; i <= 1<<20; i++ {
			x := float32(-100 + 200*float64(i)/(1<<20))
			w, g := c.ref(float64(x)), float64(c.f(x))
			tt := math.Min(c.arg(x), 128)
			if !(math.Abs(g-w) <= (3e-7+c.c*tt)*math.Abs(w)+0x1p-120) {
				t.Fatalf("%s(%v) = %v, want %v", c.name, x, g, w)
			}
			if w != 0 && math.Abs(w) > 0x1p-100 {
				worst = math.Max(worst, math.Abs(g-w)/math.Abs(w)/(3e-7+c.c*tt))
			}
		}
		t.Logf("%s: largest error %.3g of the bound", c.name, worst)
		inf := float32(math.Inf(1))
		for _, s := range []struct{ x, want float32 }{{inf, inf}, {-1e38, 0}, {1e38, 1e38}, {0, 0}} {
			if g := c.f(s.x); g != s.want {
				t.Fatalf("%s(%v) = %v, want %v", c.name, s.x, g, s.want)
			}
		}
		for _, x := range []float32{-inf, float32(math.NaN())} {
			if g := c.f(x); g == g {
				t.Fatalf("%s(%v) = %v, want NaN", c.name, x, g)
			}
		}
	}
}

// TestSoftmaxExpBound states softmaxExp's error: within 1.7e-7 +
// 1.3e-7·|t| of e^((x − m)/T) relative, t = (x − m)·log2(e)/T, while t ≥
// −126; exactly 0 once t ≤ −127.
func TestSoftmaxExpBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 31))
	for range 1000000 {
		m := float32(rng.NormFloat64() * 20)
		x := m - float32(rng.ExpFloat64()*20)
		temp := float32(0.05 + 3*rng.Float64())
		a := float32(math.Log2E / float64(temp))
		g := float64(softmaxExp(x, m, a))
		d := (float64(x) - float64(m)) / float64(temp)
		tt := d * math.Log2E
		switch {
		case tt <= -127.01:
			if g != 0 {
				t.Fatalf("softmaxExp(%v, %v, T %v) = %v, want 0", x, m, temp, g)
			}
		case tt >= -125.99:
			if w := math.Exp(d); !(math.Abs(g-w) <= (1.7e-7+1.3e-7*math.Abs(tt))*w) {
				t.Fatalf("softmaxExp(%v, %v, T %v) = %v, want %v", x, m, temp, g, w)
			}
		}
	}
}

// TestGeluBound states gelu32's error against the float64 GELU: within
// 2e-7·|x| + 3e-7·|gelu(x)| on a sweep of [−30, 30], and its special
// values; the fused kernels give its bits on x spread over the floats.
func TestGeluBound(t *testing.T) {
	var worst float64
	for i := 0; i <= 1<<20; i++ {
		x := float32(-30 + 60*float64(i)/(1<<20))
		w, g := actRef(FnGELU, float64(x)), float64(gelu32(x))
		b := 2e-7*math.Abs(float64(x)) + 3e-7*math.Abs(w)
		if !(math.Abs(g-w) <= b) {
			t.Fatalf("gelu(%v) = %v, want %v", x, g, w)
		}
		if b > 0 {
			worst = math.Max(worst, math.Abs(g-w)/b)
		}
	}
	t.Logf("largest error %.3g of the bound", worst)
	inf := float32(math.Inf(1))
	for _, s := range []struct{ x, want float32 }{{inf, inf}, {-1e38, 0}, {1e38, 1e38}, {0, 0}} {
		if g := gelu32(s.x); g != s.want {
			t.Fatalf("gelu(%v) = %v, want %v", s.x, g, s.want)
		}
	}
	for _, x := range []float32{-inf, float32(math.NaN())} {
		if g := gelu32(x); g == g {
			t.Fatalf("gelu(%v) = %v, want NaN", x, g)
		}
	}
	fk := lightFusedK()
	if fk == nil {
		return
	}
	rng := rand.New(rand.NewPCG(29, 32))
	x := []float32{inf, -inf, float32(math.NaN()), 0, float32(math.Copysign(0, -1)), 1e-40, -1e-40, 1e20, -1e20, 3e38, -3e38}
	for len(x) < 100003 {
		switch rng.IntN(3) {
		case 0:
			x = append(x, float32(rng.NormFloat64()*4))
		case 1:
			x = append(x, float32(rng.Float64()*40-20))
		default:
			x = append(x, math.Float32frombits(rng.Uint32()))
		}
	}
	got := make([]float32, len(x))
	n := len(x) &^ 7
	fk.gelu[0][0](unsafe.Pointer(&got[0]), unsafe.Pointer(&x[0]), nil, n, 0)
	for i, v := range x[:n] {
		if w := gelu32(v); math.Float32bits(got[i]) != math.Float32bits(w) && !(w != w && got[i] != got[i]) {
			t.Fatalf("gelu(%v = %#08x): kernel %v (%#08x), gelu32 %v (%#08x)", v, math.Float32bits(v), got[i], math.Float32bits(got[i]), w, math.Float32bits(w))
		}
	}
}
