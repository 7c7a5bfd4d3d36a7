package sched

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/internal/cudatools"

	"github.com/tcrt-go/tcrt/sass"

	"github.com/tcrt-go/tcrt/sass/internal/corpus"

	"github.com/tcrt-go/tcrt/sass/cubin"
)

var updateSched = flag.Bool("update-sched", false, "rewrite testdata/sched/*.sass from ptxas's output")

// schedSnippets are the PTX files under testdata/sched.
var schedSnippets = []string{"fixed.ptx", "guard.ptx", "var.ptx", "mma_loop.ptx"}

// ptxasKernels assembles testdata/sched/<file> with ptxas -arch=sm_86 and
// returns each kernel's code decoded with Decode, by kernel name. A kernel
// holding a word outside the model is left out with a log line (the model
// is being extended). It skips the test (fails when CI=true) without
// ptxas.
func ptxasKernels(t *testing.T, file string) map[string]sass.Program {
	t.Helper()
	ptxas := cudatools.Require(t, "ptxas")
	dir := t.TempDir()
	out := filepath.Join(dir, "k.cubin")
	cudatools.Run(t, ptxas, "-arch=sm_86", corpus.Path("sched", file), "-o", out)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cubin.Read(b)
	if err != nil {
		t.Fatalf("cubin.Read: %v", err)
	}
	progs := map[string]sass.Program{}
	for _, k := range c.Kernels {
		p, err := sass.Decode(corpus.TrimTail(k.Kernel.Code))
		if err != nil {
			t.Logf("%s: kernel %s skipped, outside the model: %v", file, k.Kernel.Name, err)
			continue
		}
		progs[k.Kernel.Name] = p
	}
	return progs
}

// TestCheckSchedulePtxas: ptxas's own schedules are clean.
func TestCheckSchedulePtxas(t *testing.T) {
	for _, file := range schedSnippets {
		for name, p := range ptxasKernels(t, file) {
			if fs := Check(p, Options{}); len(fs) != 0 {
				t.Errorf("%s %s:\n%s\n%s", file, name, findingsText(fs), p.Listing())
			}
		}
	}
}

// latencyEvidence lists, per fixed-latency table entry, the pairs of
// ptxas's schedules that show it: in kernel of file, the fewest stall
// cycles between a producer `from` and a consumer `to` reading its result
// (`to` "@" for a guard) is cycles.
var latencyEvidence = []struct {
	file, kernel, from, to string
	cycles                 int
}{
	{"fixed.ptx", "ffma_chain", "FFMA", "FFMA", 4},
	{"fixed.ptx", "ffma_chain", "FFMA", "FADD", 4},
	{"fixed.ptx", "ffma_chain", "FADD", "FMUL", 4},
	{"fixed.ptx", "ffma_chain", "FMUL", "FFMA", 4},
	{"fixed.ptx", "ffma_chain", "FADD", "STG", 5},
	{"fixed.ptx", "int_chain", "IMAD", "IMAD", 4},
	{"fixed.ptx", "int_chain", "IADD3", "IADD3", 4},
	{"fixed.ptx", "int_chain", "IADD3", "LOP3", 4},
	{"fixed.ptx", "int_chain", "LOP3", "SHF", 4},
	{"fixed.ptx", "int_chain", "SHF", "IMAD", 5},
	{"fixed.ptx", "int_chain", "LOP3", "IMAD", 5},
	{"fixed.ptx", "int_chain", "IMAD", "IADD3", 5},
	{"fixed.ptx", "setp_guard", "ISETP", "SEL", 4},
	{"fixed.ptx", "setp_guard", "FSETP", "FSEL", 4},
	{"fixed.ptx", "setp_guard", "SEL", "IMAD", 5},
	{"fixed.ptx", "setp_guard", "IMAD", "ISETP", 5},
	{"fixed.ptx", "setp_guard", "FSEL", "STG", 5},
	{"fixed.ptx", "half_chain", "HFMA2", "HFMA2", 4},
	{"fixed.ptx", "half_chain", "HFMA2", "PRMT", 5},
	{"fixed.ptx", "half_chain", "PRMT", "IADD3", 4},
	{"fixed.ptx", "half_chain", "F2FP", "HFMA2", 5},
	{"fixed.ptx", "half_chain", "FFMA", "F2FP", 5},
	{"var.ptx", "store_war", "I2FP", "FADD", 5},
	{"var.ptx", "var_chain", "IMAD", "LDG", 5},
	{"var.ptx", "var_chain", "FADD", "STG", 5},
	{"var.ptx", "var_chain", "FMUL", "STS", 5},
	{"var.ptx", "var_chain", "FMUL", "MUFU", 4},
	{"var.ptx", "var_chain", "FSETP", "@", 13},
	{"var.ptx", "load_war", "IADD3", "ISETP", 4},
	{"var.ptx", "load_war", "IADD3", "IMAD", 5},
	{"var.ptx", "load_war", "MOV", "MOV", 4},
	{"var.ptx", "uniform_load", "IMAD", "LDG", 5},
	{"var.ptx", "uniform_load", "ULDC", "LDG", 4},
	{"guard.ptx", "guard_store", "ISETP", "@", 13},
	{"guard.ptx", "guard_branch", "ISETP", "@", 13},
	{"guard.ptx", "guard_store", "IMAD", "STG", 5},
	{"guard.ptx", "guard_store", "ULDC", "STG", 4},
	// The calibration on the committed ptxas cubins (no tools needed).
	{corpus.NVCCDir + "/cubin/arith.sm_86.cubin", "fdiv_scalar", "ULDC", "IMAD", 2},
	{corpus.NVCCDir + "/cubin/call.sm_86.cubin", "const_lut", "UMOV", "IMAD", 2},
	{corpus.NVCCDir + "/cubin/reduce.sm_86.cubin", "coalesced_count", "IMAD", "REDUX", 4},
	{corpus.NVCCDir + "/cubin/arith.sm_86.cubin", "atomics", "SHF", "REDUX", 4},
	{corpus.NVCCDir + "/cubin/mathlib.sm_86.cubin", "mathf", "I2FP", "MUFU", 4},
	{corpus.NVCCDir + "/cubin/cgscan.sm_86.cubin", "cgall", "VOTE", "R2UR", 4},
	{corpusDir + "/cubin/attn.sm_86.cubin", "flash_attn", "IADD3", "MUFU", 4},
	{corpusDir + "/cubin/attn.sm_86.cubin", "transcendental", "LOP3", "MUFU", 4},
	{corpusDir + "/cubin/attn.sm_86.cubin", "transcendental", "FSEL", "MUFU", 4},
	{corpusDir + "/cubin/intmath.sm_86.cubin", "divmod64", "SEL", "I2F", 4},
	{corpusDir + "/cubin/atomics.sm_86.cubin", "atom_int", "IADD3", "F2I", 4},
	{corpusDir + "/cubin/attn.sm_86.cubin", "flash_attn", "MOV", "RET", 4},
	{corpusDir + "/cubin/control.sm_86.cubin", "switch8", "SHF", "BRX", 4},
	{corpusDir + "/cubin/attn.sm_86.cubin", "transcendental", "IMAD", "RET", 4},
	{kernelsDir + "/mma/cubin/mma.sm_86.cubin", "tcrt_mma_256x128_e5m2_tt", "FSEL", "F2FP", 4},
	{kernelsDir + "/ptx/cubin/sg.sm_86.cubin", "tcrt_sg_scatter", "F2FP", "PRMT", 4},
	{kernelsDir + "/ptx/cubin/sg.sm_86.cubin", "tcrt_sg_gather_cas", "ULDC", "LDG", 2},
	{kernelsDir + "/ptx/cubin/sg.sm_86.cubin", "tcrt_sg_scatter", "ULDC", "ISETP", 2},
	{corpusDir + "/cubin/sm86mm_mma_ref.sm_86.cubin", "mma_ref", "ULDC", "USHF", 2},
	{corpusDir + "/cubin/attn.sm_86.cubin", "flash_attn", "ULDC", "UIADD3", 2},
	{corpusDir + "/cubin/atomics.sm_86.cubin", "shared_hist", "VOTEU", "UFLO", 2},
	{corpusDir + "/cubin/tail_mem.sm_86.cubin", "atom", "VOTEU", "FLO", 2},
	{kernelsDir + "/mma/cubin/mma.sm_86.cubin", "tcrt_mma_attn_d256_bf16", "UMOV", "UIMAD", 2},
	{corpusDir + "/cubin/tail2_sync.sm_86.cubin", "trace", "UMOV", "IMAD", 3},
	{kernelsDir + "/mma/cubin/mma.sm_86.cubin", "tcrt_mma_attn_d256_bf16", "FMUL", "R2UR", 4},
	{corpusDir + "/cubin/reduce.sm_86.cubin", "warp_match", "LOP3", "MATCH", 4},
}

// cubinPairs reads a committed ptxas cubin and returns blockPairs of each
// of its kernels, by kernel name.
func cubinPairs(t *testing.T, file string) map[string]map[[2]string]int {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[[2]string]int{}
	for _, s := range corpus.TextSections(t, b) {
		p, _ := decodeLoose(corpus.TrimTail(s.Data))
		out[strings.TrimPrefix(s.Name, ".text.")] = blockPairs(p)
	}
	return out
}

// fixedPairs returns, for a straight-line walk of p (each loop once), the
// fewest stall cycles between each fixed-latency producer opcode and each
// consumer opcode ("@" for a guard) reading its result.
func fixedPairs(p sass.Program) map[[2]string]int {
	c := newChecker(p, Options{})
	path := straightPath(p)
	out := map[[2]string]int{}
	type w struct{ pos, cycle int }
	last := map[sass.Loc]w{}
	cycle := 0
	for pos, k := range path {
		d := c.deps[k]
		note := func(l sass.Loc, to string) {
			if pw, ok := last[l]; ok {
				key := [2]string{string(p[path[pw.pos]].Op), to}
				if v, seen := out[key]; !seen || cycle-pw.cycle < v {
					out[key] = cycle - pw.cycle
				}
			}
		}
		if d.HasGuard {
			note(d.Guard, "@")
		}
		for _, l := range d.Reads {
			note(l, string(p[k].Op))
		}
		for _, l := range d.Writes {
			delete(last, l)
			if !d.Class.Variable() {
				last[l] = w{pos, cycle}
			}
		}
		cycle += int(p[k].Ctrl.Stall)
	}
	return out
}

// straightPath is the fall-through walk of p: guarded branches not taken,
// unguarded forward ones followed, each loop run once.
func straightPath(p sass.Program) []int {
	var path []int
	for pc, steps := 0, 0; pc < len(p) && steps < 1<<16; steps++ {
		path = append(path, pc)
		i := p[pc]
		guarded := i.Guard.Set && i.Guard.P != sass.PT
		if i.Op == "EXIT" && !guarded {
			break
		}
		if t, ok := cfgTarget(p, pc); ok && i.Op == "BRA" {
			switch {
			case t <= pc && !guarded:
				return path
			case t > pc && !guarded:
				pc = t
				continue
			}
		}
		pc++
	}
	return path
}

// TestLatencyEvidence re-derives the fixed-latency table from ptxas 11.8:
// each evidence pair is at the distance it claims and no closer than the
// table allows, and every table entry is the distance of some pair (the
// table holds the fewest stall cycles ptxas leaves). The rows taken from
// committed cubins are checked without the tools; those of the
// testdata/sched snippets need ptxas 11.8.
func TestLatencyEvidence(t *testing.T) {
	if cudatools.Path("ptxas") == "" && os.Getenv("CI") == "true" {
		cudatools.Require(t, "ptxas") // fails under CI
	}
	withPtxas := cudatools.Path("ptxas") != "" && corpus.Ptxas118(t)
	lat := DefaultLatencies()
	pairs := map[string]map[[2]string]int{}
	for _, e := range latencyEvidence {
		if _, done := pairs[e.file+" "+e.kernel]; done {
			continue
		}
		if strings.HasSuffix(e.file, ".cubin") {
			for name, m := range cubinPairs(t, e.file) {
				pairs[e.file+" "+name] = m
			}
		} else if withPtxas {
			for name, p := range ptxasKernels(t, e.file) {
				pairs[e.file+" "+name] = fixedPairs(p)
			}
		}
	}
	shown := map[[2]sass.Class]bool{}
	class := pairClass
	for _, e := range latencyEvidence {
		if !strings.HasSuffix(e.file, ".cubin") && !withPtxas {
			continue
		}
		got, ok := pairs[e.file+" "+e.kernel][[2]string{e.from, e.to}]
		if !ok {
			t.Errorf("%s %s: no %s->%s pair", e.file, e.kernel, e.from, e.to)
			continue
		}
		if got != e.cycles {
			t.Errorf("%s %s: %s->%s at %d cycles, evidence says %d", e.file, e.kernel, e.from, e.to, got, e.cycles)
		}
		from, to := class(e.from), class(e.to)
		need := lat.Need(from, to)
		if e.cycles < need {
			t.Errorf("%s %s: %s->%s (%v->%v) at %d, closer than the table's %d", e.file, e.kernel, e.from, e.to, from, to, e.cycles, need)
		}
		if e.cycles == need {
			shown[[2]sass.Class{from, to}] = true
		}
	}
	if !withPtxas {
		t.Skip("ptxas 11.8 missing: the testdata/sched rows and the table's coverage are not checked")
	}
	for _, l := range lat.Fixed {
		if !shown[[2]sass.Class{l.From, l.To}] {
			t.Errorf("table entry %v->%v %d has no evidence row at that distance", l.From, l.To, l.Cycles)
		}
		if !strings.Contains(l.Source, ".ptx") && !strings.Contains(l.Source, ".cu ") {
			// a PTX snippet or a CUDA C++ source of the nvcc corpus
			t.Errorf("table entry %v->%v cites no snippet: %q", l.From, l.To, l.Source)
		}
	}
	if !shown[[2]sass.Class{sass.ClassALU, sass.ClassGuard}] || lat.Guard != 13 {
		t.Errorf("guard latency %d without evidence", lat.Guard)
	}
}

// TestLongStallNvdisasm checks sm86.md's claim that stalls 12..15 need the
// yield flag: nvdisasm 11.8 refuses them without it and accepts 0..11.
func TestLongStallNvdisasm(t *testing.T) {
	nvdisasm := cudatools.Require(t, "nvdisasm")
	dir := t.TempDir()
	for _, tc := range []struct {
		stall uint8
		yield bool
	}{{11, false}, {12, false}, {15, false}, {15, true}} {
		{
			stall, yield := tc.stall, tc.yield
			i := sass.New("NOP", "").Stall(stall)
			i.Ctrl.Yield = yield
			b, err := sass.Encode(sass.Program{i})
			if err != nil {
				t.Fatal(err)
			}
			f := filepath.Join(dir, fmt.Sprintf("w%d%v.bin", stall, yield))
			if err := os.WriteFile(f, b, 0o644); err != nil {
				t.Fatal(err)
			}
			err = runQuiet(nvdisasm, "-b", "SM86", "-hex", f)
			refused := err != nil
			want := stall > 11 && !yield
			if refused != want {
				t.Errorf("stall %d yield %v: nvdisasm refused=%v, want %v", stall, yield, refused, want)
			}
			flagged := len(Check(sass.Program{i}, Options{})) > 0
			if flagged != want {
				t.Errorf("stall %d yield %v: checker flagged=%v, want %v", stall, yield, flagged, want)
			}
		}
	}
}

// mmaLoopListing is the committed listing of ptxas's mma_loop main loop
// (testdata/sched/mma_loop.sass), so the cycle-model figure is computed
// without the tools; TestMMALoopListing keeps it equal to ptxas's output.
var mmaLoopListing = corpus.Path("sched", "mma_loop.sass")

func TestMMALoopListing(t *testing.T) {
	p, ok := ptxasKernels(t, "mma_loop.ptx")["mma_loop"]
	if !ok {
		t.Fatal("mma_loop outside the model")
	}
	body, start, err := LoopBody(p)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("# ptxas 11.8 -arch=sm_86 testdata/sched/mma_loop.ptx: the main loop,\n")
	fmt.Fprintf(&b, "# instructions %d..%d of the kernel, relocated to address 0 (go test -update-sched rewrites it)\n",
		start, start+len(body)-1)
	reloc := append(sass.Program(nil), body...)
	b.WriteString(reloc.Listing())
	if *updateSched {
		if err := os.WriteFile(mmaLoopListing, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(mmaLoopListing)
	if err != nil {
		t.Fatal(err)
	}
	if string(have) != b.String() {
		t.Errorf("%s differs from ptxas's output (go test -run TestMMALoopListing -update-sched):\n%s", mmaLoopListing, b.String())
	}
}

// sortedClasses prints a mix deterministically.
func sortedMix(m map[sass.Op]int) string {
	var ks []string
	for k, v := range m {
		ks = append(ks, fmt.Sprintf("%s:%d", k, v))
	}
	sort.Strings(ks)
	return strings.Join(ks, " ")
}

// runQuiet runs a tool and returns its error (a non-zero exit).
func runQuiet(tool string, args ...string) error {
	return exec.Command(tool, args...).Run()
}
