package bench_test

import (
	"fmt"
	"testing"

	"github.com/tcrt-go/tcrt/bench"
	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// The light ops' benchmarks report GB/s of the bytes the op must move
// (bench.LightProblem.Bytes: inputs read once, outputs written once);
// compare with BenchmarkMemcpy in the same run (the 4096×4096 bf16 target
// is 0.8× of it for every memory-bound op).

var lightBenchTypes = []tile.DType{tile.F32, tile.F16, tile.BF16}

// benchLight runs p for every element type and shape as
// <dtype>/<shape>/<backend>.
func benchLight(b *testing.B, op string, shapes [][2]int, headDim int) {
	rts := backends(b)
	for _, d := range lightBenchTypes {
		b.Run(d.String(), func(b *testing.B) {
			for _, sh := range shapes {
				p := bench.LightProblem{Op: op, DType: d, Rows: sh[0], Cols: sh[1], HeadDim: headDim}
				name := fmt.Sprintf("%dx%d", sh[0], sh[1])
				if op == "rope" {
					name = fmt.Sprintf("%dx%dx%d", sh[0], sh[1]/headDim, headDim)
				}
				b.Run(name, func(b *testing.B) { runLightBench(b, rts, p) })
			}
		})
	}
}

func runLightBench(b *testing.B, rts map[string]*runtime.Runtime, p bench.LightProblem) {
	eachBackend(b, rts, func(b *testing.B, rt *runtime.Runtime) {
		s, err := bench.NewLightSetup(ctx(), rt, p, 1)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		sec := timeLoop(b, func() error { return s.Run(ctx()) })
		b.ReportMetric(p.Bytes()*float64(b.N)/sec/1e9, "GB/s")
	})
}

var lightShapes = [][2]int{{1, 4096}, {4096, 4096}}

// BenchmarkRMSNorm/<dtype>/<rows>x<hidden>/<backend>: y = rmsnorm(x)·w.
func BenchmarkRMSNorm(b *testing.B) { benchLight(b, "rmsnorm", lightShapes, 0) }

// BenchmarkAddRMSNorm/<dtype>/<rows>x<hidden>/<backend>: residual += x;
// x = rmsnorm(residual)·w (four row passes of memory).
func BenchmarkAddRMSNorm(b *testing.B) { benchLight(b, "add_rmsnorm", lightShapes, 0) }

// BenchmarkLayerNorm/<dtype>/<rows>x<hidden>/<backend>.
func BenchmarkLayerNorm(b *testing.B) { benchLight(b, "layernorm", lightShapes, 0) }

// BenchmarkSiluMul/<dtype>/<rows>x<hidden>/<backend>: y = silu(a)·b from a
// concatenated [a|b] of 2·hidden columns.
func BenchmarkSiluMul(b *testing.B) { benchLight(b, "silu_mul", lightShapes, 0) }

// BenchmarkSoftmax/<dtype>/<rows>x<cols>/<backend>.
func BenchmarkSoftmax(b *testing.B) { benchLight(b, "softmax", lightShapes, 0) }

// BenchmarkRoPE/<dtype>/<tokens>x<heads>x<headdim>/<backend>: q and k, 32
// heads each, in place, Llama 3.1 scaling.
func BenchmarkRoPE(b *testing.B) {
	benchLight(b, "rope", [][2]int{{1, 32 * 128}, {4096, 32 * 128}}, 128)
}

// sampleRows and sampleVocab are BenchmarkSample's shapes: f32 logits of
// a 128256-token vocabulary (Llama 3's).
var (
	sampleRows  = []int{1, 32}
	sampleVocab = 128256
)

// BenchmarkSample/<method>/<rows>x<vocab>/<backend>: GB/s of the logits
// read once; BenchmarkSampleRead is the yardstick (the top-p goal: at
// least half its rate at one row).
func BenchmarkSample(b *testing.B) {
	rts := backends(b)
	for _, m := range bench.SampleMethodOrder {
		b.Run(m, func(b *testing.B) {
			for _, rows := range sampleRows {
				p := bench.LightProblem{Op: "sample", DType: tile.F32, Rows: rows, Cols: sampleVocab, Method: m}
				b.Run(fmt.Sprintf("%dx%d", rows, p.Cols), func(b *testing.B) { runLightBench(b, rts, p) })
			}
		})
	}
}

// BenchmarkSampleRead/<rows>x<vocab>: reading BenchmarkSample's logits
// once, in GB/s: the maximum of each row by the samplers' vector max
// (fallback.MaxF32) on one goroutine, with no op call around it.
func BenchmarkSampleRead(b *testing.B) {
	for _, rows := range sampleRows {
		x := make([]float32, rows*sampleVocab)
		for i := range x {
			x[i] = float32(i%1999) - 999
		}
		b.Run(fmt.Sprintf("%dx%d", rows, sampleVocab), func(b *testing.B) {
			var m float32
			for range b.N {
				for r := range rows {
					m = max(m, fallback.MaxF32(x[r*sampleVocab:(r+1)*sampleVocab]))
				}
			}
			sampleSink = m
			b.ReportMetric(4*float64(len(x))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// sampleSink keeps BenchmarkSampleRead's maxima live.
var sampleSink float32
