package ops_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/internal/longtest"
	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// attnCase is one dense or varlen attention problem.
type attnCase struct {
	batch, sq, skv, hq, hkv, d int
	dt                         tile.DType
	causal                     bool
	window                     *ops.Window
	softcap                    float32
	splits                     int
	strided                    bool // q, k, v are views into one packed qkv buffer
	cuQ, cuKV                  []int
}

func (c attnCase) String() string {
	w := "none"
	if c.window != nil {
		w = fmt.Sprintf("%d,%d", c.window.Left, c.window.Right)
	}
	return fmt.Sprintf("b%d_q%d_kv%d_h%d/%d_d%d_%v_causal%v_win%s_cap%g_split%d_strided%v_cu%v/%v",
		c.batch, c.sq, c.skv, c.hq, c.hkv, c.d, c.dt, c.causal, w, c.softcap, c.splits, c.strided, c.cuQ, c.cuKV)
}

func tolFor(dt tile.DType) float64 {
	if dt == tile.F32 {
		return 1e-4
	}
	return 1e-2
}

// maxErr compares two buffers of the same type elementwise: max |g−w| /
// max(|w|, 1); NaN fails with the index.
// Only the first n elements are compared (all when n < 0).
func maxErr(t *testing.T, what string, got, want *runtime.Buffer, n int) float64 {
	t.Helper()
	g := make([]float32, got.Len())
	w := make([]float32, want.Len())
	if err := got.ReadFloat32(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	if err := want.ReadFloat32(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	if n >= 0 {
		w = w[:n]
	}
	worst := 0.0
	for i := range w {
		if math.IsInf(float64(w[i]), -1) && math.IsInf(float64(g[i]), -1) {
			continue // LSE of a row that sees nothing
		}
		e := math.Abs(float64(g[i])-float64(w[i])) / math.Max(math.Abs(float64(w[i])), 1)
		if math.IsNaN(e) || math.IsInf(e, 0) {
			t.Fatalf("%s: element %d = %v, want %v (unwritten?)", what, i, g[i], w[i])
		}
		worst = math.Max(worst, e)
	}
	return worst
}

func allocLike(t testing.TB, rt *runtime.Runtime, b *runtime.Buffer) *runtime.Buffer {
	t.Helper()
	r, err := rt.Alloc(b.DType(), b.Shape()...)
	if err != nil {
		t.Fatal(err)
	}
	poison(t, r)
	return r
}

// runAttnCase runs c through ops.Attention and through the float64
// reference on the same stored inputs and checks O and LSE.
func runAttnCase(t *testing.T, rt *runtime.Runtime, rng *rand.Rand, c attnCase) {
	t.Helper()
	ctx := context.Background()
	var q, k, v ops.AttnTensor
	qShape := []int{c.batch, c.sq, c.hq, c.d}
	kShape := []int{c.batch, c.skv, c.hkv, c.d}
	if c.strided {
		// One packed buffer [batch, seq, hq+2·hkv, d] (sq == skv) with a gap.
		width := (c.hq + 2*c.hkv) * c.d
		buf, _ := randBuf(t, rt, rng, c.dt, c.batch*c.sq*width+5)
		st := []int{c.sq * width, width, c.d, 1}
		q = ops.AttnTensor{Buf: buf, Offset: 5, Shape: qShape, Strides: st}
		k = ops.AttnTensor{Buf: buf, Offset: 5 + c.hq*c.d, Shape: kShape, Strides: st}
		v = ops.AttnTensor{Buf: buf, Offset: 5 + (c.hq+c.hkv)*c.d, Shape: kShape, Strides: st}
	} else {
		mk := func(shape []int) ops.AttnTensor {
			n := 1
			for _, s := range shape {
				n *= s
			}
			b, _ := randBuf(t, rt, rng, c.dt, n)
			return ops.AttnTensor{Buf: b, Shape: shape}
		}
		q, k, v = mk(qShape), mk(kShape), mk(kShape)
	}
	ob, err := rt.Alloc(c.dt, qShape...)
	if err != nil {
		t.Fatal(err)
	}
	poison(t, ob)
	rows := c.batch * c.sq
	if c.cuQ != nil {
		rows = c.cuQ[len(c.cuQ)-1]
	}
	lse, err := rt.Alloc(tile.F32, rows*c.hq)
	if err != nil {
		t.Fatal(err)
	}
	poison(t, lse)
	opt := &ops.AttentionOptions{Causal: c.causal, Window: c.window, SoftCap: c.softcap, KVSplits: c.splits,
		LSE: lse, CuSeqQ: c.cuQ, CuSeqKV: c.cuKV}
	o := ops.AttnTensorOf(ob)
	if err := ops.Attention(ctx, rt, o, q, k, v, opt); err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	args, _, err := ops.AttentionArgs(rt, o, q, k, v, opt)
	if err != nil {
		t.Fatal(err)
	}
	refO, refL := allocLike(t, rt, ob), allocLike(t, rt, lse)
	args.O.Buf, args.LSE = engBuf(refO), engBuf(refL)
	if err := engine.WithHostArgs(ctx, engRT(rt), args, func() error {
		fallback.AttentionRef(engine.HostAttentionArgs(args, 1))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Rows past the last varlen sequence are not written.
	if e := maxErr(t, c.String()+" O", ob, refO, rows*c.hq*c.d); e > tolFor(c.dt) {
		t.Errorf("%v: O max relative error %.3g > %g", c, e, tolFor(c.dt))
	}
	if e := maxErr(t, c.String()+" LSE", lse, refL, -1); e > 1e-4 {
		t.Errorf("%v: LSE max relative error %.3g", c, e)
	}
	for _, b := range []*runtime.Buffer{q.Buf, k.Buf, v.Buf, ob, lse, refO, refL} {
		b.Close()
	}
}

func TestAttentionMatchesReference(t *testing.T) {
	rt := openTest(t)
	rng := rand.New(rand.NewPCG(3, uint64(rand.Int64())))
	lens := []int{1, 17, 128, 1000}
	dims := []int{64, 128, 256, 72}
	ratios := []int{1, 4, 8}
	var cases []attnCase
	i := 0
	for _, sq := range lens {
		for _, skv := range lens {
			big := sq == 1000 && skv > 17 || skv == 1000 && sq > 17
			if big && testing.Short() || longtest.Race && sq*skv > 128*17 {
				continue // -race checks concurrency: the large shapes run without it
			}
			for _, causal := range []bool{false, true} {
				r := ratios[i%3]
				hq := 8
				if big {
					hq = r // one key/value head
				}
				cases = append(cases, attnCase{batch: 1 + i%2, sq: sq, skv: skv, hq: hq, hkv: hq / r, d: dims[i%4], dt: tile.F32, causal: causal})
				i++
			}
		}
	}
	for j, dt := range []tile.DType{tile.BF16, tile.F16} {
		cases = append(cases,
			attnCase{batch: 2, sq: 17, skv: 128, hq: 8, hkv: 2, d: 128, dt: dt, causal: j == 0},
			attnCase{batch: 1, sq: 128, skv: 17, hq: 4, hkv: 1, d: 64, dt: dt, causal: true})
	}
	// Windows, soft-capping, forced KV splits, strided packed QKV.
	for j, w := range []ops.Window{{16, -1}, {-1, 8}, {5, 3}, {0, 0}, {40, 40}} {
		w := w
		cases = append(cases, attnCase{batch: 1, sq: 128, skv: 128 + 17*j, hq: 4, hkv: 2, d: 64, dt: tile.F32, causal: j%2 == 0, window: &w})
	}
	cases = append(cases,
		attnCase{batch: 1, sq: 17, skv: 128, hq: 8, hkv: 1, d: 128, dt: tile.F32, softcap: 0.5},
		attnCase{batch: 2, sq: 33, skv: 100, hq: 4, hkv: 4, d: 256, dt: tile.BF16, causal: true, softcap: 2},
		attnCase{batch: 1, sq: 1, skv: 1000, hq: 8, hkv: 1, d: 128, dt: tile.F32, splits: 5},
		attnCase{batch: 1, sq: 3, skv: 1000, hq: 8, hkv: 2, d: 64, dt: tile.F32, causal: true, splits: 3, window: &ops.Window{Left: 300, Right: -1}},
		attnCase{batch: 2, sq: 40, skv: 40, hq: 8, hkv: 2, d: 64, dt: tile.F32, causal: true, strided: true},
		attnCase{batch: 1, sq: 17, skv: 17, hq: 2, hkv: 2, d: 8, dt: tile.F16, strided: true},
		attnCase{batch: 1, sq: 9, skv: 20, hq: 3, hkv: 1, d: 40, dt: tile.F32, causal: true},
	)
	// Varlen batches (including an empty sequence and rows that see no key).
	cases = append(cases,
		attnCase{batch: 1, sq: 70, skv: 130, hq: 8, hkv: 2, d: 64, dt: tile.F32, causal: true, cuQ: []int{0, 5, 5, 45, 65}, cuKV: []int{0, 17, 20, 120, 125}},
		attnCase{batch: 1, sq: 50, skv: 50, hq: 4, hkv: 4, d: 128, dt: tile.BF16, cuQ: []int{0, 1, 18, 50}, cuKV: []int{0, 30, 31, 50}},
		attnCase{batch: 1, sq: 64, skv: 64, hq: 4, hkv: 1, d: 72, dt: tile.F32, causal: true, window: &ops.Window{Left: 7, Right: 0}, cuQ: []int{0, 20, 64}, cuKV: []int{0, 10, 64}},
	)
	for _, c := range cases {
		runAttnCase(t, rt, rng, c)
	}
}
