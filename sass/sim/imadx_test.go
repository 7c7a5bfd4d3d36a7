package sim

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestSimIMADWideXCarry runs ptxas's mul.hi.u64 sequence (tail_int.ptx
// wide, sm_86 offsets 0x60..0x160): the cross products summed with
// IMAD.WIDE.U32 carrying out into P0, and the high product with
// IMAD.WIDE.U32.X taking that carry in. The simulator had ignored the
// .X carry in of IMAD.WIDE and IMAD.HI, so the high word came out one
// short whenever the middle sum carried. Against math/bits.Mul64, on
// random operands and operands near 2^64 (where the carries happen).
func TestSimIMADWideXCarry(t *testing.T) {
	r := rand.New(rand.NewPCG(144, 145))
	src := `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x10 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE.U32 R12, R0, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E.128 R4, [R12.64] ;
[B-1----:R-:W-:-:S04] IMAD.WIDE.U32 R2, R5, R6, RZ ;
[B------:R-:W-:-:S04] IMAD.WIDE.U32 R8, P0, R4, R7, R2 ;
[B------:R-:W-:-:S04] IMAD.X R11, RZ, RZ, RZ, P0 ;
[B------:R-:W-:-:S04] IMAD.WIDE.U32 R2, R4, R6, RZ ;
[B------:R-:W-:-:S04] IADD3 RZ, P0, R3, R8, RZ ;
[B------:R-:W-:-:S04] IMAD.MOV.U32 R10, RZ, RZ, R9 ;
[B------:R-:W-:-:S04] IMAD.WIDE.U32.X R2, R5, R7, R10, P0 ;
[B------:R-:W-:-:S02] MOV R5, 0x8 ;
[B------:R-:W-:-:S04] IMAD.WIDE.U32 R12, R0, R5, c[0x0][0x168] ;
[B------:R-:W-:-:S04] STG.E.64 [R12.64], R2 ;
[B------:R-:W-:-:S05] EXIT ;
`
	p := asm(t, src)
	const n = 128
	in := make([]uint64, 2*n)
	for i := range in {
		in[i] = r.Uint64() >> r.IntN(64)
		if i < n {
			in[i] = ^(r.Uint64() >> r.IntN(64)) // near 2^64: the middle sum carries
		}
	}
	m := NewMemory()
	ai, ao := alloc(t, m, "in", words64(in), 0), alloc(t, m, "out", poisonWords(2*n), 0)
	if _, err := Launch(p, Config{StrictScoreboards: true, Block: [3]int{n}, Memory: m, Params: params(ai, ao), Poison: true}); err != nil {
		t.Fatal(err)
	}
	out := simWords(m.Bytes("out"))
	carries := 0
	for l := 0; l < n; l++ {
		a, b := in[2*l], in[2*l+1]
		hi, _ := bits.Mul64(a, b)
		// the cross products' sum carries out of 64 bits (P0 of the second IMAD.WIDE)
		_, c := bits.Add64(a>>32*(b&0xffffffff), (a&0xffffffff)*(b>>32), 0)
		carries += int(c)
		if got := uint64(out[2*l+1])<<32 | uint64(out[2*l]); got != hi {
			t.Fatalf("lane %d: mul.hi.u64(%#x, %#x) = %#x, want %#x", l, a, b, got, hi)
		}
	}
	if carries == 0 || carries == n {
		t.Fatalf("%d of %d lanes carry in the middle sum: the inputs test one case only", carries, n)
	}
}

// TestSimLEAHISX32 runs LEA.HI.X.SX32 (tail_int.ptx simd: R27, R27, ~R26,
// 0x1, P2), whose high word is a's sign, with a complemented b (which the
// simulator's LEA.HI had read uncomplemented) and a carry in from IADD3,
// and plain LEA.HI beside it; against Go on random words and shifts 0, 1,
// 5 and 31.
func TestSimLEAHISX32(t *testing.T) {
	r := rand.New(rand.NewPCG(148, 149))
	for _, sh := range []int{0, 1, 5, 31} {
		src := fmt.Sprintf(`
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x10 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE.U32 R12, R0, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E.128 R4, [R12.64] ;
[B-1----:R-:W-:-:S04] IADD3 RZ, P2, R6, R7, RZ ;
[B------:R-:W-:-:S04] LEA.HI.X.SX32 R8, R4, ~R5, %#x, P2 ;
[B------:R-:W-:-:S04] LEA.HI R9, R4, R5, R6, %#x ;
[B------:R-:W-:-:S02] MOV R5, 0x8 ;
[B------:R-:W-:-:S04] IMAD.WIDE.U32 R12, R0, R5, c[0x0][0x168] ;
[B------:R-:W-:-:S04] STG.E.64 [R12.64], R8 ;
[B------:R-:W-:-:S05] EXIT ;
`, sh, sh)
		p := asm(t, src)
		const n = 64
		in := make([]uint32, 4*n)
		for i := range in {
			in[i] = r.Uint32()
		}
		m := NewMemory()
		ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", poisonWords(2*n), 0)
		if _, err := Launch(p, Config{StrictScoreboards: true, Block: [3]int{n}, Memory: m, Params: params(ai, ao), Poison: true}); err != nil {
			t.Fatal(err)
		}
		out := simWords(m.Bytes("out"))
		for l := 0; l < n; l++ {
			a, b, c, d := in[4*l], in[4*l+1], in[4*l+2], in[4*l+3]
			_, cy := bits.Add32(c, d, 0)
			w0 := ^b + uint32(uint64(int64(int32(a)))<<sh>>32) + cy
			w1 := b + uint32((uint64(c)<<32|uint64(a))<<sh>>32)
			if got := [2]uint32(out[2*l:]); got != [2]uint32{w0, w1} {
				t.Fatalf("shift %d lane %d (a %#x b %#x c %#x d %#x): %#x, want %#x", sh, l, a, b, c, d, got, [2]uint32{w0, w1})
			}
		}
	}
}
