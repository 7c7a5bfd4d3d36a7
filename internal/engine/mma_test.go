package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tcrt-go/tcrt/kernels/mma"
	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/tile"
)

// fakeSM is the fake GPU of hostfallback_test.go with a chosen compute
// capability, SM count and shared memory: a device description of an A100
// or H100 (a real driver: it compiles PTX) for selection tests.
type fakeSM struct {
	fakeGPU
	major, minor, sms, shared int
}

func (f fakeSM) Device() Device {
	return Device{Backend: f.Kind(), Name: "fake", Major: f.major, Minor: f.minor, SMs: f.sms, SharedPerBlockOptin: f.shared, JIT: true}
}

func (f fakeSM) Kind() BackendKind { return BackendKind(fmt.Sprintf("fakesm%d%d", f.major, f.minor)) }

var fakeSMs sync.Map // registered fake kinds

func openFakeSM(t *testing.T, f fakeSM) *Runtime {
	t.Helper()
	if _, dup := fakeSMs.LoadOrStore(f.Kind(), true); !dup {
		backend.Register(backend.Registration{Kind: f.Kind(), Open: func(backend.Options) (backend.Backend, error) { return f, nil }})
	}
	rt, err := Open(Options{Backend: f.Kind()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// mmaArgs builds a call D = op(A)·op(B) on rt, A's and B's rows padded to
// a multiple of 8 elements.
func mmaArgs(t *testing.T, rt *Runtime, in, out tile.DType, m, n, k int, ta, tb bool) *MatMulArgs {
	t.Helper()
	mat := func(dt tile.DType, r, c int, tr bool, pad int) Matrix {
		if tr {
			r, c = c, r
		}
		ld := (c + pad - 1) / pad * pad
		b, err := rt.Alloc(dt, r, ld)
		if err != nil {
			t.Fatal(err)
		}
		return Matrix{Buf: b, Rows: r, Cols: c, LD: ld, BatchStride: r * ld, Trans: tr}
	}
	return &MatMulArgs{M: m, N: n, K: k, Batch: 1, Alpha: 1,
		A: mat(in, m, k, ta, 8), B: mat(in, k, n, tb, 8), D: mat(out, m, n, false, 1)}
}

// TestMMASelection: on device descriptions of an A100 (sm_80) and an H100
// (sm_90), Explain picks the PTX matmul for f16/bf16 calls, not the host
// fallback; an sm_75 device and f32 operands fall back to the host.
func TestMMASelection(t *testing.T) {
	for _, f := range []fakeSM{{major: 8, minor: 0, sms: 108, shared: 163 << 10}, {major: 9, minor: 0, sms: 132, shared: 227 << 10}, {major: 12, minor: 0, sms: 84}} {
		rt := openFakeSM(t, f)
		for _, c := range []struct {
			in, out tile.DType
			m, n, k int
			ta, tb  bool
		}{{tile.BF16, tile.BF16, 8192, 8192, 8192, false, false}, {tile.F16, tile.F32, 1, 4096, 4096, false, true},
			{tile.BF16, tile.F16, 7, 129, 13, true, true}, {tile.F16, tile.BF16, 1000, 64, 129, true, false},
			{tile.E4M3, tile.BF16, 33, 100, 200, false, true}, {tile.E5M2, tile.F32, 1, 64, 64, false, false}} {
			args := mmaArgs(t, rt, c.in, c.out, c.m, c.n, c.k, c.ta, c.tb)
			e := rt.Explain(OpMatMul.name, args)
			if k := e.Chosen(); k == nil || k.Name != "ptx.matmul.mma" {
				t.Errorf("sm_%d%d %v: chose %v:\n%s", f.major, f.minor, c, k, e)
			}
		}
		e := rt.Explain(OpMatMul.name, mmaArgs(t, rt, tile.F32, tile.F32, 8, 8, 8, false, false))
		if k := e.Chosen(); k == nil || !strings.HasPrefix(k.Name, hostFallbackPrefix) {
			t.Errorf("f32 on sm_%d%d: chose %v", f.major, f.minor, k)
		}
	}
	rt := openFakeSM(t, fakeSM{major: 7, minor: 5, sms: 40, shared: 64 << 10})
	e := rt.Explain(OpMatMul.name, mmaArgs(t, rt, tile.F16, tile.F16, 64, 64, 64, false, false))
	if k := e.Chosen(); k == nil || k.Name == "ptx.matmul.mma" || !strings.Contains(e.String(), "needs sm_80 or newer") {
		t.Errorf("sm_75 chose %v:\n%s", k, e)
	}
}

// TestMMASupports checks each rule of mmaMatMulSupports on the CPU.
func TestMMASupports(t *testing.T) {
	rt := openFakeSM(t, fakeSM{major: 8, minor: 0, sms: 108, shared: 163 << 10})
	ok := func() *MatMulArgs { return mmaArgs(t, rt, tile.F16, tile.F16, 7, 9, 13, false, false) }
	if err := mmaMatMulSupports(ok()); err != nil {
		t.Fatalf("odd shape rejected: %v", err)
	}
	f32, _ := rt.Alloc(tile.F32, 9)
	f16, _ := rt.Alloc(tile.F16, 9)
	e4, _ := rt.Alloc(tile.E4M3, 13, 16)
	for name, c := range map[string]struct {
		mut  func(a *MatMulArgs)
		want string
	}{
		"f32 in":     {func(a *MatMulArgs) { a.A.Buf, a.B.Buf = f32, f32 }, "both f16, bf16"},
		"mixed in":   {func(a *MatMulArgs) { a.B = mmaArgs(t, rt, tile.BF16, tile.F16, 7, 9, 13, false, false).B }, "both f16, bf16"},
		"f8 scale 5": {func(a *MatMulArgs) { *a = *mmaArgs(t, rt, tile.E4M3, tile.F16, 7, 9, 13, false, false); a.ScaleA = f32 }, "1 or M"},
		"e4m3 out":   {func(a *MatMulArgs) { a.D.Buf = e4 }, "output element type"},
		"C type":     {func(a *MatMulArgs) { a.Beta, a.C = 1, Matrix{Buf: f32, LD: 9} }, "D's element type"},
		"f16 bias":   {func(a *MatMulArgs) { a.Bias = f16 }, "bias must be f32"},
		"scales":     {func(a *MatMulArgs) { a.ScaleA = f32 }, "float8"},
		"act":        {func(a *MatMulArgs) { a.Act = 9 }, "activation"},
		"lda 13":     {func(a *MatMulArgs) { a.A.LD = 13 }, "multiples of 8"},
		"A offset 4": {func(a *MatMulArgs) { a.A.Offset = 4 }, "16-byte aligned"},
		"batch 9":    {func(a *MatMulArgs) { a.Batch, a.B.BatchStride = 2, 9 }, "batch strides"},
		"32-bit":     {func(a *MatMulArgs) { a.M, a.A.Rows, a.A.LD = 1<<20, 1<<20, 1<<12 }, "32-bit"},
	} {
		a := ok()
		c.mut(a)
		err := mmaMatMulSupports(a)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error about %q", name, err, c.want)
		}
	}
	// float8 with per-row A and per-tensor B scales
	sa, _ := rt.Alloc(tile.F32, 7)
	sb, _ := rt.Alloc(tile.F32, 1)
	f8 := mmaArgs(t, rt, tile.E5M2, tile.F32, 7, 9, 13, false, false)
	f8.ScaleA, f8.ScaleB = sa, sb
	if p, err := mmaMatMul(f8, nil); err != nil || mmaMatMulSupports(f8) != nil || p.In != tile.E5M2 || p.ScaleAMode != mma.ScaleVector || p.ScaleBMode != mma.ScaleTensor {
		t.Errorf("float8 call: %+v, %v, %v", p, err, mmaMatMulSupports(f8))
	}
	// the conversion the launch uses: types, layout, offsets in bytes
	a := mmaArgs(t, rt, tile.BF16, tile.F32, 100, 200, 300, true, false)
	a.A.Offset, a.D.Offset, a.Beta = 8, 3, 0.5
	p, err := mmaMatMul(a, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.In != tile.BF16 || p.Out != tile.F32 || !p.TransA || p.TransB || p.A != 16 || p.D != 12 || p.C != 0 || p.Beta != 0 ||
		p.LDA != 104 || p.LDB != 200 || p.LDD != 200 || p.M != 100 || p.N != 200 || p.K != 300 {
		t.Errorf("converted %+v", p)
	}
}

// mmaAttnArgs builds a dense [batch, seq, heads, d] attention call on rt.
func mmaAttnArgs(t *testing.T, rt *Runtime, dt tile.DType, batch, hq, hkv, d, nq, nk int) *AttentionArgs {
	t.Helper()
	view := func(seq, heads int) AttnView {
		b, err := rt.Alloc(dt, batch, seq, heads, d)
		if err != nil {
			t.Fatal(err)
		}
		return AttnView{Buf: b, Batch: batch, Seq: seq, Heads: heads, HeadDim: d,
			BatchStride: seq * heads * d, SeqStride: heads * d, HeadStride: d}
	}
	return &AttentionArgs{Batch: batch, HeadsQ: hq, HeadsKV: hkv, HeadDim: d, SeqQ: nq, SeqKV: nk,
		Q: view(nq, hq), K: view(nk, hkv), V: view(nk, hkv), O: view(nq, hq),
		Scale: 0.125, Causal: true, WindowLeft: -1, WindowRight: -1}
}

// TestMMAAttentionSelection: Explain on sm_80 and sm_90 descriptions picks
// the PTX attention for f16/bf16 prefill, decode over a contiguous and a
// paged cache, and falls back to the host for f32 or D = 96.
func TestMMAAttentionSelection(t *testing.T) {
	for _, f := range []fakeSM{{major: 8, minor: 0, sms: 108, shared: 163 << 10}, {major: 9, minor: 0, sms: 132, shared: 227 << 10}} {
		rt := openFakeSM(t, f)
		paged := mmaAttnArgs(t, rt, tile.F16, 1, 8, 8, 128, 1, 64)
		paged.PageSize, paged.BlockTable, paged.BlocksPerSeq, paged.SeqLensKV = 16, []int32{0, 1, 2, 3}, 4, []int{64}
		for _, a := range []*AttentionArgs{
			mmaAttnArgs(t, rt, tile.BF16, 2, 16, 16, 128, 300, 300),
			mmaAttnArgs(t, rt, tile.F16, 3, 32, 8, 64, 1, 77),
			mmaAttnArgs(t, rt, tile.F16, 1, 8, 1, 256, 9, 9),
			paged,
		} {
			e := rt.Explain(OpAttention.name, a)
			if k := e.Chosen(); k == nil || k.Name != "ptx.attention.mma" {
				t.Errorf("sm_%d%d: chose %v:\n%s", f.major, f.minor, k, e)
			}
		}
		badPage := mmaAttnArgs(t, rt, tile.F16, 1, 8, 8, 128, 1, 64)
		badPage.PageSize, badPage.BlockTable, badPage.BlocksPerSeq, badPage.SeqLensKV = 24, []int32{0, 1, 2}, 3, []int{64}
		for name, a := range map[string]*AttentionArgs{
			"page 24": badPage, "f32": mmaAttnArgs(t, rt, tile.F32, 1, 2, 2, 64, 4, 4), "d96": mmaAttnArgs(t, rt, tile.F16, 1, 2, 2, 96, 4, 4),
		} {
			if k := rt.Explain(OpAttention.name, a).Chosen(); k == nil || !strings.HasPrefix(k.Name, hostFallbackPrefix) {
				t.Errorf("%s on sm_%d%d: chose %v", name, f.major, f.minor, k)
			}
		}
	}
}

// countingSM is fakeSM counting its memory allocations and frees.
type countingSM struct {
	fakeSM
	allocs, frees *atomic.Int64
}

type countedMem struct {
	*fakeGPUMem
	frees *atomic.Int64
}

func (m countedMem) Free() error { m.frees.Add(1); return nil }

func (c countingSM) Kind() BackendKind { return c.fakeSM.Kind() + "count" }

func (c countingSM) Device() Device { d := c.fakeSM.Device(); d.Backend = c.Kind(); return d }

func (c countingSM) Alloc(n int) (backend.Memory, error) {
	c.allocs.Add(1)
	return countedMem{&fakeGPUMem{data: make([]byte, n)}, c.frees}, nil
}

var (
	countingOnce sync.Once
	counting     countingSM // the backend registered once; its counters persist across -count runs
)

// TestMMAAttentionPagedRelease: on a device without GPU streams (the fake)
// the paged launch fails after uploading the block table and key counts
// and allocating the split workspace; the error wraps ErrUnsupported and
// every temporary allocation is freed.
func TestMMAAttentionPagedRelease(t *testing.T) {
	countingOnce.Do(func() {
		counting = countingSM{fakeSM: fakeSM{major: 9, minor: 0, sms: 132, shared: 227 << 10}, allocs: new(atomic.Int64), frees: new(atomic.Int64)}
		backend.Register(backend.Registration{Kind: counting.Kind(), Open: func(backend.Options) (backend.Backend, error) { return counting, nil }})
	})
	c := counting
	rt, err := Open(Options{Backend: c.Kind()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	a := mmaAttnArgs(t, rt, tile.BF16, 2, 8, 2, 128, 1, 64)
	a.PageSize, a.BlocksPerSeq, a.SeqLensKV = 16, 64, []int{1000, 3}
	a.BlockTable = make([]int32, 2*64)
	allocs, frees := c.allocs.Load(), c.frees.Load()
	err = rt.Run(context.Background(), nil, OpAttention.name, a)
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Run: %v, want ErrUnsupported", err)
	}
	na, nf := c.allocs.Load()-allocs, c.frees.Load()-frees
	if na < 4 || nf != na {
		t.Errorf("the call allocated %d and freed %d device memories (want the table, lengths and two workspaces made and freed)", na, nf)
	}
}

// TestMMAExplainOn: ExplainOn with a bare device description (no runtime
// on it) picks the PTX matmul on sm_80 and sm_90 parts and the host
// fallback's absence is explained on the CPU.
func TestMMAExplainOn(t *testing.T) {
	cpu, err := Open(Options{Backend: BackendCPU})
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	args := mmaArgs(t, cpu, tile.BF16, tile.F32, 129, 1000, 64, false, false)
	for _, dev := range []Device{
		{Backend: BackendCUDA, Name: "A100", Major: 8, Minor: 0, SMs: 108, SharedPerBlockOptin: 163 << 10, JIT: true},
		{Backend: BackendCUDA, Name: "H200", Major: 9, Minor: 0, SMs: 132, SharedPerBlockOptin: 227 << 10, JIT: true},
	} {
		e := ExplainOn(dev, OpMatMul.name, args)
		if k := e.Chosen(); k == nil || k.Name != "ptx.matmul.mma" {
			t.Errorf("%s: chose %v:\n%s", dev.Name, k, e)
		}
	}
}
