package sim

import (
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// Corpus kernels the simulator cannot run yet (they skip at the first
// word outside the decoder's or the simulator's model, naming it): intmisc,
// bits, mem_forms and dmath. Their Go references are written from the PTX
// semantics and have not been run against the simulator or hardware: when
// the missing forms land, a failure may be the reference's.

// TestSimPtxasIntmisc runs ptxas's intmisc kernel: saturating add and
// subtract, 64-bit add and subtract through carry chains, mad.wide.s32,
// mad.hi, mad.lo.cc with madc.hi, 64-bit min/max/compare/select and
// multiply. Bit for bit against Go.
func TestSimPtxasIntmisc(t *testing.T) { corpus.ForSMs(t, simPtxasIntmisc) }

func simPtxasIntmisc(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(90, 91))
	const n = 256
	x := make([]uint32, 4*n)
	for i := range x {
		switch r.IntN(4) {
		case 0:
			x[i] = []uint32{0, 1, 0x7fffffff, 0x80000000, 0xffffffff}[r.IntN(5)]
		default:
			x[i] = r.Uint32() >> r.IntN(32)
		}
	}
	m := NewMemory()
	ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(n), 0)
	launchCorpus(t, "intmath", "intmisc", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ax, ao), Poison: true})
	out := simWords(m.Bytes("out"))
	sat := func(v int64) uint32 { return uint32(int32(max(math.MinInt32, min(math.MaxInt32, v)))) }
	for i := 0; i < n; i++ {
		a, b, c, d := x[4*i], x[4*i+1], x[4*i+2], x[4*i+3]
		r6 := sat(int64(int32(a)) + int64(int32(b)))
		r7 := sat(int64(int32(c)) - int64(int32(d)))
		r8, c1 := bits.Add32(a, c, 0)
		r9, r10 := bits.Add32(b, d, c1)
		r11, b1 := bits.Sub32(a, c, 0)
		r12, _ := bits.Sub32(b, d, b1)
		rd6 := uint64(int64(int32(a))*int64(int32(b))) + uint64(16*i)
		hi, lo := bits.Mul32(a, b)
		r13 := hi + c
		r14, c3 := bits.Add32(lo, d, 0)
		r15 := hi + c3
		rd7, rd8 := uint64(b)<<32|uint64(a), uint64(d)<<32|uint64(c)
		rd11 := max(rd7, rd8)
		if int64(rd7) < int64(rd8) {
			rd11 = uint64(min(int64(rd7), int64(rd8)))
		}
		rd11 ^= rd7 * rd8
		v := r6 + r7
		v ^= r8
		v += r9
		v ^= r10
		v += r11
		v ^= r12
		v += r13
		v ^= r14
		v += r15
		v ^= uint32(rd11)
		v += uint32(rd11 >> 32)
		v ^= uint32(rd6)
		if out[i] != v {
			t.Fatalf("intmisc(%#x, %#x, %#x, %#x) = %#x, want %#x", a, b, c, d, out[i], v)
		}
	}
}

// bfeRef is PTX bfe.{u32,s32} a, pos, len.
func bfeRef(a, pos, ln uint32, signed bool) uint32 {
	pos, ln = pos&0xff, ln&0xff
	sbit := uint32(0)
	if signed && ln != 0 {
		sbit = a >> min(pos+ln-1, 31) & 1
	}
	var d uint32
	for i := uint32(0); i <= 31; i++ {
		bit := sbit
		if i < ln && pos+i <= 31 {
			bit = a >> (pos + i) & 1
		}
		d |= bit << i
	}
	return d
}

// bfiRef is PTX bfi.b32 d, a, b, pos, len: b with a's low bits inserted.
func bfiRef(a, b, pos, ln uint32) uint32 {
	pos, ln = pos&0xff, ln&0xff
	for i := uint32(0); i < ln && pos+i <= 31; i++ {
		b = b&^(1<<(pos+i)) | (a>>i&1)<<(pos+i)
	}
	return b
}

// prmtRef is PTX prmt.b32 in the default mode.
func prmtRef(a, b, c uint32) uint32 {
	x := uint64(b)<<32 | uint64(a)
	var d uint32
	for i := 0; i < 4; i++ {
		s := c >> (4 * i) & 0xf
		v := uint32(x >> (8 * (s & 7)) & 0xff)
		if s&8 != 0 {
			v = 0
			if v0 := x >> (8*(s&7) + 7) & 1; v0 != 0 {
				v = 0xff
			}
		}
		d |= v << (8 * i)
	}
	return d
}

// bfindRef is PTX bfind.{u32,s32}: the position of the most significant bit
// (not equal to the sign bit for s32), 0xffffffff for none.
func bfindRef(a uint32, signed bool) uint32 {
	if signed && int32(a) < 0 {
		a = ^a
	}
	if a == 0 {
		return 0xffffffff
	}
	return uint32(31 - bits.LeadingZeros32(a))
}

// TestSimPtxasBits runs ptxas's bits kernel: popc, brev, clz, bfind
// (.u32, .s32, .shiftamt), bfe (.u32, .s32), bfi, prmt (default and .f4e),
// funnel shifts (wrap, clamp), 64-bit popc/clz/brev, mul.hi, sad, abs,
// min/max, mul24, not, cnot, chained into one word per thread. Bit for bit
// against Go.
func TestSimPtxasBits(t *testing.T) { corpus.ForSMs(t, simPtxasBits) }

func simPtxasBits(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(92, 93))
	const n = 256
	x := make([]uint32, 2*n)
	for i := range x {
		x[i] = r.Uint32() >> r.IntN(32)
		if r.IntN(4) == 0 {
			x[i] = ^x[i]
		}
	}
	x[0], x[1], x[2], x[3] = 0, 0, 0xffffffff, 0x80000000
	m := NewMemory()
	ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(2*n), 0)
	launchCorpus(t, "reduce", "bits", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ax, ao), Poison: true})
	out := simWords(m.Bytes("out"))
	for i := 0; i < n; i++ {
		a, b := x[2*i], x[2*i+1]
		s := b & 31
		rd5 := uint64(b)<<32 | uint64(a)
		f4 := uint64(b)<<32 | uint64(a)
		r9 := uint32(0xffffffff)
		if b != 0 {
			r9 = uint32(bits.LeadingZeros32(b))
		}
		shfL := b<<s | uint32(uint64(a)>>(32-s))
		shfR := a>>s | uint32(uint64(b)<<(32-s))
		hi, _ := bits.Mul32(a, b)
		hs := uint32(uint64(int64(int32(a))*int64(int32(b))) >> 32)
		sad := a - b
		if b > a {
			sad = b - a
		}
		popc := uint32(bits.OnesCount32(a))
		sad += popc
		abs := b
		if int32(b) < 0 {
			abs = -b
		}
		cnot := uint32(0)
		if b == 0 {
			cnot = 1
		}
		brev64 := bits.Reverse64(rd5)
		terms := []uint32{
			bits.Reverse32(a), uint32(bits.LeadingZeros32(a)), bfindRef(a, false), bfindRef(b, true), r9,
			bfeRef(a, s, 5, false), bfeRef(a, 3, s, true), bfiRef(a, b, s, 7), prmtRef(a, b, 0x5140),
			uint32(f4 >> (8 * (s & 3))), shfL, shfR,
			uint32(bits.OnesCount64(rd5)), uint32(bits.LeadingZeros64(rd5)), hi, hs, sad, abs,
			uint32(min(int32(a), int32(b))), max(a, b), (a & 0xffffff) * (b & 0xffffff), ^a, cnot,
			uint32(brev64), uint32(brev64 >> 32),
		}
		v := popc
		for k, w := range terms {
			if k%2 == 0 {
				v += w
			} else {
				v ^= w
			}
		}
		if out[2*i] != v {
			t.Fatalf("bits(%#x, %#x) = %#x, want %#x", a, b, out[2*i], v)
		}
		if out[2*i+1] != 0x7fc0dead {
			t.Fatalf("bits: thread %d wrote word %d", i, 2*i+1)
		}
	}
}

// TestSimPtxasMemForms runs ptxas's mem_forms kernel: 8-, 16-, 32-, 64-
// and 128-bit global loads (signed and unsigned, cache operators,
// volatile, relaxed and acquire) and stores (write-through, streaming,
// volatile, relaxed, release), a prefetch, fences and the clocks. Byte 1
// of each thread's output block is never stored and must keep its
// poison. Bit for bit against Go.
func TestSimPtxasMemForms(t *testing.T) { corpus.ForSMs(t, simPtxasMemForms) }

func simPtxasMemForms(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(94, 95))
	for _, n := range []int{1, 7, 129} {
		x := make([]uint32, 16*n+16)
		for i := range x {
			x[i] = r.Uint32()
		}
		m := NewMemory()
		ax, ay := alloc(t, m, "x", x, 0), alloc(t, m, "y", poisonWords(16*n), 0)
		launchCorpus(t, "uniform", "mem_forms", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ax, ay), Poison: true})
		out := simWords(m.Bytes("y"))
		for i := 0; i < n; i++ {
			w := x[16*i : 16*i+16]
			r3 := uint32(int32(int8(w[0] >> 8)))
			r5 := uint32(int32(int16(w[1])))
			want := [16]uint32{
				0x7fc0dead&0xff00 | r3&0xff | r5<<16, w[0] & 0xff, w[0] >> 16 & 0xffff, w[2],
				w[4], w[5], w[8], w[9],
				w[14], w[15], w[14], w[15],
				w[10], w[11], w[12], w[3] + w[6] + w[7],
			}
			if got := [16]uint32(out[16*i:]); got != want {
				t.Fatalf("n=%d thread %d: %#x, want %#x", n, i, got, want)
			}
		}
	}
}

// TestSimPtxasDmath runs ptxas's dmath kernel: binary64 add, sub, mul and
// fma in each rounding direction (DADD.RZ, DMUL.RM, DMUL.RP, DFMA.RZ),
// min and max (DSETP.MIN/MAX with FSEL/SEL), |x| and -x, IEEE division,
// reciprocal and square root (Newton iterations on MUFU.RCP64H/RSQ64H with
// their slow-path calls), compares and selects, on random binary64 inputs
// (subnormals, NaNs with payloads, signalling NaNs). out[2t] is the exact
// chain, compared bit for bit (a NaN result by NaN-ness: the payload of a
// NaN an operation makes is not specified), against a reference with
// math/big for the directed roundings; out[2t+1] is rcp.approx.ftz, within
// 2^-20 relative.
func TestSimPtxasDmath(t *testing.T) { corpus.ForSMs(t, simPtxasDmath) }

func simPtxasDmath(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(96, 97))
	const n = 256
	a, b := make([]uint64, n), make([]uint64, n)
	for i := range a {
		a[i], b[i] = randF64(r), randF64(r)
		switch r.IntN(8) {
		case 0:
			a[i] = 0x7ff8000000000000 | r.Uint64()>>13 // quiet NaN with a payload
		case 1:
			b[i] = 0x7ff0000000000001 | r.Uint64()>>13 // signalling NaN
		case 2:
			b[i] = math.Float64bits(math.Float64frombits(a[i]) * (1 + r.Float64()/16)) // close values
		}
	}
	m := NewMemory()
	aa, ab, ao := alloc(t, m, "a", words64(a), 0), alloc(t, m, "b", words64(b), 0), alloc(t, m, "out", poisonWords(4*n+4), 0)
	launchCorpus(t, "fp64", "dmath", sm, Config{Block: [3]int{n}, Memory: m, Params: params(aa, ab, ao), Poison: true})
	out := simWords(m.Bytes("out"))
	for i := range a {
		want := dmathRef(math.Float64frombits(a[i]), math.Float64frombits(b[i]))
		got := uint64(out[4*i+1])<<32 | uint64(out[4*i])
		if math.IsNaN(want) && !math.IsNaN(math.Float64frombits(b[i])) {
			if !math.IsNaN(math.Float64frombits(got)) {
				t.Fatalf("dmath(%#x, %#x) = %#x, want a NaN", a[i], b[i], got)
			}
		} else if w := math.Float64bits(want); got != w && !zeroTie(got, w) {
			t.Fatalf("dmath(%#x, %#x) = %#x (%g), want %#x (%g)", a[i], b[i], got, math.Float64frombits(got), w, want)
		}
		rc := math.Float64frombits(uint64(out[4*i+3])<<32 | uint64(out[4*i+2]))
		bv := math.Float64frombits(b[i])
		wr := 1 / bv
		switch {
		case math.IsNaN(bv):
			if !math.IsNaN(rc) {
				t.Fatalf("rcp.approx(%g) = %g, want NaN", bv, rc)
			}
		case math.Abs(bv) < 0x1p-1022 || math.IsInf(wr, 0) || math.Abs(wr) < 0x1p-1022:
			// flushed subnormal sources and results: an infinity or zero
			// (or a neighbour of the range's end) of the right sign
			if math.Signbit(rc) != math.Signbit(wr) {
				t.Fatalf("rcp.approx(%g) = %g, want the sign of %g", bv, rc, wr)
			}
		default:
			if !(math.Abs(rc-wr) <= 0x1p-20*math.Abs(wr)) {
				t.Fatalf("rcp.approx(%g) = %g, want %g within 2^-20", bv, rc, wr)
			}
		}
	}
	checkPoison(t, "dmath", out, 4*n)
}

// zeroTie accepts the two zeros for each other: the order of -0 and +0 in
// min and max is an assumption of the simulator, not a measured fact.
func zeroTie(x, y uint64) bool { return x<<1 == 0 && y<<1 == 0 }

// dmathRef is the dmath kernel in Go: the directed roundings through
// round64, the rest in Go's binary64 (IEEE round to nearest even).
func dmathRef(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return b
	}
	fd3 := a + b
	fd4 := op64(big.ToZero, a, b, 0, '-')
	fd5 := op64(big.ToNegativeInf, fd3, fd4, 0, '*')
	fd6 := op64(big.ToPositiveInf, a, fd4, 0, '*')
	fd7 := op64(big.ToZero, fd5, fd6, a, 'f')
	fd8 := minNum(fd7, b)
	fd9 := maxNum(fd8, a)
	fd10 := math.Abs(fd9)
	fd12 := -fd10 + fd3
	if !(a < b) {
		return fd12
	}
	fd13 := fd12 / b
	fd14 := 1 / a
	fd15 := math.Sqrt(fd10)
	return fd13 + fd14 + fd15
}

// minNum and maxNum: a NaN gives the other operand; -0 is below +0.
func minNum(x, y float64) float64 {
	switch {
	case x != x:
		return y
	case y != y, x < y, x == y && math.Signbit(x):
		return x
	}
	return y
}

func maxNum(x, y float64) float64 {
	switch {
	case x != x:
		return y
	case y != y, x > y, x == y && !math.Signbit(x):
		return x
	}
	return y
}

// op64 is x-y ('-'), x*y ('*') or x*y+z ('f') in binary64 rounded in
// direction mode, with subnormal results and overflow as IEEE has them.
// Infinite or NaN operands give Go's result (exact in every direction).
func op64(mode big.RoundingMode, x, y, z float64, op byte) float64 {
	if math.IsInf(x, 0) || math.IsInf(y, 0) || math.IsInf(z, 0) || x != x || y != y || z != z {
		switch op {
		case '-':
			return x - y
		case '*':
			return x * y
		}
		return math.FMA(x, y, z)
	}
	const prec = 2200 // holds every exact sum and product of finite binary64 values
	bx, by := new(big.Float).SetPrec(prec).SetFloat64(x), new(big.Float).SetPrec(prec).SetFloat64(y)
	e := new(big.Float).SetPrec(prec)
	switch op {
	case '-':
		e.Sub(bx, by)
	case '*':
		e.Mul(bx, by)
	default:
		e.Mul(bx, by)
		e.Add(e, new(big.Float).SetPrec(prec).SetFloat64(z))
	}
	if e.Sign() == 0 {
		// an exact zero: -0 only from -0 - +0 or a product or sum of
		// negative zeros, and +0 - +0 rounding down gives -0
		switch op {
		case '-':
			if x == 0 && y == 0 {
				return x - y
			}
		case '*':
			return x * y
		default:
			if p := x * y; p == 0 && z == 0 {
				return p + z
			}
		}
		if mode == big.ToNegativeInf {
			return math.Copysign(0, -1)
		}
		return 0
	}
	return round64(e, mode)
}

// round64 rounds the nonzero exact value e to binary64 in direction mode:
// normal results by big.Float at 53 bits, subnormal ones as a multiple of
// 2^-1074, overflow to the largest finite value or infinity as the
// direction says.
func round64(e *big.Float, mode big.RoundingMode) float64 {
	neg := e.Signbit()
	exp := e.MantExp(nil) // 2^(exp-1) <= |e| < 2^exp
	if exp-1 >= -1022 {
		r := new(big.Float).SetPrec(53).SetMode(mode).Set(e)
		if r.MantExp(nil)-1 > 1023 {
			up := mode == big.ToPositiveInf && !neg || mode == big.ToNegativeInf && neg || mode == big.ToNearestEven
			if up {
				return math.Inf(map[bool]int{true: -1, false: 1}[neg])
			}
			return math.Copysign(math.MaxFloat64, map[bool]float64{true: -1, false: 1}[neg])
		}
		f, _ := r.Float64()
		return f
	}
	// subnormal: round e * 2^1074 to an integer in direction mode
	s := new(big.Float).SetPrec(e.Prec()).SetMantExp(e, 1074)
	bits := exp + 1074 // significant bits before the binary point
	if bits <= 0 {
		// |s| < 1/2 (or < 1): 0 or one unit, by direction
		away := mode == big.ToPositiveInf && !neg || mode == big.ToNegativeInf && neg
		if bits == 0 && mode == big.ToNearestEven {
			// 1/2 <= |s| < 1: nearest is one unit unless exactly 1/2 (tie to 0)
			away = new(big.Float).Abs(s).Cmp(big.NewFloat(0.5)) > 0
		}
		if away {
			return math.Copysign(math.SmallestNonzeroFloat64, map[bool]float64{true: -1, false: 1}[neg])
		}
		return math.Copysign(0, map[bool]float64{true: -1, false: 1}[neg])
	}
	ri := new(big.Float).SetPrec(uint(bits)).SetMode(mode).Set(s)
	f, _ := new(big.Float).SetMantExp(ri, -1074).Float64()
	return f
}
