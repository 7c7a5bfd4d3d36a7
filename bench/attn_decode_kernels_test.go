package bench_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/tile"
)

// BenchmarkAttentionDecodeKernels/<dtype>/<variant> reports GB/s of keys
// and values read by one thread running fallback.AttentionFast with the
// named kernel set (avx512, avx2, generic: the variants the CPU feature mask
// TCRT_CPU chooses between) on a decode step whose cache stays in L2 (8
// query heads on 2 KV heads, 256 keys, d = 128): it measures the kernels,
// not memory. GB/cpu-s divides by the thread's CPU time instead (see
// threadCPU). Compare variants within one run, e.g.
//
//	REF=AttentionDecodeKernels/f32/generic scripts/bench-ratio.sh 'AttentionDecodeKernels/f32/avx2$' 5
func BenchmarkAttentionDecodeKernels(b *testing.B) {
	const hq, hkv, skv, d = 8, 2, 256, 128
	r := rand.New(rand.NewPCG(3, 4))
	tensor := func(dt tile.DType, seq, heads int) fallback.AttnTensor {
		n := seq * heads * d
		t := fallback.AttnTensor{DType: dt, Data: make([]byte, n*dt.Size()), BatchStride: n, SeqStride: heads * d, HeadStride: d}
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
	for _, dt := range []tile.DType{tile.F32, tile.F16, tile.BF16} {
		b.Run(dt.String(), func(b *testing.B) {
			a := fallback.AttentionArgs{Batch: 1, HeadsQ: hq, HeadsKV: hkv, HeadDim: d, SeqQ: 1, SeqKV: skv,
				Q: tensor(dt, 1, hq), K: tensor(dt, skv, hkv), V: tensor(dt, skv, hkv), O: tensor(dt, 1, hq),
				Scale: float32(1 / math.Sqrt(d)), WindowLeft: fallback.Unbounded, WindowRight: fallback.Unbounded, Threads: 1}
			kv := float64(len(a.K.Data) + len(a.V.Data))
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
						b.ReportMetric(kv*float64(b.N)/cpu/1e9, "GB/cpu-s")
					}
					b.ReportMetric(kv*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
				})
			}
		})
	}
}
