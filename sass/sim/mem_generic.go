package sim

import (
	"github.com/tcrt-go/tcrt/sass"
)

// Generic addressing (LD, ST, ATOM, QSPC; PTX's generic space).
//
// As on the hardware, a generic address is a 64-bit global address except
// in two windows the driver reports in constant bank 0: the shared window
// (base at c[0x0][0x18], the 64-bit word ptxas adds for cvta.shared) maps
// onto the CTA's shared memory and the local window (base at c[0x0][0x20],
// added for cvta.local: the stack pointer's generic address) onto the
// thread's local memory. Both windows are windowBytes long; an address
// inside one that falls outside the CTA's shared bytes or the thread's
// local window faults as the LDS/LDL would (ErrOutOfBounds); every other
// address must lie in a Memory region.
const (
	// sharedWindow and localWindow are the windows' bases (the values
	// of c[0x0][0x18] and c[0x0][0x20]); Memory.Map refuses regions
	// overlapping either.
	sharedWindow = 0x00007ffe00000000
	localWindow  = 0x00007fff00000000
	// windowBytes is each window's length: every shared offset (228 KiB
	// at most) and every local address (below localTop) fits.
	windowBytes = localTop
)

// generic spaces of an address
const (
	spaceGlobal uint8 = iota
	spaceShared
	spaceLocal
)

// spaceOf classifies a generic address and returns its offset in its
// window (the address itself for global).
func spaceOf(a uint64) (uint8, uint64) {
	switch {
	case a-sharedWindow < windowBytes:
		return spaceShared, a - sharedWindow
	case a-localWindow < windowBytes:
		return spaceLocal, a - localWindow
	}
	return spaceGlobal, a
}

// windowsOverlap reports whether [base, end) meets either window.
func windowsOverlap(base, end uint64) bool {
	return base < sharedWindow+windowBytes && sharedWindow < end ||
		base < localWindow+windowBytes && localWindow < end
}

// genericAt resolves lane l's generic access of n bytes at a to the
// bytes of the space its window names.
func (c *cta) genericAt(w *warp, d *dinst, l int, a uint64, n int, write bool) ([]byte, error) {
	switch s, off := spaceOf(a); s {
	case spaceShared:
		return c.sharedAt(w, d, l, int64(off), n, write)
	case spaceLocal:
		return c.localAt(w, d, l, int64(off), n)
	}
	return c.globalAt(w, d, l, a, n)
}

// decGeneric decodes LD, ST and ATOM as LDG, STG and ATOMG whose lanes'
// addresses are generic (dinst.gen). Only the 64-bit address forms (.E)
// are modelled.
func (c *decoder) decGeneric() error {
	if !has(c.mods, "E") {
		return bad("%s: only 64-bit (.E) generic addresses are modelled", c.in.Op)
	}
	var err error
	switch c.in.Op {
	case "LD":
		c.in.Op = "LDG"
		err = c.decLoad()
	case "ST":
		c.in.Op = "STG"
		err = c.decStore()
	case "ATOM":
		c.in.Op = "ATOMG"
		err = c.decGlobalAtomic()
	default:
		return bad("%s: not a generic memory access", c.in.Op)
	}
	c.d.gen = true
	return err
}

// decQSPC decodes QSPC.E.{G,S,L} Pd, RZ, [Ra+off] (isspacep): Pd is set
// in the lanes whose generic address lies in that space.
func (c *decoder) decQSPC() error {
	d, mods := c.d, c.mods
	if err := c.want(sass.KPred, sass.KReg, sass.KMem); err != nil {
		return err
	}
	if !has(mods, "E") || c.a[1].N != 255 {
		return bad("QSPC: only QSPC.E with an RZ register result is modelled")
	}
	d.op, d.sub = xQSPC, spaceGlobal
	switch {
	case has(mods, "S"):
		d.sub = spaceShared
	case has(mods, "L"):
		d.sub = spaceLocal
	}
	m, err := c.memOf(c.a[2], true)
	if err != nil {
		return err
	}
	d.mem = m
	return c.pdst(c.a[0])
}

// qspc runs QSPC: the predicate from each executing lane's address.
func (c *cta) qspc(w *warp, d *dinst, exec uint32) {
	m := uint32(0)
	for l := 0; l < 32; l++ {
		if lanes(exec, l) {
			if s, _ := spaceOf(w.gaddr(&d.mem, l)); s == d.sub {
				m |= 1 << l
			}
		}
	}
	w.setPred(d.pd[0], m, exec)
}

// genericAtomicAt resolves lane l's generic atomic of n bytes at a: a
// shared-window address is the CTA's shared memory (atomic with ATOMS: a
// CTA's warps run one at a time), any other but the local window global
// memory (atomic with ATOMG: the caller holds the Memory's lock). PTX
// defines atomics on the global and shared spaces only, so a local-window
// address faults.
func (c *cta) genericAtomicAt(w *warp, d *dinst, l int, a uint64, n int) ([]byte, error) {
	if s, _ := spaceOf(a); s == spaceLocal {
		return nil, c.fault(w, d, l, ErrOutOfBounds, "atomic on generic address %#x in the local window (atomics act on global and shared memory only)", a)
	}
	return c.genericAt(w, d, l, a, n, true)
}
