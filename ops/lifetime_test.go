package ops_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/tcrt-go/tcrt/internal/longtest"
	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// lifetimeOp is one op of the close-while-running stress test: mk
// allocates its buffers (inputs and outputs, filled) and returns them with
// the call (on s, or synchronous when s is nil).
type lifetimeOp struct {
	name string
	mk   func(t *testing.T, rt *runtime.Runtime, rng *rand.Rand) ([]*runtime.Buffer, func(ctx context.Context, s *runtime.Stream) error)
}

func filled(t *testing.T, rt *runtime.Runtime, rng *rand.Rand, d tile.DType, shape ...int) *runtime.Buffer {
	t.Helper()
	b := alloc(t, rt, d, shape...)
	n := b.Len()
	v := make([]float32, n)
	for i := range v {
		v[i] = rng.Float32()*2 - 1
	}
	if err := b.WriteFloat32(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	return b
}

func idxBuf(t *testing.T, rt *runtime.Runtime, rng *rand.Rand, n, rows int) *runtime.Buffer {
	t.Helper()
	v := make([]int32, n)
	for i := range v {
		v[i] = int32(rng.IntN(rows))
	}
	b := alloc(t, rt, tile.S32, n, 1)
	if err := runtime.WriteRaw(context.Background(), b, v); err != nil {
		t.Fatal(err)
	}
	return b
}

// lifetimeOps covers every op family; small is the simulated device's
// size (it runs kernels instruction by instruction).
func lifetimeOps(small bool) []lifetimeOp {
	mm, seq, rows := 256, 16, 4096
	if small {
		mm, seq, rows = 16, 2, 256
	}
	return []lifetimeOp{
		{"matmul", func(t *testing.T, rt *runtime.Runtime, rng *rand.Rand) ([]*runtime.Buffer, func(context.Context, *runtime.Stream) error) {
			a, b, d := filled(t, rt, rng, tile.F32, mm, mm), filled(t, rt, rng, tile.F32, mm, mm), alloc(t, rt, tile.F32, mm, mm)
			return []*runtime.Buffer{a, b, d}, func(ctx context.Context, s *runtime.Stream) error {
				o := ops.DefaultMatMulOptions()
				o.Stream = s
				return ops.MatMul(ctx, rt, ops.MatrixOf(d), ops.MatrixOf(a), ops.MatrixOf(b), &o)
			}
		}},
		{"matmul e4m3", func(t *testing.T, rt *runtime.Runtime, rng *rand.Rand) ([]*runtime.Buffer, func(context.Context, *runtime.Stream) error) {
			a, b, d := randF8(t, rt, rng, mm, mm), randF8(t, rt, rng, mm, mm), alloc(t, rt, tile.F32, mm, mm)
			sa := f32Shaped(t, rt, []float32{0.5}, 1)
			return []*runtime.Buffer{a, b, d, sa}, func(ctx context.Context, s *runtime.Stream) error {
				o := ops.DefaultMatMulOptions()
				o.Stream, o.ScaleA = s, sa
				return ops.MatMul(ctx, rt, ops.MatrixOf(d), ops.MatrixOf(a), ops.MatrixOf(b), &o)
			}
		}},
		{"attention", func(t *testing.T, rt *runtime.Runtime, rng *rand.Rand) ([]*runtime.Buffer, func(context.Context, *runtime.Stream) error) {
			q, k, v := filled(t, rt, rng, tile.F16, 1, seq, 2, 64), filled(t, rt, rng, tile.F16, 1, seq, 2, 64), filled(t, rt, rng, tile.F16, 1, seq, 2, 64)
			o := alloc(t, rt, tile.F16, 1, seq, 2, 64)
			return []*runtime.Buffer{q, k, v, o}, func(ctx context.Context, s *runtime.Stream) error {
				return ops.Attention(ctx, rt, ops.AttnTensorOf(o), ops.AttnTensorOf(q), ops.AttnTensorOf(k), ops.AttnTensorOf(v), &ops.AttentionOptions{Causal: true, Stream: s})
			}
		}},
		{"gather", func(t *testing.T, rt *runtime.Runtime, rng *rand.Rand) ([]*runtime.Buffer, func(context.Context, *runtime.Stream) error) {
			mem := filled(t, rt, rng, tile.F32, rows, 32)
			idx := idxBuf(t, rt, rng, rows/2, rows)
			dst := alloc(t, rt, tile.F32, rows/2, 32)
			return []*runtime.Buffer{mem, idx, dst}, func(ctx context.Context, s *runtime.Stream) error {
				return ops.MGather(ctx, rt, ops.DenseTile(dst), mem, ops.DenseTile(idx), &ops.GatherOptions{Stream: s})
			}
		}},
		{"scatter add", func(t *testing.T, rt *runtime.Runtime, rng *rand.Rand) ([]*runtime.Buffer, func(context.Context, *runtime.Stream) error) {
			mem := filled(t, rt, rng, tile.F32, rows, 32)
			idx := idxBuf(t, rt, rng, rows/2, rows)
			src := filled(t, rt, rng, tile.F32, rows/2, 32)
			return []*runtime.Buffer{mem, idx, src}, func(ctx context.Context, s *runtime.Stream) error {
				return ops.MScatter(ctx, rt, mem, ops.DenseTile(idx), ops.DenseTile(src), &ops.ScatterOptions{Op: ops.ScatterAdd, Stream: s})
			}
		}},
		{"quantize per row", func(t *testing.T, rt *runtime.Runtime, rng *rand.Rand) ([]*runtime.Buffer, func(context.Context, *runtime.Stream) error) {
			x := filled(t, rt, rng, tile.F32, rows/4, 64)
			q := alloc(t, rt, tile.E4M3, rows/4, 64)
			inv, am := alloc(t, rt, tile.F32, rows/4), alloc(t, rt, tile.F32, 1)
			return []*runtime.Buffer{x, q, inv, am}, func(ctx context.Context, s *runtime.Stream) error {
				return ops.Quantize(ctx, rt, q, x, &ops.QuantizeOptions{Granularity: ops.PerRow, ScaleInv: inv, Amax: am, Stream: s})
			}
		}},
		{"dequantize per row", func(t *testing.T, rt *runtime.Runtime, rng *rand.Rand) ([]*runtime.Buffer, func(context.Context, *runtime.Stream) error) {
			q := randF8(t, rt, rng, rows/4, 64)
			inv := filled(t, rt, rng, tile.F32, rows/4)
			if err := inv.WriteFloat32(context.Background(), make([]float32, 0)); err != nil {
				t.Fatal(err)
			}
			vals := make([]float32, rows/4)
			for i := range vals {
				vals[i] = 0.5 + rng.Float32()
			}
			if err := inv.WriteFloat32(context.Background(), vals); err != nil {
				t.Fatal(err)
			}
			y := alloc(t, rt, tile.F32, rows/4, 64)
			return []*runtime.Buffer{q, inv, y}, func(ctx context.Context, s *runtime.Stream) error {
				return ops.Dequantize(ctx, rt, y, q, &ops.DequantizeOptions{Granularity: ops.PerRow, ScaleInv: inv, Stream: s})
			}
		}},
		{"rmsnorm", func(t *testing.T, rt *runtime.Runtime, rng *rand.Rand) ([]*runtime.Buffer, func(context.Context, *runtime.Stream) error) {
			x, w, y := filled(t, rt, rng, tile.BF16, rows/4, 256), filled(t, rt, rng, tile.F32, 256), alloc(t, rt, tile.BF16, rows/4, 256)
			return []*runtime.Buffer{x, w, y}, func(ctx context.Context, s *runtime.Stream) error {
				o := ops.DefaultRMSNormOptions()
				o.Stream = s
				return ops.RMSNorm(ctx, rt, ops.RowsOf(y), ops.RowsOf(x), w, &o)
			}
		}},
		{"rope", func(t *testing.T, rt *runtime.Runtime, rng *rand.Rand) ([]*runtime.Buffer, func(context.Context, *runtime.Stream) error) {
			q, k := filled(t, rt, rng, tile.F16, rows/4, 4*64), filled(t, rt, rng, tile.F16, rows/4, 64)
			return []*runtime.Buffer{q, k}, func(ctx context.Context, s *runtime.Stream) error {
				o := ops.DefaultRoPEOptions()
				o.HeadDim, o.Offset, o.Stream = 64, 3, s
				return ops.RoPE(ctx, rt, ops.RowsOf(q), ops.RowsOf(k), &o)
			}
		}},
		{"sample", func(t *testing.T, rt *runtime.Runtime, rng *rand.Rand) ([]*runtime.Buffer, func(context.Context, *runtime.Stream) error) {
			logits, out := filled(t, rt, rng, tile.F32, 4, rows), alloc(t, rt, tile.S32, 4)
			return []*runtime.Buffer{logits, out}, func(ctx context.Context, s *runtime.Stream) error {
				o := ops.DefaultSampleOptions()
				o.TopP, o.Seed, o.Stream = 0.9, 7, s
				return ops.Sample(ctx, rt, out, ops.RowsOf(logits), &o)
			}
		}},
		{"amax per row", func(t *testing.T, rt *runtime.Runtime, rng *rand.Rand) ([]*runtime.Buffer, func(context.Context, *runtime.Stream) error) {
			x := filled(t, rt, rng, tile.F32, rows/4, 64)
			out := alloc(t, rt, tile.F32, rows/4)
			return []*runtime.Buffer{x, out}, func(ctx context.Context, s *runtime.Stream) error {
				return ops.Amax(ctx, rt, out, x, &ops.AmaxOptions{Granularity: ops.PerRow, Stream: s})
			}
		}},
	}
}

// TestCloseWhileRunning closes one buffer of an op (input or output, at a
// random moment) while the op runs, synchronously or on a stream, then
// allocates guard buffers of the same size (the memory a use-after-free
// would reach first), fills them with a pattern, and after the op has
// finished checks that the call returned nil or ErrClosed (never a panic
// or ErrDevice) and that no guard byte changed. Every op, on the CPU and
// on the simulated device; run it under -race.
func TestCloseWhileRunning(t *testing.T) {
	iters := 6
	switch {
	case longtest.Enabled():
		iters = 300
	case testing.Short():
		iters = 4
	}
	forEachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		small := rt.Device().GPU()
		n := iters
		if !small {
			n *= 4
		}
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(71, 3))
		for _, op := range lifetimeOps(small) {
			t.Run(op.name, func(t *testing.T) {
				s, err := rt.NewStream()
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				for it := range n {
					bufs, run := op.mk(t, rt, rng)
					victim := bufs[rng.IntN(len(bufs))]
					async := it%2 == 1
					var st *runtime.Stream
					if async {
						st = s
					}
					errc := make(chan error, 1)
					go func() { errc <- run(ctx, st) }()
					if d := rng.IntN(3); d > 0 {
						time.Sleep(time.Duration(rng.IntN(200*d)) * time.Microsecond)
					} else {
						goruntime.Gosched()
					}
					if err := victim.Close(); err != nil {
						t.Fatalf("Close: %v", err)
					}
					guards := make([]*runtime.Buffer, 3)
					pattern := bytes.Repeat([]byte{0xA5}, victim.Bytes())
					for i := range guards {
						guards[i] = alloc(t, rt, tile.U8, victim.Bytes())
						if err := guards[i].Write(ctx, 0, pattern); err != nil {
							t.Fatal(err)
						}
					}
					err := <-errc
					if err == nil && async {
						err = s.Synchronize(ctx)
					}
					if err != nil && !errors.Is(err, ops.ErrClosed) {
						t.Fatalf("iteration %d (async %v): %v; want nil or ErrClosed", it, async, err)
					}
					if err := rt.Synchronize(ctx); err != nil && !errors.Is(err, ops.ErrClosed) {
						t.Fatalf("iteration %d: Synchronize: %v", it, err)
					}
					for i, g := range guards {
						if got := bytesOf(t, g); !bytes.Equal(got, pattern) {
							t.Fatalf("iteration %d (async %v): guard %d allocated after the close was overwritten (%d bytes differ)", it, async, i, diffCount(got, pattern))
						}
						g.Close()
					}
					for _, b := range bufs {
						b.Close()
					}
				}
			})
		}
		if st := rt.Stats(); st.LiveBuffers != 0 {
			t.Errorf("%d buffers still live after every close (%d bytes)", st.LiveBuffers, st.LiveBytes)
		}
	})
}

func diffCount(a, b []byte) int {
	n := 0
	for i := range a {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}

// TestCloseRuntimeWhileRunning closes the runtime, and separately a stream,
// while ops are queued on it: every call returns nil or ErrClosed, and
// nothing panics.
func TestCloseRuntimeWhileRunning(t *testing.T) {
	kinds := []runtime.BackendKind{runtime.BackendCPU, runtime.BackendSim}
	iters, calls := 4, 3
	if testing.Short() {
		iters, calls = 2, 2
	}
	for _, k := range kinds {
		for it := range iters {
			rt, err := runtime.Open(runtime.Options{Backend: k})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(it), 9))
			ctx := context.Background()
			s, err := rt.NewStream()
			if err != nil {
				t.Fatal(err)
			}
			errc := make(chan error, 64)
			for _, op := range lifetimeOps(k == runtime.BackendSim) {
				_, run := op.mk(t, rt, rng)
				go func() {
					for range calls {
						errc <- run(ctx, s)
					}
				}()
			}
			time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
			if it%2 == 0 {
				s.Close()
			}
			if err := rt.Close(); err != nil {
				t.Fatalf("%s: Close: %v", k, err)
			}
			for range calls * len(lifetimeOps(false)) {
				if err := <-errc; err != nil && !errors.Is(err, ops.ErrClosed) {
					t.Errorf("%s: an op racing Close: %v; want nil or ErrClosed", k, err)
				}
			}
		}
	}
}

// TestKVCacheCloseWhileAppending closes a KV cache while appends and
// attention over it run on a stream.
func TestKVCacheCloseWhileAppending(t *testing.T) {
	forEachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(8, 8))
		for it := range 6 {
			c, err := ops.NewKVCache(rt, ops.KVCacheOptions{DType: tile.F16, Batch: 1, HeadsKV: 2, HeadDim: 64, Capacity: 64})
			if err != nil {
				t.Fatal(err)
			}
			k, v := filled(t, rt, rng, tile.F16, 1, 4, 2, 64), filled(t, rt, rng, tile.F16, 1, 4, 2, 64)
			q, o := filled(t, rt, rng, tile.F16, 1, 1, 2, 64), alloc(t, rt, tile.F16, 1, 1, 2, 64)
			s, _ := rt.NewStream()
			errc := make(chan error, 1)
			go func() {
				var err error
				for range 8 {
					if err = c.Append(ctx, ops.AttnTensorOf(k), ops.AttnTensorOf(v), &ops.KVAppendOptions{Stream: s}); err != nil {
						break
					}
					if err = ops.AttentionKVCache(ctx, rt, ops.AttnTensorOf(o), ops.AttnTensorOf(q), c, &ops.AttentionOptions{Stream: s}); err != nil {
						break
					}
				}
				if err == nil {
					err = s.Synchronize(ctx)
				}
				errc <- err
			}()
			time.Sleep(time.Duration(rng.IntN(1000)) * time.Microsecond)
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			guard := alloc(t, rt, tile.U8, 2*64*2*64)
			pattern := bytes.Repeat([]byte{0x3c}, guard.Bytes())
			if err := guard.Write(ctx, 0, pattern); err != nil {
				t.Fatal(err)
			}
			if err := <-errc; err != nil && !errors.Is(err, ops.ErrClosed) {
				t.Fatalf("iteration %d: %v; want nil or ErrClosed", it, err)
			}
			s.Synchronize(ctx)
			if !bytes.Equal(bytesOf(t, guard), pattern) {
				t.Fatalf("iteration %d: a guard allocated after the cache's Close was written", it)
			}
			s.Close()
			for _, b := range []*runtime.Buffer{k, v, q, o, guard} {
				b.Close()
			}
		}
	})
}
