package bench_test

import (
	"testing"

	"github.com/tcrt-go/tcrt/bench"
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
				for _, name := range backendOrder {
					rt, ok := rts[name]
					if !ok {
						continue
					}
					b.Run(name, func(b *testing.B) {
						p := big
						p.Hot = v.hot
						s, err := bench.NewScatterSetup(ctx(), rt, p, 3)
						if err != nil {
							b.Fatal(err)
						}
						defer s.Close()
						if err := s.Run(ctx(), rt); err != nil {
							b.Fatal(err)
						}
						b.ResetTimer()
						for i := 0; i < b.N; i++ {
							if err := s.Run(ctx(), rt); err != nil {
								b.Fatal(err)
							}
						}
						b.ReportMetric(p.ScatterBytes()*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
					})
				}
			})
		}
	})
}
