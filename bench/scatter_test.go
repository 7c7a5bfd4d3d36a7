package bench_test

import (
	"testing"

	"github.com/tcrt-go/tcrt/bench"
	"github.com/tcrt-go/tcrt/runtime"
)

// BenchmarkScatterAdd/f32/<random|hot16>/<backend> reports GB/s (source
// rows and indices read, every updated element read and written) of an
// unordered row scatter-add of 64 MiB into a 64 MiB table: uniformly random
// rows, or all into 16 rows (high contention).
func BenchmarkScatterAdd(b *testing.B) {
	rts := backends(b)
	b.Run("f32", func(b *testing.B) {
		for _, v := range gatherVariants {
			b.Run(v.name, func(b *testing.B) {
				eachBackend(b, rts, func(b *testing.B, rt *runtime.Runtime) {
					p := big
					p.Hot = v.hot
					s, err := bench.NewScatterSetup(ctx(), rt, p, 3)
					if err != nil {
						b.Fatal(err)
					}
					defer s.Close()
					sec := timeLoop(b, func() error { return s.Run(ctx(), rt) })
					b.ReportMetric(p.ScatterBytes()*float64(b.N)/sec/1e9, "GB/s")
				})
			})
		}
	})
}
