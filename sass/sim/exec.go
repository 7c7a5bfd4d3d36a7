package sim

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/tcrt-go/tcrt/sass"
)

func lanes(exec uint32, l int) bool { return exec>>l&1 != 0 }

func fsrc(s *sopnd, x uint32) uint32 { return x&s.fand ^ s.fxor }

func icmp(code uint8, x, y uint32, signed bool) bool {
	var lt, eq bool
	if signed {
		lt = int32(x) < int32(y)
	} else {
		lt = x < y
	}
	eq = x == y
	switch code {
	case 0:
		return false
	case 1:
		return lt
	case 2:
		return eq
	case 3:
		return lt || eq
	case 4:
		return !lt && !eq
	case 5:
		return !eq
	case 6:
		return !lt
	}
	return true
}

// icmpEx is ISETP.EX: the high words compared, ties resolved by the low
// words' result lo.
func icmpEx(code uint8, x, y uint32, signed, lo bool) bool {
	var lt bool
	if signed {
		lt = int32(x) < int32(y)
	} else {
		lt = x < y
	}
	eq := x == y
	gt := !lt && !eq
	switch code {
	case 0:
		return false
	case 1, 3:
		return lt || (eq && lo)
	case 2:
		return eq && lo
	case 4, 6:
		return gt || (eq && lo)
	case 5:
		return !eq || lo
	}
	return true
}

func logic(op uint8, a, b bool) bool {
	switch op {
	case 1:
		return a || b
	case 2:
		return a != b
	}
	return a && b
}

func lop3(lut uint8, x, y, z uint32) uint32 {
	switch lut {
	case 0xc0:
		return x & y
	case 0xfc:
		return x | y
	case 0x3c:
		return x ^ y
	case 0x96:
		return x ^ y ^ z
	case 0xf8:
		return x | y&z
	case 0xea:
		return x&y | z
	}
	var r uint32
	if lut&0x01 != 0 {
		r |= ^x & ^y & ^z
	}
	if lut&0x02 != 0 {
		r |= ^x & ^y & z
	}
	if lut&0x04 != 0 {
		r |= ^x & y & ^z
	}
	if lut&0x08 != 0 {
		r |= ^x & y & z
	}
	if lut&0x10 != 0 {
		r |= x & ^y & ^z
	}
	if lut&0x20 != 0 {
		r |= x & ^y & z
	}
	if lut&0x40 != 0 {
		r |= x & y & ^z
	}
	if lut&0x80 != 0 {
		r |= x & y & z
	}
	return r
}

func prmt(a, sel, c uint32) uint32 {
	b := uint64(c)<<32 | uint64(a)
	var r uint32
	for i := 0; i < 4; i++ {
		s := sel >> (4 * i) & 15
		v := uint32(b>>(8*(s&7))) & 0xff
		if s&8 != 0 {
			if v&0x80 != 0 {
				v = 0xff
			} else {
				v = 0
			}
		}
		r |= v << (8 * i)
	}
	return r
}

// execUniform runs a uniform-datapath instruction as its general opcode in
// the first executing lane (in all of them for uniAll) and copies that
// lane's result into its uniform destination.
func (c *cta) execUniform(w *warp, d *dinst, exec uint32) error {
	l := firstLane(exec)
	g := *d
	g.uni, g.special = false, false
	if !d.uniAll {
		exec = 1 << l
	}
	if err := c.exec(w, &g, exec); err != nil {
		return err
	}
	for k := 0; k < int(d.ucnt); k++ {
		w.ur[int(d.ud)+k] = w.disc[k][l]
	}
	return nil
}

// execSpecial handles what is rare in exec (d.special): a uniform
// instruction, a conditional one, a call's depth, YIELD and ARRIVES. It
// returns the lanes left to execute, or done when it executed d itself.
// It is a function of its own to keep exec's hot path small.
//
//go:noinline
func (c *cta) execSpecial(w *warp, d *dinst, exec uint32) (uint32, bool, error) {
	if d.uni {
		return 0, true, c.execUniform(w, d, exec)
	}
	if d.cond {
		exec &= w.pred(d.ps[0])
	}
	if d.call != 0 && exec != 0 {
		if err := c.callDepth(w, d, exec); err != nil {
			return 0, true, err
		}
	}
	switch d.op {
	case xYIELD:
		// ptxas puts YIELD in loops that may wait on other warps (an
		// mbarrier's or a flag's spin loop): the warp's turn ends after
		// this instruction and the others run first.
		w.state = wYielded
		return 0, true, nil
	case xARRIVES:
		return 0, true, c.arrives(w, d, exec)
	case xBRADIV:
		if exec == 0 {
			return 0, true, nil
		}
		return 0, true, c.control(w, d, exec)
	}
	return exec, false, nil
}

// exec executes d in the lanes of exec (nonzero, except for BRA).
func (c *cta) exec(w *warp, d *dinst, exec uint32) error {
	if d.special {
		var done bool
		var err error
		if exec, done, err = c.execSpecial(w, d, exec); done {
			return err
		}
	}
	switch d.op {
	case xNOP:
	case xEXIT:
		if exec == 0 {
			return nil
		}
		w.active &^= exec
		w.live &^= exec
		if w.active == 0 {
			return c.reschedule(w)
		}
	case xBRA:
		if exec == 0 {
			return nil
		}
		if exec != w.active {
			return c.diverge(w, exec, d.target)
		}
		w.pc = d.target
	case xBSSY, xBSYNC, xBREAK, xWARPSYNC, xBRX, xBMOVW, xBMOVR:
		return c.control(w, d, exec)
	case xMOV:
		a := w.src(&d.s[0], 0)
		dr := w.dst(d.d)
		for l := 0; l < 32; l++ {
			if lanes(exec, l) {
				dr[l] = a[l]
			}
		}
	case xS2R, xCS2R:
		dr := w.dst(d.d)
		var dh *[32]uint32
		if d.op == xCS2R {
			dh = w.dstK(d.d, 1)
		}
		for l := 0; l < 32; l++ {
			if !lanes(exec, l) {
				continue
			}
			var v uint64
			switch sass.SpecialReg(d.sub) {
			case sass.SRLaneID:
				v = uint64(l)
			case sass.SRTidX, sass.SRTidY, sass.SRTidZ:
				v = uint64(w.tid[d.sub-uint8(sass.SRTidX)][l])
			case sass.SRCtaidX, sass.SRCtaidY, sass.SRCtaidZ:
				v = uint64(c.id[d.sub-uint8(sass.SRCtaidX)])
			case sass.SRClock, sass.SRGlobalTimerLo:
				v = uint64(c.steps)
			case sass.SRClockHi, sass.SRGlobalTimerHi:
				v = uint64(c.steps) >> 32
			case sass.SRZero, 0x03, 0x43:
				v = 0
			case 0x38, 0x39, 0x3a, 0x3b, 0x3c: // SR_EQMASK, LTMASK, LEMASK, GTMASK, GEMASK
				v = uint64(laneMask(d.sub, l))
			default:
				return c.fault(w, d, l, ErrUnsupported, "special register %v", sass.SpecialReg(d.sub))
			}
			dr[l] = uint32(v)
			if dh != nil {
				dh[l] = uint32(v >> 32)
			}
		}
	case xS2UR:
		var v uint32
		switch sass.SpecialReg(d.sub) {
		case sass.SRCtaidX, sass.SRCtaidY, sass.SRCtaidZ:
			v = uint32(c.id[d.sub-uint8(sass.SRCtaidX)])
		case sass.SRZero, 0x03, 0x43: // SR_VIRTID, SR_VIRTUALSMID: 0, as S2R reads them
		case sass.SRClock, sass.SRGlobalTimerLo:
			v = uint32(c.steps)
		default:
			return c.fault(w, d, firstLane(exec), ErrUnsupported, "S2UR of %v", sass.SpecialReg(d.sub))
		}
		if d.d != 63 {
			w.ur[d.d] = v
		}
	case xULDC:
		if d.d != 63 {
			for k := 0; k < d.n; k++ {
				w.ur[int(d.d)+k] = w.uval(&d.s[0], k)
			}
		}
	case xIMADHI:
		a, b := w.src(&d.s[0], 0), w.src(&d.s[1], 1)
		c0, c1 := w.srcK(&d.s[2], 2, 0), w.srcK(&d.s[2], 3, 1)
		carry := w.pred(d.ps[0])
		dr := w.dst(d.d)
		var cy uint32
		for l := 0; l < 32; l++ {
			if !lanes(exec, l) {
				continue
			}
			var p uint64
			if d.u32 {
				p = uint64(a[l]) * uint64(b[l])
			} else {
				p = uint64(int64(int32(a[l])) * int64(int32(b[l])))
			}
			r, co := wideAdd(p, uint64(c1[l])<<32|uint64(c0[l]), d.s[2].neg, d.x, carry>>l&1)
			dr[l] = uint32(r >> 32)
			cy |= co << l
		}
		if d.npd > 0 {
			w.setPred(d.pd[0], cy, exec)
		}
	case xIMAD:
		a, b, cc := w.src(&d.s[0], 0), w.src(&d.s[1], 1), w.src(&d.s[2], 2)
		neg := d.s[2].neg || d.s[2].not
		carry := w.pred(d.ps[0])
		dr := w.dst(d.d)
		for l := 0; l < 32; l++ {
			if !lanes(exec, l) {
				continue
			}
			cv := cc[l]
			if d.x {
				if neg {
					cv = ^cv
				}
				cv += carry >> l & 1
			} else if neg {
				cv = -cv
			}
			var p uint32
			if d.op == xIMADHI {
				if d.u32 {
					p = uint32(uint64(a[l]) * uint64(b[l]) >> 32)
				} else {
					p = uint32(uint64(int64(int32(a[l]))*int64(int32(b[l]))) >> 32)
				}
			} else {
				p = a[l] * b[l]
			}
			dr[l] = p + cv
		}
	case xIMADWIDE:
		a, b := w.src(&d.s[0], 0), w.src(&d.s[1], 1)
		c0, c1 := w.srcK(&d.s[2], 2, 0), w.srcK(&d.s[2], 3, 1)
		neg := d.s[2].neg
		carry := w.pred(d.ps[0])
		dl, dh := w.dst(d.d), w.dstK(d.d, 1)
		var cy uint32
		for l := 0; l < 32; l++ {
			if !lanes(exec, l) {
				continue
			}
			var p uint64
			if d.u32 {
				p = uint64(a[l]) * uint64(b[l])
			} else {
				p = uint64(int64(int32(a[l])) * int64(int32(b[l])))
			}
			r, co := wideAdd(p, uint64(c1[l])<<32|uint64(c0[l]), neg, d.x, carry>>l&1)
			dl[l], dh[l] = uint32(r), uint32(r>>32)
			cy |= co << l
		}
		if d.npd > 0 {
			w.setPred(d.pd[0], cy, exec)
		}
	case xIADD3:
		a, b, cc := w.src(&d.s[0], 0), w.src(&d.s[1], 1), w.src(&d.s[2], 2)
		dr := w.dst(d.d)
		var m0, m1 uint32
		if d.x {
			p0, p1 := w.pred(d.ps[0]), w.pred(d.ps[1])
			na, nb, nc := d.s[0].not || d.s[0].neg, d.s[1].not || d.s[1].neg, d.s[2].not || d.s[2].neg
			for l := 0; l < 32; l++ {
				if !lanes(exec, l) {
					continue
				}
				x, y, z := a[l], b[l], cc[l]
				if na {
					x = ^x
				}
				if nb {
					y = ^y
				}
				if nc {
					z = ^z
				}
				s := uint64(x) + uint64(y) + uint64(z) + uint64(p0>>l&1) + uint64(p1>>l&1)
				dr[l] = uint32(s)
				if s>>32 != 0 {
					m0 |= 1 << l
				}
			}
			if d.npd > 0 {
				// the carry out of the 32-bit sum (ptxas's use: one carry
				// in and an RZ addend, so it is 0 or 1)
				w.setPred(d.pd[0], m0, exec)
			}
			return nil
		}
		ext := func(v uint32, neg bool) uint64 {
			if neg {
				return uint64(^v) + 1
			}
			return uint64(v)
		}
		na, nb, nc := d.s[0].neg, d.s[1].neg, d.s[2].neg
		for l := 0; l < 32; l++ {
			if !lanes(exec, l) {
				continue
			}
			s := ext(a[l], na) + ext(b[l], nb) + ext(cc[l], nc)
			carry := s >> 32
			dr[l] = uint32(s)
			if carry >= 1 {
				m0 |= 1 << l
			}
			if carry >= 2 {
				m1 |= 1 << l
			}
		}
		if d.npd > 0 {
			w.setPred(d.pd[0], m0, exec)
		}
		if d.npd > 1 {
			w.setPred(d.pd[1], m1, exec)
		}
	case xLOP3:
		a, b, cc := w.src(&d.s[0], 0), w.src(&d.s[1], 1), w.src(&d.s[2], 2)
		dr := w.dst(d.d)
		var m uint32
		for l := 0; l < 32; l++ {
			if lanes(exec, l) {
				dr[l] = lop3(d.sub, a[l], b[l], cc[l])
				if dr[l] != 0 {
					m |= 1 << l
				}
			}
		}
		if d.npd > 0 {
			w.setPred(d.pd[0], m|w.pred(d.ps[0]), exec)
		}
	case xSHF:
		a, b, cc := w.src(&d.s[0], 0), w.src(&d.s[1], 1), w.src(&d.s[2], 2)
		dr := w.dst(d.d)
		lim := uint32(32)
		if d.wide {
			lim = 64
		}
		for l := 0; l < 32; l++ {
			if lanes(exec, l) {
				dr[l] = shf(d, lim, a[l], b[l], cc[l])
			}
		}
	case xLEA:
		a, b := w.src(&d.s[0], 0), w.src(&d.s[1], 1)
		dr := w.dst(d.d)
		var m uint32
		for l := 0; l < 32; l++ {
			if !lanes(exec, l) {
				continue
			}
			x := a[l]
			if d.s[0].neg {
				x = -x
			}
			s := uint64(x<<d.sub) + uint64(b[l])
			dr[l] = uint32(s)
			if s>>32 != 0 {
				m |= 1 << l
			}
		}
		if d.npd > 0 {
			w.setPred(d.pd[0], m, exec)
		}
	case xLEAHI:
		a, b := w.src(&d.s[0], 0), w.src(&d.s[1], 1)
		var cc *[32]uint32
		if !d.signed {
			cc = w.src(&d.s[2], 2)
		}
		carry := w.pred(d.ps[0])
		dr := w.dst(d.d)
		for l := 0; l < 32; l++ {
			if !lanes(exec, l) {
				continue
			}
			x := a[l]
			if d.s[0].not || d.s[0].neg {
				x = ^x
			}
			var hi uint32
			if d.signed {
				hi = uint32(int32(x) >> 31)
			} else {
				hi = cc[l]
			}
			y := b[l]
			switch {
			case d.s[1].not || d.s[1].neg && d.x:
				y = ^y
			case d.s[1].neg:
				y = -y
			}
			v := uint64(hi)<<32 | uint64(x)
			r := y + uint32(v<<d.sub>>32)
			if d.x {
				r += carry >> l & 1
			}
			dr[l] = r
		}
	case xIMNMX, xSEL, xFMNMX:
		a, b := w.src(&d.s[0], 0), w.src(&d.s[1], 1)
		p := w.pred(d.ps[0])
		dr := w.dst(d.d)
		for l := 0; l < 32; l++ {
			if !lanes(exec, l) {
				continue
			}
			pl := p>>l&1 != 0
			x, y := a[l], b[l]
			switch d.op {
			case xSEL:
				if !pl {
					x = y
				}
			case xIMNMX:
				var lt bool
				if d.u32 {
					lt = x < y
				} else {
					lt = int32(x) < int32(y)
				}
				if lt != pl {
					x = y
				}
			default:
				x = fmnmx32(fsrc(&d.s[0], x), fsrc(&d.s[1], y), pl, d.ftz)
			}
			dr[l] = x
		}
	case xPRMT:
		a, b, cc := w.src(&d.s[0], 0), w.src(&d.s[1], 1), w.src(&d.s[2], 2)
		dr := w.dst(d.d)
		for l := 0; l < 32; l++ {
			if lanes(exec, l) {
				dr[l] = prmt(a[l], b[l], cc[l])
			}
		}
	case xISETP, xFSETP:
		a, b := w.src(&d.s[0], 0), w.src(&d.s[1], 1)
		pc := w.pred(d.ps[0])
		lo := w.pred(d.ps[1])
		var m1, m2 uint32
		for l := 0; l < 32; l++ {
			if !lanes(exec, l) {
				continue
			}
			var r bool
			switch {
			case d.op == xFSETP:
				r = fcmp(d.cmp, fsrc(&d.s[0], a[l]), fsrc(&d.s[1], b[l]), d.ftz)
			case d.ex:
				r = icmpEx(d.cmp, a[l], b[l], !d.u32, lo>>l&1 != 0)
			default:
				r = icmp(d.cmp, a[l], b[l], !d.u32)
			}
			q := pc>>l&1 != 0
			if logic(d.logic, r, q) {
				m1 |= 1 << l
			}
			if logic(d.logic, !r, q) {
				m2 |= 1 << l
			}
		}
		w.setPred(d.pd[0], m1, exec)
		w.setPred(d.pd[1], m2, exec)
	case xFADD, xFMUL, xFFMA:
		c.farith(w, d, exec)
	case xREDUX:
		a := w.src(&d.s[0], 0)
		var r uint32
		first := true
		for l := 0; l < 32; l++ {
			if !lanes(exec, l) {
				continue
			}
			v := a[l]
			if first {
				r, first = v, false
				continue
			}
			switch d.sub {
			case 0:
				r &= v
			case 1:
				r |= v
			case 2:
				r ^= v
			case 3:
				r += v
			case 4:
				if d.signed && int32(v) < int32(r) || !d.signed && v < r {
					r = v
				}
			case 5:
				if d.signed && int32(v) > int32(r) || !d.signed && v > r {
					r = v
				}
			}
		}
		if d.d != 63 {
			w.ur[d.d] = r
		}
	case xDADD, xDMUL, xDFMA:
		c.darith(w, d, exec)
	case xDSETP:
		pc := w.pred(d.ps[0])
		var m1, m2 uint32
		for l := 0; l < 32; l++ {
			if !lanes(exec, l) {
				continue
			}
			x, y := w.f64(&d.s[0], 0, l), w.f64(&d.s[1], 1, l)
			r, r2 := false, false
			if d.sub != 0 {
				r, r2 = dminmax(d.sub, x, y)
			} else {
				r = dcmp(d.cmp, x, y)
				r2 = !r
			}
			q := pc>>l&1 != 0
			if logic(d.logic, r, q) {
				m1 |= 1 << l
			}
			if logic(d.logic, r2, q) {
				m2 |= 1 << l
			}
		}
		w.setPred(d.pd[0], m1, exec)
		w.setPred(d.pd[1], m2, exec)
	case xMUFU:
		a := w.src(&d.s[0], 0)
		dr := w.dst(d.d)
		for l := 0; l < 32; l++ {
			if !lanes(exec, l) {
				continue
			}
			if d.h16 {
				h := uint16(a[l])
				if d.hiMerge {
					h = uint16(a[l] >> 16)
				}
				r := mufu(d.sub, math.Float32bits(float32(h16(h))))
				dr[l] = uint32(toHalf(float64(f32(r)), 0, false))
				continue
			}
			dr[l] = mufu(d.sub, fsrc(&d.s[0], a[l]))
		}
	case xF2FP, xF2FP8:
		a, b, cc := w.src(&d.s[0], 0), w.src(&d.s[1], 1), w.src(&d.s[2], 2)
		dr := w.dst(d.d)
		for l := 0; l < 32; l++ {
			if !lanes(exec, l) {
				continue
			}
			if d.op == xF2FP && d.x { // MERGE_C
				m := b[l] & 0xffff
				if d.hiMerge {
					m = b[l] >> 16
				}
				dr[l] = m<<16 | f2fp(a[l], a[l], d.bf, d.relu, d.rnd)&0xffff
			} else if d.op == xF2FP {
				dr[l] = f2fp(a[l], b[l], d.bf, d.relu, d.rnd)
			} else {
				dr[l] = f2fp8(a[l], b[l], cc[l], d.wide, d.hiMerge)
			}
		}
	case xI2F:
		a0, a1 := w.srcK(&d.s[0], 0, 0), w.pairHi(&d.s[0], d.wide)
		dl, dh := w.dst(d.d), w.dstHi(d.d, d.x)
		for l := 0; l < 32; l++ {
			if !lanes(exec, l) {
				continue
			}
			v := uint64(a0[l])
			if d.wide {
				v |= uint64(a1[l]) << 32
			}
			if d.n != 0 { // an 8- or 16-bit source, extended to 32 bits
				v = uint64(uint32(ext(uint32(v), d.n, d.signed)))
			}
			if d.h16 || d.x {
				// the integer's value in binary64: exact up to 2^53; past
				// it a binary16 result overflows anyway, and a binary64
				// one rounds to nearest here or by i64ToF64 in the other
				// directions
				var f float64
				switch {
				case d.wide && d.signed:
					f = float64(int64(v))
				case d.wide:
					f = float64(v)
				case d.signed:
					f = float64(int32(uint32(v)))
				default:
					f = float64(uint32(v))
				}
				if d.h16 {
					dl[l] = uint32(roundFmt(f, 0, d.rnd, &fmtF16))
					continue
				}
				if d.wide && d.rnd != rnEven {
					f = i64ToF64(v, d.signed, d.rnd)
				}
				b := math.Float64bits(f)
				dl[l], dh[l] = uint32(b), uint32(b>>32)
				continue
			}
			dl[l] = i2f(v, d.signed, d.wide, d.rnd)
		}
	case xF2I:
		a0, a1 := w.srcK(&d.s[0], 0, 0), w.pairHi(&d.s[0], d.x)
		dl, dh := w.dst(d.d), w.dstHi(d.d, d.wide)
		width := uint(32)
		if d.wide {
			width = 64
		}
		for l := 0; l < 32; l++ {
			if !lanes(exec, l) {
				continue
			}
			var x float64
			switch {
			case d.x:
				x = math.Float64frombits(uint64(a1[l])<<32 | uint64(a0[l]))
			case d.h16:
				x = h16(uint16(a0[l]))
			default:
				x = f32(a0[l])
			}
			if d.n != 0 { // an 8- or 16-bit destination, extended to 32 bits
				r := f2i(x, d.sub, d.signed, uint(d.n))
				dl[l] = uint32(ext(uint32(r), d.n, d.signed))
				continue
			}
			r := f2i(x, d.sub, d.signed, width)
			dl[l] = uint32(r)
			if d.wide {
				dh[l] = uint32(r >> 32)
			}
		}
	case xF2F:
		a0, a1 := w.srcK(&d.s[0], 0, 0), w.pairHi(&d.s[0], d.n == 2)
		dl, dh := w.dst(d.d), w.dstHi(d.d, d.sub == 2)
		for l := 0; l < 32; l++ {
			if !lanes(exec, l) {
				continue
			}
			var x float64
			switch d.n {
			case 0:
				x = h16(uint16(a0[l]))
			case 1:
				x = f32(a0[l])
			default:
				x = math.Float64frombits(uint64(a1[l])<<32 | uint64(a0[l]))
			}
			switch d.sub {
			case 0:
				if x != x {
					dl[l] = nanF16
				} else {
					dl[l] = uint32(roundFmt(x, 0, d.rnd, &fmtF16))
				}
			case 1:
				dl[l] = fround(x, 0, d.rnd)
			case 3:
				if x != x {
					dl[l] = nanF16 // 0x7fff: bfloat16's canonical NaN too
				} else {
					dl[l] = uint32(roundFmt(x, 0, d.rnd, &fmtBF16))
				}
			default:
				b := math.Float64bits(x)
				dl[l], dh[l] = uint32(b), uint32(b>>32)
			}
		}
	case xHADD2F32:
		a, b := w.src(&d.s[0], 0), w.src(&d.s[1], 1)
		dr := w.dst(d.d)
		for l := 0; l < 32; l++ {
			if !lanes(exec, l) {
				continue
			}
			hv := func(s *sopnd, v uint32) float64 {
				if s.hiHalf {
					v >>= 16
				}
				x := h16(uint16(v))
				if s.neg {
					x = -x
				}
				return x
			}
			x, y := hv(&d.s[0], a[l]), hv(&d.s[1], b[l])
			dr[l] = fround(x+y, 0, rnEven)
		}
	case xHOP2:
		a, b, cc := w.src(&d.s[0], 0), w.src(&d.s[1], 1), w.src(&d.s[2], 2)
		dr := w.dst(d.d)
		for l := 0; l < 32; l++ {
			if lanes(exec, l) {
				dr[l] = hop2m(int(d.sub), a[l], b[l], cc[l], d.bf, halfMods{d.ftz, d.sat, d.relu})
			}
		}
	case xMMA:
		return c.mma(w, d, exec)
	case xMOVM:
		return c.movm(w, d, exec)
	case xLDG, xSTG, xLDS, xSTS, xLDL, xSTL:
		return c.ldst(w, d, exec)
	case xLDSM:
		return c.ldsm(w, d, exec)
	case xLDGSTS:
		return c.ldgsts(w, d, exec)
	case xLDGDEPBAR:
		if d.wsb >= 0 {
			w.asyncSB = d.wsb
		}
		w.groups = append(w.groups, w.open)
		w.open = nil
	case xP2R:
		c.p2r(w, d, exec)
	case xR2P:
		c.r2p(w, d, exec)
	case xSGXT:
		c.sgxt(w, d, exec)
	case xLANE3:
		c.lane3(w, d, exec)
	case xHSETP2:
		c.hsetp2(w, d, exec)
	case xPLOP3S:
		c.plop3Sign(w, d, exec)
	case xDEPBAR:
		if err := c.waitSet(w, d, exec); err != nil {
			return err
		}
		if w.sb[d.sub] == 0 {
			if c.l.cfg.StrictScoreboards {
				return c.fault(w, d, firstLane(exec), ErrScoreboard, "DEPBAR on SB%d, which no instruction in flight set", d.sub)
			}
			break
		}
		if int(w.sb[d.sub]) > d.n {
			w.sb[d.sub] = int32(d.n)
		}
		if int8(d.sub) == w.asyncSB {
			c.retire(w, d.n)
		}
	case xBAR:
		if len(w.pend) != 0 {
			return c.fault(w, d, firstLane(exec), ErrDivergent, "barrier reached by a diverged warp (lanes %#08x of live %#08x)", exec, w.live)
		}
		if exec != w.active {
			return c.fault(w, d, firstLane(w.active&^exec), ErrDivergent, "barrier reached by lanes %#08x of active %#08x", exec, w.active)
		}
		l0 := firstLane(exec)
		id := int(w.src(&d.s[0], 0)[l0])
		count := -1
		if d.n == 0 {
			count = int(w.src(&d.s[1], 1)[l0])
			if count%32 != 0 || count <= 0 || count > 1024 {
				return c.fault(w, d, l0, ErrUnsupported, "barrier thread count %d", count)
			}
		}
		if id < 0 || id > 15 {
			return c.fault(w, d, l0, ErrUnsupported, "barrier %d", id)
		}
		if d.x && count < 0 {
			return c.fault(w, d, l0, ErrUnsupported, "BAR.ARV without a thread count")
		}
		if err := c.barRedArrive(w, d, id, exec); err != nil {
			return err
		}
		w.barPC = d.idx
		c.arrive(w, id, count, !d.x)
	case xSHFL:
		c.shfl(w, d, exec)
	case xRED, xATOM, xATOMCAS:
		return c.atomic(w, d, exec)
	case xPOPC, xIABS, xBREV, xFLO:
		a := w.src(&d.s[0], 0)
		dr := w.dst(d.d)
		for l := 0; l < 32; l++ {
			if !lanes(exec, l) {
				continue
			}
			x := a[l]
			if d.s[0].not {
				x = ^x
			}
			switch d.op {
			case xPOPC:
				x = uint32(bits.OnesCount32(x))
			case xIABS:
				if int32(x) < 0 {
					x = -x
				}
			case xBREV:
				x = bits.Reverse32(x)
			default:
				if !d.u32 && int32(x) < 0 {
					x = ^x
				}
				pos := uint32(31 - bits.LeadingZeros32(x))
				if x == 0 {
					pos = 0xffffffff
				} else if d.hi {
					pos = 31 - pos
				}
				x = pos
			}
			dr[l] = x
		}
	case xFCHK:
		w.setPred(d.pd[0], exec, exec)
	case xTRAP:
		return c.fault(w, d, firstLane(exec), ErrTrap, "%s", d.in.Mods)
	case xCALLX:
		return c.fault(w, d, firstLane(exec), ErrUnsupported, "CALL.ABS: a call to an external function (vprintf), which the simulator does not link")
	case xVOTE:
		ballot := w.pred(d.ps[0]) & exec
		var r bool
		switch d.sub {
		case 0:
			r = ballot != 0
		case 1:
			r = ballot == exec
		default:
			r = ballot == 0 || ballot == exec
		}
		dr := w.dst(d.d)
		for l := 0; l < 32; l++ {
			if lanes(exec, l) {
				dr[l] = ballot
			}
		}
		m := uint32(0)
		if r {
			m = 0xffffffff
		}
		w.setPred(d.pd[0], m, exec)
	case xFRND:
		frnd(w, d, exec)
	case xMATCH:
		lo := w.src(&d.s[0], 0)
		hi := &zeroLanes
		if d.wide {
			hi = w.srcK(&d.s[0], 1, 1)
		}
		dr := w.dst(d.d)
		var out [32]uint32
		for l := 0; l < 32; l++ {
			if !lanes(exec, l) {
				continue
			}
			for k := 0; k < 32; k++ {
				if lanes(exec, k) && lo[k] == lo[l] && hi[k] == hi[l] {
					out[l] |= 1 << k
				}
			}
		}
		for l := 0; l < 32; l++ {
			if lanes(exec, l) {
				dr[l] = out[l]
			}
		}
	case xPLOP3:
		w.setPred(d.pd[0], lop3(d.sub, w.pred(d.ps[0]), w.pred(d.ps[1]), w.pred(d.ps[2])), exec)
	case xLDC:
		return c.ldc(w, d, exec)
	case xQSPC:
		c.qspc(w, d, exec)
	case xB2R:
		return c.b2r(w, d, exec)
	default:
		return c.fault(w, d, firstLane(exec), ErrUnsupported, "opcode %d", d.op)
	}
	return nil
}

// farith is FADD, FMUL and FFMA, with a fast path for plain
// round-to-nearest (Go's binary32 arithmetic is IEEE's).
func (c *cta) farith(w *warp, d *dinst, exec uint32) {
	sa, sb, sc := &d.s[0], &d.s[1], &d.s[2]
	a, b, cc := w.src(sa, 0), w.src(sb, 1), w.src(sc, 2)
	dr := w.dst(d.d)
	fast := d.rnd == rnEven && !d.ftz
	for l := 0; l < 32; l++ {
		if !lanes(exec, l) {
			continue
		}
		x, y := fsrc(sa, a[l]), fsrc(sb, b[l])
		var r uint32
		switch d.op {
		case xFADD:
			if fast {
				r = math.Float32bits(math.Float32frombits(x) + math.Float32frombits(y))
				if isNaN32(r) {
					r = nanF32
				}
			} else {
				r = fadd32(x, y, d.rnd, d.ftz)
			}
		case xFMUL:
			if fast {
				r = math.Float32bits(float32(math.Float32frombits(x) * math.Float32frombits(y)))
				if isNaN32(r) {
					r = nanF32
				}
			} else {
				r = fmul32(x, y, d.rnd, d.ftz)
			}
		default:
			z := fsrc(sc, cc[l])
			r = 0
			done := false
			if fast {
				p := f32(x) * f32(y)
				s, e := twoSum(p, f32(z))
				if e == 0 && !math.IsInf(s, 0) && s == s {
					r, done = math.Float32bits(float32(s)), true
				}
			}
			if !done {
				r = ffma32(x, y, z, d.rnd, d.ftz)
			}
		}
		if d.sat {
			r = sat32(r)
		}
		dr[l] = r
	}
}

// shf is SHF's result for a, shift n and c (lim: 32, or 64 with .U64/.S64).
func shf(d *dinst, lim, a, n, c uint32) uint32 {
	if d.x {
		n &= lim - 1
	} else if n > lim {
		n = lim
	}
	v := uint64(c)<<32 | uint64(a)
	var r uint64
	switch {
	case d.left:
		r = v << n
	case d.signed:
		r = uint64(int64(v) >> n)
	default:
		r = v >> n
	}
	if d.hi {
		return uint32(r >> 32)
	}
	return uint32(r)
}

// gaddr is a lane's global address.
func (w *warp) gaddr(m *maddr, l int) uint64 {
	a := uint64(m.off)
	if m.base != 255 {
		a += uint64(w.r[m.base][l])
		if !m.u32 {
			a += uint64(w.r[m.base+1][l]) << 32
		}
	}
	if m.hasUR {
		a += uint64(w.ur[m.ur&63]) | uint64(w.ur[(m.ur+1)&63])<<32
	}
	return a
}

// saddr is a lane's shared address.
func (w *warp) saddr(m *maddr, l int) int64 {
	a := m.off
	if m.hasUR {
		a += int64(w.ur[m.ur])
	}
	if m.base == 255 {
		return a
	}
	return int64(w.r[m.base][l])*m.scale + a
}

// shared checks a shared access of n bytes at a by lane l and returns the
// bytes.
func (c *cta) sharedAt(w *warp, d *dinst, l int, a int64, n int, write bool) ([]byte, error) {
	if a < 0 || a+int64(n) > int64(len(c.shared)) {
		return nil, c.fault(w, d, l, ErrOutOfBounds, "shared address %#x (%d bytes) outside %d bytes", a, n, len(c.shared))
	}
	if a%int64(n) != 0 {
		return nil, c.fault(w, d, l, ErrMisaligned, "shared address %#x not a multiple of %d", a, n)
	}
	if c.shadow != nil {
		for k := a; k < a+int64(n); k++ {
			id := c.shadow[k]
			if id == 0 {
				continue
			}
			r := &c.recs[id-1]
			if !r.landed || int(r.warp) != w.id || int(r.lane) != l {
				state := "in flight (no DEPBAR has retired its group)"
				if r.landed {
					state = "retired by its own thread but not yet published by a BAR.SYNC"
				}
				verb := "read"
				if write {
					verb = "written"
				}
				return nil, c.fault(w, d, l, ErrInFlight, "shared byte %#x %s while the LDGSTS of warp %d lane %d is %s", k, verb, r.warp, r.lane, state)
			}
			if write {
				c.shadow[k] = 0
			}
		}
	}
	return c.shared[a : a+int64(n)], nil
}

// Local memory: every thread has a window of localBytes ending at
// localTop (the stack pointer in c[0x0][0x28] is localTop-0x400), zero
// or, in poison mode, 0xCD bytes at the start of each CTA.
const (
	localTop   = 0x1000000
	localBytes = 16 << 10
)

// localAt checks a local access of n bytes at a by lane l and returns the
// bytes.
func (c *cta) localAt(w *warp, d *dinst, l int, a int64, n int) ([]byte, error) {
	if a < localTop-localBytes || a+int64(n) > localTop {
		return nil, c.fault(w, d, l, ErrOutOfBounds, "local address %#x (%d bytes) outside the %d-byte window below %#x", a, n, localBytes, localTop)
	}
	if a%int64(n) != 0 {
		return nil, c.fault(w, d, l, ErrMisaligned, "local address %#x not a multiple of %d", a, n)
	}
	if w.loc[l] == nil {
		w.loc[l] = make([]byte, localBytes)
		if c.l.cfg.Poison {
			for k := range w.loc[l] {
				w.loc[l][k] = 0xcd
			}
		}
	}
	o := a - (localTop - localBytes)
	return w.loc[l][o : o+int64(n)], nil
}

func (c *cta) globalAt(w *warp, d *dinst, l int, a uint64, n int) ([]byte, error) {
	if a%uint64(n) != 0 {
		return nil, c.fault(w, d, l, ErrMisaligned, "global address %#x not a multiple of %d", a, n)
	}
	b := w.mc.slice(a, n)
	if b == nil {
		return nil, c.fault(w, d, l, ErrOutOfBounds, "global address %#x (%d bytes) in no region", a, n)
	}
	return b, nil
}

func (c *cta) ldst(w *warp, d *dinst, exec uint32) error {
	n := d.width
	global := d.op == xLDG || d.op == xSTG
	local := d.op == xLDL || d.op == xSTL
	load := d.op == xLDG || d.op == xLDS || d.op == xLDL
	if d.strong {
		// a strong access is single-copy atomic: no other CTA's strong
		// access or atomic sees it torn.
		c.l.mem.mu.Lock()
		defer c.l.mem.mu.Unlock()
	}
	nr := 1
	if n > 4 {
		nr = n / 4
	}
	var rows [4]*[32]uint32
	for k := 0; k < nr; k++ {
		if load {
			rows[k] = w.dstK(d.d, k)
		} else {
			rows[k] = w.srcK(&d.s[0], k, k)
		}
	}
	for l := 0; l < 32; l++ {
		if !lanes(exec, l) {
			continue
		}
		var b []byte
		var err error
		if d.gen {
			b, err = c.genericAt(w, d, l, w.gaddr(&d.mem, l), n, !load)
		} else if global {
			b, err = c.globalAt(w, d, l, w.gaddr(&d.mem, l), n)
		} else if local {
			b, err = c.localAt(w, d, l, w.saddr(&d.mem, l), n)
		} else {
			b, err = c.sharedAt(w, d, l, w.saddr(&d.mem, l), n, !load)
		}
		if err != nil {
			return err
		}
		if load {
			switch n {
			case 1:
				v := uint32(b[0])
				if d.signed {
					v = uint32(int32(int8(b[0])))
				}
				rows[0][l] = v
			case 2:
				v := uint32(binary.LittleEndian.Uint16(b))
				if d.signed {
					v = uint32(int32(int16(v)))
				}
				rows[0][l] = v
			default:
				for k := 0; k < nr; k++ {
					if global {
						rows[k][l] = loadWord(b[4*k:])
					} else {
						rows[k][l] = binary.LittleEndian.Uint32(b[4*k:])
					}
				}
			}
			continue
		}
		switch n {
		case 1:
			b[0] = byte(rows[0][l])
		case 2:
			binary.LittleEndian.PutUint16(b, uint16(rows[0][l]))
		default:
			for k := 0; k < nr; k++ {
				if global {
					storeWord(b[4*k:], rows[k][l])
				} else {
					binary.LittleEndian.PutUint32(b[4*k:], rows[k][l])
				}
			}
		}
	}
	return nil
}

// ldsm is LDSM.16.M88{,.2,.4} and .MT88: lanes 8i..8i+7 give the row
// addresses of matrix i (16 bytes each); lane l receives, for matrix i in
// register d+i, row l/4's elements 2(l%4), 2(l%4)+1 (transposed: column
// l/4's elements of rows 2(l%4), 2(l%4)+1).
func (c *cta) ldsm(w *warp, d *dinst, exec uint32) error {
	if exec != 0xffffffff {
		return c.fault(w, d, firstLane(^exec), ErrDivergent, "LDSM needs all 32 lanes (active %#08x)", exec)
	}
	var rowAddr [32]int64
	for r := 0; r < 8*d.n; r++ {
		if c.l.cfg.Poison && d.mem.base != 255 && w.wr[d.mem.base]>>r&1 == 0 {
			return c.fault(w, d, r, ErrUninitialized, "%v never written", sass.Reg(d.mem.base))
		}
		a := w.saddr(&d.mem, r)
		if _, err := c.sharedAt(w, d, r, a, 16, false); err != nil {
			return err
		}
		rowAddr[r] = a
	}
	var out [4][32]uint32
	for i := 0; i < d.n; i++ {
		for l := 0; l < 32; l++ {
			g, t := l/4, l%4
			if !d.trans {
				a := rowAddr[8*i+g] + int64(4*t)
				out[i][l] = binary.LittleEndian.Uint32(c.shared[a:])
				continue
			}
			lo := binary.LittleEndian.Uint16(c.shared[rowAddr[8*i+2*t]+int64(2*g):])
			hi := binary.LittleEndian.Uint16(c.shared[rowAddr[8*i+2*t+1]+int64(2*g):])
			out[i][l] = uint32(hi)<<16 | uint32(lo)
		}
	}
	for i := 0; i < d.n; i++ {
		dr := w.dstK(d.d, i)
		*dr = out[i]
	}
	return nil
}

func (c *cta) ldgsts(w *warp, d *dinst, exec uint32) error {
	n := d.width
	p := w.pred(d.ps[0])
	for l := 0; l < 32; l++ {
		if !lanes(exec, l) {
			continue
		}
		ga, m := ldgstsSpan(d, p>>l&1 != 0, w.gaddr(&d.mem2, l), n)
		var g []byte
		switch {
		case m == n:
			var err error
			if g, err = c.globalAt(w, d, l, ga, n); err != nil {
				return err
			}
		case m > 0:
			// a partial copy reads only its m bytes (ga is 16-aligned)
			if g = w.mc.slice(ga, m); g == nil {
				return c.fault(w, d, l, ErrOutOfBounds, "global address %#x (%d bytes) in no region", ga, m)
			}
		}
		sa := w.saddr(&d.mem, l)
		s, err := c.sharedAt(w, d, l, sa, n, true)
		if err != nil {
			return err
		}
		clear(s[copy(s, g):])
		if c.shadow == nil {
			c.shadow = make([]int32, len(c.shared))
		}
		c.recs = append(c.recs, asyncRec{warp: int32(w.id), lane: int32(l), addr: int32(sa), n: int32(n)})
		id := int32(len(c.recs))
		for k := sa; k < sa+int64(n); k++ {
			c.shadow[k] = id
		}
		w.open = append(w.open, id)
	}
	return nil
}

// shfl is SHFL in PTX's shfl.sync terms: c packs the clamp (bits 0..4)
// and the segment mask (bits 8..12).
func (c *cta) shfl(w *warp, d *dinst, exec uint32) {
	a, b, cc := w.src(&d.s[0], 0), w.src(&d.s[1], 1), w.src(&d.s[2], 2)
	poison := c.l.cfg.Poison && d.s[0].k == oReg
	var out [32]uint32
	var pm, undef uint32
	var part [4]uint32
	for l := 0; l < 32; l++ {
		if !lanes(exec, l) {
			continue
		}
		bval := int(b[l] & 31)
		cv := cc[l]
		seg := int(cv >> 8 & 31)
		clamp := int(cv & 31)
		maxL := l&seg | clamp&^seg
		minL := l & seg
		var j int
		var pv bool
		switch d.sub {
		case 0:
			j = minL | bval&^seg
			pv = j <= maxL
		case 1:
			j = l - bval
			pv = j >= maxL
		case 2:
			j = l + bval
			pv = j <= maxL
		default:
			j = l ^ bval
			pv = j <= maxL
		}
		if !pv {
			j = l
		}
		if pv {
			pm |= 1 << l
		}
		out[l] = a[j]
		switch {
		case !lanes(exec, j):
			undef |= 1 << l
		case poison && w.wr[d.s[0].r]>>j&1 == 0:
			// the source lane's defined bytes stay defined (a copy)
			undef |= 1 << l
			if w.wrb != nil {
				for b := range part {
					part[b] |= w.wrb[d.s[0].r][b] >> j & 1 << l
				}
			}
		}
	}
	dr := w.dst(d.d)
	for l := 0; l < 32; l++ {
		if lanes(exec, l) {
			dr[l] = out[l]
		}
	}
	w.setPred(d.pd[0], pm, exec)
	if c.l.cfg.Poison && d.d != 255 {
		w.unmark, w.partB = undef, part
	}
}

// atomic is RED and ATOMG, lane by lane in lane order under the memory's
// lock.
func (c *cta) atomic(w *warp, d *dinst, exec uint32) error {
	if !d.shm {
		// shared memory is the CTA's own: no other goroutine touches it
		m := c.l.mem
		m.mu.Lock()
		defer m.mu.Unlock()
	}
	n := d.width
	// the high words only for 64-bit operands: a 32-bit source may be the
	// program's highest register.
	v0, v1 := w.srcK(&d.s[0], 0, 0), &zeroLanes
	var n0, n1 *[32]uint32
	if d.op == xATOMCAS {
		n0, n1 = w.srcK(&d.s[1], 2, 0), &zeroLanes
	}
	dl, dh := w.dst(d.d), &w.disc[1] // the high words only for 64-bit results
	if n == 8 {
		v1 = w.srcK(&d.s[0], 1, 1)
		if d.op == xATOMCAS {
			n1 = w.srcK(&d.s[1], 3, 1)
		}
		dh = w.dstK(d.d, 1)
	}
	for l := 0; l < 32; l++ {
		if !lanes(exec, l) {
			continue
		}
		var b []byte
		var err error
		if d.gen {
			b, err = c.genericAtomicAt(w, d, l, w.gaddr(&d.mem, l), n)
		} else if d.shm {
			b, err = c.sharedAt(w, d, l, w.saddr(&d.mem, l), n, true)
		} else {
			b, err = c.globalAt(w, d, l, w.gaddr(&d.mem, l), n)
		}
		if err != nil {
			return err
		}
		var old uint64
		if n == 8 {
			old = loadDword(b)
		} else {
			old = uint64(loadWord(b))
		}
		v := uint64(v0[l])
		if n == 8 {
			v |= uint64(v1[l]) << 32
		}
		var nv uint64
		stored := false
		if d.op == xATOMCAS {
			nv = old
			if old == v {
				stored = true
				nv = uint64(n0[l])
				if n == 8 {
					nv |= uint64(n1[l]) << 32
				}
			}
		} else {
			nv = atomOp(d, old, v)
		}
		if n == 8 {
			storeDword(b, nv)
		} else {
			storeWord(b, uint32(nv))
		}
		if d.op == xATOMCAS && d.x { // CAST.SPIN: whether it stored
			old = 0
			if stored {
				old = 1
			}
		}
		if d.op != xRED {
			dl[l] = uint32(old)
			if n == 8 {
				dh[l] = uint32(old >> 32)
			}
		}
	}
	if d.op != xRED && d.npd > 0 {
		w.setPred(d.pd[0], 0xffffffff, exec)
	}
	return nil
}

func atomOp(d *dinst, old, v uint64) uint64 {
	switch d.n {
	case 3:
		return uint64(fadd32(uint32(old), uint32(v), rnEven, true))
	case 4:
		return uint64(hop2(0, uint32(old), uint32(v), 0, false))
	case 5:
		return uint64(hop2(0, uint32(old), uint32(v), 0, true))
	case 6:
		return math.Float64bits(math.Float64frombits(old) + math.Float64frombits(v))
	}
	wide := d.n == 2 || d.n == 7
	mask := uint64(0xffffffff)
	if wide {
		mask = ^uint64(0)
	}
	less := func(x, y uint64) bool {
		if d.n == 1 {
			return int32(x) < int32(y)
		}
		if d.n == 7 {
			return int64(x) < int64(y)
		}
		return x < y
	}
	switch d.sub {
	case mbarArriveSub:
		return mbarArrive(old)
	case 0:
		return (old + v) & mask
	case 1:
		if less(v, old) {
			return v
		}
		return old
	case 2:
		if less(old, v) {
			return v
		}
		return old
	case 3:
		if old >= v {
			return 0
		}
		return (old + 1) & mask
	case 4:
		if old == 0 || old > v {
			return v
		}
		return (old - 1) & mask
	case 5:
		return old & v
	case 6:
		return old | v
	case 7:
		return old ^ v
	}
	return v // EXCH
}

// pairHi is the high word of a source pair when the operand is one, and
// zeros otherwise: a 32-bit source in the last register of the file has no
// register above it (ptxas's I2F.U32.RP R13 in a 14-register kernel).
func (w *warp) pairHi(s *sopnd, pair bool) *[32]uint32 {
	if !pair {
		return &zeroLanes
	}
	return w.srcK(s, 1, 1)
}

// dstHi is the high register of a destination pair, or a discard when the
// result is one register.
func (w *warp) dstHi(n uint8, pair bool) *[32]uint32 {
	if !pair {
		return &w.disc[1]
	}
	return w.dstK(n, 1)
}

// ldc is LDC: each executing lane reads the constant bank at Ra+off.
func (c *cta) ldc(w *warp, d *dinst, exec uint32) error {
	base := w.src(&d.s[0], 0)
	dl, dh := w.dst(d.d), w.dstHi(d.d, d.width == 8)
	for l := 0; l < 32; l++ {
		if !lanes(exec, l) {
			continue
		}
		a := int64(int32(base[l])) + d.mem.off
		if a < 0 || a+int64(d.width) > int64(len(d.cb)) || a%int64(d.width) != 0 {
			return c.fault(w, d, l, ErrOutOfBounds, "c[%#x][%#x] outside the bank (%d bytes) or misaligned", d.sub, a, len(d.cb))
		}
		var v uint64
		for k := d.width - 1; k >= 0; k-- {
			v = v<<8 | uint64(d.cb[a+int64(k)])
		}
		switch {
		case d.width == 1 && d.signed:
			v = uint64(uint32(int32(int8(v))))
		case d.width == 2 && d.signed:
			v = uint64(uint32(int32(int16(v))))
		}
		dl[l], dh[l] = uint32(v), uint32(v>>32)
	}
	return nil
}

// MaxCallDepth is the deepest per-lane nesting of CALLs the simulator runs:
// a lane that calls deeper faults (ErrOutOfBounds) with the depth named,
// where unbounded recursion would otherwise run until its stack frames left
// the local-memory window. A RET with no CALL pending in its lane faults too.
const MaxCallDepth = 1024

// callDepth counts a CALL (+1) or RET (-1) in the executing lanes.
func (c *cta) callDepth(w *warp, d *dinst, exec uint32) error {
	for l := 0; l < 32; l++ {
		if !lanes(exec, l) {
			continue
		}
		n := w.depth[l] + int32(d.call)
		if n > MaxCallDepth {
			return c.fault(w, d, l, ErrOutOfBounds, "call depth %d exceeds the simulator's MaxCallDepth (%d): runaway recursion?", n, MaxCallDepth)
		}
		if n < 0 {
			return c.fault(w, d, l, ErrOutOfBounds, "RET without a pending CALL in this lane")
		}
		w.depth[l] = n
	}
	return nil
}

// laneMask is the value of lane mask register SR_EQMASK..SR_GEMASK
// (0x38..0x3c) in lane l: the lanes equal to, below, at or below, above,
// or at or above l.
func laneMask(sr uint8, l int) uint32 {
	lt := uint32(1)<<l - 1
	return [5]uint32{1 << l, lt, lt | 1<<l, ^(lt | 1<<l), ^lt}[sr-0x38]
}

// wideAdd adds the 64-bit addend c of IMAD.HI/IMAD.WIDE to the product p
// and returns the sum and its carry out (0 or 1). A negated addend is -c,
// except under .X, where it is ~c and the carry in cin is added (the
// high half of a multi-word product: IMAD.WIDE.U32.X R2, R5, R7, R10, P0
// in ptxas's mul.hi.u64).
func wideAdd(p, c uint64, neg, x bool, cin uint32) (uint64, uint32) {
	if !x {
		cin = 0
		if neg {
			c = -c
		}
	} else if neg {
		c = ^c
	}
	r, co := bits.Add64(p, c, uint64(cin))
	return r, uint32(co)
}
