package bench_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// BenchmarkMemcpy/<bytes> measures the machine's memory copy bandwidth with
// all cores copying disjoint slices (GB/s counts bytes read plus written),
// the yardstick for memory-bound kernels.
func BenchmarkMemcpy(b *testing.B) {
	for _, n := range []int{64 << 20} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			src := make([]byte, n)
			dst := make([]byte, n)
			for i := range src {
				src[i] = byte(i)
			}
			p := runtime.GOMAXPROCS(0)
			copyAll := func() {
				var wg sync.WaitGroup
				chunk := (n + p - 1) / p
				for w := 0; w < p; w++ {
					lo, hi := w*chunk, min(n, (w+1)*chunk)
					wg.Add(1)
					go func() { defer wg.Done(); copy(dst[lo:hi], src[lo:hi]) }()
				}
				wg.Wait()
			}
			copyAll()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				copyAll()
			}
			b.ReportMetric(2*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}
