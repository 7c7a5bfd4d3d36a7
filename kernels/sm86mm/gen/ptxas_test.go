package gen

import (
	"github.com/tcrt-go/tcrt/kernels/sm86mm"
	"os"
	"path/filepath"
	"testing"

	"github.com/tcrt-go/tcrt/internal/cudatools"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/sass/sched"
)

// TestPtxasComparison compiles the equivalent mma.sync PTX kernel with
// ptxas for sm_86, decodes its main loop and runs it through the same
// cycle model.
func TestPtxasComparison(t *testing.T) {
	ptxas := cudatools.Require(t, "ptxas")
	dir := t.TempDir()
	cub := filepath.Join(dir, "ref.cubin")
	cudatools.Run(t, ptxas, "-arch=sm_86", "../testdata/mma_ref.ptx", "-o", cub)
	b, err := os.ReadFile(cub)
	if err != nil {
		t.Fatal(err)
	}
	cu, err := cubin.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	text := cu.Section(".text.mma_ref")
	if text == nil {
		t.Fatal("no .text.mma_ref")
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
	p, err := Generate(sm86mm.Config{})
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
		len(ours), mixTable(cy.MixByOp), cy.Period, 100*cy.TensorShare,
		len(body), mixTable(ref.MixByOp), ref.Period, 100*ref.TensorShare)
}
