package gen

import (
	"testing"

	"github.com/tcrt-go/tcrt/internal/sasscheck"
	"github.com/tcrt-go/tcrt/kernels/sm86mm"
	"github.com/tcrt-go/tcrt/sass/sched"
	"github.com/tcrt-go/tcrt/tile"
)

// TestPtxasComparison compiles the equivalent mma.sync PTX kernel with
// ptxas for sm_86, decodes its main loop and runs it through the same
// cycle model.
func TestPtxasComparison(t *testing.T) {
	body, at, ref := sasscheck.PtxasLoop(t, "../testdata/mma_ref.ptx", "mma_ref")
	p, err := Generate(sm86mm.Config{In: tile.F16, Out: tile.F32})
	if err != nil {
		t.Fatal(err)
	}
	ours := p.Insts[p.Loop[0] : p.Loop[1]+1]
	cy, err := sched.CycleModel(ours, sched.CycleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref.HMMA != 32 {
		t.Errorf("ptxas loop has %g HMMA, want 32", ref.HMMA)
	}
	t.Logf("ptxas loop at %#x..%#x: %d instructions", 16*at, 16*(at+len(body)-1), len(body))
	t.Logf("\n| kernel | loop body | mix | cycles/iteration | tensor-pipe share |\n|---|---|---|---|---|\n"+
		"| hand-scheduled (sm86mm) | %d | %s | %.1f | %.1f%% |\n| ptxas 11.8 -arch=sm_86 | %d | %s | %.1f | %.1f%% |",
		len(ours), sasscheck.MixTable(cy.MixByOp), cy.Period, 100*cy.TensorShare,
		len(body), sasscheck.MixTable(ref.MixByOp), ref.Period, 100*ref.TensorShare)
}
