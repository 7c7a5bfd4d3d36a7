package sched

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/sass"
)

// The synthetic loop: an LDSM feeding two HMMAs, the branch waiting for
// both. With the default table (LDSM 29, HMMA 33) and a 16-cycle tensor
// pipe: LDSM at 0 (SB0 released at 29); HMMA at 29 (waits SB0; pipe busy
// until 45, SB1 at 62); HMMA at 45 (its stall allows 37, the pipe 45; SB1
// at 78); BRA at 78 (waits SB1); the next LDSM at 78+5 = 83.
const cycleLoop = `
[B------:R-:W0:-:S04] LDSM.16.M88.4 R24, [R3] ;
[B0-----:R-:W1:-:S08] HMMA.16816.F32 R16, R24, R28, R16 ;
[B------:R-:W1:-:S08] HMMA.16816.F32 R4, R24, R30, R4 ;
[B-1----:R-:W-:Y:S05] @P0 BRA 0x0 ;
`

func TestCycleModelSynthetic(t *testing.T) {
	body := mustParse(t, cycleLoop)
	if fs := Check(body, Options{Loop: true}); len(fs) != 0 {
		t.Fatalf("the synthetic loop is not clean:\n%s", findingsText(fs))
	}
	c, err := CycleModel(body, CycleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantIssue := []int{0, 29, 45, 78}
	wantWait := []int{0, 25, 8, 25}
	for k := range body {
		if c.Issue[k] != wantIssue[k] || c.Waited[k] != wantWait[k] {
			t.Errorf("instruction %d: issue %d waited %d, want %d %d", k, c.Issue[k], c.Waited[k], wantIssue[k], wantWait[k])
		}
	}
	if c.Period != 83 || c.HMMA != 2 || math.Abs(c.TensorShare-32.0/83) > 1e-12 {
		t.Errorf("got %v, want period 83, 2 HMMA, share 32/83", c)
	}
	if c.MixByClass[sass.ClassHMMA] != 2 || c.MixByClass[sass.ClassShared] != 1 || c.MixByOp["BRA"] != 1 {
		t.Errorf("mix %v %v", c.MixByClass, c.MixByOp)
	}
	// Without the tensor pipe limit the second HMMA issues at 37, SB1 is
	// released at max(62, 70) and the period is 70+5 = 75.
	c, err = CycleModel(body, CycleOptions{TensorInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if c.Period != 75 || c.Issue[2] != 37 {
		t.Errorf("without the pipe limit: %v, issue %v", c, c.Issue)
	}
}

// TestCycleModelShareCap: back-to-back HMMAs are held to one per 16
// cycles by the pipe, and the share never exceeds 1; an HMMA.1688 counts
// half a slot.
func TestCycleModelShareCap(t *testing.T) {
	body := mustParse(t, `
[B------:R-:W-:-:S01] HMMA.16816.F32 R16, R24, R28, R16 ;
[B------:R-:W-:-:S01] HMMA.1688.F32 R4, R24, R30, R4 ;
[B------:R-:W-:Y:S01] @P0 BRA 0x0 ;
`)
	c, err := CycleModel(body, CycleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Period != 24 || c.HMMA != 1.5 || c.TensorShare != 1 {
		t.Errorf("got %v, want period 24, 1.5 HMMA, share 1", c)
	}
	c, err = CycleModel(body, CycleOptions{TensorInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if c.Period != 3 || c.TensorShare != 1 {
		t.Errorf("without the pipe limit: %v, want period 3, share capped at 1", c)
	}
}

// TestCycleModelPtxasMMA runs the model on ptxas 11.8's main loop of
// testdata/sched/mma_loop.ptx (four independent HMMA.16816.F32 fed by three
// LDSM.x4 per iteration) and prints the figure hand-scheduled kernels are
// compared with.
func TestCycleModelPtxasMMA(t *testing.T) {
	text, err := os.ReadFile(mmaLoopListing)
	if err != nil {
		t.Fatal(err)
	}
	body := mustParse(t, string(text))
	if fs := Check(body, Options{Loop: true}); len(fs) != 0 {
		t.Errorf("ptxas's loop reports:\n%s", findingsText(fs))
	}
	c, err := CycleModel(body, CycleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for k, i := range body {
		fmt.Fprintf(&b, "%4d +%3d %s\n", c.Issue[k], c.Waited[k], i.Listing(int64(16*k)))
	}
	t.Logf("ptxas mma_loop main loop, issue cycle and wait:\n%s%v\nmix %s", b.String(), c, sortedMix(c.MixByOp))
	if c.HMMA != 4 || c.Period != 114 {
		t.Errorf("got %v, want 4 HMMA per 114 cycles", c)
	}
	free, err := CycleModel(body, CycleOptions{TensorInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("without the 16-cycle tensor-pipe limit (ptxas spaces HMMAs 8 apart): %v", free)
}

func TestLoopBody(t *testing.T) {
	p := mustParse(t, `
[B------:R-:W-:-:S04] IADD3 R0, R0, 0x1, RZ ;
[B------:R-:W-:-:S04] FFMA R4, R4, R1, R2 ;
[B------:R-:W-:Y:S13] ISETP.GT.U32.AND P0, PT, R0, 0x1f, PT ;
[B------:R-:W-:-:S05] @!P0 BRA 0x10 ;
[B------:R-:W-:-:S05] EXIT ;
[B------:R-:W-:Y:S00] BRA 0x50 ;
`)
	body, start, err := LoopBody(p)
	if err != nil || start != 1 || len(body) != 3 || body[2].Op != "BRA" {
		t.Errorf("LoopBody: start %d, %d instructions, %v", start, len(body), err)
	}
	if _, _, err := LoopBody(p[:3]); err == nil {
		t.Error("LoopBody found a loop in straight-line code")
	}
}
