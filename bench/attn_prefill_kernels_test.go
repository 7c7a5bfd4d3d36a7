package bench_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/tile"
)

// BenchmarkAttentionPrefillKernels/<dtype>/<variant> reports the GFLOP/s
// (4·s²·d·h, halved for causal) of one thread running fallback.AttentionFast
// with the named kernel set (the variants the CPU feature mask TCRT_CPU
// chooses between) on a causal prefill of 4 heads, 512 positions, d = 128:
// it measures the inner loops, not the threading. It also reports
// GFLOP/cpu-s, the work over the CPU time of the benchmark's thread, which
// a busy machine's other processes do not dilute. Compare variants within
// one run, e.g.
//
//	REF=AttentionPrefillKernels/f32/generic UNIT=GFLOP/cpu-s scripts/bench-ratio.sh 'AttentionPrefillKernels/f32/avx2$' 5
func BenchmarkAttentionPrefillKernels(b *testing.B) {
	const h, s, d = 4, 512, 128
	r := rand.New(rand.NewPCG(5, 6))
	tensor := func(dt tile.DType) fallback.AttnTensor {
		n := s * h * d
		t := fallback.AttnTensor{DType: dt, Data: make([]byte, n*dt.Size()), BatchStride: n, SeqStride: h * d, HeadStride: d}
		for i := range n {
			v := float32(r.Float64()*2 - 1)
			switch dt {
			case tile.F32:
				u := math.Float32bits(v)
				t.Data[4*i], t.Data[4*i+1], t.Data[4*i+2], t.Data[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
			case tile.BF16:
				u := tile.F32ToBF16(v)
				t.Data[2*i], t.Data[2*i+1] = byte(u), byte(u>>8)
			default:
				u := tile.F32ToF16(v)
				t.Data[2*i], t.Data[2*i+1] = byte(u), byte(u>>8)
			}
		}
		return t
	}
	for _, dt := range []tile.DType{tile.F32, tile.BF16} {
		b.Run(dt.String(), func(b *testing.B) {
			a := fallback.AttentionArgs{Batch: 1, HeadsQ: h, HeadsKV: h, HeadDim: d, SeqQ: s, SeqKV: s,
				Q: tensor(dt), K: tensor(dt), V: tensor(dt), O: tensor(dt), Causal: true,
				Scale: float32(1 / math.Sqrt(d)), WindowLeft: fallback.Unbounded, WindowRight: fallback.Unbounded, Threads: 1}
			flops := 4.0 * s * s * d * h / 2
			for _, v := range fallback.AttentionVariants() {
				b.Run(v.Name, func(b *testing.B) {
					if !v.Available() {
						b.Skipf("%s: the CPU lacks %v", v.Name, v.Features)
					}
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					cpu0 := threadCPU()
					for b.Loop() {
						if err := fallback.AttentionFast(v.Name, &a); err != nil {
							b.Fatal(err)
						}
					}
					if cpu := threadCPU() - cpu0; cpu0 >= 0 && cpu > 0 {
						b.ReportMetric(flops*float64(b.N)/cpu/1e9, "GFLOP/cpu-s")
					}
					b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		})
	}
}
