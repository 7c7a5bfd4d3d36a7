package mma

import (
	"encoding/binary"
	"fmt"
	"os"
	"sort"
	"testing"

	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/sass/sim"
)

// probe lists, per kernel of the embedded sm_86 cubin, the words the sass
// package cannot decode and the decoded instructions its simulator cannot
// run, grouped by opcode (the word's low 12 bits) or by reason.
type probe struct {
	words, undecoded, unsimulated int
	byCode                        map[uint64][]string // opcode -> "kernel word hex"
	byReason                      map[string]int
}

func probeCubin(t *testing.T, b []byte) probe {
	t.Helper()
	c, err := cubin.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	pr := probe{byCode: map[uint64][]string{}, byReason: map[string]int{}}
	for _, ki := range c.Kernels {
		code := ki.Kernel.Code
		p := make(sass.Program, 0, len(code)/16)
		ok := true
		for k := 0; k+16 <= len(code); k += 16 {
			pr.words++
			i, err := sass.DecodeWord(code[k : k+16])
			if err != nil {
				ok = false
				pr.undecoded++
				lo := binary.LittleEndian.Uint64(code[k:])
				hi := binary.LittleEndian.Uint64(code[k+8:])
				pr.byCode[lo&0xfff] = append(pr.byCode[lo&0xfff], fmt.Sprintf("%s #%d %016x %016x", ki.Kernel.Name, k/16, lo, hi))
				continue
			}
			p = append(p, i)
		}
		if !ok {
			continue
		}
		s, err := sim.New(p)
		if err != nil {
			t.Fatalf("%s: %v", ki.Kernel.Name, err)
		}
		for _, e := range s.Unsupported() {
			pr.unsimulated++
			pr.byReason[e.Error()]++
		}
	}
	return pr
}

// probeBaseline is what the sass package still lacks for the sm_86 build:
// undecoded words, and decoded instructions not simulated in the kernels
// that decode fully. Both are zero: every word decodes and every
// instruction is simulated, so the simulated device runs the module.
var probeBaseline = struct{ undecoded, unsimulated int }{0, 0}

// TestSimProbeSM86 checks the words of ptxas's sm_86 build decode and its
// instructions are simulated (the simulated device runs the module only
// then), against probeBaseline. With -v it lists what is missing;
// MMA_PROBE_OUT=file writes every undecoded word there (for nvdisasm).
func TestSimProbeSM86(t *testing.T) {
	pr := probeCubin(t, cubinSM86)
	codes := make([]uint64, 0, len(pr.byCode))
	for c := range pr.byCode {
		codes = append(codes, c)
	}
	sort.Slice(codes, func(a, b int) bool { return codes[a] < codes[b] })
	var all []string
	for _, c := range codes {
		ws := pr.byCode[c]
		t.Logf("opcode %03x: %d undecoded, e.g. %s", c, len(ws), ws[0])
		all = append(all, ws...)
	}
	reasons := make([]string, 0, len(pr.byReason))
	for r := range pr.byReason {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		t.Logf("not simulated (%d): %s", pr.byReason[r], r)
	}
	if f := os.Getenv("MMA_PROBE_OUT"); f != "" {
		out := ""
		for _, w := range all {
			out += w + "\n"
		}
		if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("sm_86 cubin: %d of %d words undecoded, %d decoded instructions not simulated", pr.undecoded, pr.words, pr.unsimulated)
	if pr.undecoded > probeBaseline.undecoded || pr.unsimulated > probeBaseline.unsimulated {
		t.Errorf("sm_86 cubin: %d undecoded words, %d instructions not simulated; the baseline is %d, %d",
			pr.undecoded, pr.unsimulated, probeBaseline.undecoded, probeBaseline.unsimulated)
	}
}
