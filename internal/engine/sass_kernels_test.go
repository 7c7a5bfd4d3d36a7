package engine

import (
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/kernels/sm86"
	"github.com/tcrt-go/tcrt/tile"
)

// TestSASSKernelsNotOnCPU: on the CPU backend Explain lists the SASS
// kernels and rejects each because it needs the CUDA backend; a CPU kernel
// is chosen.
func TestSASSKernelsNotOnCPU(t *testing.T) {
	rt, err := Open(Options{Backend: BackendCPU})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	x, _ := rt.Alloc(tile.F32, 8, 8)
	q, _ := rt.Alloc(tile.E4M3, 8, 8)
	qa := &QuantizeArgs{X: x, Q: q, Rows: 8, Cols: 8, Gran: fallback.PerTensor, Mode: tile.Saturate, Given: true, Scale: 2}
	mem, _ := rt.Alloc(tile.F32, 16)
	idx, _ := rt.Alloc(tile.S32, 8)
	src, _ := rt.Alloc(tile.F32, 8)
	sa := &ScatterArgs{Mode: fallback.IndexElements, Op: fallback.ScatterAdd, Mem: mem, MemRows: 16,
		Idx: DenseTile(idx), Src: DenseTile(src), OOB: tile.OOBSkip}
	for _, c := range []struct {
		op    string
		args  any
		names []string
	}{
		{OpQuantize.name, qa, []string{sassQuantizeSM86, sassQuantizeSM89}},
		{OpScatter.name, sa, []string{sassScatterAdd}},
	} {
		e := rt.Explain(c.op, c.args)
		if k := e.Chosen(); k == nil || k.Arch.ISA != ISACPU {
			t.Fatalf("%s: chosen %v\n%v", c.op, k, e)
		}
		for _, name := range c.names {
			found := false
			for _, cand := range e.Candidates {
				if cand.Kernel.Name != name {
					continue
				}
				found = true
				if cand.Chosen || !strings.Contains(cand.Reason, "needs a GPU") {
					t.Errorf("%s: %s: chosen=%v, reason %q", c.op, name, cand.Chosen, cand.Reason)
				}
			}
			if !found {
				t.Errorf("%s: Explain does not list %s:\n%v", c.op, name, e)
			}
		}
	}
}

// TestSASSSupports checks the subsets the SASS kernels accept: every
// rejection names its reason (CPU buffers have no device address, which is
// the last check, so an otherwise supported call is rejected for that).
func TestSASSSupports(t *testing.T) {
	rt, err := Open(Options{Backend: BackendCPU})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	x, _ := rt.Alloc(tile.F32, 4, 4)
	h, _ := rt.Alloc(tile.F16, 4, 4)
	q, _ := rt.Alloc(tile.E5M2, 4, 4)
	base := QuantizeArgs{X: x, Q: q, Rows: 4, Cols: 4, Gran: fallback.PerTensor, Mode: tile.Saturate, Given: true, Scale: 1}
	for _, c := range []struct {
		mut  func(a *QuantizeArgs)
		want string
	}{
		{func(a *QuantizeArgs) {}, "device addresses"},
		{func(a *QuantizeArgs) { a.X = h }, "f32 only"},
		{func(a *QuantizeArgs) { a.Q = x }, "not a float8"},
		{func(a *QuantizeArgs) { a.Gran = fallback.PerRow }, "one scale per tensor"},
		{func(a *QuantizeArgs) { a.Given = false }, "given scalar scale"},
		{func(a *QuantizeArgs) { a.Mode = tile.NonSaturating }, "saturates"},
		{func(a *QuantizeArgs) { a.Amax = x }, "Amax"},
		{func(a *QuantizeArgs) { a.Scale = 0 }, "positive and finite"},
	} {
		a := base
		c.mut(&a)
		if err := sassQuantizeSupports(&a); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("quantize: %v, want %q", err, c.want)
		}
	}
	mem, _ := rt.Alloc(tile.F32, 16)
	idx, _ := rt.Alloc(tile.S32, 8)
	idx64, _ := rt.Alloc(tile.S64, 8)
	src, _ := rt.Alloc(tile.F32, 8)
	sb := ScatterArgs{Mode: fallback.IndexElements, Op: fallback.ScatterAdd, Mem: mem, MemRows: 16,
		Idx: DenseTile(idx), Src: DenseTile(src), OOB: tile.OOBClamp}
	if err := sassScatterSupports(&sb); err != nil {
		t.Errorf("scatter: %v", err)
	}
	for _, c := range []struct {
		mut  func(a *ScatterArgs)
		want string
	}{
		{func(a *ScatterArgs) { a.Op = fallback.ScatterMax }, "adds"},
		{func(a *ScatterArgs) { a.Deterministic = true }, "unordered"},
		{func(a *ScatterArgs) { a.Idx = DenseTile(idx64) }, "s32 or u32"},
		{func(a *ScatterArgs) { a.OOB = tile.OOBError }, "preflight"},
		{func(a *ScatterArgs) { a.OOB = tile.OOBWrap }, "skips or clamps"},
		{func(a *ScatterArgs) { a.Src.Desc.Cols = 2; a.Src.Desc.ValidCols = 1 }, "padded"},
	} {
		a := sb
		c.mut(&a)
		if err := sassScatterSupports(&a); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("scatter: %v, want %q", err, c.want)
		}
	}
	if sm86.ModuleFor(86) == nil {
		t.Error("no sm_86 cubin embedded")
	}
}
