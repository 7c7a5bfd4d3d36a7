package sim

import "testing"

// TestMbarArrive: an mbarrier word initialised as ptxas initialises it for
// count c completes a phase on exactly every c-th arrival, as ptxas's
// mbarrier.test_wait reads it (bit 31 of the high word against the
// token's), with c pending arrivals again after each completion, over
// several phases.
func TestMbarArrive(t *testing.T) {
	for _, c := range []uint32{1, 2, 3, 7, 64, 129, 1000, 1 << 20} {
		state := uint64(0x80000000-c)<<32 | uint64(0x40000000-c) // STS.64 [bar], {0x40000000-c, 0x80000000-c}
		pending := func(s uint64) uint32 { return (0x80000000 - uint32(s>>32)&0x7fffffff) & 0x7fffffff }
		if pending(state) != c {
			t.Fatalf("c=%d: %d pending after init", c, pending(state))
		}
		for phase := 0; phase < 4; phase++ {
			for k := uint32(0); k < c; k++ {
				token := state
				state = mbarArrive(state)
				if uint32(state) != uint32(token) {
					t.Fatalf("c=%d phase %d arrival %d: the low word changed: %#x -> %#x", c, phase, k, token, state)
				}
				done := (uint32(state>>32)^uint32(token>>32))&0x80000000 != 0
				if done != (k == c-1) {
					t.Fatalf("c=%d phase %d arrival %d: completed %v", c, phase, k, done)
				}
				want := c - 1 - k
				if k == c-1 {
					want = c
				}
				if got := pending(state); got != want {
					t.Fatalf("c=%d phase %d arrival %d: %d pending, want %d", c, phase, k, got, want)
				}
				// test_wait.parity 0 is true once bit 31 is set (ptxas:
				// LOP3 P0 = hi & 0x80000000 != 0): phase 0's completion
				// sets it, phase 1's clears it, and so on
				if k == c-1 && int(state>>63) != (phase+1)%2 {
					t.Fatalf("c=%d phase %d: bit 31 is %d after completion", c, phase, state>>63)
				}
			}
		}
	}
}

// TestSimArrivesUR runs ARRIVES.LDGSTSBAR.64 with the mbarrier's address
// in a uniform register (nvcc's [UR4]) and as ptxas writes it
// ([URZ+off]): every lane of a warp arrives on a word initialised for 32
// arrivals after an LDGSTS copy, so the phase completes, and the copy has
// landed; the copy's cache-eviction hints (.LU, .EU) change nothing.
func TestSimArrivesUR(t *testing.T) {
	for k, addr := range []string{"[UR4]", "[UR4+0x8]", "[URZ+0x10]"} {
		copyOp := []string{"LDGSTS.E", "LDGSTS.E.LU", "LDGSTS.E.EU"}[k]
		src := `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S02] ULDC.64 UR6, c[0x0][0x118] ;
[B------:R-:W-:-:S02] MOV R2, 0x3fffffe0 ;
[B------:R-:W-:-:S02] MOV R3, 0x7fffffe0 ;
[B------:R-:W-:-:S02] UMOV UR4, 0x10 ;
[B0-----:R-:W-:-:S04] ISETP.NE.U32.AND P0, PT, R0, RZ, PT ;
[B------:R-:W-:-:S02] @!P0 STS.64 [0x10], R2 ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B------:R-:W-:-:S02] BAR.SYNC 0x0 ;
[B------:R-:W-:-:S04] IMAD.WIDE R6, R0, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S04] IMAD.SHL.U32 R4, R0, 0x4, RZ ;
[B------:R0:W-:-:S02] ` + copyOp + ` [R4+0x100], [R6.64] ;
[B------:R-:W-:-:S02] UMOV UR4, ` + map[bool]string{true: "0x8", false: "0x10"}[addr == "[UR4+0x8]"] + ` ;
[B0-----:R-:W-:-:S02] ARRIVES.LDGSTSBAR.64 ` + addr + ` ;
[B------:R-:W-:-:S02] BAR.SYNC 0x0 ;
[B------:R-:W0:-:S02] LDS.64 R8, [0x10] ;
[B------:R-:W1:-:S02] LDS R10, [R4+0x100] ;
[B------:R-:W-:-:S02] MOV R5, 0x10 ;
[B------:R-:W-:-:S04] IMAD.WIDE R6, R0, R5, c[0x0][0x168] ;
[B0-----:R-:W-:-:S02] STG.E.64 [R6.64], R8 ;
[B-1----:R-:W-:-:S02] STG.E [R6.64+0x8], R10 ;
[B------:R-:W-:-:S05] EXIT ;`
		m := NewMemory()
		in := make([]uint32, 32)
		for i := range in {
			in[i] = uint32(1000 + 7*i)
		}
		ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", poisonWords(4*32), 0)
		if _, err := Launch(asm(t, src), Config{Block: [3]int{32}, Memory: m, Params: params(ai, ao), SharedBytes: 0x200, Poison: true}); err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		state := uint64(0x7fffffe0)<<32 | 0x3fffffe0
		for k := 0; k < 32; k++ {
			state = mbarArrive(state)
		}
		out := simWords(m.Bytes("out"))
		for l := 0; l < 32; l++ {
			if got := uint64(out[4*l+1])<<32 | uint64(out[4*l]); got != state || out[4*l+2] != in[l] {
				t.Fatalf("%s lane %d: word %#x, copy %d; want %#x, %d", addr, l, got, out[4*l+2], state, in[l])
			}
		}
		if state>>63 != 1 {
			t.Fatalf("the phase did not complete: %#x", state)
		}
	}
}
