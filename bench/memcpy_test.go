package bench_test

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	tcrt "github.com/tcrt-go/tcrt/runtime"
)

// copier copies a buffer of n bytes to another with all cores, each core
// a disjoint slice: the yardstick for memory-bound kernels.
type copier struct{ src, dst []byte }

func newCopier(n int) *copier {
	c := &copier{src: make([]byte, n), dst: make([]byte, n)}
	for i := range c.src {
		c.src[i] = byte(i)
	}
	c.run()
	return c
}

func (c *copier) run() {
	n, p := len(c.src), runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	chunk := (n + p - 1) / p
	for w := 0; w < p; w++ {
		lo, hi := w*chunk, min(n, (w+1)*chunk)
		wg.Add(1)
		go func() { defer wg.Done(); copy(c.dst[lo:hi], c.src[lo:hi]) }()
	}
	wg.Wait()
}

// BenchmarkMemcpy/<bytes> measures the machine's memory copy bandwidth with
// all cores copying disjoint slices (GB/s counts bytes read plus written),
// the yardstick for memory-bound kernels.
func BenchmarkMemcpy(b *testing.B) {
	c := yardstick()
	n := len(c.src)
	b.Run(fmt.Sprint(n), func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c.run()
		}
		b.ReportMetric(2*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	})
}

// yardstick is the 64 MiB copier BenchmarkMemcpy and reportOfMemcpy share.
var yardstick = sync.OnceValue(func() *copier { return newCopier(64 << 20) })

// reportOfMemcpy adds to a memory-bound CPU benchmark that moved gbs GB/s
// the copy bandwidth of BenchmarkMemcpy/67108864 measured right after it
// (the timer stopped; the median of 21 copies) as "memcpy-GB/s", and the
// ratio as "of-memcpy": the machine's bandwidth wanders by ±15% from one
// minute to the next, so only numbers taken together make a ratio.
func reportOfMemcpy(b *testing.B, rt *tcrt.Runtime, gbs float64) {
	if rt.Backend() != tcrt.BackendCPU {
		return
	}
	b.StopTimer()
	c := yardstick()
	rates := make([]float64, 21)
	for i := range rates {
		t := time.Now()
		c.run()
		rates[i] = 2 * float64(len(c.src)) / time.Since(t).Seconds() / 1e9
	}
	slices.Sort(rates)
	m := rates[len(rates)/2]
	b.ReportMetric(m, "memcpy-GB/s")
	b.ReportMetric(gbs/m, "of-memcpy")
}
