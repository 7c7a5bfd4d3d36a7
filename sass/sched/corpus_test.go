package sched

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/sass"

	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// schedCubins lists every ptxas-built cubin of the repository the
// calibration covers: the corpus's, kernels/ptx's and kernels/mma's sm_86,
// and the nvcc corpus's (CUDA C++ through nvcc, sm_86 and sm_89).
func schedCubins(t testing.TB) []string {
	var out []string
	for _, g := range []string{corpusDir + "/cubin/*.cubin", kernelsDir + "/ptx/cubin/*.cubin", kernelsDir + "/mma/cubin/*.sm_86.cubin",
		corpus.NVCCDir + "/cubin/*.cubin"} {
		fs, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fs...)
	}
	return out
}

// TestCheckSchedulePtxasCorpus: ptxas's own schedules are right on
// silicon, so the checker must find nothing in any ptxas-built cubin of
// the repository (the corpus's for sm_86 and sm_89, kernels/ptx's and
// kernels/mma's sm_86). Words outside the model are skipped and counted
// (the log lists them per cubin); their waits still apply. The baseline
// is zero findings and may not rise.
func TestCheckSchedulePtxasCorpus(t *testing.T) {
	cubins := schedCubins(t)
	if len(cubins) < 39 {
		t.Fatalf("%d ptxas cubins, want >= 39", len(cubins))
	}
	byRule := map[string]int{}
	example := map[string]string{}
	total, kernels, words, skipped := 0, 0, 0, 0
	for _, f := range cubins {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fileSkipped := 0
		for _, s := range corpus.TextSections(t, b) {
			p, bad := decodeLoose(corpus.TrimTail(s.Data))
			kernels++
			words += len(p)
			fileSkipped += bad
			for _, fd := range Check(p, Options{}) {
				if fd.Rule == RuleUnmodeled {
					continue
				}
				total++
				key := fmt.Sprintf("%s %s", fd.Rule, p[fd.Index].Op)
				if fd.Other >= 0 {
					key += " <- " + string(p[fd.Other].Op)
				}
				if byRule[key] == 0 {
					example[key] = fmt.Sprintf("%s %s: %v", filepath.Base(f), s.Name, fd)
				}
				byRule[key]++
			}
		}
		skipped += fileSkipped
		if fileSkipped > 0 {
			t.Logf("%s: %d words outside the model skipped", f, fileSkipped)
		}
	}
	t.Logf("%d cubins, %d kernels, %d words (%d outside the model), %d findings", len(cubins), kernels, words, skipped, total)
	if total > 0 {
		var ks []string
		for k, v := range byRule {
			ks = append(ks, fmt.Sprintf("%4d %s\n\te.g. %s", v, k, example[k]))
		}
		sort.Strings(ks)
		t.Errorf("%d findings in ptxas's code (baseline 0), by rule and opcodes:\n%s", total, strings.Join(ks, "\n"))
	}
}

var (
	schedDump  = flag.String("sched.dump", "", "TestSchedDump: print the listing and findings of CUBIN:KERNEL")
	schedPairs = flag.Bool("sched.pairs", false, "TestSchedCorpusPairs, TestSchedCorpusLateWindow: print ptxas's distances")
)

// TestSchedDump (-sched.dump=cubin:kernel) prints one kernel's listing
// with the checker's findings under each instruction: the tool for
// calibrating the checker.
func TestSchedDump(t *testing.T) {
	spec := *schedDump
	if spec == "" {
		t.Skip("-sched.dump unset")
	}
	fsec := strings.SplitN(spec, ":", 2)
	b, err := os.ReadFile(fsec[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range corpus.TextSections(t, b) {
		if s.Name != ".text."+fsec[1] {
			continue
		}
		p, _ := decodeLoose(corpus.TrimTail(s.Data))
		fs := Check(p, Options{})
		at := map[int][]string{}
		for _, f := range fs {
			at[f.Index] = append(at[f.Index], fmt.Sprintf("%s<-%d %s", f.Rule, f.Other, f.Detail))
		}
		var sb strings.Builder
		for k, i := range p {
			fmt.Fprintf(&sb, "%4d %s\n", k, strings.TrimSpace(i.Listing(int64(16*k))))
			for _, x := range at[k] {
				fmt.Fprintf(&sb, "      !! %s\n", x)
			}
		}
		t.Log("\n" + sb.String())
	}
}

// blockPairs returns, for p read in address order one basic block at a
// time (a block ends after a branch, call, return or exit and before a
// branch target), the fewest stall cycles between each fixed-latency
// producer and a consumer reading its result, by producer and consumer
// opcode ("@" for a guard).
func blockPairs(p sass.Program) map[[2]string]int {
	c := newChecker(p, Options{})
	starts := map[int]bool{}
	for k := range p {
		if t, ok := cfgTarget(p, k); ok {
			starts[t] = true
		}
	}
	out := map[[2]string]int{}
	type w struct{ idx, cycle int }
	last := map[sass.Loc]w{}
	cycle := 0
	for k, i := range p {
		if starts[k] {
			last = map[sass.Loc]w{}
		}
		if !c.ok[k] {
			last = map[sass.Loc]w{}
			continue
		}
		d := c.deps[k]
		note := func(l sass.Loc, to string) {
			if pw, ok := last[l]; ok {
				key := [2]string{string(p[pw.idx].Op), to}
				if v, seen := out[key]; !seen || cycle-pw.cycle < v {
					out[key] = cycle - pw.cycle
				}
			}
		}
		if d.HasGuard {
			note(d.Guard, "@")
		}
		for _, l := range d.Reads {
			note(l, string(i.Op))
		}
		for _, l := range d.Writes {
			delete(last, l)
			if !d.Class.Variable() {
				last[l] = w{k, cycle}
			}
		}
		cycle += int(i.Ctrl.Stall)
		switch i.Op {
		case "BRA", "EXIT", "RET", "CALL", "BRX", "BRXU":
			last = map[sass.Loc]w{}
		}
	}
	return out
}

// TestSchedCorpusPairs (-sched.pairs) lists the fewest stalls ptxas
// leaves between fixed-latency pairs over every ptxas cubin, with the
// table's figure.
func TestSchedCorpusPairs(t *testing.T) {
	if !*schedPairs {
		t.Skip("-sched.pairs unset")
	}
	lat := DefaultLatencies()
	min := map[[2]string]int{}
	where := map[[2]string]string{}
	for _, f := range schedCubins(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range corpus.TextSections(t, b) {
			p, _ := decodeLoose(corpus.TrimTail(s.Data))
			for k, v := range blockPairs(p) {
				if m, ok := min[k]; !ok || v < m {
					min[k] = v
					where[k] = filepath.Base(f) + " " + s.Name
				}
			}
		}
	}
	class := pairClass
	var ks []string
	for k, v := range min {
		from, to := class(k[0]), class(k[1])
		need := lat.Need(from, to)
		mark := ""
		if v < need {
			mark = " BELOW"
		}
		ks = append(ks, fmt.Sprintf("%v->%v %s->%s %d need %d%s (%s)", from, to, k[0], k[1], v, need, mark, where[k]))
	}
	sort.Strings(ks)
	t.Log("\n" + strings.Join(ks, "\n"))
}

// TestSchedCorpusLateWindow (-sched.pairs) lists, per late reader that
// sets no scoreboard at all, the fewest stall cycles ptxas leaves before
// overwriting one of its late sources within a basic block.
func TestSchedCorpusLateWindow(t *testing.T) {
	if !*schedPairs {
		t.Skip("-sched.pairs unset")
	}
	min := map[string]int{}
	where := map[string]string{}
	for _, f := range schedCubins(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range corpus.TextSections(t, b) {
			p, _ := decodeLoose(corpus.TrimTail(s.Data))
			c := newChecker(p, Options{})
			for k, i := range p {
				if !c.ok[k] || len(c.deps[k].Late) == 0 || i.Ctrl.ReadSB != sass.NoSB || i.Ctrl.WriteSB != sass.NoSB {
					continue
				}
				cyc := int(i.Ctrl.Stall)
			scan:
				for j := k + 1; j < len(p); j++ {
					if !c.ok[j] {
						break
					}
					for _, l := range c.deps[j].Writes {
						if containsLoc(c.deps[k].Late, l) {
							key := string(i.Op) + " <- " + string(p[j].Op)
							if m, ok := min[key]; !ok || cyc < m {
								min[key] = cyc
								where[key] = fmt.Sprintf("%s %s %d->%d", filepath.Base(f), s.Name, k, j)
							}
							break scan
						}
					}
					switch p[j].Op {
					case "BRA", "EXIT", "RET", "CALL", "BRX", "BAR":
						break scan
					}
					cyc += int(p[j].Ctrl.Stall)
				}
			}
		}
	}
	var ks []string
	for k, v := range min {
		ks = append(ks, fmt.Sprintf("%s %d (%s)", k, v, where[k]))
	}
	sort.Strings(ks)
	t.Log("\n" + strings.Join(ks, "\n"))
}

// FuzzCheckSchedule: any code section (words in or outside the model,
// branches anywhere) is analysed by Check, LoopBody and CycleModel
// without a panic or a hang, and every
// finding names an instruction of the program.
func FuzzCheckSchedule(f *testing.F) {
	b, err := os.ReadFile(corpusDir + "/cubin/control.sm_86.cubin")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range corpus.TextSections(f, b) {
		f.Add(corpus.TrimTail(s.Data), false)
	}
	f.Add(make([]byte, 32), true)
	f.Fuzz(func(t *testing.T, code []byte, loop bool) {
		if len(code) > 16*512 {
			code = code[:16*512]
		}
		p, _ := decodeLoose(code[:len(code)/16*16])
		for _, fd := range Check(p, Options{Loop: loop}) {
			if fd.Index < 0 || fd.Index >= len(p) || fd.Other < -1 || fd.Other >= len(p) {
				t.Fatalf("finding out of the program: %v", fd)
			}
		}
		// the cycle model and the loop finder take any program too:
		// a result or an error, never a panic
		if body, _, err := LoopBody(p); err == nil {
			_, _ = CycleModel(body, CycleOptions{})
		}
		_, _ = CycleModel(p, CycleOptions{})
	})
}

// The corpus and the repository's kernel packages, wherever the test runs.
var (
	corpusDir  = corpus.Dir
	kernelsDir = corpus.Repo("kernels")
)

// decodeLoose decodes a code section word by word; a word outside the
// model becomes an instruction with opcode "?" that keeps the word's
// control bits. It returns the program and the number of such words.
func decodeLoose(code []byte) (sass.Program, int) {
	var p sass.Program
	bad := 0
	for k := 0; k+16 <= len(code); k += 16 {
		i, err := sass.DecodeWord(code[k : k+16])
		if err != nil {
			i = sass.Inst{Op: "?", Ctrl: sass.ControlOfWord(code[k : k+16])}
			bad++
		}
		p = append(p, i)
	}
	return p, bad
}

// TestCheckScheduleMbarWaitUnset: after ptxas's mbarrier wait loop
// (tail2_sync.ptx mbar) a LOP3 waits on SB1, which nothing on any path to
// it sets (a later LDS does): a no-op on hardware, so the default check is
// clean, and Strict reports exactly that one wait.
func TestCheckScheduleMbarWaitUnset(t *testing.T) {
	corpus.ForSMs(t, func(t *testing.T, sm int) {
		p, bad := decodeLoose(corpus.TrimTail(corpus.Code(t, "tail2_sync", "mbar", sm)))
		if bad != 0 {
			t.Fatalf("%d words outside the model", bad)
		}
		if fs := Check(p, Options{}); len(fs) != 0 {
			t.Errorf("default options:\n%s", findingsText(fs))
		}
		fs := Check(p, Options{Strict: true})
		if len(fs) != 1 || fs[0].Rule != RuleWaitUnset || p[fs[0].Index].Ctrl.Wait != 1<<1 {
			t.Errorf("strict: want one wait-unset on SB1, got:\n%s", findingsText(fs))
		}
	})
}
