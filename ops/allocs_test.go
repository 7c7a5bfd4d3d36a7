//go:build !race

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

// allocCase is one op call whose steady-state heap allocations are
// bounded.
type allocCase struct {
	name string
	// max is the allocations per call: none. The Launch, the argument
	// structs (with the slices they copy: a cache's lengths and block
	// table, RoPE's host positions) and the fallback's argument forms are
	// pooled, and so is the fallback kernels' per-call memory (a matmul's
	// job, attention's work lists and workers, row splits and their
	// scratch; RoPE keeps its frequencies and cos/sin rows in a cache).
	max  float64
	call func() error
}

// allocCases builds the calls of a decode step on small random tensors
// (CPU backend): a direct matmul and a planned one, attention, a KV-cache
// append and attention over it, the norms, RoPE, an element-wise add, the
// gated activation and sampling; and a matmul and a norm that several
// goroutines share.
func allocCases(t *testing.T, rt *runtime.Runtime) []allocCase {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 77))
	buf := func(shape ...int) *runtime.Buffer {
		b := alloc(t, rt, tile.F32, shape...)
		v := make([]float32, b.Len())
		for i := range v {
			v[i] = rng.Float32() - 0.5
		}
		if err := b.WriteFloat32(ctx, v); err != nil {
			t.Fatal(err)
		}
		return b
	}
	const heads, kvHeads, dim, cols = 4, 2, 16, 64
	a, bm, d := ops.MatrixOf(buf(1, 1)), ops.MatrixOf(buf(1, 1)), ops.MatrixOf(buf(1, 1))
	planned, err := ops.MatMulPlan(rt, d, a, bm, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := func(shape ...int) ops.AttnTensor { return ops.AttnTensor{Buf: buf(shape...), Shape: shape} }
	q, k, v, o := at(1, 3, heads, dim), at(1, 5, kvHeads, dim), at(1, 5, kvHeads, dim), at(1, 3, heads, dim)
	cache, err := ops.NewKVCache(rt, ops.KVCacheOptions{DType: tile.F32, Batch: 1, HeadsKV: kvHeads, HeadDim: dim, Capacity: 4096})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.Close() })
	nk, nv := at(1, 1, kvHeads, dim), at(1, 1, kvHeads, dim)
	if err := cache.Append(ctx, nk, nv, nil); err != nil {
		t.Fatal(err)
	}
	dq, do := at(1, 1, heads, dim), at(1, 1, heads, dim)
	x, y, res, w := ops.RowsOf(buf(2, cols)), ops.RowsOf(buf(2, cols)), ops.RowsOf(buf(2, cols)), buf(cols)
	norm := ops.DefaultRMSNormOptions()
	qr, kr := ops.RowsOf(buf(2, heads*dim)), ops.RowsOf(buf(2, kvHeads*dim))
	rope := ops.DefaultRoPEOptions()
	rope.HeadDim = dim
	gu, act := ops.RowsOf(buf(2, 2*cols)), ops.RowsOf(buf(2, cols))
	logits, tok := ops.RowsOf(buf(1, 1000)), alloc(t, rt, tile.S32, 1)
	sample := ops.DefaultSampleOptions()
	sample.TopK = 40
	// Products and row splits big enough to share out among the cores
	// (the helper pool).
	wa, wb, wd := ops.MatrixOf(buf(64, 256)), ops.MatrixOf(buf(256, 256)), ops.MatrixOf(buf(64, 256))
	wx, wy := ops.RowsOf(buf(64, 2048)), ops.RowsOf(buf(64, 2048))
	ww := buf(2048)
	return []allocCase{
		{"MatMul/wide", 0, func() error { return ops.MatMul(ctx, rt, wd, wa, wb, nil) }},
		{"RMSNorm/wide", 0, func() error { return ops.RMSNorm(ctx, rt, wy, wx, ww, &norm) }},
		{"MatMul", 0, func() error { return ops.MatMul(ctx, rt, d, a, bm, nil) }},
		{"Call.Run", 0, func() error { return planned.Run(ctx) }},
		{"Attention", 0, func() error { return ops.Attention(ctx, rt, o, q, k, v, nil) }},
		{"KVCache.Append", 0, func() error { return cache.Append(ctx, nk, nv, nil) }},
		{"AttentionKVCache", 0, func() error { return ops.AttentionKVCache(ctx, rt, do, dq, cache, nil) }},
		{"RMSNorm", 0, func() error { return ops.RMSNorm(ctx, rt, y, x, w, &norm) }},
		{"AddRMSNorm", 0, func() error { return ops.AddRMSNorm(ctx, rt, x, res, w, &norm) }},
		{"RoPE", 0, func() error { return ops.RoPE(ctx, rt, qr, kr, &rope) }},
		{"Elementwise", 0, func() error { return ops.Elementwise(ctx, rt, ops.EltAdd, y, x, res, 1, nil) }},
		{"GatedActivate", 0, func() error { return ops.GatedActivate(ctx, rt, act, gu, ops.SiLU, nil) }},
		{"Sample", 0, func() error { return ops.Sample(ctx, rt, tok, logits, &sample) }},
	}
}

// TestLaunchAllocs: in steady state a call of each decode-step op on the
// CPU backend allocates at most its case's bound (race builds excluded:
// the detector changes allocation counts).
func TestLaunchAllocs(t *testing.T) {
	rt := openCPU(t)
	for _, c := range allocCases(t, rt) {
		if err := c.call(); err != nil { // warm: pools, first-use tables
			t.Fatalf("%s: %v", c.name, err)
		}
		// The least of three counts: a garbage collection during a count
		// empties the pools once, a real per-call allocation shows in all.
		n := math.Inf(1)
		for try := 0; try < 3 && n > c.max; try++ {
			n = min(n, testing.AllocsPerRun(50, func() {
				if err := c.call(); err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
			}))
		}
		t.Logf("%s: %.1f allocations per call", c.name, n)
		if n > c.max {
			t.Errorf("%s: %.1f allocations per call; want at most %v", c.name, n, c.max)
		}
	}
}

// openCPU opens a CPU runtime, closed when t ends.
func openCPU(t *testing.T) *runtime.Runtime {
	rt, err := runtime.Open(runtime.Options{Backend: runtime.BackendCPU})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}
