package sim

import (
	"math/rand/v2"
	"testing"
)

// TestSimUniformGlobalAddress runs LDG and STG with a uniform register in
// the address, [Ra.U32+URb], [Ra.64+URb+off] and [URb+off] (RZ), on n
// threads for odd n, against a host reference: out[t] = in[t] + 3·in[n-1-t]
// + in[1] and out2[t] = in[t] ^ in[n-1-t]; outputs start poisoned and the
// words past n must stay so. URb is a 64-bit base (sass's fMGU).
func TestSimUniformGlobalAddress(t *testing.T) {
	src := `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W1:-:S01] S2R R1, SR_CTAID.X ;
[B------:R-:W-:-:S02] ULDC.64 UR6, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR8, c[0x0][0x168] ;
[B------:R-:W-:-:S02] ULDC.64 UR10, c[0x0][0x170] ;
[B01----:R-:W-:-:S04] IMAD R0, R1, c[0x0][0x0], R0 ;
[B------:R-:W-:-:S04] ISETP.GE.U32.AND P0, PT, R0, c[0x0][0x178], PT ;
[B------:R-:W-:-:S05] @P0 EXIT ;
[B------:R-:W-:-:S04] IMAD.SHL.U32 R2, R0, 0x4, RZ ;
[B------:R-:W-:-:S04] IADD3 R3, -R0, c[0x0][0x178], RZ ;
[B------:R-:W-:-:S04] IADD3 R3, R3, -0x1, RZ ;
[B------:R-:W-:-:S04] IMAD.SHL.U32 R6, R3, 0x4, RZ ;
[B------:R-:W-:-:S04] MOV R7, RZ ;
[B------:R-:W2:-:S04] LDG.E R4, [R2.U32+UR6] ;
[B------:R-:W3:-:S04] LDG.E R5, [R6.64+UR6] ;
[B------:R-:W4:-:S04] LDG.E R8, [UR6+0x4] ;
[B--234-:R-:W-:-:S04] IMAD R9, R5, 0x3, R4 ;
[B------:R-:W-:-:S04] IADD3 R9, R9, R8, RZ ;
[B------:R-:W-:-:S04] LOP3.LUT R10, R4, R5, RZ, 0x3c, !PT ;
[B------:R-:W-:-:S04] MOV R13, RZ ;
[B------:R-:W-:-:S04] IADD3 R12, R2, 0x8, RZ ;
[B------:R-:W-:-:S04] STG.E [R2.U32+UR8], R9 ;
[B------:R-:W-:-:S04] STG.E [R12.64+UR10+-0x8], R10 ;
[B------:R-:W-:-:S05] EXIT ;
`
	p := asm(t, src)
	r := rand.New(rand.NewPCG(32, 1))
	for _, n := range []int{2, 7, 129, 1000} {
		in := make([]uint32, n)
		for i := range in {
			in[i] = r.Uint32()
		}
		m := NewMemory()
		ai := alloc(t, m, "in", in, 0)
		ao, ao2 := alloc(t, m, "out", nil, n+3), alloc(t, m, "out2", nil, n+3)
		poison := make([]uint32, n+3)
		for i := range poison {
			poison[i] = 0xcdcdcdcd
		}
		putU32s(m.Bytes("out"), poison)
		putU32s(m.Bytes("out2"), poison)
		grid := (n + 127) / 128
		if _, err := Launch(p, Config{StrictScoreboards: true, Grid: [3]int{grid}, Block: [3]int{128}, Memory: m,
			Params: params(ai, ao, ao2, n), Poison: true}); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		out, out2 := simWords(m.Bytes("out")), simWords(m.Bytes("out2"))
		for i := range n + 3 {
			want, want2 := uint32(0xcdcdcdcd), uint32(0xcdcdcdcd)
			if i < n {
				want = in[i] + 3*in[n-1-i] + in[1]
				want2 = in[i] ^ in[n-1-i]
			}
			if out[i] != want || out2[i] != want2 {
				t.Fatalf("n=%d: out[%d] = %#x, %#x, want %#x, %#x", n, i, out[i], out2[i], want, want2)
			}
		}
	}
}

// TestSimUniformLDGSTS copies rows into shared memory with LDGSTS on
// uniform-register addresses: [Ra.64+URb] for each lane's 16-byte row and
// [RZ.64+URb+off] for one row every lane shares, and checks the rows read
// back against the input.
func TestSimUniformLDGSTS(t *testing.T) {
	src := `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S02] ULDC.64 UR6, c[0x0][0x160] ;
[B0-----:R-:W-:-:S04] IMAD.SHL.U32 R2, R0, 0x10, RZ ;
[B------:R-:W-:-:S04] MOV R3, RZ ;
[B------:R-:W-:-:S04] IADD3 R13, R2, 0x10, RZ ;
[B------:R-:W-:-:S04] ISETP.NE.U32.AND P0, PT, R0, RZ, PT ;
[B------:R-:W-:-:S04] LDGSTS.E.BYPASS.128 [R13], [R2.64+UR6] ;
[B------:R-:W-:-:S04] @!P0 LDGSTS.E.BYPASS.128 [RZ], [RZ.64+UR6+0x20] ;
[B------:R-:W0:-:S01] LDGDEPBAR ;
[B------:R-:W-:-:S04] DEPBAR.LE SB0, 0x0 ;
[B------:R-:W-:-:S04] BAR.SYNC 0x0 ;
[B------:R-:W1:-:S04] LDS.128 R4, [R13] ;
[B------:R-:W2:-:S04] LDS.128 R8, [RZ] ;
[B------:R-:W-:-:S04] IMAD.SHL.U32 R14, R0, 0x20, RZ ;
[B------:R-:W-:-:S04] MOV R15, RZ ;
[B------:R-:W-:-:S02] ULDC.64 UR8, c[0x0][0x168] ;
[B-12---:R-:W-:-:S04] STG.E.128 [R14.64+UR8], R4 ;
[B------:R-:W-:-:S04] STG.E.128 [R14.64+UR8+0x10], R8 ;
[B------:R-:W-:-:S05] EXIT ;
`
	p := asm(t, src)
	r := rand.New(rand.NewPCG(32, 2))
	for _, lanes := range []int{1, 7, 33} {
		in := make([]uint32, 4*max(lanes, 3)) // the shared row is input row 2
		for i := range in {
			in[i] = r.Uint32()
		}
		m := NewMemory()
		ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", nil, 8*lanes)
		if _, err := Launch(p, Config{StrictScoreboards: true, Block: [3]int{lanes}, SharedBytes: 16 * (lanes + 1), Memory: m,
			Params: params(ai, ao), Poison: true}); err != nil {
			t.Fatalf("%d lanes: %v", lanes, err)
		}
		out := simWords(m.Bytes("out"))
		for l := range lanes {
			for k := range 4 {
				if got, want := out[8*l+k], in[4*l+k]; got != want {
					t.Fatalf("%d lanes: lane %d word %d = %#x, want %#x", lanes, l, k, got, want)
				}
				if got, want := out[8*l+4+k], in[8+k]; got != want {
					t.Fatalf("%d lanes: lane %d shared row word %d = %#x, want %#x", lanes, l, k, got, want)
				}
			}
		}
	}
}
