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
