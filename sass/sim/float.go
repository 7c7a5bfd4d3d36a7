package sim

import (
	"math"
	"math/big"
	"math/bits"

	"github.com/tcrt-go/tcrt/tile"
)

// The simulator's floating-point arithmetic. Every binary32 operation is
// computed exactly (a product of two binary32 values is exact in binary64;
// a sum is held as a binary64 value plus the exact error of its rounding,
// TwoSum) and then rounded once, by integer code, to the target format in
// the instruction's rounding direction. So FADD, FMUL and FFMA are
// bit-exact IEEE 754 binary32 in all four directions, subnormals included.

// rmode is a rounding direction.
type rmode uint8

const (
	rnEven rmode = iota // .RN (the default)
	rnDown              // .RM, toward -infinity
	rnUp                // .RP, toward +infinity
	rnZero              // .RZ
)

// ffmt is a binary floating-point format: mantissa bits, the least normal
// exponent, the greatest exponent, the width in bits.
type ffmt struct {
	mant       uint
	emin, emax int
	width      uint
}

var (
	fmtF32  = ffmt{mant: 23, emin: -126, emax: 127, width: 32}
	fmtF16  = ffmt{mant: 10, emin: -14, emax: 15, width: 16}
	fmtBF16 = ffmt{mant: 7, emin: -126, emax: 127, width: 16}
)

// canonical NaNs the GPU writes.
const (
	nanF32 = 0x7fffffff
	nanF16 = 0x7fff
)

// twoSum returns s = fl(a+b) and the exact error e, a+b = s+e (Knuth).
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	e = (a - (s - bb)) + (b - bb)
	return
}

// roundFmt rounds the exact value x+tail (tail tiny beside x: |tail| at
// most half an ulp of x in binary64, as twoSum gives; only its sign
// matters) to format f in direction m, returning the format's bits. x must
// not be NaN.
func roundFmt(x, tail float64, m rmode, f *ffmt) uint64 {
	var sign uint64
	if math.Signbit(x) {
		sign = 1 << (f.width - 1)
	}
	bias := f.emax
	infBits := uint64(f.emax+bias+1) << f.mant
	ax := math.Abs(x)
	if math.IsInf(ax, 0) {
		return sign | infBits
	}
	if ax == 0 {
		return sign
	}
	neg := sign != 0
	t := tail
	if neg {
		t = -t
	}
	// does the direction round the magnitude up, or down (truncate)?
	up := (m == rnUp && !neg) || (m == rnDown && neg)
	down := m == rnZero || (m == rnUp && neg) || (m == rnDown && !neg)
	fr, e := math.Frexp(ax) // ax = fr * 2^e, fr in [0.5, 1)
	E := e - 1
	m53 := uint64(fr * (1 << 53)) // ax = m53 * 2^(E-52), exact
	ee := E
	if ee < f.emin {
		ee = f.emin
	}
	shift := ee - int(f.mant) - (E - 52)
	var n uint64
	cls := 0 // 0 exact, 1 below half, 2 half, 3 above half
	switch {
	case shift <= 0:
		n = m53 << uint(-shift)
	case shift > 53:
		n, cls = 0, 1
	default:
		n = m53 >> uint(shift)
		rem := m53 & (1<<uint(shift) - 1)
		half := uint64(1) << uint(shift-1)
		switch {
		case rem == 0:
		case rem < half:
			cls = 1
		case rem == half:
			cls = 2
		default:
			cls = 3
		}
	}
	b := uint64(ee-f.emin)<<f.mant + n
	if cls == 0 {
		if t < 0 && down {
			b--
		} else if t > 0 && up {
			b++
		}
	} else {
		if cls == 2 && t != 0 {
			if t > 0 {
				cls = 3
			} else {
				cls = 1
			}
		}
		inc := false
		switch {
		case m == rnEven:
			inc = cls == 3 || (cls == 2 && n&1 == 1)
		case up:
			inc = true
		}
		if inc {
			b++
		}
	}
	if b >= infBits {
		if down {
			b = infBits - 1
		} else {
			b = infBits
		}
	}
	return sign | b
}

func f32(b uint32) float64 { return float64(math.Float32frombits(b)) }

// ftz32 flushes a binary32 subnormal to zero of the same sign.
func ftz32(b uint32) uint32 {
	if b&0x7f800000 == 0 {
		return b & 0x80000000
	}
	return b
}

func isNaN32(b uint32) bool { return b&0x7fffffff > 0x7f800000 }

// fround finishes a binary32 operation: x+tail rounded in direction m;
// NaN becomes the canonical NaN.
func fround(x, tail float64, m rmode) uint32 {
	if x != x {
		return nanF32
	}
	return uint32(roundFmt(x, tail, m, &fmtF32))
}

// zeroSign fixes the sign of an exact zero sum of a and b: IEEE gives +0
// except when rounding down (-0), or when both are -0.
func zeroSign(s, a, b float64, m rmode) float64 {
	if s == 0 && m == rnDown && !(a == 0 && b == 0 && !math.Signbit(a) && !math.Signbit(b)) {
		return math.Copysign(0, -1)
	}
	return s
}

// fadd32 is FADD: a+b in binary32, direction m.
func fadd32(a, b uint32, m rmode, ftz bool) uint32 {
	if ftz {
		a, b = ftz32(a), ftz32(b)
	}
	x, y := f32(a), f32(b)
	s, e := twoSum(x, y)
	if s != s || math.IsInf(s, 0) {
		if s != s {
			return nanF32
		}
		return uint32(roundFmt(s, 0, m, &fmtF32))
	}
	s = zeroSign(s, x, y, m)
	r := fround(s, e, m)
	if ftz {
		r = ftz32(r)
	}
	return r
}

// fmul32 is FMUL: the product is exact in binary64.
func fmul32(a, b uint32, m rmode, ftz bool) uint32 {
	if ftz {
		a, b = ftz32(a), ftz32(b)
	}
	r := fround(f32(a)*f32(b), 0, m)
	if ftz {
		r = ftz32(r)
	}
	return r
}

// ffma32 is FFMA: a*b+c with a single rounding.
func ffma32(a, b, c uint32, m rmode, ftz bool) uint32 {
	if ftz {
		a, b, c = ftz32(a), ftz32(b), ftz32(c)
	}
	p := f32(a) * f32(b)
	z := f32(c)
	s, e := twoSum(p, z)
	if s != s || math.IsInf(s, 0) {
		if s != s {
			return nanF32
		}
		return uint32(roundFmt(s, 0, m, &fmtF32))
	}
	s = zeroSign(s, p, z, m)
	r := fround(s, e, m)
	if ftz {
		r = ftz32(r)
	}
	return r
}

// sat32 is .SAT: the result clamped to [0, 1], NaN to +0.
func sat32(r uint32) uint32 {
	switch {
	case isNaN32(r), r&0x80000000 != 0:
		return 0
	case r > 0x3f800000:
		return 0x3f800000
	}
	return r
}

// fmnmx32 is FMNMX: one NaN source gives the other, two give the
// canonical NaN; -0 is below +0.
func fmnmx32(a, b uint32, min, ftz bool) uint32 {
	if ftz {
		a, b = ftz32(a), ftz32(b)
	}
	na, nb := isNaN32(a), isNaN32(b)
	switch {
	case na && nb:
		return nanF32
	case na:
		return b
	case nb:
		return a
	}
	x, y := f32(a), f32(b)
	less := x < y || (x == y && a&0x80000000 != 0 && b&0x80000000 == 0)
	if less == min {
		return a
	}
	return b
}

// fmnmxNaN is FMNMX.NAN and FMNMX.XORSIGN on the raw sources x, y and
// the sources a, b after their |.| and - modifiers: .NAN makes a NaN
// source give the canonical NaN (PTX min/max.NaN); .XORSIGN gives the
// result the XOR of x's and y's sign bits (PTX min/max.xorsign.abs, whose
// operands ptxas passes with |.|). A NaN result keeps the canonical NaN's
// sign (assumed: not checked on silicon).
func fmnmxNaN(x, y, a, b uint32, min, ftz, nan, xorsign bool) uint32 {
	if ftz {
		a, b = ftz32(a), ftz32(b)
	}
	if nan && (isNaN32(a) || isNaN32(b)) {
		return nanF32
	}
	r := fmnmx32(a, b, min, false)
	if xorsign && !isNaN32(r) {
		r = r&0x7fffffff | (x^y)&0x80000000
	}
	return r
}

// fcmp evaluates FSETP's comparison code (F LT EQ LE GT NE GE NUM NAN LTU
// EQU LEU GTU NEU GEU T).
func fcmp(code uint8, a, b uint32, ftz bool) bool {
	if ftz {
		a, b = ftz32(a), ftz32(b)
	}
	// binary32 values compare as their (exact) binary64 widenings
	return dcmp(code, f32(a), f32(b))
}

// mufu computes MUFU: the operation in binary64 rounded to nearest
// binary32 -- a documented approximation of the hardware unit, which is
// accurate to a few ulp (see Config). Subnormal sources and results
// flush to zero, as the unit does. SIN and COS take their argument in
// revolutions (ptxas multiplies by 1/(2 pi) first).
func mufu(op uint8, a uint32) uint32 {
	if op >= mufuRCP64H {
		return mufu64h(op, a)
	}
	x := f32(ftz32(a))
	var r float64
	switch op {
	case mufuCOS:
		r = math.Cos(2 * math.Pi * x)
	case mufuSIN:
		r = math.Sin(2 * math.Pi * x)
	case mufuEX2:
		r = math.Exp2(x)
	case mufuLG2:
		r = math.Log2(x)
	case mufuRCP:
		r = 1 / x
	case mufuRSQ:
		r = 1 / math.Sqrt(x)
	case mufuSQRT:
		r = math.Sqrt(x)
	case mufuTANH:
		r = math.Tanh(x)
	}
	return ftz32(fround(r, 0, rnEven))
}

// MUFU operations, as the modifier numbers them.
const (
	mufuCOS uint8 = iota
	mufuSIN
	mufuEX2
	mufuLG2
	mufuRCP
	mufuRSQ
	mufuSQRT
	mufuTANH
	mufuRCP64H
	mufuRSQ64H
)

// f16 helpers.

func h16(b uint16) float64 {
	s := 1.0
	if b&0x8000 != 0 {
		s = -1
	}
	e := int(b >> 10 & 0x1f)
	m := float64(b & 0x3ff)
	switch e {
	case 0:
		return s * math.Ldexp(m, -24)
	case 31:
		if m != 0 {
			return math.NaN()
		}
		return s * math.Inf(1)
	}
	return s * math.Ldexp(m+1024, e-25)
}

func bf16(b uint16) float64 { return float64(math.Float32frombits(uint32(b) << 16)) }

// toHalf rounds x+tail to binary16 (bf false) or bfloat16 (bf true), to
// nearest even; NaN becomes 0x7fff.
func toHalf(x, tail float64, bf bool) uint16 {
	if x != x {
		return nanF16
	}
	if bf {
		return uint16(roundFmt(x, tail, rnEven, &fmtBF16))
	}
	return uint16(roundFmt(x, tail, rnEven, &fmtF16))
}

func half(b uint16, bf bool) float64 {
	if bf {
		return bf16(b)
	}
	return h16(b)
}

// hop2 applies a packed half operation to both halves: op 0 add, 1 mul,
// 2 fma (a*b+c).
func hop2(op int, a, b, c uint32, bf bool) uint32 {
	var out uint32
	for k := uint(0); k < 32; k += 16 {
		x, y, z := half(uint16(a>>k), bf), half(uint16(b>>k), bf), half(uint16(c>>k), bf)
		var s, e float64
		switch op {
		case 0:
			s, e = twoSum(x, y)
		case 1:
			s = x * y
		default:
			s, e = twoSum(x*y, z)
		}
		if math.IsInf(s, 0) || s != s {
			e = 0
		}
		out |= uint32(toHalf(s, e, bf)) << k
	}
	return out
}

// halfMods are HADD2/HMUL2/HFMA2's result modifiers: .FTZ flushes
// subnormal sources and results to zero of their sign, .SAT clamps the
// result to [+0, 1] (NaN to +0, as FADD.SAT), .RELU clamps a negative
// result to +0 (the canonical NaN stays; -0 becomes +0, as F2FP.RELU).
type halfMods struct{ ftz, sat, relu bool }

// ftzHalf flushes a subnormal binary16 (bfloat16) to zero of its sign.
func ftzHalf(h uint16, bf bool) uint16 {
	exp, man := uint16(0x7c00), uint16(0x03ff)
	if bf {
		exp, man = 0x7f80, 0x007f
	}
	if h&exp == 0 && h&man != 0 {
		return h & 0x8000
	}
	return h
}

// hop2m is hop2 with result modifiers.
func hop2m(op int, a, b, c uint32, bf bool, m halfMods) uint32 {
	pair := func(v uint32, f func(uint16) uint16) uint32 {
		return uint32(f(uint16(v>>16)))<<16 | uint32(f(uint16(v)))
	}
	flush := func(h uint16) uint16 { return ftzHalf(h, bf) }
	if m.ftz {
		a, b, c = pair(a, flush), pair(b, flush), pair(c, flush)
	}
	one := uint16(0x3c00)
	if bf {
		one = 0x3f80
	}
	post := func(h uint16) uint16 {
		if m.ftz {
			h = flush(h)
		}
		switch {
		case m.sat && (h&0x8000 != 0 || h == nanF16):
			h = 0
		case m.sat && h > one:
			h = one
		case m.relu && h&0x8000 != 0:
			h = 0
		}
		return h
	}
	return pair(hop2(op, a, b, c, bf), post)
}

// f2fp packs two binary32 values as F2FP.PACK_AB does: hi to the high
// half, lo to the low, each rounded to nearest even (or toward zero: .RZ,
// rnd); relu clamps negative results to +0.
func f2fp(hi, lo uint32, bf, relu bool, rnd rmode) uint32 {
	f := &fmtF16
	if bf {
		f = &fmtBF16
	}
	cv := func(v uint32) uint32 {
		var h uint32
		switch x := f32(v); {
		case rnd == rnEven:
			h = uint32(toHalf(x, 0, bf))
		case x != x:
			h = nanF16
		default:
			h = uint32(roundFmt(x, 0, rnd, f))
		}
		if relu && h&0x8000 != 0 && h != nanF16 {
			h = 0
		}
		return h
	}
	return cv(hi)<<16 | cv(lo)
}

// f2fp8 packs two binary32 values into float8 with satfinite (tile's
// encoder, round to nearest even), merging the selected half of merge into
// bits 16..31.
func f2fp8(hi, lo, merge uint32, e5m2, mergeHi bool) uint32 {
	enc := func(v uint32) uint32 {
		x := math.Float32frombits(v)
		if e5m2 {
			return uint32(tile.F32ToE5M2(x, tile.Saturate))
		}
		return uint32(tile.F32ToE4M3(x, tile.Saturate))
	}
	m := merge & 0xffff
	if mergeHi {
		m = merge >> 16
	}
	return m<<16 | enc(hi)<<8 | enc(lo)
}

// i2f converts an integer to binary32 in direction m. v holds the value
// (sign-extended when signed); wide marks a 64-bit source.
func i2f(v uint64, signed, wide bool, m rmode) uint32 {
	if !wide {
		if signed {
			return fround(float64(int32(uint32(v))), 0, m)
		}
		return fround(float64(uint32(v)), 0, m)
	}
	neg := false
	if signed && int64(v) < 0 {
		neg = true
		v = -v
	}
	hi := float64(v>>32) * (1 << 32)
	s, e := twoSum(hi, float64(v&0xffffffff))
	if neg {
		s, e = -s, -e
	}
	return fround(s, e, m)
}

// f2i converts binary64 x to an integer of the given width with rounding
// code rnd (0 nearest even, 1 floor, 2 ceil, 3 trunc), saturating; NaN
// gives 0.
func f2i(x float64, rnd uint8, signed bool, width uint) uint64 {
	if x != x {
		return 0
	}
	switch rnd {
	case 0:
		x = math.RoundToEven(x)
	case 1:
		x = math.Floor(x)
	case 2:
		x = math.Ceil(x)
	default:
		x = math.Trunc(x)
	}
	if signed {
		lim := math.Ldexp(1, int(width)-1)
		switch {
		case x >= lim:
			return uint64(1)<<(width-1) - 1
		case x < -lim:
			return uint64(1) << (width - 1) & (1<<width - 1)
		}
		return uint64(int64(x)) & (1<<width - 1)
	}
	lim := math.Ldexp(1, int(width))
	switch {
	case x <= 0:
		return 0
	case x >= lim:
		return 1<<width - 1
	}
	if width == 64 && x >= 1<<63 {
		return uint64(x-(1<<63)) | 1<<63
	}
	return uint64(x)
}

func popc(x uint32) int { return bits.OnesCount32(x) }

// nanF64 is the NaN the simulator gives binary64 arithmetic that makes one:
// the binary32 rule (all ones but the sign, nvdisasm prints +QNAN) carried
// over; not verified on silicon.
const nanF64 = 0x7fffffffffffffff

// f64 reads lane l of a binary64 source pair, its neg and abs modifiers
// applied to the sign in the high word.
func (w *warp) f64(s *sopnd, slot, l int) float64 {
	lo, hi := w.srcK(s, slot, 0)[l], w.srcK(s, slot, 1)[l]
	return math.Float64frombits(uint64(fsrc(s, hi))<<32 | uint64(lo))
}

// darith is DADD, DMUL and DFMA in round-to-nearest.
func (c *cta) darith(w *warp, d *dinst, exec uint32) {
	lo, hi := w.dst(d.d), w.dstK(d.d, 1)
	for l := 0; l < 32; l++ {
		if !lanes(exec, l) {
			continue
		}
		x, y := w.f64(&d.s[0], 0, l), w.f64(&d.s[1], 1, l)
		var r float64
		switch d.op {
		case xDADD:
			r = x + y
		case xDMUL:
			r = x * y
		default:
			r = math.FMA(x, y, w.f64(&d.s[2], 2, l))
		}
		if d.rnd != rnEven {
			var z float64
			if d.op == xDFMA {
				z = w.f64(&d.s[2], 2, l)
			}
			r = dDirected(d.op, x, y, z, d.rnd)
		}
		b := math.Float64bits(r)
		if r != r {
			b = nanF64
		}
		lo[l], hi[l] = uint32(b), uint32(b>>32)
	}
}

// dcmp is fcmp on binary64 values.
// DSETP.MIN and DSETP.MAX (dinst.sub): ptxas's min.f64/max.f64 idiom
// selects the first source's words where the first predicate holds and
// quiets the second source where the second holds
// (testdata/ptxas/golden/fp64: DSETP.MIN.AND P0, P1, R8, R2; FSEL/SEL by
// P0; @P1 LOP3 R3 = R14 | 0x80000).
const (
	dsetpMin = 1
	dsetpMax = 2
)

// dminmax returns DSETP.MIN/MAX's two predicates for sources x, y: the
// first source is the result (x is not NaN and y is NaN, or x is below y
// for MIN, above for MAX, -0 below +0), and both are NaN. That the second
// predicate is "both NaN" follows from ptxas's use of it (a NaN x with a
// number y must give y, which only "both NaN" leaves alone); the order of
// signed zeros is assumed (IEEE 754-2019 minimumNumber/maximumNumber),
// not measured.
func dminmax(op uint8, x, y float64) (first, bothNaN bool) {
	xn, yn := x != x, y != y
	switch {
	case xn:
		return false, yn
	case yn:
		return true, false
	case x == y && x == 0:
		if op == dsetpMin {
			return math.Signbit(x) && !math.Signbit(y), false
		}
		return !math.Signbit(x) && math.Signbit(y), false
	case op == dsetpMin:
		return x < y, false
	}
	return x > y, false
}

// dcmp evaluates a comparison code (FSETP's and DSETP's, as fcmp lists
// them) on two binary64 values.
func dcmp(code uint8, x, y float64) bool {
	nan := x != x || y != y
	var r bool
	switch code & 7 {
	case 0:
		r = false
	case 1:
		r = x < y
	case 2:
		r = x == y
	case 3:
		r = x <= y
	case 4:
		r = x > y
	case 5:
		r = x != y && !nan
	case 6:
		r = x >= y
	case 7:
		if code == 7 {
			return !nan // NUM
		}
		return true // T
	}
	if code == 8 {
		return nan // NAN
	}
	if code > 8 {
		return r || nan // unordered variants
	}
	return r && !nan
}

// frndOps are FRND's roundings to an integral value: nearest even, FLOOR,
// CEIL, TRUNC (IEEE roundToIntegral: exact, the sign of zero kept).
var frndOps = [4]func(float64) float64{math.RoundToEven, math.Floor, math.Ceil, math.Trunc}

// frnd is FRND on binary16 (h16), binary32 or (wide) binary64 values; a
// NaN gives the simulator's NaN of the width.
func frnd(w *warp, d *dinst, exec uint32) {
	f := frndOps[d.sub&3]
	lo := w.dst(d.d)
	hi := w.dstHi(d.d, d.wide)
	for l := 0; l < 32; l++ {
		if !lanes(exec, l) {
			continue
		}
		if d.wide {
			x := w.f64(&d.s[0], 0, l)
			b := math.Float64bits(f(x))
			if x != x {
				b = nanF64
			}
			lo[l], hi[l] = uint32(b), uint32(b>>32)
			continue
		}
		x := w.src(&d.s[0], 0)[l]
		if d.h16 {
			h := uint16(x)
			if d.hiMerge {
				h = uint16(x >> 16)
			}
			lo[l] = uint32(toHalf(f(h16(h)), 0, false)) // exact: an integral binary16 value, or NaN's 0x7fff
			continue
		}
		if d.ftz {
			x = ftz32(x)
		}
		b := math.Float32bits(float32(f(float64(math.Float32frombits(x)))))
		if isNaN32(x) {
			b = nanF32
		}
		lo[l] = b
	}
}

// mufu64h is MUFU.RCP64H/RSQ64H: the source is the high word of a binary64
// value (its low word taken as zero) and the result the high word of its
// reciprocal (square root's reciprocal), truncated. The hardware's seed is
// an approximation of unpublished accuracy that ptxas refines with DFMA
// Newton steps and checks; this one is the exact value's high word, so a
// program whose result depends on the seed's error beyond what the Newton
// steps remove may differ from silicon (documented approximation). A NaN
// gives the high word of the simulator's NaN.
func mufu64h(op uint8, a uint32) uint32 {
	x := math.Float64frombits(uint64(a) << 32)
	r := 1 / x
	if op == mufuRSQ64H {
		r = 1 / math.Sqrt(x)
	}
	if r != r {
		return nanF64 >> 32
	}
	return uint32(math.Float64bits(r) >> 32)
}

// i64ToF64 converts a 64-bit integer to binary64 rounded in direction m:
// Go's conversion (to nearest) moved one step where the exact value says
// so, as dDirected does.
func i64ToF64(v uint64, signed bool, m rmode) float64 {
	exact := new(big.Float)
	var f float64
	if signed {
		f = float64(int64(v))
		exact.SetInt64(int64(v))
	} else {
		f = float64(v)
		exact.SetUint64(v)
	}
	c := new(big.Float).SetFloat64(f).Cmp(exact)
	switch {
	case m == rnZero && (c > 0 && exact.Sign() > 0 || c < 0 && exact.Sign() < 0):
		return math.Nextafter(f, 0)
	case m == rnDown && c > 0:
		return math.Nextafter(f, math.Inf(-1))
	case m == rnUp && c < 0:
		return math.Nextafter(f, math.Inf(1))
	}
	return f
}
