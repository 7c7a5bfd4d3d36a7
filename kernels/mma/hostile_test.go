package mma

import (
	"math"
	"testing"
)

// TestHostilePlanHelpers: the exported planning helpers answer, without
// panicking, for a nil problem, unknown tiles and extents that are zero,
// negative or huge (the engine calls them only after Check accepts a
// problem; a caller of this package may not).
func TestHostilePlanHelpers(t *testing.T) {
	dims := []int{math.MinInt, -1, 0, 1, 1 << 40, math.MaxInt}
	devs := []Device{{}, {SM: 80, SMs: -1}, {SM: 90, SMs: 132}}
	for _, tl := range []Tile{0, numTiles - 1, numTiles, 255} {
		_ = tl.Geometry()
		if s := tl.String(); s == "" {
			t.Errorf("Tile(%d).String() is empty", uint8(tl))
		}
		for _, d := range devs {
			if s, _ := ChooseSplit(d, nil, tl); s != 1 {
				t.Errorf("ChooseSplit(nil) = %d splits", s)
			}
			for _, m := range dims {
				for _, k := range dims {
					s, kc := ChooseSplit(d, &MatMul{M: m, N: m, K: k}, tl)
					if s < 1 || kc < 0 {
						t.Errorf("ChooseSplit(M=N=%d, K=%d, %v) = %d, %d", m, k, tl, s, kc)
					}
				}
			}
		}
	}
	for _, d := range devs {
		if s, c := AttnSplits(d, nil, 0); s != 1 || c <= 0 {
			t.Errorf("AttnSplits(nil) = %d, %d", s, c)
		}
		for _, n := range dims {
			p := &Attention{Batch: n, HeadsQ: n, SeqQ: n, SeqKV: n, D: n, SeqLensKV: []int{n, 3}}
			for _, forced := range []int{-1, 0, 3, math.MaxInt} {
				if s, c := AttnSplits(d, p, forced); s < 1 || c < 0 {
					t.Errorf("AttnSplits(%d, forced %d) = %d, %d", n, forced, s, c)
				}
			}
		}
	}
	if o, l := AttnWorkspace(nil, 4); o != 0 || l != 0 {
		t.Errorf("AttnWorkspace(nil) = %d, %d", o, l)
	}
	if o, l := AttnWorkspace(&Attention{Batch: -1, HeadsQ: 8, SeqQ: 1, D: 64}, 4); o != 0 || l != 0 {
		t.Errorf("AttnWorkspace(batch -1) = %d, %d", o, l)
	}
}
