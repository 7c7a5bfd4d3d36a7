package sim

import (
	"math"
	"math/big"

	"github.com/tcrt-go/tcrt/sass"
)

// The simulator's cases for the tail forms' integer operations (opcodes.go) (issue #14):
// each runs lane by lane as a function of up to three 32-bit sources
// (xLANE3, dinst.lane3). The semantics are PTX's for the instruction ptxas
// compiles to the form (vabsdiff, sad, dp4a, dp2a, bmsk, szext, cvt.sat,
// prmt's modes); TestSimTail checks each against a Go reference of the PTX
// definition on random inputs.

// tailLane3 reports whether in is one of the forms lane3Of decodes.
func tailLane3(in sass.Inst) bool {
	switch in.Op {
	case "VABSDIFF", "VABSDIFF4", "IDP", "BMSK", "I2I", "F2IP", "I2IP":
		return true
	case "PRMT":
		return len(in.Mods) != 0
	case "SGXT":
		return len(in.Args) == 3 && in.Args[2].Kind != sass.KImm
	case "HMNMX2":
		// with a constant predicate (PT: min, !PT: max)
		p := in.Args[len(in.Args)-1]
		return p.Kind == sass.KPred && p.N == uint8(sass.PT)
	case "HSET2", "FSET":
		// with the predicate PT only (ptxas's set.*.f16x2)
		p := in.Args[len(in.Args)-1]
		return p.Kind == sass.KPred && p.N == uint8(sass.PT) && !p.Not
	case "HADD2", "HMUL2", "HFMA2":
		// the packed-half forms with source modifiers (the rows' first
		// plain forms keep their own case)
		for _, m := range in.Mods {
			if m != "BF16_V2" && m != "FTZ" && m != "SAT" && m != "RELU" {
				return false
			}
		}
		mod := false
		for _, o := range in.Args[1:] {
			// (an immediate: a pair decHalf has joined; a constant:
			// HFMA2 R18, R2, -c[0x0] [0x178], R5)
			if o.Kind != sass.KReg && o.Kind != sass.KImm && o.Kind != sass.KCBank || o.Sel == ".F32" {
				return false
			}
			mod = mod || o.Neg || o.Abs || o.Sel != ""
		}
		return mod
	}
	return false
}

// halfSrc applies a packed-half source's selector (.H0_H0 / .H1_H1: one
// half in both), absolute value and negation to its 32 bits (both halves'
// sign bits: binary16 and bfloat16 alike).
func halfSrc(o sass.Operand) func(uint32) uint32 {
	sel, neg, abs := o.Sel, o.Neg, o.Abs
	return func(v uint32) uint32 {
		switch sel {
		case ".H0_H0":
			v = v&0xffff | v<<16
		case ".H1_H1":
			v = v>>16 | v&0xffff0000
		}
		if abs {
			v &= 0x7fff7fff
		}
		if neg {
			v ^= 0x80008000
		}
		return v
	}
}

// lane3Of returns the lane function of in and the number of its sources, or
// an error naming what is not modelled.
func lane3Of(in sass.Inst) (func(a, b, c uint32) uint32, int, error) {
	m, a := in.Mods, in.Args
	switch in.Op {
	case "F2IP":
		return f2ipLane3(in) // f2ip.go
	case "VABSDIFF":
		if len(a) != 4 {
			return nil, 0, bad("VABSDIFF with a predicate result")
		}
		if has(m, "U32") {
			return func(x, y, c uint32) uint32 {
				if x < y {
					return y - x + c
				}
				return x - y + c
			}, 3, nil
		}
		return func(x, y, c uint32) uint32 {
			d := int64(int32(x)) - int64(int32(y))
			if d < 0 {
				d = -d
			}
			return uint32(d) + c
		}, 3, nil
	case "VABSDIFF4":
		if len(a) != 4 || !has(m, "ACC") {
			return nil, 0, bad("VABSDIFF4 without .ACC or with a predicate result")
		}
		signed := !has(m, "U8")
		return func(x, y, c uint32) uint32 {
			s := c
			for i := 0; i < 32; i += 8 {
				p, q := int32(x>>i&0xff), int32(y>>i&0xff)
				if signed {
					p, q = int32(int8(p)), int32(int8(q))
				}
				if p < q {
					p, q = q, p
				}
				s += uint32(p - q)
			}
			return s
		}, 3, nil
	case "IDP":
		if len(a) != 4 || a[3].Neg {
			return nil, 0, bad("IDP with a negated addend")
		}
		if len(m) < 3 {
			return nil, 0, bad("IDP %v", m)
		}
		if m[0] == "4A" {
			sa, sb := m[1][0] == 'S', m[2][0] == 'S'
			return func(x, y, c uint32) uint32 {
				s := c
				for i := 0; i < 32; i += 8 {
					s += uint32(ext(x>>i&0xff, 8, sa) * ext(y>>i&0xff, 8, sb))
				}
				return s
			}, 3, nil
		}
		if len(m) < 4 {
			return nil, 0, bad("IDP %v", m)
		}
		sa, sb := m[2][0] == 'S', m[3][0] == 'S'
		sh := 0
		if m[1] == "HI" {
			sh = 16
		}
		return func(x, y, c uint32) uint32 {
			return c + uint32(ext(x&0xffff, 16, sa)*ext(y>>sh&0xff, 8, sb)+ext(x>>16, 16, sa)*ext(y>>(sh+8)&0xff, 8, sb))
		}, 3, nil
	case "BMSK":
		wrap := has(m, "W")
		return func(pos, width, _ uint32) uint32 {
			if wrap {
				pos, width = pos&31, width&31
			} else {
				pos, width = min(pos, 32), min(width, 32)
			}
			return uint32((uint64(1)<<width - 1) << pos)
		}, 2, nil
	case "SGXT":
		signed, wrap := !has(m, "U32"), has(m, "W")
		return func(x, n, _ uint32) uint32 {
			if wrap {
				n &= 31
			}
			return sgxt32(x, int(min(n, 32)), signed)
		}, 2, nil
	case "I2I":
		lo, hi := map[string][2]int64{"U8": {0, 255}, "S8": {-128, 127}, "U16": {0, 65535}, "S16": {-32768, 32767}}[m[0]][0],
			map[string][2]int64{"U8": {0, 255}, "S8": {-128, 127}, "U16": {0, 65535}, "S16": {-32768, 32767}}[m[0]][1]
		return func(x, _, _ uint32) uint32 {
			return uint32(max(lo, min(hi, int64(int32(x)))))
		}, 1, nil
	case "I2IP":
		// cvt.pack.sat.{u8,s8,u16,s16}.s32.b32 d, a, b, c: a and b saturated
		// to the type and packed, b in the low field; the 8-bit forms keep
		// the low half of c (its high half with .H1) above them
		if len(m) < 1 || len(a) != 4 {
			return nil, 0, bad("I2IP.%v", m)
		}
		lim, ok := map[string][2]int64{"U8": {0, 255}, "S8": {-128, 127}, "U16": {0, 65535}, "S16": {-32768, 32767}}[m[0]]
		if !ok {
			return nil, 0, bad("I2IP.%v", m)
		}
		bits, h1 := 8, a[3].Sel == ".H1"
		if m[0] == "U16" || m[0] == "S16" {
			bits = 16
		}
		mask := uint32(1)<<bits - 1
		sat := func(v uint32) uint32 { return uint32(max(lim[0], min(lim[1], int64(int32(v))))) & mask }
		return func(x, y, z uint32) uint32 {
			if h1 {
				z >>= 16
			}
			r := sat(x)<<bits | sat(y)
			if bits == 8 {
				r |= z << 16
			}
			return r
		}, 3, nil
	case "HADD2", "HMUL2", "HFMA2":
		op := map[sass.Op]int{"HADD2": 0, "HMUL2": 1, "HFMA2": 2}[in.Op]
		bf := has(m, "BF16_V2")
		n := len(a) - 1
		if n != 2 && n != 3 || op == 2 && n != 3 || op != 2 && n != 2 {
			return nil, 0, bad("%s: %d operands", in.Op, len(a))
		}
		t0, t1 := halfSrc(a[1]), halfSrc(a[2])
		t2 := func(uint32) uint32 { return 0 }
		if n == 3 {
			t2 = halfSrc(a[3])
		}
		hm := halfMods{has(m, "FTZ"), has(m, "SAT"), has(m, "RELU")}
		return func(x, y, z uint32) uint32 { return hop2m(op, t0(x), t1(y), t2(z), bf, hm) }, n, nil
	case "HMNMX2":
		for _, x := range m {
			if x != "BF16_V2" && x != "NAN" && x != "XORSIGN" {
				return nil, 0, bad("HMNMX2.%v", m)
			}
		}
		if len(a) != 4 || a[1].Kind != sass.KReg || a[2].Kind != sass.KReg && a[2].Kind != sass.KImm || a[1].Sel == ".F32" || a[2].Sel == ".F32" {
			return nil, 0, bad("HMNMX2 operands")
		}
		bf, nan, isMin := has(m, "BF16_V2"), has(m, "NAN"), !a[3].Not
		// .XORSIGN (PTX min/max.xorsign.abs, which ptxas prints with |Ra|,
		// |Rb|): the min/max of the magnitudes, its sign the exclusive or of
		// the registers' own signs; a canonical NaN result keeps its sign
		// (assumed: PTX leaves a NaN's sign unspecified)
		xorsign := has(m, "XORSIGN")
		if xorsign && (!a[1].Abs || !a[2].Abs || a[1].Neg || a[2].Neg || a[1].Sel != "" || a[2].Sel != "") {
			return nil, 0, bad("HMNMX2.XORSIGN without |Ra|, |Rb|")
		}
		ta, tb := halfSrc(a[1]), halfSrc(a[2])
		return func(x, y, _ uint32) uint32 {
			sign := (x ^ y) & 0x80008000
			x, y = ta(x), tb(y)
			var d uint32
			for k := 0; k < 32; k += 16 {
				h := hmnmx(uint16(x>>k), uint16(y>>k), bf, nan, isMin)
				if xorsign && h != nanF16 {
					h |= uint16(sign >> k)
				}
				d |= uint32(h) << k
			}
			return d
		}, 2, nil
	case "HSET2":
		cmp, ok := hcmpOf(in)
		if !ok || len(a) != 4 {
			return nil, 0, bad("HSET2.%v", m)
		}
		lg, one := logicOf(m), uint32(0xffff)
		if has(m, "BF") {
			one = 0x3c00 // 1.0
		}
		return func(x, y, _ uint32) uint32 {
			r := cmp(x, y)
			var d uint32
			for k := 0; k < 2; k++ {
				if logic(lg, r>>k&1 != 0, true) {
					d |= one << (16 * k)
				}
			}
			return d
		}, 2, nil
	case "FSET":
		// FSET.BF: 1.0 where the comparison (and PT) holds, else 0
		code, ok := cmpOf(m, true)
		if !ok || !has(m, "BF") || len(a) != 4 || a[1].Kind != sass.KReg || a[2].Kind != sass.KReg {
			return nil, 0, bad("FSET.%v", m)
		}
		lg, ftz := logicOf(m), has(m, "FTZ")
		sign := func(o sass.Operand) func(uint32) uint32 {
			return func(x uint32) uint32 {
				if o.Abs {
					x &^= 1 << 31
				}
				if o.Neg {
					x ^= 1 << 31
				}
				return x
			}
		}
		ta, tb := sign(a[1]), sign(a[2])
		return func(x, y, _ uint32) uint32 {
			if logic(lg, fcmp(code, ta(x), tb(y), ftz), true) {
				return 0x3f800000
			}
			return 0
		}, 2, nil
	case "PRMT":
		if len(m) != 1 {
			return nil, 0, bad("PRMT mode %v", m)
		}
		mode := m[0]
		return func(x, sel, y uint32) uint32 { return prmtMode(mode, x, sel, y) }, 3, nil
	}
	return nil, 0, bad("%s not modelled", in.Op)
}

// ext widens the low n bits of v, signed or not.
func ext(v uint32, n int, signed bool) int32 {
	if signed {
		return int32(v<<(32-n)) >> (32 - n)
	}
	return int32(v & (1<<n - 1))
}

// prmtMode is PTX's prmt.b32.{f4e,b4e,rc8,ecl,ecr,rc16}: the eight bytes
// {b, a} (a bytes 0-3) picked by the low two bits s of sel.
func prmtMode(mode string, a, sel, b uint32) uint32 {
	v := uint64(b)<<32 | uint64(a)
	by := func(i int) uint32 { return uint32(v >> (8 * (i & 7)) & 0xff) }
	s := int(sel & 3)
	var d uint32
	for i := 0; i < 4; i++ {
		var k int
		switch mode {
		case "F4E":
			k = s + i
		case "B4E":
			k = s - i + 8
		case "RC8":
			k = s
		case "ECL":
			k = max(i, s)
		case "ECR":
			k = min(i, s)
		default: // RC16
			k = 2*(s&1) + i&1
		}
		d |= by(k) << (8 * i)
	}
	return d
}

// lane3 executes xLANE3.
func (c *cta) lane3(w *warp, d *dinst, exec uint32) {
	var a, b, cc *[32]uint32
	a = w.src(&d.s[0], 0)
	b, cc = a, a
	if d.n > 1 {
		b = w.src(&d.s[1], 1)
	}
	if d.n > 2 {
		cc = w.src(&d.s[2], 2)
	}
	dr := w.dst(d.d)
	for l := 0; l < 32; l++ {
		if lanes(exec, l) {
			dr[l] = d.lane3(a[l], b[l], cc[l])
		}
	}
}

// dDirected is DADD, DMUL or DFMA (op) of x, y (and z) rounded toward zero,
// -infinity or +infinity (m): the round-to-nearest result f of Go's
// arithmetic moved by at most one step toward the exact value, found with
// math/big. An exact zero takes IEEE's sign (-0 when rounding down, unless
// every term is +0).
func dDirected(op xop, x, y, z float64, m rmode) float64 {
	var f float64
	switch op {
	case xDADD:
		f = x + y
	case xDMUL:
		f = x * y
	default:
		f = math.FMA(x, y, z)
	}
	fin := func(v float64) bool { return !math.IsInf(v, 0) && v == v }
	if m == rnEven || f != f || !fin(x) || !fin(y) || op == xDFMA && !fin(z) {
		return f
	}
	bx, by := new(big.Float).SetFloat64(x), new(big.Float).SetFloat64(y)
	var exact *big.Float
	switch op {
	case xDADD:
		exact = new(big.Float).SetPrec(4400).Add(bx, by)
	case xDMUL:
		exact = new(big.Float).SetPrec(128).Mul(bx, by)
	default:
		p := new(big.Float).SetPrec(128).Mul(bx, by)
		exact = new(big.Float).SetPrec(4400).Add(p, new(big.Float).SetFloat64(z))
	}
	if exact.Sign() == 0 {
		if f != 0 || m != rnDown || op == xDMUL {
			return f
		}
		// an exact zero sum: -0 rounding down unless every term is +0
		pz := x*y == 0 && math.Signbit(x) == math.Signbit(y)
		if op == xDADD && x == 0 && y == 0 && !math.Signbit(x) && !math.Signbit(y) || op == xDFMA && pz && z == 0 && !math.Signbit(z) {
			return f
		}
		return math.Copysign(0, -1)
	}
	if math.IsInf(f, 0) {
		// overflow: toward zero and away from the infinity's side stop
		// at the largest finite value
		if m == rnZero || m == rnDown && f > 0 || m == rnUp && f < 0 {
			return math.Copysign(math.MaxFloat64, f)
		}
		return f
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

// hcmpOf returns HSETP2's or HSET2's comparison of two packed-half sources
// (with their selectors, negation and absolute value): bit 0 the low
// halves' result, bit 1 the high halves', FSETP's codes on the binary32
// values of the halves (binary16; .FTZ flushes subnormal halves to zero
// first). .H_AND and .BF16_V2 are refused (not modelled).
func hcmpOf(in sass.Inst) (func(a, b uint32) uint32, bool) {
	code, ok := cmpOf(in.Mods, true)
	if !ok || has(in.Mods, "H_AND") || has(in.Mods, "BF16_V2") {
		return nil, false
	}
	for k, o := range in.Args[len(in.Args)-3 : len(in.Args)-1] {
		// (B may be an immediate pair the decoder has joined)
		if o.Kind != sass.KReg && (k == 0 || o.Kind != sass.KImm) || o.Sel == ".F32" {
			return nil, false
		}
	}
	ftz := has(in.Mods, "FTZ")
	ta, tb := halfSrc(in.Args[len(in.Args)-3]), halfSrc(in.Args[len(in.Args)-2])
	f := func(h uint16) uint32 {
		if ftz && h&0x7c00 == 0 {
			h &= 0x8000
		}
		return math.Float32bits(float32(h16(h)))
	}
	return func(a, b uint32) uint32 {
		a, b = ta(a), tb(b)
		var r uint32
		for k := 0; k < 2; k++ {
			if fcmp(code, f(uint16(a>>(16*k))), f(uint16(b>>(16*k))), false) {
				r |= 1 << k
			}
		}
		return r
	}, true
}

// hsetp2 executes xHSETP2: the first predicate takes the low halves'
// comparison, the second the high halves', each combined with the
// predicate source by the boolean operation.
func (c *cta) hsetp2(w *warp, d *dinst, exec uint32) {
	a, b := w.src(&d.s[0], 0), w.src(&d.s[1], 1)
	pc := w.pred(d.ps[0])
	var m1, m2 uint32
	for l := 0; l < 32; l++ {
		if !lanes(exec, l) {
			continue
		}
		r, q := d.lane3(a[l], b[l], 0), pc>>l&1 != 0
		if logic(d.logic, r&1 != 0, q) {
			m1 |= 1 << l
		}
		if logic(d.logic, r&2 != 0, q) {
			m2 |= 1 << l
		}
	}
	w.setPred(d.pd[0], m1, exec)
	w.setPred(d.pd[1], m2, exec)
}

// hmnmx is one half of HMNMX2: the smaller (isMin) or larger of two
// binary16 or bfloat16 values, -0 below +0; one NaN gives the other value
// unless nan (.NAN), which, like two NaNs, gives the canonical NaN.
func hmnmx(a, b uint16, bf, nan, isMin bool) uint16 {
	x, y := half(a, bf), half(b, bf)
	na, nb := x != x, y != y
	switch {
	case na && nb || nan && (na || nb):
		return nanF16
	case na:
		return b
	case nb:
		return a
	}
	less := x < y || x == y && a&0x8000 != 0 && b&0x8000 == 0
	if less == isMin {
		return a
	}
	return b
}

// plop3Sign executes xPLOP3S: Pd is bit 4a+2b+c of the truth table, a, b
// and c the sign bits of the three registers (LOP3's order).
func (c *cta) plop3Sign(w *warp, d *dinst, exec uint32) {
	a, b, cc := w.src(&d.s[0], 0), w.src(&d.s[1], 1), w.src(&d.s[2], 2)
	var m uint32
	for l := 0; l < 32; l++ {
		if lanes(exec, l) && d.sub>>(a[l]>>31<<2|b[l]>>31<<1|cc[l]>>31)&1 != 0 {
			m |= 1 << l
		}
	}
	w.setPred(d.pd[0], m, exec)
}
