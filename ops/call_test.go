package ops_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/internal/callargs"
	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// TestCallMatchesDirect: a planned call runs the kernel the direct call
// selects and writes the same bytes, every time it runs, synchronously and
// on a stream; its explanation is the direct one.
func TestCallMatchesDirect(t *testing.T) {
	rt := openTest(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(28, 2))
	for _, s := range [][3]int{{1, 1, 1}, {7, 129, 13}, {33, 7, 1000}} {
		m, n, k := s[0], s[1], s[2]
		a, _ := randBuf(t, rt, rng, tile.BF16, m*k)
		b, _ := randBuf(t, rt, rng, tile.F32, k*n)
		want, _ := randBuf(t, rt, rng, tile.F32, m*n)
		got, _ := randBuf(t, rt, rng, tile.F32, m*n)
		am := ops.Matrix{Buf: a, Rows: m, Cols: k, LD: k}
		bm := ops.Matrix{Buf: b, Rows: k, Cols: n, LD: n}
		opt := &ops.MatMulOptions{Act: ops.ActGELU}
		if err := ops.MatMul(ctx, rt, ops.Matrix{Buf: want, Rows: m, Cols: n, LD: n}, am, bm, opt); err != nil {
			t.Fatal(err)
		}
		direct, err := ops.ExplainMatMul(rt, ops.Matrix{Buf: want, Rows: m, Cols: n, LD: n}, am, bm, opt)
		if err != nil {
			t.Fatal(err)
		}
		st, err := rt.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for _, stream := range []*runtime.Stream{nil, st} {
			o := *opt
			o.Stream = stream
			call, err := ops.MatMulPlan(rt, ops.Matrix{Buf: got, Rows: m, Cols: n, LD: n}, am, bm, &o)
			if err != nil {
				t.Fatal(err)
			}
			if e := call.Explain(); e.Chosen() == nil || direct.Chosen() == nil || e.Chosen().Name != direct.Chosen().Name {
				t.Fatalf("%v: the call chose %v, the direct call %v", s, e.Chosen(), direct.Chosen())
			}
			for range 2 {
				poison(t, got)
				if err := call.Run(ctx); err != nil {
					t.Fatal(err)
				}
				if err := rt.Synchronize(ctx); err != nil {
					t.Fatal(err)
				}
				if w, g := rawOf(t, want), rawOf(t, got); !bytes.Equal(w, g) {
					t.Fatalf("%v stream %v: the planned call's output differs from the direct call's", s, stream != nil)
				}
			}
		}
	}
}

// TestCallErrors: Plan reports what the direct call does, and a Call fails
// cleanly when it is nil, run with a nil context, or after a buffer it
// names was closed (nothing written); a call that runs nothing plans and
// runs.
func TestCallErrors(t *testing.T) {
	rt := openTest(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(28, 3))
	a, _ := randBuf(t, rt, rng, tile.F32, 6)
	d, _ := randBuf(t, rt, rng, tile.F32, 4)
	am := ops.Matrix{Buf: a, Rows: 2, Cols: 3, LD: 3}
	dm := ops.Matrix{Buf: d, Rows: 2, Cols: 2, LD: 2}
	if _, err := ops.MatMulPlan(rt, dm, am, am, nil); !errors.Is(err, ops.ErrShape) {
		t.Errorf("K mismatch: %v", err)
	}
	if _, err := ops.MatMulPlan(nil, dm, am, am.T(), nil); !errors.Is(err, ops.ErrArgument) {
		t.Errorf("nil runtime: %v", err)
	}
	var nilCall *ops.Call
	if err := nilCall.Run(ctx); !errors.Is(err, ops.ErrArgument) {
		t.Errorf("nil call: %v", err)
	}
	if e := nilCall.Explain(); len(e.Candidates) != 0 {
		t.Errorf("nil call's explanation: %v", e)
	}
	call, err := ops.MatMulPlan(rt, dm, am, am.T(), nil)
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1012 a nil context is the point
	if err := call.Run(nil); !errors.Is(err, ops.ErrArgument) {
		t.Errorf("nil context: %v", err)
	}
	before := rawOf(t, d)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := call.Run(ctx); !errors.Is(err, ops.ErrClosed) {
		t.Errorf("run after closing A: %v", err)
	}
	if !bytes.Equal(before, rawOf(t, d)) {
		t.Error("a failed run wrote D")
	}
	// An all-zero lane mask is a strict no-op: it plans and runs nothing.
	noop, err := ops.MGatherCASPlan(rt, ops.Tile{}, nil, ops.Tile{}, ops.Tile{}, ops.Tile{}, &ops.GatherCASOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := noop.Run(ctx); err != nil {
		t.Errorf("no-op call: %v", err)
	}
	if e := noop.Explain(); e.Op != engine.OpGatherCAS.Name() || len(e.Candidates) != 0 {
		t.Errorf("no-op call's explanation: %+v", e)
	}
}

// rawOf is b's bytes.
func rawOf(t testing.TB, b *runtime.Buffer) []byte {
	t.Helper()
	out := make([]byte, b.Bytes())
	if err := b.Read(context.Background(), 0, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// BenchmarkCallOverhead: a 1×1×1 f32 matmul on the CPU, called directly
// (validation and selection every call) and as a planned Call (launch
// only), so the difference is what planning saves a call.
func BenchmarkCallOverhead(b *testing.B) {
	rt := openTest(b)
	ctx := context.Background()
	buf := func() *runtime.Buffer {
		x, err := rt.FromFloat32(ctx, tile.F32, []float32{1.5})
		if err != nil {
			b.Fatal(err)
		}
		return x
	}
	a, bb, d := ops.MatrixOf(buf()), ops.MatrixOf(buf()), ops.MatrixOf(buf())
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if err := ops.MatMul(ctx, rt, d, a, bb, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("planned", func(b *testing.B) {
		call, err := ops.MatMulPlan(rt, d, a, bb, nil)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := call.Run(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestCallArgsAs: the tests' and benchmarks' one way to a planned call's
// arguments gives them for their own type only.
func TestCallArgsAs(t *testing.T) {
	rt := openTest(t)
	rng := rand.New(rand.NewPCG(28, 4))
	a, _ := randBuf(t, rt, rng, tile.F32, 6)
	d, _ := randBuf(t, rt, rng, tile.F32, 4)
	am := ops.Matrix{Buf: a, Rows: 2, Cols: 3, LD: 3}
	dm := ops.Matrix{Buf: d, Rows: 2, Cols: 2, LD: 2}
	call, err := ops.MatMulPlan(rt, dm, am, am.T(), nil)
	if err != nil {
		t.Fatal(err)
	}
	args, ok := callargs.As[engine.MatMulArgs](call)
	if !ok || args.M != 2 || args.N != 2 || args.K != 3 {
		t.Errorf("matmul call's args: %+v, %v", args, ok)
	}
	if _, ok := callargs.As[engine.AttentionArgs](call); ok {
		t.Error("a matmul call gave attention args")
	}
	var nilCall *ops.Call
	if _, ok := callargs.As[engine.MatMulArgs](nilCall); ok {
		t.Error("a nil call gave args")
	}
	if _, ok := callargs.As[engine.MatMulArgs]("not a call"); ok {
		t.Error("a string gave args")
	}
}
