package sim

import "github.com/tcrt-go/tcrt/sass"

// checkSelReads is checkReads for SEL and FSEL: a lane reads only the
// source its predicate selects, so in poison mode the other source need
// not have been written in that lane. ptxas relies on this: row_sum in the
// corpus (uniform.ptx) loads a word under a guard into R12 and then runs
// SEL R4, R12, RZ, !P0 in every lane, R12 being unwritten exactly in the
// lanes where P0 selects RZ. The selected source's undefined bytes are
// copied (copyBytes); an undefined predicate faults.
func (c *cta) checkSelReads(w *warp, d *dinst, exec uint32) error {
	for _, s := range d.reads {
		if s.kind != 1 {
			continue
		}
		if m := w.pw[s.n]; m&exec != exec {
			if s.n >= upBase {
				return c.fault(w, d, firstLane(exec), ErrUninitialized, "%v never written", sass.UPred(s.n-upBase))
			}
			return c.fault(w, d, firstLane(exec&^m), ErrUninitialized, "%v never written", sass.Pred(s.n))
		}
	}
	p := w.pred(d.ps[0])
	for k, lanes := range [2]uint32{exec & p, exec &^ p} {
		s := &d.s[k]
		switch s.k {
		case oReg:
			// a copy: the selected undefined bytes stay undefined in the
			// destination (RZ: nothing is written)
			if m := w.wr[s.r]; m&lanes != lanes && d.d != 255 {
				w.copyBytes(lanes, int(s.r))
			}
		case oUReg:
			if lanes != 0 && w.urw>>s.r&1 == 0 {
				return c.fault(w, d, firstLane(lanes), ErrUninitialized, "%v never written", sass.UReg(int(s.r)))
			}
		}
	}
	return nil
}

// Poison mode tracks each register's bytes: a write defines all four
// bytes, except PRMT's, which defines in each lane the bytes it selects
// from defined source bytes (nvcc merges a half into a register whose other
// half is don't-care with PRMT R17, RZ, 0x7610, R17), and the copies MOV,
// SEL and FSEL make, which define in each lane the bytes defined in the
// source they copy there. A read faults only when a byte it uses is
// undefined: PRMT's byte sources and the copies' sources use none (they
// move the undefinedness), a store of 1 or 2 bytes uses those of its data
// register, a half-precision source read through .H0_H0 or .H1_H1 and
// each source of HADD2.F32 use that half's two bytes, LOP3's and SHF's
// sources the bytes that can reach the result (sopnd.bytes: lop3Used,
// decSHF), F2F's binary16 source its low half, SHFL copies as MOV does
// across lanes; every other read uses all four.

// byteLanes is the lanes in which byte b of register r is defined.
func (w *warp) byteLanes(r, b int) uint32 {
	return w.wr[r] | w.wrb[r][b]
}

// checkBytes checks the read of register r, which is undefined in some
// lanes of exec, byte by byte.
func (c *cta) checkBytes(w *warp, d *dinst, exec uint32, r int) error {
	used := uint8(0xf)
	switch {
	case d.op == xPRMT && d.d != 255 && !(d.s[1].k == oReg && int(d.s[1].r) == r):
		// a source of the bytes, not the selector: prmtBytes follows them
		return nil
	case d.op == xMOV && !d.uni:
		// a copy into a general register moves the undefinedness
		w.copyBytes(exec, r)
		return nil
	case (d.op == xSTG || d.op == xSTS || d.op == xSTL) && d.width < 4 && int(d.s[0].r) == r &&
		(d.mem.base == 255 || r < int(d.mem.base) || r > int(d.mem.base)+1):
		used = 1<<d.width - 1
	default:
		if m := d.usedBytes(r); m != 0 {
			used = m
		}
	}
	for b := 0; b < 4; b++ {
		if used>>b&1 == 0 {
			continue
		}
		if m := w.byteLanes(r, b); m&exec != exec {
			l := firstLane(exec &^ m)
			if (w.wrb[r][0]|w.wrb[r][1]|w.wrb[r][2]|w.wrb[r][3])>>l&1 != 0 {
				return c.fault(w, d, l, ErrUninitialized, "byte %d of %v never written", b, sass.Reg(r))
			}
			return c.fault(w, d, l, ErrUninitialized, "%v never written", sass.Reg(r))
		}
	}
	return nil
}

// usedBytes is the union of the bytes of register r that d's sources
// holding r use (sopnd.bytes), 0 when one of them uses all four.
func (d *dinst) usedBytes(r int) uint8 {
	var m uint8
	for k := range d.s {
		s := &d.s[k]
		if s.k != oReg || int(s.r) != r {
			continue
		}
		if s.bytes == 0 {
			return 0
		}
		m |= s.bytes
	}
	return m
}

// prmtBytes records, for the lanes of exec in which PRMT's result takes an
// undefined byte, which of its bytes are defined (unmarkDst applies it
// after the write).
func (w *warp) prmtBytes(d *dinst, exec uint32) {
	a, b := &d.s[0], &d.s[2]
	full := func(s *sopnd) bool { return s.k != oReg || w.wr[s.r]&exec == exec }
	if full(a) && full(b) {
		return
	}
	def := func(s *sopnd, l int) uint32 {
		if s.k != oReg {
			return 0xf
		}
		var m uint32
		for k := 0; k < 4; k++ {
			m |= w.byteLanes(int(s.r), k) >> l & 1 << k
		}
		return m
	}
	sel := w.src(&d.s[1], 1)
	for l := 0; l < 32; l++ {
		if !lanes(exec, l) {
			continue
		}
		src := def(a, l) | def(b, l)<<4
		var out uint32
		for i := 0; i < 4; i++ {
			out |= src >> (sel[l] >> (4 * i) & 7) & 1 << i
		}
		if out == 0xf {
			continue
		}
		w.unmark |= 1 << l
		for i := 0; i < 4; i++ {
			w.partB[i] |= out >> i & 1 << l
		}
	}
}

// copyBytes records that the destination of a copy of register r takes,
// in the lanes of exec where r is not wholly defined, r's defined bytes
// (unmarkDst applies it after the write).
func (w *warp) copyBytes(exec uint32, r int) {
	und := exec &^ w.wr[r]
	w.unmark |= und
	for b := range w.partB {
		w.partB[b] |= w.wrb[r][b] & und
	}
}

// unmarkDst leaves register r undefined in the lanes of w.unmark, but
// for the bytes partB defines.
func (w *warp) unmarkDst(r uint8) {
	w.wr[r] &^= w.unmark
	if w.wrb != nil {
		for b := range w.wrb[r] {
			w.wrb[r][b] = w.wrb[r][b]&^w.unmark | w.partB[b]
		}
	}
	w.unmark, w.partB = 0, [4]uint32{}
}
