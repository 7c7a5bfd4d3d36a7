package mma

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/sass"
)

// The cycle model (sass.CycleModel) of ptxas's sm_86 main loops: the loop
// of each kernel with the most HMMAs, its period and the tensor pipe's
// share of it, next to the hand-scheduled SASS kernels' figures (their
// packages' TestCycleModel; README and docs/ptx-mma.md quote both).

// standIn returns word w as the decoder reads it, or, for a word outside
// the model (the uniform datapath's today), a stand-in with the word's
// control bits: S2R (variable latency) when it sets a scoreboard, NOP
// otherwise. The cycle model reads only control bits and latency classes,
// so the stand-ins keep the loop's schedule.
func standIn(w []byte) (sass.Inst, bool) {
	if i, err := sass.DecodeWord(w); err == nil {
		return i, false
	}
	ctl := binary.LittleEndian.Uint64(w[8:]) >> 41 // bits 105..127
	ctl &^= 15 << 17                               // the reuse flags (no operands to reuse)
	sb := ctl >> 5 & 63                            // write (3 bits) and read (3 bits) scoreboards; 7 is none
	si := sass.New("NOP", "")
	if sb&7 != 7 || sb>>3 != 7 {
		si = sass.New("S2R", "", sass.R(0), sass.SR(sass.SRTidX))
	}
	b, err := sass.Encode(sass.Program{si})
	if err != nil {
		panic(err)
	}
	hi := binary.LittleEndian.Uint64(b[8:])&(1<<41-1) | ctl<<41
	binary.LittleEndian.PutUint64(b[8:], hi)
	i, err := sass.DecodeWord(b)
	if err != nil {
		panic(err)
	}
	return i, true
}

// mainLoop decodes a kernel (with stand-ins) and returns its loop with the
// most HMMA (the smallest on a tie), where it starts and how many
// stand-ins it holds.
func mainLoop(t *testing.T, code []byte) (sass.Program, int, int) {
	t.Helper()
	var p sass.Program
	var sub []bool
	for k := 0; k+16 <= len(code); k += 16 {
		i, s := standIn(code[k : k+16])
		p = append(p, i)
		sub = append(sub, s)
	}
	best, bestN, at := sass.Program(nil), 0, -1
	for k, i := range p {
		if i.Op != "BRA" || len(i.Args) != 1 || i.Args[0].Kind != sass.KTarget {
			continue
		}
		s := k + 1 + int(i.Args[0].Imm/16)
		if s > k || s < 0 || (s == k && !i.Guard.Set) {
			continue
		}
		n := 0
		for _, j := range p[s : k+1] {
			if j.Op == "HMMA" {
				n++
			}
		}
		if n > bestN || n == bestN && n > 0 && k+1-s < len(best) {
			best, bestN, at = p[s:k+1], n, s
		}
	}
	if best == nil {
		t.Fatal("no loop with HMMA")
	}
	subs := 0
	for k := at; k < at+len(best); k++ {
		if sub[k] {
			subs++
		}
	}
	return best, at, subs
}

// TestCycleModelPTXAS reports the tensor share of every matmul and
// attention kernel's main loop and checks each matmul loop holds one
// BK-deep step of the warp tile's m16n8k16 MMAs (or an unrolled multiple).
func TestCycleModelPTXAS(t *testing.T) {
	c, err := sass.ReadCubin(cubinSM86)
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]Config{}
	for _, v := range Variants() {
		cfg[v.Name()] = v
	}
	var rows []string
	for _, ki := range c.Kernels {
		name := ki.Kernel.Name
		if strings.Contains(name, "combine") {
			continue // no MMA
		}
		body, at, subs := mainLoop(t, ki.Kernel.Code)
		cy, err := sass.CycleModel(body, sass.CycleOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if v, ok := cfg[name]; ok {
			g := v.Tile.Geometry()
			per := (g.TM / g.WarpsM / 16) * (g.TN / g.WarpsN / 8) * (BK / 16)
			if n := int(cy.HMMA); n%per != 0 || n == 0 {
				t.Errorf("%s: main loop has %g HMMA, want a multiple of %d", name, cy.HMMA, per)
			}
		}
		rows = append(rows, fmt.Sprintf("| %s | %#x | %d | %d | %.1f | %g | %.1f%% |", name, 16*at, len(body), subs, cy.Period, cy.HMMA, 100*cy.TensorShare))
	}
	sort.Strings(rows)
	t.Logf("\n| kernel (ptxas 11.8, sm_86) | loop at | loop body | stand-ins | cycles/iteration | HMMA/iteration | tensor-pipe share |\n|---|---|---|---|---|---|---|\n%s", strings.Join(rows, "\n"))
}
