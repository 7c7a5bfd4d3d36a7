package gen

import (
	"testing"

	"github.com/tcrt-go/tcrt/internal/sasscheck"
	"github.com/tcrt-go/tcrt/kernels/sm86attn"
	"github.com/tcrt-go/tcrt/tile"
)

// TestPtxasComparison compiles the equivalent mma.sync FlashAttention-2
// PTX loop (testdata/attn_ref.ptx: the interior key block at head
// dimension 128) with ptxas for sm_86, decodes its loop and runs it
// through the same cycle model as the hand-scheduled unmasked loop; the
// hand-scheduled loop must take fewer cycles a block.
func TestPtxasComparison(t *testing.T) {
	body, at, ref := sasscheck.PtxasLoop(t, "../testdata/attn_ref.ptx", "attn_ref")
	p, err := Generate(sm86attn.Config{In: tile.F16, Out: tile.F32, HeadDim: 128})
	if err != nil {
		t.Fatal(err)
	}
	cy := loopCycles(t, p, p.Loop)
	if ref.HMMA != 128 {
		t.Errorf("ptxas loop has %g HMMA, want 128", ref.HMMA)
	}
	if cy.Period >= ref.Period {
		t.Errorf("hand-scheduled loop %.1f cycles a block, ptxas %.1f", cy.Period, ref.Period)
	}
	t.Logf("ptxas loop at %#x..%#x: %d instructions", 16*at, 16*(at+len(body)-1), len(body))
	t.Logf("\n| kernel (interior block, d=128) | loop body | mix | cycles/block | tensor-pipe share |\n|---|---|---|---|---|\n"+
		"| hand-scheduled (sm86attn) | %d | %s | %.1f | %.1f%% |\n| ptxas 11.8 -arch=sm_86 | %d | %s | %.1f | %.1f%% |",
		len(p.Insts[p.Loop[0]:p.Loop[1]+1]), sasscheck.MixTable(cy.MixByOp), cy.Period, 100*cy.TensorShare,
		len(body), sasscheck.MixTable(ref.MixByOp), ref.Period, 100*ref.TensorShare)
}
