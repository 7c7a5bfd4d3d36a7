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

// TestGPULightOps: the PTX light kernels (RMSNorm, AddRMSNorm, SiLU·mul,
// GELU and tanh GELU plain and gated, LayerNorm, softmax, L2
// normalisation, element-wise ops: exact, pooling) on the simulated devices against the CPU reference kernels on
// the same inputs, over element types, odd sizes, strides and 0/1 rows.
// The bound is the CPU fast path's plus a few ulp of float32 for the
// approximate rsqrt/exp/log/reciprocal.
func TestGPULightOps(t *testing.T) {
	ref := openLight(t).ref
	forEachGPU(t, func(t *testing.T, rt *runtime.Runtime) {
		for _, c := range lightCases() { // the PTX kernels' ops, and those on the host fallback
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
		chosen(t, e, err, "ptx.activation")
		e, err = ops.ExplainActivate(rt, y, x, ops.GELUTanh, nil)
		chosen(t, e, err, "ptx.activation")
		e, err = ops.ExplainLayerNorm(rt, y, x, nil, nil, nil)
		chosen(t, e, err, "ptx.layernorm")
		e, err = ops.ExplainSoftmax(rt, y, x, nil)
		chosen(t, e, err, "ptx.softmax")
		e, err = ops.ExplainL2Normalize(rt, y, x, nil)
		chosen(t, e, err, "ptx.l2normalize")
		e, err = ops.ExplainElementwise(rt, ops.EltAdd, y, x, ops.Matrix{Buf: x.Buf, Rows: 1, Cols: 8}, 0, nil)
		chosen(t, e, err, "ptx.elementwise")
		e, err = ops.ExplainPool(rt, ops.Matrix{Buf: y.Buf, Rows: 1, Cols: 8}, x, nil)
		chosen(t, e, err, "ptx.pool")
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

// TestGPUActivationExact: ptx.activation (GELU and tanh GELU, plain and
// gated) writes the CPU fast path's bytes, for every element type in and
// out, on inputs spread over the whole float32 range (±0, subnormals, ±Inf
// and values from 2^−30 to 2^30 in magnitude, as stored in the input type).
func TestGPUActivationExact(t *testing.T) {
	cpu := openLight(t).fast
	forEachGPU(t, func(t *testing.T, rt *runtime.Runtime) {
		const rows, cols = 3, 1000
		vals := func(rng *rand.Rand) func(int) float32 {
			return func(i int) float32 {
				switch i % 97 {
				case 0:
					return 0
				case 1:
					return float32(math.Copysign(0, -1))
				case 2:
					return float32(math.Inf(1))
				case 3:
					return float32(math.Inf(-1))
				case 4:
					return math.Float32frombits(uint32(rng.IntN(1 << 23))) // subnormal
				}
				v := float32(math.Ldexp(1+rng.Float64(), rng.IntN(61)-30))
				if i%3 == 0 {
					v = float32(rng.NormFloat64() * 4)
				}
				if rng.IntN(2) == 0 {
					v = -v
				}
				return v
			}
		}
		for _, f := range []ops.ActFunc{ops.GELU, ops.GELUTanh} {
			for _, din := range lightTypes {
				for _, dout := range lightTypes {
					for _, gated := range []bool{false, true} {
						name := fmt.Sprintf("%v/%v→%v/gated=%v", f, din, dout, gated)
						var outs [2][]float32
						for i, r := range []*runtime.Runtime{rt, cpu} {
							rng := rand.New(rand.NewPCG(uint64(f)*7+uint64(din), uint64(dout)))
							x := view(t, r, din, rows, cols, cols+1, vals(rng))
							y := view(t, r, dout, rows, cols, cols, nil)
							var err error
							if gated {
								g := view(t, r, din, rows, cols, cols, normal(rng, 2))
								err = ops.GatedActivate(context.Background(), r, y, x, f, &ops.ActivateOptions{Gate: &g})
							} else {
								err = ops.Activate(context.Background(), r, y, x, f, nil)
							}
							if err != nil {
								t.Fatalf("%s: %v", name, err)
							}
							outs[i] = readF32(t, y.Buf)
						}
						// Decoding f16 and bf16 to float32 is exact, so equal
						// bits here are equal stored bits; NaNs (GELU of −Inf,
						// of NaN) may differ in payload.
						n, first := 0, -1
						for i, g := range outs[0] {
							c := outs[1][i]
							if math.Float32bits(g) != math.Float32bits(c) && !(g != g && c != c) {
								if n++; first < 0 {
									first = i
								}
							}
						}
						if n > 0 {
							t.Errorf("%s: %d values differ from the CPU fast path's, the first [%d] %v, CPU %v", name, n, first, outs[0][first], outs[1][first])
						}
					}
				}
			}
		}
	})
}

// TestGPUPoolExact: ptx.pool without normalisation writes the CPU fast
// path's bytes (the mean summed in token order, times 1/l rounded), for
// every mode and element type in and out, over varlen batches.
func TestGPUPoolExact(t *testing.T) {
	cpu := openLight(t).fast
	forEachGPU(t, func(t *testing.T, rt *runtime.Runtime) {
		for _, m := range []ops.PoolMode{ops.PoolMean, ops.PoolCLS, ops.PoolLast} {
			for _, din := range lightTypes {
				for _, dout := range lightTypes {
					lens := []int{1, 7, 33, 2, 129}
					rows, cols := 172, 300
					var outs [2][]byte
					for i, r := range []*runtime.Runtime{rt, cpu} {
						rng := rand.New(rand.NewPCG(uint64(m), uint64(din)*3+uint64(dout)))
						x := view(t, r, din, rows, cols, cols+5, normal(rng, 3))
						y := view(t, r, dout, len(lens), cols, cols, nil)
						if err := ops.Pool(context.Background(), r, y, x, &ops.PoolOptions{Mode: m, Lengths: lens}); err != nil {
							t.Fatal(err)
						}
						outs[i] = rawBytes(t, y.Buf)
					}
					if string(outs[0]) != string(outs[1]) {
						t.Errorf("pool %v %v→%v: the GPU's bytes differ from the CPU fast path's", m, din, dout)
					}
				}
			}
		}
	})
}
