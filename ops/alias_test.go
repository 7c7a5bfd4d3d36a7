package ops_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// TestAliasedOutputs: calls whose output is also a scale, amax, index or
// data input are ErrAlias from the call, with nothing written, on every
// backend (the runtime's operand rule, which Run and every Plan apply, has
// the per-field table test TestCheckAliasTable).
func TestAliasedOutputs(t *testing.T) {
	forEachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(5, 55))
		f32 := func(n ...int) *runtime.Buffer {
			b := alloc(t, rt, tile.F32, n...)
			total := 1
			for _, d := range n {
				total *= d
			}
			v := make([]float32, total)
			for i := range v {
				v[i] = 0.5 + rng.Float32()
			}
			if err := b.WriteFloat32(ctx, v); err != nil {
				t.Fatal(err)
			}
			return b
		}
		y1 := f32(1, 1)
		q1 := randF8(t, rt, rng, 1, 1)
		x4 := f32(4, 8)
		q4 := randF8(t, rt, rng, 4, 8)
		inv4 := f32(4)
		amax := f32(1)
		cases := []struct {
			name string
			out  *runtime.Buffer
			call func() error
		}{
			{"dequantize ScaleInv = y", y1, func() error {
				return ops.Dequantize(ctx, rt, y1, q1, &ops.DequantizeOptions{ScaleInv: y1})
			}},
			{"quantize ScaleInv = Scales", inv4, func() error {
				return ops.Quantize(ctx, rt, q4, x4, &ops.QuantizeOptions{Granularity: ops.PerRow, Source: ops.ScaleGiven, Scales: inv4, ScaleInv: inv4})
			}},
			{"quantize Amax = ScaleInv", amax, func() error {
				return ops.Quantize(ctx, rt, q4, x4, &ops.QuantizeOptions{ScaleInv: amax, Amax: amax})
			}},
			{"amax out = x", y1, func() error {
				return ops.Amax(ctx, rt, y1, y1, nil)
			}},
			{"matmul ScaleA = D", y1, func() error {
				o := ops.DefaultMatMulOptions()
				o.ScaleA = y1
				return ops.MatMul(ctx, rt, ops.MatrixOf(y1), ops.MatrixOf(q1), ops.MatrixOf(q1), &o)
			}},
		}
		for _, c := range cases {
			before := bytesOf(t, c.out)
			if err := c.call(); !errors.Is(err, ops.ErrAlias) {
				t.Errorf("%s: %v; want ErrAlias", c.name, err)
			}
			if !bytes.Equal(bytesOf(t, c.out), before) {
				t.Errorf("%s: the buffer was written", c.name)
			}
		}
	})
}

// TestAmaxOutputType: an amax output of the wrong element type is ErrDType
// (not ErrShape), one of the wrong count ErrShape, for Quantize's Amax and
// DelayedScaling.UpdateFrom.
func TestAmaxOutputType(t *testing.T) {
	rt := openTest(t)
	ctx := context.Background()
	x := alloc(t, rt, tile.F32, 4, 8)
	q := alloc(t, rt, tile.E4M3, 4, 8)
	d, err := ops.NewDelayedScaling(tile.E4M3, 2, ops.AmaxMax, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		b    *runtime.Buffer
		want error
	}{{alloc(t, rt, tile.S32, 1), ops.ErrDType}, {alloc(t, rt, tile.F16, 1), ops.ErrDType}, {alloc(t, rt, tile.F32, 2), ops.ErrShape}} {
		poison(t, q)
		before := bytesOf(t, q)
		if err := ops.Quantize(ctx, rt, q, x, &ops.QuantizeOptions{Amax: c.b}); !errors.Is(err, c.want) {
			t.Errorf("Amax of %v %v: %v; want %v", c.b.DType(), c.b.Shape(), err, c.want)
		}
		if !bytes.Equal(bytesOf(t, q), before) {
			t.Errorf("Amax of %v %v: q was written", c.b.DType(), c.b.Shape())
		}
		if _, err := d.UpdateFrom(ctx, c.b); !errors.Is(err, c.want) {
			t.Errorf("UpdateFrom %v %v: %v; want %v", c.b.DType(), c.b.Shape(), err, c.want)
		}
	}
}
