package fallback

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

// randTensor returns a dense [batch, seq, heads, d] tensor of random values
// in [-1, 1).
func randTensor(rng *rand.Rand, dt tile.DType, batch, seq, heads, d int) AttnTensor {
	n := batch * seq * heads * d
	t := AttnTensor{DType: dt, Data: make([]byte, n*dt.Size()), BatchStride: seq * heads * d, SeqStride: heads * d, HeadStride: d}
	for i := 0; i < n; i++ {
		storeF32(dt, t.Data, i, rng.Float32()*2-1)
	}
	return t
}

func poisonBytes(b []byte) {
	for i := range b {
		b[i] = 0xff
	}
}

// compareOut returns the max error of got against want relative to
// max(|want|, 1), or +Inf if got holds a NaN.
func compareOut(dt tile.DType, got, want []byte) float64 {
	worst := 0.0
	for i := 0; i < len(want)/dt.Size(); i++ {
		g, w := float64(loadF32(dt, got, i)), float64(loadF32(dt, want, i))
		e := math.Abs(g-w) / math.Max(math.Abs(w), 1)
		if math.IsNaN(e) {
			return math.Inf(1)
		}
		worst = math.Max(worst, e)
	}
	return worst
}

type fbCase struct {
	batch, hq, hkv, d, sq, skv int
	causal                     bool
	left, right                int
	softcap                    float32
	dt                         tile.DType
	splits                     int
}

func (c fbCase) String() string {
	return fmt.Sprintf("b%d_h%d/%d_d%d_q%d_kv%d_c%v_w%d,%d_cap%g_%v_s%d", c.batch, c.hq, c.hkv, c.d, c.sq, c.skv, c.causal, c.left, c.right, c.softcap, c.dt, c.splits)
}

func runFastVsRef(t *testing.T, rng *rand.Rand, variant string, c fbCase) {
	t.Helper()
	a := &AttentionArgs{Batch: c.batch, HeadsQ: c.hq, HeadsKV: c.hkv, HeadDim: c.d, SeqQ: c.sq, SeqKV: c.skv,
		Q: randTensor(rng, c.dt, c.batch, c.sq, c.hq, c.d), K: randTensor(rng, c.dt, c.batch, c.skv, c.hkv, c.d),
		V: randTensor(rng, c.dt, c.batch, c.skv, c.hkv, c.d), O: randTensor(rng, c.dt, c.batch, c.sq, c.hq, c.d),
		Scale: float32(1 / math.Sqrt(float64(c.d))), SoftCap: c.softcap, Causal: c.causal,
		WindowLeft: c.left, WindowRight: c.right, Splits: c.splits, Threads: 2,
		LSE: make([]byte, 4*c.batch*c.hq*c.sq), LSEBatchStride: c.hq * c.sq, LSEHeadStride: c.sq}
	ref := *a
	ref.O.Data = make([]byte, len(a.O.Data))
	ref.LSE = make([]byte, len(a.LSE))
	poisonBytes(a.O.Data)
	poisonBytes(a.LSE)
	AttentionRef(&ref)
	if err := AttentionFast(variant, a); err != nil {
		t.Fatal(err)
	}
	tol := 1e-4
	if c.dt != tile.F32 {
		tol = 1e-2
	}
	if e := compareOut(c.dt, a.O.Data, ref.O.Data); e > tol {
		t.Errorf("%s %v: output error %.3g > %g", variant, c, e, tol)
	}
	// LSE: -Inf rows must match exactly; others to the tolerance.
	for i := 0; i < len(a.LSE)/4; i++ {
		g, w := loadF32(tile.F32, a.LSE, i), loadF32(tile.F32, ref.LSE, i)
		if math.IsInf(float64(w), -1) != math.IsInf(float64(g), -1) || (!math.IsInf(float64(w), -1) && math.Abs(float64(g-w)) > 1e-4*math.Max(1, math.Abs(float64(w)))) {
			t.Errorf("%s %v: LSE[%d] = %v, want %v", variant, c, i, g, w)
			break
		}
	}
}

func TestAttentionFastVariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, rand.Uint64()))
	cases := []fbCase{
		{1, 4, 4, 64, 17, 17, false, -1, -1, 0, tile.F32, 0},
		{2, 8, 2, 72, 33, 100, true, -1, -1, 0, tile.F32, 0},
		{1, 8, 1, 128, 1, 300, false, -1, -1, 0, tile.F32, 3},
		{1, 4, 1, 64, 5, 130, true, 20, -1, 0, tile.BF16, 0},
		{1, 2, 2, 40, 70, 9, true, -1, -1, 0, tile.F16, 0},
		{1, 2, 1, 256, 9, 70, false, 5, 3, 30, tile.F32, 2},
		{1, 2, 2, 64, 100, 50, true, -1, -1, 0, tile.F32, 0}, // early rows see nothing
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
