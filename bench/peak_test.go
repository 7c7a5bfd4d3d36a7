package bench_test

import (
	goruntime "runtime"
	"sync"
	"testing"

	"github.com/tcrt-go/tcrt/fallback"
)

// BenchmarkPeakFMA/<f32|bf16dot> reports the GFLOP/s of register-resident
// multiply-adds (VFMADD231PS, or VDPBF16PS counting its two products) on
// every core at once (GOMAXPROCS goroutines), with AVX-512 where the CPU has
// it, else AVX2+FMA (the log names the ISA): the ceiling the matmul rates
// are compared with (scripts/bench-ratio.sh with REF=PeakFMA/f32
// UNIT=GFLOP/s).
func BenchmarkPeakFMA(b *testing.B) {
	loops := fallback.PeakLoops()
	if len(loops) == 0 {
		b.Skip("no assembly peak loop for this CPU")
	}
	for _, l := range loops {
		b.Run(l.Name, func(b *testing.B) {
			b.Logf("ISA: %s", l.ISA())
			const trips = 1 << 18
			p := goruntime.GOMAXPROCS(0)
			for b.Loop() {
				var wg sync.WaitGroup
				for range p {
					wg.Add(1)
					go func() {
						defer wg.Done()
						l.Run(trips)
					}()
				}
				wg.Wait()
			}
			b.ReportMetric(float64(p)*trips*float64(l.FLOPs)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
