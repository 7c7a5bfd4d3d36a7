package sim

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestSimPoisonSel checks the poison rule for SEL and FSEL: R8 is written
// only in the even lanes; a select that takes R8 exactly where it was
// written runs (and yields R8 there, the other source elsewhere), one
// that takes R8 in an odd lane copies the undefinedness, so that the store
// of the result reports ErrUninitialized naming R9, and a never-written
// predicate still faults at the select.
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
			{op + " R9, R8, R6, P0", "lane 1: instruction 8 `STG.E [R2.64], R9 ;`: R9 never written"}, // R8 selected in the odd lanes
			{op + " R9, R6, R8, !P0", "lane 1: instruction 8 `STG.E [R2.64], R9 ;`: R9 never written"},
			{op + " R9, R8, R6, P1", "P1 never written"},
		} {
			_, err := run(c.sel)
			if !errors.Is(err, ErrUninitialized) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%s: got %v, want %v (%s)", c.sel, err, ErrUninitialized, c.want)
			}
		}
	}
}

// TestSimPoisonBytes checks that poison mode tracks bytes: nvcc's merge
// into a register whose other bytes are don't-care (PRMT R17, RZ, 0x7610,
// R17, R17 never written) runs, the defined bytes flow on through PRMT
// (either selector form) and narrow stores, and a use of a never-written
// byte still faults, naming the byte and the lane.
func TestSimPoisonBytes(t *testing.T) {
	const src = `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B0-----:R-:W-:-:S04] LOP3.LUT R6, R0, 0x1, RZ, 0xc0, !PT ;
[B------:R-:W-:-:S04] ISETP.NE.U32.AND P0, PT, R6, RZ, PT ;
[B------:R-:W-:-:S04] MOV R5, 0x4 ;
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W-:-:S04] IMAD.WIDE R2, R0, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S04] MOV R9, 0x1 ;
BODY
[B------:R-:W-:-:S04] STG.E [R2.64], R9 ;
[B------:R-:W-:-:S05] EXIT ;`
	run := func(body string) ([]uint32, error) {
		var lines []string
		for _, s := range strings.Split(body, ";") {
			lines = append(lines, "[B------:R-:W-:-:S04] "+strings.TrimSpace(s)+" ;")
		}
		m := NewMemory()
		a := alloc(t, m, "out", poisonWords(32), 0)
		_, err := Launch(asm(t, strings.Replace(src, "BODY", strings.Join(lines, "\n"), 1)), Config{Block: [3]int{32}, Memory: m, Params: params(a), Poison: true})
		return simWords(m.Bytes("out")), err
	}
	for _, c := range []struct {
		body string
		want func(tid uint32) uint32
	}{
		// the low half zeroed, then the high half from R0: all defined
		{"PRMT R17, RZ, 0x7610, R17; PRMT R9, R17, 0x5410, R0", func(x uint32) uint32 { return x << 16 }},
		// the same merge back into R17, then a full read of it
		{"PRMT R17, RZ, 0x7610, R17; PRMT R17, R17, 0x5410, R0; MOV R9, R17", func(x uint32) uint32 { return x << 16 }},
		// a full write after the partial one defines every byte
		{"PRMT R17, RZ, 0x7610, R17; MOV R17, R0; MOV R9, R17", func(x uint32) uint32 { return x }},
		// the defined bytes stored alone (2 bytes, then 1) over the
		// poisoned output
		{"PRMT R17, R0, 0x7610, R17; STG.E.U16 [R2.64], R17; LDG.E R9, [R2.64]", func(x uint32) uint32 { return 0x7fc00000 | x }},
		{"PRMT R17, R0, 0x7650, R17; STG.E.U8 [R2.64], R17; LDG.E R9, [R2.64]", func(x uint32) uint32 { return 0x7fc0de00 | x }},
		// sign replication of a defined byte
		{"PRMT R17, R0, 0x7610, R17; PRMT R9, R17, 0x8880, RZ", func(x uint32) uint32 { return x }},
		// a half-precision read of the defined half only (x: a binary16
		// subnormal, doubled exactly), and HADD2.F32 of it
		{"PRMT R17, R0, 0x7610, R17; HADD2 R9, R17.H0_H0, R17.H0_H0", func(x uint32) uint32 { return 2*x<<16 | 2*x }},
		// (x*x is below binary16's least subnormal: +0, and +0 + -0 = +0)
		{"PRMT R17, R0, 0x7610, R17; HFMA2 R9, R17.H0_H0, R17.H0_H0, -RZ", func(uint32) uint32 { return 0 }},
		{"PRMT R17, R0, 0x7610, R17; HADD2.F32 R9, -RZ, R17.H0_H0", func(x uint32) uint32 { return math.Float32bits(float32(x) / (1 << 24)) }},
		{"PRMT R17, R17, 0x5410, R0; HADD2.F32 R9, -RZ, R17.H1_H1", func(x uint32) uint32 { return math.Float32bits(float32(x) / (1 << 24)) }},
		// copies (MOV, SEL) of a partly defined register, then a use of
		// the defined bytes only
		{"PRMT R17, R0, 0x7610, R17; MOV R12, R17; SEL R13, R12, RZ, PT; STG.E.U16 [R2.64], R13; LDG.E R9, [R2.64]", func(x uint32) uint32 { return 0x7fc00000 | x }},
		// a copy in every lane of a register defined in the even lanes,
		// used in the even lanes only
		{"@!P0 MOV R17, R0; MOV R12, R17; @!P0 MOV R9, R12", func(x uint32) uint32 {
			if x%2 == 1 {
				return 1
			}
			return x
		}},
	} {
		out, err := run(c.body)
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		for l, v := range out {
			if w := c.want(uint32(l)); v != w {
				t.Fatalf("%s: lane %d = %#x, want %#x", c.body, l, v, w)
			}
		}
	}
	for _, c := range []struct{ body, lane, want string }{
		// a half-precision read of the undefined half
		{"PRMT R17, R0, 0x7610, R17; HADD2 R9, R17.H1_H1, R17.H0_H0", "lane 0", "byte 2 of R17 never written"},
		{"PRMT R17, R0, 0x7610, R17; HADD2 R9, R17, RZ.H0_H0", "lane 0", "byte 2 of R17 never written"},
		{"PRMT R17, R0, 0x7610, R17; HADD2.F32 R9, -RZ, R17.H1_H1", "lane 0", "byte 2 of R17 never written"},
		{"PRMT R17, R17, 0x5410, R0; HADD2.F32 R9, -RZ, R17", "lane 0", "byte 0 of R17 never written"},
		// a copy moves the undefined bytes on; the use faults
		{"PRMT R17, RZ, 0x7610, R17; MOV R9, R17", "lane 0", "byte 2 of R9 never written"},
		{"PRMT R17, RZ, 0x7610, R17; MOV R12, R17; SEL R9, R12, RZ, PT", "lane 0", "byte 2 of R9 never written"},
		{"@!P0 MOV R17, R0; MOV R12, R17; MOV R9, R12", "lane 1", "R9 never written"},
		{"PRMT R17, RZ, 0x7610, R17; STG.E [R2.64], R17", "lane 0", "byte 2 of R17 never written"},
		{"PRMT R17, R17, 0x7610, RZ; STG.E.U16 [R2.64], R17", "lane 0", "byte 0 of R17 never written"},
		{"PRMT R17, R0, 0x7610, R17; STG.E.U8 [R2.64], R17; PRMT R9, R17, 0xaaa0, RZ", "lane 0", "byte 1 of R9 never written"},
		// every byte selected from never-written ones: the use faults
		{"PRMT R9, R17, 0x3232, RZ", "lane 0", "R9 never written"},
		// an undefined selector faults at the PRMT
		{"PRMT R9, R0, R17, RZ", "lane 0", "R17 never written"},
		{"IADD3 R9, R17, 0x1, RZ", "lane 0", "R17 never written"},
		// defined in the even lanes only
		{"@!P0 MOV R17, R0; PRMT R9, R17, 0x3210, RZ", "lane 1", "R9 never written"},
		{"@!P0 MOV R17, R0; PRMT R17, RZ, 0x7610, R17; PRMT R9, R17, 0x3276, RZ", "lane 1", "R9 never written"},
	} {
		_, err := run(c.body)
		if !errors.Is(err, ErrUninitialized) || !strings.Contains(err.Error(), c.lane+":") || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: got %v, want %v (%s: %s)", c.body, err, ErrUninitialized, c.lane, c.want)
		}
	}
}

// TestSimPoisonBytesOps checks the byte rule for LOP3, SHF, F2F and SHFL
// (issue #32): R17 holds R0 in its low half and never-written high bytes;
// LOP3 with an immediate mask, SHF by a constant and F2F.F64.F16 read
// only the bytes that reach their result, so they run when those are the
// defined ones and fault, naming a byte, when not; SHFL copies the source
// lane's defined bytes, which a narrow store then uses.
func TestSimPoisonBytesOps(t *testing.T) {
	const src = `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B0-----:R-:W-:-:S04] MOV R5, 0x4 ;
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W-:-:S04] IMAD.WIDE R2, R0, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S04] LOP3.LUT R1, R0, 0x1f, RZ, 0x3c, !PT ;
[B------:R-:W-:-:S04] PRMT R17, R0, 0x7610, R17 ;
BODY
[B------:R-:W-:-:S04] STG.E [R2.64], R9 ;
[B------:R-:W-:-:S05] EXIT ;`
	run := func(body string) ([]uint32, error) {
		var lines []string
		for _, s := range strings.Split(body, ";") {
			lines = append(lines, "[B------:R-:W-:-:S04] "+strings.TrimSpace(s)+" ;")
		}
		m := NewMemory()
		a := alloc(t, m, "out", poisonWords(32), 0)
		_, err := Launch(asm(t, strings.Replace(src, "BODY", strings.Join(lines, "\n"), 1)), Config{Block: [3]int{32}, Memory: m, Params: params(a), Poison: true})
		return simWords(m.Bytes("out")), err
	}
	for _, c := range []struct {
		body string
		want func(x uint32) uint32
	}{
		{"LOP3.LUT R9, R17, 0xffff, RZ, 0xc0, !PT", func(x uint32) uint32 { return x }},
		{"LOP3.LUT R9, R17, 0xff, RZ, 0xc0, !PT", func(x uint32) uint32 { return x & 0xff }},
		// (x | 0xffff0000): the high bytes are ones whatever R17 holds
		{"LOP3.LUT R9, R17, 0xffff0000, RZ, 0xfc, !PT", func(x uint32) uint32 { return x | 0xffff0000 }},
		// a truth table that ignores A
		{"LOP3.LUT R9, R17, R0, RZ, 0xcc, !PT", func(x uint32) uint32 { return x }},
		{"SHF.L.U32 R9, R17, 0x10, RZ", func(x uint32) uint32 { return x << 16 }},
		{"SHF.L.U64.HI R9, RZ, 0x10, R17", func(x uint32) uint32 { return x << 16 }},
		{"SHF.R.U64 R9, RZ, 0x10, R17", func(x uint32) uint32 { return x << 16 }},
		{"F2F.F64.F16 R10, R17; MOV R9, R11", func(x uint32) uint32 { return uint32(math.Float64bits(float64(x)/(1<<24)) >> 32) }},
		// lane l takes lane l^1's R17 (its defined low half) and stores it
		{"SHFL.BFLY PT, R12, R17, 0x1, 0x1f; STG.E.U16 [R2.64], R12; LDG.E R9, [R2.64]", func(x uint32) uint32 { return 0x7fc00000 | x ^ 1 }},
	} {
		out, err := run(c.body)
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		for l, v := range out {
			if w := c.want(uint32(l)); v != w {
				t.Fatalf("%s: lane %d = %#x, want %#x", c.body, l, v, w)
			}
		}
	}
	for _, c := range []struct{ body, want string }{
		{"LOP3.LUT R9, R17, 0x10000, RZ, 0xc0, !PT", "byte 2 of R17 never written"},
		{"LOP3.LUT R9, R17, R0, RZ, 0xc0, !PT", "byte 2 of R17 never written"},
		{"SHF.L.U32 R9, R17, 0x8, RZ", "byte 2 of R17 never written"},
		{"SHF.R.U32.HI R9, RZ, 0x10, R17", "byte 2 of R17 never written"},
		{"SHF.L.U64.HI R9, R17, 0x10, RZ", "byte 2 of R17 never written"},
		{"SHF.R.S32.HI R9, RZ, 0x18, R17", "byte 3 of R17 never written"},
		{"SHF.R.U32.HI R9, RZ, R1, R17", "byte 2 of R17 never written"},
		{"F2F.F16.F32 R9, R17", "byte 2 of R17 never written"},
		{"SHFL.BFLY PT, R12, R17, 0x1, 0x1f; STG.E [R2.64], R12", "byte 2 of R12 never written"},
	} {
		_, err := run(c.body)
		if !errors.Is(err, ErrUninitialized) || !strings.Contains(err.Error(), "lane 0:") || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: got %v, want %v (lane 0: %s)", c.body, err, ErrUninitialized, c.want)
		}
	}
}
