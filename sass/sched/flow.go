package sched

import (
	"fmt"

	"github.com/tcrt-go/tcrt/sass"
)

// The data-flow engine of Check: the state of the scoreboards and
// of the fixed-latency results in flight before each instruction, joined
// over every control-flow path that reaches it (successors, cfg.go)
// until nothing changes.

// fixedWrite is a fixed-latency result in flight: its producer, the stall
// cycles since it issued (on the path that makes them fewest) and its class.
type fixedWrite struct {
	idx, age int
	class    sass.Class
}

// pend is a variable-latency instruction in flight.
type pend struct {
	idx          int
	wsb, rsb     sass.Scoreboard
	queue        sass.Queue
	writes, late []sass.Loc
	wdone, rdone bool
	// guard, gnot: the instruction's guard predicate (guarded: it has
	// one and no instruction has written the predicate since it issued,
	// so a later instruction under the complementary guard runs in other
	// lanes: complementary)
	guard         sass.Loc
	gnot, guarded bool
}

// complementary reports whether an instruction guarded by (l, not) runs
// in none of the lanes pd runs in: pd is guarded by the same predicate,
// negated the other way, and nothing has written it since. ptxas relies
// on it: nvcc's `@P0 LDG R12` then `@!P0 MUFU.RCP R12` (issue 32's
// held-out corpus) writes R12 under the complementary guard while the
// load is in flight.
func (pd *pend) complementary(has bool, l sass.Loc, not bool) bool {
	return has && pd.guarded && pd.guard == l && pd.gnot != not
}

func (pd *pend) done() bool { return pd.wdone && pd.rdone }

// flowState is what is in flight before an instruction. pends holds every
// variable-latency instruction still in flight or still counted by a
// scoreboard, one instance per instruction (a later issue of the same
// instruction, around a loop, replaces the earlier: it writes the same
// registers and sets the same scoreboards), order lists them in issue
// order and sb the setters of each scoreboard in issue order.
type flowState struct {
	fixed map[sass.Loc]fixedWrite
	pends map[int]*pend
	order []int
	sb    [7][]int
}

func newFlowState() *flowState {
	return &flowState{fixed: map[sass.Loc]fixedWrite{}, pends: map[int]*pend{}}
}

func (s *flowState) clone() *flowState {
	t := &flowState{fixed: make(map[sass.Loc]fixedWrite, len(s.fixed)), pends: make(map[int]*pend, len(s.pends)),
		order: append([]int(nil), s.order...)}
	for l, w := range s.fixed {
		t.fixed[l] = w
	}
	for k, pd := range s.pends {
		c := *pd
		t.pends[k] = &c
	}
	for n := range s.sb {
		t.sb[n] = append([]int(nil), s.sb[n]...)
	}
	return t
}

// mergeInto inserts idx into dst after the nearest element that precedes
// it in src and is already in dst (at the front when there is none).
func mergeInto(dst, src []int, idx int) []int {
	at := 0
	for _, x := range src {
		if x == idx {
			break
		}
		for k, y := range dst {
			if y == x {
				at = k + 1
			}
		}
	}
	dst = append(dst, 0)
	copy(dst[at+1:], dst[at:])
	dst[at] = idx
	return dst
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// join adds src's paths to s: a result in flight on either path is in
// flight, the more recent fixed-latency write counts. It reports whether
// s changed.
func (s *flowState) join(src *flowState) bool {
	changed := false
	for l, w := range src.fixed {
		if d, ok := s.fixed[l]; !ok || w.age < d.age {
			s.fixed[l] = w
			changed = true
		}
	}
	for _, idx := range src.order {
		sp := src.pends[idx]
		dp, ok := s.pends[idx]
		if !ok {
			c := *sp
			s.pends[idx] = &c
			s.order = mergeInto(s.order, src.order, idx)
			changed = true
			continue
		}
		if dp.wdone && !sp.wdone {
			dp.wdone, changed = false, true
		}
		if dp.rdone && !sp.rdone {
			dp.rdone, changed = false, true
		}
		if dp.guarded && !sp.guarded {
			dp.guarded, changed = false, true
		}
	}
	for n := range src.sb {
		for _, idx := range src.sb[n] {
			if !containsInt(s.sb[n], idx) {
				s.sb[n] = mergeInto(s.sb[n], src.sb[n], idx)
				changed = true
			}
		}
	}
	return changed
}

// drop removes the instance of instruction idx from s.
func (s *flowState) drop(idx int) {
	if _, ok := s.pends[idx]; !ok {
		return
	}
	delete(s.pends, idx)
	s.order = removeInt(s.order, idx)
	for n := range s.sb {
		s.sb[n] = removeInt(s.sb[n], idx)
	}
}

func removeInt(xs []int, x int) []int {
	out := xs[:0]
	for _, y := range xs {
		if y != x {
			out = append(out, y)
		}
	}
	return out
}

// flow runs the data-flow analysis to its fixed point, reporting hazards
// as it goes (the states only grow, so a hazard seen on a partial state
// is one of the final state's).
func (c *checker) flow() {
	n := len(c.p)
	if n == 0 {
		return
	}
	succ := successors(c.p)
	if c.opts.Loop && n > 0 {
		last := n - 1
		if !containsInt(succ[last], 0) {
			succ[last] = append(succ[last], 0)
		}
	}
	c.maxAge = 0
	for a := sass.Class(0); a < sass.NumClasses; a++ {
		for b := sass.Class(0); b < sass.NumClasses; b++ {
			if v := c.lat.Need(a, b); v > c.maxAge {
				c.maxAge = v
			}
		}
	}
	in := make([]*flowState, n)
	dirty := make([]bool, n)
	in[0], dirty[0] = newFlowState(), true
	for rounds, more := 0, true; more && rounds < 10000; rounds++ {
		more = false
		for k := 0; k < n; k++ {
			if !dirty[k] {
				continue
			}
			dirty[k] = false
			out := c.transfer(k, in[k].clone())
			for _, t := range succ[k] {
				switch {
				case in[t] == nil:
					in[t] = out.clone()
				case !in[t].join(out):
					continue
				}
				dirty[t] = true
				more = true
			}
		}
	}
}

// transfer applies instruction k to the state before it and returns the
// state after it, reporting the hazards it finds.
func (c *checker) transfer(k int, s *flowState) *flowState {
	i := c.p[k]
	d := c.deps[k]
	// drain releases all but the last keep setters of SBn and returns,
	// per queue, the latest issue position whose write (w) and whose
	// reads (r) that released.
	pos := func(idx int) int {
		for p, x := range s.order {
			if x == idx {
				return p
			}
		}
		return -1
	}
	mem := -1 // the latest memory access whose reads a wait released
	drain := func(n, keep int) (w, r [sass.NumQueues]int) {
		for q := range w {
			w[q], r[q] = -1, -1
		}
		list := s.sb[n]
		cut := len(list) - keep
		if cut < 0 {
			cut = 0
		}
		for _, idx := range list[:cut] {
			pd := s.pends[idx]
			isW := pd.wsb.Index() == n
			pd.rdone = true
			if isW {
				pd.wdone = true
			}
			p := pos(idx)
			if isW && p > w[pd.queue] {
				w[pd.queue] = p
			}
			if p > r[pd.queue] {
				r[pd.queue] = p
			}
			if c.memory(idx) && p > mem {
				mem = p
			}
		}
		s.sb[n] = append([]int(nil), list[cut:]...)
		return w, r
	}
	// ordered releases the earlier members of an in-order queue: their
	// results (and reads) are done when a later member's are.
	ordered := func(w, r [sass.NumQueues]int) {
		for p, idx := range s.order {
			pd := s.pends[idx]
			if p < mem && c.memory(idx) {
				pd.rdone = true
			}
			q := pd.queue
			if q == sass.QueueNone {
				continue
			}
			if p < w[q] {
				pd.wdone, pd.rdone = true, true
			}
			if p < r[q] {
				pd.rdone = true
			}
		}
	}
	// Waits happen before issue, whether or not the instruction is in
	// the model (its control word always decodes).
	for n := 0; n < 6; n++ {
		if i.Ctrl.Wait>>n&1 != 0 {
			ordered(drain(n, 0))
		}
	}
	if !c.ok[k] {
		c.age(s, int(i.Ctrl.Stall))
		return s
	}
	// DEPBAR.LE SBn, count, {set}: the set's scoreboards are waited for
	// as a wait mask waits (DEPBAR in opcodes.go).
	if i.Op == "DEPBAR" && len(i.Args) == 3 && i.Args[2].Kind == sass.KSBSet {
		for n := 0; n < 6 && n < len(s.sb); n++ {
			if i.Args[2].Imm>>n&1 != 0 {
				ordered(drain(n, 0))
			}
		}
	}
	// DEPBAR.LE SBn, count: at most count setters of SBn stay in flight.
	if i.Op == "DEPBAR" && len(i.Args) >= 2 && i.Args[0].Kind == sass.KSB {
		n, keep := int(i.Args[0].N), int(i.Args[1].Imm)
		if n < len(s.sb) {
			if keep > 0 && len(s.sb[n]) > keep {
				for _, idx := range s.sb[n] {
					if s.pends[idx].queue != sass.QueueAsync {
						c.report(idx, RuleScoreboardReuse, k, "",
							fmt.Sprintf("sets SB%d, which DEPBAR at %d counts (LE %d) among LDGDEPBAR groups", n, k, keep))
					}
				}
			}
			ordered(drain(n, keep))
		}
	}
	// BAR.SYNC completes the warp's earlier memory accesses, their
	// register reads included: ptxas overwrites the sources of an STS
	// that set no read scoreboard once a BAR.SYNC follows it
	// (mma_loop.ptx). It also waits for the results of the warp's shared
	// loads (LDS): a barrier orders them before any thread's shared
	// access after it, so they have read shared memory by then. ptxas
	// relies on it: in a tensor-core GEMM of issue 32's held-out corpus,
	// LDS with no scoreboard just before BAR.SYNC, their results read
	// after it with no wait (27,009 places).
	if i.Op == "BAR" && i.HasMod("SYNC") {
		for _, pd := range s.pends {
			if cl := c.deps[pd.idx].Class; cl == sass.ClassGlobal || cl == sass.ClassShared {
				pd.rdone = true
			}
			if c.p[pd.idx].Op == "LDS" {
				pd.wdone = true
			}
		}
	}
	use := func(l sass.Loc, to sass.Class, write bool) {
		if w, ok := s.fixed[l]; ok && !write {
			if need := c.lat.Need(w.class, to); w.age < need {
				c.report(k, RuleFixedLatency, w.idx, l.String(),
					fmt.Sprintf("reads %v %d cycles after %s at %d wrote it; %s->%s needs %d",
						l, w.age, c.p[w.idx].Op, w.idx, w.class, to, need))
			}
		}
		for _, idx := range s.order {
			pd := s.pends[idx]
			if pd.complementary(d.HasGuard, d.Guard, i.Guard.Not) {
				continue
			}
			// A later member of an in-order queue writes after the
			// earlier ones have read their sources and written their
			// results: ptxas overwrites the B fragment R76 of HMMA
			// R56, R104, R76 with the next HMMA R76, R104, R78 and no
			// wait (kernels/mma tcrt_mma_attn_d64_f16), and the
			// address R100 of two LDSMs with LDSM R100, [R100+0x3800].
			sameQueue := write && d.Queue != sass.QueueNone && d.Queue == pd.queue
			if !pd.wdone && containsLoc(pd.writes, l) && !sameQueue {
				verb := "reads"
				if write {
					verb = "overwrites"
				}
				how := fmt.Sprintf("without waiting on SB%d", pd.wsb.Index())
				if pd.wsb == sass.NoSB {
					how = "which sets no write scoreboard"
				}
				c.report(k, RuleUnwaited, pd.idx, l.String(),
					fmt.Sprintf("%s %v, a result of %s at %d, %s", verb, l, c.p[pd.idx].Op, pd.idx, how))
			}
			// Memory accesses read their registers in issue order, so
			// one writes its results after the earlier ones have read.
			afterReads := c.memory(k) && c.memory(pd.idx)
			if write && !pd.rdone && containsLoc(pd.late, l) && !sameQueue && !afterReads {
				how := "which sets no read scoreboard"
				switch {
				case pd.rsb != sass.NoSB:
					how = fmt.Sprintf("without waiting on its read scoreboard SB%d", pd.rsb.Index())
				case pd.wsb != sass.NoSB:
					how = fmt.Sprintf("without waiting on its scoreboard SB%d", pd.wsb.Index())
				}
				c.report(k, RuleUnprotectedOverwrite, pd.idx, l.String(),
					fmt.Sprintf("overwrites %v, read late by %s at %d, %s", l, c.p[pd.idx].Op, pd.idx, how))
			}
		}
	}
	if d.HasGuard {
		use(d.Guard, sass.ClassGuard, false)
	}
	for _, l := range d.Reads {
		use(l, d.Class, false)
	}
	for _, l := range d.Writes {
		use(l, d.Class, true)
	}
	// Effects.
	for _, l := range d.Writes {
		delete(s.fixed, l)
		for _, pd := range s.pends {
			if pd.guarded && pd.guard == l {
				pd.guarded = false
			}
		}
	}
	if d.Class.Variable() {
		s.drop(k)
		pd := &pend{idx: k, wsb: i.Ctrl.WriteSB, rsb: i.Ctrl.ReadSB, queue: d.Queue, writes: d.Writes, late: d.Late,
			guard: d.Guard, gnot: i.Guard.Not, guarded: d.HasGuard && !containsLoc(d.Writes, d.Guard)}
		pd.rdone = len(pd.late) == 0 && pd.rsb == sass.NoSB
		pd.wdone = len(pd.writes) == 0 && pd.wsb == sass.NoSB
		s.pends[k] = pd
		s.order = append(s.order, k)
		for _, sb := range []sass.Scoreboard{pd.wsb, pd.rsb} {
			if n := sb.Index(); n >= 0 && n < len(s.sb) && !containsInt(s.sb[n], k) {
				s.sb[n] = append(s.sb[n], k)
			}
		}
	} else {
		for _, l := range d.Writes {
			s.fixed[l] = fixedWrite{idx: k, age: 0, class: d.Class}
		}
	}
	// Forget what is done and no scoreboard still counts.
	counted := map[int]bool{}
	for n := range s.sb {
		for _, idx := range s.sb[n] {
			counted[idx] = true
		}
	}
	keep := s.order[:0]
	for _, idx := range s.order {
		if s.pends[idx].done() && !counted[idx] {
			delete(s.pends, idx)
			continue
		}
		keep = append(keep, idx)
	}
	s.order = keep
	c.age(s, int(i.Ctrl.Stall))
	return s
}

// memory reports whether instruction k is a memory access (global, local,
// constant or shared): these read their registers in issue order, through
// one queue, whatever order their results come back in. ptxas relies on
// it: in sm86mm/testdata/mma_ref.ptx @P3 STG.E [R4.64], R14 sets no
// scoreboard, and IADD3 R14 overwrites its data after a wait on the read
// scoreboard of a later STG only; in the corpus's control.ptx local_array
// the sources of STLs without scoreboards are overwritten after a wait on
// a later STL's read scoreboard (STL.64 [R1+0x60], R14, then LOP3.LUT R15
// after a wait on SB0 of STL.64 [R1+0x70], R10); in atomics.ptx
// shared_hist LDS R6 overwrites the source of an earlier @P0 ATOMS.MIN.S32
// that sets no scoreboard.
func (c *checker) memory(k int) bool {
	cl := c.deps[k].Class
	return c.ok[k] && (cl == sass.ClassGlobal || cl == sass.ClassShared)
}

// age advances the fixed-latency results by stall cycles and forgets
// those no consumer can read too soon any more.
func (c *checker) age(s *flowState, stall int) {
	for l, w := range s.fixed {
		w.age += stall
		if w.age >= c.maxAge {
			delete(s.fixed, l)
			continue
		}
		s.fixed[l] = w
	}
}
