package ops_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// The light ops' tests: every op's fast kernel against its reference
// (forced by name) on the same random inputs, over element types, odd
// hidden sizes, row counts 0, 1 and more, and row strides. Outputs are
// poisoned with NaN bytes first; padding between rows must stay poisoned.

var lightOpNames = []string{engine.OpRMSNorm.Name(), engine.OpAddRMSNorm.Name(), engine.OpLayerNorm.Name(), engine.OpRoPE.Name(),
	engine.OpActivation.Name(), engine.OpElementwise.Name(), engine.OpSoftmax.Name(), engine.OpSample.Name(), engine.OpPool.Name(), engine.OpL2Normalize.Name()}

// lightPair is a runtime with the fast kernels and one with the references
// forced (on the backend TCRT_BACKEND names, so TCRT_BACKEND=sim runs both
// through the host fallback).
type lightPair struct{ fast, ref *runtime.Runtime }

func openLight(t testing.TB) lightPair {
	t.Helper()
	var refs []string
	for _, op := range lightOpNames {
		refs = append(refs, "cpu."+op+".reference")
	}
	fast, err := runtime.Open(runtime.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fast.Close() })
	ref, err := runtime.Open(runtime.Options{Kernel: strings.Join(refs, ",")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Close() })
	return lightPair{fast: fast, ref: ref}
}

var lightTypes = []tile.DType{tile.F32, tile.F16, tile.BF16}

func lightHidden() []int {
	if testing.Short() {
		return []int{1, 7, 129, 1000}
	}
	return []int{1, 7, 129, 1000, 4096 + 3}
}

// view is a strided row view on a fresh buffer: rows × cols, row stride
// ld, filled with fill(i) for element i of the buffer (gaps too, so they
// must stay as they are), or NaN bytes when fill is nil.
func view(t testing.TB, rt *runtime.Runtime, d tile.DType, rows, cols, ld int, fill func(int) float32) ops.Matrix {
	t.Helper()
	n := max(1, rows*ld)
	b, err := rt.Alloc(d, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	raw := make([]byte, b.Bytes())
	if fill == nil {
		for i := range raw {
			raw[i] = 0xff
		}
	} else {
		v := make([]float32, n)
		for i := range v {
			v[i] = fill(i)
		}
		engine.EncodeFloat32(d, raw, v)
	}
	if err := b.Write(context.Background(), 0, raw); err != nil {
		t.Fatal(err)
	}
	return ops.Matrix{Buf: b, Rows: rows, Cols: cols, LD: ld}
}

func vecBuf(t testing.TB, rt *runtime.Runtime, d tile.DType, v []float32) *runtime.Buffer {
	t.Helper()
	b, err := rt.Alloc(d, len(v))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if err := b.WriteFloat32(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	return b
}

func floats(t testing.TB, b *runtime.Buffer) []float32 {
	t.Helper()
	v := make([]float32, b.Len())
	if err := b.ReadFloat32(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	return v
}

// typeEps is the unit roundoff of d.
func typeEps(d tile.DType) float64 {
	switch d {
	case tile.F16:
		return 0x1p-11
	case tile.BF16:
		return 0x1p-8
	}
	return 0x1p-24
}

// closeTo compares got with want element by element: NaN must match NaN
// (the poisoned gaps, NaN results), others within atol + rtol·|want|.
func closeTo(t testing.TB, what string, got, want []float32, rtol, atol float64) {
	t.Helper()
	bad := 0
	for i := range want {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(w) || math.IsNaN(g) {
			if math.IsNaN(w) != math.IsNaN(g) {
				if bad++; bad <= 3 {
					t.Errorf("%s: element %d is %v, want %v", what, i, g, w)
				}
			}
			continue
		}
		if g == w {
			continue
		}
		if math.Abs(g-w) > atol+rtol*math.Abs(w) || math.IsInf(g, 0) || math.IsInf(w, 0) {
			if bad++; bad <= 3 {
				t.Errorf("%s: element %d is %v, want %v (|diff| %.3g > %.3g)", what, i, g, w, math.Abs(g-w), atol+rtol*math.Abs(w))
			}
		}
	}
}

// lightCase builds an op on a runtime from a seeded generator (so both
// runtimes get the same inputs) and returns the call and its outputs.
type lightCase struct {
	name string
	// The bound on fast vs reference: |fast − ref| ≤ atol·(1 + max|ref|)
	// + rtol·(u + 2^−22 + 2^−24·√cols)·|ref|, u the output type's unit
	// roundoff (float32 sums of a row grow as √cols on random data).
	rtol, atol float64
	build      func(t testing.TB, rt *runtime.Runtime, rng *rand.Rand, d tile.DType, rows, cols, ld int) (func() error, []*runtime.Buffer)
}

func normal(rng *rand.Rand, scale float64) func(int) float32 {
	return func(int) float32 { return float32(rng.NormFloat64() * scale) }
}

func lightCases() []lightCase {
	return []lightCase{
		{name: "rmsnorm", rtol: 2, atol: 1e-5, build: func(t testing.TB, rt *runtime.Runtime, rng *rand.Rand, d tile.DType, rows, cols, ld int) (func() error, []*runtime.Buffer) {
			x := view(t, rt, d, rows, cols, ld, normal(rng, 3))
			y := view(t, rt, d, rows, cols, ld+1, nil)
			w := vecBuf(t, rt, tile.BF16, randVec(rng, cols))
			o := ops.DefaultRMSNormOptions()
			o.Gemma = cols%2 == 1
			return func() error { return ops.RMSNorm(context.Background(), rt, y, x, w, &o) }, []*runtime.Buffer{y.Buf}
		}},
		{name: "rmsnorm/inplace", rtol: 2, atol: 1e-5, build: func(t testing.TB, rt *runtime.Runtime, rng *rand.Rand, d tile.DType, rows, cols, ld int) (func() error, []*runtime.Buffer) {
			x := view(t, rt, d, rows, cols, ld, normal(rng, 3))
			w := vecBuf(t, rt, d, randVec(rng, cols))
			return func() error { return ops.RMSNorm(context.Background(), rt, x, x, w, nil) }, []*runtime.Buffer{x.Buf}
		}},
		{name: "add_rmsnorm", rtol: 2, atol: 1e-5, build: func(t testing.TB, rt *runtime.Runtime, rng *rand.Rand, d tile.DType, rows, cols, ld int) (func() error, []*runtime.Buffer) {
			x := view(t, rt, d, rows, cols, ld, normal(rng, 1))
			res := view(t, rt, d, rows, cols, cols, normal(rng, 4))
			w := vecBuf(t, rt, tile.F32, randVec(rng, cols))
			o := &ops.RMSNormOptions{Eps: 1e-5}
			return func() error { return ops.AddRMSNorm(context.Background(), rt, x, res, w, o) }, []*runtime.Buffer{x.Buf, res.Buf}
		}},
		{name: "layernorm", rtol: 2, atol: 1e-5, build: func(t testing.TB, rt *runtime.Runtime, rng *rand.Rand, d tile.DType, rows, cols, ld int) (func() error, []*runtime.Buffer) {
			x := view(t, rt, d, rows, cols, ld, func(int) float32 { return float32(2 + rng.NormFloat64()) })
			y := view(t, rt, tile.F32, rows, cols, cols, nil)
			w, b := vecBuf(t, rt, d, randVec(rng, cols)), vecBuf(t, rt, tile.F16, randVec(rng, cols))
			return func() error { return ops.LayerNorm(context.Background(), rt, y, x, w, b, nil) }, []*runtime.Buffer{y.Buf}
		}},
		{name: "layernorm/residual", rtol: 2, atol: 1e-5, build: func(t testing.TB, rt *runtime.Runtime, rng *rand.Rand, d tile.DType, rows, cols, ld int) (func() error, []*runtime.Buffer) {
			x := view(t, rt, d, rows, cols, ld, normal(rng, 1))
			res := view(t, rt, d, rows, cols, ld, normal(rng, 1))
			y := view(t, rt, d, rows, cols, cols, nil)
			o := &ops.LayerNormOptions{Eps: 1e-12, Residual: &res}
			return func() error { return ops.LayerNorm(context.Background(), rt, y, x, nil, nil, o) }, []*runtime.Buffer{y.Buf, res.Buf}
		}},
		{name: "silu_mul/concat", rtol: 2, atol: 1e-6, build: func(t testing.TB, rt *runtime.Runtime, rng *rand.Rand, d tile.DType, rows, cols, ld int) (func() error, []*runtime.Buffer) {
			x := view(t, rt, d, rows, 2*cols, 2*ld, normal(rng, 3))
			y := view(t, rt, d, rows, cols, ld, nil)
			return func() error { return ops.GatedActivate(context.Background(), rt, y, x, ops.SiLU, nil) }, []*runtime.Buffer{y.Buf}
		}},
		{name: "gelu_mul/gate", rtol: 2, atol: 1e-6, build: func(t testing.TB, rt *runtime.Runtime, rng *rand.Rand, d tile.DType, rows, cols, ld int) (func() error, []*runtime.Buffer) {
			a := view(t, rt, d, rows, cols, ld, normal(rng, 3))
			b := view(t, rt, tile.F32, rows, cols, cols, normal(rng, 1))
			return func() error {
				return ops.GatedActivate(context.Background(), rt, b, a, ops.GELU, &ops.ActivateOptions{Gate: &b})
			}, []*runtime.Buffer{b.Buf}
		}},
		{name: "gelu_tanh_mul", rtol: 2, atol: 1e-6, build: func(t testing.TB, rt *runtime.Runtime, rng *rand.Rand, d tile.DType, rows, cols, ld int) (func() error, []*runtime.Buffer) {
			x := view(t, rt, d, rows, 2*cols, 2*cols, normal(rng, 3))
			y := view(t, rt, d, rows, cols, cols, nil)
			return func() error { return ops.GatedActivate(context.Background(), rt, y, x, ops.GELUTanh, nil) }, []*runtime.Buffer{y.Buf}
		}},
		{name: "act", rtol: 2, atol: 1e-6, build: func(t testing.TB, rt *runtime.Runtime, rng *rand.Rand, d tile.DType, rows, cols, ld int) (func() error, []*runtime.Buffer) {
			var outs []*runtime.Buffer
			var calls []func() error
			for _, f := range []ops.ActFunc{ops.SiLU, ops.GELU, ops.GELUTanh} {
				x := view(t, rt, d, rows, cols, ld, normal(rng, 4))
				y := view(t, rt, d, rows, cols, ld, nil)
				calls = append(calls, func() error { return ops.Activate(context.Background(), rt, y, x, f, nil) })
				outs = append(outs, y.Buf)
			}
			x := view(t, rt, d, rows, cols, ld, normal(rng, 4))
			calls = append(calls, func() error { return ops.Activate(context.Background(), rt, x, x, ops.SiLU, nil) })
			outs = append(outs, x.Buf)
			return func() error {
				for _, c := range calls {
					if err := c(); err != nil {
						return err
					}
				}
				return nil
			}, outs
		}},
		{name: "elementwise", rtol: 0, atol: 0, build: func(t testing.TB, rt *runtime.Runtime, rng *rand.Rand, d tile.DType, rows, cols, ld int) (func() error, []*runtime.Buffer) {
			x := view(t, rt, d, rows, cols, ld, normal(rng, 2))
			z := view(t, rt, tile.F32, rows, cols, cols, normal(rng, 2))
			bias := view(t, rt, tile.BF16, 1, cols, cols, normal(rng, 2))
			y1 := view(t, rt, d, rows, cols, ld, nil)
			y2 := view(t, rt, tile.F16, rows, cols, cols, nil)
			return func() error {
				ctx := context.Background()
				if err := ops.Elementwise(ctx, rt, ops.EltAdd, y1, x, bias, 0, nil); err != nil { // broadcast
					return err
				}
				if err := ops.Elementwise(ctx, rt, ops.EltMul, y2, x, z, 0, nil); err != nil {
					return err
				}
				if err := ops.Elementwise(ctx, rt, ops.EltAdd, z, x, z, 0, nil); err != nil { // in place over z
					return err
				}
				return ops.Elementwise(ctx, rt, ops.EltScale, x, x, ops.Matrix{}, 0.37, nil)
			}, []*runtime.Buffer{y1.Buf, y2.Buf, z.Buf, x.Buf}
		}},
		{name: "softmax", rtol: 8, atol: 1e-7, build: func(t testing.TB, rt *runtime.Runtime, rng *rand.Rand, d tile.DType, rows, cols, ld int) (func() error, []*runtime.Buffer) {
			x := view(t, rt, d, rows, cols, ld, normal(rng, 4))
			y := view(t, rt, tile.F32, rows, cols, cols, nil)
			x2 := view(t, rt, d, rows, cols, ld, normal(rng, 4))
			o := &ops.SoftmaxOptions{Temperature: 0.7, Log: true}
			return func() error {
				if err := ops.Softmax(context.Background(), rt, y, x, nil); err != nil {
					return err
				}
				return ops.Softmax(context.Background(), rt, x2, x2, o)
			}, []*runtime.Buffer{y.Buf, x2.Buf}
		}},
		{name: "l2normalize", rtol: 2, atol: 1e-7, build: func(t testing.TB, rt *runtime.Runtime, rng *rand.Rand, d tile.DType, rows, cols, ld int) (func() error, []*runtime.Buffer) {
			x := view(t, rt, d, rows, cols, ld, normal(rng, 4))
			return func() error { return ops.L2Normalize(context.Background(), rt, x, x, nil) }, []*runtime.Buffer{x.Buf}
		}},
		{name: "pool", rtol: 4, atol: 1e-5, build: func(t testing.TB, rt *runtime.Runtime, rng *rand.Rand, d tile.DType, rows, cols, ld int) (func() error, []*runtime.Buffer) {
			var lens []int
			for left := rows; left > 0; {
				l := min(left, 1+rng.IntN(9))
				lens = append(lens, l)
				left -= l
			}
			x := view(t, rt, d, rows, cols, ld, normal(rng, 1))
			var outs []*runtime.Buffer
			var calls []func() error
			for _, m := range []ops.PoolMode{ops.PoolMean, ops.PoolCLS, ops.PoolLast} {
				y := view(t, rt, d, len(lens), cols, cols, nil)
				o := &ops.PoolOptions{Mode: m, Lengths: lens, Normalize: m != ops.PoolCLS}
				calls = append(calls, func() error { return ops.Pool(context.Background(), rt, y, x, o) })
				outs = append(outs, y.Buf)
			}
			return func() error {
				for _, c := range calls {
					if err := c(); err != nil {
						return err
					}
				}
				return nil
			}, outs
		}},
	}
}

func randVec(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(0.5 + rng.Float64())
	}
	return v
}

func TestLightOpsMatchReference(t *testing.T) {
	p := openLight(t)
	rows := []int{0, 1, 5, 37}
	for _, c := range lightCases() {
		for _, d := range lightTypes {
			for _, cols := range lightHidden() {
				for _, r := range rows {
					ld := cols
					if r%2 == 1 {
						ld = cols + 3 // a row stride
					}
					name := fmt.Sprintf("%s/%v/%dx%d/ld%d", c.name, d, r, cols, ld)
					seed := uint64(len(name))*7919 + uint64(cols*131+r)
					runF, outF := c.build(t, p.fast, rand.New(rand.NewPCG(seed, 1)), d, r, cols, ld)
					runR, outR := c.build(t, p.ref, rand.New(rand.NewPCG(seed, 1)), d, r, cols, ld)
					if err := runF(); err != nil {
						t.Fatalf("%s: fast: %v", name, err)
					}
					if err := runR(); err != nil {
						t.Fatalf("%s: reference: %v", name, err)
					}
					for i := range outF {
						want := floats(t, outR[i])
						scale := 0.0
						for _, v := range want {
							if !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
								scale = max(scale, math.Abs(float64(v)))
							}
						}
						od := outF[i].DType()
						closeTo(t, fmt.Sprintf("%s: output %d", name, i), floats(t, outF[i]), want,
							c.rtol*(typeEps(od)+0x1p-22+0x1p-24*math.Sqrt(float64(cols))), c.atol*scale+c.atol)
					}
				}
			}
		}
	}
}

// TestLightOpsExplain: each op's Explain picks the fast CPU kernel (on a
// GPU device, TCRT_BACKEND=sim, the PTX kernel where there is one, else the
// CPU kernel's host-fallback wrapper), and the forced reference when asked
// for.
func TestLightOpsExplain(t *testing.T) {
	p := openLight(t)
	rng := rand.New(rand.NewPCG(3, 3))
	for _, c := range []struct {
		rt   *runtime.Runtime
		kind string
	}{{p.fast, "fast"}, {p.ref, "reference"}} {
		rt := c.rt
		x := view(t, rt, tile.F32, 3, 8, 8, normal(rng, 1))
		y := view(t, rt, tile.F32, 3, 8, 8, nil)
		x2 := view(t, rt, tile.F32, 3, 16, 16, normal(rng, 1))
		out := vecBufS32(t, rt, []int32{0, 0, 0})
		ro := ops.DefaultRoPEOptions()
		ro.HeadDim = 4
		// On a GPU the fast runtime takes the PTX kernels where they exist
		// (these calls are inside what they support).
		ptxKernel := map[string]string{engine.OpRMSNorm.Name(): "ptx.rmsnorm", engine.OpAddRMSNorm.Name(): "ptx.add_rmsnorm",
			engine.OpRoPE.Name(): "ptx.rope", engine.OpActivation.Name(): "ptx.silu_mul", engine.OpLayerNorm.Name(): "ptx.layernorm",
			engine.OpSoftmax.Name(): "ptx.softmax", engine.OpL2Normalize.Name(): "ptx.l2normalize", engine.OpElementwise.Name(): "ptx.elementwise",
			engine.OpPool.Name(): "ptx.pool"}
		want := func(op string) string {
			name := "cpu." + op + "." + c.kind
			if rt.Device().GPU() {
				if k, ok := ptxKernel[op]; ok && c.kind == "fast" {
					return k
				}
				name = "host." + name
			}
			return name
		}
		for op, e := range map[string]func() (ops.Explanation, error){
			engine.OpRMSNorm.Name():    func() (ops.Explanation, error) { return ops.ExplainRMSNorm(rt, y, x, nil, nil) },
			engine.OpAddRMSNorm.Name(): func() (ops.Explanation, error) { return ops.ExplainAddRMSNorm(rt, y, x, nil, nil) },
			engine.OpLayerNorm.Name():  func() (ops.Explanation, error) { return ops.ExplainLayerNorm(rt, y, x, nil, nil, nil) },
			engine.OpRoPE.Name():       func() (ops.Explanation, error) { return ops.ExplainRoPE(rt, x, ops.Matrix{}, &ro) },
			engine.OpActivation.Name(): func() (ops.Explanation, error) { return ops.ExplainGatedActivate(rt, y, x2, ops.SiLU, nil) },
			engine.OpElementwise.Name(): func() (ops.Explanation, error) {
				return ops.ExplainElementwise(rt, ops.EltAdd, y, x, x, 0, nil)
			},
			engine.OpSoftmax.Name(): func() (ops.Explanation, error) { return ops.ExplainSoftmax(rt, y, x, nil) },
			engine.OpSample.Name():  func() (ops.Explanation, error) { return ops.ExplainSample(rt, out, x, nil) },
			engine.OpPool.Name(): func() (ops.Explanation, error) {
				return ops.ExplainPool(rt, ops.Matrix{Buf: y.Buf, Rows: 1, Cols: 8}, x, nil)
			},
			engine.OpL2Normalize.Name(): func() (ops.Explanation, error) { return ops.ExplainL2Normalize(rt, y, x, nil) },
		} {
			ex, err := e()
			chosen(t, ex, err, want(op))
		}
	}
}
