package ops_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

var ropeScalings = []ops.RoPEScaling{
	{},
	{Kind: ops.RoPELinear, Factor: 4},
	{Kind: ops.RoPELlama3, Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPosition: 8192},
	{Kind: ops.RoPEYaRN, Factor: 4, OriginalMaxPosition: 4096},
}

// ropeBuild makes q (heads 3) and k (heads 1), positions in one of three
// ways, and runs RoPE in place or out of place.
func ropeBuild(t testing.TB, rt *runtime.Runtime, rng *rand.Rand, d tile.DType, tokens, hd, rot, way int, inter, outOfPlace bool, sc ops.RoPEScaling) (func() error, []*runtime.Buffer) {
	q := view(t, rt, d, tokens, 3*hd, 3*hd+1, normal(rng, 2))
	k := view(t, rt, d, tokens, hd, hd, normal(rng, 2))
	o := ops.DefaultRoPEOptions()
	o.HeadDim, o.RotaryDim, o.Interleaved, o.Scaling, o.Theta = hd, rot, inter, sc, 500000
	switch way {
	case 0:
		if tokens == 0 {
			break // buffers have at least one element
		}
		pos := make([]int32, tokens)
		for i := range pos {
			pos[i] = int32(rng.IntN(20000))
		}
		pb, err := rt.Alloc(tile.S32, tokens+1)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pb.Close() })
		if err := runtime.WriteRaw(context.Background(), pb, append(pos, -1)); err != nil { // the extra element is unused
			t.Fatal(err)
		}
		o.Positions = pb
	case 1:
		for left := tokens; left > 0; {
			l := min(left, 1+rng.IntN(5))
			o.SeqLens = append(o.SeqLens, l)
			o.SeqOffsets = append(o.SeqOffsets, rng.IntN(3000))
			left -= l
		}
		if tokens == 0 {
			o.SeqLens, o.SeqOffsets = []int{}, []int{}
		}
	default:
		o.Offset = 17
	}
	outs := []*runtime.Buffer{q.Buf, k.Buf}
	if outOfPlace {
		qo := view(t, rt, tile.F32, tokens, 3*hd, 3*hd, nil)
		ko := view(t, rt, d, tokens, hd, hd+2, nil)
		o.QOut, o.KOut = &qo, &ko
		outs = append(outs, qo.Buf, ko.Buf)
	}
	return func() error { return ops.RoPE(context.Background(), rt, q, k, &o) }, outs
}

func TestRoPEMatchesReference(t *testing.T) {
	p := openLight(t)
	for _, d := range lightTypes {
		for _, hd := range []int{2, 6, 64, 130} {
			for _, tokens := range []int{0, 1, 9} {
				for ci := range 8 {
					rot := hd
					if ci%2 == 1 && hd > 2 {
						rot = hd / 2 &^ 1
					}
					inter, oop, way, sc := ci%4 >= 2, ci >= 4, ci%3, ropeScalings[(ci+hd)%len(ropeScalings)]
					name := fmt.Sprintf("%v/%dx3x%d/rot%d/inter=%v/oop=%v/way%d/scale%d", d, tokens, hd, rot, inter, oop, way, sc.Kind)
					seed := uint64(hd*1000 + tokens*10 + ci)
					runF, outF := ropeBuild(t, p.fast, rand.New(rand.NewPCG(seed, 2)), d, tokens, hd, rot, way, inter, oop, sc)
					runR, outR := ropeBuild(t, p.ref, rand.New(rand.NewPCG(seed, 2)), d, tokens, hd, rot, way, inter, oop, sc)
					if err := runF(); err != nil {
						t.Fatalf("%s: fast: %v", name, err)
					}
					if err := runR(); err != nil {
						t.Fatalf("%s: reference: %v", name, err)
					}
					for i := range outF {
						// The same float32 cos, sin and rotation: equal up
						// to the compiler's contraction, bounded by an ulp.
						closeTo(t, fmt.Sprintf("%s: output %d", name, i), floats(t, outF[i]), floats(t, outR[i]), 2*typeEps(outF[i].DType()), 1e-6)
					}
				}
			}
		}
	}
}

// TestRoPEClosedForm checks the rotation itself: head size 2 has one
// frequency, 1, so (x0, x1) at position p becomes (x0 cos p − x1 sin p,
// x1 cos p + x0 sin p); linear scaling by f at position f·p equals no
// scaling at p; position 0 is the identity.
func TestRoPEClosedForm(t *testing.T) {
	p := openLight(t)
	rt := p.fast
	rng := rand.New(rand.NewPCG(5, 5))
	const tokens = 40
	x := make([]float32, 2*tokens)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	q := vecBuf(t, rt, tile.F32, x)
	o := ops.DefaultRoPEOptions()
	o.HeadDim = 2
	if err := ops.RoPE(context.Background(), rt, ops.Matrix{Buf: q, Rows: tokens, Cols: 2}, ops.Matrix{}, &o); err != nil {
		t.Fatal(err)
	}
	got := floats(t, q)
	for tk := range tokens {
		c, s := math.Cos(float64(tk)), math.Sin(float64(tk))
		x0, x1 := float64(x[2*tk]), float64(x[2*tk+1])
		w0, w1 := x0*c-x1*s, x1*c+x0*s
		if math.Abs(float64(got[2*tk])-w0) > 1e-6 || math.Abs(float64(got[2*tk+1])-w1) > 1e-6 {
			t.Fatalf("token %d: got (%v, %v), want (%v, %v)", tk, got[2*tk], got[2*tk+1], w0, w1)
		}
	}
	if tokens > 0 && (got[0] != x[0] || got[1] != x[1]) {
		t.Errorf("position 0 is not the identity: %v %v -> %v %v", x[0], x[1], got[0], got[1])
	}
	// Linear scaling: factor 4 at positions 4p equals none at p.
	const hd = 16
	v := make([]float32, hd)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	a, b := vecBuf(t, rt, tile.F32, v), vecBuf(t, rt, tile.F32, v)
	oa := ops.DefaultRoPEOptions()
	oa.HeadDim, oa.Offset = hd, 12
	ob := oa
	ob.Offset, ob.Scaling = 48, ops.RoPEScaling{Kind: ops.RoPELinear, Factor: 4}
	if err := ops.RoPE(context.Background(), rt, ops.Matrix{Buf: a, Rows: 1, Cols: hd}, ops.Matrix{}, &oa); err != nil {
		t.Fatal(err)
	}
	if err := ops.RoPE(context.Background(), rt, ops.Matrix{Buf: b, Rows: 1, Cols: hd}, ops.Matrix{}, &ob); err != nil {
		t.Fatal(err)
	}
	closeTo(t, "linear scaling", floats(t, b), floats(t, a), 1e-6, 1e-6)
}

// TestRoPEFusedQKV: q and k as column views of one fused QKV buffer (rows
// of q|k|v) are rotated in place, bit for bit as separate buffers are,
// and v is untouched; views whose columns overlap are still refused.
func TestRoPEFusedQKV(t *testing.T) {
	rt := openTest(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(28, 4))
	const tokens, hd, hq, hkv = 7, 32, 4, 2
	width := (hq + 2*hkv) * hd
	gen := normal(rng, 2)
	vals := make([]float32, tokens*width)
	for i := range vals {
		vals[i] = gen(i)
	}
	fused, err := rt.FromFloat32(ctx, tile.BF16, vals, tokens, width)
	if err != nil {
		t.Fatal(err)
	}
	q := ops.Matrix{Buf: fused, Rows: tokens, Cols: hq * hd, LD: width}
	k := ops.Matrix{Buf: fused, Offset: hq * hd, Rows: tokens, Cols: hkv * hd, LD: width}
	o := ops.DefaultRoPEOptions()
	o.HeadDim, o.Offset = hd, 5
	// The same rotation on separate copies.
	sep := func(off, cols int) ops.Matrix {
		part := make([]float32, tokens*cols)
		for r := 0; r < tokens; r++ {
			copy(part[r*cols:(r+1)*cols], vals[r*width+off:r*width+off+cols])
		}
		b, err := rt.FromFloat32(ctx, tile.BF16, part, tokens, cols)
		if err != nil {
			t.Fatal(err)
		}
		return ops.Matrix{Buf: b, Rows: tokens, Cols: cols, LD: cols}
	}
	qs, ks := sep(0, hq*hd), sep(hq*hd, hkv*hd)
	if err := ops.RoPE(ctx, rt, qs, ks, &o); err != nil {
		t.Fatal(err)
	}
	if err := ops.RoPE(ctx, rt, q, k, &o); err != nil {
		t.Fatalf("fused q and k: %v", err)
	}
	got, err := fused.Float32s(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wq, _ := qs.Buf.Float32s(ctx)
	wk, _ := ks.Buf.Float32s(ctx)
	before, _ := rt.FromFloat32(ctx, tile.BF16, vals, tokens, width) // the inputs as bf16
	orig, _ := before.Float32s(ctx)
	for r := 0; r < tokens; r++ {
		for c := 0; c < width; c++ {
			g := got[r*width+c]
			var want float32
			switch {
			case c < hq*hd:
				want = wq[r*hq*hd+c]
			case c < (hq+hkv)*hd:
				want = wk[r*hkv*hd+c-hq*hd]
			default:
				want = orig[r*width+c] // v is not rotated
			}
			if math.Float32bits(g) != math.Float32bits(want) {
				t.Fatalf("row %d column %d: %v, want %v", r, c, g, want)
			}
		}
	}
	overlap := ops.Matrix{Buf: fused, Offset: hq*hd - 1, Rows: tokens, Cols: hkv * hd, LD: width}
	if err := ops.RoPE(ctx, rt, q, overlap, &o); !errors.Is(err, ops.ErrAlias) {
		t.Fatalf("k overlapping q's last column: %v, want ErrAlias", err)
	}
}
