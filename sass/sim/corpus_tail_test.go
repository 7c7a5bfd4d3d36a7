package sim

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/x448/float16"

	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// The corpus kernels of tail_float.ptx, tail_int.ptx, tail_mem.ptx and
// tail_misc.ptx run in the simulator on random inputs against plainly
// written Go references of their PTX (issue #14), on the sm_86 and the
// sm_89 cubin. A kernel whose SASS holds a form the decoder or the
// simulator does not model yet skips through launchCorpus, naming the
// word; its reference is written from the PTX semantics and has not been
// run: when the form lands, a failure may be the reference's.

// randTailWord is a random word biased to the edges of the integer
// ranges: zero, one, the extreme signed and unsigned values, and random
// magnitudes of every width.
func randTailWord(r *rand.Rand) uint32 {
	if r.IntN(5) == 0 {
		return []uint32{0, 1, 0x7fffffff, 0x80000000, 0xffffffff}[r.IntN(5)]
	}
	v := r.Uint32() >> r.IntN(32)
	if r.IntN(2) == 0 {
		v = -v
	}
	return v
}

// tailBfe is PTX bfe on a width-bit value a: the field of length ln at pos
// (both taken mod 256), zero-extended, or sign-extended from the field's
// top bit (from a's top bit when the field runs past it); a zero length
// gives zero.
func tailBfe(a uint64, pos, ln uint32, width int, signed bool) uint64 {
	pos, ln = pos&0xff, ln&0xff
	msb := uint32(width - 1)
	if ln == 0 {
		return 0
	}
	var sbit uint64
	if signed {
		sbit = a >> min(pos+ln-1, msb) & 1
	}
	var d uint64
	for i := uint32(0); i <= msb; i++ {
		b := sbit
		if i < ln && pos+i <= msb {
			b = a >> (pos + i) & 1
		}
		d |= b << i
	}
	return d
}

// tailBfi is PTX bfi: b with the low ln bits of a inserted at pos (both
// mod 256), bits past the width dropped.
func tailBfi(a, b uint64, pos, ln uint32, width int) uint64 {
	pos, ln = pos&0xff, ln&0xff
	for i := uint32(0); i < ln && pos+i < uint32(width); i++ {
		b = b&^(1<<(pos+i)) | (a>>i&1)<<(pos+i)
	}
	return b
}

// tailPrmt is PTX prmt: mode "" takes four selector nibbles of c (bit 3
// replicates the chosen byte's sign), the named modes take c's low two
// bits; bytes 0..3 come from a, 4..7 from b.
func tailPrmt(mode string, a, b, c uint32) uint32 {
	src := uint64(b)<<32 | uint64(a)
	byt := func(k uint32) uint32 { return uint32(src >> (8 * (k & 7)) & 0xff) }
	s := c & 3
	var sel [4]uint32 // byte k of the result takes source byte sel[k]
	switch mode {
	case "":
		var d uint32
		for k := 0; k < 4; k++ {
			nib := c >> (4 * k) & 0xf
			v := byt(nib)
			if nib&8 != 0 {
				v = 0
				if byt(nib&7)&0x80 != 0 {
					v = 0xff
				}
			}
			d |= v << (8 * k)
		}
		return d
	case "f4e":
		sel = [4]uint32{s, s + 1, s + 2, s + 3}
	case "b4e":
		sel = [4]uint32{s, s - 1, s - 2, s - 3}
	case "rc8":
		sel = [4]uint32{s, s, s, s}
	case "ecl":
		sel = [4]uint32{s, max(s, 1), max(s, 2), 3}
	case "ecr":
		sel = [4]uint32{0, min(s, 1), min(s, 2), s}
	case "rc16":
		lo := 2 * (s & 1)
		sel = [4]uint32{lo, lo + 1, lo, lo + 1}
	default:
		panic(mode)
	}
	var d uint32
	for k, v := range sel {
		d |= byt(v) << (8 * k)
	}
	return d
}

// tailBfind is PTX bfind on a width-bit value: the position of the most
// significant bit that differs from the sign (signed) or is set
// (unsigned), or with shiftamt the left shift that brings it to the top;
// 0xffffffff when there is none.
func tailBfind(a uint64, width int, signed, shiftamt bool) uint32 {
	if signed && a>>(width-1)&1 != 0 {
		a = ^a
	}
	if width == 32 {
		a &= 0xffffffff
	}
	if a == 0 {
		return 0xffffffff
	}
	pos := uint32(63 - bits.LeadingZeros64(a))
	if shiftamt {
		return uint32(width-1) - pos
	}
	return pos
}

// TestSimPtxasTailBits runs ptxas's bits kernel: bfe/bfi with register and
// immediate fields, every prmt mode, clz/bfind/popc/brev and bfe/bfi on 64
// bits; blocks of 1, 7, 129 and 1000 threads. Bit for bit against Go.
func TestSimPtxasTailBits(t *testing.T) { corpus.ForSMs(t, simPtxasTailBits) }

func simPtxasTailBits(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(140, 141))
	for _, n := range []int{1, 7, 129, 1000} {
		x := make([]uint32, 4*n)
		for i := range x {
			x[i] = randTailWord(r)
		}
		m := NewMemory()
		ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(6*n+6), 0)
		launchCorpus(t, "tail_int", "bits", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ax, ao), Poison: true})
		out := simWords(m.Bytes("out"))
		for i := 0; i < n; i++ {
			r2, r3, r4, r5 := x[4*i], x[4*i+1], x[4*i+2], x[4*i+3]
			r6, r7 := r4&31, r5&15
			r21 := uint32(tailBfe(uint64(r2), r6, r7, 32, false)) + uint32(tailBfe(uint64(r3), r6, r7, 32, true))
			r21 += uint32(tailBfe(uint64(r2), 5, 9, 32, false))
			r21 ^= uint32(tailBfe(uint64(r3), 3, 13, 32, true))
			r21 += uint32(tailBfi(uint64(r2), uint64(r3), r6, r7, 32))
			r21 ^= uint32(tailBfi(uint64(r4), uint64(r5), 8, 8, 32))
			r22 := tailPrmt("f4e", r2, r3, r4) + tailPrmt("b4e", r2, r3, r5)
			r22 ^= tailPrmt("rc8", r2, r3, r4)
			r22 += tailPrmt("ecl", r2, r3, r5)
			r22 ^= tailPrmt("ecr", r2, r3, r4)
			r22 += tailPrmt("rc16", r2, r3, r5)
			r22 ^= tailPrmt("", r2, r3, 0x3201)
			rd5, rd6 := uint64(r3)<<32|uint64(r2), uint64(r5)<<32|uint64(r4)
			r30 := uint32(bits.LeadingZeros64(rd5)) + tailBfind(rd5, 64, false, false) + tailBfind(rd6, 64, true, false)
			r30 += tailBfind(rd6, 64, false, true) + uint32(bits.OnesCount64(rd5))
			r30 += uint32(bits.LeadingZeros32(r2)) + tailBfind(uint64(r3), 32, true, true)
			rd11 := bits.Reverse64(rd6) ^ tailBfe(rd5, r6, r7, 64, false) ^ tailBfe(rd6, r6, r7, 64, true) ^ tailBfi(rd5, rd6, r6, r7, 64)
			want := [6]uint32{r21, r22, r30, 0x7fc0dead, uint32(rd11), uint32(rd11 >> 32)}
			if got := [6]uint32(out[6*i:]); got != want {
				t.Fatalf("n=%d thread %d, x=%#x: %#x, want %#x", n, i, x[4*i:4*i+4], got, want)
			}
		}
		checkPoison(t, fmt.Sprint("bits n=", n), out, 6*n)
	}
}

// TestSimPtxasTailWide runs ptxas's wide kernel: 64-bit min/max/abs/neg,
// mul.hi.u64/.s64, 64-bit shifts by a register, saturating 32-bit add and
// subtract, mul.hi.s32/.u32 and the special registers; blocks of 1, 7,
// 129 and 1000 threads. The integer results are compared bit for bit. The
// clock and timer reads are the simulator's step count (doc.go), not a
// value Go can predict: the lane masks, %laneid, %warpid, %smid, %nsmid
// and %dynamic_smem_size (0 in the simulator: one virtual SM, no dynamic
// shared memory) are taken out of the combined word exactly, and the
// %clock that remains must be one value for the warp (ptxas reads it with
// S2UR), as must %clock64 + %globaltimer.
func TestSimPtxasTailWide(t *testing.T) { corpus.ForSMs(t, simPtxasTailWide) }

func simPtxasTailWide(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(142, 143))
	for _, n := range []int{1, 7, 129, 1000} {
		x := make([]uint64, 2*n)
		for i := range x {
			x[i] = uint64(randTailWord(r))<<32 | uint64(randTailWord(r))
			if r.IntN(4) == 0 {
				x[i] = uint64(int64(int32(randTailWord(r)))) // sign-extended small values
			}
		}
		m := NewMemory()
		ax, ao := alloc(t, m, "x", words64(x), 0), alloc(t, m, "out", poisonWords(8*n+8), 0)
		launchCorpus(t, "tail_int", "wide", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ax, ao), Poison: true})
		out := simWords(m.Bytes("out"))
		sat := func(v int64) uint32 { return uint32(int32(max(math.MinInt32, min(math.MaxInt32, v)))) }
		clock, timer := map[int]uint32{}, map[int]uint64{}
		for i := 0; i < n; i++ {
			rd5, rd6 := x[2*i], x[2*i+1]
			rd7 := uint64(min(int64(rd5), int64(rd6)))
			rd8 := max(rd5, rd6)
			rd9 := rd5
			if int64(rd5) < 0 {
				rd9 = -rd5
			}
			rd10 := -rd6
			rd11, _ := bits.Mul64(rd5, rd6)
			rd12 := rd11
			if int64(rd5) < 0 {
				rd12 -= rd6
			}
			if int64(rd6) < 0 {
				rd12 -= rd5
			}
			r2, r4 := uint32(rd6), uint32(rd5)
			r3 := r2 & 63
			rd13, rd14, rd15 := rd5<<r3, uint64(int64(rd6)>>r3), rd5>>r3
			r5 := sat(int64(int32(r4)) + int64(int32(r2)))
			r6 := sat(int64(int32(r4)) - int64(int32(r2)))
			r7 := uint32(int64(int32(r4)) * int64(int32(r2)) >> 32)
			r8, _ := bits.Mul32(r4, r2)
			r9 := min(r4, r2)
			r10 := uint32(max(int32(r4), int32(r2)))
			r11 := r4
			if int32(r4) < 0 {
				r11 = -r4
			}
			rd18, rd19 := rd8, rd10
			if int64(rd5) < int64(rd6) {
				rd18 = rd7
			}
			if rd5 >= rd6 {
				rd19 = rd9
			}
			rd20 := ((((rd11 ^ rd12) + rd13) ^ rd14) + rd15 + rd18) ^ rd19
			r20 := (((((r5 + r6) ^ r7) + r8) ^ r9) + r10) ^ r11
			want := [5]uint32{uint32(rd20), uint32(rd20 >> 32), 0x7fc0dead, 0x7fc0dead, r20}
			if got := [5]uint32{out[8*i], out[8*i+1], out[8*i+6], out[8*i+7], out[8*i+4]}; got != want {
				t.Fatalf("n=%d thread %d, x=%#x: words 0,1,6,7,4 = %#x, want %#x", n, i, x[2*i:2*i+2], got, want)
			}
			// r21 = ((((((clock + lt) ^ ge) + warpid) ^ smid) + nsmid) ^ laneid) + dynamic_smem_size
			lane := uint32(i % 32)
			lt := uint32(1)<<lane - 1
			const warpid, smid, nsmid, dyn = 0, 0, 0, 0
			c := (((((out[8*i+5] - dyn) ^ lane) - nsmid) ^ smid) - warpid) ^ ^lt - lt
			w := i / 32
			if v, ok := clock[w]; ok && v != c {
				t.Fatalf("n=%d thread %d: %%clock %#x differs from its warp's %#x (r21 = %#x)", n, i, c, v, out[8*i+5])
			}
			clock[w] = c
			tt := uint64(out[8*i+3])<<32 | uint64(out[8*i+2])
			if v, ok := timer[w]; ok && v != tt {
				t.Fatalf("n=%d thread %d: %%clock64 + %%globaltimer %#x differs from its warp's %#x", n, i, tt, v)
			}
			timer[w] = tt
		}
		checkPoison(t, fmt.Sprint("wide n=", n), out, 8*n)
	}
}

// TestSimPtxasTailSimd runs ptxas's simd kernel: sad, the video
// instructions (vabsdiff with .add, vabsdiff4/vabsdiff2 reductions, vmax,
// vmin.max, vadd.sat, vsub.sat, vshl.clamp, vshr.wrap, vset), dp4a and
// dp2a of every signedness, mul24/mad24 lo and hi; blocks of 1, 7, 129
// and 1000 threads. Bit for bit against Go.
func TestSimPtxasTailSimd(t *testing.T) { corpus.ForSMs(t, simPtxasTailSimd) }

// tailSimdRef is the simd kernel's three output words for inputs r2..r5.
func tailSimdRef(r2, r3, r4, r5 uint32) [3]uint32 {
	s, u := func(v uint32) int64 { return int64(int32(v)) }, func(v uint32) int64 { return int64(v) }
	absd := func(a, b int64) int64 { return max(a-b, b-a) }
	b8 := func(v uint32, k int, signed bool) int64 {
		if signed {
			return int64(int8(v >> (8 * k)))
		}
		return int64(uint8(v >> (8 * k)))
	}
	h16 := func(v uint32, k int, signed bool) int64 {
		if signed {
			return int64(int16(v >> (16 * k)))
		}
		return int64(uint16(v >> (16 * k)))
	}
	dp4a := func(a, b, c uint32, sa, sb bool) uint32 {
		sum := int64(c)
		for k := 0; k < 4; k++ {
			sum += b8(a, k, sa) * b8(b, k, sb)
		}
		return uint32(sum)
	}
	dp2a := func(a, b, c uint32, hi, signed bool) uint32 {
		o := 0
		if hi {
			o = 2
		}
		return uint32(int64(c) + h16(a, 0, signed)*b8(b, o, signed) + h16(a, 1, signed)*b8(b, o+1, signed))
	}
	m24 := func(a, b uint32, signed bool) int64 {
		if signed {
			return int64(int32(a<<8)>>8) * int64(int32(b<<8)>>8)
		}
		return int64(a&0xffffff) * int64(b&0xffffff)
	}
	r6 := uint32(absd(u(r2), u(r3)) + u(r4))
	r7 := uint32(absd(s(r3), s(r4)) + u(r5))
	r8 := uint32(absd(u(r2), u(r3))) + r5
	r9 := uint32(absd(s(r2), s(r3)))
	r10 := r4
	for k := 0; k < 4; k++ {
		r10 += uint32(absd(b8(r2, k, false), b8(r3, k, false)))
	}
	r11 := r5
	for k := 0; k < 2; k++ {
		r11 += uint32(absd(h16(r2, k, true), h16(r3, k, true)))
	}
	r12, r13, r14 := dp4a(r2, r3, r4, false, false), dp4a(r2, r3, r5, true, true), dp4a(r3, r4, r2, true, false)
	r15, r16 := dp2a(r2, r3, r4, false, false), dp2a(r2, r3, r5, true, true)
	r17, r18 := uint32(m24(r2, r3, false)), uint32(m24(r3, r4, true))
	r19, r20 := uint32(m24(r2, r3, false))+r4, uint32(m24(r3, r4, true))+r5
	r21, r22 := uint32(m24(r2, r5, false)>>16), uint32(m24(r3, r5, true)>>16)
	r23 := uint32(max(int32(r2), int32(r3)))
	r24 := max(min(r2, r3), r4)
	// vadd.u32.u32.u32.sat: ptxas 11.8 clamps the 64-bit sum at 0 only
	// (SEL R6, RZ, 0xffffffff, !P3 on the sum's high word, then the low
	// word masked by it), so an unsigned sum past 2^32 wraps
	r25 := uint32(max(u(r2)+u(r3), 0))
	r26 := uint32(int32(max(math.MinInt32, min(math.MaxInt32, s(r4)-s(r5)))))
	r27 := uint32(uint64(r2) << min(r5, 32))
	r28 := uint32(int32(r3) >> (r4 & 31))
	var r29 uint32
	if r2 < r3 {
		r29 = 1
	}
	r30 := (((((((r6 + r7) ^ r8) + r9) ^ r10) + r11) ^ r12) + r13) ^ r14
	r31 := ((((((r15 + r16) ^ r17) + r18) ^ r19) + r20) ^ r21) + r22
	r32 := (((((r23 + r24) ^ r25) + r26) ^ r27) + r28) ^ r29
	return [3]uint32{r30, r31, r32}
}

func simPtxasTailSimd(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(146, 147))
	for _, n := range []int{1, 7, 129, 1000} {
		x := make([]uint32, 4*n)
		for i := range x {
			x[i] = randTailWord(r)
			if r.IntN(4) == 0 {
				x[i] = r.Uint32N(40) // shift counts below and above 32
			}
		}
		m := NewMemory()
		ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(3*n+3), 0)
		launchCorpus(t, "tail_int", "simd", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ax, ao), Poison: true})
		out := simWords(m.Bytes("out"))
		for i := 0; i < n; i++ {
			want := tailSimdRef(x[4*i], x[4*i+1], x[4*i+2], x[4*i+3])
			if got := [3]uint32(out[3*i:]); got != want {
				t.Fatalf("n=%d thread %d, x=%#x: %#x, want %#x", n, i, x[4*i:4*i+4], got, want)
			}
		}
		checkPoison(t, fmt.Sprint("simd n=", n), out, 3*n)
	}
}

// TestSimPtxasTailWarp runs ptxas's warp kernel: bar.red.popc/.and/.or
// over the CTA, bar.arrive/bar.sync on a 64-thread named barrier, redux
// of every operation, shfl idx/down/up/bfly (one with a segment mask),
// activemask, match.all, match.any.b64, vote.uni and a ballot. Blocks of
// 64, 128 and 192 threads (whole warps: the 64-thread barrier needs the
// threads past 63 to come in groups of 64); warps of mixed predicates,
// one whose lanes hold one value, and a CTA whose predicates are all
// true. Bit for bit against Go.
func TestSimPtxasTailWarp(t *testing.T) { corpus.ForSMs(t, simPtxasTailWarp) }

// tailWarpRef is the warp kernel's output for the CTA's inputs x.
func tailWarpRef(x []uint32) []uint32 {
	n := len(x)
	p1 := func(i int) bool { return x[i] > 100 }
	popc, all, any := uint32(0), true, false
	for i := range x {
		if p1(i) {
			popc++
			any = true
		} else {
			all = false
		}
	}
	b2u := func(b bool, v uint32) uint32 {
		if b {
			return v
		}
		return 0
	}
	out := make([]uint32, n)
	for w := 0; w < n; w += 32 {
		v := x[w : w+32]
		add, umin, smax, and, or, xor := uint32(0), uint32(math.MaxUint32), int32(math.MinInt32), ^uint32(0), uint32(0), uint32(0)
		ballot, allEq := uint32(0), true
		for l, e := range v {
			add += e
			umin, smax = min(umin, e), max(smax, int32(e))
			and, or, xor = and&e, or|e, xor^e
			if p1(w + l) {
				ballot |= 1 << l
			}
			allEq = allEq && e == v[0]
		}
		uni := ballot == 0 || ballot == math.MaxUint32
		for l := 0; l < 32; l++ {
			r11 := v[l] // idx by tid: lane l
			r12 := v[l]
			if l+4 <= 31 {
				r12 = v[l+4]
			}
			r13 := v[l]
			if l >= 1 {
				r13 = v[l-1]
			}
			r14 := v[l^16]
			r15 := v[l&8|3] // segment mask 8: lane (l & 8) | 3
			r16 := b2u(allEq, math.MaxUint32)
			r17 := uint32(1) << l // match.any on distinct addresses
			s := popc + math.MaxUint32 + add + umin + uint32(smax) + and + or + xor
			s += r11 + r12 + r13 + r14 + r15 + r16 + r17 + ballot
			s += b2u(all, 1) + b2u(any, 2) + 4 + b2u(allEq, 8) + b2u(uni, 16)
			out[w+l] = s
		}
	}
	return out
}

func simPtxasTailWarp(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(150, 151))
	for _, n := range []int{64, 128, 192} {
		x := make([]uint32, n)
		same := 90 + r.Uint32N(20)
		for i := range x {
			switch {
			case n == 64:
				x[i] = 101 + r.Uint32N(1000) // every predicate true
			case i/32 == 1:
				x[i] = same // one value: match.all, vote.uni
			default:
				x[i] = r.Uint32N(200)
			}
			if r.IntN(8) == 0 && n != 64 && i/32 != 1 {
				x[i] = r.Uint32()
			}
		}
		m := NewMemory()
		ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(n+1), 0)
		launchCorpus(t, "tail_mem", "warp", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ax, ao), Poison: true})
		out := simWords(m.Bytes("out"))
		want := tailWarpRef(x)
		for i := range want {
			if out[i] != want[i] {
				t.Fatalf("n=%d thread %d (x %#x): %#x, want %#x", n, i, x[i], out[i], want[i])
			}
		}
		checkPoison(t, fmt.Sprint("warp n=", n), out, n)
	}
}

// TestSimPtxasTailGen runs ptxas's gen kernel: generic loads of 8, 16,
// 32 and 64 bits (the v2 load at byte 8 of the thread's 16: the corpus
// kernel first read it at byte 4, a misaligned address the hardware and
// the simulator fault on), volatile/relaxed/acquire and cache-operator loads,
// prefetches, isspacep on a global address, a shared slot written and
// read back through a generic (cvta) address and through ld.shared after
// a barrier, then volatile/release/relaxed/write-through stores, an
// st.u16 and a generic st.v2 over them; fences and nanosleep. Blocks of
// 1, 7, 129 and 256 threads (the kernel's shared array has 256 words).
// The final output words are compared bit for bit; the kernel's sum
// (its trap and brkpt guards) is kept off their trigger values.
func TestSimPtxasTailGen(t *testing.T) { corpus.ForSMs(t, simPtxasTailGen) }

func simPtxasTailGen(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(152, 153))
	for _, n := range []int{1, 7, 129, 256} {
		x := make([]uint32, 4*n)
		for i := range x {
			x[i] = randTailWord(r)
		}
		for i := 0; i < n; i++ {
			w := x[4*i : 4*i+4]
			for {
				// r26: every value the thread loaded, its shared
				// slot twice, isspacep's flags (global: 1)
				s := w[0] + w[2] + w[3] + w[3]&0xff + uint32(int32(int16(w[3]>>16)))
				s += w[0] + w[1] + w[2] + w[3] + w[0] + w[1] + w[2] + w[3] + w[1] + w[2] + w[3] + w[0]
				s += w[0] + w[0] + 1
				if s != 12345 && s != 54321 {
					break
				}
				w[0]++
			}
		}
		m := NewMemory()
		ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(4*n+4), 0)
		launchCorpus(t, "tail_mem", "gen", sm, Config{Block: [3]int{n}, SharedBytes: 1024, Memory: m, Params: params(ax, ao), Poison: true})
		out := simWords(m.Bytes("out"))
		for i := 0; i < n; i++ {
			w := x[4*i : 4*i+4]
			want := [4]uint32{uint32(int32(int16(w[3] >> 16))), w[0], w[2], w[3]&0xffff0000 | w[3]&0xff}
			if got := [4]uint32(out[4*i:]); got != want {
				t.Fatalf("n=%d thread %d (x %#x): %#x, want %#x", n, i, w, got, want)
			}
		}
		checkPoison(t, fmt.Sprint("gen n=", n), out, 4*n)
	}
}

// TestSimPtxasTailMisc runs tail_misc.ptx's misc kernel: an indirect call
// through a function pointer chosen per thread (twice or thrice: their
// offsets in the kernel's section from its constant bank 2, bound as the
// runtime's loader binds it), funnel
// shifts (wrap and clamp), add/sub/mad carry chains, mad.hi.s32,
// mad.wide.s32 and 64-bit multiplies on the thread's own address, f16
// round-to-integer (rni, rzi), min/max.xorsign.abs on f16x2 and bf16x2,
// bf16 abs, f16 neg and lop3; blocks of 1, 7, 129 and 1000 threads. The
// half lanes hold no NaN (the canonical NaN these forms return is not
// pinned down here); infinities, zeros of both signs and subnormals are
// among them. Bit for bit against Go.
func TestSimPtxasTailMisc(t *testing.T) { corpus.ForSMs(t, simPtxasTailMisc) }

// tailXorsignAbs is min/max.xorsign.abs on one 16-bit f16 or bf16 lane
// holding no NaN: the smaller (larger) magnitude, whose bits order as its
// value, with the sign the two signs' exclusive or.
func tailXorsignAbs(a, b uint16, isMax bool) uint16 {
	m, mb := a&0x7fff, b&0x7fff
	if isMax && mb > m || !isMax && mb < m {
		m = mb
	}
	return m | (a^b)&0x8000
}

func simPtxasTailMisc(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(154, 155))
	half := func() uint32 {
		for {
			h := uint16(r.Uint32())
			switch r.IntN(6) {
			case 0:
				h = []uint16{0, 0x8000, 0x7c00, 0xfc00, 0x0001, 0x83ff, 0x3800, 0xb800, 0x3e00, 0x4100}[r.IntN(10)]
			case 1:
				h = h&0x8000 | uint16(0x3800+r.IntN(0x1000)) // 0.5 .. 4: rounding to integers matters
			}
			if h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
				return uint32(h)
			}
		}
	}
	hmag := func(h uint16) float64 { return float64(float16.Frombits(h).Float32()) }
	for _, n := range []int{1, 7, 129, 1000} {
		x := make([]uint32, 4*n)
		for i := range x {
			x[i] = half() | half()<<16
			if r.IntN(3) == 0 {
				x[i] = randTailWord(r)
				if x[i]&0x7c00 == 0x7c00 || x[i]&0x7c000000 == 0x7c000000 || x[i]&0x7f80 == 0x7f80 || x[i]&0x7f800000 == 0x7f800000 {
					x[i] &^= 0x40004000 // no NaN in any half, f16 or bf16
				}
			}
		}
		m := NewMemory()
		ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(4*n+4), 0)
		launchCorpus(t, "tail_misc", "misc", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ax, ao),
			Banks: map[uint8][]byte{2: constBank(t, "tail_misc", "misc", sm, 2)}, Poison: true})
		out := simWords(m.Bytes("out"))
		for i := 0; i < n; i++ {
			r2, r3, r4, r5 := x[4*i], x[4*i+1], x[4*i+2], x[4*i+3]
			rd3, rd4 := uint64(16*i), ax+uint64(16*i)
			r6 := r4 * 2
			if r2 < r3 {
				r6 = r4 * 3
			}
			funnel := func(lo, hi uint32) uint64 { return uint64(hi)<<32 | uint64(lo) }
			r7 := uint32(funnel(r2, r3) << (r4 & 31) >> 32)
			r8 := uint32(funnel(r2, r3) >> min(r5, 32))
			r9 := uint32(funnel(r3, r4) >> (r5 & 31))
			r10, c := bits.Add32(r2, r3, 0)
			r11, c := bits.Add32(r4, r5, c)
			r12 := r2 + c
			r13, b := bits.Sub32(r2, r3, 0)
			r14, _ := bits.Sub32(r4, r5, b)
			hi, lo := bits.Mul32(r2, r3)
			r15, c := bits.Add32(lo, r4, 0)
			r16 := hi + r5 + c
			r17 := uint32(int64(int32(r3))*int64(int32(r4))>>32) + r5
			rd5 := uint64(int64(int32(r2))*int64(int32(r3))) + rd3
			rd6 := rd5 * rd4
			rd7 := rd6*rd5 + rd4
			h1, h2, h3 := uint16(r2), uint16(r3), uint16(r3>>16)
			rnd := func(h uint16, f func(float64) float64) uint16 {
				v := float16.Fromfloat32(float32(f(hmag(h))))
				return v.Bits()
			}
			h4, h5 := rnd(h2, math.RoundToEven), rnd(h3, math.Trunc)
			var r18, r19 uint32
			for k := 0; k < 2; k++ {
				r18 |= uint32(tailXorsignAbs(uint16(r2>>(16*k)), uint16(r3>>(16*k)), false)) << (16 * k)
				r19 |= uint32(tailXorsignAbs(uint16(r4>>(16*k)), uint16(r5>>(16*k)), true)) << (16 * k)
			}
			h6, h7 := h1&0x7fff, h4^0x8000
			r20, r21 := uint32(h4)|uint32(h5)<<16, uint32(h6)|uint32(h7)<<16
			r22 := r2 ^ r3 ^ r4
			r23 := r6 + r7 + r8 + r9 + r10 + r11 + r12 + r13 + r14 + r15 + r16 + r17 + r18 + r19 + r20 + r21 + r22
			rd8 := rd5 + rd6 + rd7
			want := [4]uint32{r23, 0x7fc0dead, uint32(rd8), uint32(rd8 >> 32)}
			if got := [4]uint32(out[4*i:]); got != want {
				t.Fatalf("n=%d thread %d (x %#x): %#x, want %#x", n, i, x[4*i:4*i+4], got, want)
			}
		}
		checkPoison(t, fmt.Sprint("misc n=", n), out, 4*n)
	}
}

// TestSimPtxasTailMem2 runs tail_misc.ptx's mem2 kernel: cp.async of 4
// and 8 bytes into shared memory, a shared f32 add, f64 add, 64-bit CAS
// and max.s64 on the thread's own slots, createpolicy with cache-hinted
// loads and stores, L1 eviction and no-allocate loads and stores,
// prefetches with eviction priorities, applypriority and discard (whose
// lines lie past the input and are not read). The thread's slots are
// bytes 8t and 1024+8t, past the kernel's 1024-byte array, so the
// launch gives 1024+8n bytes and n is at most 128 (129 would share a
// slot). Blocks of 1, 7, 100 and 128; the returned words and the input
// region (the kernel stores into it) are compared bit for bit. The f64
// inputs are finite, so the CAS (compare with 16t) never matches and the
// max sees the sum the add left.
func TestSimPtxasTailMem2(t *testing.T) { corpus.ForSMs(t, simPtxasTailMem2) }

func simPtxasTailMem2(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(156, 157))
	for _, n := range []int{1, 7, 100, 128} {
		const pad = (2048 + 128) / 4 // discard's lines past the last thread's input
		x := make([]uint32, 4*n+pad)
		for i := range x {
			x[i] = r.Uint32()
		}
		for i := 0; i < n; i++ {
			d := math.Float64bits((r.Float64() - 0.5) * math.Exp2(float64(r.IntN(80)-40)))
			x[4*i+2], x[4*i+3] = uint32(d), uint32(d>>32)
		}
		m := NewMemory()
		ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(4*n+4), 0)
		launchCorpus(t, "tail_misc", "mem2", sm, Config{Block: [3]int{n}, SharedBytes: 1024 + 8*n, Memory: m,
			Params: params(ax, ao), Poison: true})
		out, in := simWords(m.Bytes("out")), simWords(m.Bytes("x"))
		for i := 0; i < n; i++ {
			w := x[4*i : 4*i+4]
			d := math.Float64frombits(uint64(w[3])<<32 | uint64(w[2]))
			sum := math.Float64bits(d + 1) // the add's result, which the CAS returns and leaves
			r10 := w[0] + w[2] + w[3] + w[0] + w[0] + w[1]
			rd9 := math.Float64bits(d) + sum + sum
			want := [4]uint32{r10, 0x7fc0dead, uint32(rd9), uint32(rd9 >> 32)}
			if got := [4]uint32(out[4*i:]); got != want {
				t.Fatalf("n=%d thread %d (x %#x): %#x, want %#x", n, i, w, got, want)
			}
			if got, want := [4]uint32(in[4*i:]), [4]uint32{w[0], w[0], w[2], w[2]}; got != want {
				t.Fatalf("n=%d thread %d: input after the kernel %#x, want %#x", n, i, got, want)
			}
		}
		for i := 4 * n; i < len(x); i++ {
			if in[i] != x[i] {
				t.Fatalf("n=%d: input word %d past the threads' changed to %#x", n, i, in[i])
			}
		}
		checkPoison(t, fmt.Sprint("mem2 n=", n), out, 4*n)
	}
}

// TestSimPtxasTailFdiv runs tail_float.ptx's fdiv kernel: IEEE div.rn,
// sqrt.rn and rcp.rn in binary32 (FCHK and the slow-path calls), div.full,
// div.rz, sqrt.rn.ftz, the MUFU approximations rsqrt, lg2, sin and tanh,
// and rcp.rn/sqrt.rn/div.rn/rsqrt.approx in binary64; blocks of 1, 7, 129
// and 1000 threads, inputs in [2^-6, 2^6] (positive: sqrt and lg2 stay
// real). The kernel returns only sums, and each holds approximated terms:
// the binary32 sum must be within 1e-5 of the sum of its terms'
// magnitudes (MUFU's few-ulp error, sin's absolute error of about 2^-22
// per unit of |x| after range reduction, and div.full's 2 ulp all lie far
// below it), the binary64 sum within 2^-20 of its terms' magnitudes
// (rsqrt.approx.f64 is MUFU.RSQ64H's high-word estimate). So an exact
// term off by a few ulp passes: this test checks the slow paths' control
// flow and gross errors, not the last bits.
func TestSimPtxasTailFdiv(t *testing.T) { corpus.ForSMs(t, simPtxasTailFdiv) }

func simPtxasTailFdiv(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(158, 159))
	for _, n := range []int{1, 7, 129, 1000} {
		x := make([]uint32, 4*n)
		for i := range x {
			x[i] = math.Float32bits(float32(math.Exp2(12*r.Float64() - 6)))
		}
		m := NewMemory()
		ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(4*n+4), 0)
		launchCorpus(t, "tail_float", "fdiv", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ax, ao), Poison: true})
		out := simWords(m.Bytes("out"))
		for i := 0; i < n; i++ {
			f := func(k int) float32 { return math.Float32frombits(x[4*i+k]) }
			f1, f2, f3, f4 := f(0), f(1), f(2), f(3)
			rz := new(big.Float).SetPrec(24).SetMode(big.ToZero)
			f9, _ := rz.Quo(big.NewFloat(float64(f2)), big.NewFloat(float64(f4))).Float32()
			s32 := func(v float64) float32 { return float32(v) }
			terms := []float32{f1 / f2, s32(math.Sqrt(float64(f3))), 1 / f4, f1 / f3, f9, s32(math.Sqrt(float64(f1))),
				s32(1 / math.Sqrt(float64(f2))), s32(math.Log2(float64(f3))), s32(math.Sin(float64(f4))), s32(math.Tanh(float64(f1)))}
			var want32 float32
			var mag32 float64
			for _, v := range terms {
				want32 += v
				mag32 += math.Abs(float64(v))
			}
			d1, d2 := float64(f1), float64(f2)
			terms64 := []float64{1 / d1, math.Sqrt(d2), d1 / d2, 1 / math.Sqrt(d2)}
			var want64, mag64 float64
			for _, v := range terms64 {
				want64 += v
				mag64 += math.Abs(v)
			}
			got32 := float64(math.Float32frombits(out[4*i]))
			got64 := math.Float64frombits(uint64(out[4*i+3])<<32 | uint64(out[4*i+2]))
			if !(math.Abs(got32-float64(want32)) <= 1e-5*mag32) || !(math.Abs(got64-want64) <= 0x1p-20*mag64) || out[4*i+1] != 0x7fc0dead {
				t.Fatalf("n=%d thread %d (x %v): f32 sum %g (want %g), f64 sum %g (want %g), word 1 %#x", n, i,
					[4]float32{f1, f2, f3, f4}, got32, want32, got64, want64, out[4*i+1])
			}
		}
		checkPoison(t, fmt.Sprint("fdiv n=", n), out, 4*n)
	}
}

// TestSimPtxasTailCmp runs tail_float.ptx's cmp kernel: f16x2 setp (eq,
// gtu, ne.ftz) into predicate pairs, set.f16x2 with f16x2 and u32
// results, min.NaN/max on f16x2 and bf16x2, fma.relu on bf16x2,
// fma.ftz.sat on f16x2, bf16x2 neg/abs, selects on all of them; testp
// and copysign on f32; min/max/abs/neg/testp.normal/copysign/setp on f64.
// Blocks of 1, 7, 129 and 1000 threads. The halves include NaNs,
// infinities, zeros of both signs and subnormals; the f64 inputs are
// finite and nonzero (ptxas expands f64 min/max, and their -0/+0 and NaN
// cases are not pinned down here). Bit for bit against Go (PTX ISA 7.8:
// canonical NaN 0x7fff for both half formats; .relu takes any result
// with its sign bit set, -0 included, to +0).
func TestSimPtxasTailCmp(t *testing.T) { corpus.ForSMs(t, simPtxasTailCmp) }

// tailHalf is one 16-bit lane in f16 (bf false) or bf16 as a float64.
func tailHalf(h uint16, bf bool) float64 {
	if bf {
		return float64(math.Float32frombits(uint32(h) << 16))
	}
	return float64(float16.Frombits(h).Float32())
}

// tailHalfMinMax is PTX min/max on one lane: -0 below +0; one NaN gives
// the other value, two NaNs (or any NaN with .NaN) the canonical NaN.
func tailHalfMinMax(a, b uint16, bf, isMax, nan bool) uint16 {
	x, y := tailHalf(a, bf), tailHalf(b, bf)
	switch {
	case x != x && y != y, nan && (x != x || y != y):
		return 0x7fff
	case x != x:
		return b
	case y != y:
		return a
	}
	less := x < y || x == y && a&0x8000 != 0 && b&0x8000 == 0 // a below b
	if less != isMax {
		return a
	}
	return b
}

// tailHalfFMA is a*b+c on one lane rounded once to nearest even, NaN for
// a NaN operand or an invalid operation (then the caller's NaN rule).
func tailHalfFMA(a, b, c uint16, bf bool) (uint16, bool) {
	x, y, z := tailHalf(a, bf), tailHalf(b, bf), tailHalf(c, bf)
	if v := math.FMA(x, y, z); v != v {
		return 0, true
	} else if math.IsInf(v, 0) && (math.IsInf(x, 0) || math.IsInf(y, 0) || math.IsInf(z, 0)) {
		if bf {
			return uint16(math.Float32bits(float32(v)) >> 16), false
		}
		return float16.Fromfloat32(float32(v)).Bits(), false
	}
	if bf {
		return bfFMA(a, b, c), false
	}
	return hFMA(a, b, c), false
}

func simPtxasTailCmp(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(160, 161))
	half := func(bfFmt bool) uint32 {
		switch r.IntN(8) {
		case 0:
			if bfFmt {
				return uint32([]uint16{0, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0xffc1, 0x0001, 0x3f80, 0xbf80}[r.IntN(9)])
			}
			return uint32([]uint16{0, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfd01, 0x0001, 0x83ff, 0x3c00, 0xbc00}[r.IntN(10)])
		case 1, 2:
			return uint32(r.Uint32N(1 << 16))
		}
		if bfFmt {
			return uint32(r.IntN(2))<<15 | uint32(127-6+r.IntN(12))<<7 | uint32(r.IntN(128))
		}
		return uint32(randModerateF16(r))
	}
	for _, n := range []int{1, 7, 129, 1000} {
		x := make([]uint32, 8*n)
		for i := 0; i < n; i++ {
			w := x[8*i : 8*i+8]
			for k := 0; k < 4; k++ {
				bfFmt := r.IntN(2) == 0
				w[k] = half(bfFmt) | half(bfFmt)<<16
			}
			// NaN halves (as binary16 or as bfloat16) are left out: how
			// ptxas's half-precision lowering (neg as an HFMA2, the NaN
			// forms of HMNMX2) passes a NaN's sign and payload on is not
			// known without the hardware, and the simulator's canonical
			// NaN is an assumption
			for k := 0; k < 4; k++ {
				for j := 0; j < 32; j += 16 {
					h := w[k] >> j & 0xffff
					if h&0x7c00 == 0x7c00 && h&0x3ff != 0 || h&0x7f80 == 0x7f80 && h&0x7f != 0 {
						w[k] = w[k]&^(0xffff<<j) | 0x3555<<j
					}
				}
			}
			if r.IntN(4) == 0 {
				w[1] = w[0] // equal halves for eq/le
			}
			for k := 4; k < 8; k += 2 {
				d := math.Float64bits((r.Float64() + 0.25) * math.Exp2(float64(r.IntN(2000)-1000)))
				if r.IntN(2) == 0 {
					d |= 1 << 63
				}
				w[k], w[k+1] = uint32(d), uint32(d>>32)
			}
			if r.IntN(6) == 0 {
				w[6], w[7] = w[4], w[5]
			}
		}
		m := NewMemory()
		ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(4*n+4), 0)
		launchCorpus(t, "tail_float", "cmp", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ax, ao), Poison: true})
		out := simWords(m.Bytes("out"))
		for i := 0; i < n; i++ {
			r2, r3, r4, r5 := x[8*i], x[8*i+1], x[8*i+2], x[8*i+3]
			lane := func(v uint32, k int) uint16 { return uint16(v >> (16 * k)) }
			cmp2 := func(code string, a, b uint32, ftz bool) [2]bool {
				return [2]bool{halfCmpRef(code, lane(a, 0), lane(b, 0), ftz), halfCmpRef(code, lane(a, 1), lane(b, 1), ftz)}
			}
			per := func(f func(k int) uint16) uint32 { return uint32(f(0)) | uint32(f(1))<<16 }
			pick := func(b bool, v, w uint16) uint16 {
				if b {
					return v
				}
				return w
			}
			p12, p34, p56 := cmp2("EQ", r2, r3, false), cmp2("GTU", r2, r4, false), cmp2("NE", r3, r4, true)
			le, ltu, num := cmp2("LE", r2, r3, false), cmp2("LTU", r3, r4, true), cmp2("NUM", r2, r5, false)
			r6 := per(func(k int) uint16 { return pick(le[k], 0x3c00, 0) })
			r7 := per(func(k int) uint16 { return pick(ltu[k], 0xffff, 0) })
			r8 := per(func(k int) uint16 { return pick(num[k], 0x3c00, 0) })
			r9 := per(func(k int) uint16 { return tailHalfMinMax(lane(r2, k), lane(r3, k), false, false, true) })
			r10 := per(func(k int) uint16 { return tailHalfMinMax(lane(r3, k), lane(r4, k), false, true, false) })
			r11 := per(func(k int) uint16 { return tailHalfMinMax(lane(r2, k), lane(r4, k), true, false, false) })
			r12 := per(func(k int) uint16 { return tailHalfMinMax(lane(r3, k), lane(r5, k), true, true, true) })
			r13 := per(func(k int) uint16 {
				v, nan := tailHalfFMA(lane(r2, k), lane(r3, k), lane(r4, k), true)
				switch {
				case nan:
					return 0x7fff
				case v&0x8000 != 0:
					return 0
				}
				return v
			})
			r14 := per(func(k int) uint16 {
				v, nan := tailHalfFMA(hftz(lane(r3, k)), hftz(lane(r4, k)), hftz(lane(r5, k)), false)
				if nan {
					return 0
				}
				return hsat(hftz(v))
			})
			// neg.bf16x2 is compiled to an FMA (HFMA2.BF16_V2 R, -RZ, RZ,
			// -R4), so a NaN comes out canonical, not sign-flipped; abs
			// is a LOP3 on the bits
			r15 := per(func(k int) uint16 {
				if h := lane(r2, k); h&0x7f80 == 0x7f80 && h&0x7f != 0 {
					return 0x7fff
				} else {
					return h ^ 0x8000
				}
			})
			r16 := r3 & 0x7fff7fff
			sel := func(p bool, a, b uint32) uint32 {
				if p {
					return a
				}
				return b
			}
			r17, r18, r19 := sel(p12[0], r6, r7), sel(p12[1], r8, r9), sel(p34[0], r10, r11)
			r20, r21, r22 := sel(p34[1], r12, r13), sel(p56[0], r14, r15), sel(p56[1], r16, r2)
			r23 := ((((r17 + r18) ^ r19) + r20) ^ r21) + r22
			// f32 testp and copysign (copysign.f32 d, a, b: b's magnitude, a's sign)
			f1, f2 := float64(math.Float32frombits(r2)), float64(math.Float32frombits(r3))
			p7 := !math.IsInf(f1, 0) && f1 == f1
			p8 := r3&0x7f800000 == 0 && r3&0x7fffff != 0
			p9 := math.IsInf(f1, 0)
			p10 := f2 != f2
			f3 := r3&0x7fffffff | r2&0x80000000
			f4 := sel(p7, f3, r2)
			f5 := sel(p8, f4, r3)
			f6 := sel(p9, f5, f3)
			f7 := sel(p10, f6, f4)
			// f64
			b1, b2 := uint64(x[8*i+5])<<32|uint64(x[8*i+4]), uint64(x[8*i+7])<<32|uint64(x[8*i+6])
			d1, d2 := math.Float64frombits(b1), math.Float64frombits(b2)
			d3, d4 := min(d1, d2), max(d1, d2)
			d5, d6 := math.Abs(d1), -d2
			q11 := b1&0x7ff0000000000000 != 0 && b1&0x7ff0000000000000 != 0x7ff0000000000000
			d7 := math.Float64frombits(b2&^(1<<63) | b1&(1<<63))
			q12 := !(d1 <= d2)
			q13 := d1 == d1 && d2 == d2
			d8 := d4
			if q11 {
				d8 = d3
			}
			d9 := d6
			if q12 {
				d9 = d5
			}
			d10 := d8
			if q13 {
				d10 = d7
			}
			d11 := math.Float64bits(d9 + d10)
			want := [4]uint32{r23, f7, uint32(d11), uint32(d11 >> 32)}
			if got := [4]uint32(out[4*i:]); got != want {
				t.Fatalf("n=%d thread %d (x %#x): %#x, want %#x", n, i, x[8*i:8*i+8], got, want)
			}
		}
		checkPoison(t, fmt.Sprint("cmp n=", n), out, 4*n)
	}
}

// TestSimPtxasTailAtom runs tail_mem.ptx's atom kernel: shared inc, dec,
// cas, add.u64, exch.b64, min.s32 and add.f32; global inc, dec, 64-bit
// max/min/and/or/xor/exch/cas, add.f64, add.noftz.f16x2, acquire,
// release and relaxed scopes; generic add and cas; cas.b16; red of f32,
// u64, max.u32, shared add, generic add and f16x2. Every thread of the
// kernel hits the same words with its own operands, so whatever one
// thread sees depends on the order: the reference runs one thread (a
// block of 1), eight times on fresh random memory, with the CAS
// comparands matching half the time, and checks every returned value
// (through the kernel's sums, written over its input) and every final
// word of the output region bit for bit. The kernel reads shared words
// no thread wrote: the reference takes the simulator's 0xCD fill (Config.
// Poison), which hardware does not promise.
func TestSimPtxasTailAtom(t *testing.T) { corpus.ForSMs(t, simPtxasTailAtom) }

func simPtxasTailAtom(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(162, 163))
	const c32, c64 = 0xcdcdcdcd, 0xcdcdcdcdcdcdcdcd
	for trial := 0; trial < 8; trial++ {
		x, y := make([]uint32, 4), make([]uint32, 32)
		for i := range x {
			x[i] = r.Uint32()
		}
		for i := range y {
			y[i] = r.Uint32()
		}
		m := NewMemory()
		ax, err := m.Alloc("x", 16)
		if err != nil {
			t.Fatal(err)
		}
		ay := alloc(t, m, "y", y, 0)
		y64 := func(off int) uint64 { return uint64(y[off/4+1])<<32 | uint64(y[off/4]) }
		set64 := func(v []uint32, off int, u uint64) { v[off/4], v[off/4+1] = uint32(u), uint32(u>>32) }
		if trial%2 == 0 {
			set64(y, 56, ax) // the 64-bit CAS matches
			y[92/4] = y[92/4]&0xffff0000 | 5
			x[1] = 0
		}
		for _, off := range []int{72, 116} { // finite halves for the f16x2 adds
			y[off/4] &^= 0x40004000
		}
		y[96/4] = math.Float32bits(float32(r.NormFloat64() * 1e9))
		set64(y, 64, math.Float64bits(r.NormFloat64()*1e6))
		putU32s(m.Bytes("x"), x)
		putU32s(m.Bytes("y"), y)
		launchCorpus(t, "tail_mem", "atom", sm, Config{Block: [3]int{1}, SharedBytes: 256, Workers: 1, Memory: m,
			Params: params(ax, ay), Poison: true})
		// the output region
		wy := append([]uint32(nil), y...)
		wy[0], wy[1] = 0, 0 // inc/dec with bound 0
		set64(wy, 8, uint64(max(int64(y64(8)), int64(ax))))
		set64(wy, 16, min(y64(16), ax))
		set64(wy, 24, y64(24)&ax)
		set64(wy, 32, y64(32)|ax)
		set64(wy, 40, y64(40)^ax)
		set64(wy, 48, ax)
		if y64(56) == ax {
			set64(wy, 56, ay)
		}
		d1 := y64(64)
		set64(wy, 64, math.Float64bits(math.Float64frombits(d1)+2.5))
		wy[72/4] = f16x2Add(y[72/4], 0)
		wy[80/4]++
		wy[84/4] = 0
		if uint16(y[92/4]) == 5 {
			wy[92/4] = y[92/4]&0xffff0000 | 7
		}
		wy[96/4] = math.Float32bits(math.Float32frombits(y[96/4]) + math.Float32frombits(c32))
		set64(wy, 104, y64(104)+c64)
		wy[116/4] = f16x2Add(y[116/4], c32)
		got := simWords(m.Bytes("y"))
		for i := range wy {
			if got[i] != wy[i] {
				t.Fatalf("trial %d: y word %d = %#x, want %#x (was %#x)", trial, i, got[i], wy[i], y[i])
			}
		}
		// the returned values, summed over the input
		// r6, r7, r8 and f1 return the fill; min.s32 returns the 0 inc left
		fill, fill64 := uint32(c32), uint64(c64)
		r20 := 4*fill + y[0] + y[1] + y[72/4] + y[80/4] + y[84/4] + y[88/4] + x[0] + x[1] + uint32(uint16(y[92/4]))
		rd12 := 2*fill64 + y64(8) + y64(16) + y64(24) + y64(32) + y64(40) + y64(48) + y64(56) + d1
		x1 := x[1] // cas(x1, 0 -> 0) leaves it
		want := [4]uint32{r20, x1, uint32(rd12), uint32(rd12 >> 32)}
		if got := [4]uint32(simWords(m.Bytes("x"))); got != want {
			t.Fatalf("trial %d: x = %#x, want %#x", trial, got, want)
		}
	}
}

// TestSimPtxasTailCvts runs tail_float.ptx's cvts kernel: cvt between
// f32, f64, f16, bf16, tf32 and integers of 8 to 64 bits in every
// rounding mode, with .sat and .relu, packed f16x2/bf16x2 conversions and
// integer narrowing with and without saturation; blocks of 1, 7, 129 and
// 1000 threads. Inputs are finite (zeros of both signs, subnormals,
// halves for the ties, values past every integer range and past f16's);
// the kernel returns an integer mix (bit for bit), f32 and f64 sums (bit
// for bit: the reference adds the same terms in the same order) and a
// 64-bit sum. Float to integer saturates, as PTX's cvt does.
func TestSimPtxasTailCvts(t *testing.T) { corpus.ForSMs(t, simPtxasTailCvts) }

// tailToInt rounds v with rnd and saturates it to [lo, hi] (float to
// integer cvt); the result is the integer's two's complement bits.
func tailToInt(v float64, rnd func(float64) float64, lo int64, hi uint64) uint64 {
	switch v = rnd(v); {
	case v <= float64(lo):
		return uint64(lo)
	case v >= float64(hi): // float64(hi) is at or above hi: 2^63 for MaxInt64
		return hi
	case v < 0:
		return uint64(int64(v))
	}
	return uint64(v)
}

// tailBig rounds the exact value x to prec bits in mode (binary32: 24,
// binary64: 53; no value here leaves their exponent ranges).
func tailBig(x *big.Float, prec uint, mode big.RoundingMode) float64 {
	v, _ := new(big.Float).SetPrec(prec).SetMode(mode).Set(x).Float64()
	return v
}

func simPtxasTailCvts(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(164, 165))
	val := func() float64 {
		switch r.IntN(6) {
		case 0:
			return []float64{0, math.Copysign(0, -1), 0.5, -0.5, 1.5, -2.5, 255.5, 127.5, -128.5, 65519.99, 65520,
				0x1p-140, -0x1p-149, 4294967295.0, 0x1p40, -0x1p63, 0x1p64, 3e9}[r.IntN(18)]
		case 1:
			return float64(r.IntN(2000)-1000) / 2 // ties
		}
		v := (r.Float64() + 0.5) * math.Exp2(float64(r.IntN(170)-100))
		if r.IntN(2) == 0 {
			v = -v
		}
		return v
	}
	for _, n := range []int{1, 7, 129, 1000} {
		x := make([]uint32, 4*n)
		for i := 0; i < n; i++ {
			x[4*i] = math.Float32bits(float32(val()))
			x[4*i+1] = math.Float32bits(float32(val()))
			d := math.Float64bits(val() * (1 + r.Float64()*0x1p-30)) // bits below binary32's
			x[4*i+2], x[4*i+3] = uint32(d), uint32(d>>32)
		}
		m := NewMemory()
		ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(8*n+8), 0)
		launchCorpus(t, "tail_float", "cvts", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ax, ao), Poison: true})
		out := simWords(m.Bytes("out"))
		for i := 0; i < n; i++ {
			f1, f2 := math.Float32frombits(x[4*i]), math.Float32frombits(x[4*i+1])
			d1 := math.Float64frombits(uint64(x[4*i+3])<<32 | uint64(x[4*i+2]))
			g1, g2 := float64(f1), float64(f2)
			b := func(v float64) *big.Float { return new(big.Float).SetFloat64(v) }
			h16 := func(v float64, mode int) uint16 { return f16Round(b(v), mode) }
			relu := func(h uint16) uint16 {
				if h&0x8000 != 0 {
					return 0
				}
				return h
			}
			bfz := func(f float32) uint16 { return uint16(math.Float32bits(f) >> 16) }
			f3 := float32(min(max(g1, 0), 1))
			f4 := float32(math.Trunc(g2))
			d2 := math.Floor(d1)
			h1, h2, h3, h4 := h16(g1, rndNearest), h16(g2, rndZero), h16(g1, rndDown), h16(g2, rndUp)
			h5, h6, h7, h8 := relu(h16(g1, rndNearest)), bfRN(b(g2)), relu(bfz(f1)), h16(d1, rndNearest)
			r2 := uint32(bfRN(b(g1)))<<16 | uint32(bfRN(b(g2)))
			r3 := uint32(h16(g2, rndZero))<<16 | uint32(h16(g1, rndZero))
			r4 := (x[4*i] + 0x1000) &^ 0x1fff                 // tf32, nearest with ties away
			const i32lo, i32hi = math.MinInt32, math.MaxInt32 // untyped: int64 and uint64 bounds
			r5 := uint32(tailToInt(g1, math.RoundToEven, i32lo, i32hi))
			r6 := uint32(tailToInt(g2, math.Floor, 0, math.MaxUint32))
			rd5 := tailToInt(g1, math.Ceil, math.MinInt64, math.MaxInt64)
			rd6 := tailToInt(d1, math.Trunc, 0, math.MaxUint64)
			r7 := uint32(tailToInt(d1, math.RoundToEven, i32lo, i32hi))
			r8 := uint32(tailToInt(g1, math.Trunc, 0, 255))
			r9 := uint32(tailToInt(g2, math.RoundToEven, -128, 127))
			h9 := uint16(tailToInt(d1, math.Trunc, math.MinInt16, math.MaxInt16))
			f5 := float32(tailBig(new(big.Float).SetInt64(int64(rd5)), 24, big.ToNearestEven))
			d3 := tailBig(new(big.Float).SetUint64(rd6), 53, big.ToZero)
			f6 := float32(tailBig(new(big.Float).SetUint64(uint64(r6)), 24, big.ToNegativeInf))
			d4 := float64(int32(r5))
			h10 := f16Round(new(big.Float).SetInt64(int64(int32(r5))), rndNearest)
			h11 := f16Round(new(big.Float).SetUint64(rd6), rndNearest)
			s5 := int64(int32(r5))
			r10 := uint32(int32(max(-128, min(127, s5))))
			r11 := uint32(max(0, min(65535, s5)))
			r12 := uint32(int32(int8(r5)))
			r13 := uint32(max(0, min(math.MaxUint32, int64(rd5))))
			r14 := uint32(min(rd6, math.MaxInt32))
			f7 := float16.Frombits(h4).Float32()
			d5 := float64(float16.Frombits(h3).Float32())
			f8 := math.Float32frombits(uint32(h6) << 16)
			r15 := uint32(tailToInt(float64(float16.Frombits(h1).Float32()), math.Trunc, i32lo, i32hi))
			rd7 := tailToInt(float64(float16.Frombits(h2).Float32()), math.RoundToEven, 0, math.MaxUint64)
			d6 := float64(int16(h9))
			r16, r17 := uint32(h1), uint32(int32(int16(h2)))
			r18, r19, r20 := uint32(h5)|uint32(h7)<<16, uint32(h8)|uint32(h10)<<16, uint32(h11)|uint32(h1)<<16
			r21 := r2 + r3
			for k, v := range []uint32{r4, r5, r6, r7, r8, r9, r10, r11, r12, r13, r14, r15, r16, r17, r18, r19, r20} {
				if k%2 == 0 {
					r21 ^= v
				} else {
					r21 += v
				}
			}
			f9 := f3 + f4
			f9 += f5
			f9 += f6
			f9 += f7
			f9 += f8
			d7 := d2 + d3 + d4 + d5 + d6
			rd8 := rd5 + rd6 + rd7
			want := [6]uint32{r21, math.Float32bits(f9), uint32(math.Float64bits(d7)), uint32(math.Float64bits(d7) >> 32), uint32(rd8), uint32(rd8 >> 32)}
			if got := [6]uint32(out[8*i:]); got != want || out[8*i+6] != 0x7fc0dead || out[8*i+7] != 0x7fc0dead {
				t.Fatalf("n=%d thread %d (f1 %g f2 %g d1 %g): %#x, want %#x", n, i, f1, f2, d1, out[8*i:8*i+8], want)
			}
		}
		checkPoison(t, fmt.Sprint("cvts n=", n), out, 8*n)
	}
}

// TestSimPtxasTailMmas runs tail_mem.ptx's mmas kernel: mma.sync of tf32
// (m16n8k8, m16n8k4), f16 with f16 accumulators (m16n8k16, m16n8k8), s8
// and u8 (m16n8k32, m16n8k16 .satfinite, m8n8k16), s4/u4 (m16n8k64,
// m8n8k32), b1 and.popc (m16n8k256), f16 m8n8k4 and f64 m8n8k4, then
// ldmatrix .x4.trans and .x1 of the integer results through shared
// memory. Blocks of 32 and 128 threads (whole warps; the kernel's shared
// array holds 128 slots). The fragments follow the PTX ISA's layouts
// (groupID = lane/4, threadID_in_group = lane%4). The halves of every
// input word are f16 values k/4, 0 < |k| <= 8, so the f16 products and
// sums are exact and the integer chain that starts from them is defined;
// the integer word is compared bit for bit. The binary64 word (C plus
// four products, the adding order unspecified) must lie within 2^-50 of
// the sum of its terms' magnitudes. The f32 word is not checked: the
// m8n8k4 f16 mma reads accumulators f4..f7 that the kernel never sets.
func TestSimPtxasTailMmas(t *testing.T) { corpus.ForSMs(t, simPtxasTailMmas) }

// tailFrag maps element i of a thread's fragment to its matrix (row,
// column) for the PTX mma layouts used by the mmas kernel: per is the
// elements per 32-bit register (2 for 16-bit types, 4 for 8-bit, 8 for
// 4-bit, 32 for 1-bit); kind 'A' (row-major m16 A, regs of per elements:
// rows g and g+8 alternate every register, the second K half after two
// registers), 'a' (m16 A of one K block: two registers), 'B' and 'C'
// (the accumulator, two elements per row pair), '8' (m8 A or B: one
// register, row or column g).
func tailFrag(kind byte, per, i, lane int) (int, int) {
	g, tg := lane/4, lane%4
	reg, e := i/per, i%per
	switch kind {
	case 'A': // m16 A with 4 registers: g, g+8, g, g+8; K halves
		return g + 8*(reg&1), per*tg + e + 4*per*(reg>>1)
	case 'a': // m16 A with 2 registers: g, g+8
		return g + 8*reg, per*tg + e
	case 'B': // B, K rows; registers step by 4*per rows
		return per*tg + e + 4*per*reg, g
	case '8': // m8 A (row g) or B (column g) in one register
		return g, per*tg + e
	case 'C':
		return g + 8*(i>>1), 2*tg + i&1
	}
	panic(kind)
}

// tailMmaInt is D = A*B + C on one warp's integer fragments: a, b and c
// give each lane's registers; the element getters read an element of a
// register (bits wide, signed or not); aKind/bKind are tailFrag kinds,
// m the row count (8: C has two registers per lane, row g). Sums wrap in
// 32 bits, or saturate with sat; popc makes it b1 AND/POPC.
func tailMmaInt(a, b, c [32][]uint32, m, n, k, bitsA int, sa, sb bool, aKind, bKind byte, sat, popc bool) [32][]uint32 {
	per := 32 / bitsA
	A, B := make([][]int64, m), make([][]int64, k)
	for r := range A {
		A[r] = make([]int64, k)
	}
	for r := range B {
		B[r] = make([]int64, n)
	}
	elem := func(v uint32, e, w int, signed bool) int64 {
		x := v >> (w * e) & (1<<w - 1)
		if signed && x>>(w-1) != 0 {
			return int64(x) - 1<<w
		}
		return int64(x)
	}
	for l := 0; l < 32; l++ {
		for i := 0; i < len(a[l])*per; i++ {
			r, col := tailFrag(aKind, per, i, l)
			A[r][col] = elem(a[l][i/per], i%per, bitsA, sa)
		}
		for i := 0; i < len(b[l])*per; i++ {
			var kk, col int
			if bKind == '8' {
				col, kk = tailFrag('8', per, i, l)
			} else {
				kk, col = tailFrag('B', per, i, l)
			}
			B[kk][col] = elem(b[l][i/per], i%per, bitsA, sb)
		}
	}
	var d [32][]uint32
	for l := 0; l < 32; l++ {
		d[l] = make([]uint32, len(c[l]))
		for i := range c[l] {
			r, col := tailFrag('C', 1, i, l)
			s := int64(int32(c[l][i]))
			for kk := 0; kk < k; kk++ {
				if popc {
					s += A[r][kk] & B[kk][col]
				} else {
					s += A[r][kk] * B[kk][col]
				}
			}
			if sat {
				s = max(math.MinInt32, min(math.MaxInt32, s))
			}
			d[l][i] = uint32(s)
		}
	}
	return d
}

// tailMmaF16 is D = A*B + C with f16 operands and f16 accumulators, whose
// inputs keep every product and sum exact (see the test).
func tailMmaF16(a, b, c [32][]uint32, k int, aKind byte) [32][]uint32 {
	A, B := [16][16]float64{}, [16][8]float64{}
	h := func(v uint32, e int) float64 { return float64(float16.Frombits(uint16(v >> (16 * e))).Float32()) }
	for l := 0; l < 32; l++ {
		for i := 0; i < len(a[l])*2; i++ {
			r, col := tailFrag(aKind, 2, i, l)
			A[r][col] = h(a[l][i/2], i%2)
		}
		for i := 0; i < len(b[l])*2; i++ {
			kk, col := tailFrag('B', 2, i, l)
			B[kk][col] = h(b[l][i/2], i%2)
		}
	}
	var d [32][]uint32
	for l := 0; l < 32; l++ {
		d[l] = make([]uint32, 2)
		for i := 0; i < 4; i++ {
			r, col := tailFrag('C', 1, i, l)
			s := h(c[l][i/2], i%2)
			for kk := 0; kk < k; kk++ {
				s += A[r][kk] * B[kk][col]
			}
			d[l][i/2] |= uint32(float16.Fromfloat32(float32(s)).Bits()) << (16 * (i % 2))
		}
	}
	return d
}

func simPtxasTailMmas(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(166, 167))
	quarter := func() uint32 {
		k := 1 + r.IntN(8)
		v := float16.Fromfloat32(float32(k) / 4).Bits()
		if r.IntN(2) == 0 {
			v |= 0x8000
		}
		return uint32(v)
	}
	for _, n := range []int{32, 128} {
		x := make([]uint32, 8*n)
		for i := range x {
			x[i] = quarter() | quarter()<<16
		}
		m := NewMemory()
		ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(8*n+8), 0)
		launchCorpus(t, "tail_mem", "mmas", sm, Config{Block: [3]int{n}, SharedBytes: 4 * 512, Memory: m, Params: params(ax, ao), Poison: true})
		out := simWords(m.Bytes("out"))
		for w := 0; w < n; w += 32 {
			var a, cs [32][]uint32
			reg := func(idx ...int) [32][]uint32 {
				var v [32][]uint32
				for l := range v {
					for _, k := range idx {
						v[l] = append(v[l], a[l][k])
					}
				}
				return v
			}
			for l := 0; l < 32; l++ {
				a[l] = x[8*(w+l) : 8*(w+l)+8]
				cs[l] = make([]uint32, 8)
			}
			setC := func(d [32][]uint32, from int) {
				for l := range d {
					copy(cs[l][from:], d[l])
				}
			}
			cr := func(idx ...int) [32][]uint32 {
				var v [32][]uint32
				for l := range v {
					for _, k := range idx {
						v[l] = append(v[l], cs[l][k])
					}
				}
				return v
			}
			setC(tailMmaF16(reg(0, 1, 2, 3), reg(4, 5), reg(6, 7), 16, 'A'), 0)
			setC(tailMmaF16(reg(0, 1), reg(4), cr(0, 1), 8, 'a'), 2)
			setC(tailMmaInt(reg(0, 1, 2, 3), reg(4, 5), cr(0, 1, 2, 3), 16, 8, 32, 8, true, true, 'A', 'B', false, false), 0)
			setC(tailMmaInt(reg(0, 1), reg(4), cr(0, 1, 2, 3), 16, 8, 16, 8, false, true, 'a', 'B', true, false), 4)
			setC(tailMmaInt(reg(2), reg(3), cr(4, 5), 8, 8, 16, 8, true, false, '8', '8', false, false), 0)
			setC(tailMmaInt(reg(0, 1, 2, 3), reg(4, 5), cr(4, 5, 6, 7), 16, 8, 64, 4, true, true, 'A', 'B', false, false), 4)
			setC(tailMmaInt(reg(6), reg(7), cr(0, 1), 8, 8, 32, 4, false, false, '8', '8', false, false), 2)
			setC(tailMmaInt(reg(0, 1, 2, 3), reg(4, 5), cr(4, 5, 6, 7), 16, 8, 256, 1, false, false, 'A', 'B', false, true), 4)
			// ldmatrix of the 16-byte rows c0..c3 the warp's threads stored:
			// matrix j, row q is thread w+8j+q's; .x4.trans gives lane l
			// elements (2(l%4), l/4) and (2(l%4)+1, l/4) of matrix j, .x1
			// elements (l/4, 2(l%4)) and (l/4, 2(l%4)+1) of matrix 0
			half := func(row, col int) uint32 { return cs[row][col/2] >> (16 * (col % 2)) & 0xffff }
			for l := 0; l < 32; l++ {
				r10 := uint32(0)
				for j := 0; j < 4; j++ {
					q, c := 2*(l%4), l/4
					r10 += half(8*j+q, c) | half(8*j+q+1, c)<<16
				}
				r10 += half(l/4, 2*(l%4)) | half(l/4, 2*(l%4)+1)<<16
				r10 += cs[l][4] + cs[l][5] + cs[l][6] + cs[l][7]
				if out[8*(w+l)] != r10 {
					t.Fatalf("n=%d lane %d: integer word %#x, want %#x", n, w+l, out[8*(w+l)], r10)
				}
				checkPoison(t, fmt.Sprint("mmas n=", n, " lane ", w+l), out[8*(w+l)+4:8*(w+l)+8], 0)
			}
			// f64 m8n8k4: A = (a4,a5) row g col t, B = (a6,a7) row t col g,
			// C = (a0,a1), (a2,a3) at row g, columns 2t, 2t+1
			f64 := func(l, k int) float64 { return math.Float64frombits(uint64(a[l][k+1])<<32 | uint64(a[l][k])) }
			for l := 0; l < 32; l++ {
				g, tg := l/4, l%4
				var want, mag float64
				for i := 0; i < 2; i++ {
					col := 2*tg + i
					s, sm := f64(l, 2*i), math.Abs(f64(l, 2*i))
					for kk := 0; kk < 4; kk++ {
						p := f64(4*g+kk, 4) * f64(4*col+kk, 6)
						s, sm = s+p, sm+math.Abs(p)
					}
					want, mag = want+s, mag+sm
				}
				got := math.Float64frombits(uint64(out[8*(w+l)+3])<<32 | uint64(out[8*(w+l)+2]))
				if !(math.Abs(got-want) <= 0x1p-50*mag) {
					t.Fatalf("n=%d lane %d: f64 word %g, want %g", n, w+l, got, want)
				}
			}
		}
		checkPoison(t, fmt.Sprint("mmas n=", n), out, 8*n)
	}
}

// TestSimPtxasTailMma2 runs tail_misc.ptx's mma2 kernel: a 2:4 sparse
// mma.sp m16n8k32 on f16 (metadata a0, selector 0), a sparse m16n8k16 on
// bf16 (metadata a1, selector 1) into the same f32 accumulators, and
// movmatrix.trans of a6; blocks of 32 and 64 threads. The metadata
// registers of the lanes that give it hold only valid 2:4 index pairs
// (nibbles 0x4, 0x8, 0x9, 0xc, 0xd, 0xe); every half the mmas read is a
// finite f16 and bf16. The compressed A fragments follow the dense
// layouts of half the K; the metadata layout is written from the PTX
// ISA as understood here (the simulator, mma_tc.go sparseCol, reads it
// the same way; neither is checked on hardware): for m16n8k16 the selected thread of quad g holds rows g
// (bits 0..15) and g+8 (bits 16..31), two bits per kept element; for
// m16n8k32 threads 0 and 1 of quad g hold K columns 0..15 and 16..31 of
// rows g and g+8 in the same way. The kernel returns the f32 sum of the
// accumulators plus movmatrix's word as an integer: movmatrix's word is
// exact, and the float sum must be within 1e-5 of its terms' magnitudes.
func TestSimPtxasTailMma2(t *testing.T) { corpus.ForSMs(t, simPtxasTailMma2) }

func simPtxasTailMma2(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(168, 169))
	valid := []uint32{0x4, 0x8, 0x9, 0xc, 0xd, 0xe} // index pairs (0,1) (0,2) (1,2) (0,3) (1,3) (2,3)
	meta := func() uint32 {
		var v uint32
		for k := 0; k < 8; k++ {
			v |= valid[r.IntN(len(valid))] << (4 * k)
		}
		return v
	}
	// a half finite as f16 and as bf16: bf16 exponent 0x78..0x85
	half := func() uint32 { return uint32(r.IntN(2))<<15 | uint32(0x78+r.IntN(14))<<7 | uint32(r.IntN(128)) }
	for _, n := range []int{32, 64} {
		x := make([]uint32, 8*n)
		for i := range x {
			x[i] = half() | half()<<16
		}
		for i := 0; i < n; i++ {
			if i%4 < 2 {
				x[8*i] = meta()
			}
			if i%4 == 1 {
				x[8*i+1] = meta()
			}
		}
		m := NewMemory()
		ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(8*n+8), 0)
		launchCorpus(t, "tail_misc", "mma2", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ax, ao), Poison: true})
		out := simWords(m.Bytes("out"))
		for w := 0; w < n; w += 32 {
			a := func(l, k int) uint32 { return x[8*(w+l)+k] }
			h := func(v uint32, e int) float64 { return float64(float16.Frombits(uint16(v >> (16 * e))).Float32()) }
			bh := func(v uint32, e int) float64 { return float64(math.Float32frombits(v >> (16 * e) << 16)) }
			// the f32 accumulators start as a0..a3, row g + 8(i>>1), column 2t + i&1
			var D [16][8]float64
			var mag [16][8]float64
			for l := 0; l < 32; l++ {
				for i := 0; i < 4; i++ {
					row, col := tailFrag('C', 1, i, l)
					D[row][col] = float64(math.Float32frombits(a(l, i)))
					mag[row][col] = math.Abs(D[row][col])
				}
			}
			sparse := func(k, regs int, val func(uint32, int) float64, metaOf func(row, c int) uint32, bReg int) {
				var A [16][32]float64
				var B [32][8]float64
				kind := byte('A')
				if regs == 2 {
					kind = 'a'
				}
				for l := 0; l < 32; l++ {
					for i := 0; i < 2*regs; i++ {
						row, c := tailFrag(kind, 2, i, l)
						idx := int(metaOf(row, c) & 3)
						A[row][4*(c/2)+idx] += val(a(l, i/2), i%2) // two kept values never share an index
					}
					for i := 0; i < 2*(k/8); i++ {
						kk, col := tailFrag('B', 2, i, l)
						B[kk][col] = val(a(l, bReg+i/2), i%2)
					}
				}
				for row := 0; row < 16; row++ {
					for col := 0; col < 8; col++ {
						for kk := 0; kk < k; kk++ {
							p := A[row][kk] * B[kk][col]
							D[row][col] += p
							mag[row][col] += math.Abs(p)
						}
					}
				}
			}
			g := func(row int) int { return 4 * (row % 8) }
			sparse(32, 4, h, func(row, c int) uint32 { // selector 0: threads 0 and 1 of the quad
				grp := c / 2
				return a(g(row)+grp/4, 0) >> (16*(row/8) + 4*(grp%4) + 2*(c%2))
			}, 4)
			sparse(16, 2, bh, func(row, c int) uint32 { // selector 1: thread 1 of the quad
				return a(g(row)+1, 1) >> (16*(row/8) + 4*(c/2) + 2*(c%2))
			}, 4)
			for l := 0; l < 32; l++ {
				// movmatrix.trans: lane l gets elements (2(l%4), l/4) and
				// (2(l%4)+1, l/4) of the matrix whose row q, columns 2c,
				// 2c+1 lane 4q+c holds
				el := func(row, col int) uint32 { return a(4*row+col/2, 6) >> (16 * (col % 2)) & 0xffff }
				r2 := el(2*(l%4), l/4) | el(2*(l%4)+1, l/4)<<16
				var want float32
				var m float64
				for i := 0; i < 4; i++ {
					row, col := tailFrag('C', 1, i, l)
					want += float32(D[row][col])
					m += mag[row][col]
				}
				got := float64(math.Float32frombits(out[8*(w+l)] - r2))
				if !(math.Abs(got-float64(want)) <= 1e-5*m) {
					t.Fatalf("n=%d lane %d: word %#x - movmatrix %#x = %g, want %g", n, w+l, out[8*(w+l)], r2, got, want)
				}
				checkPoison(t, fmt.Sprint("mma2 n=", n, " lane ", w+l), out[8*(w+l)+1:8*(w+l)+8], 0)
			}
		}
		checkPoison(t, fmt.Sprint("mma2 n=", n), out, 8*n)
	}
}
