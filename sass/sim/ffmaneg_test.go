package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestSimFFMANegConst runs FFMA with a constant source in the B place
// (selector 5) and the C place (selector 3) under every combination of
// the negations the forms have (A: bit 72; the register source and the
// constant each with their own bit, issue #32's FFMA R2, R3, -R2,
// c[0x0][0x184]) on 64 lanes of random inputs, against the same operation
// with the constant in a register.
func TestSimFFMANegConst(t *testing.T) {
	var cases [][2]string
	for _, na := range []string{"", "-"} {
		for _, nr := range []string{"", "-"} {
			for _, nc := range []string{"", "-"} {
				cases = append(cases,
					[2]string{fmt.Sprintf("FFMA R12, %sR8, %sR9, %sc[0x0][0x170]", na, nr, nc), fmt.Sprintf("FFMA R12, %sR8, %sR9, %sR13", na, nr, nc)},
					[2]string{fmt.Sprintf("FFMA R12, %sR8, %sc[0x0][0x170], %sR9", na, nc, nr), fmt.Sprintf("FFMA R12, %sR8, %sR13, %sR9", na, nc, nr)})
			}
		}
	}
	var b strings.Builder
	b.WriteString(`
[B------:R-:W0:-:S01] S2R R1, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x10 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R2, R1, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E.128 R8, [R2.64] ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B------:R-:W-:-:S06] IMAD.WIDE R6, R1, R5, c[0x0][0x168] ;
[B-1----:R-:W-:-:S06] MOV R13, c[0x0][0x170] ;
`)
	for k, c := range cases {
		fmt.Fprintf(&b, "[B------:R-:W-:-:S06] %s ;\n", c[0])
		fmt.Fprintf(&b, "[B------:R-:W-:-:S04] STG.E [R6.64+%#x], R12 ;\n", 0x200*k)
		fmt.Fprintf(&b, "[B------:R-:W-:-:S06] %s ;\n", c[1])
		fmt.Fprintf(&b, "[B------:R-:W-:-:S04] STG.E [R6.64+%#x], R12 ;\n", 0x200*k+0x100)
	}
	b.WriteString("[B------:R-:W-:-:S05] EXIT ;\n")
	p := asm(t, b.String())
	r := rand.New(rand.NewPCG(32, 3))
	for round := 0; round < 4; round++ {
		in := make([]uint32, 4*64)
		for i := range in {
			// floats near 1 so that sums cancel and the sign matters
			in[i] = 0x3f000000 + r.Uint32()%0x01000000 | r.Uint32()&1<<31
		}
		kc := 0x3f000000 + r.Uint32()%0x01000000
		m := NewMemory()
		ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", poisonWords(128*len(cases)), 0)
		if _, err := Launch(p, Config{StrictScoreboards: true, Block: [3]int{64}, Memory: m, Params: params(ai, ao, kc), Poison: true}); err != nil {
			t.Fatal(err)
		}
		out := simWords(m.Bytes("out"))
		for k, c := range cases {
			for l := 0; l < 64; l++ {
				if got, want := out[128*k+l], out[128*k+64+l]; got != want || got == 0x7fc0dead {
					t.Fatalf("%s on %#08x %#08x, c %#08x: %#08x, %s: %#08x", c[0], in[4*l], in[4*l+1], kc, got, c[1], want)
				}
			}
		}
	}
}
