package sm86mm

import (
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

// TestChoose: the documented tile and split-K rule.
func TestChoose(t *testing.T) {
	for _, c := range []struct {
		M, N, K, sms int
		split        bool
		want         PlanInfo
	}{
		{4096, 4096, 4096, 84, true, PlanInfo{Tile128x128, 1, 0}},
		{4096, 64, 512, 84, true, PlanInfo{Tile128x64, 1, 0}},
		{16, 4096, 512, 84, true, PlanInfo{Tile64x128, 1, 0}},
		{16, 1024, 4096, 84, true, PlanInfo{Tile64x128, 11, 384}}, // 8 CTAs: ceil(84/8) = 11 chunks
		{16, 1024, 4096, 84, false, PlanInfo{Tile64x128, 1, 0}},   // activation or f16 out: never split
		{16, 8192, 4096, 84, true, PlanInfo{Tile64x128, 1, 0}},    // 64 CTAs: no split
		{1, 256, 1024, 84, true, PlanInfo{Tile64x128, 4, 256}},    // K/256 = 4
	} {
		if got := Choose(c.M, c.N, c.K, c.sms, c.split); got != c.want {
			t.Errorf("M=%d N=%d K=%d split=%v: plan %+v, want %+v", c.M, c.N, c.K, c.split, got, c.want)
		}
	}
}

// TestPlanLaunches: a split plan is the plain kernel over the first chunk
// with beta·C and bias, then the split kernel over the rest; parameters
// pack to the kernels' window.
func TestPlanLaunches(t *testing.T) {
	p := Problem{M: 16, N: 1024, K: 4096, In: tile.F16, Out: tile.F32, D: 0x1000, A: 0x2000, B: 0x3000, C: 0x4000, Bias: 0x5000,
		LDA: 4096, LDB: 1024, LDC: 1024, LDD: 1024, Alpha: 1, Beta: 0.5}
	info, ls := Plan(p, 84)
	if info.Splits != 11 || len(ls) != 2 {
		t.Fatalf("plan %+v, %d launches", info, len(ls))
	}
	if strings.HasSuffix(ls[0].Func, "_splitk") || !strings.HasSuffix(ls[1].Func, "_splitk") || ls[1].Grid[2] != 10 || ls[0].Grid[2] != 1 {
		t.Fatalf("launches %+v", ls)
	}
	if ls[0].Params[5] != 384 || ls[0].Params[13] != 0x4000 || ls[1].Params[13] != 0 || ls[1].Params[14] != 0 || ls[1].Params[15] != 384 {
		t.Fatalf("params %v / %v", ls[0].Params, ls[1].Params)
	}
	for _, l := range ls {
		b, err := PackParams(l.Params)
		if err != nil || len(b) != 88 { // 3 pointers, 8 words, 2 pointers, 2 words
			t.Fatalf("packed %d bytes: %v", len(b), err)
		}
	}
	q := p
	q.Act = tile.ActReLU
	if _, ls := Plan(q, 84); len(ls) != 1 {
		t.Fatal("an activation was split")
	}
	q = p
	q.M, q.N, q.K, q.Splits = 17, 40, 320, 3
	if _, ls := Plan(q, 84); len(ls) != 2 || ls[1].Grid[2] != 2 || ls[0].Params[5] != 128 {
		t.Fatalf("forced 3 splits: %+v", ls)
	}
}
