package bench_test

import (
	"fmt"
	"testing"

	"github.com/tcrt-go/tcrt/bench"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// BenchmarkMatMul/<dtype>/<M>x<N>x<K>/<backend> reports GFLOP/s of D = A·B
// (A, B of dtype, D f32; e4m3 with per-tensor scales).
func BenchmarkMatMul(b *testing.B) {
	rts := backends(b)
	shapes := [][3]int{{2048, 2048, 2048}, {512, 512, 512}, {128, 4096, 4096}, {1000, 129, 7}}
	for _, dt := range []tile.DType{tile.F32, tile.F16, tile.BF16, tile.E4M3} {
		b.Run(dt.String(), func(b *testing.B) {
			for _, sh := range shapes {
				b.Run(fmt.Sprintf("%dx%dx%d", sh[0], sh[1], sh[2]), func(b *testing.B) {
					eachBackend(b, rts, func(b *testing.B, rt *runtime.Runtime) {
						p := bench.MatMulProblem{DType: dt, M: sh[0], N: sh[1], K: sh[2]}
						s, err := bench.NewMatMulSetup(ctx(), rt, p, 1)
						if err != nil {
							b.Fatal(err)
						}
						defer s.Close()
						sec := timeLoop(b, func() error { return s.Run(ctx(), rt) })
						b.ReportMetric(p.FLOPs()*float64(b.N)/sec/1e9, "GFLOP/s")
					})
				})
			}
		})
	}
}

// BenchmarkMatMulDecode/<dtype>/m<M>/<backend> times the skinny products of
// decoding, D = A·B with A M×4096 and B 4096×4096 (D f32), which are bound
// by reading B: it reports B's bytes per second as GB/s (compare with
// BenchmarkMemcpy: scripts/bench-ratio.sh 'MatMulDecode'; with the
// read-only BenchmarkMemRead: REF=MemRead/67108864 scripts/bench-ratio.sh
// 'MatMulDecode') and GFLOP/s, and on the CPU, measured right after it,
// both yardsticks and the fractions of-memcpy and of-memread.
// …/m<M>/bT/<backend> is the same product with B transposed, stored N×K
// by rows as weights are (D = x·Wᵀ), for f32, bf16, f16 and e4m3 W; e4m3
// W multiplies f32 A and has a scale per column of D, as a quantised
// model's weights do.
func BenchmarkMatMulDecode(b *testing.B) {
	rts := backends(b)
	run := func(b *testing.B, p bench.MatMulProblem) {
		eachBackend(b, rts, func(b *testing.B, rt *runtime.Runtime) {
			s, err := bench.NewMatMulSetup(ctx(), rt, p, 1)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			sec := timeLoop(b, func() error { return s.Run(ctx(), rt) })
			gbs := float64(p.K*p.N*p.Weight.Size()) * float64(b.N) / sec / 1e9
			b.ReportMetric(gbs, "GB/s")
			b.ReportMetric(p.FLOPs()*float64(b.N)/sec/1e9, "GFLOP/s")
			reportOfMemcpy(b, rt, gbs)
			reportOfMemread(b, rt, gbs)
		})
	}
	for _, dt := range []tile.DType{tile.F32, tile.BF16, tile.F16, tile.E4M3} {
		b.Run(dt.String(), func(b *testing.B) {
			for _, m := range []int{1, 4, 16} {
				b.Run(fmt.Sprintf("m%d", m), func(b *testing.B) {
					// Float8 weights beside f32 activations, a scale
					// per column of B, as a quantised model's.
					p := bench.MatMulProblem{DType: dt, Weight: dt, M: m, N: 4096, K: 4096}
					if tile.IsFloat8(dt) {
						p.DType = tile.F32
					}
					if dt != tile.F16 {
						run(b, p)
					}
					p.TransB = true
					b.Run("bT", func(b *testing.B) { run(b, p) })
				})
			}
		})
	}
}

// skinnyShapes are the (N, K) pairs of BenchmarkMatMulSkinny: the square
// sizes of small, mid-size and 7B-class models and a 512↔1408 MLP pair
// (each N and K from {512, 1408, 2048, 4096}).
var skinnyShapes = [][2]int{{512, 512}, {1408, 512}, {512, 1408}, {2048, 2048}, {4096, 1408}, {1408, 4096}, {4096, 4096}}

// BenchmarkMatMulSkinny/f32/m<M>/<N>x<K>/<layout>/<backend> reports GFLOP/s
// of the decode-shaped f32 product D = x·W with x M×K: layout bN stores W
// K×N, bT stores it N×K (D = x·Wᵀ). scripts/openblas-ratio.sh times the
// same shapes in numpy's OpenBLAS, in the same run, for ratios.
func BenchmarkMatMulSkinny(b *testing.B) {
	rts := backends(b)
	for _, m := range []int{1, 4, 16} {
		for _, nk := range skinnyShapes {
			for _, trans := range []bool{false, true} {
				name := fmt.Sprintf("f32/m%d/%dx%d/%s", m, nk[0], nk[1], map[bool]string{false: "bN", true: "bT"}[trans])
				b.Run(name, func(b *testing.B) {
					eachBackend(b, rts, func(b *testing.B, rt *runtime.Runtime) {
						p := bench.MatMulProblem{DType: tile.F32, M: m, N: nk[0], K: nk[1], TransB: trans}
						s, err := bench.NewMatMulSetup(ctx(), rt, p, 1)
						if err != nil {
							b.Fatal(err)
						}
						defer s.Close()
						sec := timeLoop(b, func() error { return s.Run(ctx(), rt) })
						b.ReportMetric(p.FLOPs()*float64(b.N)/sec/1e9, "GFLOP/s")
					})
				})
			}
		}
	}
}
