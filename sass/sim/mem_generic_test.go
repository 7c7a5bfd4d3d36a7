package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// genericSrc exercises each generic window: x[tid] loaded through a
// generic global address, stored through the generic shared window and
// read back with LDS, stored with STL and read through the generic local
// window (and the reverse), QSPC of each address for each space, a
// generic atomic add on a shared counter interleaved with ATOMS on the
// same word, and a generic atomic on a global counter. Thread t writes 8
// words at out[8t]:
//
//	0 LDS of its shared slot (x[t]), 1 LD through the local window (x[t]),
//	2 LDL of what ST wrote through the local window (x[t]+1),
//	3 QSPC flags (P1..P6 at bits 1..6), 4 the shared counter after a
//	barrier (2n), 5 the global counter's old value, 6 x[t] stored through
//	a generic global address, 7 LD.E.U8 of x[t]'s byte 1.
const genericSrc = `
[B------:R-:W-:-:S02] IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28] ;
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B------:R-:W-:-:S02] MOV R21, 0x20 ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W-:-:S04] IMAD.WIDE.U32 R2, R0, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S04] IMAD.WIDE.U32 R10, R0, R21, c[0x0][0x168] ;
[B------:R-:W2:-:S04] LD.E R4, [R2.64] ;
[B------:R-:W-:-:S04] IMAD.SHL.U32 R6, R0, 0x4, RZ ;
[B------:R-:W-:-:S04] IADD3 R6, P0, R6, c[0x0][0x18], RZ ;
[B------:R-:W-:-:S04] IADD3.X R7, RZ, c[0x0][0x1c], RZ, P0, !PT ;
[B------:R-:W-:-:S04] ST.E [R6.64], R4 ;
[B------:R-:W-:-:S04] ISETP.NE.AND P0, PT, R0, RZ, PT ;
[B------:R-:W-:-:S04] @!P0 STS [0x1000], RZ ;
[B------:R-:W-:-:S04] BAR.SYNC 0x0 ;
[B------:R-:W-:-:S04] LDS R8, [R0.X4] ;
[B------:R-:W-:-:S04] STL [R1], R4 ;
[B------:R-:W-:-:S04] IADD3 R12, P0, R1, c[0x0][0x20], RZ ;
[B------:R-:W-:-:S04] IADD3.X R13, RZ, c[0x0][0x24], RZ, P0, !PT ;
[B------:R-:W-:-:S04] LD.E R9, [R12.64] ;
[B------:R-:W-:-:S04] IADD3 R15, R4, 0x1, RZ ;
[B------:R-:W-:-:S04] ST.E [R12.64+0x4], R15 ;
[B------:R-:W-:-:S04] LDL R14, [R1+0x4] ;
[B------:R-:W-:-:S04] QSPC.E.G P1, RZ, [R2] ;
[B------:R-:W-:-:S04] QSPC.E.S P2, RZ, [R6] ;
[B------:R-:W-:-:S04] QSPC.E.L P3, RZ, [R12] ;
[B------:R-:W-:-:S04] QSPC.E.S P4, RZ, [R2] ;
[B------:R-:W-:-:S04] QSPC.E.L P5, RZ, [R6] ;
[B------:R-:W-:-:S04] QSPC.E.G P6, RZ, [R12] ;
[B------:R-:W-:-:S04] P2R R15, PR, RZ, 0x7e ;
[B------:R-:W-:-:S04] MOV R16, 0x1000 ;
[B------:R-:W-:-:S04] IADD3 R16, P0, R16, c[0x0][0x18], RZ ;
[B------:R-:W-:-:S04] IADD3.X R17, RZ, c[0x0][0x1c], RZ, P0, !PT ;
[B------:R-:W-:-:S04] MOV R22, 0x1 ;
[B------:R-:W-:-:S04] ATOM.E.ADD.STRONG.GPU PT, R23, [R16.64], R22 ;
[B------:R-:W-:-:S04] MOV R24, 0x1000 ;
[B------:R-:W-:-:S04] ATOMS.ADD R25, [R24], R22 ;
[B------:R-:W-:-:S04] MOV R18, c[0x0][0x170] ;
[B------:R-:W-:-:S04] MOV R19, c[0x0][0x174] ;
[B------:R-:W-:-:S04] ATOM.E.ADD.STRONG.GPU PT, R20, [R18.64], R22 ;
[B------:R-:W-:-:S04] BAR.SYNC 0x0 ;
[B------:R-:W-:-:S04] LDS R26, [0x1000] ;
[B------:R-:W-:-:S04] LD.E.U8 R27, [R2.64+0x1] ;
[B------:R-:W-:-:S04] STG.E [R10.64], R8 ;
[B------:R-:W-:-:S04] STG.E [R10.64+0x4], R9 ;
[B------:R-:W-:-:S04] STG.E [R10.64+0x8], R14 ;
[B------:R-:W-:-:S04] STG.E [R10.64+0xc], R15 ;
[B------:R-:W-:-:S04] STG.E [R10.64+0x10], R26 ;
[B------:R-:W-:-:S04] STG.E [R10.64+0x14], R20 ;
[B------:R-:W-:-:S04] ST.E [R10.64+0x18], R4 ;
[B------:R-:W-:-:S04] ST.E [R10.64+0x1c], R27 ;
[B------:R-:W-:-:S05] EXIT ;
`

// TestSimGenericWindows runs genericSrc on blocks of 1, 7, 129 and 1000
// threads over random words and checks every output against the
// definition of the generic windows (the expected values are the inputs,
// not the simulator's constants).
func TestSimGenericWindows(t *testing.T) {
	r := rand.New(rand.NewPCG(1401, 1402))
	p := asm(t, genericSrc)
	for _, n := range []int{1, 7, 129, 1000} {
		x := make([]uint32, n)
		for i := range x {
			x[i] = r.Uint32()
		}
		m := NewMemory()
		ax, ao, ac := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(8*n+8), 0), alloc(t, m, "cnt", []uint32{0}, 0)
		if _, err := Launch(p, Config{Grid: [3]int{2}, Block: [3]int{n}, SharedBytes: 0x1010, Memory: m,
			Params: params(ax, ao, ac), Poison: true}); err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		out := simWords(m.Bytes("out"))
		olds := make([]uint32, 0, n)
		for i := 0; i < n; i++ {
			// QSPC: P1 G of a global address, P2 S of a shared one, P3 L
			// of a local one; P4, P5, P6 ask the wrong space
			want := [8]uint32{x[i], x[i], x[i] + 1, 0b1110, uint32(2 * n), 0, x[i], x[i] >> 8 & 0xff}
			got := [8]uint32(out[8*i:])
			olds = append(olds, got[5])
			got[5] = 0
			if got != want {
				t.Fatalf("n=%d thread %d (x %#x): %#x, want %#x", n, i, x[i], got, want)
			}
		}
		// the global counter: both CTAs' threads each took one old value
		if c := simWords(m.Bytes("cnt"))[0]; c != uint32(2*n) {
			t.Fatalf("n=%d: global counter %d, want %d", n, c, 2*n)
		}
		slices.Sort(olds)
		for i := 1; i < n; i++ {
			if olds[i] == olds[i-1] || olds[i] >= uint32(2*n) {
				t.Fatalf("n=%d: generic global atomic returned old values %v", n, olds)
			}
		}
		checkPoison(t, fmt.Sprint("generic n=", n), out, 8*n)
	}
}

// TestSimGenericFaults checks that a generic access outside what its
// window maps faults, as a *Fault naming the instruction: past the CTA's
// shared bytes, below the thread's local window, in no global region
// (including the first address past the shared window), misaligned, and
// an atomic on the local window.
func TestSimGenericFaults(t *testing.T) {
	pro := `
[B------:R-:W-:-:S02] IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28] ;
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x1 ;
`
	shared := `
[B------:R-:W-:-:S04] MOV R2, 0x400 ;
[B------:R-:W-:-:S04] IADD3 R2, P0, R2, c[0x0][0x18], RZ ;
[B------:R-:W-:-:S04] IADD3.X R3, RZ, c[0x0][0x1c], RZ, P0, !PT ;
`
	local := `
[B------:R-:W-:-:S04] IADD3 R2, P0, R1, c[0x0][0x20], RZ ;
[B------:R-:W-:-:S04] IADD3.X R3, RZ, c[0x0][0x24], RZ, P0, !PT ;
`
	cases := []struct {
		name, src, text, detail string
		kind                    error
	}{
		{"shared window past the CTA's bytes", shared + "[B------:R-:W-:-:S04] ST.E [R2.64], R0 ;",
			"ST.E [R2.64], R0 ;", "shared address 0x400 (4 bytes) outside 1024 bytes", ErrOutOfBounds},
		{"shared window misaligned", shared + "[B------:R-:W-:-:S04] LD.E.64 R6, [R2.64+-0x3fc] ;",
			"LD.E.64 R6, [R2.64+-0x3fc] ;", "shared address 0x4 not a multiple of 8", ErrMisaligned},
		{"local window below the thread's", local + "[B------:R-:W-:-:S04] LD.E R6, [R2.64+-0x3c10] ;",
			"LD.E R6, [R2.64+-0x3c10] ;", "local address 0xffbff0", ErrOutOfBounds},
		{"first address past the local window", local + "[B------:R-:W-:-:S04] ST.E [R2.64+0x400], R0 ;",
			"ST.E [R2.64+0x400], R0 ;", "global address 0x7fff01000000 (4 bytes) in no region", ErrOutOfBounds},
		{"first address past the shared window", `
[B------:R-:W-:-:S04] MOV R2, 0x1000000 ;
[B------:R-:W-:-:S04] IADD3 R3, RZ, c[0x0][0x1c], RZ ;
[B------:R-:W-:-:S04] LD.E R6, [R2.64] ;`,
			"LD.E R6, [R2.64] ;", "global address 0x7ffe01000000 (4 bytes) in no region", ErrOutOfBounds},
		{"global in no region", `
[B------:R-:W-:-:S04] MOV R2, 0x1000 ;
[B------:R-:W-:-:S04] MOV R3, RZ ;
[B------:R-:W-:-:S04] ATOM.E.ADD.STRONG.GPU PT, R6, [R2.64], R5 ;`,
			"ATOM.E.ADD.STRONG.GPU PT, R6, [R2.64], R5 ;", "global address 0x1000 (4 bytes) in no region", ErrOutOfBounds},
		{"atomic on the local window", local + "[B------:R-:W-:-:S04] ATOM.E.ADD.STRONG.GPU PT, R6, [R2.64], R5 ;",
			"ATOM.E.ADD.STRONG.GPU PT, R6, [R2.64], R5 ;", "local window", ErrOutOfBounds},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := asm(t, pro+tc.src+"\n[B------:R-:W-:-:S05] EXIT ;")
			_, err := Launch(p, Config{Block: [3]int{32}, SharedBytes: 1024, Poison: true, Workers: 1})
			if !errors.Is(err, tc.kind) {
				t.Fatalf("got %v, want %v", err, tc.kind)
			}
			var f *Fault
			if !errors.As(err, &f) {
				t.Fatalf("not a *Fault: %T", err)
			}
			if f.Lane != 0 || f.Text != tc.text || !strings.Contains(f.Detail, tc.detail) {
				t.Fatalf("fault %+v", f)
			}
		})
	}
}

// TestSimGenericMapRefusesWindows: a region may not overlap a generic
// window (it could never be reached through a generic address).
func TestSimGenericMapRefusesWindows(t *testing.T) {
	m := NewMemory()
	for _, base := range []uint64{sharedWindow, sharedWindow - 8, localWindow + windowBytes - 4} {
		if err := m.Map("w", base, make([]byte, 16)); !errors.Is(err, ErrConfig) {
			t.Fatalf("Map at %#x: %v, want ErrConfig", base, err)
		}
	}
	if err := m.Map("ok", sharedWindow+windowBytes, make([]byte, 16)); err != nil {
		t.Fatalf("Map just past the shared window: %v", err)
	}
}
