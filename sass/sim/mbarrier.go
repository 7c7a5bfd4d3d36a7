package sim

import (
	"github.com/tcrt-go/tcrt/sass"
)

// mbarrier objects (PTX mbarrier.*, sm_80–sm_89) as ptxas 11.8 lays them
// out: a 64-bit word in shared memory, which ptxas initialises itself
// (mbarrier.init of count c is STS.64 [bar], {0x40000000-c, 0x80000000-c})
// and whose completion it tests itself (mbarrier.test_wait: LDS of the high
// word, its bit 31 compared with the token's; test_wait.parity: bit 31
// against the parity), so only the arrivals are instructions of their own:
// ATOMS.ARRIVE.64 Rd, [URZ+off] (mbarrier.arrive, the old word the token)
// and ARRIVES.LDGSTSBAR.64 [URZ+off] (cp.async.mbarrier.arrive.noinc).
//
// From that code the model reads the high word as the phase in bit 31 and
// 2^31 minus the pending arrivals in bits 0..30, and the low word as 2^30
// minus the expected count: an arrival adds 1 to the high word, so the
// last one of a phase carries into bit 31 and flips the phase, and the
// pending count then reloads from the low word. The hardware's own use of
// the low word's other bits (arrive_drop, transaction counts) is not known
// here; only the arrivals ptxas emits for mbarrier.arrive and
// cp.async.mbarrier.arrive.noinc are modelled. Assumed, not measured.

// mbarArriveSub is dinst.sub of ATOMS.ARRIVE.64 (after atomOps' indices).
const mbarArriveSub = 11

// mbarArrive is one arrival on the mbarrier word old.
func mbarArrive(old uint64) uint64 {
	lo, hi := uint32(old), uint32(old>>32)+1
	if hi&0x7fffffff == 0 { // the phase's last arrival: the phase flipped
		hi |= (0x40000000 + lo) & 0x7fffffff
	}
	return uint64(hi)<<32 | uint64(lo)
}

// sharedUAddr decodes a shared address [Ra+URb+off] into d.mem (RZ or
// URZ where absent): ptxas writes [URZ+off] for the arrivals and
// ATOMS.POPC.INC (an mbarrier's shared offset as an immediate), nvcc also
// [UR4] (ARRIVES.LDGSTSBAR.64 [UR4], the mbarrier's address in a uniform
// register).
func (c *decoder) sharedUAddr(o sass.Operand) error {
	if o.Kind != sass.KMem || !o.UIndex {
		return bad("%s.%v: only an address [Ra+URb+off] is modelled", c.in.Op, c.mods)
	}
	m, err := c.memOf(o, false)
	c.d.mem = m
	return err
}

// decATOMSArrive decodes ATOMS.ARRIVE.64 Rd, [URZ+off]: each executing
// lane arrives once, in lane order, and receives the word before its
// arrival (the state token) in Rd, Rd+1.
func (c *decoder) decATOMSArrive() error {
	d := c.d
	if !has(c.mods, "64") || len(c.a) != 2 || c.a[0].Kind != sass.KReg {
		return bad("ATOMS.%v: only ARRIVE.64 Rd, [URZ+off] is modelled", c.mods)
	}
	if err := c.sharedUAddr(c.a[1]); err != nil {
		return err
	}
	d.op, d.shm, d.width, d.n, d.sub = xATOM, true, 8, 2, mbarArriveSub
	d.s[0] = sopnd{k: oImm, v: 0}
	return c.dst(c.a[0], 2)
}

// decARRIVES decodes ARRIVES.LDGSTSBAR.64 [Ra+URb+off]
// (cp.async.mbarrier.arrive.noinc): each executing lane arrives on the
// barrier once the warp's earlier LDGSTS copies have landed.
func (c *decoder) decARRIVES() error {
	if !has(c.mods, "LDGSTSBAR") || !has(c.mods, "64") || len(c.a) != 1 {
		return bad("ARRIVES.%v", c.mods)
	}
	c.d.op = xARRIVES
	return c.sharedUAddr(c.a[0])
}

// arrives runs ARRIVES.LDGSTSBAR: the warp's LDGSTS copies, committed or
// not, land and become visible to every thread (copies may complete at any
// time before the arrival they are tracked by; this is the earliest), then
// each executing lane arrives, in lane order.
func (c *cta) arrives(w *warp, d *dinst, exec uint32) error {
	if len(w.open) > 0 {
		w.groups = append(w.groups, w.open)
		w.open = nil
	}
	c.retire(w, 0)
	c.publish(w)
	for l := 0; l < 32; l++ {
		if !lanes(exec, l) {
			continue
		}
		b, err := c.sharedAt(w, d, l, w.saddr(&d.mem, l), 8, true)
		if err != nil {
			return err
		}
		storeDword(b, mbarArrive(loadDword(b)))
	}
	return nil
}
