package fallback

import (
	"testing"

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
	for _, blk := range []*blocking{nil, {kc: 16, mc: 28, nc: 64}, {kc: 24, mc: 42, nc: 96}} {
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
