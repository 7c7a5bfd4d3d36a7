package engine

import (
	"maps"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

// withSM86MatMul registers the sm86mm kernel (as cuda_sm86mm.go does under
// -tags cuda) for the test's duration.
func withSM86MatMul(t *testing.T) {
	t.Helper()
	registry.mu.Lock()
	byName, ordered := maps.Clone(registry.byName), append([]*Kernel(nil), registry.ordered...)
	registry.mu.Unlock()
	t.Cleanup(func() {
		registry.mu.Lock()
		registry.byName, registry.ordered = byName, ordered
		registry.mu.Unlock()
	})
	if lookupKernel("sass.matmul.sm86mm") == nil {
		RegisterKernel(OpMatMul, sm86mmKernel())
	}
}

func sm86Args(t *testing.T, rt *Runtime, in tile.DType, M, N, K int) *MatMulArgs {
	t.Helper()
	a, err := rt.Alloc(in, M, K)
	if err != nil {
		t.Fatal(err)
	}
	b, err := rt.Alloc(in, K, (N+7)/8*8)
	if err != nil {
		t.Fatal(err)
	}
	d, err := rt.Alloc(tile.F32, M, N)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close(); d.Close() })
	return &MatMulArgs{M: M, N: N, K: K, Batch: 1,
		A: Matrix{Buf: a, Rows: M, Cols: K, LD: K, BatchStride: M * K},
		B: Matrix{Buf: b, Rows: K, Cols: N, LD: (N + 7) / 8 * 8, BatchStride: K * (N + 7) / 8 * 8},
		D: Matrix{Buf: d, Rows: M, Cols: N, LD: N, BatchStride: M * N}, Alpha: 1}
}

func sm86Candidate(e Explanation) Candidate {
	for _, c := range e.Candidates {
		if c.Kernel.Name == "sass.matmul.sm86mm" {
			return c
		}
	}
	return Candidate{}
}

// TestSM86MatMulExplainCPU: on the CPU backend Explain lists the SASS
// kernel and rejects it because it needs the CUDA backend.
func TestSM86MatMulExplainCPU(t *testing.T) {
	withSM86MatMul(t)
	rt, err := Open(Options{Backend: BackendCPU})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	e := rt.Explain(OpMatMul.name, sm86Args(t, rt, tile.F16, 64, 64, 64))
	c := sm86Candidate(e)
	if c.Kernel == nil || c.Chosen || !strings.Contains(c.Reason, "needs a GPU; runtime is on cpu") {
		t.Fatalf("sm86mm candidate %+v in\n%s", c, e)
	}
	if k := e.Chosen(); k == nil || k.Arch.ISA != ISACPU {
		t.Fatalf("chosen %v", k)
	}
	t.Logf("\n%s", e)
}

// TestSM86MatMulExplainFakeGPU: on an sm_86 device the SASS kernel is
// chosen for a call it supports and rejected, with the rule's reason, for
// one it does not (the host fallback then runs it).
func TestSM86MatMulExplainFakeGPU(t *testing.T) {
	withSM86MatMul(t)
	rt := openFakeGPU(t)
	e := rt.Explain(OpMatMul.name, sm86Args(t, rt, tile.BF16, 100, 70, 64))
	if k := e.Chosen(); k == nil || k.Name != "sass.matmul.sm86mm" {
		t.Fatalf("chosen %v:\n%s", k, e)
	}
	e = rt.Explain(OpMatMul.name, sm86Args(t, rt, tile.F16, 100, 70, 12))
	if c := sm86Candidate(e); c.Chosen || !strings.Contains(c.Reason, "multiple of 8") {
		t.Fatalf("K=12: %+v\n%s", c, e)
	}
}

// sm86ArgsT is an f16 call with op(A) M x K and op(B) K x N stored as
// the layout says, every stored row padded to ld = roundUp(cols, 8).
func sm86ArgsT(t *testing.T, rt *Runtime, M, N, K int, ta, tb bool) *MatMulArgs {
	t.Helper()
	r8 := func(x int) int { return (x + 7) / 8 * 8 }
	mat := func(rows, cols int, trans bool) Matrix {
		buf, err := rt.Alloc(tile.F16, rows, r8(cols))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { buf.Close() })
		return Matrix{Buf: buf, Rows: rows, Cols: cols, LD: r8(cols), BatchStride: rows * r8(cols), Trans: trans}
	}
	a, b := mat(M, K, false), mat(K, N, false)
	if ta {
		a = mat(K, M, true)
	}
	if tb {
		b = mat(N, K, true)
	}
	d, err := rt.Alloc(tile.F32, M, N)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return &MatMulArgs{M: M, N: N, K: K, Batch: 1, A: a, B: b,
		D: Matrix{Buf: d, Rows: M, Cols: N, LD: N, BatchStride: M * N}, Alpha: 1}
}

// TestSM86MatMulTransposed: every layout is chosen on sm_86; K % 8 is
// required except for TN; an operand copied along M or N needs its rows
// padded to 8 readable elements.
func TestSM86MatMulTransposed(t *testing.T) {
	withSM86MatMul(t)
	rt := openFakeGPU(t)
	for _, l := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
		if k := rt.Explain(OpMatMul.name, sm86ArgsT(t, rt, 100, 70, 64, l[0], l[1])).Chosen(); k == nil || k.Name != "sass.matmul.sm86mm" {
			t.Errorf("layout %v: chosen %v", l, k)
		}
		c := sm86Candidate(rt.Explain(OpMatMul.name, sm86ArgsT(t, rt, 100, 70, 12, l[0], l[1])))
		if tn := l == [2]bool{true, false}; tn != c.Chosen || !tn && !strings.Contains(c.Reason, "multiple of 8") {
			t.Errorf("layout %v K=12: %+v", l, c)
		}
	}
	// A^T, M = 70, lda = 72, and a buffer that ends at the last row's
	// 70th element (the kernel's copies read 72)
	a := sm86ArgsT(t, rt, 70, 64, 64, true, false)
	short, err := rt.Alloc(tile.F16, 63*72+70)
	if err != nil {
		t.Fatal(err)
	}
	defer short.Close()
	a.A.Buf = short
	if c := sm86Candidate(rt.Explain(OpMatMul.name, a)); c.Chosen || !strings.Contains(c.Reason, "A's last row needs 72") {
		t.Errorf("A^T short buffer: %+v", c)
	}
	// B^T needs no N padding: N = 70, ldb = K
	b := sm86ArgsT(t, rt, 64, 70, 64, false, true)
	if b.B.LD != 64 {
		t.Fatalf("ldb %d", b.B.LD)
	}
	if k := rt.Explain(OpMatMul.name, b).Chosen(); k == nil || k.Name != "sass.matmul.sm86mm" {
		t.Errorf("B^T N=70: chosen %v", k)
	}
}
