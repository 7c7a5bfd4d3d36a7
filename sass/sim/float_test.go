package sim

import (
	"math"
	"math/big"
	"math/rand"
	"testing"
)

var bigModes = [...]big.RoundingMode{rnEven: big.ToNearestEven, rnDown: big.ToNegativeInf, rnUp: big.ToPositiveInf, rnZero: big.ToZero}

// refRound rounds the exact value z to binary32 in direction m with
// math/big: normal results by big.Float's own rounding at 24 bits,
// subnormal ones as an integer multiple of 2^-149.
func refRound(z *big.Float, m rmode) uint32 {
	if z.Sign() == 0 {
		if z.Signbit() {
			return 0x80000000
		}
		return 0
	}
	neg := z.Signbit()
	a := new(big.Float).SetPrec(0).Abs(z)
	e := a.MantExp(nil) - 1 // 2^e <= a < 2^(e+1)
	mm := m
	if neg {
		switch m {
		case rnDown:
			mm = rnUp
		case rnUp:
			mm = rnDown
		}
	}
	var bitsOut uint32
	if e >= -126 {
		r := new(big.Float).SetPrec(24).SetMode(bigModes[mm]).Set(a)
		f, _ := r.Float64()
		if f > math.MaxFloat32 {
			if mm == rnZero || mm == rnDown {
				bitsOut = 0x7f7fffff
			} else {
				bitsOut = 0x7f800000
			}
		} else {
			bitsOut = math.Float32bits(float32(f))
		}
	} else {
		t := new(big.Float).SetPrec(2000).SetMantExp(a, 149)
		i, _ := t.Int(nil) // truncated
		fi := new(big.Float).SetPrec(0).SetInt(i)
		frac := new(big.Float).SetPrec(2000).Sub(t, fi)
		n := i.Uint64()
		half := big.NewFloat(0.5)
		switch mm {
		case rnEven:
			c := frac.Cmp(half)
			if c > 0 || (c == 0 && n&1 == 1) {
				n++
			}
		case rnUp:
			if frac.Sign() != 0 {
				n++
			}
		}
		bitsOut = uint32(n)
	}
	if neg {
		bitsOut |= 0x80000000
	}
	return bitsOut
}

func bigOf(b uint32) *big.Float { return new(big.Float).SetPrec(0).SetFloat64(f32(b)) }

func special(b uint32) bool { return b&0x7f800000 == 0x7f800000 }

// randF32 draws binary32 bit patterns: uniform bits, subnormals, values
// near 1 and exact cancellations.
func randF32(r *rand.Rand) uint32 {
	switch r.Intn(6) {
	case 0:
		return r.Uint32() & 0x807fffff // subnormal
	case 1:
		return 0x3f800000 + r.Uint32()%64 - 32 | r.Uint32()&0x80000000
	case 2:
		return (r.Uint32() & 0x80ffffff) | 0x00800000*uint32(r.Intn(4)) // tiny
	case 3:
		return r.Uint32()&0x81ffffff | 0x7e000000 // huge
	}
	return r.Uint32()
}

func TestSimFloatRoundingVsBig(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	n := 40000
	if testing.Short() {
		n = 5000
	}
	for i := 0; i < n; i++ {
		a, b, c := randF32(r), randF32(r), randF32(r)
		if r.Intn(8) == 0 {
			c = math.Float32bits(-float32(f32(a) * f32(b))) // cancellation
		}
		if special(a) || special(b) || special(c) {
			continue
		}
		for m := rmode(0); m < 4; m++ {
			sum := new(big.Float).SetPrec(2000).Add(bigOf(a), bigOf(b))
			if sum.Sign() == 0 && m == rnDown && !(a == 0 && b == 0) {
				sum.Neg(sum)
				if !sum.Signbit() {
					sum = new(big.Float).SetFloat64(math.Copysign(0, -1))
				}
			}
			if got, want := fadd32(a, b, m, false), refRound(sum, m); got != want && !(sum.Sign() == 0 && got&0x7fffffff == 0) {
				t.Fatalf("FADD mode %d %#x+%#x = %#x, want %#x", m, a, b, got, want)
			}
			prod := new(big.Float).SetPrec(2000).Mul(bigOf(a), bigOf(b))
			if got, want := fmul32(a, b, m, false), refRound(prod, m); got != want {
				t.Fatalf("FMUL mode %d %#x*%#x = %#x, want %#x", m, a, b, got, want)
			}
			fma := new(big.Float).SetPrec(2000).Add(prod, bigOf(c))
			got, want := ffma32(a, b, c, m, false), refRound(fma, m)
			if fma.Sign() == 0 {
				// exact zero: +0, or -0 when rounding down (both operands
				// of one sign give that sign)
				if got&0x7fffffff != 0 {
					t.Fatalf("FFMA mode %d zero: %#x", m, got)
				}
				continue
			}
			if got != want {
				t.Fatalf("FFMA mode %d %#x*%#x+%#x = %#x, want %#x", m, a, b, c, got, want)
			}
		}
	}
}

func TestSimFloatSpecials(t *testing.T) {
	inf, ninf := uint32(0x7f800000), uint32(0xff800000)
	one := math.Float32bits(1)
	cases := []struct {
		name string
		got  uint32
		want uint32
	}{
		{"inf-inf", fadd32(inf, ninf, rnEven, false), nanF32},
		{"nan+1", fadd32(0x7fc12345, one, rnEven, false), nanF32},
		{"0*inf", fmul32(0, inf, rnEven, false), nanF32},
		{"1-1 RN", fadd32(one, one|0x80000000, rnEven, false), 0},
		{"1-1 RM", fadd32(one, one|0x80000000, rnDown, false), 0x80000000},
		{"max+max RZ", fadd32(0x7f7fffff, 0x7f7fffff, rnZero, false), 0x7f7fffff},
		{"max+max RN", fadd32(0x7f7fffff, 0x7f7fffff, rnEven, false), inf},
		{"ftz sub", fadd32(1, 1, rnEven, true), 0},
		{"ftz keeps sign", fmul32(0x80000001, one, rnEven, true), 0x80000000},
		{"sat", sat32(math.Float32bits(1.5)), one},
		{"sat neg", sat32(math.Float32bits(-0.5)), 0},
		{"sat nan", sat32(nanF32), 0},
		{"min -0 +0", fmnmx32(0, 0x80000000, true, false), 0x80000000},
		{"max nan", fmnmx32(nanF32, one, false, false), one},
		{"f16 pack", f2fp(math.Float32bits(1), math.Float32bits(-2), false, false, rnEven), 0x3c00c000},
		{"bf16 pack even", f2fp(0x3f808000, 0x3f818000, true, false, rnEven), 0x3f803f82},
		{"f16 overflow", f2fp(math.Float32bits(65520), 0, false, false, rnEven), 0x7c000000},
		{"f16 subnormal", f2fp(0, math.Float32bits(float32(math.Ldexp(1, -24))), false, false, rnEven), 1},
		{"relu", f2fp(math.Float32bits(-3), math.Float32bits(3), false, true, rnEven), 0x4200},
		{"e4m3 sat", f2fp8(math.Float32bits(1000), math.Float32bits(-1000), 0xabcd0000, false, true), 0xabcd7efe},
		{"e5m2", f2fp8(math.Float32bits(1), math.Float32bits(-2), 0x1234, true, false), 0x12343cc0},
		{"i2f RZ", i2f(0x7fffffff, true, false, rnZero), 0x4effffff},
		{"i2f RN", i2f(0x7fffffff, true, false, rnEven), 0x4f000000},
		{"i2f u64", i2f(1<<63|1, false, true, rnUp), 0x5f000001},
		{"rcp", mufu(mufuRCP, math.Float32bits(4)), math.Float32bits(0.25)},
		{"ex2", mufu(mufuEX2, math.Float32bits(3)), math.Float32bits(8)},
		{"sin quarter", mufu(mufuSIN, math.Float32bits(0.25)), one},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %#x, want %#x", c.name, c.got, c.want)
		}
	}
	if v := f2i(2.5, 0, true, 32); v != 2 {
		t.Errorf("F2I RN 2.5 = %d", v)
	}
	if v := f2i(-1e20, 3, true, 32); uint32(v) != 0x80000000 {
		t.Errorf("F2I sat = %#x", v)
	}
	if v := f2i(math.NaN(), 3, true, 32); v != 0 {
		t.Errorf("F2I NaN = %#x", v)
	}
}

// TestSimFloatProgram runs the float forms through the decoder: rounding
// modifiers, .FTZ, .SAT, negated and absolute sources, against the
// reference functions on random inputs.
func TestSimFloatProgram(t *testing.T) {
	ops := []string{
		"FADD R10, R2, R3", "FADD.RM R10, R2, -R3", "FADD.FTZ.RP R10, |R2|, R3", "FADD.RZ R10, -|R2|, R3",
		"FADD.FTZ.SAT R10, R2, R3", "FMUL R10, R2, R3", "FMUL.RZ R10, R2, -R3", "FMUL.FTZ.RM R10, R2, R3",
		"FMUL.SAT R10, R2, R3", "FMUL.RP R10, R2, R3", "FFMA R10, R2, R3, R4", "FFMA.RM R10, -R2, R3, R4",
		"FFMA.RP.SAT R10, R2, R3, -R4", "FFMA.RZ R10, R2, R3, |R4|", "FFMA.FTZ R10, R2, R3, R4",
		"FMNMX R10, R2, R3, PT", "FMNMX.FTZ R10, R2, -R3, !PT",
	}
	ref := []func(a, b, c uint32) uint32{
		func(a, b, c uint32) uint32 { return fadd32(a, b, rnEven, false) },
		func(a, b, c uint32) uint32 { return fadd32(a, b^0x80000000, rnDown, false) },
		func(a, b, c uint32) uint32 { return fadd32(a&0x7fffffff, b, rnUp, true) },
		func(a, b, c uint32) uint32 { return fadd32(a|0x80000000, b, rnZero, false) },
		func(a, b, c uint32) uint32 { return sat32(fadd32(a, b, rnEven, true)) },
		func(a, b, c uint32) uint32 { return fmul32(a, b, rnEven, false) },
		func(a, b, c uint32) uint32 { return fmul32(a, b^0x80000000, rnZero, false) },
		func(a, b, c uint32) uint32 { return fmul32(a, b, rnDown, true) },
		func(a, b, c uint32) uint32 { return sat32(fmul32(a, b, rnEven, false)) },
		func(a, b, c uint32) uint32 { return fmul32(a, b, rnUp, false) },
		func(a, b, c uint32) uint32 { return ffma32(a, b, c, rnEven, false) },
		func(a, b, c uint32) uint32 { return ffma32(a^0x80000000, b, c, rnDown, false) },
		func(a, b, c uint32) uint32 { return sat32(ffma32(a, b, c^0x80000000, rnUp, false)) },
		func(a, b, c uint32) uint32 { return ffma32(a, b, c&0x7fffffff, rnZero, false) },
		func(a, b, c uint32) uint32 { return ffma32(a, b, c, rnEven, true) },
		func(a, b, c uint32) uint32 { return fmnmx32(a, b, true, false) },
		func(a, b, c uint32) uint32 { return fmnmx32(a, b^0x80000000, false, true) },
	}
	r := rand.New(rand.NewSource(4))
	n := 256
	in := make([]uint32, 3*n)
	for i := range in {
		in[i] = randF32(r)
	}
	for k, op := range ops {
		src := `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0xc ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R6, R0, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E R2, [R6.64] ;
[B------:R-:W1:-:S04] LDG.E R3, [R6.64+0x4] ;
[B------:R-:W1:-:S04] LDG.E R4, [R6.64+0x8] ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B-1----:R-:W-:-:S04] ` + op + ` ;
[B------:R-:W-:-:S04] IMAD.WIDE R6, R0, R5, c[0x0][0x168] ;
[B------:R-:W-:-:S04] STG.E [R6.64], R10 ;
[B------:R-:W-:-:S05] EXIT ;
`
		m := NewMemory()
		ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", nil, n)
		if _, err := Launch(asm(t, src), Config{StrictScoreboards: true, Block: [3]int{n}, Memory: m, Params: params(ai, ao), Poison: true}); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		out := simWords(m.Bytes("out"))
		for i := 0; i < n; i++ {
			if want := ref[k](in[3*i], in[3*i+1], in[3*i+2]); out[i] != want {
				t.Fatalf("%s (%#x, %#x, %#x) = %#x, want %#x", op, in[3*i], in[3*i+1], in[3*i+2], out[i], want)
			}
		}
	}
}
