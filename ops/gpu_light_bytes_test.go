package ops_test

import (
	"context"
	"testing"

	"github.com/tcrt-go/tcrt/bench"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// TestGPULightBytesPerWarpInstruction states each PTX light kernel's bytes
// per warp instruction on the simulated sm_86: the bytes the op must move
// (bench.LightProblem.Bytes) over the warp instructions the simulator
// issued for one run, at 8 rows of 4096 bf16 (RoPE: 8 tokens of 32 heads
// of 128, q and k). The figures are logged (docs/ops.md quotes them); the
// floors, 80% of what the kernels do now, catch a kernel that starts to
// spend more instructions per byte, or a run that is not the PTX kernel's.
func TestGPULightBytesPerWarpInstruction(t *testing.T) {
	rt, err := runtime.Open(runtime.Options{Backend: runtime.BackendSim, SimArch: 86})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx := context.Background()
	for _, c := range []struct {
		p      bench.LightProblem
		kernel string
		floor  float64
	}{
		{bench.LightProblem{Op: "rmsnorm"}, "ptx.rmsnorm", 0.8},
		{bench.LightProblem{Op: "add_rmsnorm"}, "ptx.add_rmsnorm", 1.05},
		{bench.LightProblem{Op: "silu_mul"}, "ptx.silu_mul", 1.2},
		{bench.LightProblem{Op: "rope", HeadDim: 128}, "ptx.rope", 0.75},
		{bench.LightProblem{Op: "layernorm"}, "ptx.layernorm", 0.48},
		{bench.LightProblem{Op: "softmax"}, "ptx.softmax", 0.72},
	} {
		p := c.p
		p.DType, p.Rows, p.Cols = tile.BF16, 8, 4096
		s, err := bench.NewLightSetup(ctx, rt, p, 1)
		if err != nil {
			t.Fatal(err)
		}
		e, err := s.Explain(rt)
		chosen(t, e, err, c.kernel)
		before, ok := rt.DeviceCounters()
		if !ok {
			t.Fatal("the simulated device counts no instructions")
		}
		if err := s.Run(ctx); err != nil {
			t.Fatal(err)
		}
		after, _ := rt.DeviceCounters()
		s.Close()
		wi := after.WarpInstructions - before.WarpInstructions
		if wi <= 0 {
			t.Fatalf("%s: %d warp instructions", c.kernel, wi)
		}
		bpi := p.Bytes() / float64(wi)
		t.Logf("%s %v: %.0f bytes, %d warp instructions, %.2f bytes per warp instruction", c.kernel, p, p.Bytes(), wi, bpi)
		if bpi < c.floor {
			t.Errorf("%s: %.2f bytes per warp instruction, below %.2f", c.kernel, bpi, c.floor)
		}
	}
}
