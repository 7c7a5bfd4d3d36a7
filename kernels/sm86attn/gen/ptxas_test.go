package gen

import (
	"github.com/tcrt-go/tcrt/kernels/sm86attn"
	"os"
	"path/filepath"
	"testing"

	"github.com/tcrt-go/tcrt/internal/cudatools"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/sass/sched"
)

// TestPtxasComparison compiles the equivalent mma.sync FlashAttention-2
// PTX loop (testdata/attn_ref.ptx: the interior key block at head
// dimension 128) with ptxas for sm_86, decodes its loop and runs it
// through the same cycle model as the hand-scheduled unmasked loop; the
// hand-scheduled loop must take fewer cycles a block.
func TestPtxasComparison(t *testing.T) {
	ptxas := cudatools.Require(t, "ptxas")
	dir := t.TempDir()
	cub := filepath.Join(dir, "ref.cubin")
	cudatools.Run(t, ptxas, "-arch=sm_86", "../testdata/attn_ref.ptx", "-o", cub)
	b, err := os.ReadFile(cub)
	if err != nil {
		t.Fatal(err)
	}
	cu, err := cubin.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	text := cu.Section(".text.attn_ref")
	if text == nil {
		t.Fatal("no .text.attn_ref")
	}
	prog, err := sass.Decode(text.Data)
	if err != nil {
		t.Fatal(err) // every word ptxas emits here is in the model
	}
	body, at, err := sched.LoopBody(prog)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := sched.CycleModel(body, sched.CycleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Generate(sm86attn.Config{HeadDim: 128})
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
		len(p.Insts[p.Loop[0]:p.Loop[1]+1]), mixTable(cy.MixByOp), cy.Period, 100*cy.TensorShare,
		len(body), mixTable(ref.MixByOp), ref.Period, 100*ref.TensorShare)
}
