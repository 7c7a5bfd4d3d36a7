package fallback

import (
	"testing"

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
