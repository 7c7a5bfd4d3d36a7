package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestSimULEASX32 runs ULEA.HI.SX32 and ULEA.HI.X.SX32 (nvcc's
// sign-extended uniform index into a 64-bit address) on random uniform
// operands, with source modifiers and either carry in, against LEA.HI(.X).SX32
// on the same values in general registers (checked against the corpus's
// references).
func TestSimULEASX32(t *testing.T) {
	cases := []struct{ u, r string }{
		{"ULEA.HI.SX32 UR8, UR4, UR5, 0x1e", "LEA.HI.SX32 R8, R4, R5, 0x1e"},
		{"ULEA.HI.SX32 UR8, UR4, UR5, 0x2", "LEA.HI.SX32 R8, R4, R5, 0x2"},
		{"ULEA.HI.SX32 UR8, -UR4, UR5, 0x1", "LEA.HI.SX32 R8, -R4, R5, 0x1"},
		{"ULEA.HI.SX32 UR8, UR4, 0x1000, 0x3", "LEA.HI.SX32 R8, R4, 0x1000, 0x3"},
		{"ULEA.HI.X.SX32 UR8, UR4, UR5, 0x2, UP0", "LEA.HI.X.SX32 R8, R4, R5, 0x2, P0"},
		{"ULEA.HI.X.SX32 UR8, UR4, UR5, 0x1, !UP0", "LEA.HI.X.SX32 R8, R4, R5, 0x1, !P0"},
		{"ULEA.HI.X.SX32 UR8, ~UR4, UR5, 0x4, UP0", "LEA.HI.X.SX32 R8, ~R4, R5, 0x4, P0"},
	}
	var b strings.Builder
	b.WriteString(`
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x168] ;
[B------:R-:W-:-:S02] ULDC UR6, c[0x0][0x170] ;
[B------:R-:W-:-:S02] UISETP.NE.U32.AND UP0, UPT, UR6, URZ, UPT ;
[B------:R-:W-:-:S04] ISETP.NE.U32.AND P0, PT, RZ, UR6, PT ;
[B------:R-:W-:-:S04] MOV R4, UR4 ;
[B------:R-:W-:-:S04] MOV R5, UR5 ;
[B------:R-:W-:-:S02] ULDC.64 UR10, c[0x0][0x160] ;
[B------:R-:W-:-:S04] MOV R2, UR10 ;
[B------:R-:W-:-:S13] MOV R3, UR11 ;
`)
	for k, c := range cases {
		fmt.Fprintf(&b, "[B------:R-:W-:-:S04] %s ;\n", c.u)
		fmt.Fprintf(&b, "[B------:R-:W-:-:S04] MOV R9, UR8 ;\n")
		fmt.Fprintf(&b, "[B------:R-:W-:-:S04] STG.E [R2.64+%#x], R9 ;\n", 8*k)
		fmt.Fprintf(&b, "[B------:R-:W-:-:S04] %s ;\n", c.r)
		fmt.Fprintf(&b, "[B------:R-:W-:-:S04] STG.E [R2.64+%#x], R8 ;\n", 8*k+4)
	}
	b.WriteString("[B------:R-:W-:-:S05] EXIT ;\n")
	p := asm(t, b.String())
	r := rand.New(rand.NewPCG(33, 1))
	for round := 0; round < 16; round++ {
		a, bb, cin := r.Uint32(), r.Uint32(), uint32(round%2)
		if round < 4 {
			a |= 0x80000000 // negative: the sign extension matters
		}
		m := NewMemory()
		ao := alloc(t, m, "out", poisonWords(2*len(cases)), 0)
		if _, err := Launch(p, Config{Block: [3]int{32}, Memory: m, Params: params(ao, a, bb, cin), Poison: true}); err != nil {
			t.Fatal(err)
		}
		out := simWords(m.Bytes("out"))
		// the first case by hand: b + the high word of sext(a) << 30
		if want := bb + uint32(uint64(int64(int32(a))<<30)>>32); out[0] != want {
			t.Fatalf("a %#x b %#x: %s = %#x, want %#x", a, bb, cases[0].u, out[0], want)
		}
		for k, c := range cases {
			if out[2*k] != out[2*k+1] || out[2*k] == 0x7fc0dead {
				t.Fatalf("a %#x b %#x carry %d: %s = %#x, %s = %#x", a, bb, cin, c.u, out[2*k], c.r, out[2*k+1])
			}
		}
	}
}
