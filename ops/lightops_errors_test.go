package ops_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// TestLightOpsBadInput: every rule of the light ops' validation returns a
// typed error naming the argument, and nothing is written.
func TestLightOpsBadInput(t *testing.T) {
	rt := openLight(t).fast
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	const rows, cols = 4, 8
	x := view(t, rt, tile.BF16, rows, cols, cols, normal(rng, 1))
	y := view(t, rt, tile.F32, rows, cols, cols, normal(rng, 1))
	res := view(t, rt, tile.F16, rows, cols, cols, normal(rng, 1))
	big := view(t, rt, tile.F32, rows, 2*cols, 2*cols, normal(rng, 1))
	w := vecBuf(t, rt, tile.F32, randVec(rng, cols))
	wShort := vecBuf(t, rt, tile.F32, randVec(rng, cols-1))
	ints, err := rt.Alloc(tile.S32, rows*cols)
	if err != nil {
		t.Fatal(err)
	}
	defer ints.Close()
	closed := view(t, rt, tile.F32, rows, cols, cols, normal(rng, 1))
	closed.Buf.Close()
	wAsY := ops.Matrix{Buf: w, Rows: 1, Cols: cols}
	pos := vecBufS32(t, rt, []int32{0, 1, 99, 2})
	outTok := vecBufS32(t, rt, []int32{7, 7, 7, 7})
	outF := vecBuf(t, rt, tile.F32, []float32{7, 7, 7, 7})
	// q holds 2 heads of 4; k 1 head.
	q := view(t, rt, tile.F32, rows, cols, cols, normal(rng, 1))
	k := view(t, rt, tile.F32, rows, 4, 4, normal(rng, 1))
	rope := func(mod func(*ops.RoPEOptions)) func() error {
		return func() error {
			o := ops.DefaultRoPEOptions()
			o.HeadDim = 4
			mod(&o)
			return ops.RoPE(ctx, rt, q, k, &o)
		}
	}
	eps := func(e float32) *ops.RMSNormOptions { return &ops.RMSNormOptions{Eps: e} }
	shifted := func(m ops.Matrix, d int) ops.Matrix { m.Offset += d; m.Rows--; return m }
	samp := func(o ops.SampleOptions) func() error {
		return func() error { return ops.Sample(ctx, rt, outTok, y, &o) }
	}
	nan := float32(math.NaN())
	cases := []struct {
		name, arg string
		want      error
		call      func() error
	}{
		{"nil runtime", "rt", ops.ErrArgument, func() error { return ops.RMSNorm(ctx, nil, y, x, w, nil) }},
		{"eps 0", "Eps", ops.ErrArgument, func() error { return ops.RMSNorm(ctx, rt, y, x, w, eps(0)) }},
		{"eps negative", "Eps", ops.ErrArgument, func() error { return ops.RMSNorm(ctx, rt, y, x, w, eps(-1e-6)) }},
		{"eps NaN", "Eps", ops.ErrArgument, func() error { return ops.RMSNorm(ctx, rt, y, x, w, eps(nan)) }},
		{"eps Inf", "Eps", ops.ErrArgument, func() error { return ops.RMSNorm(ctx, rt, y, x, w, eps(float32(math.Inf(1)))) }},
		{"x s32", "x", ops.ErrDType, func() error { return ops.RMSNorm(ctx, rt, y, ops.Matrix{Buf: ints, Rows: rows, Cols: cols}, w, nil) }},
		{"x closed", "x", ops.ErrClosed, func() error { return ops.RMSNorm(ctx, rt, y, closed, w, nil) }},
		{"y columns", "y", ops.ErrShape, func() error { return ops.RMSNorm(ctx, rt, big, x, w, nil) }},
		{"y rows", "y", ops.ErrShape, func() error { return ops.RMSNorm(ctx, rt, shifted(y, 0), x, w, nil) }},
		{"negative rows", "x", ops.ErrShape, func() error { m := x; m.Rows = -1; return ops.RMSNorm(ctx, rt, y, m, w, nil) }},
		{"row stride", "x.LD", ops.ErrShape, func() error { m := x; m.LD = cols - 1; return ops.RMSNorm(ctx, rt, y, m, w, nil) }},
		{"past the end", "x", ops.ErrBounds, func() error { m := x; m.Offset = 1; return ops.RMSNorm(ctx, rt, y, m, w, nil) }},
		{"batch stride", "x", ops.ErrArgument, func() error { m := x; m.BatchStride = 3; return ops.RMSNorm(ctx, rt, y, m, w, nil) }},
		{"weight length", "weight", ops.ErrShape, func() error { return ops.RMSNorm(ctx, rt, y, x, wShort, nil) }},
		{"weight s32", "weight", ops.ErrDType, func() error { return ops.RMSNorm(ctx, rt, y, x, ints, nil) }},
		{"y overlaps x", "y", ops.ErrAlias, func() error { return ops.RMSNorm(ctx, rt, shifted(y, 1), shifted(y, 0), w, nil) }},
		{"weight is y", "weight", ops.ErrAlias, func() error {
			return ops.RMSNorm(ctx, rt, wAsY, ops.Matrix{Buf: x.Buf, Rows: 1, Cols: cols}, w, nil)
		}},
		{"residual overlaps x", "residual", ops.ErrAlias, func() error { return ops.AddRMSNorm(ctx, rt, y, y, w, nil) }},
		{"residual columns", "residual", ops.ErrShape, func() error { return ops.AddRMSNorm(ctx, rt, y, big, w, nil) }},
		{"layernorm eps 0", "Eps", ops.ErrArgument, func() error {
			return ops.LayerNorm(ctx, rt, y, x, w, w, &ops.LayerNormOptions{})
		}},
		{"layernorm bias length", "bias", ops.ErrShape, func() error { return ops.LayerNorm(ctx, rt, y, x, w, wShort, nil) }},
		{"layernorm residual is y", "residual", ops.ErrAlias, func() error {
			return ops.LayerNorm(ctx, rt, y, x, nil, nil, &ops.LayerNormOptions{Eps: 1e-5, Residual: &y})
		}},
		{"rotary odd", "RotaryDim", ops.ErrShape, rope(func(o *ops.RoPEOptions) { o.RotaryDim = 3 })},
		{"rotary > head", "RotaryDim", ops.ErrShape, rope(func(o *ops.RoPEOptions) { o.RotaryDim = 6 })},
		{"head 0", "HeadDim", ops.ErrShape, rope(func(o *ops.RoPEOptions) { o.HeadDim = 0 })},
		{"heads not whole", "q", ops.ErrShape, rope(func(o *ops.RoPEOptions) { o.HeadDim = 3; o.RotaryDim = 2 })},
		{"theta 0", "Theta", ops.ErrArgument, rope(func(o *ops.RoPEOptions) { o.Theta = 0 })},
		{"llama3 factors", "Scaling", ops.ErrArgument, rope(func(o *ops.RoPEOptions) {
			o.Scaling = ops.RoPEScaling{Kind: ops.RoPELlama3, Factor: 8, LowFreqFactor: 4, HighFreqFactor: 1, OriginalMaxPosition: 8192}
		})},
		{"position out of range", "Positions", ops.ErrBounds, rope(func(o *ops.RoPEOptions) { o.Positions, o.MaxPosition = pos, 64 })},
		{"positions s32", "Positions", ops.ErrShape, rope(func(o *ops.RoPEOptions) { o.Positions = w })},
		{"offset out of range", "Offset", ops.ErrBounds, rope(func(o *ops.RoPEOptions) { o.Offset, o.MaxPosition = 62, 64 })},
		{"negative offset", "Offset", ops.ErrBounds, rope(func(o *ops.RoPEOptions) { o.Offset = -1 })},
		{"sequence lengths", "SeqLens", ops.ErrShape, rope(func(o *ops.RoPEOptions) { o.SeqLens, o.SeqOffsets = []int{1, 2}, []int{0, 0} })},
		{"sequence offset", "SeqOffsets", ops.ErrBounds, rope(func(o *ops.RoPEOptions) {
			o.SeqLens, o.SeqOffsets, o.MaxPosition = []int{2, 2}, []int{0, 63}, 64
		})},
		{"two position sources", "Positions", ops.ErrArgument, rope(func(o *ops.RoPEOptions) { o.Positions, o.Offset = pos, 3 })},
		{"KOut inside q", "KOut", ops.ErrAlias, rope(func(o *ops.RoPEOptions) { ko := ops.Matrix{Buf: q.Buf, Rows: rows, Cols: 4}; o.KOut = &ko })},
		{"QOut rows", "QOut", ops.ErrShape, rope(func(o *ops.RoPEOptions) { qo := shifted(y, 0); o.QOut = &qo })},
		{"unknown activation", "f", ops.ErrArgument, func() error { return ops.Activate(ctx, rt, y, y, ops.ActFunc(9), nil) }},
		{"gated columns", "x", ops.ErrShape, func() error { return ops.GatedActivate(ctx, rt, y, y, ops.SiLU, nil) }},
		{"gated y inside x", "y", ops.ErrAlias, func() error {
			return ops.GatedActivate(ctx, rt, ops.Matrix{Buf: big.Buf, Rows: rows, Cols: cols, LD: 2 * cols}, big, ops.SiLU, nil)
		}},
		{"gate rows", "Gate", ops.ErrShape, func() error {
			g := shifted(res, 0)
			return ops.GatedActivate(ctx, rt, y, x, ops.GELU, &ops.ActivateOptions{Gate: &g})
		}},
		{"z rows", "z", ops.ErrShape, func() error { return ops.Elementwise(ctx, rt, ops.EltAdd, y, x, shifted(res, 0), 0, nil) }},
		{"alpha NaN", "alpha", ops.ErrArgument, func() error { return ops.Elementwise(ctx, rt, ops.EltScale, y, x, ops.Matrix{}, nan, nil) }},
		{"in place on a broadcast z", "y", ops.ErrAlias, func() error {
			z := ops.Matrix{Buf: y.Buf, Rows: 1, Cols: cols}
			return ops.Elementwise(ctx, rt, ops.EltMul, y, x, z, 0, nil)
		}},
		{"softmax temperature 0", "Temperature", ops.ErrArgument, func() error {
			return ops.Softmax(ctx, rt, y, x, &ops.SoftmaxOptions{})
		}},
		{"softmax y overlaps x", "y", ops.ErrAlias, func() error { return ops.Softmax(ctx, rt, shifted(y, 1), shifted(y, 0), nil) }},
		{"top_p 0", "TopP", ops.ErrArgument, samp(ops.SampleOptions{Temperature: 1, TopP: 0})},
		{"top_p above 1", "TopP", ops.ErrArgument, samp(ops.SampleOptions{Temperature: 1, TopP: 1.01})},
		{"top_p NaN", "TopP", ops.ErrArgument, samp(ops.SampleOptions{Temperature: 1, TopP: nan})},
		{"top_k negative", "TopK", ops.ErrArgument, samp(ops.SampleOptions{Temperature: 1, TopP: 1, TopK: -1})},
		{"min_p above 1", "MinP", ops.ErrArgument, samp(ops.SampleOptions{Temperature: 1, TopP: 1, MinP: 2})},
		{"temperature negative", "Temperature", ops.ErrArgument, samp(ops.SampleOptions{Temperature: -1, TopP: 1})},
		{"sample out f32", "out", ops.ErrDType, func() error { return ops.Sample(ctx, rt, outF, y, nil) }},
		{"sample out short", "out", ops.ErrShape, func() error {
			return ops.Sample(ctx, rt, outTok, ops.Matrix{Buf: big.Buf, Rows: 2 * rows, Cols: cols}, nil)
		}},
		{"pool lengths sum", "Lengths", ops.ErrShape, func() error {
			return ops.Pool(ctx, rt, shifted(y, 0), x, &ops.PoolOptions{Lengths: []int{1, 1}})
		}},
		{"pool empty sequence", "Lengths", ops.ErrShape, func() error {
			return ops.Pool(ctx, rt, shifted(y, 0), x, &ops.PoolOptions{Lengths: []int{2, 0, 2}})
		}},
		{"pool y rows", "y", ops.ErrShape, func() error { return ops.Pool(ctx, rt, y, x, &ops.PoolOptions{Lengths: []int{2, 2}}) }},
		{"pool mode", "Mode", ops.ErrArgument, func() error { return ops.Pool(ctx, rt, y, x, &ops.PoolOptions{Mode: 7}) }},
		{"l2 eps negative", "Eps", ops.ErrArgument, func() error { return ops.L2Normalize(ctx, rt, y, x, &ops.L2NormalizeOptions{Eps: -1}) }},
	}
	for _, c := range cases {
		s := snap(t, x.Buf, y.Buf, res.Buf, big.Buf, w, q.Buf, k.Buf, outTok, outF, pos)
		wantFault(t, c.name, c.call(), c.arg, c.want)
		s.unchanged(t, c.name)
	}
}

func vecBufS32(t testing.TB, rt *runtime.Runtime, v []int32) *runtime.Buffer {
	t.Helper()
	b, err := rt.Alloc(tile.S32, len(v))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if err := runtime.WriteRaw(context.Background(), b, v); err != nil {
		t.Fatal(err)
	}
	return b
}
