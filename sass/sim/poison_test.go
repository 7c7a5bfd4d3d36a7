package sim

import (
	"errors"
	"strings"
	"testing"
)

// TestSimPoisonSel checks the poison rule for SEL and FSEL: R8 is written
// only in the even lanes; a select that takes R8 exactly where it was
// written runs (and yields R8 there, the other source elsewhere), one
// that takes R8 in an odd lane reports ErrUninitialized naming R8, and
// a never-written predicate still faults.
func TestSimPoisonSel(t *testing.T) {
	const src = `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B0-----:R-:W-:-:S04] LOP3.LUT R6, R0, 0x1, RZ, 0xc0, !PT ;
[B------:R-:W-:-:S04] ISETP.NE.U32.AND P0, PT, R6, RZ, PT ;
[B------:R-:W-:-:S04] @!P0 IADD3 R8, R0, 0x100, RZ ;
[B------:R-:W-:-:S04] MOV R5, 0x4 ;
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W-:-:S04] IMAD.WIDE R2, R0, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S04] SELECT ;
[B------:R-:W-:-:S04] STG.E [R2.64], R9 ;
[B------:R-:W-:-:S05] EXIT ;`
	run := func(sel string) ([]uint32, error) {
		m := NewMemory()
		a := alloc(t, m, "out", poisonWords(32), 0)
		_, err := Launch(asm(t, strings.Replace(src, "SELECT", sel, 1)), Config{Block: [3]int{32}, Memory: m, Params: params(a), Poison: true})
		return simWords(m.Bytes("out")), err
	}
	for _, op := range []string{"SEL", "FSEL"} {
		for _, sel := range []string{op + " R9, R6, R8, P0", op + " R9, R8, R6, !P0"} {
			out, err := run(sel)
			if err != nil {
				t.Fatalf("%s: %v", sel, err)
			}
			for l, v := range out {
				want := uint32(l + 0x100)
				if l%2 == 1 {
					want = 1
				}
				if v != want {
					t.Fatalf("%s: lane %d = %#x, want %#x", sel, l, v, want)
				}
			}
		}
		for _, c := range []struct{ sel, want string }{
			{op + " R9, R8, R6, P0", "lane 1"}, // R8 selected in the odd lanes
			{op + " R9, R6, R8, !P0", "lane 1"},
			{op + " R9, R8, R6, P1", "P1 never written"},
		} {
			_, err := run(c.sel)
			if !errors.Is(err, ErrUninitialized) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%s: got %v, want %v (%s)", c.sel, err, ErrUninitialized, c.want)
			}
		}
	}
}
