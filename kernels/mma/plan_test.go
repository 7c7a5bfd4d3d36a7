package mma

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/tcrt-go/tcrt/kernels/ptx"
	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/tile"
)

var (
	a100 = Device{SM: 80, SMs: 108}
	rtx  = Device{SM: 86, SMs: 84}
	h100 = Device{SM: 90, SMs: 132}
)

func TestChooseTile(t *testing.T) {
	for _, c := range []struct {
		dev  Device
		m, n int
		want Tile
	}{
		{a100, 1, 4096, T64x128}, {a100, 64, 64, T64x128}, {a100, 65, 64, T128x64}, {a100, 4096, 33, T128x64},
		{a100, 512, 512, T128x128},   // 2x4 big tiles < 108 SMs
		{a100, 4096, 4096, T256x128}, // 16x32 >= 108
		{rtx, 8192, 8192, T128x128},  // 144 KiB does not fit sm_86
		{Device{SM: 89, SMs: 128}, 8192, 8192, T128x128},
		{h100, 8192, 8192, T256x128}, {h100, 2048, 1024, T128x128}, // 8x8 = 64 < 132
		{Device{SM: 120, SMs: 84}, 8192, 8192, T128x128},
	} {
		if got := ChooseTile(c.dev, c.m, c.n); got != c.want {
			t.Errorf("sm_%d M=%d N=%d: %s, want %s", c.dev.SM, c.m, c.n, got, c.want)
		}
	}
}

func TestPlanMatMul(t *testing.T) {
	p := MatMul{M: 16, N: 4096, K: 8192, In: tile.BF16, Out: tile.F32, A: 0x1000, B: 0x2000, D: 0x3000, C: 0x4000, Bias: 0x5000,
		LDA: 8192, LDB: 4096, LDC: 4096, LDD: 4096, Alpha: 1.5, Beta: 0.5}
	pl, err := PlanMatMul(h100, p)
	if err != nil {
		t.Fatal(err)
	}
	// 32 CTAs of 64x128 on 132 SMs: s = min(ceil(132/32)=5, 8192/256=32, 16) = 5, kc = roundUp(1639, 64) = 1664
	if pl.Tile != T64x128 || pl.Splits != 5 || pl.KC != 1664 || len(pl.Launches) != 2 {
		t.Fatalf("plan %+v", pl)
	}
	l0, l1 := pl.Launches[0], pl.Launches[1]
	name := Config{Tile: T64x128, In: tile.BF16}.Name()
	if l0.Func != name || l1.Func != name || l0.Grid != [3]int{32, 1, 1} || l1.Grid != [3]int{32, 1, 4} ||
		l0.Block != [3]int{128, 1, 1} || l0.SharedBytes != T64x128.Geometry().SharedBytes() {
		t.Fatalf("launches %+v %+v", l0, l1)
	}
	if len(l0.Params) != len(ParamNames) {
		t.Fatalf("%d params, want %d", len(l0.Params), len(ParamNames))
	}
	at := func(ps []uint64, name string) uint64 {
		for i, n := range ParamNames {
			if n == name {
				return ps[i]
			}
		}
		t.Fatalf("no parameter %s", name)
		return 0
	}
	for _, c := range []struct {
		name   string
		l0, l1 uint64
	}{
		{"K", 1664, 8192}, {"kc", 0, 1664}, {"koff", 0, 1664}, {"beta", ptx.F32(0.5), 0}, {"C", 0x4000, 0},
		{"bias", 0x5000, 0}, {"alpha", ptx.F32(1.5), ptx.F32(1.5)}, {"D", 0x3000, 0x3000}, {"lda", 8192, 8192}, {"out", 0, 0},
	} {
		if g0, g1 := at(l0.Params, c.name), at(l1.Params, c.name); g0 != c.l0 || g1 != c.l1 {
			t.Errorf("%s: %#x, %#x; want %#x, %#x", c.name, g0, g1, c.l0, c.l1)
		}
	}
	// the chunks cover K exactly: the first [0, kc), CTA z of the second [kc+z*kc, ...)
	if covered := pl.KC + (pl.Splits-1)*pl.KC; covered < p.K || covered-pl.KC >= p.K {
		t.Errorf("chunks of %d x %d do not tile K=%d", pl.Splits, pl.KC, p.K)
	}
	// no split: activation, 16-bit output, short K, enough CTAs
	for _, q := range []MatMul{
		func() MatMul { q := p; q.Act = ActGELU; return q }(),
		func() MatMul { q := p; q.Out = tile.BF16; return q }(),
		func() MatMul { q := p; q.K = 1000; return q }(),
		func() MatMul { q := p; q.M = 8192; return q }(),
	} {
		pl, err := PlanMatMul(h100, q)
		if err != nil || pl.Splits != 1 || len(pl.Launches) != 1 || at(pl.Launches[0].Params, "kc") != 0 || at(pl.Launches[0].Params, "K") != uint64(q.K) {
			t.Errorf("%+v: plan %+v, %v; want one unsplit launch", q, pl, err)
		}
	}
	// beta 0 drops C
	q := p
	q.Beta, q.K = 0, 64
	if pl, _ := PlanMatMul(h100, q); at(pl.Launches[0].Params, "C") != 0 || at(pl.Launches[0].Params, "ldc") != 0 {
		t.Error("beta 0 still passes C")
	}
}

func TestPlanMatMulErrors(t *testing.T) {
	good := MatMul{M: 7, N: 9, K: 13, In: tile.F16, Out: tile.F16, A: 0x1000, B: 0x2000, D: 0x3000, LDA: 16, LDB: 16, LDD: 9}
	if _, err := PlanMatMul(a100, good); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*MatMul){
		"M 0":          func(p *MatMul) { p.M = 0 },
		"K negative":   func(p *MatMul) { p.K = -1 },
		"lda odd":      func(p *MatMul) { p.LDA = 13 },
		"ldb 12":       func(p *MatMul) { p.LDB = 12 },
		"A unaligned":  func(p *MatMul) { p.A += 8 },
		"B unaligned":  func(p *MatMul) { p.B += 2 },
		"D unaligned":  func(p *MatMul) { p.D++ },
		"act 4":        func(p *MatMul) { p.Act = 4 },
		"out f64":      func(p *MatMul) { p.Out = tile.F64 },
		"out e4m3":     func(p *MatMul) { p.Out = tile.E4M3 },
		"in f32":       func(p *MatMul) { p.In = tile.F32 },
		"no in type":   func(p *MatMul) { p.In = tile.Invalid },
		"too large":    func(p *MatMul) { p.M, p.LDA = 1<<20, 1<<12 },
		"scale on f16": func(p *MatMul) { p.ScaleA, p.ScaleAMode = 0x100, ScaleTensor },
		"scale mode 3": func(p *MatMul) { p.In, p.ScaleB, p.ScaleBMode = tile.E4M3, 0x100, 3 },
		"scale at 0":   func(p *MatMul) { p.In, p.ScaleBMode = tile.E5M2, ScaleVector },
		"ldd too big":  func(p *MatMul) { p.M, p.LDD = 1<<16, math.MaxInt32/1000 },
	} {
		p := good
		mut(&p)
		if _, err := PlanMatMul(a100, p); !errors.Is(err, tile.ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", name, err)
		}
	}
	if _, err := PlanMatMul(Device{SM: 75, SMs: 40}, good); !errors.Is(err, tile.ErrUnsupported) {
		t.Errorf("sm_75: %v, want ErrUnsupported", err)
	}
	// a device reporting less shared memory than the smallest tile
	if _, err := PlanMatMul(Device{SM: 80, SMs: 1, SharedOptin: 48 << 10}, good); !errors.Is(err, tile.ErrUnsupported) {
		t.Errorf("48 KiB: %v, want ErrUnsupported", err)
	}
}

func TestSharedOptin(t *testing.T) {
	for sm, want := range map[int]int{80: 163 << 10, 86: 99 << 10, 89: 99 << 10, 90: 227 << 10, 103: 227 << 10, 121: 99 << 10, 75: 48 << 10} {
		if got := SharedOptin(sm); got != want {
			t.Errorf("sm_%d: %d, want %d", sm, got, want)
		}
	}
}

func TestModule(t *testing.T) {
	m := Module()
	for _, c := range []struct {
		sm   int
		kind backend.ImageKind
		img  int
	}{{80, backend.KindCubin, 80}, {86, backend.KindCubin, 86}, {87, backend.KindCubin, 86}, {89, backend.KindCubin, 86}, {90, backend.KindCubin, 90}, {100, backend.KindPTX, 80}, {120, backend.KindPTX, 80}} {
		img, err := m.Select(c.sm)
		if err != nil || img.Kind != c.kind || img.SM != c.img || len(img.Data) == 0 {
			t.Errorf("sm_%d: %s sm_%d, %v; want %s sm_%d", c.sm, img.Kind, img.SM, err, c.kind, c.img)
		}
	}
	names := map[string]bool{}
	for _, c := range Variants() {
		if names[c.Name()] {
			t.Errorf("duplicate kernel %s", c.Name())
		}
		names[c.Name()] = true
		if !bytes.Contains(modulePTX, []byte(".entry "+c.Name()+"(")) {
			t.Errorf("%s not in the PTX", c.Name())
		}
	}
	if len(names) != 64 {
		t.Errorf("%d kernels, want 64", len(names))
	}
	for _, c := range AttnVariants() {
		if !bytes.Contains(modulePTX, []byte(".entry "+c.Name()+"(")) {
			t.Errorf("%s not in the PTX", c.Name())
		}
	}
}

func TestPlanMatMulF8(t *testing.T) {
	p := MatMul{M: 100, N: 300, K: 77, In: tile.E4M3, Out: tile.BF16, A: 0x1000, B: 0x2000, D: 0x3000, LDA: 80, LDB: 304, LDD: 300,
		Alpha: 1, ScaleA: 0x4000, ScaleAMode: ScaleVector, ScaleB: 0x5000, ScaleBMode: ScaleTensor}
	pl, err := PlanMatMul(a100, p)
	if err != nil || len(pl.Launches) != 1 {
		t.Fatalf("%+v %v", pl, err)
	}
	l := pl.Launches[0]
	if l.Func != "tcrt_mma_128x128_e4m3_nn" {
		t.Errorf("func %s", l.Func)
	}
	want := map[string]uint64{"sA": 0x4000, "sB": 0x5000, "smode": 2 | 1<<2, "out": 2} // bf16: code 2
	for i, n := range ParamNames {
		if w, ok := want[n]; ok && l.Params[i] != w {
			t.Errorf("%s = %#x, want %#x", n, l.Params[i], w)
		}
	}
}

// TestHostileNilProblem: the checks refuse a nil problem instead of
// dereferencing it.
func TestHostileNilProblem(t *testing.T) {
	if err := Check(nil); !errors.Is(err, tile.ErrArgument) {
		t.Errorf("Check(nil) = %v; want ErrArgument", err)
	}
	if err := CheckAttention(nil); !errors.Is(err, tile.ErrArgument) {
		t.Errorf("CheckAttention(nil) = %v; want ErrArgument", err)
	}
}
