package gen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/internal/sasscheck"
	"github.com/tcrt-go/tcrt/kernels/sm86attn"
	"github.com/tcrt-go/tcrt/sass/sched"
	"github.com/tcrt-go/tcrt/tile"
)

// loopCycles runs the cycle model on the loop [first, BRA] of p.
func loopCycles(t *testing.T, p *Program, l [2]int) *sched.Cycles {
	t.Helper()
	body := p.Insts[l[0] : l[1]+1]
	if body[len(body)-1].Op != "BRA" {
		t.Fatalf("loop %v does not end in a BRA", l)
	}
	cy, err := sched.CycleModel(body, sched.CycleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cy
}

// TestCycleModel reports the tensor-pipe share of the unmasked main loop
// (an interior key block) and of the masked loop (the causal diagonal,
// window edges, the key tail) under the sass cycle model, and requires at
// least 85% for the unmasked loop at head dimension 128 (without the
// soft-cap, whose 64 extra FMUL/MUFU.TANH a block sit on the critical path,
// and the contiguous layout: the paged loop is reported).
func TestCycleModel(t *testing.T) {
	var rows []string
	for _, c := range []sm86attn.Config{{In: tile.F16, Out: tile.F32, HeadDim: 64}, {In: tile.F16, Out: tile.F32, HeadDim: 128}, {In: tile.BF16, Out: tile.F32, HeadDim: 128}, {In: tile.F16, Out: tile.F32, HeadDim: 128, SoftCap: true}, {In: tile.F16, Out: tile.F32, HeadDim: 64, Paged: true}, {In: tile.F16, Out: tile.F32, HeadDim: 128, Paged: true}, {In: tile.F16, Out: tile.F32, HeadDim: 256}, {In: tile.F16, Out: tile.F32, HeadDim: 256, SoftCap: true}, {In: tile.F16, Out: tile.F32, HeadDim: 256, Paged: true}, {In: tile.F16, Out: tile.F32, HeadDim: 64, Decode: true}, {In: tile.F16, Out: tile.F32, HeadDim: 128, Decode: true}, {In: tile.F16, Out: tile.F32, HeadDim: 128, Decode: true, Paged: true}, {In: tile.F16, Out: tile.F32, HeadDim: 256, Decode: true}} {
		p, err := Generate(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []struct {
			n string
			l [2]int
		}{{"interior", p.Loop}, {"masked (diagonal)", p.MaskLoop}} {
			cy := loopCycles(t, p, m.l)
			rows = append(rows, fmt.Sprintf("| %s | %s | %d | %.1f | %g | %.1f%% |", c.Name(), m.n, m.l[1]-m.l[0]+1, cy.Period, cy.HMMA, 100*cy.TensorShare))
			if m.n == "interior" && c.HeadDim == 128 && !c.SoftCap && !c.Paged && !c.Decode && cy.TensorShare < 0.85 {
				t.Errorf("%s: interior tensor-pipe share %.1f%% < 85%%", c.Name(), 100*cy.TensorShare)
			}
			if c == (sm86attn.Config{In: tile.F16, Out: tile.F32, HeadDim: 128}) && m.n == "interior" {
				t.Logf("mix: %s", sasscheck.MixTable(cy.MixByOp))
				var w []string
				for k, n := range cy.Waited {
					if n > 2 {
						w = append(w, fmt.Sprintf("%d(%s)+%d", k, p.Insts[m.l[0]+k].Op, n))
					}
				}
				t.Logf("waits: %s", strings.Join(w, " "))
			}
		}
	}
	t.Logf("\n| kernel | block | loop instructions | cycles/block | HMMA/block | tensor-pipe share |\n|---|---|---|---|---|---|\n%s", strings.Join(rows, "\n"))
}

// TestDecodeRowCost compares, under the cycle model, the decode cost of
// the 64-row kernel with the 16-row decode variant that sm86attn.Select picks when
// a CTA has at most 16 rows: warp-cycles (the modelled cycles of a
// block's loop times the CTA's warps) per key per useful row, for
// nq·G = 8 useful rows (one query, a GQA group of 8) on contiguous and
// paged caches, interior (unmasked) blocks. The 16-row variant must cost
// less per useful row.
func TestDecodeRowCost(t *testing.T) {
	const useful = 8
	var rows []string
	for _, d := range []int{64, 128, 256} {
		for _, pg := range []bool{false, true} {
			var cost [2]float64
			for k, dec := range []bool{false, true} {
				c := sm86attn.Config{In: tile.F16, Out: tile.F32, HeadDim: d, Paged: pg, Decode: dec}
				p, err := Generate(c)
				if err != nil {
					t.Fatal(err)
				}
				cy := loopCycles(t, p, p.Loop)
				warps := c.CTAThreads() / 32
				cost[k] = cy.Period * float64(warps) / float64(c.KeyBlock()) / useful
				rows = append(rows, fmt.Sprintf("| %s | %d | %d | %.1f | %.1f%% | %.1f |", c.Name(), warps, c.KeyBlock(), cy.Period, 100*cy.TensorShare, cost[k]))
			}
			if cost[1] >= cost[0] {
				t.Errorf("d%d paged=%v: 16-row decode costs %.1f warp-cycles a key a useful row, the 64-row kernel %.1f", d, pg, cost[1], cost[0])
			}
		}
	}
	t.Logf("\n| kernel | warps | keys/block | cycles/block | tensor-pipe share | warp-cycles / key / useful row (nq·G = 8) |\n|---|---|---|---|---|---|\n%s", strings.Join(rows, "\n"))
}
