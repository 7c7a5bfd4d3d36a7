package sim

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
	"github.com/x448/float16"

	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// The packed half-precision corpus kernels (half.ptx: h2_math, bf16_math,
// cvt_half) skip at the first form the decoder or the simulator lacks,
// naming it. Their Go references follow the PTX ISA and round exactly
// (math/big); they have not been run against the simulator or hardware,
// so when the forms land a failure may be the reference's.

// Rounding directions for f16Round.
const (
	rndNearest = iota
	rndZero
	rndDown
	rndUp
)

// f16Round rounds x to binary16 in direction mode (subnormals included,
// overflow to infinity or to the largest finite value as IEEE directs),
// by binary search over the finite binary16 values.
func f16Round(x *big.Float, mode int) uint16 {
	sign := uint16(0)
	a := new(big.Float).Abs(x)
	if x.Signbit() {
		sign = 0x8000
	}
	if a.IsInf() {
		return sign | 0x7c00
	}
	val := func(b uint16) *big.Float {
		if b == 0x7c00 { // the overflow threshold's other side: 2^16
			return big.NewFloat(65536)
		}
		return big.NewFloat(float64(float16.Frombits(b).Float32()))
	}
	lo, hi := uint16(0), uint16(0x7bff) // largest b with val(b) <= a
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if val(mid).Cmp(a) <= 0 {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if val(lo).Cmp(a) == 0 {
		return sign | lo
	}
	up := false
	switch mode {
	case rndNearest:
		d0 := new(big.Float).SetPrec(200).Sub(a, val(lo))
		d1 := new(big.Float).SetPrec(200).Sub(val(lo+1), a)
		c := d1.Cmp(d0)
		up = c < 0 || c == 0 && lo&1 == 1
	case rndUp:
		up = sign == 0
	case rndDown:
		up = sign != 0
	}
	if up {
		lo++
	}
	return sign | lo
}

// hbig is binary16 bits as an exact big.Float.
func hbig(b uint16) *big.Float {
	return new(big.Float).SetPrec(200).SetFloat64(float64(float16.Frombits(b).Float32()))
}

// hFMA is binary16 a*b+c rounded once to nearest even.
func hFMA(a, b, c uint16) uint16 {
	p := new(big.Float).SetPrec(200).Mul(hbig(a), hbig(b))
	return f16Round(p.Add(p, hbig(c)), rndNearest)
}

// hsat clamps a binary16 to [0, 1] (.sat; NaN to +0).
func hsat(h uint16) uint16 {
	switch {
	case h&0x7fff > 0x7c00 || h&0x8000 != 0:
		return 0
	case h&0x7fff > 0x3c00:
		return 0x3c00
	}
	return h
}

// hftz flushes a binary16 subnormal to a zero of its sign.
func hftz(h uint16) uint16 {
	if h&0x7c00 == 0 {
		return h & 0x8000
	}
	return h
}

// hless is a < b for binary16 (false when either is NaN).
func hless(a, b uint16) bool {
	fa, fb := float16.Frombits(a).Float32(), float16.Frombits(b).Float32()
	return fa < fb
}

// halves applies f to the low and the high halves of a, b and c.
func halves(f func(a, b, c uint16) uint16, a, b, c uint32) uint32 {
	return uint32(f(uint16(a), uint16(b), uint16(c))) | uint32(f(uint16(a>>16), uint16(b>>16), uint16(c>>16)))<<16
}

// randModerateF16 is a random binary16 of magnitude in [2^-6, 2^6), either
// sign: no operation of h2_math overflows or produces a NaN from these.
func randModerateF16(r *rand.Rand) uint16 {
	return uint16(r.IntN(2))<<15 | uint16(15-6+r.IntN(12))<<10 | uint16(r.IntN(1024))
}

// TestSimPtxasH2Math runs ptxas's h2_math kernel: f16x2 add, sub, mul,
// fma (plain, .sat, .relu), min, max.NaN, neg, abs, add.ftz, mul.ftz.sat,
// a two-predicate compare selecting whole words, ex2.approx and a
// set.gtu mask XORed into the result. Bit for bit against Go except the
// ex2 halves, which must lie within 2 binary16 ulps of 2^x rounded.
func TestSimPtxasH2Math(t *testing.T) { corpus.ForSMs(t, simPtxasH2Math) }

func simPtxasH2Math(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(110, 111))
	const n = 256
	a, b := make([]uint32, n), make([]uint32, n)
	for i := range a {
		a[i] = uint32(randModerateF16(r)) | uint32(randModerateF16(r))<<16
		b[i] = uint32(randModerateF16(r)) | uint32(randModerateF16(r))<<16
	}
	m := NewMemory()
	aa, ab, ao := alloc(t, m, "a", a, 0), alloc(t, m, "b", b, 0), alloc(t, m, "out", poisonWords(n), 0)
	launchCorpus(t, "half", "h2_math", sm, Config{Block: [3]int{n}, Memory: m, Params: params(aa, ab, ao), Poison: true})
	out := simWords(m.Bytes("out"))
	for i := range a {
		r2, r3 := a[i], b[i]
		add := func(x, y, _ uint16) uint16 { return hFMA(x, 0x3c00, y) }
		sub := func(x, y, _ uint16) uint16 { return hFMA(x, 0x3c00, y^0x8000) }
		mul := func(x, y, _ uint16) uint16 { return hFMA(x, y, 0x8000) } // + -0 keeps a -0 product
		r4 := halves(add, r2, r3, 0)
		r5 := halves(sub, r2, r3, 0)
		r6 := halves(mul, r4, r5, 0)
		r7 := halves(hFMA, r2, r3, r6)
		r8 := halves(func(x, y, z uint16) uint16 { return hsat(hFMA(x, y, z)) }, r7, r2, r3)
		r9 := halves(func(x, y, z uint16) uint16 {
			h := hFMA(x, y, z)
			if h&0x8000 != 0 {
				return 0
			}
			return h
		}, r8, r3, r2)
		r10 := halves(func(x, y, _ uint16) uint16 {
			if hless(y, x) || x == 0 && y == 0x8000 {
				return y
			}
			return x
		}, r9, r2, 0)
		r11 := halves(func(x, y, _ uint16) uint16 {
			if hless(x, y) || x == 0x8000 && y == 0 {
				return y
			}
			return x
		}, r10, r3, 0)
		r12 := r11 ^ 0x80008000
		r13 := r12 &^ 0x80008000
		r14 := halves(func(x, y, _ uint16) uint16 { return hftz(hFMA(hftz(x), 0x3c00, hftz(y))) }, r13, r4, 0)
		r15 := halves(func(x, y, _ uint16) uint16 { return hsat(hftz(hFMA(hftz(x), hftz(y), 0x8000))) }, r14, r5, 0)
		r16, r17 := r14, r13
		if hless(uint16(r2), uint16(r3)) {
			r16 = r15
		}
		if hless(uint16(r2>>16), uint16(r3>>16)) {
			r17 = r16
		}
		var r19 uint32 // set.gtu: greater or unordered (no NaN here)
		for h := 0; h < 2; h++ {
			if hless(uint16(r3>>(16*h)), uint16(r2>>(16*h))) {
				r19 |= 0xffff << (16 * h)
			}
		}
		got := out[i] ^ r19
		for h := 0; h < 2; h++ {
			x := uint16(r17 >> (16 * h))
			e := new(big.Float).SetFloat64(math.Exp2(float64(float16.Frombits(x).Float32())))
			want := int(f16Round(e, rndNearest))
			g := int(uint16(got >> (16 * h)))
			if g-want > 2 || want-g > 2 {
				t.Fatalf("h2_math(%#x, %#x): half %d = %#x (after the set.gtu mask %#x), want 2^%v = %#x within 2 ulps",
					r2, r3, h, g, r19, float16.Frombits(x).Float32(), want)
			}
		}
	}
}

// bfRN rounds x to bf16, nearest even (x stays in the normal range).
func bfRN(x *big.Float) uint16 {
	f, _ := new(big.Float).SetPrec(8).SetMode(big.ToNearestEven).Set(x).Float32()
	return uint16(math.Float32bits(f) >> 16)
}

func bf(b uint16) *big.Float {
	return new(big.Float).SetPrec(300).SetFloat64(float64(tile.BF16ToF32(b)))
}

// bfFMA is bf16 a*b+c rounded once to nearest even.
func bfFMA(a, b, c uint16) uint16 {
	p := new(big.Float).SetPrec(300).Mul(bf(a), bf(b))
	if s := p.Add(p, bf(c)); s.Sign() != 0 {
		return bfRN(s)
	}
	return 0
}

// TestSimPtxasBF16Math runs ptxas's bf16_math kernel: bf16x2 fma (plain,
// .relu), min, max, neg, abs, a scalar bf16 fma, and binary32-to-bf16
// conversions (packed, .relu, scalar) of the inputs read as binary32.
// Inputs of magnitude 2^-20..2^20 keep every result normal. Bit for bit
// against Go.
func TestSimPtxasBF16Math(t *testing.T) { corpus.ForSMs(t, simPtxasBF16Math) }

func simPtxasBF16Math(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(112, 113))
	const n = 256
	rb := func() uint32 { return uint32(r.IntN(2))<<15 | uint32(127-20+r.IntN(41))<<7 | uint32(r.IntN(128)) }
	a, b := make([]uint32, n), make([]uint32, n)
	for i := range a {
		a[i], b[i] = rb()|rb()<<16, rb()|rb()<<16
	}
	m := NewMemory()
	aa, ab, ao := alloc(t, m, "a", a, 0), alloc(t, m, "b", b, 0), alloc(t, m, "out", poisonWords(n), 0)
	launchCorpus(t, "half", "bf16_math", sm, Config{Block: [3]int{n}, Memory: m, Params: params(aa, ab, ao), Poison: true})
	out := simWords(m.Bytes("out"))
	less := func(x, y uint16) bool { return tile.BF16ToF32(x) < tile.BF16ToF32(y) }
	for i := range a {
		r2, r3 := a[i], b[i]
		r4 := halves(bfFMA, r2, r3, r2)
		r5 := halves(func(x, y, z uint16) uint16 {
			if h := bfFMA(x, y, z); h&0x8000 == 0 {
				return h
			}
			return 0
		}, r4, r3, r2)
		r6 := halves(func(x, y, _ uint16) uint16 {
			if less(y, x) || x == 0 && y == 0x8000 {
				return y
			}
			return x
		}, r5, r2, 0)
		r7 := halves(func(x, y, _ uint16) uint16 {
			if less(x, y) || x == 0x8000 && y == 0 {
				return y
			}
			return x
		}, r6, r3, 0)
		r9 := (r7 ^ 0x80008000) &^ 0x80008000
		h1, h2 := uint16(r9), uint16(r9>>16)
		r10 := uint32(bfFMA(h1, h2, h1)) | uint32(h2)<<16
		f1, f2 := math.Float32frombits(r2), math.Float32frombits(r3)
		relu := func(h uint16) uint16 {
			if h&0x8000 != 0 {
				return 0
			}
			return h
		}
		r11 := uint32(tile.F32ToBF16(f1))<<16 | uint32(tile.F32ToBF16(f2))
		r12 := uint32(relu(tile.F32ToBF16(f2)))<<16 | uint32(relu(tile.F32ToBF16(f1)))
		r13 := uint32(tile.F32ToBF16(f1))
		if want := r10 ^ r11 ^ r12 + r13; out[i] != want {
			t.Fatalf("bf16_math(%#x, %#x) = %#x, want %#x", r2, r3, out[i], want)
		}
	}
}

// TestSimPtxasCvtHalf runs ptxas's cvt_half kernel: binary32 to binary16
// in all four roundings, packed f16x2 conversions (plain, .relu), back to
// binary32, binary16 to s32 (nearest) and u16 (truncating, saturating) and
// back, and cvt.sat.f32; inputs span binary16's subnormals, normals and
// overflow, either sign. Bit for bit against Go.
func TestSimPtxasCvtHalf(t *testing.T) { corpus.ForSMs(t, simPtxasCvtHalf) }

func simPtxasCvtHalf(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(114, 115))
	const n = 256
	x := make([]uint32, 2*n)
	for i := range x {
		f := math.Ldexp(1+r.Float64(), r.IntN(46)-28) // 2^-28 .. 2^18
		if r.IntN(4) == 0 {
			f = float64(r.IntN(1<<12)) / 4 // integers and halves
		}
		if r.IntN(2) == 0 {
			f = -f
		}
		x[i] = math.Float32bits(float32(f))
	}
	m := NewMemory()
	ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(2*n), 0)
	launchCorpus(t, "half", "cvt_half", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ax, ao), Poison: true})
	out := simWords(m.Bytes("out"))
	bigf := func(f float32) *big.Float { return new(big.Float).SetFloat64(float64(f)) }
	hval := func(h uint16) float64 { return float64(float16.Frombits(h).Float32()) }
	relu := func(h uint16) uint16 {
		if h&0x8000 != 0 {
			return 0
		}
		return h
	}
	for i := 0; i < n; i++ {
		f1, f2 := math.Float32frombits(x[2*i]), math.Float32frombits(x[2*i+1])
		h1, h2 := f16Round(bigf(f1), rndNearest), f16Round(bigf(f1), rndZero)
		h3, h4 := f16Round(bigf(f2), rndDown), f16Round(bigf(f2), rndUp)
		r2 := uint32(h1)<<16 | uint32(f16Round(bigf(f2), rndNearest))
		r3 := uint32(relu(f16Round(bigf(f2), rndNearest)))<<16 | uint32(relu(h1))
		f5 := float16.Frombits(h1).Float32() + float16.Frombits(h3).Float32()
		r8 := math.Float32bits(f5)
		if f5 != f5 {
			r8 = 0x7fffffff // the FADD's NaN
		}
		// r4 is an integer: a -0 rounding result is the integer 0, whose
		// binary16 is +0
		r4 := satInt(hval(h2), math.RoundToEven, math.MinInt32, math.MaxInt32) + 0
		h5 := f16Round(new(big.Float).SetFloat64(r4), rndNearest)
		h6 := satInt(hval(h4), math.Trunc, 0, math.MaxUint16)
		h7 := f16Round(new(big.Float).SetFloat64(h6), rndNearest)
		r5 := uint32(h5) | uint32(h7)<<16
		r6 := uint32(h1) | uint32(h2)<<16
		r7 := uint32(h3) | uint32(h4)<<16
		r9 := math.Float32bits(max(0, min(1, f1)))
		want := [2]uint32{r2 ^ r3 ^ r5 ^ r6 ^ r7, r8 ^ r9}
		if got := [2]uint32(out[2*i:]); got != want {
			t.Fatalf("cvt_half(%g, %g) = %#x, want %#x", f1, f2, got, want)
		}
	}
}

func TestF16Round(t *testing.T) {
	for _, c := range []struct {
		x    float64
		mode int
		want uint16
	}{
		{1 + 1.0/2048, rndNearest, 0x3c00}, // tie to even
		{1 + 3.0/2048, rndNearest, 0x3c02}, // tie to even, up
		{1 + 1.0/4096, rndUp, 0x3c01},
		{-(1 + 1.0/4096), rndUp, 0xbc00},
		{-(1 + 1.0/4096), rndDown, 0xbc01},
		{65519, rndNearest, 0x7bff},
		{65520, rndNearest, 0x7c00},
		{1e6, rndZero, 0x7bff},
		{1e6, rndUp, 0x7c00},
		{-1e6, rndUp, 0xfbff},
		{0x1p-25, rndNearest, 0},         // half the smallest subnormal: tie to even (0)
		{0x1.8p-25, rndNearest, 1},       // above it
		{0x1p-30, rndUp, 1},              // any positive rounds up to the smallest subnormal
		{-0x1p-30, rndZero, 0x8000},      // keeps its sign
		{0x1.ff8p-15, rndNearest, 0x3ff}, // the largest subnormal
	} {
		if got := f16Round(big.NewFloat(c.x), c.mode); got != c.want {
			t.Errorf("f16Round(%g, %d) = %#x, want %#x", c.x, c.mode, got, c.want)
		}
	}
}

// TestSimPtxasH2Const runs ptxas's h2_const kernel: HFMA2 (f16 and bf16,
// plain, .relu, .sat, .ftz), HADD2 and HMUL2 with a kernel parameter as
// the constant-bank source in the B or the C place, negated, absolute and
// with one half broadcast (.H0_H0, .H1_H1). Bit for bit against Go.
func TestSimPtxasH2Const(t *testing.T) { corpus.ForSMs(t, simPtxasH2Const) }

func simPtxasH2Const(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(116, 117))
	const n, outs = 129, 14
	a, b := make([]uint32, n), make([]uint32, n)
	for i := range a {
		a[i] = uint32(randModerateF16(r)) | uint32(randModerateF16(r))<<16
		b[i] = uint32(randModerateF16(r)) | uint32(randModerateF16(r))<<16
	}
	rb := func() uint32 { return uint32(r.IntN(2))<<15 | uint32(127-20+r.IntN(41))<<7 | uint32(r.IntN(128)) }
	for range 3 {
		k := uint32(randModerateF16(r)) | uint32(randModerateF16(r))<<16
		kb := rb() | rb()<<16
		m := NewMemory()
		aa, ab, ao := alloc(t, m, "a", a, 0), alloc(t, m, "b", b, 0), alloc(t, m, "out", poisonWords(outs*n), 0)
		launchCorpus(t, "half", "h2_const", sm, Config{Block: [3]int{n}, Memory: m, Params: params(aa, ab, ao, k, kb), Poison: true})
		out := simWords(m.Bytes("out"))
		relu := func(h uint16) uint16 {
			if h&0x8000 != 0 {
				return 0
			}
			return h
		}
		add := func(x, y, _ uint16) uint16 { return hFMA(x, 0x3c00, y) }
		kl, kh := k&0xffff, k>>16
		for i := range a {
			x, y := a[i], b[i]
			want := [outs]uint32{
				halves(hFMA, x, y, k),
				halves(hFMA, x, k, y),
				halves(bfFMA, x, kb, y),
				halves(bfFMA, x, y, kb),
				halves(add, x, k, 0),
				halves(func(p, q, _ uint16) uint16 { return hFMA(p, q, 0x8000) }, y, k, 0),
				halves(func(p, q, s uint16) uint16 { return relu(hFMA(p, q, s)) }, x, k, y),
				halves(func(p, q, s uint16) uint16 { return hsat(hFMA(p, q, s)) }, x, k, y),
				halves(func(p, q, s uint16) uint16 { return relu(bfFMA(p, q, s)) }, x, kb, y),
				halves(func(p, q, s uint16) uint16 { return hftz(hFMA(hftz(p), hftz(q), hftz(s))) }, x, y, k),
				halves(hFMA, x, k^0x80008000, y),
				halves(hFMA, x, y, k&^0x80008000),
				halves(hFMA, x, kh|kh<<16, y),
				halves(add, y, kl|kl<<16, 0),
			}
			for j, w := range want {
				if got := out[outs*i+j]; got != w {
					t.Fatalf("h2_const(%#x, %#x, k %#x, kb %#x): result %d = %#x, want %#x", x, y, k, kb, j, got, w)
				}
			}
		}
	}
}
