package sim

import (
	"errors"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// poisonWords is an output buffer of n words of NaN bytes, so that a word
// the kernel should have written and did not is seen.
func poisonWords(n int) []uint32 {
	v := make([]uint32, n)
	for i := range v {
		v[i] = 0x7fc0dead
	}
	return v
}

// TestSimPtxasCollatz runs ptxas's collatz kernel: a grid-stride tail
// (threads past n return at once), a lane-dependent early branch for
// zero inputs and a data-dependent loop with two exits, all inside
// BSSY/BSYNC regions, on random inputs; every lane of a warp leaves the
// loop at a different trip. Bit for bit against Go.
func TestSimPtxasCollatz(t *testing.T) { corpus.ForSMs(t, simPtxasCollatz) }

func simPtxasCollatz(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(20, 21))
	for _, n := range []int{1, 7, 129, 1000} {
		x := make([]uint32, n)
		for i := range x {
			switch r.IntN(8) {
			case 0:
				x[i] = 0
			case 1:
				x[i] = uint32(r.IntN(4))
			default:
				x[i] = r.Uint32() >> r.IntN(32)
			}
		}
		m := NewMemory()
		ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(n+64), 0)
		grid := (n + 127) / 128
		if _, err := Launch(corpusKernel(t, "control", "collatz", sm), Config{Grid: [3]int{grid + 1}, Block: [3]int{128},
			Memory: m, Params: params(ax, ao, uint32(n)), Poison: true}); err != nil {
			t.Fatal(err)
		}
		out := simWords(m.Bytes("out"))
		for i, v := range x {
			want := uint32(0xffffffff)
			if v != 0 {
				steps := uint32(0)
				for v > 1 && steps < 300 {
					if v%2 == 0 {
						v /= 2
					} else {
						v = 3*v + 1
					}
					steps++
				}
				want = steps
			}
			if out[i] != want {
				t.Fatalf("n=%d: collatz(%#x) = %#x, want %#x", n, x[i], out[i], want)
			}
		}
		for i := n; i < len(out); i++ {
			if out[i] != 0x7fc0dead {
				t.Fatalf("n=%d: out[%d] = %#x written past n", n, i, out[i])
			}
		}
	}
}

// TestSimPtxasExitEarly runs ptxas's exit_early kernel: after a CTA
// barrier, the lanes with negative inputs store and exit on their own
// path, the others read a neighbour through shared memory and exit on
// another; eight warps, random signs per lane.
func TestSimPtxasExitEarly(t *testing.T) { corpus.ForSMs(t, simPtxasExitEarly) }

func simPtxasExitEarly(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(22, 23))
	const n = 256
	x := make([]uint32, n)
	for i := range x {
		x[i] = r.Uint32() >> r.IntN(31)
	}
	m := NewMemory()
	ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(n), 0)
	if _, err := Launch(corpusKernel(t, "control", "exit_early", sm), Config{Block: [3]int{n}, SharedBytes: 1024,
		Memory: m, Params: params(ax, ao), Poison: true}); err != nil {
		t.Fatal(err)
	}
	out := simWords(m.Bytes("out"))
	for i := range x {
		want := x[i^1] + x[i]
		if int32(x[i]) < 0 {
			want = -x[i]
		}
		if out[i] != want {
			t.Fatalf("exit_early[%d] (x %#x) = %#x, want %#x", i, x[i], out[i], want)
		}
	}
}

// TestSimPtxasFindFirst runs ptxas's find_first kernel: each lane scans
// its row and leaves the loop at its first hit (or at the row's end); the
// warp reconverges at WARPSYNC and takes a ballot of the lanes that hit.
// Two warps, rows of 13 words, keys present in some rows only.
func TestSimPtxasFindFirst(t *testing.T) { corpus.ForSMs(t, simPtxasFindFirst) }

func simPtxasFindFirst(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(24, 25))
	const threads, w, key = 64, 13, 5
	x := make([]uint32, threads*w)
	for i := range x {
		x[i] = uint32(r.IntN(40))
	}
	m := NewMemory()
	ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(2*threads), 0)
	if _, err := Launch(corpusKernel(t, "control", "find_first", sm), Config{Block: [3]int{threads},
		Memory: m, Params: params(ax, ao, uint32(w), uint32(key)), Poison: true}); err != nil {
		t.Fatal(err)
	}
	out := simWords(m.Bytes("out"))
	first := make([]uint32, threads)
	var ballot [2]uint32
	for i := range first {
		first[i] = 0xffffffff
		for k := 0; k < w; k++ {
			if x[i*w+k] == key {
				first[i] = uint32(k)
				ballot[i/32] |= 1 << (i % 32)
				break
			}
		}
	}
	if ballot[0] == 0 || ballot[0] == 0xffffffff {
		t.Fatalf("test data: ballot %#x does not diverge", ballot[0])
	}
	for i := range first {
		if got, want := [2]uint32(out[2*i:]), [2]uint32{first[i], ballot[i/32]}; got != want {
			t.Fatalf("find_first lane %d = %#x, want %#x", i, got, want)
		}
	}
}

func words64(v []uint64) []uint32 {
	out := make([]uint32, 2*len(v))
	for i, x := range v {
		out[2*i], out[2*i+1] = uint32(x), uint32(x>>32)
	}
	return out
}

// TestSimPtxasDivmod64 runs ptxas's 64-bit division: a branch per lane
// between the 32-bit fast path (both operands below 2^32) and CALL.REL.NOINC
// of the out-of-line 64-bit subroutine, which returns with RET.REL.NODEC
// through a register; operands of every magnitude mixed within each warp.
// Bit for bit against Go's division.
func TestSimPtxasDivmod64(t *testing.T) { corpus.ForSMs(t, simPtxasDivmod64) }

func simPtxasDivmod64(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(26, 27))
	const n = 256
	x, d := make([]uint64, n), make([]uint64, n)
	for i := range x {
		x[i] = r.Uint64() >> r.IntN(64)
		d[i] = r.Uint64() >> r.IntN(64)
		if d[i] == 0 || int64(d[i]) == -1 && int64(x[i]) == -1<<63 {
			d[i] = 7
		}
	}
	m := NewMemory()
	ax, ad, ao := alloc(t, m, "x", words64(x), 0), alloc(t, m, "d", words64(d), 0), alloc(t, m, "out", poisonWords(8*n), 0)
	if _, err := Launch(corpusKernel(t, "intmath", "divmod64", sm), Config{Block: [3]int{n}, Memory: m,
		Params: params(ax, ad, ao), Poison: true}); err != nil {
		t.Fatal(err)
	}
	out := simWords(m.Bytes("out"))
	for i := range x {
		want := words64([]uint64{x[i] / d[i], x[i] % d[i], uint64(int64(x[i]) / int64(d[i])), uint64(int64(x[i]) % int64(d[i]))})
		if got := [8]uint32(out[8*i:]); got != [8]uint32(want) {
			t.Fatalf("divmod64(%#x, %#x) = %#x, want %#x", x[i], d[i], got, want)
		}
	}
}

// TestSimPtxasIndex64 runs ptxas's index64 kernel: a grid-stride loop
// over a 64-bit count whose 64-bit remainder calls the division
// subroutine, with the grid smaller than n so that lanes take one or two
// trips; bit for bit against Go.
func TestSimPtxasIndex64(t *testing.T) { corpus.ForSMs(t, simPtxasIndex64) }

func simPtxasIndex64(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(28, 29))
	for _, n := range []int{1, 129, 1000} {
		in := make([]uint32, n)
		for i := range in {
			in[i] = r.Uint32()
		}
		stride, off := r.Uint64()>>r.IntN(64), r.Uint64()>>r.IntN(64)
		m := NewMemory()
		ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", poisonWords(n+8), 0)
		if _, err := Launch(corpusKernel(t, "intmath", "index64", sm), Config{Grid: [3]int{3}, Block: [3]int{192},
			Memory: m, Params: params(ai, ao, uint64(n), stride, off), Poison: true}); err != nil {
			t.Fatal(err)
		}
		out := simWords(m.Bytes("out"))
		for i := 0; i < n; i++ {
			v := uint64(i)*stride + off
			hi, _ := bits.Mul64(v, stride)
			want := (in[v%uint64(n)] + uint32(hi)) ^ uint32(v>>33^uint64(int64(v)>>7))
			if out[i] != want {
				t.Fatalf("n=%d: index64[%d] = %#x, want %#x", n, i, out[i], want)
			}
		}
		for i := n; i < len(out); i++ {
			if out[i] != 0x7fc0dead {
				t.Fatalf("n=%d: out[%d] = %#x written past n", n, i, out[i])
			}
		}
	}
}

// divSrc exercises the convergence machinery by hand: a four-way BRX
// (per-lane targets from tid&3) joined at BSYNC B0 and checked with
// WARPSYNC and a ballot; then nested BSSY B0/B1 where the odd lanes
// BREAK out of B1 and jump to B0's BSYNC, so that the even lanes pass
// BSYNC B1 alone (ballot of even lanes) and all meet at BSYNC B0.
const divSrc = `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x10 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R2, R0, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S05] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W-:-:S05] BSSY B0, 0x100 ;
[B------:R-:W-:-:S05] LOP3.LUT R6, R0, 0x3, RZ, 0xc0, !PT ;
[B------:R-:W-:-:S05] SHF.L.U32 R7, R6, 0x5, RZ ;
[B------:R-:W-:-:S05] BRX R7 0x0 ;
[B------:R-:W-:-:S05] MOV R8, 0x11 ;
[B------:R-:W-:-:S05] BRA 0x100 ;
[B------:R-:W-:-:S05] MOV R8, 0x22 ;
[B------:R-:W-:-:S05] BRA 0x100 ;
[B------:R-:W-:-:S05] MOV R8, 0x33 ;
[B------:R-:W-:-:S05] BRA 0x100 ;
[B------:R-:W-:-:S05] MOV R8, 0x44 ;
[B------:R-:W-:-:S05] BRA 0x100 ;
[B------:R-:W-:-:S05] BSYNC B0 ;
[B------:R-:W-:-:S05] WARPSYNC 0xffffffff ;
[B------:R-:W-:-:S05] VOTE.ANY R9, PT, PT ;
[B------:R-:W-:-:S05] MOV R10, RZ ;
[B------:R-:W-:-:S05] BSSY B0, 0x1d0 ;
[B------:R-:W-:-:S05] BSSY B1, 0x1b0 ;
[B------:R-:W-:-:S05] LOP3.LUT R13, R0, 0x1, RZ, 0xc0, !PT ;
[B------:R-:W-:-:S05] ISETP.NE.U32.AND P0, PT, R13, RZ, PT ;
[B------:R-:W-:-:S05] @P0 BREAK B1 ;
[B------:R-:W-:-:S05] @P0 BRA 0x1d0 ;
[B------:R-:W-:-:S05] MOV R10, 0x7 ;
[B------:R-:W-:-:S05] BSYNC B1 ;
[B------:R-:W-:-:S05] VOTE.ANY R11, PT, PT ;
[B------:R-:W-:-:S05] BSYNC B0 ;
[B------:R-:W-:-:S05] VOTE.ANY R12, PT, PT ;
[B------:R-:W-:-:S05] IADD3 R8, R8, R10, RZ ;
[B------:R-:W-:-:S05] STG.E [R2.64], R8 ;
[B------:R-:W-:-:S05] STG.E [R2.64+0x4], R9 ;
[B------:R-:W-:-:S05] @!P0 STG.E [R2.64+0x8], R11 ;
[B------:R-:W-:-:S05] STG.E [R2.64+0xc], R12 ;
[B------:R-:W-:-:S05] EXIT ;`

func TestSimDivergenceHandWritten(t *testing.T) {
	const threads = 48 // a full warp and a half one
	run := func(src string) ([]uint32, error) {
		m := NewMemory()
		a := alloc(t, m, "out", poisonWords(4*threads), 0)
		_, err := Launch(asm(t, src), Config{Block: [3]int{threads}, Memory: m, Params: params(a), Poison: true, Workers: 1})
		return simWords(m.Bytes("out")), err
	}
	out, err := run(divSrc)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < threads; i++ {
		live := uint32(0xffffffff)
		if i >= 32 {
			live = 0xffff
		}
		want := [4]uint32{0x11*uint32(i%4+1) + 7, live, live & 0x55555555, live}
		if i%2 == 1 {
			want[0], want[2] = 0x11*uint32(i%4+1), 0x7fc0dead
		}
		if got := [4]uint32(out[4*i:]); got != want {
			t.Fatalf("thread %d: %#x, want %#x", i, got, want)
		}
	}
	// Without the BREAK the even lanes wait at BSYNC B1 for the odd lanes,
	// which wait at BSYNC B0 for them.
	_, err = run(strings.Replace(divSrc, "@P0 BREAK B1 ;", "NOP ;", 1))
	if !errors.Is(err, ErrDeadlock) {
		t.Fatalf("without BREAK: got %v, want %v", err, ErrDeadlock)
	}
}

// TestSimPtxasLocalArray runs ptxas's local_array kernel: a per-thread
// 128-byte array in local memory (STL/LDL, a data-dependent index and a
// 128-bit load) on random inputs, bit for bit against Go.
func TestSimPtxasLocalArray(t *testing.T) { corpus.ForSMs(t, simPtxasLocalArray) }

func simPtxasLocalArray(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(34, 35))
	const n = 96
	x := make([]uint32, n)
	for i := range x {
		x[i] = r.Uint32() >> r.IntN(32)
	}
	m := NewMemory()
	ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(n), 0)
	if _, err := Launch(corpusKernel(t, "control", "local_array", sm), Config{Block: [3]int{n}, Memory: m,
		Params: params(ax, ao), Poison: true}); err != nil {
		t.Fatal(err)
	}
	out := simWords(m.Bytes("out"))
	for i, v := range x {
		var arr [32]uint32
		for k := range arr {
			arr[k] = uint32(k)*v + uint32(k)
		}
		s := uint32(0)
		for k := uint32(0); k < 32; k++ {
			s = s ^ arr[(k+v)&31] + k
		}
		s += arr[4] + arr[7]
		if out[i] != s {
			t.Fatalf("local_array(%#x) = %#x, want %#x", v, out[i], s)
		}
	}
}

// TestSimPtxasCalls runs ptxas's calls kernel: an out-of-line device
// function and a recursive one (a stack frame in local memory, the
// return address and the convergence barrier saved across the recursive
// call with STL and BMOV), bit for bit against Go. The recursion depth is
// the same in the lanes of a warp (it differs between the warps): with
// depths that differ within a warp, lanes of different activations meet
// at the same BSYNC, which this model does not separate; the BMOV that
// restores the barrier then reports ErrDivergent, checked last.
func TestSimPtxasCalls(t *testing.T) { corpus.ForSMs(t, simPtxasCalls) }

func simPtxasCalls(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(36, 37))
	const n = 64
	x := make([]uint32, n)
	for i := range x {
		x[i] = r.Uint32()&^7 | uint32(3+2*(i/32)) // recursion depth 3 in warp 0, 5 in warp 1
	}
	m := NewMemory()
	ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(n), 0)
	if _, err := Launch(corpusKernel(t, "control", "calls", sm), Config{Block: [3]int{n}, Memory: m,
		Params: params(ax, ao), Poison: true}); err != nil {
		t.Fatal(err)
	}
	var fact func(n uint32) uint32
	fact = func(n uint32) uint32 {
		if n <= 1 {
			return 1
		}
		return n * fact(n-1)
	}
	out := simWords(m.Bytes("out"))
	for i, v := range x {
		mix := bits.RotateLeft32(v*0x9e3779b1^uint32(i), 13) + v
		if want := mix + fact(v&7); out[i] != want {
			t.Fatalf("calls(%#x) lane %d = %#x, want %#x", v, i, out[i], want)
		}
	}
	for i := range x {
		x[i] = r.Uint32()
	}
	m = NewMemory()
	ax, ao = alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(n), 0)
	if _, err := Launch(corpusKernel(t, "control", "calls", sm), Config{Block: [3]int{n}, Memory: m,
		Params: params(ax, ao), Poison: true}); !errors.Is(err, ErrDivergent) {
		t.Fatalf("recursion depth diverged within a warp: got %v, want %v", err, ErrDivergent)
	}
}

// TestSimWarpSyncExclusive: WARPSYNC.EXCLUSIVE Ra reconverges a warp the
// odd lanes left by a branch as WARPSYNC Ra does (the ballot after it is
// the full warp), and a mask that differs across the lanes faults.
func TestSimWarpSyncExclusive(t *testing.T) {
	const src = `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R2, R0, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S05] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W-:-:S02] MASK ;
[B------:R-:W-:-:S05] LOP3.LUT R6, R0, 0x1, RZ, 0xc0, !PT ;
[B------:R-:W-:-:S13] ISETP.NE.U32.AND P0, PT, R6, RZ, PT ;
[B------:R-:W-:-:S05] @P0 BRA 0xa0 ;
[B------:R-:W-:-:S05] MOV R8, 0x1 ;
[B------:R-:W-:-:S05] BRA 0xb0 ;
[B------:R-:W-:-:S05] MOV R8, 0x2 ;
[B------:R-:W-:-:S05] WARPSYNC.EXCLUSIVE R4 ;
[B------:R-:W-:-:S05] VOTE.ANY R9, PT, PT ;
[B------:R-:W-:-:S05] IADD3 R9, R9, R8, RZ ;
[B------:R-:W-:-:S05] STG.E [R2.64], R9 ;
[B------:R-:W-:-:S05] EXIT ;`
	run := func(mask string) ([]uint32, error) {
		m := NewMemory()
		a := alloc(t, m, "out", poisonWords(32), 0)
		_, err := Launch(asm(t, strings.Replace(src, "MASK", mask, 1)), Config{Block: [3]int{32}, Memory: m, Params: params(a), Poison: true})
		return simWords(m.Bytes("out")), err
	}
	out, err := run("MOV R4, 0xffffffff")
	if err != nil {
		t.Fatal(err)
	}
	for l, v := range out {
		if want := 0xffffffff + uint32(1+l%2); v != want {
			t.Fatalf("lane %d: %#x, want %#x", l, v, want)
		}
	}
	if _, err := run("MOV R4, R0"); !errors.Is(err, ErrDivergent) {
		t.Fatalf("a mask per lane: %v, want %v", err, ErrDivergent)
	}
}
