package bench_test

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tcrt-go/tcrt/fallback"
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

// readSink keeps the readers' checksums live.
var readSink atomic.Uint64

// read reads the yardstick's source with all cores, each core a disjoint
// slice, with fallback.MemRead (AVX-512 loads where the CPU has them).
func (c *copier) read() {
	n, p := len(c.src), runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	chunk := (n + p - 1) / p
	for w := 0; w < p; w++ {
		lo, hi := w*chunk, min(n, (w+1)*chunk)
		wg.Add(1)
		go func() { defer wg.Done(); readSink.Add(fallback.MemRead(c.src[lo:hi])) }()
	}
	wg.Wait()
}

// BenchmarkMemRead/<bytes> measures the machine's memory read bandwidth
// with all cores reading disjoint slices of the 64 MiB yardstick buffer
// (GB/s counts bytes read): the ceiling of a kernel that only reads, such
// as the skinny matmuls of decoding reading B, where BenchmarkMemcpy,
// which also writes, understates the headroom.
func BenchmarkMemRead(b *testing.B) {
	c := yardstick()
	n := len(c.src)
	b.Run(fmt.Sprint(n), func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c.read()
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	})
}

// reportOfMemread is reportOfMemcpy for the read-only yardstick: the
// median of 21 runs of BenchmarkMemRead/67108864's loop right after the
// benchmark, as "memread-GB/s", and gbs over it as "of-memread".
func reportOfMemread(b *testing.B, rt *tcrt.Runtime, gbs float64) {
	if rt.Backend() != tcrt.BackendCPU {
		return
	}
	b.StopTimer()
	c := yardstick()
	rates := make([]float64, 21)
	for i := range rates {
		t := time.Now()
		c.read()
		rates[i] = float64(len(c.src)) / time.Since(t).Seconds() / 1e9
	}
	slices.Sort(rates)
	m := rates[len(rates)/2]
	b.ReportMetric(m, "memread-GB/s")
	b.ReportMetric(gbs/m, "of-memread")
}
