package bench_test

import (
	"testing"

	"github.com/tcrt-go/tcrt/bench"
	"github.com/tcrt-go/tcrt/runtime"
)

// BenchmarkScatterAdd/f32/<random|hot16>/<backend> reports GB/s (source
// rows and indices read, every updated element read and written) of an
// unordered row scatter-add of 64 MiB into a 64 MiB table: uniformly random
// rows, or all into 16 rows (high contention); and
// BenchmarkScatterAdd/f32/elements/<backend> the GB/s (source, index,
// destination read and written, per element) of an element-mode
// scatter-add of 4M values into random elements of the same table.
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
		// Element mode: 4M f32 values into random elements of the 64 MiB
		// table.
		b.Run("elements", func(b *testing.B) {
			eachBackend(b, rts, func(b *testing.B, rt *runtime.Runtime) {
				p := big
				p.Lanes = 16384
				s, err := bench.NewScatterElementsSetup(ctx(), rt, p, 5)
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				sec := timeLoop(b, func() error { return s.Run(ctx(), rt) })
				b.ReportMetric(p.ElementScatterBytes()*float64(b.N)/sec/1e9, "GB/s")
			})
		})
	})
}
