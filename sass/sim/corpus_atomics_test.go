package sim

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/x448/float16"

	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// The corpus kernels of atomics.ptx run in the simulator against Go
// references. Atomics of many lanes on one word happen in an order the
// hardware does not define, so the references check what every order
// agrees on: the final memory state where the operations commute (or
// where the inputs are chosen so that they do: integer-valued floats whose
// sums are exact), and, where every lane returns the old value, that the
// returned values chain into some serial order (serialOrder).

// serialOrder reports whether the atomic updates edges (each lane's
// returned old value and the value its operation made of it) can be put in
// one serial order that starts from init and ends at final: an Euler path
// from init to final in the multigraph of values. That holds exactly when
// every value is left as often as it is entered (init once more, final
// once less) and every edge is connected to init.
func serialOrder(init, final uint64, edges [][2]uint64) error {
	if len(edges) == 0 {
		if final != init {
			return fmt.Errorf("no update, but the word went from %#x to %#x", init, final)
		}
		return nil
	}
	bal := map[uint64]int{}
	bal[init]++
	bal[final]-- // init == final: a cycle, balanced everywhere
	parent := map[uint64]uint64{}
	var find func(v uint64) uint64
	find = func(v uint64) uint64 {
		p, ok := parent[v]
		if !ok || p == v {
			return v
		}
		r := find(p)
		parent[v] = r
		return r
	}
	for _, e := range edges {
		bal[e[0]]--
		bal[e[1]]++
		parent[find(e[0])] = find(e[1])
	}
	for v, b := range bal {
		if b != 0 {
			return fmt.Errorf("value %#x: %+d more updates leave it than enter it (init %#x, final %#x)", v, -b, init, final)
		}
	}
	for _, e := range edges {
		if find(e[0]) != find(init) {
			return fmt.Errorf("update %#x -> %#x is not reachable from the initial value %#x", e[0], e[1], init)
		}
	}
	return nil
}

func TestSerialOrder(t *testing.T) {
	add := [][2]uint64{{5, 6}, {6, 8}, {8, 9}}
	if err := serialOrder(5, 9, add); err != nil {
		t.Fatal(err)
	}
	// exch 7 then exch 5 back; a min that changes nothing
	if err := serialOrder(5, 5, [][2]uint64{{7, 5}, {5, 7}, {5, 5}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		init, final uint64
		e           [][2]uint64
	}{
		{5, 8, add},                         // wrong final
		{5, 9, [][2]uint64{{5, 6}, {5, 7}}}, // two lanes saw 5
		{5, 5, [][2]uint64{{6, 6}}},         // an update from a value never held
		{5, 6, nil},
	} {
		if serialOrder(c.init, c.final, c.e) == nil {
			t.Fatalf("serialOrder(%d, %d, %v) accepted", c.init, c.final, c.e)
		}
	}
}

// f16RN rounds x to the nearest binary16 (ties to even, overflow to
// infinity), directly from binary64 and including subnormals.
func f16RN(x float64) uint16 {
	if math.IsNaN(x) {
		return 0x7e00
	}
	return f16Round(big.NewFloat(x), rndNearest)
}

// f16Add is binary16 addition, rounded once to nearest even (the sum of
// two binary16 values is exact in binary64).
func f16Add(a, b uint16) uint16 {
	return f16RN(float64(float16.Frombits(a).Float32()) + float64(float16.Frombits(b).Float32()))
}

// f16x2Add adds the halves of a and b.
func f16x2Add(a, b uint32) uint32 {
	return uint32(f16Add(uint16(a), uint16(b))) | uint32(f16Add(uint16(a>>16), uint16(b>>16)))<<16
}

// randF16 is a random finite binary16 (subnormals included).
func randF16(r *rand.Rand) uint16 {
	b := uint16(r.Uint32())
	if b&0x7c00 == 0x7c00 {
		b &^= 0x4000
	}
	return b
}

func TestF16RN(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		// 2^-26 <= |f| < 2^17: binary16 subnormals, normals and overflow
		f := math.Float32frombits(uint32(127-26+r.IntN(43))<<23 | r.Uint32()&0x7fffff)
		if r.IntN(2) == 0 {
			f = -f
		}
		// float16.Fromfloat32 rounds binary32 to nearest even; a binary32
		// is exact in binary64, so both must agree.
		if got, want := f16RN(float64(f)), float16.Fromfloat32(f).Bits(); got != want {
			t.Fatalf("f16RN(%g) = %#x, want %#x", f, got, want)
		}
	}
	// a binary64 just above a binary16 midpoint rounds up, where going
	// through binary32 first would round to the midpoint and then to even
	if got := f16RN(1 + 1.0/2048 + 1.0/(1<<40)); got != 0x3c01 {
		t.Fatalf("f16RN(1+2^-11+2^-40) = %#x, want 0x3c01", got)
	}
}

// atomIntOps are atom_int's operations, indexed by tid % 11.
var atomIntOps = [11]func(old, v uint32) uint32{
	func(o, v uint32) uint32 { return o + v },
	func(o, v uint32) uint32 { return uint32(min(int32(o), int32(v))) },
	func(o, v uint32) uint32 { return max(o, v) },
	func(o, v uint32) uint32 { return o & v },
	func(o, v uint32) uint32 { return o | v },
	func(o, v uint32) uint32 { return o ^ v },
	func(o, v uint32) uint32 { return v },
	func(o, v uint32) uint32 { // inc
		if o >= v {
			return 0
		}
		return o + 1
	},
	func(o, v uint32) uint32 { // dec
		if o == 0 || o > v {
			return v
		}
		return o - 1
	},
	func(o, v uint32) uint32 { return min(o, v) },
	func(o, v uint32) uint32 { return uint32(max(int32(o), int32(v))) },
}

// TestSimPtxasAtomInt runs ptxas's atom_int kernel: every thread applies
// one of eleven 32-bit atomics (add, min/max signed and unsigned, and, or,
// xor, exch, inc, dec) to one of four shared counters and returns the old
// value. The returned values must chain into a serial order from each
// counter's initial to its final value (serialOrder); blocks of 1, 7, 129
// and 1000 threads.
func TestSimPtxasAtomInt(t *testing.T) { corpus.ForSMs(t, simPtxasAtomInt) }

func simPtxasAtomInt(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(60, 61))
	for _, n := range []int{1, 7, 129, 1000} {
		x, c := make([]uint32, n), make([]uint32, 4)
		for i := range x {
			x[i] = r.Uint32() >> r.IntN(32)
		}
		for i := range c {
			c[i] = r.Uint32() >> r.IntN(32)
		}
		m := NewMemory()
		ac, ax, ao := alloc(t, m, "c", c, 0), alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(n+1), 0)
		launchCorpus(t, "atomics", "atom_int", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ac, ax, ao), Poison: true})
		out, final := simWords(m.Bytes("out")), simWords(m.Bytes("c"))
		for w := range c {
			var edges [][2]uint64
			for i := w; i < n; i += 4 {
				edges = append(edges, [2]uint64{uint64(out[i]), uint64(atomIntOps[i%11](out[i], x[i]))})
			}
			if err := serialOrder(uint64(c[w]), uint64(final[w]), edges); err != nil {
				t.Fatalf("n=%d counter %d: %v", n, w, err)
			}
		}
		checkPoison(t, fmt.Sprint("atom_int n=", n), out, n)
	}
}

// TestSimPtxasRedAll runs ptxas's red_all kernel: RED (no result) of every
// width and type onto one word each, from blocks of 1, 7 and 129 threads.
// The inputs make every final word independent of the order: inc and dec
// bounds above every value reached, integer-valued f32/f64 addends and
// f16x2 addends in halves (k/2) whose sums binary16 holds exactly. Bit for
// bit against Go.
func TestSimPtxasRedAll(t *testing.T) { corpus.ForSMs(t, simPtxasRedAll) }

func simPtxasRedAll(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(62, 63))
	half := func() uint32 { // k/2, k in +-1..8, as binary16
		k := float32(1+r.IntN(8)) / 2
		if r.IntN(2) == 0 {
			k = -k
		}
		return uint32(float16.Fromfloat32(k).Bits())
	}
	for _, n := range []int{1, 7, 129} {
		lo, hi := make([]uint32, n), make([]uint32, n)
		x := make([]uint32, 2*n)
		for i := range lo {
			lo[i] = half() | half()<<16 // >= 0x38000000: above every inc/dec bound reached
			hi[i] = uint32(r.IntN(4097) - 2048)
			x[2*i], x[2*i+1] = lo[i], hi[i]
		}
		c := make([]uint32, 21)
		for i := range c {
			c[i] = r.Uint32()
		}
		c[6] = r.Uint32N(1 << 16)           // inc
		c[7] = uint32(n) + r.Uint32N(1<<16) // dec
		c[14] = math.Float32bits(float32(r.IntN(2001) - 1000))
		f64 := math.Float64bits(float64(r.IntN(2001) - 1000))
		c[16], c[17] = uint32(f64), uint32(f64>>32)
		c[18] = half() | half()<<16
		want := slices.Clone(c)
		u64 := func(k int) uint64 { return uint64(want[k+1])<<32 | uint64(want[k]) }
		set64 := func(k int, v uint64) { want[k], want[k+1] = uint32(v), uint32(v>>32) }
		f32, fd := float32(math.Float32frombits(c[14])), math.Float64frombits(f64)
		for i := 0; i < n; i++ {
			v, v64 := lo[i], uint64(hi[i])<<32|uint64(lo[i])
			want[0] += v
			want[1] = uint32(min(int32(want[1]), int32(v)))
			want[2] = max(want[2], v)
			want[3] &= v
			want[4] |= v
			want[5] ^= v
			want[6] = atomIntOps[7](want[6], v)
			want[7] = atomIntOps[8](want[7], v)
			set64(8, u64(8)+v64)
			set64(10, min(u64(10), v64))
			set64(12, uint64(max(int64(u64(12)), int64(v64))))
			f32 += float32(int32(hi[i]))
			fd += float64(int32(hi[i]))
			want[18] = f16x2Add(want[18], v)
			want[19] += hi[i]
			want[20] += hi[i]
		}
		if want[6] != c[6]+uint32(n) || want[7] != c[7]-uint32(n) {
			t.Fatalf("test data: inc/dec bounds reached")
		}
		want[14] = math.Float32bits(f32)
		set64(16, math.Float64bits(fd))
		m := NewMemory()
		ac, ax := alloc(t, m, "c", c, 0), alloc(t, m, "x", x, 0)
		launchCorpus(t, "atomics", "red_all", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ac, ax), Poison: true})
		got := simWords(m.Bytes("c"))
		for k := range want {
			if got[k] != want[k] {
				t.Fatalf("n=%d: word %d (+%#x) = %#x, want %#x", n, k, 4*k, got[k], want[k])
			}
		}
	}
}

// TestSimPtxasCasFmax runs ptxas's cas_fmax kernel: a float maximum as a
// 32-bit CAS loop (lanes of a warp retrying against each other and
// against other CTAs), with a grid-stride tail: n of 1, 7, 129 and 1000
// over blocks of 128 threads and one idle block. Inputs are finite and
// nonzero (a NaN or +-0 maximum depends on the order); the final word is
// compared bit for bit.
func TestSimPtxasCasFmax(t *testing.T) { corpus.ForSMs(t, simPtxasCasFmax) }

func simPtxasCasFmax(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(64, 65))
	for _, n := range []int{1, 7, 129, 1000} {
		x := make([]uint32, n+8)
		rf := func() float32 {
			for {
				f := math.Float32frombits(r.Uint32())
				if f != 0 && !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) {
					return f
				}
			}
		}
		for i := range x {
			x[i] = math.Float32bits(rf())
		}
		init := rf()
		want := init
		for _, v := range x[:n] {
			want = max(want, math.Float32frombits(v))
		}
		m := NewMemory()
		ac, ax := alloc(t, m, "c", []uint32{math.Float32bits(init), 0x7fc0dead}, 0), alloc(t, m, "x", x, 0)
		launchCorpus(t, "atomics", "cas_fmax", sm, Config{Grid: [3]int{(n+127)/128 + 1}, Block: [3]int{128}, Memory: m,
			Params: params(ac, ax, uint32(n)), Poison: true})
		got := simWords(m.Bytes("c"))
		if got[0] != math.Float32bits(want) {
			t.Fatalf("n=%d: max = %#x (%g), want %#x (%g)", n, got[0], math.Float32frombits(got[0]), math.Float32bits(want), want)
		}
		checkPoison(t, "cas_fmax", got, 1)
	}
}

// TestSimPtxasCasDmul runs ptxas's cas_dmul kernel: a binary64 product as
// a 64-bit CAS loop from every thread of 1, 2 and 3 CTAs of 1, 7 and 129
// threads. The factors are +-2^k and a few +-3s, so the product is exact
// in any order; bit for bit against Go.
func TestSimPtxasCasDmul(t *testing.T) { corpus.ForSMs(t, simPtxasCasDmul) }

func simPtxasCasDmul(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(66, 67))
	for _, c := range []struct{ grid, block int }{{1, 1}, {1, 7}, {2, 129}, {3, 33}} {
		n := c.grid * c.block
		x := make([]uint64, c.block)
		for i := range x {
			f := math.Ldexp(1, r.IntN(7)-3)
			if r.IntN(16) == 0 {
				f *= 3
			}
			if r.IntN(2) == 0 {
				f = -f
			}
			x[i] = math.Float64bits(f)
		}
		init := 1 + float64(r.IntN(1000))/1024
		want := init
		for i := 0; i < n; i++ {
			want *= math.Float64frombits(x[i%c.block])
		}
		m := NewMemory()
		ac, ax := alloc(t, m, "c", words64([]uint64{math.Float64bits(init), 0x7fc0dead7fc0dead}), 0), alloc(t, m, "x", words64(x), 0)
		launchCorpus(t, "atomics", "cas_dmul", sm, Config{Grid: [3]int{c.grid}, Block: [3]int{c.block}, Memory: m,
			Params: params(ac, ax), Poison: true})
		got := simWords(m.Bytes("c"))
		if g := uint64(got[1])<<32 | uint64(got[0]); g != math.Float64bits(want) {
			t.Fatalf("%d x %d: product = %#x (%g), want %#x (%g)", c.grid, c.block, g, math.Float64frombits(g), math.Float64bits(want), want)
		}
		checkPoison(t, "cas_dmul", got, 2)
	}
}

// TestSimPtxasAtomWide runs ptxas's atom_wide kernel: 64-bit add, min,
// max, and, or, xor, exch and CAS, f32, f64, f16x2 and f16 adds, scoped
// 32-bit adds and a 32-bit CAS, all on one block of counters. One thread
// is compared bit for bit in every returned value and every final word;
// 32 threads in the final words whose operations commute (integer adds
// and bitwise operations, min, max, an f64 sum of integers), exch leaving
// one of the lanes' values.
func TestSimPtxasAtomWide(t *testing.T) { corpus.ForSMs(t, simPtxasAtomWide) }

func simPtxasAtomWide(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(68, 69))
	for _, n := range []int{1, 32} {
		x := make([]uint64, n)
		for i := range x {
			x[i] = uint64(randF16(r))<<32 | uint64(randF16(r))<<16 | uint64(randF16(r))
			if r.IntN(2) == 0 {
				x[i] |= r.Uint64() &^ (1<<48 - 1) // the high half of the high word is not read as binary16
			}
		}
		c := make([]uint32, 26)
		for i := range c {
			c[i] = r.Uint32()
		}
		c[16] = math.Float32bits(float32(r.IntN(1 << 20)))
		fd := math.Float64bits(float64(r.IntN(1 << 20)))
		c[18], c[19] = uint32(fd), uint32(fd>>32)
		c[20] = uint32(randF16(r)) | uint32(randF16(r))<<16
		c[25] = uint32(randF16(r)) | c[25]&0xffff0000
		if n == 1 && r.IntN(2) == 0 {
			c[14], c[15] = c[12], c[13] // the 64-bit CAS compares with what exch returned: let it succeed
			c[24] = uint32(x[0] >> 32)  // and the 32-bit one with the high input word
		}
		m := NewMemory()
		ac, ax, ao := alloc(t, m, "c", c, 0), alloc(t, m, "x", words64(x), 0), alloc(t, m, "out", poisonWords(4*n), 0)
		launchCorpus(t, "atomics", "atom_wide", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ac, ax, ao), Poison: true})
		got, out := simWords(m.Bytes("c")), simWords(m.Bytes("out"))
		want := slices.Clone(c)
		u64 := func(k int) uint64 { return uint64(want[k+1])<<32 | uint64(want[k]) }
		set64 := func(k int, v uint64) { want[k], want[k+1] = uint32(v), uint32(v>>32) }
		if n == 1 {
			v := x[0]
			lo, hi := uint32(v), uint32(v>>32)
			old := [8]uint64{}
			for k := range old {
				old[k] = u64(2 * k)
			}
			set64(0, old[0]+v)
			set64(2, uint64(min(int64(old[1]), int64(v))))
			set64(4, max(old[2], v))
			set64(6, old[3]&v)
			set64(8, old[4]|v)
			set64(10, old[5]^v)
			set64(12, v)
			if old[7] == old[6] {
				set64(14, v)
			}
			f2 := want[16]
			want[16] = math.Float32bits(math.Float32frombits(f2) + float32(lo))
			fd2 := u64(18)
			set64(18, math.Float64bits(math.Float64frombits(fd2)+float64(hi)))
			r4 := want[20]
			want[20] = f16x2Add(r4, lo)
			r5, r6, r7, r8 := want[21], want[22], want[23], want[24]
			want[21] += lo
			want[22] += lo
			want[23] += lo
			if r8 == hi {
				want[24] = lo
			}
			r9 := want[25] & 0xffff
			want[25] = want[25]&0xffff0000 | uint32(f16Add(uint16(r9), uint16(hi)))
			rd := old[0] + old[1]
			rd ^= old[2]
			rd += old[3]
			rd ^= old[4]
			rd += old[5]
			rd ^= old[6]
			rd += old[7]
			rd ^= fd2
			r10 := f2 + r4 + r5 + r6 + r7 + r8 + r9
			if g, w := [4]uint32(out), [4]uint32{uint32(rd), uint32(rd >> 32), r10, 0x7fc0dead}; g != w {
				t.Fatalf("n=1: out = %#x, want %#x", g, w)
			}
			for k := range want {
				if got[k] != want[k] {
					t.Fatalf("n=1: word %d (+%#x) = %#x, want %#x", k, 4*k, got[k], want[k])
				}
			}
			continue
		}
		fsum := math.Float64frombits(u64(18))
		for _, v := range x {
			set64(0, u64(0)+v)
			set64(2, uint64(min(int64(u64(2)), int64(v))))
			set64(4, max(u64(4), v))
			set64(6, u64(6)&v)
			set64(8, u64(8)|v)
			set64(10, u64(10)^v)
			fsum += float64(uint32(v >> 32))
			want[21] += uint32(v)
			want[22] += uint32(v)
			want[23] += uint32(v)
		}
		set64(18, math.Float64bits(fsum))
		for _, k := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 18, 19, 21, 22, 23} {
			if got[k] != want[k] {
				t.Fatalf("n=%d: word %d (+%#x) = %#x, want %#x", n, k, 4*k, got[k], want[k])
			}
		}
		if !slices.Contains(x, uint64(got[13])<<32|uint64(got[12])) {
			t.Fatalf("n=%d: exch left %#x, no lane's value", n, uint64(got[13])<<32|uint64(got[12]))
		}
	}
}

// TestSimPtxasSharedHist runs ptxas's shared_hist kernel: a 64-bin byte
// histogram with shared atomics in a grid-stride loop (ptxas aggregates
// them per warp with REDUX and VOTEU, and turns the f32 and 64-bit adds
// into CAS loops), merged into global memory with RED per bin by each of
// two CTAs; the shared max, min, f32 sum, inc and and words and the 64-bit
// sum of the indices stored after the bins. n of 1, 7, 129 and 1000 bytes. Bit for bit against Go; the
// exch and CAS words must hold a byte of the input or zero.
func TestSimPtxasSharedHist(t *testing.T) { corpus.ForSMs(t, simPtxasSharedHist) }

func simPtxasSharedHist(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(70, 71))
	const grid = 2
	for _, n := range []int{1, 7, 129, 1000} {
		x := make([]uint32, (n+3)/4)
		for i := range x {
			x[i] = r.Uint32()
		}
		xb := func(i int) uint32 { return x[i/4] >> (8 * (i % 4)) & 0xff }
		h := poisonWords(80)
		for i := 0; i < 64; i++ {
			h[i] = r.Uint32()
		}
		want := slices.Clone(h)
		var mx, inc uint32
		var fsum float32
		bytes := []uint32{0}
		for i := 0; i < n; i++ {
			b := xb(i)
			want[b&63] += grid
			mx = max(mx, b)
			fsum += float32(b)
			inc = (inc + 1) % 256
			bytes = append(bytes, b)
		}
		isum := uint64(n) * uint64(n-1) / 2 // the 64-bit add of the indices
		copy(want[64:74], []uint32{mx, 0, 0, 0, math.Float32bits(fsum), inc, 0, 0, uint32(isum), uint32(isum >> 32)})
		m := NewMemory()
		ax, ah := alloc(t, m, "x", x, 0), alloc(t, m, "h", h, 0)
		launchCorpus(t, "atomics", "shared_hist", sm, Config{Grid: [3]int{grid}, Block: [3]int{256}, SharedBytes: 512,
			Memory: m, Params: params(ax, ah, uint32(n)), Poison: true})
		got := simWords(m.Bytes("h"))
		for k := range want {
			if k == 66 || k == 67 {
				if !slices.Contains(bytes, got[k]) {
					t.Fatalf("n=%d: h[%d] = %#x, not a byte of the input", n, k, got[k])
				}
				continue
			}
			if got[k] != want[k] {
				t.Fatalf("n=%d: h[%d] = %#x, want %#x", n, k, got[k], want[k])
			}
		}
	}
}
