package sass

import (
	"fmt"
	"sort"
)

// Rule names one hazard kind CheckSchedule reports.
type Rule string

// The rules. Each has a test program that breaks it (sched_test.go).
const (
	// RuleFixedLatency: a fixed-latency result is read (or, for a guard,
	// tested) before the latency table's stall cycles have passed.
	RuleFixedLatency Rule = "fixed-latency"
	// RuleNoWriteScoreboard: a variable-latency instruction writes registers
	// but sets no write scoreboard (and is not in an in-order Queue), so
	// nothing can wait for its results.
	RuleNoWriteScoreboard Rule = "no-write-scoreboard"
	// RuleUnwaited: a register a variable-latency instruction writes is
	// read or overwritten before a wait on its write scoreboard.
	RuleUnwaited Rule = "unwaited-result"
	// RuleUnprotectedOverwrite: a source register of a late reader (a
	// store, RED, ATOMG, LDGSTS, HMMA) is overwritten before a wait on the
	// reader's read (or write) scoreboard.
	RuleUnprotectedOverwrite Rule = "unprotected-overwrite"
	// RuleReuseYield: an operand reuse flag on a yielding instruction
	// (nvdisasm drops such flags: the reuse cache is not kept across a
	// warp switch).
	RuleReuseYield Rule = "reuse-with-yield"
	// RuleLongStall: a stall above 11 without the yield flag (nvdisasm
	// 11.8 refuses the word: TestLongStallNvdisasm).
	RuleLongStall Rule = "stall-without-yield"
	// RuleFixedScoreboard: a scoreboard set on a fixed-latency instruction.
	RuleFixedScoreboard Rule = "scoreboard-on-fixed-latency"
	// RuleScoreboardReuse: a scoreboard set again while a counted wait
	// (DEPBAR.LE SBn, k with k > 0) still has to tell its earlier setters
	// apart. Scoreboards count their setters (ptxas sets SB5 on four HMMAs
	// in a row, mma_loop.ptx), so a wait that drains one is never fooled;
	// a counted wait is: an extra setter lets it pass while a group it
	// counts is still in flight.
	RuleScoreboardReuse Rule = "scoreboard-reuse"
	// RuleWaitUnset: a wait on a scoreboard nothing has set, on every
	// path analysed.
	RuleWaitUnset Rule = "wait-unset"
	// RuleUnmodeled: an instruction the dependence table does not cover;
	// nothing else is checked for it.
	RuleUnmodeled Rule = "unmodeled"
)

// Finding is one hazard: the instruction's index in the program and its
// text, the rule broken, the other instruction involved (the producer, the
// earlier setter; -1 for none) and a sentence saying what is wrong.
type Finding struct {
	Index  int
	Text   string
	Rule   Rule
	Other  int
	Detail string
}

// String prints "12 FFMA R4, R4, R5, R6 ;: fixed-latency: ...".
func (f Finding) String() string {
	return fmt.Sprintf("%d %s: %s: %s", f.Index, f.Text, f.Rule, f.Detail)
}

// CheckOptions configures CheckSchedule.
type CheckOptions struct {
	// Latencies is the timing table; nil means DefaultLatencies().
	Latencies *LatencyTable
	// Loop declares the whole program a loop body: it runs again from
	// its first instruction after its last.
	Loop bool
	// Unroll is how many consecutive iterations of each loop are
	// analysed (besides the path that runs each loop once); 0 means 3.
	Unroll int
}

// CheckSchedule checks the control words of p against its register
// dependences and reports every hazard it finds, sorted by index.
//
// The program is analysed along straight-line paths, the cycle of each
// instruction being the sum of the stall counts before it (waits can only
// delay an instruction further, so they are not counted: the check is
// conservative). A backward BRA closes a loop: the paths run each loop
// once and Unroll times, so dependences carried around the back edge are
// checked. A guarded forward branch or EXIT is assumed not taken (its
// taken path is a suffix of the fall-through one in the kernels this
// checks); an unguarded one is followed.
//
// Scoreboards are counters: a wait on SBn is satisfied when every
// instruction that set it has released it. Results of instructions of the
// same Queue are written in issue order, so a wait that releases one
// releases the earlier ones too.
func CheckSchedule(p Program, opts CheckOptions) []Finding {
	c := newChecker(p, opts)
	for _, path := range c.paths() {
		c.run(path)
	}
	return c.finish()
}

type fixedWrite struct {
	idx, cycle int
	class      Class
}

// pend is a variable-latency instruction in flight along a path.
type pend struct {
	idx, pos     int
	wsb, rsb     Scoreboard
	queue        Queue
	writes, late []Loc
	wdone, rdone bool
}

type findKey struct {
	idx   int
	rule  Rule
	other int
	what  string
}

type checker struct {
	p      Program
	opts   CheckOptions
	lat    *LatencyTable
	deps   []Deps
	ok     []bool
	found  map[findKey]Finding
	waited map[[2]int]bool // (index, sb) -> some occurrence had a setter pending
	waits  map[[2]int]bool // (index, sb) waits seen
}

func newChecker(p Program, opts CheckOptions) *checker {
	if opts.Latencies == nil {
		opts.Latencies = DefaultLatencies()
	}
	if opts.Unroll <= 0 {
		opts.Unroll = 3
	}
	c := &checker{p: p, opts: opts, lat: opts.Latencies, found: map[findKey]Finding{},
		waited: map[[2]int]bool{}, waits: map[[2]int]bool{}}
	c.deps = make([]Deps, len(p))
	c.ok = make([]bool, len(p))
	for k, i := range p {
		d, err := DepsOf(i)
		if err != nil {
			c.report(k, RuleUnmodeled, -1, "", err.Error())
			continue
		}
		c.deps[k], c.ok[k] = d, true
		c.static(k, i, d)
	}
	return c
}

func (c *checker) report(idx int, r Rule, other int, what, detail string) {
	k := findKey{idx, r, other, what}
	if _, dup := c.found[k]; dup {
		return
	}
	c.found[k] = Finding{Index: idx, Text: c.p[idx].Text(int64(16 * idx)), Rule: r, Other: other, Detail: detail}
}

// static applies the rules that concern one control word alone.
func (c *checker) static(k int, i Inst, d Deps) {
	ct := i.Ctrl
	if ct.Reuse&7 != 0 && ct.Yield {
		c.report(k, RuleReuseYield, -1, "", fmt.Sprintf("reuse flags %#x on a yielding instruction", ct.Reuse&7))
	}
	if ct.Stall > 11 && !ct.Yield {
		c.report(k, RuleLongStall, -1, "", fmt.Sprintf("stall %d without yield (at most 11)", ct.Stall))
	}
	if !d.Class.Variable() && (ct.WriteSB != NoSB || ct.ReadSB != NoSB) {
		c.report(k, RuleFixedScoreboard, -1, "", fmt.Sprintf("%s is fixed-latency (%s) but sets %s", i.Op, d.Class, ct))
	}
	if d.Class.Variable() && ct.WriteSB == NoSB && d.Queue == QueueNone && len(d.Writes) > 0 {
		c.report(k, RuleNoWriteScoreboard, -1, "", fmt.Sprintf("%s writes %v but sets no write scoreboard", i.Op, d.Writes))
	}
}

// target returns the index a BRA at k jumps to, or false.
func (c *checker) target(k int) (int, bool) {
	i := c.p[k]
	if i.Op != "BRA" || len(i.Args) != 1 || i.Args[0].Kind != KTarget || i.Args[0].Imm%16 != 0 {
		return 0, false
	}
	t := k + 1 + int(i.Args[0].Imm/16)
	if t < 0 || t > len(c.p) {
		return 0, false
	}
	return t, true
}

// paths returns the instruction index sequences to analyse.
func (c *checker) paths() [][]int {
	n := len(c.p)
	if c.opts.Loop {
		var once, many []int
		for k := 0; k < n; k++ {
			once = append(once, k)
		}
		for u := 0; u < c.opts.Unroll; u++ {
			many = append(many, once...)
		}
		return [][]int{many}
	}
	walk := func(iters int) []int {
		var path []int
		taken := map[int]int{}
		for pc, steps := 0, 0; pc < n && steps < 1<<16; steps++ {
			path = append(path, pc)
			i := c.p[pc]
			guarded := i.Guard.Set && i.Guard.P != PT
			if i.Op == "EXIT" && !guarded {
				break
			}
			if t, ok := c.target(pc); ok {
				switch {
				case t <= pc && taken[pc] < iters-1:
					taken[pc]++
					pc = t
					continue
				case t <= pc:
					taken[pc] = 0
					if !guarded {
						return path
					}
				case !guarded:
					pc = t
					continue
				}
			}
			pc++
		}
		return path
	}
	return [][]int{walk(1), walk(c.opts.Unroll)}
}

// run analyses one path.
func (c *checker) run(path []int) {
	var (
		cycle  int
		fixed  = map[Loc]fixedWrite{}
		inFly  []*pend
		sbSets [7][]*pend // setters of each scoreboard, in issue order
	)
	release := func(pd *pend, write bool) {
		pd.rdone = true
		if write {
			pd.wdone = true
		}
	}
	drain := func(n int, keep int) (latest [numQueues]int) {
		for q := range latest {
			latest[q] = -1
		}
		s := sbSets[n]
		cut := len(s) - keep
		if cut < 0 {
			cut = 0
		}
		for _, pd := range s[:cut] {
			w := pd.wsb.Index() == n
			release(pd, w)
			if w && pd.pos > latest[pd.queue] {
				latest[pd.queue] = pd.pos
			}
		}
		sbSets[n] = append([]*pend(nil), s[cut:]...)
		return latest
	}
	ordered := func(latest [numQueues]int) {
		for _, pd := range inFly {
			if q := pd.queue; q != QueueNone && pd.pos < latest[q] {
				release(pd, true)
			}
		}
	}
	for pos, k := range path {
		i := c.p[k]
		if !c.ok[k] {
			cycle += int(i.Ctrl.Stall)
			continue
		}
		d := c.deps[k]
		// Waits happen before issue.
		for n := 0; n < 6; n++ {
			if i.Ctrl.Wait>>n&1 == 0 {
				continue
			}
			c.waits[[2]int{k, n}] = true
			if len(sbSets[n]) > 0 {
				c.waited[[2]int{k, n}] = true
			}
			ordered(drain(n, 0))
		}
		// DEPBAR.LE SBn, count, {set}: the set's scoreboards are waited
		// for as a wait mask waits (table_mma.go)
		if i.Op == "DEPBAR" && len(i.Args) == 3 && i.Args[2].Kind == KSBSet {
			for n := 0; n < 6; n++ {
				if i.Args[2].Imm>>n&1 != 0 {
					c.waits[[2]int{k, n}] = true
					if len(sbSets[n]) > 0 {
						c.waited[[2]int{k, n}] = true
					}
					ordered(drain(n, 0))
				}
			}
		}
		// DEPBAR.LE SBn, count: at most count setters of SBn stay in flight.
		if i.Op == "DEPBAR" && len(i.Args) >= 2 && i.Args[0].Kind == KSB {
			n, keep := int(i.Args[0].N), int(i.Args[1].Imm)
			if n < len(sbSets) {
				c.waits[[2]int{k, n}] = true
				if len(sbSets[n]) > 0 {
					c.waited[[2]int{k, n}] = true
				}
				if keep > 0 && len(sbSets[n]) > keep {
					for _, pd := range sbSets[n] {
						if pd.queue != QueueAsync {
							c.report(pd.idx, RuleScoreboardReuse, k, "",
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
		// (mma_loop.ptx).
		if i.Op == "BAR" && hasMods(i.Mods, "SYNC") {
			for _, pd := range inFly {
				if cl := c.deps[pd.idx].Class; cl == ClassGlobal || cl == ClassShared {
					pd.rdone = true
				}
			}
		}
		// Reads.
		use := func(l Loc, to Class, write bool) {
			if w, ok := fixed[l]; ok && !write {
				if need := c.lat.Need(w.class, to); cycle-w.cycle < need {
					c.report(k, RuleFixedLatency, w.idx, l.String(),
						fmt.Sprintf("reads %v %d cycles after %s at %d wrote it; %s->%s needs %d",
							l, cycle-w.cycle, c.p[w.idx].Op, w.idx, w.class, to, need))
				}
			}
			for _, pd := range inFly {
				if pd.idx == k && pd.pos == pos {
					continue
				}
				if !pd.wdone && containsLoc(pd.writes, l) {
					verb := "reads"
					if write {
						verb = "overwrites"
					}
					how := fmt.Sprintf("without waiting on SB%d", pd.wsb.Index())
					if pd.wsb == NoSB {
						how = "which sets no write scoreboard"
					}
					c.report(k, RuleUnwaited, pd.idx, l.String(),
						fmt.Sprintf("%s %v, a result of %s at %d, %s", verb, l, c.p[pd.idx].Op, pd.idx, how))
				}
				if write && !pd.rdone && containsLoc(pd.late, l) {
					how := "which sets no read scoreboard"
					switch {
					case pd.rsb != NoSB:
						how = fmt.Sprintf("without waiting on its read scoreboard SB%d", pd.rsb.Index())
					case pd.wsb != NoSB:
						how = fmt.Sprintf("without waiting on its scoreboard SB%d", pd.wsb.Index())
					}
					c.report(k, RuleUnprotectedOverwrite, pd.idx, l.String(),
						fmt.Sprintf("overwrites %v, read late by %s at %d, %s", l, c.p[pd.idx].Op, pd.idx, how))
				}
			}
		}
		if d.HasGuard {
			use(d.Guard, ClassGuard, false)
		}
		for _, l := range d.Reads {
			use(l, d.Class, false)
		}
		for _, l := range d.Writes {
			use(l, d.Class, true)
		}
		// Effects.
		for _, l := range d.Writes {
			delete(fixed, l)
		}
		if d.Class.Variable() {
			pd := &pend{idx: k, pos: pos, wsb: i.Ctrl.WriteSB, rsb: i.Ctrl.ReadSB, queue: d.Queue,
				writes: d.Writes, late: d.Late}
			if len(pd.late) == 0 && pd.rsb == NoSB {
				pd.rdone = true
			}
			if len(pd.writes) == 0 && pd.wsb == NoSB {
				pd.wdone = true
			}
			inFly = append(inFly, pd)
			for _, s := range []Scoreboard{pd.wsb, pd.rsb} {
				if n := s.Index(); n >= 0 && n < len(sbSets) {
					if s == pd.rsb && s == pd.wsb && len(sbSets[n]) > 0 && sbSets[n][len(sbSets[n])-1] == pd {
						continue
					}
					sbSets[n] = append(sbSets[n], pd)
				}
			}
		} else {
			for _, l := range d.Writes {
				fixed[l] = fixedWrite{idx: k, cycle: cycle, class: d.Class}
			}
		}
		live := inFly[:0]
		for _, pd := range inFly {
			if !(pd.wdone && pd.rdone) {
				live = append(live, pd)
			}
		}
		inFly = live
		cycle += int(i.Ctrl.Stall)
	}
}

func containsLoc(ls []Loc, l Loc) bool {
	for _, x := range ls {
		if x == l {
			return true
		}
	}
	return false
}

// finish adds the path-wide rules and sorts the findings.
func (c *checker) finish() []Finding {
	for w := range c.waits {
		if !c.waited[w] {
			c.report(w[0], RuleWaitUnset, -1, fmt.Sprint(w[1]),
				fmt.Sprintf("waits on SB%d, which nothing has set on any path to it", w[1]))
		}
	}
	out := make([]Finding, 0, len(c.found))
	for _, f := range c.found {
		out = append(out, f)
	}
	sort.Slice(out, func(a, b int) bool {
		x, y := out[a], out[b]
		if x.Index != y.Index {
			return x.Index < y.Index
		}
		if x.Rule != y.Rule {
			return x.Rule < y.Rule
		}
		if x.Other != y.Other {
			return x.Other < y.Other
		}
		return x.Detail < y.Detail
	})
	return out
}
