package mma

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/sass/sched"
)

// The cycle model (sched.CycleModel) of ptxas's sm_86 main loops: the loop
// of each kernel with the most HMMAs, its period and the tensor pipe's
// share of it, next to the hand-scheduled SASS kernels' figures (their
// packages' TestCycleModel; README and docs/ptx-mma.md quote both).

// mainLoop decodes a kernel and returns its loop with the most HMMA (the
// smallest on a tie) and where it starts.
func mainLoop(t *testing.T, code []byte) (sass.Program, int) {
	t.Helper()
	p, err := sass.Decode(code)
	if err != nil {
		t.Fatal(err) // TestSimProbeSM86: every word decodes
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
	return best, at
}

// TestCycleModelPTXAS reports the tensor share of every matmul and
// attention kernel's main loop and checks each matmul loop holds one
// BK-deep step of the warp tile's m16n8k16 MMAs (or an unrolled multiple).
func TestCycleModelPTXAS(t *testing.T) {
	c, err := cubin.Read(cubinSM86)
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
		body, at := mainLoop(t, ki.Kernel.Code)
		cy, err := sched.CycleModel(body, sched.CycleOptions{})
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
		rows = append(rows, fmt.Sprintf("| %s | %#x | %d | %.1f | %g | %.1f%% |", name, 16*at, len(body), cy.Period, cy.HMMA, 100*cy.TensorShare))
	}
	sort.Strings(rows)
	t.Logf("\n| kernel (ptxas 11.8, sm_86) | loop at | loop body | cycles/iteration | HMMA/iteration | tensor-pipe share |\n|---|---|---|---|---|---|\n%s", strings.Join(rows, "\n"))
}
