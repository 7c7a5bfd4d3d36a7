package sim

import "github.com/tcrt-go/tcrt/sass"

// checkSelReads is checkReads for SEL and FSEL: a lane reads only the
// source its predicate selects, so in poison mode the other source need
// not have been written in that lane. ptxas relies on this: row_sum in the
// corpus (uniform.ptx) loads a word under a guard into R12 and then runs
// SEL R4, R12, RZ, !P0 in every lane, R12 being unwritten exactly in the
// lanes where P0 selects RZ.
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
			if m := w.wr[s.r]; m&lanes != lanes {
				return c.fault(w, d, firstLane(lanes&^m), ErrUninitialized, "%v never written", sass.Reg(int(s.r)))
			}
		case oUReg:
			if lanes != 0 && w.urw>>s.r&1 == 0 {
				return c.fault(w, d, firstLane(lanes), ErrUninitialized, "%v never written", sass.UReg(int(s.r)))
			}
		}
	}
	return nil
}
