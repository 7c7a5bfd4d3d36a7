package bench_test

import (
	"testing"

	"github.com/tcrt-go/tcrt/bench"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// gatherVariants are the index distributions: uniform over a 64 MiB table
// (low contention) and all lanes into its first 16 rows (high contention).
var gatherVariants = []struct {
	name string
	hot  int
}{{"random", 0}, {"hot16", 16}}

// big is the 64 MiB problem: 65536 rows of 256 f32 (1 KiB rows), 65536
// lanes, so the gathered (or scattered) data is 64 MiB as well.
var big = bench.GatherProblem{DType: tile.F32, TableRows: 65536, Cols: 256, Lanes: 65536}

// BenchmarkGather/rows/f32/<random|hot16>/<backend> reports GB/s of a row
// gather (rows read + rows written + indices) and, on the CPU, the copy
// bandwidth measured beside it (BenchmarkMemcpy's, bytes read + written)
// and the ratio of the two (of-memcpy).
func BenchmarkGather(b *testing.B) {
	rts := backends(b)
	b.Run("rows", func(b *testing.B) {
		b.Run("f32", func(b *testing.B) {
			for _, v := range gatherVariants {
				b.Run(v.name, func(b *testing.B) {
					eachBackend(b, rts, func(b *testing.B, rt *runtime.Runtime) {
						p := big
						p.Hot = v.hot
						s, err := bench.NewGatherSetup(ctx(), rt, p, 1)
						if err != nil {
							b.Fatal(err)
						}
						defer s.Close()
						sec := timeLoop(b, func() error { return s.Run(ctx(), rt) })
						gbs := p.Bytes() * float64(b.N) / sec / 1e9
						b.ReportMetric(gbs, "GB/s")
						reportOfMemcpy(b, rt, gbs)
					})
				})
			}
		})
	})
}

// BenchmarkGatherCAS/b32/<backend> reports GB/s (20 bytes a lane) and
// lanes/s of a gather-CAS of 2^20 lanes at distinct random addresses of a
// 64 MiB memory, half of them swapping in every run.
func BenchmarkGatherCAS(b *testing.B) {
	rts := backends(b)
	b.Run("b32", func(b *testing.B) {
		eachBackend(b, rts, func(b *testing.B, rt *runtime.Runtime) {
			p := bench.GatherCASProblem{MemBytes: 64 << 20, Lanes: 1 << 20}
			s, err := bench.NewGatherCASSetup(ctx(), rt, p, 2)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			sec := timeLoop(b, func() error { return s.Run(ctx(), rt) })
			b.ReportMetric(p.Bytes()*float64(b.N)/sec/1e9, "GB/s")
			b.ReportMetric(float64(p.Lanes)*float64(b.N)/sec/1e6, "Mlanes/s")
		})
	})
}
