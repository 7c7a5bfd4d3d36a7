package fallback

import (
	"math"
	"slices"
	"testing"

	"github.com/tcrt-go/tcrt/internal/longtest"
	"github.com/tcrt-go/tcrt/tile"
)

// takesSkinny reports whether variant v runs c on the skinny path.
func takesSkinny(v *variant, c mmCase) bool {
	a := MatMulArgs{M: c.M, N: c.N, K: c.K, Batch: c.Batch}
	a.B = Matrix{DType: c.B.dt, Trans: c.B.trans}
	j := job{a: &a, v: v}
	plain, _ := j.skinnyKernel()
	return plain != nil
}

// TestMatMulFastSkinny covers the skinny path (M ≤ 16, B not transposed,
// f32 or bf16): every row count with its groups of kernel rows, column
// counts around the 64-column blocks and masks, K blocks with odd K for
// the bf16 pairs, transposed and padded A, the epilogue into D and through
// the tile, batches and thread counts. It first checks that the cases do
// take the skinny path on this CPU, when it has one.
func TestMatMulFastSkinny(t *testing.T) {
	r := newRand(t)
	var cases []mmCase
	for m := 1; m <= skinnyMaxM; m++ {
		n := []int{1, 63, 64, 65, 129, 200}[m%6]
		k := []int{1, 2, 7, 129, 300, 301}[m%6]
		c := f32Case(m, n, k)
		cases = append(cases, c)
		c.A.dt, c.B.dt = tile.BF16, tile.BF16
		cases = append(cases, c)
	}
	for _, dt := range []tile.DType{tile.F32, tile.BF16} {
		pad := mat{dt: dt, ldPad: 3, bsPad: 7}
		c := f32Case(13, 1000, 257)
		c.A, c.B = pad, pad
		c.A.trans = true
		c.Batch, c.Threads = 3, 2
		c.Beta, c.Bias, c.Act = 0.5, true, ActGELU
		cases = append(cases, c)
		c = f32Case(7, 130, 33)
		c.A.dt, c.B.dt, c.D.dt = dt, dt, tile.BF16
		c.Alpha, c.Beta, c.InPlace = 1.5, -1, true
		cases = append(cases, c)
		c = f32Case(16, 70, 0) // no K: D is the epilogue of zero
		c.B.dt, c.Bias = dt, true
		cases = append(cases, c)
		// The row-streaming kernels (M ≤ 4) with the same epilogues:
		// no K, D bf16 through the tile with C in place, transposed
		// padded A in batches with beta·C and an activation.
		c = f32Case(2, 70, 0)
		c.B.dt, c.Bias = dt, true
		cases = append(cases, c)
		c = f32Case(3, 130, 33)
		c.A.dt, c.B.dt, c.D.dt = dt, dt, tile.BF16
		c.Alpha, c.Beta, c.InPlace = 1.5, -1, true
		cases = append(cases, c)
		c = f32Case(4, 1000, 257)
		c.A, c.B = pad, pad
		c.A.trans = true
		c.Batch, c.Threads = 3, 2
		c.Beta, c.Bias, c.Act = 0.5, true, ActGELU
		cases = append(cases, c)
		for _, m := range []int{3, 9} { // several column super-blocks and K blocks in one item
			c = f32Case(m, 1100, 300)
			c.A.dt, c.B.dt, c.Threads, c.Bias = dt, dt, 1, true
			cases = append(cases, c)
		}
		c = f32Case(5, 300, 131)
		c.B.dt, c.A.dt, c.Threads = dt, tile.E4M3, 7
		if dt == tile.F32 {
			c.A.dt = tile.F16
		}
		cases = append(cases, c)
	}
	for _, name := range []string{"avx512", "avx512bf16"} {
		v := variantByName(name)
		if v == nil || !v.Available() || v.skinny == nil {
			continue
		}
		for _, c := range cases {
			if v.Accepts(c.A.dt, c.B.dt) && !takesSkinny(v, c) {
				t.Errorf("%v: %s takes the blocked path", c, name)
			}
		}
	}
	for _, c := range cases {
		check(t, r, c)
	}
}

// skinnyDims are the ragged sizes the skinny tests take N and K from.
var skinnyDims = []int{1, 7, 129, 1000, 4097}

// TestMatMulFastSkinnyRagged runs every row count of the skinny path
// (M 1 to 16: the row-streaming kernels up to 4, the 64-column kernels
// above, the strip kernels for f32 B from skinnyStripMinM) against the
// float64 reference, within the tolerances of check, on N and K from
// skinnyDims (products of at most 1M multiply-adds, 256K with -short, 16M
// with TCRT_LONG_TESTS=1), f32 and bf16, poisoned outputs.
func TestMatMulFastSkinnyRagged(t *testing.T) {
	r := newRand(t)
	limit := 1 << 20
	switch {
	case longtest.Enabled():
		limit = 1 << 24
	case testing.Short():
		limit = 1 << 18
	}
	for m := 1; m <= skinnyMaxM; m++ {
		for _, n := range skinnyDims {
			for _, k := range skinnyDims {
				if m*n*k > limit {
					continue
				}
				for _, dt := range []tile.DType{tile.F32, tile.BF16} {
					c := f32Case(m, n, k)
					c.A.dt, c.B.dt = dt, dt
					check(t, r, c)
				}
			}
		}
	}
}

// TestSkinnyRowsExact checks the skinny kernels bit for bit: with small
// integers in A and B every product and partial sum is exact in f32 (and
// in VDPBF16PS), so any order of summation gives the reference's value
// exactly, and a wrong element, row, column, K block or mask shows. Every
// M of the skinny path (the row-streaming kernels up to 4, the strip
// kernels for f32 B from skinnyStripMinM, the 64-column kernels between),
// ragged N and K (skinnyDims, up to 4097 both), f32 and bf16 B, each
// variant with skinny kernels, padded strides, a batch of 2, D poisoned;
// it first checks that the kernel chosen is the one the rows call for.
// N·K is at most 2^16 with -short, 2^18 by default, every pair with
// TCRT_LONG_TESTS=1; with more than 4 rows M·N·K is also at most 2^20
// with -short, 2^22 otherwise (up to 16×1000×129 and 16×129×1000: masked
// tails and 16 K blocks; TestMatMulFastSkinnyRagged takes the larger
// shapes of those rows against the float64 reference).
func TestSkinnyRowsExact(t *testing.T) {
	r := newRand(t)
	limit := 1 << 18 // 4097×4097 with TCRT_LONG_TESTS=1
	switch {
	case longtest.Enabled():
		limit = 1 << 25
	case testing.Short():
		limit = 1 << 16
	}
	for _, name := range []string{"avx512", "avx512bf16"} {
		v := variantByName(name)
		if v == nil || !v.Available() || v.skinny == nil {
			continue
		}
		for m := 1; m <= skinnyMaxM; m++ {
			for _, n := range skinnyDims {
				for _, k := range skinnyDims {
					if n*k > limit || m > len(v.skinny.rowsBF16) && m*n*k > 16*min(limit, 1<<18) {
						continue
					}
					for _, dt := range []tile.DType{tile.F32, tile.BF16} {
						if !v.Accepts(dt, dt) {
							continue
						}
						a := MatMulArgs{M: m, N: n, K: k, Batch: 2, Alpha: 1}
						f := mat{dt: dt, ldPad: 3, bsPad: 5}
						a.A = newMatrix(r, f, 2, m, k)
						a.B = newMatrix(r, f, 2, k, n)
						a.D = newMatrix(r, mat{dt: tile.F32, ldPad: 2}, 2, m, n)
						for _, x := range []*Matrix{&a.A, &a.B} {
							for i := 0; i < len(x.Data)/dt.Size(); i++ {
								setElem(x, i, float32(r.IntN(15)-7))
							}
						}
						j := job{a: &a, v: v}
						rows, strip := j.skinnyRowKernel() != nil, j.skinnyStripKernel() != nil
						wantRows := m <= len(v.skinny.rowsBF16)
						wantStrip := dt == tile.F32 && m >= skinnyStripMinM && len(v.skinny.strip) > 0
						if plain, _ := j.skinnyKernel(); plain == nil || rows != wantRows || strip != wantStrip {
							t.Fatalf("%s %v %dx%dx%d: skinny %v, row kernel %v, strip kernel %v; want true, %v, %v",
								name, dt, m, n, k, plain != nil, rows, strip, wantRows, wantStrip)
						}
						ref := a
						ref.D.Data = slices.Clone(a.D.Data)
						MatMulRef(&ref)
						poison(a.D.Data)
						if err := MatMulFast(name, &a); err != nil {
							t.Fatal(err)
						}
						if bb, i, jj, ok := touchedOutside(&a.D, 2, m, n); !ok {
							t.Fatalf("%s %v %dx%dx%d: D[%d][%d,%d] written outside the product", name, dt, m, n, k, bb, i, jj)
						}
						for b := range 2 {
							for i := range m {
								for jj := range n {
									o := b*a.D.BatchStride + i*a.D.LD + jj
									if g, w := loadF32(tile.F32, a.D.Data, o), loadF32(tile.F32, ref.D.Data, o); math.Float32bits(g) != math.Float32bits(w) {
										t.Fatalf("%s %v %dx%dx%d: D[%d][%d,%d] = %v, want %v", name, dt, m, n, k, b, i, jj, g, w)
									}
								}
							}
						}
					}
				}
			}
		}
	}
}
