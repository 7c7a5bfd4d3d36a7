package ops_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// TestGPULightOps: the PTX light kernels (RMSNorm, AddRMSNorm, SiLU·mul)
// on the simulated devices against the CPU reference kernels on the same
// inputs, over element types, odd sizes, strides and 0/1 rows. The bound
// is the CPU fast path's plus 4 ulp of float32 for the approximate
// rsqrt/exp/reciprocal.
func TestGPULightOps(t *testing.T) {
	ref := openLight(t).ref
	forEachGPU(t, func(t *testing.T, rt *runtime.Runtime) {
		for _, c := range lightCases()[:6] { // rmsnorm, in place, add_rmsnorm, layernorm×2 (host), silu_mul
			for _, d := range lightTypes {
				for _, cols := range []int{1, 7, 129, 1000} {
					for _, r := range []int{0, 1, 3} {
						ld := cols + r%2*3
						name := fmt.Sprintf("%s/%v/%dx%d", c.name, d, r, cols)
						seed := uint64(cols*7 + r)
						runG, outG := c.build(t, rt, rand.New(rand.NewPCG(seed, 9)), d, r, cols, ld)
						runR, outR := c.build(t, ref, rand.New(rand.NewPCG(seed, 9)), d, r, cols, ld)
						if err := runG(); err != nil {
							t.Fatalf("%s: gpu: %v", name, err)
						}
						if err := runR(); err != nil {
							t.Fatalf("%s: reference: %v", name, err)
						}
						for i := range outG {
							want := floats(t, outR[i])
							scale := 0.0
							for _, v := range want {
								if !math.IsNaN(float64(v)) {
									scale = max(scale, math.Abs(float64(v)))
								}
							}
							od := outG[i].DType()
							closeTo(t, fmt.Sprintf("%s: output %d", name, i), floats(t, outG[i]), want,
								c.rtol*(typeEps(od)+0x1p-20+0x1p-24*math.Sqrt(float64(cols))), c.atol*scale+c.atol)
						}
					}
				}
			}
		}
		// The PTX kernels are the ones chosen.
		x := view(t, rt, tile.BF16, 2, 8, 8, normal(rand.New(rand.NewPCG(1, 1)), 1))
		y := view(t, rt, tile.F32, 2, 8, 8, nil)
		x2 := view(t, rt, tile.F16, 2, 16, 16, normal(rand.New(rand.NewPCG(1, 1)), 1))
		e, err := ops.ExplainRMSNorm(rt, y, x, nil, nil)
		chosen(t, e, err, "ptx.rmsnorm")
		e, err = ops.ExplainAddRMSNorm(rt, y, x, nil, nil)
		chosen(t, e, err, "ptx.add_rmsnorm")
		e, err = ops.ExplainGatedActivate(rt, y, x2, ops.SiLU, nil)
		chosen(t, e, err, "ptx.silu_mul")
		e, err = ops.ExplainGatedActivate(rt, y, x2, ops.GELU, nil)
		chosen(t, e, err, "host.cpu.activation.fast")
		_ = context.Background()
	})
}

// TestGPURoPE: the PTX rotary kernel on the simulated devices against the
// CPU reference, bit for bit (the host's cos/sin table, each product and
// sum rounded on its own), for NeoX and GPT-J layouts, partial rotary
// dimensions, in and out of place, 0 and more tokens, offsets and
// per-sequence offsets; a device position buffer takes the host fallback.
func TestGPURoPE(t *testing.T) {
	ref := openLight(t).ref
	forEachGPU(t, func(t *testing.T, rt *runtime.Runtime) {
		for _, d := range lightTypes {
			for _, hd := range []int{2, 6, 64} {
				for _, tokens := range []int{0, 1, 7} {
					for ci := range 8 {
						rot := hd
						if ci%2 == 1 && hd > 2 {
							rot = hd / 2 &^ 1
						}
						way := 1 + ci%2 // offsets or per-sequence offsets
						inter, oop, sc := ci%4 >= 2, ci >= 4, ropeScalings[(ci+hd)%len(ropeScalings)]
						name := fmt.Sprintf("%v/%dx3x%d/rot%d/inter=%v/oop=%v/way%d", d, tokens, hd, rot, inter, oop, way)
						seed := uint64(hd*100 + tokens*10 + ci)
						runG, outG := ropeBuild(t, rt, rand.New(rand.NewPCG(seed, 3)), d, tokens, hd, rot, way, inter, oop, sc)
						runR, outR := ropeBuild(t, ref, rand.New(rand.NewPCG(seed, 3)), d, tokens, hd, rot, way, inter, oop, sc)
						if err := runG(); err != nil {
							t.Fatalf("%s: gpu: %v", name, err)
						}
						if err := runR(); err != nil {
							t.Fatalf("%s: reference: %v", name, err)
						}
						for i := range outG {
							g, w := rawBytes(t, outG[i]), rawBytes(t, outR[i])
							if string(g) != string(w) {
								t.Errorf("%s: output %d differs from the CPU reference's bytes", name, i)
							}
						}
					}
				}
			}
		}
		q := view(t, rt, tile.F32, 2, 8, 8, normal(rand.New(rand.NewPCG(1, 1)), 1))
		o := ops.DefaultRoPEOptions()
		o.HeadDim = 4
		e, err := ops.ExplainRoPE(rt, q, ops.Matrix{}, &o)
		chosen(t, e, err, "ptx.rope")
		o.Positions = vecBufS32(t, rt, []int32{3, 4})
		e, err = ops.ExplainRoPE(rt, q, ops.Matrix{}, &o)
		chosen(t, e, err, "host.cpu.rope.fast")
	})
}
