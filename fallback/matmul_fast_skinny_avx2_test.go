package fallback

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tcrt-go/tcrt/internal/longtest"
	"github.com/tcrt-go/tcrt/tile"
)

// skinnyAVX2Dims are the ragged sizes the AVX2 skinny tests take N and K
// from: none a multiple of the 16-column strips or the 64-row K blocks.
var skinnyAVX2Dims = []int{1, 7, 129, 1000, 4099}

// avx2Skinny returns the AVX2 variant when this CPU (and its mask) runs
// it and it has skinny kernels, else skips t.
func avx2Skinny(t *testing.T) *variant {
	t.Helper()
	v := variantByName("avx2")
	if v == nil || !v.Available() || v.skinny == nil {
		t.Skip("no AVX2 skinny kernels on this build or CPU")
	}
	return v
}

// TestSkinnyStripsAVX2Exact checks the AVX2 row-streaming (f32 B, M = 1)
// and strip kernels bit for bit:
// small integers in A and B make every product and partial sum exact in
// f32, so any wrong element, row, column, strip, K block or tail column
// shows. Every M of the skinny path (1 to 16: one, two and three groups
// of rows), N and K from skinnyAVX2Dims, f32, bf16, f16, e4m3 and e5m2
// B (A of the same type), padded strides, a batch of 2, D poisoned; it first checks
// that the product takes the AVX2 row or strip kernel of its rows and type
// (the row kernels' masked tails: N mod 8 from 1 to 7). N·K
// is at most 2^16 with -short (M·N·K at most 2^20), 2^18 by default
// (2^22), every pair with TCRT_LONG_TESTS=1.
func TestSkinnyStripsAVX2Exact(t *testing.T) { skinnyAVX2Exact(t, false) }

// TestSkinnyDotsAVX2Exact is TestSkinnyStripsAVX2Exact for transposed B
// (D = A·Wᵀ, W stored N×K by rows): the AVX2 dot kernels, every M (one to
// four groups of rows, every kernel of 1 to 4 rows of W), their K steps of
// 8 and the Go tail of K mod 8.
func TestSkinnyDotsAVX2Exact(t *testing.T) { skinnyAVX2Exact(t, true) }

// skinnyAVX2Exact runs the exact test of the AVX2 skinny kernels, B
// transposed when trans: the strip kernels or the dot kernels.
func skinnyAVX2Exact(t *testing.T, trans bool) {
	v := avx2Skinny(t)
	limit, limitMNK := 1<<18, 1<<22
	switch {
	case longtest.Enabled():
		limit, limitMNK = 1<<23, 1<<23 // n·k up to 1000×4099, at most 8 Mi products
	case longtest.Race: // the kernels are single-threaded: numerics run without -race
		limit, limitMNK = 1<<12, 1<<16
	case testing.Short():
		limit, limitMNK = 1<<16, 1<<20
	}
	type shape struct {
		m, n, k int
		dt      tile.DType
	}
	var shapes []shape
	for m := 1; m <= skinnyMaxM; m++ {
		for _, n := range skinnyAVX2Dims {
			for _, k := range skinnyAVX2Dims {
				if n*k > limit || m*n*k > limitMNK {
					continue
				}
				for _, dt := range []tile.DType{tile.F32, tile.BF16, tile.F16, tile.E4M3, tile.E5M2} {
					shapes = append(shapes, shape{m, n, k, dt})
				}
			}
		}
	}
	// The shapes are independent: they run on every core (each with its
	// own generator, seeded from the test's name and the shape's index),
	// the first failure in shape order reported.
	seed := newRand(t).Uint64()
	errs := make([]error, len(shapes))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range goruntime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(shapes); i = int(next.Add(1) - 1) {
				sh := shapes[i]
				errs[i] = skinnyAVX2ExactCase(v, rand.New(rand.NewPCG(seed, uint64(i))), sh.m, sh.n, sh.k, sh.dt, trans)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(strings.SplitN(err.Error(), "\n", 2)[0])
	}
}

// skinnyAVX2ExactCase is one shape of skinnyAVX2Exact.
func skinnyAVX2ExactCase(v *variant, r *rand.Rand, m, n, k int, dt tile.DType, trans bool) error {
	a := MatMulArgs{M: m, N: n, K: k, Batch: 2, Alpha: 1}
	f := mat{dt: dt, ldPad: 3, bsPad: 5}
	a.A = newMatrix(r, f, 2, m, k)
	fb := f
	fb.trans = trans
	a.B = newMatrix(r, fb, 2, k, n)
	a.D = newMatrix(r, mat{dt: tile.F32, ldPad: 2}, 2, m, n)
	for _, x := range []*Matrix{&a.A, &a.B} {
		for i := 0; i < len(x.Data)/dt.Size(); i++ {
			setElem(x, i, float32(r.IntN(15)-7))
		}
	}
	j := job{a: &a, v: v}
	rows := !trans && dt == tile.F32 && m <= len(v.skinny.rowsF32)
	if !j.skinnyPath() || trans && j.skinnyDotKernels() == nil || !trans && (j.skinnyRowKernel() != nil) != rows ||
		!trans && !rows && j.skinnyStripKernel() == nil {
		return fmt.Errorf("avx2 %v %dx%dx%d trans %v: not on the row, strip or dot kernels (row kernel %v, want %v)",
			dt, m, n, k, trans, j.skinnyRowKernel() != nil, rows)
	}
	ref := a
	ref.D.Data = slices.Clone(a.D.Data)
	MatMulRef(&ref)
	poison(a.D.Data)
	if err := MatMulFast("avx2", &a); err != nil {
		return err
	}
	if bb, i, jj, ok := touchedOutside(&a.D, 2, m, n); !ok {
		return fmt.Errorf("avx2 %v %dx%dx%d: D[%d][%d,%d] written outside the product", dt, m, n, k, bb, i, jj)
	}
	for b := range 2 {
		for i := range m {
			for jj := range n {
				o := b*a.D.BatchStride + i*a.D.LD + jj
				if g, w := loadF32(tile.F32, a.D.Data, o), loadF32(tile.F32, ref.D.Data, o); math.Float32bits(g) != math.Float32bits(w) {
					return fmt.Errorf("avx2 %v %dx%dx%d: D[%d][%d,%d] = %v, want %v", dt, m, n, k, b, i, jj, g, w)
				}
			}
		}
	}
	return nil
}

// raceSkipsCase reports whether a -race build skips c: a product of more
// than 2^20 multiply-adds, whose float64 reference runs 5-10x slower
// under the race detector (the plain test step runs every case; the
// smaller cases keep the thread counts).
func raceSkipsCase(c mmCase) bool {
	return longtest.Race && c.M*c.N*c.K*max(1, c.Batch) > 1<<20
}

// TestMatMulFastSkinnyAVX2 runs the AVX2 skinny path against the float64
// reference within check's tolerances (check runs every available
// variant), random inputs: every M with ragged N and K, f32, bf16 and f16
// B with A of other types, alpha, beta·C (C in place too), bias,
// activations, D bf16 and f16, transposed and padded A, batches, thread
// counts, and no K; e4m3 and e5m2 B with per-tensor, per-row and
// per-column scales. It first checks that each case takes the AVX2 skinny
// path.
func TestMatMulFastSkinnyAVX2(t *testing.T) {
	v := avx2Skinny(t)
	r := newRand(t)
	var cases []mmCase
	dts := []tile.DType{tile.F32, tile.BF16, tile.F16, tile.E4M3, tile.E5M2}
	for m := 1; m <= skinnyMaxM; m++ {
		n := []int{1, 7, 129, 1000, 17, 15}[m%6]
		k := []int{1, 7, 129, 300, 65, 64}[m%6]
		c := f32Case(m, n, k)
		c.B.dt = dts[m%len(dts)]
		c.A.dt = dts[(m/3)%3]
		cases = append(cases, c)
	}
	for _, dt := range dts {
		pad := mat{dt: dt, ldPad: 3, bsPad: 7}
		c := f32Case(13, 1000, 257)
		c.A, c.B = pad, pad
		c.A.trans = true
		c.Batch, c.Threads = 3, 2
		c.Beta, c.Bias, c.Act = 0.5, true, ActGELU
		cases = append(cases, c)
		c = f32Case(4, 4099, 129)
		c.A, c.B = pad, pad
		c.Alpha, c.Bias, c.Act, c.Threads = 0.75, true, ActReLU, 3
		cases = append(cases, c)
		c = f32Case(7, 130, 33)
		c.A.dt, c.B.dt, c.D.dt = dt, dt, tile.BF16
		c.Alpha, c.Beta, c.InPlace = 1.5, -1, true
		cases = append(cases, c)
		c = f32Case(1, 1000, 4099)
		c.B.dt, c.D.dt = dt, tile.F16
		c.Beta, c.C.dt = 2, tile.BF16
		cases = append(cases, c)
		c = f32Case(16, 70, 0) // no K: D is the epilogue of zero
		c.B.dt, c.Bias = dt, true
		cases = append(cases, c)
		c = f32Case(2, 15, 0)
		c.B.dt, c.Bias, c.Beta = dt, true, 1
		cases = append(cases, c)
		c = f32Case(5, 300, 131)
		c.B.dt, c.A.dt, c.Threads = dt, tile.E4M3, 7
		cases = append(cases, c)
	}
	cases = append(cases, float8ScaleCases(r, false)...)
	for _, c := range cases {
		if raceSkipsCase(c) {
			continue
		}
		if !takesSkinnyAVX2(v, c) {
			t.Errorf("%v: avx2 takes the blocked path", c)
		}
		check(t, r, c)
	}
}

// float8ScaleCases are skinny products of float8 B (transposed when
// trans) with dequantisation scales: per tensor, per row of A and per
// column of B, as a quantised model's weights carry.
func float8ScaleCases(r *rand.Rand, trans bool) []mmCase {
	var cases []mmCase
	for i, dt := range []tile.DType{tile.E4M3, tile.E5M2, tile.E4M3} {
		m, n, k := []int{1, 16, 9}[i], []int{1000, 129, 7}[i], []int{4099, 129, 1000}[i]
		c := f32Case(m, n, k)
		c.B.dt, c.B.trans = dt, trans
		switch i {
		case 0:
			c.ScaleB = make([]float32, n)
			for j := range c.ScaleB {
				c.ScaleB[j] = (1 + randUnit(r)) / 64
			}
		case 1:
			c.ScaleA, c.ScaleB = []float32{0.25}, []float32{3}
			c.A.dt = tile.BF16
		case 2:
			c.ScaleA = make([]float32, m)
			for i := range c.ScaleA {
				c.ScaleA[i] = 1 + randUnit(r)
			}
			c.ScaleB, c.Alpha, c.Bias = []float32{0.5}, 0.75, true
		}
		cases = append(cases, c)
	}
	return cases
}

// TestMatMulFastSkinnyDotsAVX2 is TestMatMulFastSkinnyAVX2 for transposed
// B, the dot kernels: every M with ragged N and K (K below, at and past a
// step of 8), f32, bf16 and f16 B with A of other types, the epilogues,
// D bf16 and f16, transposed and padded A, batches, thread counts, no K,
// float8 B with scales. Each case must take the AVX2 dot kernels.
func TestMatMulFastSkinnyDotsAVX2(t *testing.T) {
	v := avx2Skinny(t)
	r := newRand(t)
	var cases []mmCase
	dts := []tile.DType{tile.F32, tile.BF16, tile.F16, tile.E4M3, tile.E5M2}
	for m := 1; m <= skinnyMaxM; m++ {
		n := []int{1, 7, 129, 1000, 17, 13}[m%6]
		k := []int{1, 7, 129, 300, 8, 4099}[m%6]
		c := f32Case(m, n, k)
		c.B.dt, c.B.trans = dts[m%len(dts)], true
		c.A.dt = dts[(m/3)%3]
		cases = append(cases, c)
	}
	for _, dt := range dts {
		pad := mat{dt: dt, ldPad: 3, bsPad: 7}
		c := f32Case(13, 1000, 257)
		c.A, c.B = pad, pad
		c.A.trans, c.B.trans = true, true
		c.Batch, c.Threads = 3, 2
		c.Beta, c.Bias, c.Act = 0.5, true, ActGELU
		cases = append(cases, c)
		c = f32Case(4, 4099, 129)
		c.A, c.B = pad, pad
		c.B.trans = true
		c.Alpha, c.Bias, c.Act, c.Threads = 0.75, true, ActReLU, 3
		cases = append(cases, c)
		c = f32Case(7, 130, 33)
		c.A.dt, c.B.dt, c.D.dt, c.B.trans = dt, dt, tile.BF16, true
		c.Alpha, c.Beta, c.InPlace = 1.5, -1, true
		cases = append(cases, c)
		c = f32Case(1, 1000, 4099)
		c.B.dt, c.D.dt, c.B.trans = dt, tile.F16, true
		c.Beta, c.C.dt = 2, tile.BF16
		cases = append(cases, c)
		c = f32Case(16, 70, 0) // no K: D is the epilogue of zero
		c.B.dt, c.Bias, c.B.trans = dt, true, true
		cases = append(cases, c)
		c = f32Case(2, 15, 0)
		c.B.dt, c.Bias, c.Beta, c.B.trans = dt, true, 1, true
		cases = append(cases, c)
		c = f32Case(5, 300, 131)
		c.B.dt, c.A.dt, c.Threads, c.B.trans = dt, tile.E4M3, 7, true
		cases = append(cases, c)
	}
	cases = append(cases, float8ScaleCases(r, true)...)
	for _, c := range cases {
		if raceSkipsCase(c) {
			continue
		}
		a := MatMulArgs{M: c.M, N: c.N, K: c.K, Batch: c.Batch}
		a.B = Matrix{DType: c.B.dt, Trans: c.B.trans}
		j := job{a: &a, v: v}
		if !j.skinnyPath() || j.skinnyDotKernels() == nil {
			t.Errorf("%v: avx2 does not take the dot kernels", c)
		}
		check(t, r, c)
	}
}

// takesSkinnyAVX2 reports whether variant v runs c on the skinny path.
func takesSkinnyAVX2(v *variant, c mmCase) bool {
	a := MatMulArgs{M: c.M, N: c.N, K: c.K, Batch: c.Batch}
	a.B = Matrix{DType: c.B.dt, Trans: c.B.trans}
	j := job{a: &a, v: v}
	return j.skinnyPath()
}

// TestSkinnyDotsAVX2Only checks that only the AVX2 variant takes
// transposed B on the skinny path: the AVX-512 variants have no dot
// kernels, so their transposed products keep the blocked path (whatever
// this CPU runs).
func TestSkinnyDotsAVX2Only(t *testing.T) {
	for _, v := range variants {
		for _, dt := range []tile.DType{tile.F32, tile.BF16, tile.F16, tile.E4M3} {
			a := MatMulArgs{M: 4, N: 4096, K: 4096, Batch: 1}
			a.B = Matrix{DType: dt, Trans: true}
			j := job{a: &a, v: v}
			want := v.Name == "avx2" && v.skinny != nil
			if got := j.skinnyDotKernels() != nil; got != want {
				t.Errorf("%s %v: dot kernels %v, want %v", v.Name, dt, got, want)
			}
			if v.Name != "avx2" && j.skinnyPath() {
				t.Errorf("%s %v: transposed B takes the skinny path", v.Name, dt)
			}
		}
	}
}

// TestSkinnyFloat8DecodeAVX2 checks the AVX2 strip and dot kernels' widening
// of every e4m3 and e5m2 byte (subnormals, ±0, the largest values, NaN,
// e5m2's ±Inf) against tile's conversion: D[0][j] = 1·B(0, j) + 0s, B
// holding byte j in row (strips) or column (dots) 0 of 8 and zeros
// elsewhere, so the kernel's sum is the widened value itself, compared bit
// for bit (NaN as NaN); M 1 and 5 (dots: widened in registers, and once
// per block for the f32 kernels).
func TestSkinnyFloat8DecodeAVX2(t *testing.T) {
	v := avx2Skinny(t)
	for _, dt := range []tile.DType{tile.E4M3, tile.E5M2} {
		for _, tm := range [][2]int{{0, 1}, {1, 1}, {0, 5}, {1, 5}} {
			trans, m := tm[0] == 1, tm[1]
			const n, k = 256, 8
			a := MatMulArgs{M: m, N: n, K: k, Batch: 1, Alpha: 1}
			a.A = Matrix{DType: tile.F32, Data: make([]byte, 4*m*k), Rows: m, Cols: k, LD: k, BatchStride: m * k}
			for i := range m * k {
				storeF32(tile.F32, a.A.Data, i, 1)
			}
			a.B = Matrix{DType: dt, Data: make([]byte, n*k), Rows: k, Cols: n, LD: n, BatchStride: n * k, Trans: trans}
			if trans {
				a.B.LD = k
			}
			for j := range n {
				if trans {
					a.B.Data[j*k] = byte(j)
				} else {
					a.B.Data[j] = byte(j)
				}
			}
			a.D = Matrix{DType: tile.F32, Data: make([]byte, 4*m*n), Rows: m, Cols: n, LD: n, BatchStride: m * n}
			poison(a.D.Data)
			j := job{a: &a, v: v}
			if !j.skinnyPath() || trans && j.skinnyDotKernels() == nil || !trans && j.skinnyStripKernel() == nil {
				t.Fatalf("%v trans %v M %d: not on the strip or dot kernels", dt, trans, m)
			}
			if err := MatMulFast("avx2", &a); err != nil {
				t.Fatal(err)
			}
			for i := range m * n {
				got := loadF32(tile.F32, a.D.Data, i)
				x := i % n
				want := tile.E4M3ToF32(uint8(x))
				if dt == tile.E5M2 {
					want = tile.E5M2ToF32(uint8(x))
				}
				want += 0 // the zeros' products are added: −0 becomes +0
				if math.IsNaN(float64(want)) != math.IsNaN(float64(got)) || !math.IsNaN(float64(want)) && math.Float32bits(got) != math.Float32bits(want) {
					t.Errorf("%v trans %v M %d: byte %#02x widened to %v, want %v", dt, trans, m, x, got, want)
				}
			}
		}
	}
}

// TestSkinnyFloat8 checks SkinnyFloat8: true for float8 B of either layout
// with up to skinnyMaxM rows on the AVX2 variant where it runs, false for
// more rows, for other types of B and for the other variants.
func TestSkinnyFloat8(t *testing.T) {
	avx2 := variantByName("avx2")
	for _, v := range variants {
		for _, dt := range []tile.DType{tile.E4M3, tile.E5M2, tile.BF16} {
			for _, trans := range []bool{false, true} {
				for _, m := range []int{1, skinnyMaxM, skinnyMaxM + 1} {
					a := MatMulArgs{M: m, N: 4096, K: 4096, Batch: 1}
					a.A.DType = tile.F32
					a.B = Matrix{DType: dt, Trans: trans}
					want := v == avx2 && v.Available() && tile.IsFloat8(dt) && m <= skinnyMaxM
					if got := SkinnyFloat8(v.Name, &a); got != want {
						t.Errorf("%s %v trans %v M %d: %v, want %v", v.Name, dt, trans, m, got, want)
					}
				}
			}
		}
	}
}
