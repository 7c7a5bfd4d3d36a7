package sim

import (
	"math/bits"

	"github.com/tcrt-go/tcrt/sass"
)

// BAR.RED and B2R (PTX's bar.red): a barrier that also reduces a
// predicate over the threads that arrive.
//
// BAR.RED.{POPC,AND,OR} b, [n,] P synchronises like BAR.SYNC b [, n]; each
// arriving warp adds its executing lanes' P (popcount, all, any) to the
// barrier's reduction. When the barrier completes, every warp that
// arrived receives the result; B2R.RESULT Rd reads it into each executing
// lane (POPC: the count, ptxas's bar.red.popc) and B2R.RESULT RZ, Pd sets
// Pd (AND, OR: ptxas's bar.red.and/or.pred). ptxas pairs POPC with the
// register form and AND/OR with the predicate form only; the crossed
// uses are assumed: Rd gets 1 or 0 after AND/OR, Pd is set after POPC
// where the count is non-zero. The result is the warp's until its next
// BAR.RED. Warps meeting at one barrier with
// different operations (a BAR.SYNC, or another reduction) fault
// ErrDivergent; a B2R with no reduction before it faults ErrUnsupported.

// reduction kinds (dinst.sub of a BAR.RED; 0 is a plain barrier)
const (
	redNone uint8 = iota
	redPOPC
	redAND
	redOR
)

var redNames = [...]string{"SYNC", "POPC", "AND", "OR"}

// barRed is the reduction state of one barrier.
type barRed struct {
	kind     uint8
	popc     int
	all, any bool
}

// decBARRed decodes BAR.RED.{POPC,AND,OR} b, [n,] P: the predicate is
// the last operand, the others BAR.SYNC's.
func (c *decoder) decBARRed() error {
	d, mods := c.d, c.mods
	for k, m := range redNames[1:] {
		if has(mods, m) {
			d.sub = uint8(k) + 1
		}
	}
	if d.sub == redNone || len(c.a) < 2 || c.a[len(c.a)-1].Kind != sass.KPred {
		return bad("BAR.%v", mods)
	}
	if err := c.psrcOf(c.a[len(c.a)-1], 0); err != nil {
		return err
	}
	c.a = c.a[:len(c.a)-1]
	return nil
}

// barRedArrive adds warp w's executing lanes to barrier b's reduction.
func (c *cta) barRedArrive(w *warp, d *dinst, b int, exec uint32) error {
	r := &c.bars[b].red
	if c.bars[b].arrived == 0 {
		*r = barRed{kind: d.sub, all: true}
	} else if r.kind != d.sub {
		return c.fault(w, d, firstLane(exec), ErrDivergent, "barrier %d: BAR.%s meets warps at BAR.%s", b, redNames[d.sub], redNames[r.kind])
	}
	if d.sub == redNone {
		return nil
	}
	p := w.pred(d.ps[0]) & exec
	r.popc += bits.OnesCount32(p)
	r.all = r.all && p == exec
	r.any = r.any || p != 0
	return nil
}

// barRedDone gives barrier b's completed reduction to the warps that
// arrived.
func (c *cta) barRedDone(bb *barrier) {
	r := &bb.red
	if r.kind == redNone {
		return
	}
	v := uint32(r.popc)
	switch r.kind {
	case redAND:
		v = b2u(r.all)
	case redOR:
		v = b2u(r.any)
	}
	for _, w := range bb.arrivers {
		w.barRes, w.barResSet = v, true
	}
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// decB2R decodes B2R.RESULT Rd [, Pd].
func (c *decoder) decB2R() error {
	d := c.d
	if !has(c.mods, "RESULT") || len(c.a) < 1 || len(c.a) > 2 {
		return bad("B2R.%v", c.mods)
	}
	d.op = xB2R
	if len(c.a) == 2 {
		if err := c.pdst(c.a[1]); err != nil {
			return err
		}
	}
	return c.dst(c.a[0], 1)
}

// b2r runs B2R.RESULT.
func (c *cta) b2r(w *warp, d *dinst, exec uint32) error {
	if !w.barResSet {
		return c.fault(w, d, firstLane(exec), ErrUnsupported, "B2R.RESULT with no BAR.RED before it")
	}
	dr := w.dst(d.d)
	for l := 0; l < 32; l++ {
		if lanes(exec, l) {
			dr[l] = w.barRes
		}
	}
	if d.npd > 0 {
		w.setPred(d.pd[0], -b2u(w.barRes != 0), exec)
	}
	return nil
}
