package sim

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

// simGaps lists, for one cubin, the words the simulator cannot run: words
// outside the instruction model ("undecoded OP") and decoded words its
// decode refuses (the reason), counted by reason.
func simGaps(t testing.TB, b []byte) (words int, gaps map[string]int, where map[string]string) {
	gaps, where = map[string]int{}, map[string]string{}
	for _, s := range corpus.TextSections(t, b) {
		p := make(sass.Program, len(s.Data)/16)
		undecoded := map[int]bool{}
		for k := range p {
			words++
			i, err := sass.DecodeWord(s.Data[16*k : 16*k+16])
			if err != nil {
				undecoded[k] = true
				p[k] = sass.Inst{Op: "NOP"}
				key := fmt.Sprintf("undecoded opcode %#x", (uint64(s.Data[16*k])|uint64(s.Data[16*k+1])<<8)&0xfff)
				gaps[key]++
				where[key] = fmt.Sprintf("%s+%#x", s.Name, 16*k)
				continue
			}
			p[k] = i
		}
		sim, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		for k, err := range sim.Unsupported() {
			key := err.Error()
			gaps[key]++
			where[key] = fmt.Sprintf("%s+%#x %s", s.Name, 16*k, p[k].Text(int64(16*k)))
		}
	}
	return words, gaps, where
}

var simGapsFile = filepath.Join(corpus.Dir, "simgaps.txt")

var updateCorpus = flag.Bool("update-corpus", false, "rewrite the simulator's coverage baseline (testdata/ptxas/simgaps.txt)")

// TestSimCoverage counts, in every ptxas-built cubin of the repository,
// the words the simulator cannot run (outside the instruction model, or
// decoded but refused by the simulator's decode), and logs them by reason
// (-v). The project's own PTX modules (kptx_*: kernels/ptx) must run
// completely; the corpus's counts may not exceed the baseline in
// simgaps.txt (-update-corpus rewrites it when they fall).
func TestSimCoverage(t *testing.T) {
	base := map[string]int{}
	if !*updateCorpus {
		b, err := os.ReadFile(simGapsFile)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			var name string
			var words, n int
			if _, err := fmt.Sscanf(l, "%s %d %d", &name, &words, &n); err != nil {
				t.Fatalf("%s: bad line %q", simGapsFile, l)
			}
			base[name] = n
		}
	}
	total, bad := 0, 0
	all := map[string]int{}
	ex := map[string]string{}
	var out strings.Builder
	out.WriteString("# TestSimCoverage baseline: cubin, words, words the simulator cannot run. Counts may only fall;\n")
	out.WriteString("# regenerate with go test ./sass -run TestSimCoverage -update-corpus.\n")
	for _, cb := range corpus.Cubins(t) {
		b, err := os.ReadFile(cb.Path)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(cb.Golden)
		n, gaps, where := simGaps(t, b)
		m := 0
		for k, c := range gaps {
			m += c
			all[k] += c
			ex[k] = name + " " + where[k]
		}
		total += n
		bad += m
		fmt.Fprintf(&out, "%s %d %d\n", name, n, m)
		if strings.HasPrefix(name, "kptx_") && m > 0 {
			t.Errorf("%s: %d words of the project's PTX kernels the simulator cannot run", name, m)
		}
		if b, ok := base[name]; !*updateCorpus && (!ok || m > b) {
			t.Errorf("%s: %d of %d words not simulated, baseline %d", name, m, n, b)
		} else if ok && m < b {
			t.Logf("%s: %d words not simulated, down from %d: run with -update-corpus", name, m, b)
		}
	}
	var keys []string
	for k := range all {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		return all[keys[a]] > all[keys[b]] || all[keys[a]] == all[keys[b]] && keys[a] < keys[b]
	})
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "\n%5d %s\t(%s)", all[k], k, ex[k])
	}
	t.Logf("%d of %d words not simulated:%s", bad, total, sb.String())
	if *updateCorpus {
		if err := os.WriteFile(simGapsFile, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
