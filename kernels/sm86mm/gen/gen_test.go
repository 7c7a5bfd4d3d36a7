package gen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/kernels/sm86mm"
	"github.com/tcrt-go/tcrt/tile"
)

func TestGenerateEncodes(t *testing.T) {
	var rows []string
	for _, c := range sm86mm.Variants() {
		p, err := Generate(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Code(); err != nil {
			t.Fatal(err)
		}
		if p.Loop[1] >= p.EpiLoop[0] || p.EpiLoop[1] >= len(p.Insts) {
			t.Fatalf("%s: loops %v %v", c.Name(), p.Loop, p.EpiLoop)
		}
		rows = append(rows, fmt.Sprintf("| %s | %d | %d | %d | %d | %d | %d |", c.Name(), len(p.Insts), p.Loop[0],
			p.Loop[1]-p.Loop[0]+1, p.EpiLoop[0]-p.Loop[1]-1, p.EpiLoop[1]-p.EpiLoop[0]+1, len(p.Insts)-p.EpiLoop[1]-1))
		if testing.Verbose() && c == (sm86mm.Config{In: tile.F16, Out: tile.F32}) {
			t.Logf("%d instructions, loop %d..%d\n%s", len(p.Insts), p.Loop[0], p.Loop[1], p.Insts.Listing())
		}
	}
	t.Logf("\n| variant | total | setup + prologue | main loop | epilogue set-up | epilogue loop | EXIT + padding |\n|---|---|---|---|---|---|---|\n%s", strings.Join(rows, "\n"))
}
