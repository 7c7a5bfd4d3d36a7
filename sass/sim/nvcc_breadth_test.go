package sim

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// TestSimNVCCIntDiv: nvcc's integer division and modulo by constants, by
// kernel parameters and by registers, 32- and 64-bit, signed and unsigned
// (mathlib.cu intdiv: IMAD.HI/IMAD.WIDE.U32 with carries and constant
// operands, IMAD.U32.X, I2F.U64.RP from a uniform register, the 64-bit
// division subroutine), __mulhi, __umulhi, __mul24, __umul64hi and
// __mul64hi, bit for bit against Go with C's truncating division.
func TestSimNVCCIntDiv(t *testing.T) { corpus.ForSMs(t, simNVCCIntDiv) }

func simNVCCIntDiv(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(120, 121))
	for _, n := range []int{1, 7, 129, 1000} {
		x, y := make([]uint32, n), make([]uint32, n)
		u := make([]uint32, 2*n)
		for i := range x {
			x[i] = r.Uint32() >> r.IntN(32)
			y[i] = r.Uint32()>>r.IntN(31) | 1
			if r.IntN(2) == 0 {
				x[i] = -x[i]
			}
			if r.IntN(3) == 0 {
				y[i] = -y[i]
			}
			v := r.Uint64() >> r.IntN(64)
			u[2*i], u[2*i+1] = uint32(v), uint32(v>>32)
		}
		d := int32(r.IntN(1000) + 2)
		if r.IntN(2) == 0 {
			d = -d
		}
		ud := uint32(r.IntN(1<<20) + 1)
		d64 := int64(r.Uint64()>>r.IntN(62)) | 2
		if r.IntN(2) == 0 {
			d64 = -d64
		}
		m := NewMemory()
		px, py, pu := alloc(t, m, "x", x, 0), alloc(t, m, "y", y, 0), alloc(t, m, "u", u, 0)
		po, po64 := alloc(t, m, "o", poisonWords(8*n), 0), alloc(t, m, "o64", poisonWords(8*n), 0)
		launchNVCC(t, "mathlib", "intdiv", sm, Config{Grid: [3]int{(n + 63) / 64}, Block: [3]int{64}, Memory: m,
			Params: params(px, py, pu, po, po64, uint32(d), ud, uint64(d64), uint32(n)), Poison: true})
		o, o64 := simWords(m.Bytes("o")), simWords(m.Bytes("o64"))
		for i := 0; i < n; i++ {
			a, b := int32(x[i]), int32(y[i])
			v := uint64(u[2*i]) | uint64(u[2*i+1])<<32
			quo := func(p, q int32) int32 {
				if p == math.MinInt32 && q == -1 {
					return p
				}
				return p / q
			}
			mulhi := func(p, q int64) uint64 { // the high 64 bits of the signed 128-bit product
				hi, _ := bits.Mul64(uint64(p), uint64(q))
				if p < 0 {
					hi -= uint64(q)
				}
				if q < 0 {
					hi -= uint64(p)
				}
				return hi
			}
			uhi, _ := bits.Mul64(v, v)
			want := []uint32{
				uint32(a/7 + a%7 + a/-3),
				uint32(a)/10 + uint32(a)%1000,
				uint32(a/d + a%d),
				uint32(a)/ud + uint32(b)%ud,
				uint32(quo(a, b)),
				uint32(int32(uint64(int64(a)*int64(b))>>32)) + uint32(uint64(uint32(a))*uint64(uint32(b))>>32) + uint32(int32(a<<8>>8)*int32(b<<8>>8)),
			}
			for k, w := range want {
				if o[8*i+k] != w {
					t.Fatalf("n=%d sm_%d: o[%d][%d] = %#x, want %#x (a %d b %d d %d ud %d)", n, sm, i, k, o[8*i+k], w, a, b, d, ud)
				}
			}
			want64 := []uint64{
				v/1000000007 + v%10,
				v/uint64(d64) + uint64(int64(v)%d64),
				uint64(int64(v)/-7) + uhi + mulhi(int64(v), d64),
				v/uint64(ud) + v>>(uint32(a)&63) + v<<(uint32(b)&63),
			}
			for k, w := range want64 {
				if got := uint64(o64[8*i+2*k]) | uint64(o64[8*i+2*k+1])<<32; got != w {
					t.Fatalf("n=%d sm_%d: o64[%d][%d] = %#x, want %#x (v %#x d64 %d ud %d)", n, sm, i, k, got, w, v, d64, ud)
				}
			}
		}
	}
}

// TestSimR2P: R2P PR, Ra, mask (nvcc's f64 sin/cos quadrant) sets the
// predicates the mask selects from bits 0..6 of Ra and keeps the others:
// P0..P6 start as bits 8..14 of a random word, R2P copies bits 0..6 under
// each mask, P2R reads all seven back.
func TestSimR2P(t *testing.T) {
	masks := []uint32{0x3, 0x7f, 0x40, 0x2a, 0x1}
	var b strings.Builder
	b.WriteString(`
[B------:R-:W0:-:S01] S2R R1, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R6, R1, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E R2, [R6.64] ;
[B------:R-:W-:-:S04] IMAD.WIDE R6, R1, R5, c[0x0][0x168] ;
`)
	for k, mk := range masks {
		for p := 0; p < 7; p++ {
			wait := "------"
			if k == 0 && p == 0 {
				wait = "-1----"
			}
			fmt.Fprintf(&b, "[B%s:R-:W-:-:S04] LOP3.LUT R3, R2, %#x, RZ, 0xc0, !PT ;\n", wait, 1<<(p+8))
			fmt.Fprintf(&b, "[B------:R-:W-:-:S04] ISETP.NE.U32.AND P%d, PT, R3, RZ, PT ;\n", p)
		}
		fmt.Fprintf(&b, "[B------:R-:W-:-:S04] R2P PR, R2, %#x ;\n", mk)
		b.WriteString("[B------:R-:W-:-:S04] P2R R8, PR, RZ, 0x7f ;\n")
		fmt.Fprintf(&b, "[B------:R-:W-:-:S04] STG.E [R6.64+%#x], R8 ;\n", 0x100*k)
	}
	b.WriteString("[B------:R-:W-:-:S05] EXIT ;\n")
	p := asm(t, b.String())
	r := rand.New(rand.NewPCG(122, 123))
	x := make([]uint32, 64)
	for i := range x {
		x[i] = r.Uint32()
	}
	m := NewMemory()
	ai, ao := alloc(t, m, "in", x, 0), alloc(t, m, "out", nil, 64*len(masks))
	if _, err := Launch(p, Config{StrictScoreboards: true, Block: [3]int{64}, Memory: m, Params: params(ai, ao), Poison: true}); err != nil {
		t.Fatal(err)
	}
	out := simWords(m.Bytes("out"))
	for k, mk := range masks {
		for l := 0; l < 64; l++ {
			want := (x[l]>>8&0x7f)&^mk | x[l]&mk
			if got := out[64*k+l]; got != want {
				t.Fatalf("R2P PR, R2, %#x on %#08x: P0..P6 %#x, want %#x", mk, x[l], got, want)
			}
		}
	}
}

// TestSimFSET: FSET.BF (nvcc's bfloat16 comparisons) writes 1.0 where
// the comparison holds and 0 elsewhere, with negated and absolute
// sources, on random floats with NaN, infinities and zeros among them.
func TestSimFSET(t *testing.T) {
	cases := []struct {
		text string
		ref  func(a, b float32) bool
	}{
		{"FSET.BF.GT.AND R8, R2, R3, PT", func(a, b float32) bool { return a > b }},
		{"FSET.BF.LTU.AND R8, -R2, |R3|, PT", func(a, b float32) bool { return !(-a >= float32(math.Abs(float64(b)))) }},
		{"FSET.BF.EQ.XOR R8, R2, R3, PT", func(a, b float32) bool { return a != b }},
	}
	var b strings.Builder
	b.WriteString(`
[B------:R-:W0:-:S01] S2R R1, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x8 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R6, R1, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E.64 R2, [R6.64] ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B------:R-:W-:-:S04] IMAD.WIDE R6, R1, R5, c[0x0][0x168] ;
`)
	for k, c := range cases {
		wait := "------"
		if k == 0 {
			wait = "-1----"
		}
		fmt.Fprintf(&b, "[B%s:R-:W-:-:S04] %s ;\n", wait, c.text)
		fmt.Fprintf(&b, "[B------:R-:W-:-:S04] STG.E [R6.64+%#x], R8 ;\n", 0x100*k)
	}
	b.WriteString("[B------:R-:W-:-:S05] EXIT ;\n")
	p := asm(t, b.String())
	r := rand.New(rand.NewPCG(124, 125))
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(negZero()), 1}
	in := make([]uint32, 128)
	for i := range in {
		v := float32(r.NormFloat64())
		if r.IntN(3) == 0 {
			v = special[r.IntN(len(special))]
		}
		in[i] = math.Float32bits(v)
	}
	m := NewMemory()
	ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", nil, 64*len(cases))
	if _, err := Launch(p, Config{StrictScoreboards: true, Block: [3]int{64}, Memory: m, Params: params(ai, ao), Poison: true}); err != nil {
		t.Fatal(err)
	}
	out := simWords(m.Bytes("out"))
	for k, c := range cases {
		for l := 0; l < 64; l++ {
			x, y := math.Float32frombits(in[2*l]), math.Float32frombits(in[2*l+1])
			want := uint32(0)
			if c.ref(x, y) {
				want = 0x3f800000
			}
			if got := out[64*k+l]; got != want {
				t.Fatalf("%s on %g, %g: %#x, want %#x", c.text, x, y, got, want)
			}
		}
	}
}
