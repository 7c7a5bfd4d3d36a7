package sim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randF64 returns binary64 bits spread over every exponent (subnormals and
// zeros included), finite, either sign.
func randF64(r *rand.Rand) uint64 {
	switch r.IntN(8) {
	case 0:
		return r.Uint64() &^ (0x7ff << 52) // zero exponent: subnormal or zero
	case 1:
		return uint64(r.IntN(2))<<63 | uint64(1023+r.IntN(8))<<52 | r.Uint64()>>12
	}
	b := r.Uint64()
	if b>>52&0x7ff == 0x7ff {
		b &^= 1 << 62
	}
	return b
}

// TestSimDouble runs DADD, DMUL, DFMA and DSETP on register pairs over
// random binary64 values (subnormals included) and compares bit for bit
// with Go's IEEE binary64 arithmetic; results that are NaN are compared as
// NaN (the payload the hardware returns is not verified).
func TestSimDouble(t *testing.T) {
	f := math.Float64frombits
	ops := []struct {
		text string
		ref  func(a, b, c float64) float64
	}{
		{"DADD R10, R2, R4", func(a, b, c float64) float64 { return a + b }},
		{"DADD R10, -R2, |R6|", func(a, b, c float64) float64 { return -a + math.Abs(c) }},
		{"DMUL R10, R2, -R4", func(a, b, c float64) float64 { return a * -b }},
		{"DMUL R10, |R2|, 2.5", func(a, b, c float64) float64 { return math.Abs(a) * 2.5 }},
		{"DFMA R10, R2, R4, R6", func(a, b, c float64) float64 { return math.FMA(a, b, c) }},
		{"DFMA R10, -R2, |R4|, -R6", func(a, b, c float64) float64 { return math.FMA(-a, math.Abs(b), -c) }},
		{"DFMA R10, R2, R6, 1", func(a, b, c float64) float64 { return math.FMA(a, c, 1) }},
		{"DFMA R10, R2, c[0x0][0x170], R6", func(a, b, c float64) float64 { return math.FMA(a, 0.75, c) }},
		{"DSETP.LT.AND P0, PT, R2, R4, PT", func(a, b, c float64) float64 { return b2f(a < b) }},
		{"DSETP.GEU.AND P0, PT, |R2|, R6, PT", func(a, b, c float64) float64 { return b2f(!(math.Abs(a) < c)) }},
		{"DSETP.NE.AND P0, PT, R2, 0.5, PT", func(a, b, c float64) float64 { return b2f(a != 0.5) }},
	}
	r := rand.New(rand.NewPCG(6, 7))
	n := 256
	in := make([]uint32, 6*n)
	for i := 0; i < 3*n; i++ {
		b := randF64(r)
		if i%3 == 2 && r.IntN(4) == 0 {
			b = math.Float64bits(-f(randF64(r))) // C often of the other sign
		}
		in[2*i], in[2*i+1] = uint32(b), uint32(b>>32)
	}
	for _, op := range ops {
		body := `[B-1----:R-:W-:-:S04] ` + op.text + ` ;`
		if op.text[:5] == "DSETP" {
			body += `
[B------:R-:W-:-:S13] NOP ;
[B------:R-:W-:-:S04] SEL R10, RZ, 0x1, !P0 ;
[B------:R-:W-:-:S04] MOV R11, RZ ;`
		}
		src := `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x18 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R8, R0, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E.64 R2, [R8.64] ;
[B------:R-:W1:-:S04] LDG.E.64 R4, [R8.64+0x8] ;
[B------:R-:W1:-:S04] LDG.E.64 R6, [R8.64+0x10] ;
` + body + `
[B------:R-:W-:-:S02] MOV R5, 0x8 ;
[B------:R-:W-:-:S04] IMAD.WIDE R8, R0, R5, c[0x0][0x168] ;
[B------:R-:W-:-:S04] STG.E.64 [R8.64], R10 ;
[B------:R-:W-:-:S05] EXIT ;
`
		m := NewMemory()
		ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", nil, 2*n)
		if _, err := Launch(asm(t, src), Config{StrictScoreboards: true, Block: [3]int{n}, Memory: m,
			Params: params(ai, ao, uint64(0x3fe8000000000000)), Poison: true}); err != nil {
			t.Fatalf("%s: %v", op.text, err)
		}
		out := simWords(m.Bytes("out"))
		for i := 0; i < n; i++ {
			a, b, c := f(uint64(in[6*i+1])<<32|uint64(in[6*i])), f(uint64(in[6*i+3])<<32|uint64(in[6*i+2])),
				f(uint64(in[6*i+5])<<32|uint64(in[6*i+4]))
			got := uint64(out[2*i+1])<<32 | uint64(out[2*i])
			want := math.Float64bits(op.ref(a, b, c))
			if got != want && !(f(got) != f(got) && f(want) != f(want)) {
				t.Fatalf("%s (%g, %g, %g) = %#x, want %#x", op.text, a, b, c, got, want)
			}
		}
	}
}

// b2f is SEL R10, RZ, 0x1, !P0 (1 when P0 is set) with R11 = 0, as a double.
func b2f(p bool) float64 {
	if p {
		return math.Float64frombits(1)
	}
	return math.Float64frombits(0)
}

// TestSimRedux runs REDUX over a partly guarded-off warp for every
// operation and compares with a Go reduction over the executing lanes.
func TestSimRedux(t *testing.T) {
	ops := []struct {
		text string
		ref  func(a, b uint32) uint32
	}{
		{"REDUX UR5, R2", func(a, b uint32) uint32 { return a & b }},
		{"REDUX.OR UR5, R2", func(a, b uint32) uint32 { return a | b }},
		{"REDUX.XOR UR5, R2", func(a, b uint32) uint32 { return a ^ b }},
		{"REDUX.SUM UR5, R2", func(a, b uint32) uint32 { return a + b }},
		{"REDUX.MIN UR5, R2", func(a, b uint32) uint32 { return min(a, b) }},
		{"REDUX.MIN.S32 UR5, R2", func(a, b uint32) uint32 { return uint32(min(int32(a), int32(b))) }},
		{"REDUX.MAX UR5, R2", func(a, b uint32) uint32 { return max(a, b) }},
		{"REDUX.MAX.S32 UR5, R2", func(a, b uint32) uint32 { return uint32(max(int32(a), int32(b))) }},
	}
	r := rand.New(rand.NewPCG(8, 9))
	for _, op := range ops {
		in := make([]uint32, 32)
		for i := range in {
			in[i] = r.Uint32() >> r.IntN(32)
		}
		mask := r.Uint32() | 1
		src := `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R8, R0, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR6, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E R2, [R8.64] ;
[B------:R-:W-:-:S02] MOV R3, c[0x0][0x170] ;
[B------:R-:W-:-:S04] SHF.R.U32.HI R3, RZ, R0, R3 ;
[B------:R-:W-:-:S13] LOP3.LUT P0, RZ, R3, 0x1, RZ, 0xc0, !PT ;
[B-1----:R-:W2:-:S04] @P0 REDUX` + op.text[5:] + ` ;
[B--2---:R-:W-:-:S04] MOV R4, UR5 ;
[B------:R-:W-:-:S04] IMAD.WIDE R8, R0, R5, c[0x0][0x168] ;
[B------:R-:W-:-:S04] STG.E [R8.64], R4 ;
[B------:R-:W-:-:S05] EXIT ;
`
		m := NewMemory()
		ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", nil, 32)
		if _, err := Launch(asm(t, src), Config{Block: [3]int{32}, Memory: m, Params: params(ai, ao, mask), Poison: true}); err != nil {
			t.Fatalf("%s: %v", op.text, err)
		}
		var want uint32
		first := true
		for l := 0; l < 32; l++ {
			if mask>>l&1 == 0 {
				continue
			}
			if first {
				want, first = in[l], false
			} else {
				want = op.ref(want, in[l])
			}
		}
		for l, got := range simWords(m.Bytes("out")) {
			if got != want {
				t.Fatalf("%s mask %#x: lane %d got %#x, want %#x", op.text, mask, l, got, want)
			}
		}
	}
}
