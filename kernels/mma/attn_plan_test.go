package mma

import (
	"errors"
	"testing"

	"github.com/tcrt-go/tcrt/kernels/ptx"
	"github.com/tcrt-go/tcrt/tile"
)

func attnParam(t *testing.T, l Launch, name string) uint64 {
	t.Helper()
	if len(l.Params) != len(AttnParamNames) {
		t.Fatalf("%d params, want %d", len(l.Params), len(AttnParamNames))
	}
	for i, n := range AttnParamNames {
		if n == name {
			return l.Params[i]
		}
	}
	t.Fatalf("no parameter %s", name)
	return 0
}

func TestPlanAttention(t *testing.T) {
	// dense [4, 8192, 16, 128] causal prefill
	st := [3]int{8192 * 16 * 128, 16 * 128, 128}
	p := Attention{In: tile.BF16, D: 128, Batch: 4, HeadsQ: 16, HeadsKV: 16, SeqQ: 8192, SeqKV: 8192,
		Q: 0x1000, K: 0x2000, V: 0x3000, O: 0x4000, QStrides: st, KStrides: st, VStrides: st, OStrides: st,
		Scale: 0.125, Causal: true, WindowLeft: -1, WindowRight: -1}
	ls, err := PlanAttention(h100, p)
	if err != nil || len(ls) != 1 {
		t.Fatalf("%v %v", ls, err)
	}
	l := ls[0]
	if l.Grid != [3]int{128, 16, 4} || l.Block != [3]int{128, 1, 1} || l.Func != "tcrt_mma_attn_d128_bf16" || l.SharedBytes != 80<<10 {
		t.Errorf("launch %+v", l)
	}
	for name, want := range map[string]uint64{"nq": 8192, "nk": 8192, "wr": 0, "wl": ptx.I32(-1), "group": 1, "scale": ptx.F32(0.125), "q_ss": 2048, "LSE": 0} {
		if got := attnParam(t, l, name); got != want {
			t.Errorf("%s = %#x, want %#x", name, got, want)
		}
	}
	// varlen: one launch per non-empty sequence, bases moved to its first row
	v := p
	v.Batch, v.HeadsKV, v.Causal, v.WindowRight = 3, 4, false, -1
	v.CuSeqQ, v.CuSeqKV = []int{0, 5, 5, 70}, []int{0, 9, 20, 100}
	v.LSE, v.LSEHeadStride = 0x9000, 70
	ls, err = PlanAttention(a100, v)
	if err != nil || len(ls) != 2 {
		t.Fatalf("varlen: %d launches, %v", len(ls), err)
	}
	for i, c := range []struct {
		q0, k0, nq, nk int
	}{{0, 0, 5, 9}, {5, 20, 65, 80}} {
		l := ls[i]
		if attnParam(t, l, "nq") != uint64(c.nq) || attnParam(t, l, "nk") != uint64(c.nk) || l.Grid != [3]int{ceilDiv(c.nq, 64), 16, 1} ||
			attnParam(t, l, "Q") != 0x1000+uint64(2*c.q0*st[1]) || attnParam(t, l, "K") != 0x2000+uint64(2*c.k0*st[1]) ||
			attnParam(t, l, "LSE") != 0x9000+uint64(4*c.q0) || attnParam(t, l, "group") != 4 || attnParam(t, l, "wr") != ptx.I32(-1) {
			t.Errorf("sequence %d: %+v", i, l)
		}
	}
	for name, mut := range map[string]func(*Attention){
		"d 96":      func(a *Attention) { a.D = 96 },
		"heads 3/2": func(a *Attention) { a.HeadsQ, a.HeadsKV = 3, 2 },
		"stride 12": func(a *Attention) { a.KStrides[1] = 12 },
		"Q offset":  func(a *Attention) { a.Q += 2 },
		"LSE":       func(a *Attention) { a.LSE = 2 },
		"e4m3":      func(a *Attention) { a.In = tile.E4M3 },
		"no type":   func(a *Attention) { a.In = tile.Invalid },
	} {
		q := p
		mut(&q)
		if _, err := PlanAttention(h100, q); !errors.Is(err, tile.ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", name, err)
		}
	}
	if _, err := PlanAttention(Device{SM: 75, SMs: 1}, p); !errors.Is(err, tile.ErrUnsupported) {
		t.Errorf("sm_75: %v", err)
	}
}

func TestPlanAttentionPaged(t *testing.T) {
	// decode: 8 sequences, 32 query heads over 8 KV heads, pages of 16 tokens
	st := [3]int{16 * 8 * 128, 8 * 128, 128}
	ost := [3]int{32 * 128, 32 * 128, 128}
	p := Attention{In: tile.F16, D: 128, Batch: 8, HeadsQ: 32, HeadsKV: 8, SeqQ: 1,
		Q: 0x1000, K: 0x2000, V: 0x3000, O: 0x4000, QStrides: ost, KStrides: st, VStrides: st, OStrides: ost,
		Scale: 0.088, Causal: true, WindowLeft: -1, WindowRight: -1,
		PageSize: 16, BlocksPerSeq: 256, SeqLensKV: []int{4000, 17, 1, 2048, 300, 9, 4096, 33},
		Table: 0x5000, Lens: 0x6000, WsO: 0x10000, WsL: 0x20000}
	splits, chunk := AttnSplits(h100, &p, 0)
	// 256 CTAs, 132 SMs: ceil(264/256) = 2 splits of roundUp(2048, 64)
	if splits != 2 || chunk != 2048 {
		t.Fatalf("splits %d chunk %d", splits, chunk)
	}
	ls, err := PlanAttention(h100, p)
	if err != nil || len(ls) != 2 {
		t.Fatalf("%d launches, %v", len(ls), err)
	}
	k, c := ls[0], ls[1]
	if k.Func != "tcrt_mma_attn_paged_d128_f16" || k.Grid != [3]int{1, 32, 16} || len(k.Params) != len(AttnPagedParamNames) {
		t.Errorf("kernel launch %+v", k)
	}
	want := map[string]uint64{"table": 0x5000, "bps": 256, "pshift": 4, "lens": 0x6000, "splits": 2, "chunk": 2048, "wsO": 0x10000, "wsL": 0x20000, "heads": 32, "k_bs": uint64(st[0])}
	for i, n := range AttnPagedParamNames {
		if w, ok := want[n]; ok && k.Params[i] != w {
			t.Errorf("%s = %#x, want %#x", n, k.Params[i], w)
		}
	}
	if c.Func != CombineName(128, tile.F16) || c.Grid != [3]int{1, 32, 8} || c.Block != [3]int{128, 1, 1} || len(c.Params) != len(CombineParamNames) {
		t.Errorf("combine launch %+v", c)
	}
	o, l := AttnWorkspace(&p, splits)
	if o != 8*2*32*128*4 || l != 8*2*32*4 {
		t.Errorf("workspace %d, %d", o, l)
	}
	// one split: no combine, no workspace needed
	q := p
	q.Splits, q.WsO, q.WsL = 1, 0, 0
	if ls, err := PlanAttention(h100, q); err != nil || len(ls) != 1 {
		t.Errorf("one split: %d launches, %v", len(ls), err)
	}
	for name, mut := range map[string]func(*Attention){
		"no workspace": func(a *Attention) { a.WsO = 0 },
		"page 24":      func(a *Attention) { a.PageSize = 24 },
		"no lens":      func(a *Attention) { a.SeqLensKV = nil },
		"varlen":       func(a *Attention) { a.CuSeqQ = []int{0, 1, 2, 3, 4, 5, 6, 7, 8} },
	} {
		q := p
		mut(&q)
		if _, err := PlanAttention(h100, q); !errors.Is(err, tile.ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", name, err)
		}
	}
}
