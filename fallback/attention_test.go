package fallback

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/tcrt-go/tcrt/internal/cpufeat"
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
		{1, 4, 1, 128, 1, 257, true, -1, -1, 0, tile.F16, 0}, // decode: qk4/pv4, a key tail
		{1, 4, 1, 64, 1, 130, false, -1, -1, 0, tile.F32, 0},
		{2, 4, 2, 64, 2, 99, false, -1, -1, 0, tile.BF16, 0},
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

// TestAttnKernels compares every kernel set's inner loops with the Go ones
// on random strides, column counts and scales.
func TestAttnKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, rand.Uint64()))
	rnd := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = rng.Float32()*2 - 1
		}
		return v
	}
	for _, k := range attnVariants {
		if !cpuidSupports(k) {
			continue
		}
		for trial := 0; trial < 200; trial++ {
			nc := 1 + rng.IntN(32)
			kn := 1 + rng.IntN(70)
			rsa, csa := 1, 8+rng.IntN(5)
			if rng.IntN(2) == 0 {
				rsa, csa = kn+rng.IntN(3), 1
			}
			ldb, ldc := nc+rng.IntN(9), nc+rng.IntN(9)
			a := rnd(8*rsa + kn*csa + 8)
			b := rnd(kn*ldb + 32)
			c0 := rnd(8*ldc + 32)
			scale := rnd(8)
			for _, sp := range []*float32{nil, &scale[0]} {
				want := append([]float32(nil), c0...)
				got := append([]float32(nil), c0...)
				gemmGo(&want[0], ldc, &a[0], rsa, csa, &b[0], ldb, kn, nc, sp)
				k.gemm(&got[0], ldc, &a[0], rsa, csa, &b[0], ldb, kn, nc, sp)
				for i := range want {
					if math.Abs(float64(got[i]-want[i])) > 1e-5*float64(kn) {
						t.Fatalf("%s gemm nc=%d kn=%d scale=%v: [%d] = %v, want %v", k.name, nc, kn, sp != nil, i, got[i], want[i])
					}
				}
			}
			rows, cols := 1+rng.IntN(64), 1+rng.IntN(64)
			s := rnd(rows*cols + 16)
			s[rng.IntN(rows*cols)] = float32(math.Inf(-1))
			mx1, mx2 := rnd(cols), make([]float32, cols)
			copy(mx2, mx1)
			colMaxGo(&s[0], cols, rows, cols, &mx1[0])
			k.colMax(&s[0], cols, rows, cols, &mx2[0])
			for i := range mx1 {
				if mx1[i] != mx2[i] {
					t.Fatalf("%s colMax: [%d] = %v, want %v", k.name, i, mx2[i], mx1[i])
				}
			}
			s2 := append([]float32(nil), s...)
			sum1, sum2 := rnd(cols), make([]float32, cols)
			copy(sum2, sum1)
			expRowsGo(&s[0], cols, rows, cols, &mx1[0], &sum1[0])
			k.expRows(&s2[0], cols, rows, cols, &mx1[0], &sum2[0])
			for i := 0; i < rows*cols; i++ {
				if math.Abs(float64(s[i]-s2[i])) > 3e-7*math.Max(1, math.Abs(float64(s[i]))) {
					t.Fatalf("%s expRows: [%d] = %v, want %v", k.name, i, s2[i], s[i])
				}
			}
			for i := range sum1 {
				if math.Abs(float64(sum1[i]-sum2[i])) > 1e-5*float64(rows) {
					t.Fatalf("%s expRows sum: [%d] = %v, want %v", k.name, i, sum2[i], sum1[i])
				}
			}
		}
	}
}

func cpuidSupports(k attnKernels) bool {
	return AttentionVariant{Name: k.name, Features: k.features}.Available()
}

func BenchmarkAttentionFastPrefill(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	c := fbCase{1, 32, 32, 128, 2048, 2048, true, -1, -1, 0, tile.F32, 0}
	a := &AttentionArgs{Batch: c.batch, HeadsQ: c.hq, HeadsKV: c.hkv, HeadDim: c.d, SeqQ: c.sq, SeqKV: c.skv,
		Q: randTensor(rng, c.dt, c.batch, c.sq, c.hq, c.d), K: randTensor(rng, c.dt, c.batch, c.skv, c.hkv, c.d),
		V: randTensor(rng, c.dt, c.batch, c.skv, c.hkv, c.d), O: randTensor(rng, c.dt, c.batch, c.sq, c.hq, c.d),
		Scale: 0.1, Causal: true, WindowLeft: -1, WindowRight: -1}
	for i := 0; i < b.N; i++ {
		AttentionFast(attnVariants[0].name, a)
	}
	b.ReportMetric(2*float64(c.sq*c.skv*c.d*c.hq)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func TestAttnConvert(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, rand.Uint64()))
	for _, k := range attnVariants {
		if !cpuidSupports(k) || k.cvtBF16 == nil {
			continue
		}
		for _, dt := range []tile.DType{tile.BF16, tile.F16} {
			src := randTensor(rng, dt, 1, 1, 1, 64)
			want := make([]float32, 64)
			loadRowF32(want, &src, 0, 1)
			got := make([]float32, 64)
			cvt := k.cvtF16
			if dt == tile.BF16 {
				cvt = k.cvtBF16
			}
			cvt(&got[0], (*uint16)(unsafe.Pointer(&src.Data[0])), 64)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s %v: [%d] = %v, want %v", k.name, dt, i, got[i], want[i])
				}
			}
		}
	}
}

// TestAttentionCPUMask runs the attention under each CPU feature level
// (TCRT_CPU, set in-process): the best variant left available must be the
// level's own, and it must match the reference on prefill and decode
// shapes that fit no tile (odd row counts, key tails, head dims with a tail
// of 8 columns).
func TestAttentionCPUMask(t *testing.T) {
	cases := []fbCase{
		{1, 4, 4, 64, 17, 17, false, -1, -1, 0, tile.F32, 0},
		{2, 8, 2, 72, 33, 100, true, -1, -1, 0, tile.F32, 0},
		{1, 2, 2, 40, 129, 129, true, -1, -1, 0, tile.BF16, 0},
		{1, 2, 1, 24, 7, 1000, false, 100, 3, 30, tile.F16, 2},
		{1, 4, 1, 128, 1, 257, true, -1, -1, 0, tile.BF16, 0},
		{1, 2, 2, 128, 70, 70, true, -1, -1, 0, tile.BF16, 0},
	}
	for _, level := range []string{"avx2", "generic"} {
		t.Run(level, func(t *testing.T) {
			restore, err := cpufeat.Set(level, "")
			if err != nil {
				t.Fatal(err)
			}
			defer restore()
			best := ""
			for _, v := range AttentionVariants() {
				if v.Available() {
					best = v.Name
					break
				}
			}
			if best != level && !(level == "avx2" && best == "generic") {
				t.Fatalf("TCRT_CPU=%s: best attention variant %q", level, best)
			}
			rng := rand.New(rand.NewPCG(13, rand.Uint64()))
			for _, c := range cases {
				runFastVsRef(t, rng, best, c)
			}
		})
	}
}
