package sim

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/x448/float16"

	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// The corpus kernels of tail2_math.ptx and tail2_sync.ptx (the forms a
// wider probe of ptxas 11.8 found missing, issue #14) run in the simulator
// on random inputs against Go references written from their PTX, on the
// sm_86 and the sm_89 cubin. mbar, whose ARRIVES.LDGSTSBAR and
// ATOMS.ARRIVE the simulator refuses, skips through launchCorpus, naming
// the word; its reference has not been run.

// tail2Bufs allocates the inputs (named in0, in1, ...) and out in a new
// memory and returns it with their addresses, the kernels' first
// parameters.
func tail2Bufs(t *testing.T, out []uint32, ins ...[]uint32) (*Memory, []any) {
	m := NewMemory()
	var a []any
	for k, in := range ins {
		a = append(a, alloc(t, m, fmt.Sprint("in", k), in, 0))
	}
	return m, append(a, alloc(t, m, "out", out, 0))
}

// tail2Rand is n words from gen.
func tail2Rand(n int, gen func() uint32) []uint32 {
	v := make([]uint32, n)
	for i := range v {
		v[i] = gen()
	}
	return v
}

// tail2Cfg launches n threads (n > 0) as CTAs of 128 with one spare CTA,
// so the kernels' i < n guard is exercised, with the parameters p and
// poisoned registers.
func tail2Cfg(m *Memory, n int, p ...any) Config {
	return Config{Grid: [3]int{(n+127)/128 + 1}, Block: [3]int{128}, Memory: m, Params: params(p...), Poison: true}
}

// randTail2F32 is a binary32 bit pattern biased to the cases min/max and
// rounding treat specially: zeros, subnormals, infinities, NaNs of either
// sign and payload, halves and integers near them.
func randTail2F32(r *rand.Rand) uint32 {
	s := uint32(r.IntN(2)) << 31
	switch r.IntN(8) {
	case 0:
		return s
	case 1:
		return s | r.Uint32N(0x7fffff) + 1 // subnormal
	case 2:
		return s | 0x7f800000
	case 3:
		return s | 0x7f800000 | r.Uint32N(0x7fffff) + 1 // NaN
	case 4:
		return s | math.Float32bits(float32(r.IntN(16))+[]float32{0, 0.5, 0.25, 0.75}[r.IntN(4)])
	}
	return r.Uint32()
}

// randTail2Half is a binary16 (or bfloat16: the same biases in its
// fields) bit pattern of the same kind.
func randTail2Half(r *rand.Rand, bf bool) uint16 {
	s := uint16(r.IntN(2)) << 15
	inf, man := uint16(0x7c00), uint16(0x3ff)
	if bf {
		inf, man = 0x7f80, 0x7f
	}
	switch r.IntN(6) {
	case 0:
		return s
	case 1:
		return s | uint16(r.IntN(int(man))) + 1
	case 2:
		return s | inf
	case 3:
		return s | inf | uint16(r.IntN(int(man))) + 1
	}
	return uint16(r.Uint32())
}

// refOrdered is the smaller (min) or larger of two non-NaN binary64
// values whose sign bits are sa and sb, -0 below +0; it says whether the
// first is chosen.
func refOrdered(x, y float64, sa, sb bool, min bool) bool {
	less := x < y || x == y && sa && !sb
	return less == min
}

// refMinMax is PTX min/max with .NaN (nan) and .xorsign.abs (xs) on the
// width-bit floats a and b (val widens one): with .NaN a NaN source gives
// the canonical NaN (0x7fffffff, 0x7fff); without, one NaN gives the other
// value and two the canonical NaN; .xorsign.abs compares |a| and |b| and
// gives the result the XOR of a's and b's signs (a NaN result stays the
// canonical NaN: assumed, see fmnmxNaN).
func refMinMax(a, b uint32, width int, val func(uint32) float64, min, nan, xs bool) uint32 {
	sign := uint32(1) << (width - 1)
	sgn := (a ^ b) & sign
	if xs {
		a, b = a&^sign, b&^sign
	}
	x, y := val(a), val(b)
	na, nb := x != x, y != y
	var r uint32
	switch {
	case na && nb, nan && (na || nb):
		return sign - 1
	case na:
		r = b
	case nb:
		r = a
	default:
		r = b
		if refOrdered(x, y, a&sign != 0, b&sign != 0, min) {
			r = a
		}
	}
	if xs {
		r = r&^sign | sgn
	}
	return r
}

// refMinMax32 is refMinMax on binary32 bits.
func refMinMax32(a, b uint32, min, nan, xs bool) uint32 {
	return refMinMax(a, b, 32, func(v uint32) float64 { return float64(math.Float32frombits(v)) }, min, nan, xs)
}

// refMinMaxHalf is refMinMax on one binary16 or bfloat16 half.
func refMinMaxHalf(a, b uint16, bf, min, nan, xs bool) uint16 {
	val := func(h uint32) float64 {
		if bf {
			return float64(math.Float32frombits(h << 16))
		}
		return float64(float16.Frombits(uint16(h)).Float32())
	}
	return uint16(refMinMax(uint32(a), uint32(b), 16, val, min, nan, xs))
}

// refMinMaxX2 applies refMinMaxHalf to both halves of a and b.
func refMinMaxX2(a, b uint32, bf, min, nan, xs bool) uint32 {
	lo := refMinMaxHalf(uint16(a), uint16(b), bf, min, nan, xs)
	hi := refMinMaxHalf(uint16(a>>16), uint16(b>>16), bf, min, nan, xs)
	return uint32(hi)<<16 | uint32(lo)
}

// refFTZ32 flushes a binary32 subnormal to zero of its sign.
func refFTZ32(a uint32) uint32 {
	if a&0x7f800000 == 0 {
		return a & 0x80000000
	}
	return a
}

// TestSimPtxasMinMaxNaN runs ptxas's minmax_nan kernel: min/max.NaN.f32
// (FMNMX.NAN), min/max.xorsign.abs.f32 (FMNMX.XORSIGN), min.ftz.NaN.f32,
// max.NaN.f16x2 (HMNMX2.NAN), min.xorsign.abs.f16x2 and
// max.xorsign.abs.bf16x2 (HMNMX2.XORSIGN) on zeros, subnormals,
// infinities and NaNs of both signs; n = 1, 7, 129, 1000 over CTAs of 128
// with a spare CTA. Bit for bit against Go; the sign of a NaN result under
// .xorsign is the model's assumption (fmnmxNaN), the rest is PTX's rule.
func TestSimPtxasMinMaxNaN(t *testing.T) { corpus.ForSMs(t, simPtxasMinMaxNaN) }

func simPtxasMinMaxNaN(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(150, 151))
	for _, n := range []int{1, 7, 129, 1000} {
		x, y := make([]uint32, n), make([]uint32, n)
		for i := range x {
			if r.IntN(2) == 0 {
				x[i], y[i] = randTail2F32(r), randTail2F32(r)
			} else {
				x[i] = uint32(randTail2Half(r, false)) | uint32(randTail2Half(r, true))<<16
				y[i] = uint32(randTail2Half(r, false)) | uint32(randTail2Half(r, true))<<16
			}
			if r.IntN(8) == 0 {
				y[i] = x[i] ^ 0x80008000 // opposite signs of equal magnitude
			}
		}
		m, a := tail2Bufs(t, poisonWords(8*n+8), x, y)
		launchCorpus(t, "tail2_math", "minmax_nan", sm, tail2Cfg(m, n, append(a, uint32(n))...))
		out := simWords(m.Bytes("out"))
		for i := 0; i < n; i++ {
			a, b := x[i], y[i]
			want := [8]uint32{
				refMinMax32(a, b, true, true, false),
				refMinMax32(a, b, false, true, false),
				refMinMax32(a, b, true, false, true),
				refMinMax32(a, b, false, false, true),
				refMinMax32(refFTZ32(a), refFTZ32(b), true, true, false),
				refMinMaxX2(a, b, false, false, true, false),
				refMinMaxX2(a, b, false, true, false, true),
				refMinMaxX2(a, b, true, false, false, true),
			}
			if got := [8]uint32(out[8*i:]); got != want {
				t.Fatalf("n=%d i=%d x=%#x y=%#x: %#x, want %#x", n, i, a, b, got, want)
			}
		}
		checkPoison(t, fmt.Sprint("minmax_nan n=", n), out, 8*n)
	}
}

// TestSimPtxasFrndFTZ runs ptxas's frnd_ftz kernel: cvt.{rzi,rmi,rpi,rni}
// .ftz.f32.f32 (FRND.FTZ.TRUNC/FLOOR/CEIL and FRND.FTZ). A subnormal
// source is flushed to zero of its sign first (so floor of a negative
// subnormal is -0, not -1), a NaN gives the canonical NaN; n = 1, 7, 129,
// 1000. Bit for bit against Go's math.Trunc, Floor, Ceil and RoundToEven.
func TestSimPtxasFrndFTZ(t *testing.T) { corpus.ForSMs(t, simPtxasFrndFTZ) }

func simPtxasFrndFTZ(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(152, 153))
	for _, n := range []int{1, 7, 129, 1000} {
		x := tail2Rand(n, func() uint32 { return randTail2F32(r) })
		m, a := tail2Bufs(t, poisonWords(4*n+4), x)
		launchCorpus(t, "tail2_math", "frnd_ftz", sm, tail2Cfg(m, n, append(a, uint32(n))...))
		out := simWords(m.Bytes("out"))
		for i := 0; i < n; i++ {
			var want [4]uint32
			for k, f := range []func(float64) float64{math.Trunc, math.Floor, math.Ceil, math.RoundToEven} {
				v := refFTZ32(x[i])
				want[k] = math.Float32bits(float32(f(float64(math.Float32frombits(v)))))
				if v&0x7fffffff > 0x7f800000 {
					want[k] = 0x7fffffff
				}
			}
			if got := [4]uint32(out[4*i:]); got != want {
				t.Fatalf("n=%d i=%d x=%#x: %#x, want %#x", n, i, x[i], got, want)
			}
		}
		checkPoison(t, fmt.Sprint("frnd_ftz n=", n), out, 4*n)
	}
}

// TestSimPtxasSatPack runs ptxas's sat_pack kernel: cvt.sat.{s8,u8,s16,u16}
// .s32 (I2I, its source marked .reuse) and cvt.pack.sat.{s8,u8}.s32.b32 and
// .{s16,u16}.s32 (I2IP, the 8-bit forms keeping c's low half above the
// packed pair); values at and past every bound; n = 1, 7, 129, 1000. Bit
// for bit against PTX's rule: a signed result is sign-extended in its
// 32-bit register, an unsigned one zero-extended.
func TestSimPtxasSatPack(t *testing.T) { corpus.ForSMs(t, simPtxasSatPack) }

func simPtxasSatPack(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(154, 155))
	edge := []int32{-32769, -32768, -32767, -129, -128, -127, -1, 0, 1, 127, 128, 255, 256, 32767, 32768, 65535, 65536}
	val := func() uint32 {
		if r.IntN(2) == 0 {
			return uint32(edge[r.IntN(len(edge))])
		}
		return randTailWord(r)
	}
	for _, n := range []int{1, 7, 129, 1000} {
		x, y, z := make([]uint32, n), make([]uint32, n), make([]uint32, n)
		for i := range x {
			x[i], y[i], z[i] = val(), val(), r.Uint32()
		}
		m, a := tail2Bufs(t, poisonWords(8*n+8), x, y, z)
		launchCorpus(t, "tail2_math", "sat_pack", sm, tail2Cfg(m, n, append(a, uint32(n))...))
		out := simWords(m.Bytes("out"))
		sat := func(v uint32, lo, hi int64) uint32 { return uint32(max(lo, min(hi, int64(int32(v))))) }
		for i := 0; i < n; i++ {
			a, b, c := x[i], y[i], z[i]
			s8 := func(v uint32) uint32 { return sat(v, -128, 127) }
			u8 := func(v uint32) uint32 { return sat(v, 0, 255) }
			s16 := func(v uint32) uint32 { return sat(v, -32768, 32767) }
			u16 := func(v uint32) uint32 { return sat(v, 0, 65535) }
			want := [8]uint32{
				s8(a), u8(a), s16(a), u16(a),
				c<<16 | (s8(a)&0xff)<<8 | s8(b)&0xff,
				c<<16 | u8(a)<<8 | u8(b),
				s16(a)<<16 | s16(b)&0xffff,
				u16(a)<<16 | u16(b),
			}
			if got := [8]uint32(out[8*i:]); got != want {
				t.Fatalf("n=%d i=%d a=%#x b=%#x c=%#x: %#x, want %#x", n, i, a, b, c, got, want)
			}
		}
		checkPoison(t, fmt.Sprint("sat_pack n=", n), out, 8*n)
	}
}

// TestSimPtxasMbar runs ptxas's mbar kernel: one CTA of 1, 7, 32, 129
// threads copies x into shared memory with cp.async completed on an
// mbarrier (ARRIVES.LDGSTSBAR.64 for the noinc arrival, ATOMS.ARRIVE.64,
// the barrier word's wait loop); out[tid] = x[partner] + 1 and the parity-0
// test reads complete. Bit for bit. It skips while ARRIVES and
// ATOMS.ARRIVE are refused (the hardware's mbarrier word layout is not
// learnt).
func TestSimPtxasMbar(t *testing.T) { corpus.ForSMs(t, simPtxasMbar) }

func simPtxasMbar(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(156, 157))
	for _, n := range []int{1, 7, 32, 129} {
		x := tail2Rand(n, func() uint32 { return r.Uint32() })
		m, a := tail2Bufs(t, poisonWords(2*n+4), x)
		launchCorpus(t, "tail2_sync", "mbar", sm, Config{Block: [3]int{n}, SharedBytes: 16 + 4096, Memory: m, Params: params(a...), Poison: true})
		out := simWords(m.Bytes("out"))
		for i := 0; i < n; i++ {
			p := i ^ 1
			if p >= n {
				p = i
			}
			if out[i] != x[p]+1 || out[n+i] != 1 {
				t.Fatalf("n=%d tid %d: %#x %d, want %#x 1", n, i, out[i], out[n+i], x[p]+1)
			}
		}
		checkPoison(t, fmt.Sprint("mbar n=", n), out, 2*n)
	}
}

// TestSimPtxasBarReg runs ptxas's bar_reg kernel: one CTA of two warps
// syncing on a barrier named by a register with no thread count (BAR.SYNC
// R) and with one (BAR.SYNC R, 0x40), a value kept in local memory and
// prefetched (CCTLL.PF1), and warp 0 handing values to warp 1 through a
// named barrier (BAR.ARV / BAR.SYNC 0x1, 0x40); every barrier id 0..15.
// Bit for bit against Go.
func TestSimPtxasBarReg(t *testing.T) { corpus.ForSMs(t, simPtxasBarReg) }

func simPtxasBarReg(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(158, 159))
	for b := uint32(0); b < 16; b++ {
		x := tail2Rand(64, func() uint32 { return randTailWord(r) })
		m, a := tail2Bufs(t, poisonWords(64+4), x)
		launchCorpus(t, "tail2_sync", "bar_reg", sm, Config{Block: [3]int{64}, SharedBytes: 384, Memory: m, Params: params(append(a, b)...), Poison: true})
		out := simWords(m.Bytes("out"))
		v := func(tid int) uint32 { return 2 * (x[tid^33]*3 + 1) }
		for i := 0; i < 64; i++ {
			want := v(i)
			if i >= 32 {
				want += v(i - 32)
			}
			if out[i] != want {
				t.Fatalf("barrier %d tid %d: %#x, want %#x", b, i, out[i], want)
			}
		}
		checkPoison(t, fmt.Sprint("bar_reg b=", b), out, 64)
	}
}

// TestSimPtxasTrace runs ptxas's trace kernel: out[i] = 2x+1 where the
// printf path (CALL.ABS.NOINC to vprintf) is not taken, n = 1, 7, 129,
// 1000; then with one lane's x the magic value, the launch must fail with
// ErrUnsupported at the call (the simulator links no vprintf), not run on.
func TestSimPtxasTrace(t *testing.T) { corpus.ForSMs(t, simPtxasTrace) }

func simPtxasTrace(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(160, 161))
	const magic = 0xdeadbeef
	for _, n := range []int{1, 7, 129, 1000} {
		x := make([]uint32, n)
		for i := range x {
			if x[i] = r.Uint32(); x[i] == magic {
				x[i] = 0
			}
		}
		m, a := tail2Bufs(t, poisonWords(n+4), x)
		launchCorpus(t, "tail2_sync", "trace", sm, tail2Cfg(m, n, append(a, uint32(n))...))
		out := simWords(m.Bytes("out"))
		for i := 0; i < n; i++ {
			if out[i] != 2*x[i]+1 {
				t.Fatalf("n=%d i=%d x=%#x: %#x, want %#x", n, i, x[i], out[i], 2*x[i]+1)
			}
		}
		checkPoison(t, fmt.Sprint("trace n=", n), out, n)
	}
	p := corpusKernelOrSkip(t, "tail2_sync", "trace", sm)
	x := []uint32{1, 2, magic, 4}
	m := NewMemory()
	ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", poisonWords(8), 0)
	_, err := Launch(p, Config{Block: [3]int{4}, Memory: m, Params: params(ax, ao, uint32(4)), Poison: true})
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("printf path: err %v, want ErrUnsupported", err)
	}
}

// TestSimPtxasGcas64 runs ptxas's gcas64 kernel: atom.cas.b64 through a
// generic address (ATOM.E.CAS.64 on a 32-bit address, with the
// LD.E.64/ST.E.64 fallback), half the lanes' compare values matching;
// n = 1, 7, 129, 1000. Bit for bit: out holds the old values and memory
// the swapped ones.
func TestSimPtxasGcas64(t *testing.T) { corpus.ForSMs(t, simPtxasGcas64) }

func simPtxasGcas64(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(162, 163))
	for _, n := range []int{1, 7, 129, 1000} {
		mem, cmp, val := make([]uint64, n), make([]uint64, n), make([]uint64, n)
		for i := range mem {
			mem[i], val[i] = r.Uint64(), r.Uint64()
			cmp[i] = r.Uint64()
			if r.IntN(2) == 0 {
				cmp[i] = mem[i]
			}
		}
		m, a := tail2Bufs(t, poisonWords(2*n+4), words64(mem), words64(cmp), words64(val))
		launchCorpus(t, "tail2_sync", "gcas64", sm, tail2Cfg(m, n, append(a, uint32(n))...))
		out, got := simWords(m.Bytes("out")), simWords(m.Bytes("in0"))
		for i := 0; i < n; i++ {
			want := mem[i]
			if cmp[i] == mem[i] {
				want = val[i]
			}
			if o := uint64(out[2*i+1])<<32 | uint64(out[2*i]); o != mem[i] {
				t.Fatalf("n=%d i=%d: old %#x, want %#x", n, i, o, mem[i])
			}
			if g := uint64(got[2*i+1])<<32 | uint64(got[2*i]); g != want {
				t.Fatalf("n=%d i=%d: memory %#x, want %#x", n, i, g, want)
			}
		}
		checkPoison(t, fmt.Sprint("gcas64 n=", n), out, 2*n)
	}
}

// randTail2F64 is a finite binary64 value of any exponent, zero or
// subnormal now and then, either sign.
func randTail2F64(r *rand.Rand) float64 {
	switch r.IntN(8) {
	case 0:
		return math.Copysign(0, float64(r.IntN(2)*2-1))
	case 1:
		return math.Float64frombits(r.Uint64() & 0x800fffffffffffff) // subnormal
	case 2:
		return float64(r.IntN(2000) - 1000)
	}
	f := math.Float64frombits(r.Uint64())
	for math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e300 {
		f = math.Float64frombits(r.Uint64())
	}
	return f
}

// TestSimPtxasDstencil runs ptxas's dstencil kernel: an fp64 three-point
// stencil whose coefficients are kernel parameters (DMUL with a constant
// source, DFMA), the edges and the threads past n not written; n = 3, 7,
// 129, 1000. Bit for bit against Go's IEEE arithmetic (math.FMA for fma).
func TestSimPtxasDstencil(t *testing.T) { corpus.ForSMs(t, simPtxasDstencil) }

func simPtxasDstencil(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(164, 165))
	for _, n := range []int{3, 7, 129, 1000} {
		x := make([]uint64, n)
		for i := range x {
			x[i] = math.Float64bits(randTail2F64(r))
		}
		c0, c1 := randTail2F64(r), float64(r.IntN(9)-4)+0.375
		m, a := tail2Bufs(t, poisonWords(2*n+4), words64(x))
		launchCorpus(t, "tail2_math", "dstencil", sm, tail2Cfg(m, n, append(a, uint32(n), math.Float64bits(c0), math.Float64bits(c1))...))
		y := simWords(m.Bytes("out"))
		f := func(i int) float64 { return math.Float64frombits(x[i]) }
		for i := 1; i < n-1; i++ {
			sum := float64(f(i-1) + f(i+1))
			want := math.Float64bits(math.FMA(f(i), c0, float64(sum*c1)))
			if got := uint64(y[2*i+1])<<32 | uint64(y[2*i]); got != want {
				t.Fatalf("n=%d i=%d x=%v,%v,%v c=%v,%v: %#x, want %#x", n, i, f(i-1), f(i), f(i+1), c0, c1, got, want)
			}
		}
		if y[0] != 0x7fc0dead || y[1] != 0x7fc0dead {
			t.Fatalf("n=%d: y[0] written", n)
		}
		checkPoison(t, fmt.Sprint("dstencil n=", n), y, 2*(n-1))
	}
}

// TestSimPtxasUbits runs ptxas's ubits kernel: a CTA-uniform value v from
// the parameters and %ctaid (POPC, the division idiom), x[i] + v, the float
// difference of two converted integers (I2FP with a constant source), and
// a warp-aggregated atomic add of v (VOTEU.ANY, UPOPC, FLO, one ATOMG per
// warp); n = 1, 7, 129, 1000 over CTAs of 128. The sums and conversions
// are compared bit for bit; the atomic's old values, whose order is the
// scheduler's, must tile [0, total) in steps of each thread's v (threads
// with v = 0 see a value within it).
func TestSimPtxasUbits(t *testing.T) { corpus.ForSMs(t, simPtxasUbits) }

func simPtxasUbits(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(166, 167))
	for _, n := range []int{1, 7, 129, 1000} {
		x := tail2Rand(n, func() uint32 { return randTailWord(r) })
		s, mm, tt := r.Uint32N(1000)+1, r.Uint32(), randTailWord(r)
		out := poisonWords(3*n + 4)
		out[2*n] = 0
		m, a := tail2Bufs(t, out, x)
		launchCorpus(t, "tail2_math", "ubits", sm, tail2Cfg(m, n, append(a, uint32(n), s, mm, tt)...))
		got := simWords(m.Bytes("out"))
		type add struct{ old, v uint32 }
		adds := make([]add, n)
		var total uint32
		for i := 0; i < n; i++ {
			w := uint32(i/128)*s ^ mm
			v := uint32(bitsOnes(w) + bitsOnes(w/s))
			total += v
			if got[i] != x[i]+v {
				t.Fatalf("n=%d i=%d: %#x, want %#x", n, i, got[i], x[i]+v)
			}
			want := math.Float32bits(float32(int32(x[i])) - float32(int32(tt)))
			if got[n+i] != want {
				t.Fatalf("n=%d i=%d: float %#x, want %#x", n, i, got[n+i], want)
			}
			adds[i] = add{got[2*n+1+i], v}
		}
		if got[2*n] != total {
			t.Fatalf("n=%d: counter %d, want %d", n, got[2*n], total)
		}
		slices.SortFunc(adds, func(a, b add) int { return cmp.Or(cmp.Compare(a.old, b.old), cmp.Compare(a.v, b.v)) })
		next := uint32(0)
		for _, a := range adds {
			if a.v == 0 {
				if a.old > total {
					t.Fatalf("n=%d: old value %d past the total %d", n, a.old, total)
				}
				continue
			}
			if a.old != next {
				t.Fatalf("n=%d: old values do not tile: %d where %d was due", n, a.old, next)
			}
			next += a.v
		}
		checkPoison(t, fmt.Sprint("ubits n=", n), got, 3*n+1)
	}
}

// bitsOnes is the population count of v.
func bitsOnes(v uint32) int { return bits.OnesCount32(v) }

// TestSimPtxasSxmask runs ptxas's sxmask kernel: bmsk.wrap.b32 with the
// width a kernel parameter (BMSK.W with a constant source) and
// cvt.s32.s16 (PRMT's sign-replicating selector); n = 1, 7, 129, 1000.
// Bit for bit against PTX's bmsk (position and width mod 32, the mask cut
// at bit 31).
func TestSimPtxasSxmask(t *testing.T) { corpus.ForSMs(t, simPtxasSxmask) }

func simPtxasSxmask(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(168, 169))
	for _, n := range []int{1, 7, 129, 1000} {
		x := tail2Rand(n, func() uint32 { return randTailWord(r) })
		c := r.Uint32N(70)
		m, a := tail2Bufs(t, poisonWords(2*n+4), x)
		launchCorpus(t, "tail2_math", "sxmask", sm, tail2Cfg(m, n, append(a, uint32(n), c)...))
		out := simWords(m.Bytes("out"))
		for i := 0; i < n; i++ {
			pos, width := x[i]&31, c&31
			mask := uint32((uint64(1)<<width - 1) << pos)
			want := [2]uint32{mask, uint32(int32(int16(x[i])))}
			if got := [2]uint32(out[2*i:]); got != want {
				t.Fatalf("n=%d i=%d x=%#x c=%d: %#x, want %#x", n, i, x[i], c, got, want)
			}
		}
		checkPoison(t, fmt.Sprint("sxmask n=", n), out, 2*n)
	}
}

// TestSimPtxasDclamp runs ptxas's dclamp kernel: an fp64 compare with a
// kernel parameter (DSETP with a constant source), DMUL by it and DADD of
// an immediate, selected per element; n = 1, 7, 129, 1000, with elements
// equal to the parameter among them. Bit for bit against Go.
func TestSimPtxasDclamp(t *testing.T) { corpus.ForSMs(t, simPtxasDclamp) }

func simPtxasDclamp(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(170, 171))
	for _, n := range []int{1, 7, 129, 1000} {
		c := randTail2F64(r)
		x := make([]uint64, n)
		for i := range x {
			f := randTail2F64(r)
			if r.IntN(6) == 0 {
				f = c
			}
			x[i] = math.Float64bits(f)
		}
		m, a := tail2Bufs(t, poisonWords(2*n+4), words64(x))
		launchCorpus(t, "tail2_math", "dclamp", sm, tail2Cfg(m, n, append(a, uint32(n), math.Float64bits(c))...))
		y := simWords(m.Bytes("out"))
		for i := 0; i < n; i++ {
			v := math.Float64frombits(x[i])
			want := float64(v + 1)
			if v > c {
				want = float64(v * c)
			}
			if got := uint64(y[2*i+1])<<32 | uint64(y[2*i]); got != math.Float64bits(want) {
				t.Fatalf("n=%d i=%d x=%v c=%v: %#x, want %#x", n, i, v, c, got, math.Float64bits(want))
			}
		}
		checkPoison(t, fmt.Sprint("dclamp n=", n), y, 2*n)
	}
}
