package bench_test

import (
	"testing"

	"github.com/tcrt-go/tcrt/bench"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// BenchmarkAttention/prefill/<dtype>/b1h32s2048d128/causal/<backend> reports
// GFLOP/s (4·s²·d·h, halved for causal);
// BenchmarkAttention/decode/<dtype>/b1h32kv8ctx4096d128/<backend> reports the
// GB/s of keys and values read and tokens/s, and on the CPU the copy
// bandwidth measured beside it and the ratio (memcpy-GB/s, of-memcpy).
// Compare prefill with BenchmarkMatMul/f32/2048x2048x2048.
func BenchmarkAttention(b *testing.B) {
	rts := backends(b)
	for _, decode := range []bool{false, true} {
		kind := "prefill"
		if decode {
			kind = "decode"
		}
		b.Run(kind, func(b *testing.B) {
			for _, dt := range []tile.DType{tile.F32, tile.F16, tile.BF16} {
				b.Run(dt.String(), func(b *testing.B) {
					p := bench.AttentionProblem{DType: dt, Batch: 1, HeadsQ: 32, HeadsKV: 32, Seq: 2048, Dim: 128, Causal: true}
					if decode {
						p = bench.AttentionProblem{Decode: true, DType: dt, Batch: 1, HeadsQ: 32, HeadsKV: 8, Seq: 4096, Dim: 128}
					}
					name := p.Name()
					if p.Causal {
						name += "/causal"
					}
					b.Run(name, func(b *testing.B) {
						eachBackend(b, rts, func(b *testing.B, rt *runtime.Runtime) {
							s, err := bench.NewAttentionSetup(ctx(), rt, p, 1)
							if err != nil {
								b.Fatal(err)
							}
							defer s.Close()
							sec := timeLoop(b, func() error { return s.Run(ctx(), rt) })
							if decode {
								gbs := p.KVBytes() * float64(b.N) / sec / 1e9
								b.ReportMetric(gbs, "GB/s")
								b.ReportMetric(float64(p.Batch*b.N)/sec, "tokens/s")
								reportOfMemcpy(b, rt, gbs)
							} else {
								b.ReportMetric(p.FLOPs()*float64(b.N)/sec/1e9, "GFLOP/s")
							}
						})
					})
				})
			}
		})
	}
}
