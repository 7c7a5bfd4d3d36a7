package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/tile"
)

func open(t *testing.T, o engine.Options) *engine.Runtime {
	t.Helper()
	rt, err := engine.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func TestOpenCPU(t *testing.T) {
	rt := open(t, engine.Options{Backend: engine.BackendCPU, Threads: 3})
	d := rt.Device()
	if d.Backend != engine.BackendCPU || rt.Backend() != engine.BackendCPU {
		t.Fatalf("backend %v", d.Backend)
	}
	if d.Threads != 3 || rt.Threads() != 3 || d.Cores <= 0 || d.Name == "" {
		t.Fatalf("device %+v", d)
	}
	if !strings.HasPrefix(d.String(), "cpu: ") {
		t.Fatalf("String %q", d)
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := engine.Open(engine.Options{Backend: "tpu"}); !errors.Is(err, engine.ErrArgument) {
		t.Errorf("unknown backend: %v", err)
	}
	if _, err := engine.Open(engine.Options{Threads: -1}); !errors.Is(err, engine.ErrArgument) {
		t.Errorf("negative threads: %v", err)
	}
	if _, err := engine.Open(engine.Options{Kernel: "no.such.kernel"}); !errors.Is(err, engine.ErrArgument) {
		t.Errorf("unknown kernel: %v", err)
	}
	if !engine.CUDABuilt() {
		if _, err := engine.Open(engine.Options{Backend: engine.BackendCUDA}); !errors.Is(err, engine.ErrNoDevice) {
			t.Errorf("cuda without the build tag: %v", err)
		}
	}
	t.Setenv("TCRT_THREADS", "x")
	if _, err := engine.Open(engine.Options{}); !errors.Is(err, engine.ErrArgument) {
		t.Errorf("TCRT_THREADS=x: %v", err)
	}
	t.Setenv("TCRT_SIM_ARCH", "0")
	if _, err := engine.Open(engine.Options{Backend: engine.BackendSim}); !errors.Is(err, engine.ErrArgument) {
		t.Errorf("TCRT_SIM_ARCH=0: %v", err)
	}
}

// TestOptionsOverEnvironment: each TCRT_* variable Open reads fills its
// Options field when the field is zero, and a field the caller sets wins
// (a malformed variable is then not even read).
func TestOptionsOverEnvironment(t *testing.T) {
	const ref = "cpu.matmul.reference"
	forcedName := func(rt *engine.Runtime) string { // the kernel forced for a matmul
		a, _ := rt.Alloc(tile.F32, 2, 2)
		d, _ := rt.Alloc(tile.F32, 2, 2)
		m := engine.Matrix{Buf: a, Rows: 2, Cols: 2, LD: 2, BatchStride: 4}
		args := &engine.MatMulArgs{M: 2, N: 2, K: 2, Batch: 1, Alpha: 1, A: m, B: m, D: m}
		args.D.Buf = d
		for _, c := range rt.Explain(engine.OpMatMul.Name(), args).Candidates {
			if strings.HasPrefix(c.Reason, "forced") || strings.HasPrefix(c.Reason, "chosen: forced") {
				return c.Kernel.Name
			}
		}
		return "none"
	}
	cases := []struct {
		env, val string
		set      engine.Options // the explicit field
		got      func(rt *engine.Runtime) string
		fromEnv  string // got with the field zero
		fromOpt  string // got with the field set
	}{
		{"TCRT_BACKEND", "sim", engine.Options{Backend: engine.BackendCPU},
			func(rt *engine.Runtime) string { return string(rt.Backend()) }, "sim", "cpu"},
		{"TCRT_THREADS", "3", engine.Options{Backend: engine.BackendCPU, Threads: 5},
			func(rt *engine.Runtime) string { return fmt.Sprint(rt.Threads()) }, "3", "5"},
		{"TCRT_THREADS", "x", engine.Options{Backend: engine.BackendCPU, Threads: 5},
			func(rt *engine.Runtime) string { return fmt.Sprint(rt.Threads()) }, "error", "5"},
		{"TCRT_KERNEL", ref, engine.Options{Backend: engine.BackendCPU, Kernel: "cpu.matmul.generic"},
			forcedName, ref, "cpu.matmul.generic"},
		{"TCRT_KERNEL", "no.such.kernel", engine.Options{Backend: engine.BackendCPU, Kernel: ref},
			forcedName, "error", ref},
		{"TCRT_SIM_ARCH", "89", engine.Options{Backend: engine.BackendSim, SimArch: 86},
			func(rt *engine.Runtime) string { return fmt.Sprint(rt.Device().Major*10 + rt.Device().Minor) }, "89", "86"},
		{"TCRT_CUDA_LIB", "/nonexistent/env/libcuda.so.1", engine.Options{CUDALib: "/nonexistent/opt/libcuda.so.1"},
			func(rt *engine.Runtime) string {
				why := rt.BackendReason()
				return why[strings.Index(why, "/nonexistent/"):][:len("/nonexistent/env")]
			}, "/nonexistent/env", "/nonexistent/opt"},
	}
	for _, c := range cases {
		t.Run(c.env+"="+c.val, func(t *testing.T) {
			for _, v := range []string{"TCRT_BACKEND", "TCRT_THREADS", "TCRT_KERNEL", "TCRT_SIM_ARCH", "TCRT_CUDA_LIB"} {
				t.Setenv(v, "")
			}
			t.Setenv(c.env, c.val)
			zero := c.set
			switch c.env { // the field the variable stands for, left zero
			case "TCRT_BACKEND":
				zero.Backend = ""
			case "TCRT_THREADS":
				zero.Threads = 0
			case "TCRT_KERNEL":
				zero.Kernel = ""
			case "TCRT_SIM_ARCH":
				zero.SimArch = 0
			case "TCRT_CUDA_LIB":
				zero.CUDALib = ""
			}
			for _, o := range []struct {
				opts engine.Options
				want string
			}{{zero, c.fromEnv}, {c.set, c.fromOpt}} {
				rt, err := engine.Open(o.opts)
				got := "error"
				if err == nil {
					got = c.got(rt)
					rt.Close()
				} else if !errors.Is(err, engine.ErrArgument) {
					t.Errorf("%+v: %v", o.opts, err)
				}
				if got != o.want {
					t.Errorf("%+v: got %s, want %s (err %v)", o.opts, got, o.want, err)
				}
			}
		})
	}
}

func TestBufferRoundTrip(t *testing.T) {
	rt := open(t, engine.Options{Backend: engine.BackendCPU})
	ctx := context.Background()
	vals := []float32{1.5, -2.25, 3.0e-3, 65504, float32(math.Copysign(0, -1)), 7}
	for _, d := range []tile.DType{tile.F32, tile.F16, tile.BF16, tile.F64} {
		b, err := rt.Alloc(d, 2, 3)
		if err != nil {
			t.Fatal(err)
		}
		if b.Len() != 6 || b.Bytes() != 6*d.Size() || b.DType() != d {
			t.Fatalf("%v: len %d bytes %d", d, b.Len(), b.Bytes())
		}
		if err := b.WriteFloat32(ctx, vals); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, 6)
		if err := b.ReadFloat32(ctx, got); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			want := tile.ToFloat32(d, tile.FromFloat32(d, v))
			if math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Errorf("%v[%d]: got %v want %v", d, i, got[i], want)
			}
		}
		b.Close()
	}
	// Raw integers, bit for bit.
	b, err := rt.Alloc(tile.S32, 4)
	if err != nil {
		t.Fatal(err)
	}
	in := []int32{-1, 1 << 30, 7, math.MinInt32}
	if err := engine.WriteRaw(ctx, b, in); err != nil {
		t.Fatal(err)
	}
	out := make([]int32, 4)
	if err := engine.ReadRaw(ctx, b, out); err != nil {
		t.Fatal(err)
	}
	for i := range in {
		if in[i] != out[i] {
			t.Fatalf("raw %d: %d != %d", i, out[i], in[i])
		}
	}
	if err := engine.WriteRaw(ctx, b, []int16{1}); !errors.Is(err, engine.ErrDType) {
		t.Errorf("wrong-size raw write: %v", err)
	}
	if err := b.WriteFloat32(ctx, []float32{1}); !errors.Is(err, engine.ErrDType) {
		t.Errorf("float write to s32: %v", err)
	}
	if err := engine.WriteRaw(ctx, b, make([]int32, 5)); !errors.Is(err, engine.ErrBounds) {
		t.Errorf("oversized write: %v", err)
	}
	b.Close()
	if err := engine.ReadRaw(ctx, b, out); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("read after close: %v", err)
	}
	if b.Close() != nil {
		t.Error("second Close should be a no-op")
	}
}

func TestAllocErrorsAndStats(t *testing.T) {
	rt := open(t, engine.Options{Backend: engine.BackendCPU, MemoryLimit: 1 << 20})
	if _, err := rt.Alloc(tile.F32, 0); !errors.Is(err, engine.ErrShape) {
		t.Errorf("zero dim: %v", err)
	}
	if _, err := rt.Alloc(tile.F32, 4, -1); !errors.Is(err, engine.ErrShape) {
		t.Errorf("negative dim: %v", err)
	}
	if _, err := rt.Alloc(tile.Invalid, 4); !errors.Is(err, engine.ErrDType) {
		t.Errorf("invalid dtype: %v", err)
	}
	if _, err := rt.Alloc(tile.F32, 1<<20); !errors.Is(err, engine.ErrOutOfMemory) {
		t.Errorf("over the limit: %v", err)
	}
	a, _ := rt.Alloc(tile.F32, 100)
	b, _ := rt.Alloc(tile.BF16, 10)
	s := rt.Stats()
	if s.LiveBuffers != 2 || s.LiveBytes != 420 || s.Allocs != 2 {
		t.Fatalf("stats %+v", s)
	}
	a.Close()
	b.Close()
	s = rt.Stats()
	if s.LiveBuffers != 0 || s.LiveBytes != 0 || s.Frees != 2 || s.PeakBytes != 420 {
		t.Fatalf("stats after close %+v", s)
	}
}

func TestStreamOrderAndEvents(t *testing.T) {
	rt := open(t, engine.Options{Backend: engine.BackendCPU})
	ctx := context.Background()
	s, err := rt.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var seq []int
	start, _ := s.Record()
	for i := 0; i < 100; i++ {
		i := i
		if err := s.Enqueue(func() error { seq = append(seq, i); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	s.Enqueue(func() error { time.Sleep(2 * time.Millisecond); return nil })
	end, _ := s.Record()
	if err := s.Synchronize(ctx); err != nil {
		t.Fatal(err)
	}
	for i, v := range seq {
		if v != i {
			t.Fatalf("work ran out of order: %v", seq[:i+1])
		}
	}
	if len(seq) != 100 {
		t.Fatalf("ran %d of 100", len(seq))
	}
	el, err := engine.Elapsed(start, end)
	if err != nil || el < 2*time.Millisecond {
		t.Fatalf("elapsed %v, %v", el, err)
	}
	// Errors surface at the next Synchronize, once.
	boom := errors.New("boom")
	s.Enqueue(func() error { return boom })
	if err := s.Synchronize(ctx); !errors.Is(err, boom) {
		t.Fatalf("sync error %v", err)
	}
	if err := s.Synchronize(ctx); err != nil {
		t.Fatalf("error reported twice: %v", err)
	}
	// A panic in work becomes an error.
	s.Enqueue(func() error { panic("kernel bug") })
	if err := s.Synchronize(ctx); !errors.Is(err, engine.ErrDevice) {
		t.Fatalf("panic: %v", err)
	}
}

func TestCrossStreamEventAndCancel(t *testing.T) {
	rt := open(t, engine.Options{Backend: engine.BackendCPU})
	a, _ := rt.NewStream()
	b, _ := rt.NewStream()
	defer a.Close()
	defer b.Close()
	release := make(chan struct{})
	var flag atomic.Int32
	a.Enqueue(func() error { <-release; flag.Store(1); return nil })
	ev, _ := a.Record()
	if err := b.WaitEvent(ev); err != nil {
		t.Fatal(err)
	}
	var seen atomic.Int32
	b.Enqueue(func() error { seen.Store(flag.Load() + 10); return nil })
	// The wait on b is cancellable while a is held.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := b.Synchronize(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled sync: %v", err)
	}
	if ev.Done() {
		t.Fatal("event done before its work")
	}
	close(release)
	if err := b.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if seen.Load() != 11 {
		t.Fatalf("stream b ran before stream a's event: %d", seen.Load())
	}
	a.Close()
	if err := a.Enqueue(func() error { return nil }); !errors.Is(err, engine.ErrClosed) {
		t.Fatalf("enqueue on closed stream: %v", err)
	}
}

func TestClosedRuntime(t *testing.T) {
	rt, err := engine.Open(engine.Options{Backend: engine.BackendCPU})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := rt.Alloc(tile.F32, 4)
	rt.Close()
	if _, err := rt.Alloc(tile.F32, 4); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("alloc after close: %v", err)
	}
	if _, err := rt.NewStream(); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("stream after close: %v", err)
	}
	if err := b.Check(rt, "op", "x"); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("buffer of closed runtime: %v", err)
	}
}

func TestRegistryExplainAndForce(t *testing.T) {
	ks := engine.Kernels(engine.OpMatMul.Name())
	if len(ks) < 2 {
		t.Fatalf("matmul kernels: %d", len(ks))
	}
	for i := 1; i < len(ks); i++ {
		if ks[i-1].Preference < ks[i].Preference {
			t.Fatalf("kernels not in preference order: %s before %s", ks[i-1].Name, ks[i].Name)
		}
	}
	rt := open(t, engine.Options{Backend: engine.BackendCPU})
	a, _ := rt.Alloc(tile.F32, 2, 2)
	d, _ := rt.Alloc(tile.F32, 2, 2) // an output may not alias an input
	args := &engine.MatMulArgs{M: 2, N: 2, K: 2, Batch: 1, Alpha: 1,
		A: engine.Matrix{Buf: a, Rows: 2, Cols: 2, LD: 2, BatchStride: 4},
		B: engine.Matrix{Buf: a, Rows: 2, Cols: 2, LD: 2, BatchStride: 4},
		D: engine.Matrix{Buf: d, Rows: 2, Cols: 2, LD: 2, BatchStride: 4}}
	e := rt.Explain(engine.OpMatMul.Name(), args)
	if e.Chosen() == nil || e.Chosen().Name == "cpu.matmul.reference" {
		t.Fatalf("chosen %v\n%v", e.Chosen(), e)
	}
	if !strings.Contains(e.String(), "=> "+e.Chosen().Name) {
		t.Fatalf("explanation does not mark the choice:\n%v", e)
	}
	// Select stops at the first kernel that can run a call: the one
	// Explain chooses, for every element type (the preferred kernels
	// reject some).
	for _, dt := range []tile.DType{tile.F32, tile.F16, tile.BF16, tile.E4M3} {
		buf, _ := rt.Alloc(dt, 2, 2)
		call := *args
		call.A.Buf, call.B.Buf = buf, buf
		k, err := rt.Select(engine.OpMatMul.Name(), &call)
		want := rt.Explain(engine.OpMatMul.Name(), &call).Chosen()
		if err != nil || want == nil || k != want {
			t.Fatalf("%v: Select %v, %v; Explain chose %v", dt, k, err, want)
		}
	}
	forced := open(t, engine.Options{Backend: engine.BackendCPU, Kernel: "cpu.matmul.reference"})
	fa, _ := forced.Alloc(tile.F32, 2, 2)
	fd, _ := forced.Alloc(tile.F32, 2, 2)
	args.A.Buf, args.B.Buf, args.D.Buf = fa, fa, fd
	k, err := forced.Select(engine.OpMatMul.Name(), args)
	if err != nil || k.Name != "cpu.matmul.reference" {
		t.Fatalf("forced: %v %v", k, err)
	}
	// A call no kernel supports is ErrUnsupported with the reasons.
	ib, _ := forced.Alloc(tile.S32, 2, 2)
	args.A.Buf = ib
	if _, err := forced.Select(engine.OpMatMul.Name(), args); !errors.Is(err, engine.ErrUnsupported) || !strings.Contains(err.Error(), "s32") {
		t.Fatalf("unsupported: %v", err)
	}
	if _, err := rt.Select("no-such-op", nil); !errors.Is(err, engine.ErrUnsupported) {
		t.Fatalf("unknown op: %v", err)
	}
}

func TestRuntimePoolStatsCPU(t *testing.T) {
	rt, err := engine.Open(engine.Options{Backend: engine.BackendCPU})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if s := rt.PoolStats(); s != (engine.PoolStats{}) {
		t.Fatalf("CPU pool stats %+v, want zero", s)
	}
	if n, err := rt.TrimPool(); n != 0 || err != nil {
		t.Fatalf("TrimPool = %d, %v", n, err)
	}
}

// TestFloat32IOAt: reads and writes at element offsets, for every float
// type, agree with whole-buffer I/O, refuse ranges past the end with
// nothing written, and allocate nothing in proportion to their size.
func TestFloat32IOAt(t *testing.T) {
	rt := open(t, engine.Options{Backend: engine.BackendCPU})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(28, 2))
	for _, d := range []tile.DType{tile.F32, tile.F16, tile.BF16, tile.F64, tile.E4M3, tile.E5M2} {
		const n = 40000 // more than one 32 KiB scratch of every type
		b, err := rt.Alloc(d, n)
		if err != nil {
			t.Fatal(err)
		}
		whole := make([]float32, n)
		for i := range whole {
			whole[i] = rng.Float32()*4 - 2
		}
		if err := b.WriteFloat32(ctx, whole); err != nil {
			t.Fatal(err)
		}
		if err := b.ReadFloat32(ctx, whole); err != nil { // the values as stored
			t.Fatal(err)
		}
		// Overwrite a middle range at an offset, then read it back at the same
		// offset and the whole buffer: only that range changed.
		off, part := 1237, make([]float32, 20011)
		for i := range part {
			part[i] = whole[(i*7)%n]
		}
		if err := b.WriteFloat32At(ctx, off, part); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, len(part))
		if err := b.ReadFloat32At(ctx, off, got); err != nil {
			t.Fatal(err)
		}
		after := make([]float32, n)
		if err := b.ReadFloat32(ctx, after); err != nil {
			t.Fatal(err)
		}
		for i := range after {
			want := whole[i]
			if i >= off && i < off+len(part) {
				want = part[i-off]
				if math.Float32bits(got[i-off]) != math.Float32bits(want) {
					t.Fatalf("%v: ReadFloat32At[%d] = %v, want %v", d, i-off, got[i-off], want)
				}
			}
			if math.Float32bits(after[i]) != math.Float32bits(want) {
				t.Fatalf("%v: element %d = %v, want %v", d, i, after[i], want)
			}
		}
		// Past the end: refused, nothing written.
		for _, c := range []struct{ off, n int }{{n - 3, 4}, {-1, 1}, {n + 1, 0}} {
			err := b.WriteFloat32At(ctx, c.off, make([]float32, c.n))
			if !errors.Is(err, engine.ErrBounds) {
				t.Fatalf("%v: write of %d at %d: %v, want ErrBounds", d, c.n, c.off, err)
			}
			if err := b.ReadFloat32At(ctx, c.off, make([]float32, c.n)); !errors.Is(err, engine.ErrBounds) {
				t.Fatalf("%v: read of %d at %d: %v, want ErrBounds", d, c.n, c.off, err)
			}
		}
		if err := b.ReadFloat32(ctx, got[:0]); err != nil {
			t.Fatal(err)
		}
		check := make([]float32, n)
		if err := b.ReadFloat32(ctx, check); err != nil {
			t.Fatal(err)
		}
		for i := range check {
			if math.Float32bits(check[i]) != math.Float32bits(after[i]) {
				t.Fatalf("%v: a refused write changed element %d", d, i)
			}
		}
		// Allocations do not grow with the size of the transfer (the few a
		// call makes are the runtime-wide synchronisation's, size-free).
		small, large := got[:1], got
		// AllocsPerRun counts the whole process's allocations, so goroutines
		// left by earlier tests can add a few: allow one a call on average.
		as := testing.AllocsPerRun(100, func() { _ = b.ReadFloat32At(ctx, 5, small); _ = b.WriteFloat32At(ctx, 5, small) })
		al := testing.AllocsPerRun(100, func() { _ = b.ReadFloat32At(ctx, 5, large); _ = b.WriteFloat32At(ctx, 5, large) })
		if al > as+1 {
			t.Errorf("%v: %v allocations per read+write of %d values, %v of 1", d, al, len(large), as)
		}
		b.Close()
	}
	ints, err := rt.Alloc(tile.S32, 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := ints.WriteFloat32At(ctx, 0, []float32{1}); !errors.Is(err, engine.ErrDType) {
		t.Fatalf("s32 buffer: %v, want ErrDType", err)
	}
}

func TestFromFloat32(t *testing.T) {
	rt := open(t, engine.Options{Backend: engine.BackendCPU})
	ctx := context.Background()
	vals := []float32{1.5, -2.25, 3, 0.125, -7, 9}
	b, err := rt.FromFloat32(ctx, tile.BF16, vals, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if s := b.Shape(); len(s) != 2 || s[0] != 2 || s[1] != 3 || b.DType() != tile.BF16 {
		t.Fatalf("shape %v dtype %v", s, b.DType())
	}
	got, err := b.Float32s(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range vals { // every value is exact in bf16
		if got[i] != vals[i] {
			t.Fatalf("element %d = %v, want %v", i, got[i], vals[i])
		}
	}
	before := rt.Stats()
	if _, err := rt.FromFloat32(ctx, tile.F32, vals, 4, 2); !errors.Is(err, engine.ErrShape) {
		t.Fatalf("6 values for 4x2: %v, want ErrShape", err)
	}
	if after := rt.Stats(); after != before {
		t.Fatalf("a refused FromFloat32 left memory allocated: %+v -> %+v", before, after)
	}
	var nb *engine.Buffer
	if _, err := nb.Float32s(ctx); !errors.Is(err, engine.ErrArgument) && !errors.Is(err, engine.ErrClosed) {
		t.Fatalf("nil buffer: %v", err)
	}
}
