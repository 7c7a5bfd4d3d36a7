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
// a disjoint slice: the yardstick for memory-bound kernels. It also reads
// the source alone (read), the yardstick of kernels that only read.
type copier struct{ src, dst []byte }

func newCopier(n int) *copier {
	c := &copier{src: make([]byte, n), dst: make([]byte, n)}
	for i := range c.src {
		c.src[i] = byte(i)
	}
	c.run()
	return c
}

// each runs f on every core's slice [lo, hi) of the buffer, in parallel.
func (c *copier) each(f func(lo, hi int)) {
	n, p := len(c.src), runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	chunk := (n + p - 1) / p
	for w := 0; w < p; w++ {
		lo, hi := w*chunk, min(n, (w+1)*chunk)
		wg.Add(1)
		go func() { defer wg.Done(); f(lo, hi) }()
	}
	wg.Wait()
}

func (c *copier) run() { c.each(func(lo, hi int) { copy(c.dst[lo:hi], c.src[lo:hi]) }) }

// readSink keeps the readers' checksums live.
var readSink atomic.Uint64

// read reads the source with all cores, each a disjoint slice, with
// fallback.MemRead (AVX-512 or AVX2 loads, four streams a core, where the
// CPU has them).
func (c *copier) read() { c.each(func(lo, hi int) { readSink.Add(fallback.MemRead(c.src[lo:hi])) }) }

// yardsticks are the two benchmarks of the copier: what one run does,
// the bytes it counts per byte of the buffer, and the metric names.
var yardsticks = []struct {
	name, metric, ratio string
	run                 func(*copier)
	per                 float64
}{
	{"Memcpy", "memcpy-GB/s", "of-memcpy", (*copier).run, 2},
	{"MemRead", "memread-GB/s", "of-memread", (*copier).read, 1},
}

// benchYardstick runs yardstick i as a benchmark named <bytes>.
func benchYardstick(b *testing.B, i int) {
	c, y := yardstick(), yardsticks[i]
	n := len(c.src)
	b.Run(fmt.Sprint(n), func(b *testing.B) {
		for range b.N {
			y.run(c)
		}
		b.ReportMetric(y.per*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
	})
}

// BenchmarkMemcpy/<bytes> measures the machine's memory copy bandwidth with
// all cores copying disjoint slices (GB/s counts bytes read plus written),
// the yardstick for memory-bound kernels.
func BenchmarkMemcpy(b *testing.B) { benchYardstick(b, 0) }

// BenchmarkMemRead/<bytes> measures the machine's memory read bandwidth
// with all cores reading disjoint slices of the same 64 MiB buffer (GB/s
// counts bytes read): the ceiling of a kernel that only reads, such as
// the skinny matmuls of decoding reading B, whose headroom
// BenchmarkMemcpy, which also writes, understates.
func BenchmarkMemRead(b *testing.B) { benchYardstick(b, 1) }

// yardstick is the 64 MiB copier the yardstick benchmarks and reportOf
// share.
var yardstick = sync.OnceValue(func() *copier { return newCopier(64 << 20) })

// reportOfMemcpy adds to a memory-bound CPU benchmark that moved gbs GB/s
// the copy bandwidth of BenchmarkMemcpy/67108864 measured right after it
// (the timer stopped; the median of 21 copies) as "memcpy-GB/s", and the
// ratio as "of-memcpy": the machine's bandwidth wanders by ±15% from one
// minute to the next, so only numbers taken together make a ratio.
func reportOfMemcpy(b *testing.B, rt *tcrt.Runtime, gbs float64) { reportOf(b, rt, gbs, 0) }

// reportOfMemread is reportOfMemcpy for the read-only yardstick,
// BenchmarkMemRead/67108864: "memread-GB/s" and "of-memread".
func reportOfMemread(b *testing.B, rt *tcrt.Runtime, gbs float64) { reportOf(b, rt, gbs, 1) }

// reportOf reports yardstick i's median rate of 21 runs and gbs over it.
func reportOf(b *testing.B, rt *tcrt.Runtime, gbs float64, i int) {
	if rt.Backend() != tcrt.BackendCPU {
		return
	}
	b.StopTimer()
	c, y := yardstick(), yardsticks[i]
	rates := make([]float64, 21)
	for i := range rates {
		t := time.Now()
		y.run(c)
		rates[i] = y.per * float64(len(c.src)) / time.Since(t).Seconds() / 1e9
	}
	slices.Sort(rates)
	m := rates[len(rates)/2]
	b.ReportMetric(m, y.metric)
	b.ReportMetric(gbs/m, y.ratio)
}
