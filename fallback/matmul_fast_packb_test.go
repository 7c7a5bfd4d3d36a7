package fallback

import (
	"math"
	"testing"
	"unsafe"

	"github.com/tcrt-go/tcrt/tile"
)

// TestKernelPackB checks the kernel that packs its B panel as it goes
// against packB followed by the plain kernel, on random data, bit for bit:
// the panel it writes and the tile it stores or adds (the same FMAs in the
// same order), for K step counts around the unrolled loop and its C
// prefetch, and a padded row stride of B.
func TestKernelPackB(t *testing.T) {
	v := variantByName("avx512")
	if v == nil || !v.Available() || v.kernelPackB == nil {
		t.Skip("no AVX-512 kernel that packs B")
	}
	r := newRand(t)
	MR, NR := v.MR, v.NR
	// From 132 steps (33 unrolled trips) the kernels prefetch C inside
	// the k loop rather than before it (prefetchCTrips in sgemm_gen.go).
	for _, kc := range []int{0, 1, 3, 4, 5, 17, 131, 132, 135, 600} {
		for _, accum := range []int{0, 1} {
			const n = 45 // columns of B: the panel is columns 7 to 38
			A := newMatrix(r, mat{dt: tile.F32}, 1, MR, max(kc, 1))
			B := newMatrix(r, mat{dt: tile.F32, ldPad: 3}, 1, max(kc, 1), n)
			ap := growAligned(nil, MR*max(kc, 1)+panelSlack)
			buf := make([]float32, 2*max(kc, MR, NR)*NR)
			v.packA(ap, &A, 0, 0, MR, 0, kc, 1, buf)
			want := growAligned(nil, NR*max(kc, 1)+panelSlack)
			v.packB(want, &B, 0, 0, kc, 7, NR, buf)

			const ldc = 40
			c0 := make([]float32, MR*ldc)
			for i := range c0 {
				c0[i] = randUnit(r)
			}
			wantC, gotC := append([]float32(nil), c0...), append([]float32(nil), c0...)
			v.kernel(kc, &ap[0], &want[0], &wantC[0], ldc, accum)

			got := growAligned(nil, NR*max(kc, 1)+panelSlack)
			for i := range got {
				got[i] = float32(math.NaN()) // poison: every step must be written
			}
			src := unsafe.Pointer(f32At(B.Data, 7))
			v.kernelPackB(kc, &ap[0], &got[0], &gotC[0], ldc, accum, src, 4*B.LD)

			for i := range kc * NR {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("kc %d: panel[%d] = %v, want %v", kc, i, got[i], want[i])
				}
			}
			for i := range gotC {
				if math.Float32bits(gotC[i]) != math.Float32bits(wantC[i]) {
					t.Fatalf("kc %d accum %d: c[%d] = %v, want %v", kc, accum, i, gotC[i], wantC[i])
				}
			}
		}
	}
}

// TestSkinnySplit checks the skinny path's work items: up to four per
// thread, none narrower than a run of skinnyRun bytes of a row of B when
// there are columns enough for each thread to get one, and at least one
// per thread when there are blocks enough.
func TestSkinnySplit(t *testing.T) {
	v, vp := variantByName("avx512"), variantByName("avx512bf16")
	if v == nil || v.skinny == nil || vp == nil || vp.skinny == nil {
		t.Skip("no skinny kernels")
	}
	for _, tc := range []struct {
		dt            tile.DType
		n, threads    int
		items, blocks int
	}{
		{tile.F32, 4096, 2, 8, 8},   // 64 blocks, runs of 8
		{tile.BF16, 4096, 2, 4, 16}, // runs of 16
		{tile.BF16, 1024, 2, 2, 8},  // one run: still one item per thread
		{tile.F32, 100, 4, 2, 1},    // two blocks
		{tile.BF16, 64 * 200, 1, 4, 50},
	} {
		a := MatMulArgs{M: 5, N: tc.n, K: 10, Batch: 1} // more rows than the row kernels take
		a.B.DType = tc.dt
		j := job{a: &a, v: v}
		j.skinnySplit(tc.threads)
		if j.nItems != tc.items || ceilDiv(ceilDiv(tc.n, skinnyNB), j.nItems) != tc.blocks {
			t.Errorf("%v N=%d threads %d: %d items of %d blocks, want %d of %d",
				tc.dt, tc.n, tc.threads, j.nItems, ceilDiv(ceilDiv(tc.n, skinnyNB), j.nItems), tc.items, tc.blocks)
		}
	}
	// The row-streaming kernels (M ≤ 4): tiles of at most 4 KiB of a row
	// of B and 16 KiB of sums, an item a thread, up to four of at least
	// 2 KiB runs.
	for _, tc := range []struct {
		dt              tile.DType
		m, n, threads   int
		items, tileCols int
	}{
		{tile.F32, 1, 4096, 2, 8, 1024},
		{tile.F32, 4, 4096, 2, 8, 1024},
		{tile.BF16, 1, 4096, 2, 4, 2048},
		{tile.BF16, 4, 4096, 2, 4, 1024},
		{tile.BF16, 3, 4096, 2, 4, 1360},
		{tile.BF16, 1, 1024, 2, 2, 2048}, // one run: still one item per thread
		{tile.F32, 2, 100, 4, 2, 1024},   // two blocks of 64
		{tile.F32, 1, 100000, 2, 98, 1024},
	} {
		a := MatMulArgs{M: tc.m, N: tc.n, K: 10, Batch: 1}
		a.B.DType = tc.dt
		j := job{a: &a, v: v}
		j.skinnySplit(tc.threads)
		if j.rowsK == nil || j.nItems != tc.items || j.sb != tc.tileCols {
			t.Errorf("%v M=%d N=%d threads %d: row kernel %v, %d items, tiles of %d columns, want %d, %d",
				tc.dt, tc.m, tc.n, tc.threads, j.rowsK != nil, j.nItems, j.sb, tc.items, tc.tileCols)
		}
	}
}

// TestSkinnyKC checks the skinny K blocks: 64 rows for the 64-column
// kernels, all of K for the row-streaming ones (M ≤ 4), skinnyStripKC for
// the strip kernels, with their split.
func TestSkinnyKC(t *testing.T) {
	v, vp := variantByName("avx512"), variantByName("avx512bf16")
	if v == nil || v.skinny == nil || vp == nil || vp.skinny == nil {
		t.Skip("no skinny kernels")
	}
	for _, tc := range []struct {
		v     *variant
		m, kc int
	}{{v, 1, 1000}, {v, 5, skinnyKC}, {v, 16, skinnyKC}, {vp, 1, 1000}, {vp, 4, 1000}, {vp, 5, skinnyKC}, {vp, 16, skinnyKC}} {
		a := MatMulArgs{M: tc.m, N: 300, K: 1000, Batch: 1}
		a.B.DType = tile.BF16
		j := job{a: &a, v: tc.v}
		j.skinnySplit(2)
		if j.kc != tc.kc || j.numKBlk != ceilDiv(1000, tc.kc) {
			t.Errorf("%s M=%d: K block %d (%d blocks), want %d", tc.v.Name, tc.m, j.kc, j.numKBlk, tc.kc)
		}
	}
	// The strip kernels (f32 B, M from skinnyStripMinM): K blocks of
	// skinnyStripKC rows, runs of skinnyStripRun bytes, up to four items
	// a thread of at least a run, at least one a thread.
	for _, tc := range []struct {
		m, n, threads, items int
	}{{skinnyStripMinM, 4096, 2, 8}, {16, 4096, 2, 8}, {16, 1024, 2, 2}, {12, 100, 4, 4}, {16, 17, 4, 2}, {16, 100000, 2, 8}} {
		a := MatMulArgs{M: tc.m, N: tc.n, K: 1000, Batch: 1}
		a.B.DType = tile.F32
		j := job{a: &a, v: v}
		j.skinnySplit(tc.threads)
		if j.stripK == nil || j.kc != skinnyStripKC || j.numKBlk != ceilDiv(1000, skinnyStripKC) || j.sb != skinnyStripRun/4 || j.nItems != tc.items {
			t.Errorf("f32 M=%d N=%d threads %d: strip kernel %v, K block %d (%d blocks), runs of %d columns, %d items; want %d, %d columns, %d items",
				tc.m, tc.n, tc.threads, j.stripK != nil, j.kc, j.numKBlk, j.sb, j.nItems, skinnyStripKC, skinnyStripRun/4, tc.items)
		}
	}
	// Odd K over many blocks (of pairs for M = 5), a masked last column
	// block, A transposed or not, against the reference.
	r := newRand(t)
	for _, m := range []int{1, 2, 5} {
		for _, trans := range []bool{false, true} {
			c := f32Case(m, 130, 301)
			c.A.dt, c.B.dt, c.A.trans, c.Threads, c.Bias = tile.BF16, tile.BF16, trans, 2, true
			check(t, r, c)
		}
	}
}
