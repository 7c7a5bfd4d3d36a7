package fallback

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

// TestAttentionDecodeHeads runs decode-shaped calls (at most 4 rows per
// key/value head: the qk4/pv4 path) with many key/value heads against the
// reference: odd head and key counts, splits, masks, every key/value dtype.
func TestAttentionDecodeHeads(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, rand.Uint64()))
	cases := []fbCase{
		{1, 32, 8, 128, 1, 1000, false, -1, -1, 0, tile.F32, 0},
		{1, 8, 8, 64, 1, 7, false, -1, -1, 0, tile.F32, 0},
		{2, 17, 17, 64, 1, 129, false, -1, -1, 0, tile.F16, 0},
		{1, 24, 8, 64, 1, 300, false, 40, -1, 3, tile.BF16, 3},
		{1, 16, 8, 128, 2, 257, true, -1, -1, 0, tile.F32, 2}, // 2 positions × 2 heads
		{1, 12, 4, 64, 1, 1, false, -1, -1, 0, tile.F32, 0},   // 3 rows per head, one key
		{3, 8, 4, 64, 1, 515, true, 100, 0, 0, tile.F16, 0},
	}
	for _, v := range AttentionVariants() {
		if !v.Available() {
			continue
		}
		for _, c := range cases {
			runFastVsRef(t, rng, v.Name, c)
		}
	}
}

// TestAttentionDecodeHeadsExact checks that a head's decode output does not
// depend on the other heads or on which worker computed it: a call's
// output is bit for bit that of the same call made one key/value head at a
// time, with the splits fixed.
func TestAttentionDecodeHeadsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, rand.Uint64()))
	for _, v := range AttentionVariants() {
		if !v.Available() {
			continue
		}
		for _, dt := range []tile.DType{tile.F32, tile.F16, tile.BF16} {
			for _, splits := range []int{1, 3} {
				const hq, hkv, d, skv = 16, 8, 64, 777
				G := hq / hkv
				a := &AttentionArgs{Batch: 1, HeadsQ: hq, HeadsKV: hkv, HeadDim: d, SeqQ: 1, SeqKV: skv,
					Q: randTensor(rng, dt, 1, 1, hq, d), K: randTensor(rng, dt, 1, skv, hkv, d),
					V: randTensor(rng, dt, 1, skv, hkv, d), O: randTensor(rng, dt, 1, 1, hq, d),
					Scale: float32(1 / math.Sqrt(d)), WindowLeft: Unbounded, WindowRight: Unbounded, Splits: splits, Threads: 2}
				poisonBytes(a.O.Data)
				if err := AttentionFast(v.Name, a); err != nil {
					t.Fatal(err)
				}
				sz := dt.Size()
				want := make([]byte, len(a.O.Data))
				poisonBytes(want)
				for g := 0; g < hkv; g++ {
					h := *a
					h.HeadsQ, h.HeadsKV = G, 1
					h.Q.Data = a.Q.Data[g*G*d*sz:]
					h.O.Data = want[g*G*d*sz:]
					h.K.Data = a.K.Data[g*d*sz:]
					h.V.Data = a.V.Data[g*d*sz:]
					if err := AttentionFast(v.Name, &h); err != nil {
						t.Fatal(err)
					}
				}
				if !bytes.Equal(a.O.Data, want) {
					t.Errorf("%s %v splits %d: the output differs from the head-by-head one", v.Name, dt, splits)
				}
			}
		}
	}
}
