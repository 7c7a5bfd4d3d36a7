package fallback

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestScaleRow checks the epilogue's row scaling, vector code included,
// bit for bit against the scalar formula out[k]·(f·sB[j0+k]) (f·sB rounded
// to f32 first) for no, one and per-column scales, every length up to 70
// (the masked tails), values across the range with subnormals, zeros,
// infinities and NaNs.
func TestScaleRow(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	val := func() float32 {
		switch r.IntN(12) {
		case 0:
			return float32(math.Inf(1 - 2*r.IntN(2)))
		case 1:
			return float32(math.NaN())
		case 2:
			return 0
		case 3:
			return math.Float32frombits(r.Uint32() & 0x807fffff) // subnormal
		}
		return math.Float32frombits(r.Uint32())
	}
	for n := 0; n <= 70; n++ {
		for _, ns := range []int{0, 1, n + 9} {
			out := make([]float32, n)
			want := make([]float32, n)
			sB := make([]float32, ns)
			for k := range sB {
				sB[k] = val()
			}
			for k := range out {
				out[k] = val()
			}
			f, j0 := val(), 0
			if ns > 1 {
				j0 = r.IntN(10)
			}
			for k, x := range out {
				s := float32(1)
				switch ns {
				case 0:
				case 1:
					s = sB[0]
				default:
					s = sB[j0+k]
				}
				want[k] = x * (f * s)
			}
			scaleRow(out, f, sB, j0)
			for k := range out {
				if math.Float32bits(out[k]) != math.Float32bits(want[k]) && !(out[k] != out[k] && want[k] != want[k]) {
					t.Fatalf("n=%d scales %d: out[%d] = %v, want %v", n, ns, k, out[k], want[k])
				}
			}
		}
	}
}
