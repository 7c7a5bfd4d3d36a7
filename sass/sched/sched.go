package sched

import (
	"fmt"
	"sort"

	"github.com/tcrt-go/tcrt/sass"
)

// Rule names one hazard kind Check reports.
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
	// RuleWaitUnset: a wait on a scoreboard that no instruction on any
	// path to it sets; reported only under Options.Strict. A wait on a
	// scoreboard with nothing outstanding is a no-op on hardware, and
	// ptxas emits such waits: it waits again on scoreboards it has already
	// drained, and after the mbarrier wait loop of a cp.async copy a
	// LOP3 waits on SB1, which only a later LDS sets
	// (testdata/ptxas/tail2_sync.ptx mbar). In a hand-written kernel
	// such a wait usually names the wrong scoreboard, so Strict keeps it.
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

// Options configures Check.
type Options struct {
	// Latencies is the timing table; nil means DefaultLatencies().
	Latencies *LatencyTable
	// Loop declares the whole program a loop body: it runs again from
	// its first instruction after its last.
	Loop bool
	// Strict adds the rules that flag code which is harmless on hardware
	// but rarely meant in a hand-written kernel: RuleWaitUnset. ptxas's
	// code is checked without it.
	Strict bool
}

// Check checks the control words of p against its register
// dependences and reports every hazard it finds, sorted by index.
//
// The analysis runs on the control-flow graph (cfg.go): both sides
// of every conditional branch, calls into their subroutines and returns
// to their callers, BRX into the switch cases after it, and loops until
// the state before every instruction stops changing, so dependences
// carried around a back edge are checked. The state before an
// instruction joins every path that reaches it: a result in flight on
// one path is in flight, and a fixed-latency result's age is the fewest
// stall cycles since its producer on any path (waits can only delay an
// instruction further, so they are not counted: the check is
// conservative). Branch conditions are not evaluated, so a hazard on a
// path no execution takes is still reported; guards are compared: an
// instruction under the complementary guard of a variable-latency one in
// flight (@!P0 after @P0, P0 not written in between) runs in other lanes
// and does not depend on it.
//
// Scoreboards are counters: a wait on SBn is satisfied when every
// instruction that set it has released it. Results of instructions of the
// same Queue are written in issue order, so a wait that releases one
// releases the earlier ones too; memory accesses read their registers in
// issue order (checker.memory). Instructions outside the model are
// skipped (reported as RuleUnmodeled) but their waits still apply.
func Check(p sass.Program, opts Options) []Finding {
	c := newChecker(p, opts)
	c.flow()
	return c.finish()
}

type findKey struct {
	idx   int
	rule  Rule
	other int
	what  string
}

type checker struct {
	p     sass.Program
	opts  Options
	lat   *LatencyTable
	deps  []sass.Deps
	ok    []bool
	found map[findKey]Finding
	// maxAge is the longest fixed latency of the table: an older
	// fixed-latency result can no longer be read too soon.
	maxAge int
}

func newChecker(p sass.Program, opts Options) *checker {
	if opts.Latencies == nil {
		opts.Latencies = DefaultLatencies()
	}
	c := &checker{p: p, opts: opts, lat: opts.Latencies, found: map[findKey]Finding{}}
	c.deps = make([]sass.Deps, len(p))
	c.ok = make([]bool, len(p))
	for k, i := range p {
		d, err := sass.DepsOf(i)
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
func (c *checker) static(k int, i sass.Inst, d sass.Deps) {
	ct := i.Ctrl
	if ct.Reuse&7 != 0 && ct.Yield {
		c.report(k, RuleReuseYield, -1, "", fmt.Sprintf("reuse flags %#x on a yielding instruction", ct.Reuse&7))
	}
	if ct.Stall > 11 && !ct.Yield {
		c.report(k, RuleLongStall, -1, "", fmt.Sprintf("stall %d without yield (at most 11)", ct.Stall))
	}
	if !d.Class.Variable() && (ct.WriteSB != sass.NoSB || ct.ReadSB != sass.NoSB) {
		c.report(k, RuleFixedScoreboard, -1, "", fmt.Sprintf("%s is fixed-latency (%s) but sets %s", i.Op, d.Class, ct))
	}
	if d.Class.Variable() && ct.WriteSB == sass.NoSB && d.Queue == sass.QueueNone && len(d.Writes) > 0 {
		c.report(k, RuleNoWriteScoreboard, -1, "", fmt.Sprintf("%s writes %v but sets no write scoreboard", i.Op, d.Writes))
	}
}

func containsLoc(ls []sass.Loc, l sass.Loc) bool {
	for _, x := range ls {
		if x == l {
			return true
		}
	}
	return false
}

// finish adds the path-wide rules and sorts the findings.
func (c *checker) finish() []Finding {
	// wait-unset (Strict only) runs on the control-flow graph, every
	// path at once: a wait is reported when no instruction on any path
	// from the entry to it sets the scoreboard (everSet says why a drained
	// one is not enough).
	if !c.opts.Strict {
		return c.sorted()
	}
	in, reached := everSet(c.p, successors(c.p))
	for k, i := range c.p {
		if !reached[k] {
			continue
		}
		var want uint8 = i.Ctrl.Wait & 0x3f
		if i.Op == "DEPBAR" && len(i.Args) >= 2 && i.Args[0].Kind == sass.KSB && i.Args[0].N < 6 {
			want |= 1 << i.Args[0].N
		}
		if i.Op == "DEPBAR" && len(i.Args) == 3 && i.Args[2].Kind == sass.KSBSet {
			want |= uint8(i.Args[2].Imm) & 0x3f
		}
		for n := 0; n < 6; n++ {
			if want>>n&1 != 0 && in[k]>>n&1 == 0 {
				c.report(k, RuleWaitUnset, -1, fmt.Sprint(n),
					fmt.Sprintf("waits on SB%d, which nothing sets on any path to it", n))
			}
		}
	}
	return c.sorted()
}

// sorted returns the findings by index, rule, other instruction and detail.
func (c *checker) sorted() []Finding {
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
