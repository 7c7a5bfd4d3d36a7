package bench_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/internal/cpufeat"
	"github.com/tcrt-go/tcrt/tile"
)

// float8CodecLevels are the CPU feature mask levels (TCRT_CPU) the codec
// benchmark compares: each selects the tile float8 kernels it allows.
var float8CodecLevels = []string{"avx512", "avx2", "generic"}

// BenchmarkFloat8Codec/<op>/<format>/<TCRT_CPU level> reports GB/s (bytes
// read plus written) of one goroutine running tile's float8 slice codec on
// 16K elements that stay in cache, with the kernels the CPU feature mask
// level selects (the sub-benchmark is skipped when the level's kernels are
// the same as a better level's, as on a CPU without AVX-512). It measures
// the kernels, not memory: compare levels within one run, e.g.
//
//	REF=Float8Codec/encode/e4m3/generic scripts/bench-ratio.sh 'Float8Codec/encode/e4m3/avx2' 5
func BenchmarkFloat8Codec(b *testing.B) {
	const n = 1 << 14
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, n)
	for i := range src {
		src[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(16)-8))
	}
	codes := make([]uint8, n)
	dec := make([]float32, n)
	for _, op := range []string{"encode", "decode"} {
		b.Run(op, func(b *testing.B) {
			for _, f := range []tile.DType{tile.E4M3, tile.E5M2} {
				b.Run(f.String(), func(b *testing.B) {
					if err := tile.EncodeF32ToFloat8(f, codes, src, 1, tile.Saturate); err != nil {
						b.Fatal(err)
					}
					seen := map[string]bool{}
					for _, level := range float8CodecLevels {
						b.Run(level, func(b *testing.B) {
							restore, err := cpufeat.Set(level, "")
							if err != nil {
								b.Fatal(err)
							}
							defer restore()
							if k := tile.Float8SIMD(); seen[k] && k != level {
								b.Skipf("TCRT_CPU=%s runs the %q kernels already measured", level, k)
							}
							seen[tile.Float8SIMD()] = true
							for b.Loop() {
								if op == "encode" {
									err = tile.EncodeF32ToFloat8(f, codes, src, 0.5, tile.Saturate)
								} else {
									err = tile.DecodeFloat8ToF32(f, dec, codes, 0.5)
								}
								if err != nil {
									b.Fatal(err)
								}
							}
							b.ReportMetric(5*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
						})
					}
				})
			}
		})
	}
}
