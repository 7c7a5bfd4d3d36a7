package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestSimHalfImmediates runs the immediate forms nvcc emits for half and
// bfloat16 constants (HFMA2 with the pair as B or as C, binary16 or
// .BF16_V2, with source modifiers; F2FP.BF16.PACK_AB and F2FP.PACK_AB with
// a float immediate) on 64 lanes of random inputs against the same
// operation with the immediate in a register (those forms are checked
// against references by TestSimHalfModifiers and the corpus tests).
func TestSimHalfImmediates(t *testing.T) {
	cases := []struct{ imm, reg, bits string }{
		{"HFMA2.BF16_V2 R12, R8, 1, 1, R10", "HFMA2.BF16_V2 R12, R8, R13, R10", "0x3f803f80"},
		{"HFMA2.BF16_V2 R12, -R8, R9, 0.0078125, -2", "HFMA2.BF16_V2 R12, -R8, R9, R13", "0x3c00c000"},
		{"HFMA2.BF16_V2 R12, R8.H1_H1, -3, 0.5, |R10|", "HFMA2.BF16_V2 R12, R8.H1_H1, R13, |R10|", "0xc0403f00"},
		{"HFMA2 R12, R8, 1.5, -0.25, R10", "HFMA2 R12, R8, R13, R10", "0x3e00b400"},
		{"HFMA2 R12, |R8|, R9.H0_H0, 2, 65504", "HFMA2 R12, |R8|, R9.H0_H0, R13", "0x40007bff"},
		{"HFMA2.BF16_V2.RELU R12, R8, 1, -1, R10", "HFMA2.BF16_V2.RELU R12, R8, R13, R10", "0x3f80bf80"},
		{"F2FP.BF16.PACK_AB R12, R8, 1", "F2FP.BF16.PACK_AB R12, R8, R13", "0x3f800000"},
		{"F2FP.PACK_AB R12, R8, -1.5", "F2FP.PACK_AB R12, R8, R13", "0xbfc00000"},
		{"F2FP.RELU.BF16.PACK_AB R12, R9, 3.1415927410125732422", "F2FP.RELU.BF16.PACK_AB R12, R9, R13", "0x40490fdb"},
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
`)
	for k, c := range cases {
		wait := "------"
		if k == 0 {
			wait = "-1----"
		}
		fmt.Fprintf(&b, "[B%s:R-:W-:-:S06] %s ;\n", wait, c.imm)
		fmt.Fprintf(&b, "[B------:R-:W-:-:S04] STG.E [R6.64+%#x], R12 ;\n", 0x200*k)
		fmt.Fprintf(&b, "[B------:R-:W-:-:S06] MOV R13, %s ;\n", c.bits)
		fmt.Fprintf(&b, "[B------:R-:W-:-:S06] %s ;\n", c.reg)
		fmt.Fprintf(&b, "[B------:R-:W-:-:S04] STG.E [R6.64+%#x], R12 ;\n", 0x200*k+0x100)
	}
	b.WriteString("[B------:R-:W-:-:S05] EXIT ;\n")
	p := asm(t, b.String())
	r := rand.New(rand.NewPCG(32, 1))
	for round := 0; round < 4; round++ {
		in := make([]uint32, 4*64)
		for i := range in {
			in[i] = r.Uint32()
		}
		m := NewMemory()
		ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", poisonWords(128*len(cases)), 0)
		if _, err := Launch(p, Config{StrictScoreboards: true, Block: [3]int{64}, Memory: m, Params: params(ai, ao), Poison: true}); err != nil {
			t.Fatal(err)
		}
		out := simWords(m.Bytes("out"))
		for k, c := range cases {
			for l := 0; l < 64; l++ {
				if got, want := out[128*k+l], out[128*k+64+l]; got != want || got == 0x7fc0dead {
					t.Fatalf("%s on %#08x %#08x %#08x: %#08x, %s: %#08x", c.imm, in[4*l], in[4*l+1], in[4*l+2], got, c.reg, want)
				}
			}
		}
	}
}
