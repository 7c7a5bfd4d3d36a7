package ops_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// entryPoints calls every ops entry point with rt and zero or degenerate
// arguments built from buf (which may be nil); each must return a typed
// error.
func entryPoints(rt *runtime.Runtime, buf *runtime.Buffer) map[string]func() error {
	ctx := context.Background()
	m := ops.MatrixOf(buf)
	at := ops.AttnTensorOf(buf)
	tl := ops.DenseTile(buf)
	var cache *ops.KVCache
	e := func(_ ops.Explanation, err error) error { return err }
	return map[string]func() error{
		"MatMul":                  func() error { return ops.MatMul(ctx, rt, m, m, m, nil) },
		"ExplainMatMul":           func() error { return e(ops.ExplainMatMul(rt, m, m, m, nil)) },
		"Attention":               func() error { return ops.Attention(ctx, rt, at, at, at, at, nil) },
		"ExplainAttention":        func() error { return e(ops.ExplainAttention(rt, at, at, at, at, nil)) },
		"AttentionKVCache":        func() error { return ops.AttentionKVCache(ctx, rt, at, at, cache, nil) },
		"ExplainAttentionKVCache": func() error { return e(ops.ExplainAttentionKVCache(rt, at, at, cache, nil)) },
		"NewKVCache":              func() error { _, err := ops.NewKVCache(rt, ops.KVCacheOptions{}); return err },
		"MGather":                 func() error { return ops.MGather(ctx, rt, tl, buf, tl, nil) },
		"ExplainMGather":          func() error { return e(ops.ExplainMGather(rt, tl, buf, tl, nil)) },
		"MGatherCAS":              func() error { return ops.MGatherCAS(ctx, rt, tl, buf, tl, tl, tl, nil) },
		"ExplainMGatherCAS":       func() error { return e(ops.ExplainMGatherCAS(rt, tl, buf, tl, tl, tl, nil)) },
		"MScatter":                func() error { return ops.MScatter(ctx, rt, buf, tl, tl, nil) },
		"ExplainMScatter":         func() error { return e(ops.ExplainMScatter(rt, buf, tl, tl, nil)) },
		"Quantize":                func() error { return ops.Quantize(ctx, rt, buf, buf, nil) },
		"ExplainQuantize":         func() error { return e(ops.ExplainQuantize(rt, buf, buf, nil)) },
		"Dequantize":              func() error { return ops.Dequantize(ctx, rt, buf, buf, nil) },
		"Amax":                    func() error { return ops.Amax(ctx, rt, buf, buf, nil) },
	}
}

func probe(t *testing.T, name string, call func() error) {
	t.Helper()
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s panicked: %v", name, r)
				err = errors.New("panicked")
			}
		}()
		err = call()
	}()
	if !isTyped(err) {
		t.Errorf("%s: %v; want a typed error", name, err)
	}
}

// TestEntryPointsDegenerate: every entry point with a nil runtime, a closed
// runtime, and nil, closed, foreign or wrongly shaped buffers.
func TestEntryPointsDegenerate(t *testing.T) {
	rt := openTest(t)
	rt2 := openTest(t)
	closedRT, err := runtime.Open(testOptions(runtime.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	closedRTBuf, _ := closedRT.Alloc(tile.F32, 4, 4)
	closedRT.Close()
	closedBuf, _ := rt.Alloc(tile.F32, 4, 4)
	closedBuf.Close()
	foreign, _ := rt2.Alloc(tile.F32, 4, 4)
	scalar, _ := rt.Alloc(tile.F32)
	s8, _ := rt.Alloc(tile.S8, 3, 5, 7)
	for _, c := range []struct {
		name string
		rt   *runtime.Runtime
		buf  *runtime.Buffer
	}{
		{"nil rt", nil, nil}, {"nil rt, buffer", nil, scalar}, {"closed rt", closedRT, closedRTBuf},
		{"nil buffer", rt, nil}, {"closed buffer", rt, closedBuf}, {"foreign buffer", rt, foreign},
		{"zero buffer", rt, &runtime.Buffer{}}, {"aliased scalar", rt, scalar}, {"aliased s8", rt, s8},
	} {
		for name, call := range entryPoints(c.rt, c.buf) {
			probe(t, c.name+": "+name, call)
		}
	}
}

// TestOpsNilReceivers calls every exported method of the ops types on nil
// receivers and on zero values not made by their constructors.
func TestOpsNilReceivers(t *testing.T) {
	ctxType := reflect.TypeFor[context.Context]()
	errType := reflect.TypeFor[error]()
	for _, v := range []any{(*ops.KVCache)(nil), &ops.KVCache{}, (*ops.DelayedScaling)(nil), &ops.DelayedScaling{}, (*ops.Call)(nil), &ops.Call{}} {
		recv := reflect.ValueOf(v)
		for i := range recv.NumMethod() {
			fn := recv.Method(i)
			name := fmt.Sprintf("%T.%s", v, recv.Type().Method(i).Name)
			in := make([]reflect.Value, fn.Type().NumIn())
			for j := range in {
				if fn.Type().In(j) == ctxType {
					in[j] = reflect.ValueOf(context.Background())
				} else {
					in[j] = reflect.Zero(fn.Type().In(j))
				}
			}
			var out []reflect.Value
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s panicked: %v", name, r)
					}
				}()
				out = fn.Call(in)
			}()
			for k, o := range out {
				if fn.Type().Out(k) == errType {
					if err, _ := o.Interface().(error); !errors.Is(err, ops.ErrArgument) && !errors.Is(err, ops.ErrClosed) {
						t.Errorf("%s: %v; want ErrArgument or ErrClosed", name, err)
					}
				} else if !o.IsZero() {
					t.Errorf("%s: result %d is %v; want the zero value", name, k, o)
				}
			}
		}
	}
}

// TestHugeSizes: host tables, caches and views sized past memory or past
// int are typed errors, with nothing allocated or written.
func TestHugeSizes(t *testing.T) {
	rt := openTest(t)
	before := rt.Stats()
	for _, n := range []int{1 << 40, math.MaxInt, math.MaxInt / 4} {
		if _, err := ops.NewDelayedScaling(tile.E4M3, n, ops.AmaxMax, 0); !errors.Is(err, ops.ErrOutOfMemory) {
			t.Errorf("NewDelayedScaling(history %d): %v; want ErrOutOfMemory", n, err)
		}
	}
	for _, o := range []ops.KVCacheOptions{
		{DType: tile.F32, Batch: 1 << 20, HeadsKV: 1 << 10, HeadDim: 128, Capacity: 1 << 20},
		{DType: tile.F32, Batch: math.MaxInt, HeadsKV: 8, HeadDim: 64, Capacity: 16},
		{DType: tile.F16, Batch: 1 << 40, HeadsKV: 1, HeadDim: 16, PageSize: 16, NumPages: 1},
		{DType: tile.F16, Batch: 1, HeadsKV: math.MaxInt / 2, HeadDim: 16, PageSize: 16, NumPages: 4},
		{DType: tile.BF16, Batch: 2, HeadsKV: 2, HeadDim: 64, Capacity: math.MaxInt},
	} {
		if _, err := ops.NewKVCache(rt, o); !errors.Is(err, ops.ErrOutOfMemory) && !errors.Is(err, ops.ErrShape) {
			t.Errorf("NewKVCache(%+v): %v; want ErrOutOfMemory or ErrShape", o, err)
		}
	}
	if after := rt.Stats(); after.LiveBytes != before.LiveBytes {
		t.Errorf("failed constructors left %d bytes allocated", after.LiveBytes-before.LiveBytes)
	}
	// Views whose arithmetic overflows.
	ctx := context.Background()
	d := mustAlloc(t, rt, tile.F32, 4, 4)
	poison(t, d)
	want := rawBytes(t, d)
	a := mustAlloc(t, rt, tile.F32, 4, 4)
	for _, c := range []struct {
		name string
		m    ops.Matrix
		opt  ops.MatMulOptions
	}{
		{"LD overflow", ops.Matrix{Buf: a, Rows: 4, Cols: 4, LD: math.MaxInt / 2}, ops.DefaultMatMulOptions()},
		{"LD max", ops.Matrix{Buf: a, Rows: 4, Cols: 4, LD: math.MaxInt}, ops.DefaultMatMulOptions()},
		{"stride overflow", ops.Matrix{Buf: a, Rows: 4, Cols: 4, BatchStride: math.MaxInt / 2}, ops.MatMulOptions{Alpha: 1, Batch: 3}},
		{"offset max", ops.Matrix{Buf: a, Rows: 4, Cols: 4, Offset: math.MaxInt}, ops.DefaultMatMulOptions()},
		{"offset negative", ops.Matrix{Buf: a, Rows: 4, Cols: 4, Offset: math.MinInt}, ops.DefaultMatMulOptions()},
		{"batch huge", ops.Matrix{Buf: a, Rows: 4, Cols: 4}, ops.MatMulOptions{Alpha: 1, Batch: math.MaxInt}},
	} {
		err := ops.MatMul(ctx, rt, ops.MatrixOf(d), c.m, ops.MatrixOf(a), &c.opt)
		if !errors.Is(err, ops.ErrBounds) && !errors.Is(err, ops.ErrShape) {
			t.Errorf("%s: %v; want ErrBounds or ErrShape", c.name, err)
		}
		if string(rawBytes(t, d)) != string(want) {
			t.Errorf("%s: D was written", c.name)
		}
	}
	q := mustAlloc(t, rt, tile.F32, 2, 3, 4, 8)
	for _, strides := range [][]int{{math.MaxInt / 2, 32, 8, 1}, {1 << 62, 1 << 61, 8, 1}, {-96, 32, 8, 1}} {
		v := ops.AttnTensor{Buf: q, Shape: []int{2, 3, 4, 8}, Strides: strides}
		err := ops.Attention(ctx, rt, ops.AttnTensorOf(d), v, v, v, nil)
		if !errors.Is(err, ops.ErrBounds) && !errors.Is(err, ops.ErrShape) {
			t.Errorf("attention strides %v: %v; want ErrBounds or ErrShape", strides, err)
		}
	}
}

// TestQuantizeScaleInverse: a given scale that is not positive and finite
// is rejected and nothing is written; a positive finite one outside
// [2^-126, 2^126] is clamped into it, so the ScaleInv written is one that
// Dequantize accepts.
func TestQuantizeScaleInverse(t *testing.T) {
	rt := openTest(t)
	ctx := context.Background()
	x := mustAlloc(t, rt, tile.F32, 4, 8)
	q := mustAlloc(t, rt, tile.E4M3, 4, 8)
	inv := mustAlloc(t, rt, tile.F32, 1)
	poison(t, q)
	want := rawBytes(t, q)
	for _, s := range []float32{0, -1, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())} {
		err := ops.Quantize(ctx, rt, q, x, &ops.QuantizeOptions{Source: ops.ScaleGiven, Scale: s, ScaleInv: inv})
		if !errors.Is(err, ops.ErrArgument) {
			t.Errorf("scale %v: %v; want ErrArgument", s, err)
		}
		if string(rawBytes(t, q)) != string(want) {
			t.Errorf("scale %v: q was written", s)
		}
	}
	y := mustAlloc(t, rt, tile.F32, 4, 8)
	for _, c := range []struct{ s, want float32 }{{1e-45, tile.MinScale}, {1e-40, tile.MinScale}, {2.9e-39, tile.MinScale},
		{1e-38, tile.MinScale}, {1e-37, 1e-37}, {math.MaxFloat32, tile.MaxScale}, {0x1p127, tile.MaxScale}, {3, 3}} {
		if err := ops.Quantize(ctx, rt, q, x, &ops.QuantizeOptions{Source: ops.ScaleGiven, Scale: c.s, ScaleInv: inv}); err != nil {
			t.Errorf("scale %v: %v", c.s, err)
			continue
		}
		got := make([]float32, 1)
		if err := inv.ReadFloat32(ctx, got); err != nil {
			t.Fatal(err)
		}
		if got[0] != 1/c.want {
			t.Errorf("scale %v: ScaleInv %v, want 1/%v", c.s, got[0], c.want)
		}
		if err := ops.Dequantize(ctx, rt, y, q, &ops.DequantizeOptions{ScaleInv: inv}); err != nil {
			t.Errorf("scale %v: Dequantize refuses the ScaleInv Quantize wrote: %v", c.s, err)
		}
	}
	if !errors.Is(ops.ErrDevice, runtime.ErrDevice) || !errors.Is(ops.ErrNoDevice, runtime.ErrNoDevice) {
		t.Error("ops.ErrDevice / ErrNoDevice are not the runtime's sentinels")
	}
}

func mustAlloc(t *testing.T, rt *runtime.Runtime, d tile.DType, shape ...int) *runtime.Buffer {
	t.Helper()
	b, err := rt.Alloc(d, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestKVCacheCloseFromStreamWork: closing a cache from work running on a
// stream is refused (it would wait for itself) and leaves the cache open.
func TestKVCacheCloseFromStreamWork(t *testing.T) {
	rt := openTest(t)
	c, err := ops.NewKVCache(rt, ops.KVCacheOptions{DType: tile.F32, Batch: 2, HeadsKV: 1, HeadDim: 8, Capacity: 4})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	s := rt.DefaultStream()
	if err := s.Enqueue(func() error { got <- c.Close(); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-got; !errors.Is(err, ops.ErrArgument) {
		t.Errorf("Close from stream work: %v; want ErrArgument", err)
	}
	if err := c.Truncate(0, 0); err != nil {
		t.Errorf("the cache is unusable after a refused Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := c.Truncate(0, 0); !errors.Is(err, ops.ErrClosed) {
		t.Errorf("after Close: %v; want ErrClosed", err)
	}
}
