package ops_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

var granularities = []ops.Granularity{ops.PerTensor, ops.PerRow, ops.PerColumn, ops.Block1x128, ops.Block128x128, ops.MX}

// quantShapes include partial blocks in both directions and a 3-D tensor.
var quantShapes = [][]int{{1}, {1000}, {3, 7}, {130, 260}, {257, 33}, {2, 3, 100}}

func rawBytes(t testing.TB, b *runtime.Buffer) []byte {
	t.Helper()
	out := make([]byte, b.Bytes())
	if err := b.Read(context.Background(), 0, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func alloc(t testing.TB, rt *runtime.Runtime, d tile.DType, shape ...int) *runtime.Buffer {
	t.Helper()
	b, err := rt.Alloc(d, shape...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// randWide fills x with values over many binades (so blocks differ).
func randWide(t testing.TB, rng *rand.Rand, x *runtime.Buffer) []float32 {
	t.Helper()
	v := make([]float32, x.Len())
	for i := range v {
		v[i] = float32(rng.NormFloat64() * math.Ldexp(1, rng.IntN(16)-8))
	}
	if err := x.WriteFloat32(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	if err := x.ReadFloat32(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	return v
}

// ulp is the spacing of format d around v (the subnormal quantum below the
// smallest normal).
func ulp(d tile.DType, v float32) float64 {
	mant, emin := 3, -6
	if d == tile.E5M2 {
		mant, emin = 2, -14
	}
	_, e := math.Frexp(math.Abs(float64(v)))
	return math.Ldexp(1, max(e-1, emin)-mant)
}

func TestQuantizeRoundTrip(t *testing.T) {
	ctx := context.Background()
	rt := openTest(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, shape := range quantShapes {
		for _, g := range granularities {
			for _, qt := range []tile.DType{tile.E4M3, tile.E5M2} {
				for _, xt := range []tile.DType{tile.F32, tile.BF16} {
					name := fmt.Sprintf("%v/%v/%v->%v", shape, g, xt, qt)
					x := alloc(t, rt, xt, shape...)
					xv := randWide(t, rng, x)
					q := alloc(t, rt, qt, shape...)
					sdt := tile.F32
					if g == ops.MX {
						sdt = tile.U8
					}
					inv := alloc(t, rt, sdt, ops.ScaleShape(g, shape)...)
					amax := alloc(t, rt, tile.F32, 1)
					poison(t, q)
					if err := ops.Quantize(ctx, rt, q, x, &ops.QuantizeOptions{Granularity: g, ScaleInv: inv, Amax: amax}); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					y := alloc(t, rt, tile.F32, shape...)
					poison(t, y)
					if err := ops.Dequantize(ctx, rt, y, q, &ops.DequantizeOptions{Granularity: g, ScaleInv: inv}); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					qb, invb, yv := rawBytes(t, q), rawBytes(t, inv), make([]float32, y.Len())
					if err := y.ReadFloat32(ctx, yv); err != nil {
						t.Fatal(err)
					}
					av := make([]float32, 1)
					if err := amax.ReadFloat32(ctx, av); err != nil {
						t.Fatal(err)
					}
					checkRoundTrip(t, name, shape, g, qt, xv, qb, invb, yv, av[0])
				}
			}
		}
	}
}

func checkRoundTrip(t *testing.T, name string, shape []int, g ops.Granularity, qt tile.DType, xv []float32, qb, invb []byte, yv []float32, amax float32) {
	t.Helper()
	rows := 1
	for _, d := range shape[:len(shape)-1] {
		rows *= d
	}
	cols := shape[len(shape)-1]
	br, bc := g.Block(rows, cols)
	sr, sc := g.ScaleGrid(rows, cols)
	var total float64
	for _, v := range xv {
		total = math.Max(total, math.Abs(float64(v)))
	}
	if float64(amax) != total {
		t.Fatalf("%s: amax %v, true max |x| %v", name, amax, total)
	}
	fmax := float64(tile.Float8Max(qt))
	for bi := 0; bi < sr; bi++ {
		for bj := 0; bj < sc; bj++ {
			b := bi*sc + bj
			var bmax float64
			for i := bi * br; i < min(rows, (bi+1)*br); i++ {
				for j := bj * bc; j < min(cols, (bj+1)*bc); j++ {
					bmax = math.Max(bmax, math.Abs(float64(xv[i*cols+j])))
				}
			}
			// The block's scale, derived independently of the kernels.
			var s, inv float32
			if g == ops.MX {
				e := -127
				if bmax >= 0x1p-126 {
					_, fe := math.Frexp(bmax) // bmax = f·2^fe, f in [0.5, 1): ⌊log2⌋ = fe-1
					e = max(-127, fe-1-tile.Float8EMax(qt))
				}
				if got := int(invb[b]) - 127; got != e {
					t.Fatalf("%s: block %d: E8M0 exponent %d, OCP rule gives %d (amax %g)", name, b, got, e, bmax)
				}
				inv = fallback.E8M0ToF32(invb[b])
				if f, _ := math.Frexp(float64(inv)); f != 0.5 {
					t.Fatalf("%s: MX scale %g is not a power of two", name, inv)
				}
				s = float32(math.Ldexp(1, -e))
			} else {
				s = 1
				if bmax > 0 {
					s = float32(fmax) / float32(bmax)
				}
				inv = fallback.F32s(invb)[b]
				if inv != 1/s {
					t.Fatalf("%s: block %d: scale_inv %v, want 1/(fmax/amax) = %v", name, b, inv, 1/s)
				}
			}
			for i := bi * br; i < min(rows, (bi+1)*br); i++ {
				for j := bj * bc; j < min(cols, (bj+1)*bc); j++ {
					k := i*cols + j
					v := xv[k] * s
					d := tile.DecodeFloat8(qt, qb[k])
					err := math.Abs(float64(d) - float64(v))
					switch {
					case math.Abs(float64(v)) > fmax: // saturated (only MX can exceed fmax)
						if math.Abs(float64(d)) != fmax || (d < 0) != (v < 0) {
							t.Fatalf("%s: [%d] %g·%g = %g beyond fmax encodes as %g", name, k, xv[k], s, v, d)
						}
					case err > ulp(qt, v)/2:
						t.Fatalf("%s: [%d] %g·%g = %g encodes as %g: error %g over half an ulp %g", name, k, xv[k], s, v, d, err, ulp(qt, v)/2)
					}
					if want := d * inv; yv[k] != want {
						t.Fatalf("%s: [%d] dequantised %g, want %g·%g = %g", name, k, yv[k], d, inv, want)
					}
					if math.Abs(float64(v)) <= fmax {
						if e := math.Abs(float64(yv[k]) - float64(xv[k])); e > ulp(qt, v)/2*float64(inv)*(1+1e-6)+math.Abs(float64(yv[k]))*0x1p-23 {
							t.Fatalf("%s: [%d] round trip %g -> %g off by %g", name, k, xv[k], yv[k], e)
						}
					}
				}
			}
		}
	}
}

func TestQuantizeGivenScales(t *testing.T) {
	ctx := context.Background()
	rt := openTest(t)
	rng := rand.New(rand.NewPCG(7, 8))
	shape := []int{5, 300}
	x := alloc(t, rt, tile.F32, shape...)
	xv := randWide(t, rng, x)
	for _, g := range []ops.Granularity{ops.PerRow, ops.PerColumn, ops.Block1x128, ops.Block128x128} {
		for _, mode := range []tile.OverflowMode{tile.Saturate, tile.NonSaturating} {
			ss := ops.ScaleShape(g, shape)
			scales := alloc(t, rt, tile.F32, ss...)
			sv := make([]float32, scales.Len())
			for i := range sv {
				sv[i] = float32(math.Ldexp(1+rng.Float64(), rng.IntN(12)))
			}
			if err := scales.WriteFloat32(ctx, sv); err != nil {
				t.Fatal(err)
			}
			q := alloc(t, rt, tile.E5M2, shape...)
			inv := alloc(t, rt, tile.F32, ss...)
			if err := ops.Quantize(ctx, rt, q, x, &ops.QuantizeOptions{Granularity: g, Mode: mode, Source: ops.ScaleGiven, Scales: scales, ScaleInv: inv}); err != nil {
				t.Fatal(err)
			}
			qb, iv := rawBytes(t, q), make([]float32, inv.Len())
			if err := inv.ReadFloat32(ctx, iv); err != nil {
				t.Fatal(err)
			}
			br, bc := g.Block(5, 300)
			_, sc := g.ScaleGrid(5, 300)
			for i := range 5 {
				for j := range 300 {
					b := (i/br)*sc + j/bc
					if w := tile.EncodeFloat8Ref(tile.E5M2, xv[i*300+j]*sv[b], mode); qb[i*300+j] != w {
						t.Fatalf("%v: [%d,%d] %#02x want %#02x", g, i, j, qb[i*300+j], w)
					}
				}
			}
			for b := range sv {
				if iv[b] != 1/sv[b] {
					t.Fatalf("%v: scale_inv %d = %v, want %v", g, b, iv[b], 1/sv[b])
				}
			}
		}
	}
	// Per tensor, given as a value.
	q := alloc(t, rt, tile.E4M3, shape...)
	if err := ops.Quantize(ctx, rt, q, x, &ops.QuantizeOptions{Source: ops.ScaleGiven, Scale: 3}); err != nil {
		t.Fatal(err)
	}
	for i, b := range rawBytes(t, q) {
		if w := tile.EncodeFloat8Ref(tile.E4M3, xv[i]*3, tile.Saturate); b != w {
			t.Fatalf("per tensor [%d]: %#02x want %#02x", i, b, w)
		}
	}
}

func TestAmaxOp(t *testing.T) {
	ctx := context.Background()
	rt := openTest(t)
	rng := rand.New(rand.NewPCG(9, 10))
	x := alloc(t, rt, tile.F16, 129, 40)
	xv := randWide(t, rng, x)
	out := alloc(t, rt, tile.F32, 129)
	if err := ops.Amax(ctx, rt, out, x, &ops.AmaxOptions{Granularity: ops.PerRow}); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 129)
	if err := out.ReadFloat32(ctx, got); err != nil {
		t.Fatal(err)
	}
	for r := range 129 {
		var m float32
		for _, v := range xv[r*40 : (r+1)*40] {
			m = max(m, float32(math.Abs(float64(v))))
		}
		if got[r] != m {
			t.Fatalf("row %d: %v want %v", r, got[r], m)
		}
	}
}

func TestQuantizeBadInput(t *testing.T) {
	ctx := context.Background()
	rt := openTest(t)
	rng := rand.New(rand.NewPCG(11, 12))
	shape := []int{4, 64}
	x := alloc(t, rt, tile.F32, shape...)
	randWide(t, rng, x)
	q := alloc(t, rt, tile.E4M3, shape...)
	inv := alloc(t, rt, tile.F32, 4)
	amax := alloc(t, rt, tile.F32, 1)
	rowScales := func(v ...float32) *runtime.Buffer {
		b := alloc(t, rt, tile.F32, len(v))
		if err := b.WriteFloat32(ctx, v); err != nil {
			t.Fatal(err)
		}
		return b
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	bad := []struct {
		name     string
		q, x     *runtime.Buffer
		opt      ops.QuantizeOptions
		sentinel error
		arg      string
	}{
		{"scale zero", q, x, ops.QuantizeOptions{Source: ops.ScaleGiven, Scale: 0}, ops.ErrArgument, "Scale"},
		{"scale negative", q, x, ops.QuantizeOptions{Source: ops.ScaleGiven, Scale: -2}, ops.ErrArgument, "Scale"},
		{"scale NaN", q, x, ops.QuantizeOptions{Source: ops.ScaleGiven, Scale: nan}, ops.ErrArgument, "Scale"},
		{"scale Inf", q, x, ops.QuantizeOptions{Source: ops.ScaleGiven, Scale: inf}, ops.ErrArgument, "Scale"},
		{"scales zero", q, x, ops.QuantizeOptions{Granularity: ops.PerRow, Source: ops.ScaleGiven, Scales: rowScales(1, 0, 1, 1)}, ops.ErrArgument, "Scales"},
		{"scales negative", q, x, ops.QuantizeOptions{Granularity: ops.PerRow, Source: ops.ScaleGiven, Scales: rowScales(1, 1, -1, 1)}, ops.ErrArgument, "Scales"},
		{"scales NaN", q, x, ops.QuantizeOptions{Granularity: ops.PerRow, Source: ops.ScaleGiven, Scales: rowScales(nan, 1, 1, 1)}, ops.ErrArgument, "Scales"},
		{"scales Inf", q, x, ops.QuantizeOptions{Granularity: ops.PerRow, Source: ops.ScaleGiven, Scales: rowScales(1, 1, 1, inf)}, ops.ErrArgument, "Scales"},
		{"scales wrong shape", q, x, ops.QuantizeOptions{Granularity: ops.PerRow, Source: ops.ScaleGiven, Scales: rowScales(1, 1, 1)}, ops.ErrShape, "Scales"},
		{"scales 2-D wrong", q, x, ops.QuantizeOptions{Granularity: ops.Block1x128, Source: ops.ScaleGiven, Scales: alloc(t, rt, tile.F32, 1, 4)}, ops.ErrShape, "Scales"},
		{"scales dtype", q, x, ops.QuantizeOptions{Granularity: ops.PerRow, Source: ops.ScaleGiven, Scales: alloc(t, rt, tile.F16, 4)}, ops.ErrDType, "Scales"},
		{"scale_inv wrong shape", q, x, ops.QuantizeOptions{Granularity: ops.PerColumn, ScaleInv: inv}, ops.ErrShape, "ScaleInv"},
		{"MX scale_inv f32", q, x, ops.QuantizeOptions{Granularity: ops.MX, ScaleInv: alloc(t, rt, tile.F32, 4, 2)}, ops.ErrDType, "ScaleInv"},
		{"amax shape", q, x, ops.QuantizeOptions{Amax: inv}, ops.ErrShape, "Amax"},
		{"x s32", q, alloc(t, rt, tile.S32, shape...), ops.QuantizeOptions{}, ops.ErrDType, "x"},
		{"x f64", q, alloc(t, rt, tile.F64, shape...), ops.QuantizeOptions{}, ops.ErrDType, "x"},
		{"x e4m3", q, alloc(t, rt, tile.E4M3, shape...), ops.QuantizeOptions{}, ops.ErrDType, "x"},
		{"q f16", alloc(t, rt, tile.F16, shape...), x, ops.QuantizeOptions{}, ops.ErrDType, "q"},
		{"q shape", alloc(t, rt, tile.E4M3, 64, 4), x, ops.QuantizeOptions{}, ops.ErrShape, "q"},
		{"granularity", q, x, ops.QuantizeOptions{Granularity: 99}, ops.ErrArgument, "Granularity"},
		{"mode", q, x, ops.QuantizeOptions{Mode: 9}, ops.ErrArgument, "Mode"},
		{"margin", q, x, ops.QuantizeOptions{Margin: -1}, ops.ErrArgument, "Margin"},
		{"MX given", q, x, ops.QuantizeOptions{Granularity: ops.MX, Source: ops.ScaleGiven, Scale: 1}, ops.ErrArgument, "Source"},
		{"row given no tensor", q, x, ops.QuantizeOptions{Granularity: ops.PerRow, Source: ops.ScaleGiven, Scale: 1}, ops.ErrArgument, "Scales"},
		{"nil x", q, nil, ops.QuantizeOptions{}, ops.ErrArgument, "x"},
	}
	for _, c := range bad {
		poison(t, c.q)
		poison(t, inv)
		poison(t, amax)
		before := [][]byte{rawBytes(t, c.q), rawBytes(t, inv), rawBytes(t, amax)}
		opt := c.opt
		if opt.ScaleInv == nil && opt.Granularity == ops.PerRow {
			opt.ScaleInv = inv
		}
		if opt.Amax == nil {
			opt.Amax = amax
		}
		err := ops.Quantize(ctx, rt, c.q, c.x, &opt)
		var ae *tile.ArgError
		if !errors.Is(err, c.sentinel) || !errors.As(err, &ae) || ae.Arg != c.arg {
			t.Errorf("%s: got %v; want %v naming %s", c.name, err, c.sentinel, c.arg)
			continue
		}
		after := [][]byte{rawBytes(t, c.q), rawBytes(t, inv), rawBytes(t, amax)}
		for i := range before {
			if !bytes.Equal(before[i], after[i]) {
				t.Errorf("%s: output %d written on error", c.name, i)
			}
		}
	}
	// Dequantize.
	y := alloc(t, rt, tile.F32, shape...)
	dbad := []struct {
		name     string
		y, q     *runtime.Buffer
		opt      ops.DequantizeOptions
		sentinel error
		arg      string
	}{
		{"scale_inv zero", y, q, ops.DequantizeOptions{Granularity: ops.PerRow, ScaleInv: rowScales(1, 1, 0, 1)}, ops.ErrArgument, "ScaleInv"},
		{"scale_inv NaN", y, q, ops.DequantizeOptions{Granularity: ops.PerRow, ScaleInv: rowScales(1, nan, 1, 1)}, ops.ErrArgument, "ScaleInv"},
		{"scale_inv negative", y, q, ops.DequantizeOptions{Granularity: ops.PerRow, ScaleInv: rowScales(1, 1, 1, -3)}, ops.ErrArgument, "ScaleInv"},
		{"scale_inv Inf", y, q, ops.DequantizeOptions{ScaleInv: rowScales(inf)}, ops.ErrArgument, "ScaleInv"},
		{"scale_inv shape", y, q, ops.DequantizeOptions{Granularity: ops.PerColumn, ScaleInv: rowScales(1, 1, 1, 1)}, ops.ErrShape, "ScaleInv"},
		{"scale_inv missing", y, q, ops.DequantizeOptions{Granularity: ops.PerRow}, ops.ErrArgument, "ScaleInv"},
		{"q f32", y, x, ops.DequantizeOptions{}, ops.ErrDType, "q"},
		{"y e5m2", alloc(t, rt, tile.E5M2, shape...), q, ops.DequantizeOptions{}, ops.ErrDType, "y"},
		{"y shape", alloc(t, rt, tile.F32, 256), q, ops.DequantizeOptions{}, ops.ErrShape, "y"},
	}
	for _, c := range dbad {
		poison(t, c.y)
		before := rawBytes(t, c.y)
		err := ops.Dequantize(ctx, rt, c.y, c.q, &c.opt)
		var ae *tile.ArgError
		if !errors.Is(err, c.sentinel) || !errors.As(err, &ae) || ae.Arg != c.arg {
			t.Errorf("dequantize %s: got %v; want %v naming %s", c.name, err, c.sentinel, c.arg)
			continue
		}
		if !bytes.Equal(before, rawBytes(t, c.y)) {
			t.Errorf("dequantize %s: output written on error", c.name)
		}
	}
}

func TestDelayedScaling(t *testing.T) {
	d, err := ops.NewDelayedScaling(tile.E4M3, 3, ops.AmaxMax, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d.Scale() != 1 {
		t.Fatalf("initial scale %v", d.Scale())
	}
	steps := []struct{ amax, want float32 }{
		{2, 448.0 / 2 / 2}, {8, 448.0 / 8 / 2}, {1, 448.0 / 8 / 2}, {0.5, 448.0 / 8 / 2},
		{0.25, 448.0 / 1 / 2}, // 8 has aged out of the 3-step window
		{0, 448.0 / 0.5 / 2},  // window {0.5, 0.25, 0}: max 0.5
	}
	for i, s := range steps {
		if got := d.Update(s.amax); got != s.want {
			t.Fatalf("max step %d: scale %v want %v (history %v)", i, got, s.want, d.History())
		}
	}
	r, _ := ops.NewDelayedScaling(tile.E5M2, 4, ops.AmaxMostRecent, 0)
	for _, s := range []struct{ amax, want float32 }{{4, 57344 / 4}, {1024, 56}, {0, 56}, {float32(math.NaN()), 56}, {2, 57344 / 2}} {
		if got := r.Update(s.amax); got != s.want {
			t.Fatalf("most recent: amax %v: scale %v want %v", s.amax, got, s.want)
		}
	}
	for _, bad := range []func() error{
		func() error { _, err := ops.NewDelayedScaling(tile.F16, 1, ops.AmaxMax, 0); return err },
		func() error { _, err := ops.NewDelayedScaling(tile.E4M3, 0, ops.AmaxMax, 0); return err },
		func() error { _, err := ops.NewDelayedScaling(tile.E4M3, 1, 7, 0); return err },
	} {
		if err := bad(); err == nil {
			t.Error("bad delayed-scaling argument accepted")
		}
	}
}

// ExampleQuantize quantises four values per tensor to E4M3 with a scale
// computed from their amax, then dequantises them.
func ExampleQuantize() {
	ctx := context.Background()
	rt, _ := runtime.Open(runtime.Options{})
	defer rt.Close()
	x, _ := rt.Alloc(tile.F32, 4)
	q, _ := rt.Alloc(tile.E4M3, 4)
	inv, _ := rt.Alloc(tile.F32, 1)
	amax, _ := rt.Alloc(tile.F32, 1)
	y, _ := rt.Alloc(tile.F32, 4)
	_ = x.WriteFloat32(ctx, []float32{0.5, -1.75, 3.5, 0.01})
	// amax 3.5: scale = 448/3.5 = 128, an exact power of two here:
	// 0.5·128 = 2^6 → 0x68, −224 → 0xF6, 448 → 0x7E, 1.28 → 1.25 → 0x3A.
	if err := ops.Quantize(ctx, rt, q, x, &ops.QuantizeOptions{ScaleInv: inv, Amax: amax}); err != nil {
		fmt.Println(err)
		return
	}
	bits := make([]uint8, 4)
	_ = runtime.ReadRaw(ctx, q, bits)
	if err := ops.Dequantize(ctx, rt, y, q, &ops.DequantizeOptions{ScaleInv: inv}); err != nil {
		fmt.Println(err)
		return
	}
	vals, a, s := make([]float32, 4), make([]float32, 1), make([]float32, 1)
	_ = y.ReadFloat32(ctx, vals)
	_ = amax.ReadFloat32(ctx, a)
	_ = inv.ReadFloat32(ctx, s)
	fmt.Printf("amax %g, scale_inv %g\n", a[0], s[0])
	fmt.Printf("e4m3 % x\n", bits)
	fmt.Println("dequantised", vals)
	// Output:
	// amax 3.5, scale_inv 0.0078125
	// e4m3 68 f6 7e 3a
	// dequantised [0.5 -1.75 3.5 0.009765625]
}
