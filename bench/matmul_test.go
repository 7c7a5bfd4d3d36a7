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
