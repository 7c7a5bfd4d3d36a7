package bench_test

import (
	"fmt"
	"testing"

	"github.com/tcrt-go/tcrt/bench"
	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// quantBenchGrans are the granularities benchmarked: per tensor with a
// given scale (one streaming pass), per row and MX with scales computed from
// the amax (fused amax and encode per block), and 1×128.
var quantBenchGrans = []ops.Granularity{ops.PerTensor, ops.PerRow, ops.Block1x128, ops.MX}

// BenchmarkQuantize/<format>/<granularity>/<elements>/<backend> reports GB/s
// of bytes read plus written (f32 in, float8 and inverse scales out) for a
// 4096×4096 f32 tensor (64 MiB). Compare with BenchmarkMemcpy.
func BenchmarkQuantize(b *testing.B) { benchQuant(b, false) }

// BenchmarkDequantize/<format>/<granularity>/<elements>/<backend> reports
// GB/s of bytes read plus written (float8 and scales in, f32 out).
func BenchmarkDequantize(b *testing.B) { benchQuant(b, true) }

func benchQuant(b *testing.B, dequant bool) {
	rts := backends(b)
	const rows, cols = 4096, 4096
	for _, f := range []tile.DType{tile.E4M3, tile.E5M2} {
		b.Run(f.String(), func(b *testing.B) {
			for _, g := range quantBenchGrans {
				b.Run(g.String(), func(b *testing.B) {
					b.Run(fmt.Sprint(rows*cols), func(b *testing.B) {
						eachBackend(b, rts, func(b *testing.B, rt *runtime.Runtime) {
							p := bench.QuantProblem{Format: f, Gran: g, Rows: rows, Cols: cols}
							s, err := bench.NewQuantSetup(ctx(), rt, p, 1)
							if err != nil {
								b.Fatal(err)
							}
							defer s.Close()
							run, bytes := s.Quantize, p.QuantizeBytes()
							if dequant {
								run, bytes = s.Dequantize, p.DequantizeBytes()
							}
							sec := timeLoop(b, func() error { return run(ctx(), rt) })
							b.ReportMetric(bytes*float64(b.N)/sec/1e9, "GB/s")
						})
					})
				})
			}
		})
	}
}

// BenchmarkAmax/<granularity>/<elements>/<backend> reports GB/s of bytes
// read (f32 in; the amax out is negligible) of max |x| over a 4096×4096
// f32 tensor (64 MiB), per tensor and per row. Compare with
// BenchmarkMemcpy: scripts/bench-ratio.sh 'Amax' 5.
func BenchmarkAmax(b *testing.B) {
	rts := backends(b)
	const rows, cols = 4096, 4096
	for _, g := range []ops.Granularity{ops.PerTensor, ops.PerRow} {
		b.Run(g.String(), func(b *testing.B) {
			b.Run(fmt.Sprint(rows*cols), func(b *testing.B) {
				eachBackend(b, rts, func(b *testing.B, rt *runtime.Runtime) {
					s, err := bench.NewQuantSetup(ctx(), rt, bench.QuantProblem{Format: tile.E4M3, Gran: g, Rows: rows, Cols: cols}, 1)
					if err != nil {
						b.Fatal(err)
					}
					defer s.Close()
					out, err := rt.Alloc(tile.F32, ops.ScaleShape(g, []int{rows, cols})...)
					if err != nil {
						b.Fatal(err)
					}
					defer out.Close()
					opt := &ops.AmaxOptions{Granularity: g}
					sec := timeLoop(b, func() error { return ops.Amax(ctx(), rt, out, s.X, opt) })
					b.ReportMetric(4*rows*cols*float64(b.N)/sec/1e9, "GB/s")
				})
			})
		})
	}
}
