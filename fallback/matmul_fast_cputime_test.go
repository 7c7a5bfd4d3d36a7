//go:build unix

package fallback

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"syscall"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

// BenchmarkMatMulCPUTime states f32 products (2048³, 512³, and the decode
// shapes, f32 and bf16, on the skinny and the blocked path, and on the
// skinny path's 64-column kernels, "cols", rather than its row-streaming
// (M ≤ 4) or strip (f32, M ≥ 9) ones) as fractions of the peak loop
// by CPU time rather than wall time: of-peak-cpu is the product's FLOPs
// per second of process CPU time (getrusage, all threads) over the peak
// loop's, run on as many goroutines right before it, and B-GB/cpu-s the
// bytes of B per CPU second. On a machine that other work shares, wall
// times measure the share the OS gave; CPU times what the code did with it
// (its memory stalls included, so a busy memory system still shows).
func BenchmarkMatMulCPUTime(b *testing.B) {
	// The AVX-512 variants, or on hosts without AVX-512 (or masked to
	// AVX2: TCRT_CPU=avx2) the AVX2 one, whose name then ends each
	// benchmark's.
	f32v, bf16v, suffix := "avx512", "avx512bf16", ""
	if v := variantByName(f32v); v == nil || !v.Available() {
		f32v, bf16v, suffix = "avx2", "avx2", "/avx2"
	}
	v := variantByName(f32v)
	if v == nil || !v.Available() || len(PeakLoops()) == 0 {
		b.Skip("no AVX-512 or AVX2")
	}
	type shape struct {
		dt      tile.DType
		m, n, k int
	}
	shapes := []shape{{tile.F32, 2048, 2048, 2048}, {tile.F32, 512, 512, 512}, {tile.F32, 1, 4096, 4096}, {tile.F32, 4, 4096, 4096}, {tile.F32, 16, 4096, 4096},
		{tile.BF16, 1, 4096, 4096}, {tile.BF16, 4, 4096, 4096}, {tile.BF16, 16, 4096, 4096}, {tile.F32, 9, 4096, 4096}}
	if suffix != "" {
		shapes = append(shapes, shape{tile.F16, 1, 4096, 4096}, shape{tile.F16, 16, 4096, 4096}, shape{tile.F32, 1, 512, 1408},
			shape{tile.BF16, 2048, 2048, 2048}, shape{tile.F16, 2048, 2048, 2048})
	}
	for _, s := range shapes {
		vn := f32v
		if s.dt == tile.BF16 {
			vn = bf16v
			if !variantByName(vn).Available() {
				continue
			}
		}
		for _, path := range []string{"", "blocked", "cols"} {
			if path != "" && s.m > skinnyMaxM || path == "cols" && v.skinny.f32 == nil {
				continue
			}
			name := fmt.Sprintf("%v/%dx%dx%d", s.dt, s.m, s.n, s.k)
			if path != "" {
				name += "/" + path
			}
			name += suffix
			b.Run(name, func(b *testing.B) {
				skinnyOff, skinnyRowsOff, skinnyStripsOff = path == "blocked", path == "cols", path == "cols"
				defer func() { skinnyOff, skinnyRowsOff, skinnyStripsOff = false, false, false }()
				m, n, k := s.m, s.n, s.k
				r := rand.New(rand.NewPCG(1, 2))
				f := mat{dt: s.dt}
				a := &MatMulArgs{M: m, N: n, K: k, Batch: 1, Alpha: 1}
				a.A = newMatrix(r, f, 1, m, k)
				a.B = newMatrix(r, f, 1, k, n)
				a.D = newMatrix(r, mat{dt: tile.F32}, 1, m, n)
				if err := MatMulFast(vn, a); err != nil { // warm the pools
					b.Fatal(err)
				}
				peak := peakPerCPUSecond(runtime.GOMAXPROCS(0))
				iters := 0
				t0 := processCPU()
				for b.Loop() {
					MatMulFast(vn, a)
					iters++
				}
				sec := processCPU() - t0
				b.ReportMetric(2*float64(m*n*k)*float64(iters)/sec/peak, "of-peak-cpu")
				b.ReportMetric(float64(n*k*s.dt.Size())*float64(iters)/sec/1e9, "B-GB/cpu-s")
			})
		}
	}
}

// BenchmarkMemReadCPUTime reads a 64 MiB buffer with MemRead on as many
// goroutines as GOMAXPROCS, each a disjoint slice, and reports the bytes
// per second of process CPU time (GB/cpu-s): the ceiling of
// BenchmarkMatMulCPUTime's B-GB/cpu-s for a kernel that only reads B.
func BenchmarkMemReadCPUTime(b *testing.B) {
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	p := runtime.GOMAXPROCS(0)
	chunk := len(buf) / p
	var sink uint64
	var mu sync.Mutex
	read := func() {
		var wg sync.WaitGroup
		for w := range p {
			wg.Add(1)
			go func() {
				defer wg.Done()
				x := MemRead(buf[w*chunk : (w+1)*chunk])
				mu.Lock()
				sink ^= x
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	read()
	iters := 0
	t0 := processCPU()
	for b.Loop() {
		read()
		iters++
	}
	sec := processCPU() - t0
	b.ReportMetric(float64(p*chunk)*float64(iters)/sec/1e9, "GB/cpu-s")
	_ = sink
}

// peakPerCPUSecond runs the f32 peak loop on threads goroutines and returns
// its FLOPs per second of process CPU time.
func peakPerCPUSecond(threads int) float64 {
	l := PeakLoops()[0]
	const trips = 1 << 21
	t0 := processCPU()
	var wg sync.WaitGroup
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.Run(trips)
		}()
	}
	wg.Wait()
	return float64(threads) * trips * float64(l.FLOPs) / (processCPU() - t0)
}

// processCPU is the process's user and system CPU time in seconds.
func processCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
