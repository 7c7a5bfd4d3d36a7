package gen

import (
	"strings"
	"testing"
)

// TestMemoryEstimates prints the bytes-in-flight table (docs/sass-memory.md
// holds a copy) and checks the kernels that must saturate an A10 do.
func TestMemoryEstimates(t *testing.T) {
	es, err := MemoryEstimates(86)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != len(streamKernels) {
		t.Fatalf("%d estimates for %d streaming kernels", len(es), len(streamKernels))
	}
	t.Logf("\n%s", MemoryTable(es))
	for _, e := range es {
		if e.IssueNeed > 4 {
			t.Errorf("%s: needs %.2f memory instructions a cycle per SM, more than sm_86 issues", e.Kernel, e.IssueNeed)
		}
		if e.Period <= 0 || e.GlobalOps == 0 || e.ThreadsPerSM == 0 {
			t.Errorf("%s: degenerate figures %+v", e.Kernel, e)
		}
		if (strings.Contains(e.Kernel, "dequant") || strings.Contains(e.Kernel, "gather")) && e.InFlight < InFlightTarget {
			t.Errorf("%s: %.0f bytes in flight per SM, below the A10's %.0f", e.Kernel, e.InFlight, InFlightTarget)
		}
	}
}
