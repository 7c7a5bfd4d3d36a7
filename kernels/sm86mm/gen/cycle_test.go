package gen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/internal/sasscheck"
	"github.com/tcrt-go/tcrt/kernels/sm86mm"
	"github.com/tcrt-go/tcrt/sass/sched"
	"github.com/tcrt-go/tcrt/tile"
)

// TestCycleModel reports the main loop's tensor-pipe share under the sass
// cycle model and requires at least 90% for the 128x128 tile.
func TestCycleModel(t *testing.T) {
	var rows []string
	cs := variants()
	for _, tl := range []sm86mm.Tile{sm86mm.Tile128x64, sm86mm.Tile64x128} {
		cs = append(cs, sm86mm.Config{Tile: tl, In: tile.F16, Out: tile.F32}, sm86mm.Config{Tile: tl, In: tile.BF16, Out: tile.F32})
	}
	cs = append(cs, sm86mm.Config{In: tile.F16, Out: tile.F32, SplitK: true}, sm86mm.Config{Tile: sm86mm.Tile64x128, In: tile.F16, Out: tile.F32, SplitK: true})
	for _, l := range layouts() {
		for _, tl := range sm86mm.Tiles() {
			cs = append(cs, sm86mm.Config{Tile: tl, In: tile.F16, Out: tile.F32, TransA: l[0], TransB: l[1]})
		}
	}
	for _, c := range cs {
		p, err := Generate(c)
		if err != nil {
			t.Fatal(err)
		}
		// the main loop (sched.LoopBody finds the last loop: the
		// epilogue's); check it is a loop whose BRA closes on its start
		body := p.Insts[p.Loop[0] : p.Loop[1]+1]
		if _, at, err := sched.LoopBody(body); err != nil || at != 0 {
			t.Fatalf("main loop %d..%d is not a loop body: %v (at %d)", p.Loop[0], p.Loop[1], err, at)
		}
		cy, err := sched.CycleModel(body, sched.CycleOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, fmt.Sprintf("| %s | %d | %d | %.1f | %g | %.1f%% |", c.Name(), len(p.Insts), len(body), cy.Period, cy.HMMA, 100*cy.TensorShare))
		if c.Tile == sm86mm.Tile128x128 && cy.TensorShare < 0.90 {
			t.Errorf("%s: tensor-pipe share %.1f%% < 90%%", c.Name(), 100*cy.TensorShare)
		}
		if c.In == tile.F16 && !c.SplitK {
			t.Logf("%s main loop mix: %s", c.Name(), sasscheck.MixTable(cy.MixByOp))
		}
		if c == (sm86mm.Config{In: tile.F16, Out: tile.F32}) {
			t.Logf("main loop mix: %s", sasscheck.MixTable(cy.MixByOp))
			var w []string
			for k, n := range cy.Waited {
				if n > 0 {
					w = append(w, fmt.Sprintf("%d(%s)+%d", k, body[k].Op, n))
				}
			}
			t.Logf("waits: %s", strings.Join(w, " "))
		}
	}
	t.Logf("\n| variant | instructions | loop body | cycles/iteration | HMMA/iteration | tensor-pipe share |\n|---|---|---|---|---|---|\n%s", strings.Join(rows, "\n"))
}
