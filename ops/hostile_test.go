package ops_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// A hostileOp is a valid call of one ops entry point: args are its
// arguments after ctx and rt (views, buffers, option pointers), bufs every
// buffer the call may touch (checked unchanged after an error), and call
// runs it with (possibly mutated) arguments.
type hostileOp struct {
	name string
	args []any
	call func(ctx context.Context, rt *runtime.Runtime, a []any) error
	// state, if set, is state the call must leave unchanged when it
	// fails beyond the buffers of args (a KV cache's lengths and storage);
	// with reset it first puts the state back to where the baseline call
	// succeeds.
	state func(t *testing.T, reset bool) any
}

// hostileEnv holds what mutations put in place of a buffer or a stream:
// buffers that are closed, foreign (another runtime's), zero values, of the
// wrong type or length, and streams that are closed or foreign.
type hostileEnv struct {
	rt      *runtime.Runtime
	badRTs  []*runtime.Runtime // nil, zero, closed, another runtime
	bufs    []*runtime.Buffer  // replacements (nil included)
	streams []*runtime.Stream
}

func newHostileEnv(t *testing.T, rt *runtime.Runtime) *hostileEnv {
	t.Helper()
	rt2 := openTest(t)
	foreign := mustAlloc(t, rt2, tile.F32, 4, 16)
	closed := mustAlloc(t, rt, tile.F32, 4, 16)
	closed.Close()
	closedRT, err := runtime.Open(testOptions(runtime.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	closedRT.Close()
	e := &hostileEnv{rt: rt, bufs: []*runtime.Buffer{nil, closed, foreign, {}}, badRTs: []*runtime.Runtime{nil, {}, closedRT, rt2}}
	for _, d := range []tile.DType{tile.F32, tile.BF16, tile.E4M3, tile.S32, tile.U8, tile.S64} {
		for _, sh := range [][]int{{1}, {4, 16}, {3, 7}} {
			e.bufs = append(e.bufs, mustAlloc(t, rt, d, sh...))
		}
	}
	s, err := rt.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := rt2.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	e.streams = []*runtime.Stream{nil, s, s2, {}, rt.DefaultStream()}
	return e
}

var (
	hostileInts   = []int64{0, -1, 1, 2, 3, 7, 129, 1 << 31, 1 << 62, math.MaxInt64, math.MinInt64, math.MaxInt64 / 4}
	hostileFloats = []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1), 1e-45, 3e38, 1e300, math.Copysign(0, -1)}
	bufPtrType    = reflect.TypeFor[*runtime.Buffer]()
	streamPtrType = reflect.TypeFor[*runtime.Stream]()
)

// leaves lists the settable leaves under v: numbers, bools, buffers,
// streams, slices and pointers.
func leaves(v reflect.Value, out []reflect.Value) []reflect.Value {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				out = leaves(v.Field(i), out)
			}
		}
		return out
	case reflect.Pointer:
		out = append(out, v)
		if !v.IsNil() && v.Type() != bufPtrType && v.Type() != streamPtrType {
			out = leaves(v.Elem(), out)
		}
		return out
	case reflect.Slice:
		out = append(out, v)
		for i := range v.Len() {
			out = leaves(v.Index(i), out)
		}
		return out
	}
	return append(out, v)
}

// mutate sets one leaf of args to a hostile value: a number from the
// hostile tables, a flipped bool, a replacement or aliased buffer, a bad
// stream, a nil, empty or lengthened slice, or a nil pointer.
func (e *hostileEnv) mutate(rng *rand.Rand, args []reflect.Value, own []*runtime.Buffer) string {
	var ls []reflect.Value
	for _, a := range args {
		ls = leaves(a, ls)
	}
	v := ls[rng.IntN(len(ls))]
	if !v.CanSet() {
		return "none"
	}
	switch {
	case v.Type() == bufPtrType:
		if rng.IntN(2) == 0 && len(own) > 0 {
			v.Set(reflect.ValueOf(own[rng.IntN(len(own))])) // aliasing
		} else {
			v.Set(reflect.ValueOf(e.bufs[rng.IntN(len(e.bufs))]))
		}
	case v.Type() == streamPtrType:
		v.Set(reflect.ValueOf(e.streams[rng.IntN(len(e.streams))]))
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x := hostileInts[rng.IntN(len(hostileInts))]
		if v.OverflowInt(x) {
			x = -1
		}
		v.SetInt(x)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		x := uint64(hostileInts[rng.IntN(len(hostileInts))])
		if v.OverflowUint(x) {
			x = uint64(rng.IntN(256)) % (1 << (8 * v.Type().Size()))
		}
		v.SetUint(x)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(hostileFloats[rng.IntN(len(hostileFloats))])
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Slice:
		switch rng.IntN(3) {
		case 0:
			v.Set(reflect.Zero(v.Type()))
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			n := reflect.MakeSlice(v.Type(), v.Len()+1, v.Len()+1)
			reflect.Copy(n, v)
			if n.Len() > 1 {
				n.Index(n.Len() - 1).Set(n.Index(0))
			}
			v.Set(n)
		}
	case reflect.Pointer:
		if v.Type() != bufPtrType && v.Type() != streamPtrType {
			v.Set(reflect.Zero(v.Type()))
		}
	}
	return v.Type().String()
}

// clone copies a call's arguments deeply enough that a mutation leaves the
// baseline alone: structs and the structs and slices they point to.
func clone(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || v.Type() == bufPtrType || v.Type() == streamPtrType || v.Type().Elem().Kind() != reflect.Struct {
			return v
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(clone(v.Elem()))
		return p
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				c.Field(i).Set(clone(v.Field(i)))
			}
		}
		return c
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(clone(v.Index(i)))
		}
		return c
	}
	return v
}

// runHostile calls op n times with one or two mutations each and fails on
// a panic, a call that does not return within a few seconds, an error
// wrapping no sentinel (nor context.Canceled), and an error after which
// some buffer changed.
func runHostile(t *testing.T, env *hostileEnv, op hostileOp, n int, rng *rand.Rand) {
	t.Helper()
	if err := op.call(context.Background(), env.rt, op.args); err != nil {
		t.Fatalf("%s: the baseline call fails: %v", op.name, err)
	}
	var own []*runtime.Buffer
	for _, a := range op.args {
		for _, l := range leaves(reflect.ValueOf(&a).Elem().Elem(), nil) {
			if b, ok := l.Interface().(*runtime.Buffer); ok && b != nil {
				own = append(own, b)
			}
		}
	}
	all := append(append([]*runtime.Buffer{}, own...), env.bufs...)
	for i := range n {
		args := make([]reflect.Value, len(op.args))
		for j, a := range op.args {
			args[j] = reflect.New(reflect.TypeOf(a)).Elem()
			args[j].Set(clone(reflect.ValueOf(a)))
		}
		what := env.mutate(rng, args, own)
		if rng.IntN(3) == 0 {
			what += ", " + env.mutate(rng, args, own)
		}
		rt := env.rt
		if rng.IntN(16) == 0 {
			rt = env.badRTs[rng.IntN(len(env.badRTs))]
			what += ", runtime"
		}
		ctx := context.Background()
		switch rng.IntN(16) {
		case 0:
			ctx = nil
		case 1:
			c, cancel := context.WithCancel(ctx)
			cancel()
			ctx = c
		}
		for _, b := range all {
			if b != nil && !b.Closed() && b.Runtime() == env.rt {
				fillRand(t, rng, b)
			}
		}
		var stateBefore any
		if op.state != nil {
			stateBefore = op.state(t, true)
		}
		before := hostileSnapshot(t, all)
		in := make([]any, len(args))
		for j := range args {
			in[j] = args[j].Interface()
		}
		desc := fmt.Sprintf("%s #%d (mutated %s): %s", op.name, i, what, fmtHostile(in))
		err, panicked := callTimed(t, desc, func() error { return op.call(ctx, rt, in) })
		if panicked || err == nil {
			if err == nil {
				env.rt.Synchronize(context.Background())
			}
			continue
		}
		if !isTyped(err) && !errors.Is(err, context.Canceled) {
			t.Errorf("%s: untyped error %v", desc, err)
		}
		if after := hostileSnapshot(t, all); !reflect.DeepEqual(before, after) {
			t.Errorf("%s: failed with %v but wrote a buffer", desc, err)
		}
		if op.state != nil && !reflect.DeepEqual(stateBefore, op.state(t, false)) {
			t.Errorf("%s: failed with %v but changed the state", desc, err)
		}
	}
}

// callTimed runs f, failing t on a panic or on a call still running after
// 10 s (it is left running).
func callTimed(t *testing.T, desc string, f func() error) (err error, panicked bool) {
	t.Helper()
	type result struct {
		err   error
		panic any
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{panic: r}
			}
		}()
		done <- result{err: f()}
	}()
	select {
	case r := <-done:
		if r.panic != nil {
			t.Errorf("%s: panic: %v", desc, r.panic)
			return nil, true
		}
		return r.err, false
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still running after 10 s", desc)
		return nil, true
	}
}

func fmtHostile(in []any) string {
	s := fmt.Sprintf("%+v", in)
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

func fillRand(t *testing.T, rng *rand.Rand, b *runtime.Buffer) {
	t.Helper()
	raw := make([]byte, b.Bytes())
	for i := range raw {
		raw[i] = byte(rng.Uint32()) &^ 0x40 // small finite float values mostly
	}
	if err := b.Write(context.Background(), 0, raw); err != nil {
		t.Fatal(err)
	}
}

func hostileSnapshot(t *testing.T, bufs []*runtime.Buffer) [][]byte {
	t.Helper()
	out := make([][]byte, len(bufs))
	for i, b := range bufs {
		if b == nil || b.Closed() || b.Bytes() == 0 {
			continue
		}
		out[i] = make([]byte, b.Bytes())
		if err := b.Read(context.Background(), 0, out[i]); err != nil {
			out[i] = nil
		}
	}
	return out
}

// hostileOps builds one valid call of every ops entry point.
func hostileOps(t *testing.T, rt *runtime.Runtime) []hostileOp {
	t.Helper()
	ctx := context.Background()
	f32 := func(shape ...int) *runtime.Buffer { return mustAlloc(t, rt, tile.F32, shape...) }
	small := func(b *runtime.Buffer) *runtime.Buffer {
		v := make([]float32, b.Len())
		for i := range v {
			v[i] = float32(i%7)*0.25 - 0.5
		}
		if err := b.WriteFloat32(ctx, v); err != nil {
			t.Fatal(err)
		}
		return b
	}
	const m, n, k = 4, 8, 16
	const seq, heads, hd = 3, 2, 8
	attn := func() ops.AttnTensor { return ops.AttnTensorOf(small(mustAlloc(t, rt, tile.F32, 1, seq, heads, hd))) }
	cache, err := ops.NewKVCache(rt, ops.KVCacheOptions{DType: tile.F32, Batch: 1, HeadsKV: heads, HeadDim: hd, Capacity: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.Close() })
	if err := cache.Append(ctx, attn(), attn(), nil); err != nil {
		t.Fatal(err)
	}
	// Append's caches: a contiguous one and a paged one of two sequences,
	// emptied before each call so that a valid append always has room.
	appendTo := func(o ops.KVCacheOptions) *ops.KVCache {
		c, err := ops.NewKVCache(rt, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	flat := appendTo(ops.KVCacheOptions{DType: tile.BF16, Batch: 2, HeadsKV: heads, HeadDim: hd, Capacity: 8})
	paged := appendTo(ops.KVCacheOptions{DType: tile.F16, Batch: 2, HeadsKV: heads, HeadDim: hd, PageSize: 16, NumPages: 3})
	if err := paged.SetBlockTable(0, []int{2}); err != nil {
		t.Fatal(err)
	}
	if err := paged.SetBlockTable(1, []int{0}); err != nil {
		t.Fatal(err)
	}
	kv := func() ops.AttnTensor { return ops.AttnTensorOf(small(mustAlloc(t, rt, tile.F32, 2, seq, heads, hd))) }
	appendOp := func(name string, c *ops.KVCache) hostileOp {
		return hostileOp{name: name, args: []any{kv(), kv(), &ops.KVAppendOptions{Counts: []int{3, 1}}},
			call: func(ctx context.Context, rt *runtime.Runtime, a []any) error {
				return c.Append(ctx, a[0].(ops.AttnTensor), a[1].(ops.AttnTensor), a[2].(*ops.KVAppendOptions))
			},
			state: func(t *testing.T, reset bool) any {
				if reset {
					for s := range 2 {
						if err := c.Truncate(s, 0); err != nil {
							t.Fatal(err)
						}
					}
				}
				k, v := c.Buffers()
				return []any{c.Lens(), hostileSnapshot(t, []*runtime.Buffer{k, v})}
			}}
	}
	x8 := func() *runtime.Buffer { return mustAlloc(t, rt, tile.E4M3, m, k) }
	idx := func(vals ...int32) *runtime.Buffer {
		b := mustAlloc(t, rt, tile.S32, 1, len(vals))
		if err := runtime.WriteRaw(ctx, b, vals); err != nil {
			t.Fatal(err)
		}
		return b
	}
	row := func(b *runtime.Buffer) ops.Tile {
		return ops.TileOf(b, tile.Tile{DType: b.DType(), Rows: 1, Cols: 4, ValidRows: 1, ValidCols: 4})
	}
	mx := ops.RowsOf
	return []hostileOp{
		appendOp("KVCache.Append", flat),
		appendOp("KVCache.Append/paged", paged),
		{"MatMul", []any{mx(f32(m, n)), mx(small(f32(m, k))), mx(small(f32(k, n))), &ops.MatMulOptions{Alpha: 1, C: &ops.Matrix{Buf: small(f32(m, n)), Rows: m, Cols: n}, Beta: 1, Bias: small(f32(n)), Batch: 1}},
			func(ctx context.Context, rt *runtime.Runtime, a []any) error {
				return ops.MatMul(ctx, rt, a[0].(ops.Matrix), a[1].(ops.Matrix), a[2].(ops.Matrix), a[3].(*ops.MatMulOptions))
			}, nil},
		{"Attention", []any{attn(), attn(), attn(), attn(), &ops.AttentionOptions{Causal: true, Window: &ops.Window{Left: 2, Right: 0}, LSE: f32(1, heads, seq)}},
			func(ctx context.Context, rt *runtime.Runtime, a []any) error {
				return ops.Attention(ctx, rt, a[0].(ops.AttnTensor), a[1].(ops.AttnTensor), a[2].(ops.AttnTensor), a[3].(ops.AttnTensor), a[4].(*ops.AttentionOptions))
			}, nil},
		{"AttentionKVCache", []any{attn(), attn(), &ops.AttentionOptions{Causal: true, KVSplits: 2}},
			func(ctx context.Context, rt *runtime.Runtime, a []any) error {
				return ops.AttentionKVCache(ctx, rt, a[0].(ops.AttnTensor), a[1].(ops.AttnTensor), cache, a[2].(*ops.AttentionOptions))
			}, nil},
		{"RMSNorm", []any{mx(f32(m, k)), mx(small(f32(m, k))), small(f32(k)), &ops.RMSNormOptions{Eps: 1e-5}},
			func(ctx context.Context, rt *runtime.Runtime, a []any) error {
				return ops.RMSNorm(ctx, rt, a[0].(ops.Matrix), a[1].(ops.Matrix), a[2].(*runtime.Buffer), a[3].(*ops.RMSNormOptions))
			}, nil},
		{"AddRMSNorm", []any{mx(small(f32(m, k))), mx(small(f32(m, k))), small(f32(k)), &ops.RMSNormOptions{Eps: 1e-5, Gemma: true}},
			func(ctx context.Context, rt *runtime.Runtime, a []any) error {
				return ops.AddRMSNorm(ctx, rt, a[0].(ops.Matrix), a[1].(ops.Matrix), a[2].(*runtime.Buffer), a[3].(*ops.RMSNormOptions))
			}, nil},
		{"LayerNorm", []any{mx(f32(m, k)), mx(small(f32(m, k))), small(f32(k)), small(f32(k)), &ops.LayerNormOptions{Eps: 1e-5, Residual: &ops.Matrix{Buf: small(f32(m, k)), Rows: m, Cols: k}}},
			func(ctx context.Context, rt *runtime.Runtime, a []any) error {
				return ops.LayerNorm(ctx, rt, a[0].(ops.Matrix), a[1].(ops.Matrix), a[2].(*runtime.Buffer), a[3].(*runtime.Buffer), a[4].(*ops.LayerNormOptions))
			}, nil},
		{"RoPE", []any{mx(small(f32(seq, heads*hd))), mx(small(f32(seq, hd))), &ops.RoPEOptions{HeadDim: hd, RotaryDim: hd, Theta: 10000, SeqLens: []int{2, 1}, SeqOffsets: []int{0, 5}, MaxPosition: 64,
			Scaling: ops.RoPEScaling{Kind: fallback.RoPEScalingKind(1), Factor: 2}, QOut: &ops.Matrix{Buf: f32(seq, heads*hd), Rows: seq, Cols: heads * hd}}},
			func(ctx context.Context, rt *runtime.Runtime, a []any) error {
				return ops.RoPE(ctx, rt, a[0].(ops.Matrix), a[1].(ops.Matrix), a[2].(*ops.RoPEOptions))
			}, nil},
		{"Sample", []any{mustAlloc(t, rt, tile.S32, m), mx(small(f32(m, n))), &ops.SampleOptions{Temperature: 0.8, TopK: 3, TopP: 0.9, MinP: 0.01, Seed: 7}},
			func(ctx context.Context, rt *runtime.Runtime, a []any) error {
				return ops.Sample(ctx, rt, a[0].(*runtime.Buffer), a[1].(ops.Matrix), a[2].(*ops.SampleOptions))
			}, nil},
		{"Softmax", []any{mx(f32(m, n)), mx(small(f32(m, n))), &ops.SoftmaxOptions{Temperature: 1}},
			func(ctx context.Context, rt *runtime.Runtime, a []any) error {
				return ops.Softmax(ctx, rt, a[0].(ops.Matrix), a[1].(ops.Matrix), a[2].(*ops.SoftmaxOptions))
			}, nil},
		{"Pool", []any{mx(f32(2, k)), mx(small(f32(m, k))), &ops.PoolOptions{Lengths: []int{3, 1}, Normalize: true, Eps: 1e-6}},
			func(ctx context.Context, rt *runtime.Runtime, a []any) error {
				return ops.Pool(ctx, rt, a[0].(ops.Matrix), a[1].(ops.Matrix), a[2].(*ops.PoolOptions))
			}, nil},
		{"Activate", []any{mx(f32(m, k)), mx(small(f32(m, k))), &ops.ActivateOptions{}},
			func(ctx context.Context, rt *runtime.Runtime, a []any) error {
				return ops.Activate(ctx, rt, a[0].(ops.Matrix), a[1].(ops.Matrix), fallback.FnSiLU, a[2].(*ops.ActivateOptions))
			}, nil},
		{"GatedActivate", []any{mx(f32(m, k)), mx(small(f32(m, k))), &ops.ActivateOptions{Gate: &ops.Matrix{Buf: small(f32(m, k)), Rows: m, Cols: k}}},
			func(ctx context.Context, rt *runtime.Runtime, a []any) error {
				return ops.GatedActivate(ctx, rt, a[0].(ops.Matrix), a[1].(ops.Matrix), fallback.FnGELU, a[2].(*ops.ActivateOptions))
			}, nil},
		{"Elementwise", []any{mx(f32(m, k)), mx(small(f32(m, k))), mx(small(f32(1, k))), &ops.ElementwiseOptions{}},
			func(ctx context.Context, rt *runtime.Runtime, a []any) error {
				return ops.Elementwise(ctx, rt, fallback.EltAdd, a[0].(ops.Matrix), a[1].(ops.Matrix), a[2].(ops.Matrix), 1, a[3].(*ops.ElementwiseOptions))
			}, nil},
		{"L2Normalize", []any{mx(f32(m, k)), mx(small(f32(m, k))), &ops.L2NormalizeOptions{Eps: 1e-6}},
			func(ctx context.Context, rt *runtime.Runtime, a []any) error {
				return ops.L2Normalize(ctx, rt, a[0].(ops.Matrix), a[1].(ops.Matrix), a[2].(*ops.L2NormalizeOptions))
			}, nil},
		{"Quantize", []any{x8(), small(f32(m, k)), &ops.QuantizeOptions{Granularity: ops.Granularity(1), ScaleInv: f32(m), Amax: f32(1)}},
			func(ctx context.Context, rt *runtime.Runtime, a []any) error {
				return ops.Quantize(ctx, rt, a[0].(*runtime.Buffer), a[1].(*runtime.Buffer), a[2].(*ops.QuantizeOptions))
			}, nil},
		{"Dequantize", []any{f32(m, k), x8(), &ops.DequantizeOptions{}},
			func(ctx context.Context, rt *runtime.Runtime, a []any) error {
				return ops.Dequantize(ctx, rt, a[0].(*runtime.Buffer), a[1].(*runtime.Buffer), a[2].(*ops.DequantizeOptions))
			}, nil},
		{"Amax", []any{f32(1), small(f32(m, k)), &ops.AmaxOptions{}},
			func(ctx context.Context, rt *runtime.Runtime, a []any) error {
				return ops.Amax(ctx, rt, a[0].(*runtime.Buffer), a[1].(*runtime.Buffer), a[2].(*ops.AmaxOptions))
			}, nil},
		{"MGather", []any{row(f32(1, 4)), small(f32(16)), ops.DenseTile(idx(0, 3, 15, 2)), &ops.GatherOptions{Mode: tile.IndexMode(1)}},
			func(ctx context.Context, rt *runtime.Runtime, a []any) error {
				return ops.MGather(ctx, rt, a[0].(ops.Tile), a[1].(*runtime.Buffer), a[2].(ops.Tile), a[3].(*ops.GatherOptions))
			}, nil},
		{"MScatter", []any{f32(16), ops.DenseTile(idx(1, 3, 15, 2)), row(small(f32(1, 4))), &ops.ScatterOptions{Mode: tile.IndexMode(1), Op: ops.ScatterOp(1)}},
			func(ctx context.Context, rt *runtime.Runtime, a []any) error {
				return ops.MScatter(ctx, rt, a[0].(*runtime.Buffer), a[1].(ops.Tile), a[2].(ops.Tile), a[3].(*ops.ScatterOptions))
			}, nil},
		{"MGatherCAS", []any{row(mustAlloc(t, rt, tile.S32, 1, 4)), mustAlloc(t, rt, tile.S32, 16), ops.DenseTile(idx(0, 4, 8, 60)), row(mustAlloc(t, rt, tile.S32, 1, 4)), row(mustAlloc(t, rt, tile.S32, 1, 4)), &ops.GatherCASOptions{Mask: 0xf}},
			func(ctx context.Context, rt *runtime.Runtime, a []any) error {
				return ops.MGatherCAS(ctx, rt, a[0].(ops.Tile), a[1].(*runtime.Buffer), a[2].(ops.Tile), a[3].(ops.Tile), a[4].(ops.Tile), a[5].(*ops.GatherCASOptions))
			}, nil},
	}
}

// TestHostileOps: every ops entry point, from a valid call, with one or two
// of its arguments (a view's field, an option, a buffer, a stream, the
// context) made hostile: no panic or hang, a typed error, and nothing
// written when it fails.
func TestHostileOps(t *testing.T) {
	rt := openTest(t)
	env := newHostileEnv(t, rt)
	n := 150
	if testing.Short() {
		n = 40
	}
	if rt.Backend() != runtime.BackendCPU {
		n /= 4 // a simulated GPU launch costs about 50 CPU ones
	}
	if s := os.Getenv("TCRT_HOSTILE_N"); s != "" { // a longer search
		fmt.Sscan(s, &n)
	}
	for _, op := range hostileOps(t, rt) {
		t.Run(op.name, func(t *testing.T) {
			runHostile(t, env, op, n, rand.New(rand.NewPCG(uint64(len(op.name)), 9)))
		})
	}
}
