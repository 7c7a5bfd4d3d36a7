package sim

// Divergence and reconvergence.
//
// A converged warp runs one group of lanes (warp.pc, warp.active). A
// branch whose guard differs across the group, or an indirect branch
// whose targets do, splits it: the parts go to warp.pend as (pc, mask)
// groups and the warp runs the group with the lowest pc that can run.
// Groups at the same pc merge. BSSY Bb records the executing lanes in the
// convergence barrier Bb; a group at BSYNC Bb can run once every lane of
// Bb that has not exited (or left it with BREAK Bb) is in the group, so
// the lanes that wait there reconverge. WARPSYNC mask waits the same way
// for the named live lanes. Nothing here runs while a warp is converged
// except a length check of warp.pend.

// diverge sends the lanes of taken to target and keeps the rest of the
// running group at w.pc, then picks the group to run.
func (c *cta) diverge(w *warp, taken uint32, target int) error {
	w.pend = append(w.pend, lgroup{target, taken})
	w.active &^= taken
	return c.reschedule(w)
}

// mergeAt merges the waiting groups at the running group's pc into it.
func (w *warp) mergeAt() {
	k := 0
	for _, g := range w.pend {
		if g.pc == w.pc {
			w.active |= g.mask
			continue
		}
		w.pend[k] = g
		k++
	}
	w.pend = w.pend[:k]
}

// canRun reports whether the group (pc, mask) may execute the
// instruction at pc: not a BSYNC or WARPSYNC still waiting for lanes.
func (c *cta) canRun(w *warp, pc int, mask uint32) bool {
	if pc < 0 || pc >= len(c.l.ds) {
		return true // faults when it runs
	}
	d := &c.l.ds[pc]
	switch d.op {
	case xBSYNC:
		return w.cbar[d.sub]&w.live&^mask == 0
	case xWARPSYNC:
		return w.syncMask(d, mask)&w.live&^mask == 0
	}
	return true
}

// syncMask is WARPSYNC's lane mask for the group mask: the immediate, or
// the register's value in the group's first lane (control checks that
// every executing lane holds the same).
func (w *warp) syncMask(d *dinst, mask uint32) uint32 {
	if !d.x {
		return uint32(d.n)
	}
	return w.src(&d.s[0], 0)[firstLane(mask)]
}

// braDiv reports whether BRA.DIV (conv false) or BRA.CONV (conv true)
// URa is taken by the running group: with M the lanes of URa (~URa with
// its not flag) that have not exited, BRA.DIV is taken when a lane of M is
// not executing (the warp is diverged for M), BRA.CONV when every lane
// of M is. Inferred from nvcc's code around __shfl_sync(mask) and
// __syncwarp(mask) (testdata/nvcc/golden/diverge.*: VOTEU.ANY URa then
// BRA.DIV URa to the subroutine path, BRA.CONV URa around the
// WARPSYNC); the branch is taken or not by the whole group.
func (w *warp) braDiv(d *dinst, exec uint32) bool {
	m := w.src(&d.s[0], 0)[0]
	if d.s[0].not {
		m = ^m
	}
	m &= w.live
	conv := m&^exec == 0
	return conv == d.hi
}

// reschedule returns the running group (if it has lanes) to the waiting
// groups, merges groups at equal pcs and runs the lowest-pc group that
// can run. With no lanes left the warp exits; with groups left but none
// able to run, the warp can never finish: a deadlock.
func (c *cta) reschedule(w *warp) error {
	if w.active != 0 {
		w.pend = append(w.pend, lgroup{w.pc, w.active})
	}
	// merge groups with equal pcs
	for i := 0; i < len(w.pend); i++ {
		for j := i + 1; j < len(w.pend); {
			if w.pend[j].pc == w.pend[i].pc {
				w.pend[i].mask |= w.pend[j].mask
				w.pend[j] = w.pend[len(w.pend)-1]
				w.pend = w.pend[:len(w.pend)-1]
				continue
			}
			j++
		}
	}
	best := -1
	for i, g := range w.pend {
		if (best < 0 || g.pc < w.pend[best].pc) && c.canRun(w, g.pc, g.mask) {
			best = i
		}
	}
	if best < 0 {
		if len(w.pend) == 0 {
			w.active = 0
			c.exitWarp(w)
			return nil
		}
		g := w.pend[0]
		return c.faultAt(w, g.pc, firstLane(g.mask), ErrDeadlock,
			"diverged lanes wait at convergence points no other lane can reach (groups "+groupsText(w.pend)+")")
	}
	g := w.pend[best]
	w.pend[best] = w.pend[len(w.pend)-1]
	w.pend = w.pend[:len(w.pend)-1]
	w.pc, w.active = g.pc, g.mask
	return nil
}

func groupsText(gs []lgroup) string {
	s := ""
	for i, g := range gs {
		if i > 0 {
			s += ", "
		}
		s += "lanes " + hex32(g.mask) + " at " + hex32(uint32(16*g.pc))
	}
	return s
}

func hex32(v uint32) string {
	const digits = "0123456789abcdef"
	b := []byte("0x00000000")
	for i := 0; i < 8; i++ {
		b[9-i] = digits[v>>(4*i)&15]
	}
	return string(b)
}

// control executes the convergence-barrier and indirect-branch
// instructions (exec is nonzero).
func (c *cta) control(w *warp, d *dinst, exec uint32) error {
	switch d.op {
	case xBSSY:
		w.cbar[d.sub] = exec
	case xBREAK:
		w.cbar[d.sub] &^= exec
	case xBRADIV:
		if exec != w.active {
			return c.fault(w, d, firstLane(w.active&^exec), ErrDivergent,
				"BRA.DIV/BRA.CONV guarded off in lanes %#08x of active %#08x", w.active&^exec, w.active)
		}
		if w.braDiv(d, exec) {
			w.pc = d.target
		}
	case xBSYNC, xWARPSYNC:
		if exec != w.active {
			return c.fault(w, d, firstLane(w.active&^exec), ErrDivergent,
				"convergence point guarded off in lanes %#08x of active %#08x", w.active&^exec, w.active)
		}
		if d.op == xWARPSYNC && d.x {
			a := w.src(&d.s[0], 0)
			l0 := firstLane(exec)
			for l := 0; l < 32; l++ {
				if lanes(exec, l) && a[l] != a[l0] {
					return c.fault(w, d, l, ErrDivergent, "WARPSYNC mask %#x in lane %d, %#x in lane %d", a[l], l, a[l0], l0)
				}
			}
		}
		if !c.canRun(w, d.idx, w.active) {
			w.pc = d.idx // wait here for the other lanes
			return c.reschedule(w)
		}
	case xBRX:
		a := w.src(&d.s[0], 0)
		// lanes of the running group by target; guarded-off lanes fall through
		var gs [32]lgroup
		n := 0
		for l := 0; l < 32; l++ {
			if !lanes(exec, l) {
				continue
			}
			off := int64(int32(a[l])) + int64(d.n)
			if off%16 != 0 || off < 0 || off/16 >= int64(len(c.l.ds)) {
				return c.fault(w, d, l, ErrOutOfBounds, "indirect branch to byte offset %#x, outside the program", off)
			}
			t := int(off / 16)
			k := 0
			for k < n && gs[k].pc != t {
				k++
			}
			if k == n {
				gs[n] = lgroup{t, 0}
				n++
			}
			gs[k].mask |= 1 << l
		}
		if n == 1 && exec == w.active {
			w.pc = gs[0].pc
			return nil
		}
		w.active &^= exec
		w.pend = append(w.pend, gs[:n]...)
		return c.reschedule(w)
	case xBMOVR:
		dr := w.dst(d.d)
		for l := 0; l < 32; l++ {
			if lanes(exec, l) {
				dr[l] = w.cbar[d.sub]
			}
		}
		if d.x {
			w.cbar[d.sub] = 0
		}
	case xBMOVW:
		// one value for the warp's barrier: lanes of different
		// activations of a recursive function that meet here (their
		// recursion depth diverged) would restore different masks
		a := w.src(&d.s[0], 0)
		l0 := firstLane(exec)
		for l := 0; l < 32; l++ {
			if lanes(exec, l) && a[l] != a[l0] {
				return c.fault(w, d, l, ErrDivergent, "barrier value %#x in lane %d, %#x in lane %d", a[l], l, a[l0], l0)
			}
		}
		w.cbar[d.sub] = a[l0]
	}
	return nil
}
