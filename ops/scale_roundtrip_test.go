package ops_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// forEachBackend runs fn on the CPU and on the simulated sm_86 device, or,
// when TCRT_BACKEND is set, on that backend only: the tests that state a
// rule every backend must keep (validation, lifetimes, non-finite values).
func forEachBackend(t *testing.T, fn func(t *testing.T, rt *runtime.Runtime)) {
	kinds := []runtime.BackendKind{runtime.BackendCPU, runtime.BackendSim}
	if v := os.Getenv("TCRT_BACKEND"); v != "" {
		kinds = []runtime.BackendKind{runtime.BackendKind(v)}
	}
	for _, k := range kinds {
		t.Run(string(k), func(t *testing.T) {
			rt, err := runtime.Open(runtime.Options{Backend: k})
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			fn(t, rt)
		})
	}
}

// TestScaleRoundTrip: whatever the input, Quantize writes inverse scales
// that Dequantize accepts, and they and the scales are valid (normal and
// finite): inputs at the bottom of float32 (all 1e-40, 1e-44 or
// 1.1754942e-38) for every float granularity, a given scale of
// MaxFloat32 or 1e-45, and the delayed-scaling recipe after an amax of
// 1e-45.
func TestScaleRoundTrip(t *testing.T) {
	forEachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		ctx := context.Background()
		const rows, cols = 3, 130
		x := alloc(t, rt, tile.F32, rows, cols)
		q := alloc(t, rt, tile.E4M3, rows, cols)
		y := alloc(t, rt, tile.F32, rows, cols)
		check := func(name string, g ops.Granularity, inv *runtime.Buffer) {
			t.Helper()
			vals := make([]float32, inv.Len())
			if err := inv.ReadFloat32(ctx, vals); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if !tile.ValidScale(v) || !tile.ValidScale(1/v) {
					t.Errorf("%s: ScaleInv[%d] = %v: it or its inverse is not a valid scale", name, i, v)
				}
			}
			poison(t, y)
			if err := ops.Dequantize(ctx, rt, y, q, &ops.DequantizeOptions{Granularity: g, ScaleInv: inv}); err != nil {
				t.Errorf("%s: Dequantize refuses what Quantize wrote: %v", name, err)
			}
		}
		for _, v := range []float32{1e-40, 1e-44, 1.1754942e-38} {
			in := make([]float32, rows*cols)
			for i := range in {
				in[i] = v
				if i%7 == 3 {
					in[i] = -v
				}
			}
			if err := x.WriteFloat32(ctx, in); err != nil {
				t.Fatal(err)
			}
			for _, g := range []ops.Granularity{ops.PerTensor, ops.PerRow, ops.Block1x128, ops.PerColumn, ops.Block128x128} {
				name := fmt.Sprintf("x=%v/%v", v, g)
				inv := alloc(t, rt, tile.F32, ops.ScaleShape(g, x.Shape())...)
				poison(t, inv)
				if err := ops.Quantize(ctx, rt, q, x, &ops.QuantizeOptions{Granularity: g, ScaleInv: inv}); err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				check(name, g, inv)
				inv.Close()
			}
		}
		inv := alloc(t, rt, tile.F32, 1)
		for _, s := range []float32{math.MaxFloat32, 1e-45, 0x1p127} {
			poison(t, inv)
			if err := ops.Quantize(ctx, rt, q, x, &ops.QuantizeOptions{Source: ops.ScaleGiven, Scale: s, ScaleInv: inv}); err != nil {
				t.Errorf("given scale %v: %v", s, err)
				continue
			}
			check(fmt.Sprintf("given %v", s), ops.PerTensor, inv)
		}
		d, err := ops.NewDelayedScaling(tile.E4M3, 4, ops.AmaxMax, 0)
		if err != nil {
			t.Fatal(err)
		}
		if s := d.Update(1e-45); !tile.ValidScale(s) || !tile.ValidScale(d.ScaleInv()) {
			t.Fatalf("DelayedScaling.Update(1e-45) = %v (inverse %v): not valid scales", s, d.ScaleInv())
		}
		poison(t, inv)
		if err := ops.Quantize(ctx, rt, q, x, &ops.QuantizeOptions{Source: ops.ScaleGiven, Scale: d.Scale(), ScaleInv: inv}); err != nil {
			t.Fatalf("delayed scale %v: %v", d.Scale(), err)
		}
		check("delayed", ops.PerTensor, inv)
	})
}
