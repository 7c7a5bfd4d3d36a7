package fallback

import (
	"fmt"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

// BenchmarkActFast/<fn>/<dtype>/<rows>x<cols>: the gated activation
// f(a)·b, a, b and y separate rows × cols matrices; GB/s of the bytes
// it must move (a and b read once, y written once). The bench package's
// BenchmarkSiluMul is the op through the runtime; this one has every
// function (the bench package has SiLU only).
func BenchmarkActFast(b *testing.B) {
	const rows, cols = 4096, 4096
	for f := range numActFuncs {
		for _, d := range []tile.DType{tile.F32, tile.F16, tile.BF16} {
			b.Run(fmt.Sprintf("%v/%v/%dx%d", f, d, rows, cols), func(b *testing.B) {
				mk := func() Matrix {
					m := Matrix{DType: d, Data: make([]byte, rows*cols*d.Size()), Rows: rows, Cols: cols, LD: cols}
					for i := range rows * cols {
						storeF32(d, m.Data, i, float32(i%1999)/500-2)
					}
					return m
				}
				x, g, y := mk(), mk(), mk()
				a := &ActArgs{Func: f, A: x, B: &g, Y: y}
				b.ResetTimer()
				for range b.N {
					ActFast(a)
				}
				b.ReportMetric(3*float64(rows*cols*d.Size())*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			})
		}
	}
}
