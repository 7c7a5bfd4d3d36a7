package fallback

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

// BenchmarkMatMulFast times D = A·B for every available variant, with A, B
// and D all of one element type (D f32 for e4m3), and reports GFLOP/s (2·M·N·K per product).
// The plain-Go variant only runs the smaller shapes.
func BenchmarkMatMulFast(b *testing.B) {
	shapes := [][3]int{{256, 256, 256}, {1024, 1024, 1024}, {2048, 2048, 2048}, {1000, 129, 7}}
	for _, v := range MatMulVariants() {
		if !v.Available() {
			continue
		}
		b.Run(v.Name, func(b *testing.B) {
			for _, dt := range []tile.DType{tile.F32, tile.BF16, tile.F16, tile.E4M3} {
				if !v.Accepts(dt, dt) || dt == tile.E4M3 && !v.BF16Pairs {
					continue
				}
				b.Run(dt.String(), func(b *testing.B) {
					for _, s := range shapes {
						if v.Name == "generic" && s[0] > 1024 {
							continue
						}
						b.Run(fmt.Sprintf("%dx%dx%d", s[0], s[1], s[2]), func(b *testing.B) {
							benchMatMul(b, v.Name, dt, s[0], s[1], s[2])
						})
					}
				})
			}
		})
	}
}

// benchArgs caches the operands of each benchmark shape, as filling them
// takes longer than the products.
var benchArgs = map[[4]int]*MatMulArgs{}

func benchMatMul(b *testing.B, variant string, dt tile.DType, m, n, k int) {
	key := [4]int{int(dt), m, n, k}
	a := benchArgs[key]
	if a == nil {
		r := rand.New(rand.NewPCG(1, 2))
		f := mat{dt: dt}
		a = &MatMulArgs{M: m, N: n, K: k, Batch: 1, Alpha: 1}
		a.A = newMatrix(r, f, 1, m, k)
		a.B = newMatrix(r, f, 1, k, n)
		if tile.IsFloat8(dt) {
			f.dt = tile.F32 // float8 is an input type only
		}
		a.D = newMatrix(r, f, 1, m, n)
		benchArgs[key] = a
	}
	if err := MatMulFast(variant, a); err != nil { // warm the pools
		b.Fatal(err)
	}
	for b.Loop() {
		MatMulFast(variant, a)
	}
	b.ReportMetric(2*float64(m)*float64(n)*float64(k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkMatMulKernel times one core's micro-kernel on panels that stay in
// L1 (the kc of the variant's blocking): the ceiling of the fast path. With
// the explore build tag it also times the other AVX-512 register tiles
// sgemm_gen.go can write, alone and in f32 2048³ products on all cores (with
// the avx512 variant's blocking, mc rounded to the tile).
func BenchmarkMatMulKernel(b *testing.B) {
	for _, v := range append(variants[:len(variants):len(variants)], exploreVariants()...) {
		if !v.Available() {
			continue
		}
		b.Run("L1/"+v.Name, func(b *testing.B) {
			kc := v.blocking().kc // K values
			steps := kc
			if v.BF16Pairs {
				steps = kc / 2 // a bf16 pair per step
			}
			ap := growAligned(nil, steps*v.MR)
			bp := growAligned(nil, steps*v.NR)
			c := growAligned(nil, v.MR*v.NR)
			for i := range ap {
				ap[i] = 1
			}
			for i := range bp {
				bp[i] = 1
			}
			for b.Loop() {
				v.kernel(steps, &ap[0], &bp[0], &c[0], v.NR, 1)
			}
			b.ReportMetric(2*float64(kc*v.MR*v.NR)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
	explore := exploreVariants()
	if len(explore) == 0 {
		return
	}
	for _, v := range append(explore, variantByName("avx512")) {
		b.Run("2048/"+v.Name, func(b *testing.B) {
			n := 2048
			r := rand.New(rand.NewPCG(1, 2))
			f := mat{dt: tile.F32}
			a := MatMulArgs{M: n, N: n, K: n, Batch: 1, Alpha: 1}
			a.A = newMatrix(r, f, 1, n, n)
			a.B = newMatrix(r, f, 1, n, n)
			a.D = newMatrix(r, f, 1, n, n)
			blk := variantByName("avx512").blocking()
			blk.mc = max(v.MR, blk.mc/v.MR*v.MR)
			vb := &variant{MatMulVariant: v.MatMulVariant, kernel: v.kernel, cvt: v.cvt, transPack: v.transPack}
			vb.blkOnce.Do(func() { vb.blk = blk })
			for b.Loop() {
				vb.matMul(&a)
			}
			b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkMatMulSkinny times the decode shapes, D = A·B with A M×4096 and
// B 4096×4096 (f32 or bf16, D f32), on the skinny path and on the blocked
// path it replaces, and reports B's bytes per second as GB/s.
func BenchmarkMatMulSkinny(b *testing.B) {
	for _, name := range []string{"avx512", "avx512bf16"} {
		v := variantByName(name)
		if v == nil || !v.Available() {
			continue
		}
		dt := tile.F32
		if v.BF16Pairs {
			dt = tile.BF16
		}
		for _, m := range []int{1, 4, 16} {
			for _, path := range []string{"skinny", "blocked"} {
				b.Run(fmt.Sprintf("%s/%v/m%d/%s", name, dt, m, path), func(b *testing.B) {
					skinnyOff = path == "blocked"
					defer func() { skinnyOff = false }()
					const n = 4096
					benchMatMul(b, name, dt, m, n, n)
					b.ReportMetric(float64(n*n*dt.Size())*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
				})
			}
		}
	}
}
