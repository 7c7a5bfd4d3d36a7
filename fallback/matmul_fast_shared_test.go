package fallback

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tcrt-go/tcrt/internal/longtest"
	"github.com/tcrt-go/tcrt/tile"
)

// TestMatMulFastSharedB covers the products whose workers share one packed
// op(B): transposed or not, f32 and the bf16 pairs, several column and K
// blocks (shrunk blocking), the epilogue into D, through the scratch buffer
// and in place, odd shapes and thread counts. It checks that the shared
// packing did run.
func TestMatMulFastSharedB(t *testing.T) {
	r := newRand(t)
	defer func() { testBlocking, testShareSmallB = nil, false }()
	testShareSmallB = true
	before := sharedBRuns.Load()
	blks := []*blocking{nil, {kc: 16, mc: 28, nc: 64}, {kc: 24, mc: 42, nc: 96}}
	if longtest.Race {
		blks = blks[:2] // the default blocking and one other
	}
	for _, blk := range blks {
		testBlocking = blk
		for _, dt := range []tile.DType{tile.F32, tile.BF16} {
			c := f32Case(201, 150, 131)
			c.A.dt, c.B.dt, c.Threads = dt, dt, 2
			check(t, r, c)
			c.B.trans, c.A.trans, c.Threads = true, true, 3
			c.D.dt, c.Beta, c.C.dt, c.Bias, c.Act = tile.BF16, 0.5, tile.F16, true, ActSiLU
			check(t, r, c)
		}
		c := f32Case(300, 97, 77)
		c.Threads, c.Alpha, c.Beta, c.InPlace = 7, -2, 1, true
		c.D = mat{dt: tile.F32, ldPad: 3}
		check(t, r, c)
	}
	if sharedBRuns.Load() == before && variantByName("avx512") != nil && variantByName("avx512").Available() {
		t.Error("no product shared its packed B")
	}
}

// TestMatMulFastSharedBMin checks the size rule: a product whose packed B
// fits in minSharedB packs it per worker, a larger one shares it.
func TestMatMulFastSharedBMin(t *testing.T) {
	v := variantByName("avx512")
	if v == nil || !v.Available() {
		t.Skip("no AVX-512")
	}
	r := newRand(t)
	for _, tc := range []struct {
		n     int
		share bool
	}{{64, false}, {512, false}, {1024, true}} {
		if !tc.share && 4*tc.n*tc.n > minSharedB || tc.share && 4*tc.n*tc.n <= minSharedB {
			continue // another L2 size
		}
		a := &MatMulArgs{M: tc.n, N: tc.n, K: tc.n, Batch: 1, Alpha: 1, Threads: 2}
		a.A = newMatrix(r, mat{dt: tile.F32}, 1, tc.n, tc.n)
		a.B = newMatrix(r, mat{dt: tile.F32}, 1, tc.n, tc.n)
		a.D = newMatrix(r, mat{dt: tile.F32}, 1, tc.n, tc.n)
		before := sharedBRuns.Load()
		if err := MatMulFast("avx512", a); err != nil {
			t.Fatal(err)
		}
		if got := sharedBRuns.Load() != before; got != tc.share {
			t.Errorf("%d³: shared B %v, want %v (minSharedB %d)", tc.n, got, tc.share, minSharedB)
		}
	}
}

// TestMatMulFastSharedBLazy checks the panels packed on first use bit for
// bit against the same products packed per item: every variant, f32,
// bf16 and e4m3 B by rows (packed by the first tile's kernel where the
// variant has one; pair panels a group at a time) and transposed (packed,
// then copied), several column and K blocks, and with every panel found
// busy, so that each item packs its own copies.
// Sharing changes who packs a panel and which rows an item takes, not the
// order of any sum.
func TestMatMulFastSharedBLazy(t *testing.T) {
	r := newRand(t)
	defer func() { testBlocking, testShareSmallB, testPanelsBusy = nil, false, false }()
	for _, v := range variants {
		if !v.Available() {
			continue
		}
		shares := 0
		for _, blk := range []*blocking{nil, {kc: 32, mc: 56, nc: 96}} {
			testBlocking = blk
			for _, dt := range []tile.DType{tile.F32, tile.BF16, tile.E4M3} {
				if !v.Accepts(dt, dt) {
					continue
				}
				for _, trans := range []bool{false, true} {
					for _, s := range [][3]int{{300, 97, 131}, {1000, 129, 7}, {129, 70, 300}} {
						m, n, k := s[0], s[1], s[2]
						a := MatMulArgs{M: m, N: n, K: k, Batch: 1, Alpha: 1, Threads: 3}
						a.A = newMatrix(r, mat{dt: dt}, 1, m, k)
						a.B = newMatrix(r, mat{dt: dt, trans: trans, ldPad: 5}, 1, k, n)
						a.D = newMatrix(r, mat{dt: tile.F32, ldPad: 2}, 1, m, n)
						var want []byte
						for _, mode := range []string{"per item", "shared", "busy"} {
							testShareSmallB, testPanelsBusy = mode != "per item", mode == "busy"
							poison(a.D.Data)
							before := sharedBRuns.Load()
							if err := MatMulFast(v.Name, &a); err != nil {
								t.Fatal(err)
							}
							name := fmt.Sprintf("%s blk %v %v·%v B trans %v %v, %s", v.Name, blk, dt, dt, trans, s, mode)
							shared := sharedBRuns.Load() != before
							if shared && !testShareSmallB {
								t.Fatalf("%s: shared B", name)
							}
							if shared {
								shares++
							}
							if i, j, ok := allWritten(&a.D, m, n); !ok {
								t.Fatalf("%s: D[%d][%d] not written", name, i, j)
							}
							if want == nil {
								want = slices.Clone(a.D.Data)
							} else if i := firstDiff(a.D.Data, want); i >= 0 {
								t.Fatalf("%s: D byte %d differs from the per-item packing", name, i)
							}
						}
					}
				}
			}
		}
		// Products of 1000 rows by 129 columns may cut N instead.
		if shares < 12 {
			t.Errorf("%s: %d products shared B, want at least 12", v.Name, shares)
		}
	}
}
