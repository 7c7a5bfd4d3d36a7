package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// barRedSrc reduces P1 = x[tid] != 0 over the CTA three times (POPC on
// barrier 0, AND on 1 with a thread count, OR on 2) and then P1 = x[tid]
// > 7 again on barrier 0 (the barrier and the result reused); each thread
// writes the POPC result, the AND and OR predicates (P2R bits 2 and 3)
// and the second count.
const barRedSrc = `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B------:R-:W-:-:S02] MOV R21, 0x10 ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W-:-:S04] IMAD.WIDE.U32 R2, R0, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S04] IMAD.WIDE.U32 R10, R0, R21, c[0x0][0x168] ;
[B------:R-:W2:-:S04] LDG.E R4, [R2.64] ;
[B------:R-:W-:-:S04] ISETP.NE.U32.AND P1, PT, R4, RZ, PT ;
[B------:R-:W-:-:S04] BAR.RED.POPC 0x0, P1 ;
[B------:R-:W-:-:S04] B2R.RESULT R6 ;
[B------:R-:W-:-:S04] BAR.RED.AND 0x1, c, P1 ;
[B------:R-:W-:-:S04] B2R.RESULT RZ, P2 ;
[B------:R-:W-:-:S04] BAR.RED.OR 0x2, P1 ;
[B------:R-:W-:-:S04] B2R.RESULT RZ, P3 ;
[B------:R-:W-:-:S04] P2R R7, PR, RZ, 0xc ;
[B------:R-:W-:-:S04] ISETP.GT.U32.AND P1, PT, R4, 0x7, PT ;
[B------:R-:W-:-:S04] BAR.RED.POPC 0x0, P1 ;
[B------:R-:W-:-:S04] B2R.RESULT R8 ;
[B------:R-:W-:-:S04] STG.E [R10.64], R6 ;
[B------:R-:W-:-:S04] STG.E [R10.64+0x4], R7 ;
[B------:R-:W-:-:S04] STG.E [R10.64+0x8], R8 ;
[B------:R-:W-:-:S05] EXIT ;
`

// TestSimBarRed runs barRedSrc on blocks of 1, 7, 33, 129 and 1024
// threads (ragged last warps) over inputs with every lane's predicate
// drawn independently (divergent within and across warps), all zero and
// all non-zero; the reference counts over the CTA in Go.
func TestSimBarRed(t *testing.T) {
	r := rand.New(rand.NewPCG(1403, 1404))
	for _, n := range []int{1, 7, 33, 129, 1024} {
		p := asm(t, strings.Replace(barRedSrc, "c,", fmt.Sprintf("%#x,", (n+31)/32*32), 1))
		for _, kind := range []string{"mixed", "zero", "nonzero"} {
			x := make([]uint32, 2*n) // two CTAs
			for i := range x {
				switch kind {
				case "mixed":
					x[i] = r.Uint32N(16)
				case "nonzero":
					x[i] = 1 + r.Uint32N(1000)
				}
			}
			m := NewMemory()
			ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(8*n+4), 0)
			for cta := 0; cta < 2; cta++ {
				// one launch per CTA's inputs: the kernel indexes by tid
				if _, err := Launch(p, Config{Block: [3]int{n}, Memory: m, Params: params(ax+uint64(4*n*cta), ao+uint64(16*n*cta)), Poison: true}); err != nil {
					t.Fatalf("n=%d %s: %v", n, kind, err)
				}
			}
			out := simWords(m.Bytes("out"))
			for cta := 0; cta < 2; cta++ {
				v := x[n*cta : n*cta+n]
				popc, all, any, gt7 := 0, true, false, 0
				for _, e := range v {
					if e != 0 {
						popc++
						any = true
					} else {
						all = false
					}
					if e > 7 {
						gt7++
					}
				}
				preds := uint32(0)
				if all {
					preds |= 4
				}
				if any {
					preds |= 8
				}
				for i := 0; i < n; i++ {
					want := [3]uint32{uint32(popc), preds, uint32(gt7)}
					if got := [3]uint32(out[4*(n*cta+i):]); got != want {
						t.Fatalf("n=%d %s CTA %d thread %d: %v, want %v", n, kind, cta, i, got, want)
					}
				}
			}
			checkPoison(t, fmt.Sprint("bar.red n=", n), out, 8*n)
		}
	}
}

// TestSimBarRedFaults: a B2R with no reduction before it, and warps
// meeting at one barrier with different operations.
func TestSimBarRedFaults(t *testing.T) {
	cases := []struct {
		name, src, text, detail string
		kind                    error
	}{
		{"B2R before any BAR.RED", `
[B------:R-:W-:-:S04] BAR.SYNC 0x0 ;
[B------:R-:W-:-:S04] B2R.RESULT R6 ;`, "B2R.RESULT R6 ;", "no BAR.RED", ErrUnsupported},
		{"BAR.RED meets BAR.SYNC", `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S04] ISETP.GE.U32.AND P0, PT, R0, 0x20, PT ;
[B------:R-:W-:-:S05] @P0 BRA 0x50 ;
[B------:R-:W-:-:S04] BAR.SYNC 0x0 ;
[B------:R-:W-:-:S05] EXIT ;
[B------:R-:W-:-:S04] BAR.RED.OR 0x0, P0 ;`, "BAR.RED.OR 0x0, P0 ;", "BAR.OR meets warps at BAR.SYNC", ErrDivergent},
		{"POPC meets AND", `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S04] ISETP.GE.U32.AND P0, PT, R0, 0x20, PT ;
[B------:R-:W-:-:S05] @P0 BRA 0x50 ;
[B------:R-:W-:-:S04] BAR.RED.POPC 0x3, P0 ;
[B------:R-:W-:-:S05] EXIT ;
[B------:R-:W-:-:S04] BAR.RED.AND 0x3, P0 ;`, "BAR.RED.AND 0x3, P0 ;", "BAR.AND meets warps at BAR.POPC", ErrDivergent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := asm(t, tc.src+"\n[B------:R-:W-:-:S05] EXIT ;")
			_, err := Launch(p, Config{Block: [3]int{64}, Poison: true, Workers: 1})
			if !errors.Is(err, tc.kind) {
				t.Fatalf("got %v, want %v", err, tc.kind)
			}
			var f *Fault
			if !errors.As(err, &f) || f.Text != tc.text || !strings.Contains(f.Detail, tc.detail) {
				t.Fatalf("fault %+v", err)
			}
		})
	}
}
