//go:build !race

package ops_test

import (
	"context"
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
	// max is the allocations per call: the runtime and ops make none (the
	// Launch, the argument structs and the fallback's argument forms are
	// pooled); what remains is the fallback kernels' own (a matmul's job
	// and its worker closure, attention's work list, scratch and
	// goroutines, a norm's or sampler's row split, RoPE's frequency table),
	// plus one slice in AttentionKVCache (the cache's lengths, which the
	// kernel reads after the cache's lock is released) and, for RoPE
	// without a Positions buffer, the host position table.
	max  float64
	call func() error
}

// allocCases builds the calls of a decode step on small random tensors
// (CPU backend): a direct matmul and a planned one, attention, a KV-cache
// append and attention over it, the norms, RoPE, the gated activation and
// sampling.
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
	return []allocCase{
		{"MatMul", 3, func() error { return ops.MatMul(ctx, rt, d, a, bm, nil) }},
		{"Call.Run", 2, func() error { return planned.Run(ctx) }},
		{"Attention", 13, func() error { return ops.Attention(ctx, rt, o, q, k, v, nil) }},
		{"KVCache.Append", 0, func() error { return cache.Append(ctx, nk, nv, nil) }},
		{"AttentionKVCache", 14, func() error { return ops.AttentionKVCache(ctx, rt, do, dq, cache, nil) }},
		{"RMSNorm", 2, func() error { return ops.RMSNorm(ctx, rt, y, x, w, &norm) }},
		{"AddRMSNorm", 2, func() error { return ops.AddRMSNorm(ctx, rt, x, res, w, &norm) }},
		{"RoPE", 4, func() error { return ops.RoPE(ctx, rt, qr, kr, &rope) }},
		{"GatedActivate", 1, func() error { return ops.GatedActivate(ctx, rt, act, gu, ops.SiLU, nil) }},
		{"Sample", 3, func() error { return ops.Sample(ctx, rt, tok, logits, &sample) }},
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
		n := testing.AllocsPerRun(50, func() {
			if err := c.call(); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		})
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
