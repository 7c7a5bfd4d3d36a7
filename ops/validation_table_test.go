package ops_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// A validation rule that every backend keeps: the call (run, synchronous
// with a nil stream, or on a stream) must fail with want, and out must be
// byte-for-byte unchanged. The rules are about data that lives on the
// device (scale vectors, indices), which only a kernel (or the GPU
// kernels' host pre-check) can see, plus host-side scalars refused in ops.
type validationRule struct {
	name string
	want error
	// gpuKernel says a GPU device must select a GPU kernel for the call,
	// not a host fallback (host.*), so that the rule is tested on it.
	gpuKernel bool
	setup     func(t *testing.T, rt *runtime.Runtime, rng *rand.Rand) (run func(ctx context.Context, s *runtime.Stream) error, explain func() (ops.Explanation, error), out *runtime.Buffer)
}

func f32Shaped(t *testing.T, rt *runtime.Runtime, v []float32, shape ...int) *runtime.Buffer {
	t.Helper()
	b := alloc(t, rt, tile.F32, shape...)
	if err := b.WriteFloat32(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	return b
}

func randF8(t *testing.T, rt *runtime.Runtime, rng *rand.Rand, rows, cols int) *runtime.Buffer {
	t.Helper()
	raw := randBytes(rng, rows*cols)
	for i := range raw {
		raw[i] &^= 0x78 // small finite values: no NaN code (0x7f/0xff)
	}
	return bufWith(t, rt, tile.E4M3, raw, rows, cols)
}

// matmulScaleRule: an e4m3 MatMul whose ScaleA (per tensor, or per row with
// one bad value) or ScaleB holds bad.
func matmulScaleRule(name string, bad float32, perRow, onB bool) validationRule {
	return validationRule{name: name, want: ops.ErrArgument, gpuKernel: true,
		setup: func(t *testing.T, rt *runtime.Runtime, rng *rand.Rand) (func(context.Context, *runtime.Stream) error, func() (ops.Explanation, error), *runtime.Buffer) {
			const m, n, k = 20, 24, 32
			a, b := randF8(t, rt, rng, m, k), randF8(t, rt, rng, k, n)
			d := alloc(t, rt, tile.F32, m, n)
			good := func(n int) []float32 {
				v := make([]float32, n)
				for i := range v {
					v[i] = 0.5 + rng.Float32()
				}
				return v
			}
			sa, sb := good(1), good(1)
			if perRow {
				sa = good(m)
			}
			if onB {
				sb[len(sb)-1] = bad
			} else {
				sa[rng.IntN(len(sa))] = bad
			}
			opt := ops.DefaultMatMulOptions()
			opt.ScaleA, opt.ScaleB = f32Shaped(t, rt, sa, len(sa)), f32Shaped(t, rt, sb, len(sb))
			run := func(ctx context.Context, s *runtime.Stream) error {
				o := opt
				o.Stream = s
				return ops.MatMul(ctx, rt, ops.MatrixOf(d), ops.MatrixOf(a), ops.MatrixOf(b), &o)
			}
			explain := func() (ops.Explanation, error) {
				return ops.ExplainMatMul(rt, ops.MatrixOf(d), ops.MatrixOf(a), ops.MatrixOf(b), &opt)
			}
			return run, explain, d
		}}
}

// dequantRule: a Dequantize whose ScaleInv holds bad (per tensor or in one
// row).
func dequantRule(name string, bad float32, perRow bool) validationRule {
	return validationRule{name: name, want: ops.ErrArgument, gpuKernel: true,
		setup: func(t *testing.T, rt *runtime.Runtime, rng *rand.Rand) (func(context.Context, *runtime.Stream) error, func() (ops.Explanation, error), *runtime.Buffer) {
			const rows, cols = 9, 40
			q := randF8(t, rt, rng, rows, cols)
			y := alloc(t, rt, tile.F32, rows, cols)
			g, inv := ops.PerTensor, []float32{bad}
			if perRow {
				g, inv = ops.PerRow, make([]float32, rows)
				for i := range inv {
					inv[i] = 0.25 + rng.Float32()
				}
				inv[rng.IntN(rows)] = bad
			}
			opt := ops.DequantizeOptions{Granularity: g, ScaleInv: f32Shaped(t, rt, inv, len(inv))}
			run := func(ctx context.Context, s *runtime.Stream) error {
				o := opt
				o.Stream = s
				return ops.Dequantize(ctx, rt, y, q, &o)
			}
			return run, func() (ops.Explanation, error) { return ops.ExplainDequantize(rt, y, q, &opt) }, y
		}}
}

// quantGivenRule: a per-row Quantize with a given Scales tensor holding bad.
func quantGivenRule(name string, bad float32) validationRule {
	return validationRule{name: name, want: ops.ErrArgument, gpuKernel: true,
		setup: func(t *testing.T, rt *runtime.Runtime, rng *rand.Rand) (func(context.Context, *runtime.Stream) error, func() (ops.Explanation, error), *runtime.Buffer) {
			const rows, cols = 9, 40
			x := f32Shaped(t, rt, randF32(rng, rows*cols), rows, cols)
			q := alloc(t, rt, tile.E4M3, rows, cols)
			sc := make([]float32, rows)
			for i := range sc {
				sc[i] = 0.5 + rng.Float32()
			}
			sc[rng.IntN(rows)] = bad
			opt := ops.QuantizeOptions{Granularity: ops.PerRow, Source: ops.ScaleGiven, Scales: f32Shaped(t, rt, sc, rows)}
			run := func(ctx context.Context, s *runtime.Stream) error {
				o := opt
				o.Stream = s
				return ops.Quantize(ctx, rt, q, x, &o)
			}
			return run, func() (ops.Explanation, error) { return ops.ExplainQuantize(rt, q, x, &opt) }, q
		}}
}

// gatherRule: a row MGather with one index outside the table.
func gatherRule(name string, badIdx int64) validationRule {
	return validationRule{name: name, want: ops.ErrBounds,
		setup: func(t *testing.T, rt *runtime.Runtime, rng *rand.Rand) (func(context.Context, *runtime.Stream) error, func() (ops.Explanation, error), *runtime.Buffer) {
			const rows, cols, n = 50, 16, 13
			mem := bufWith(t, rt, tile.F32, randBytes(rng, 4*rows*cols), rows, cols)
			idx := make([]byte, 4*n)
			for i := range n {
				binary.LittleEndian.PutUint32(idx[4*i:], uint32(rng.IntN(rows)))
			}
			binary.LittleEndian.PutUint32(idx[4*rng.IntN(n):], uint32(badIdx))
			it := ops.DenseTile(bufWith(t, rt, tile.S32, idx, n, 1))
			dst := ops.DenseTile(alloc(t, rt, tile.F32, n, cols))
			run := func(ctx context.Context, s *runtime.Stream) error {
				return ops.MGather(ctx, rt, dst, mem, it, &ops.GatherOptions{Stream: s})
			}
			return run, func() (ops.Explanation, error) { return ops.ExplainMGather(rt, dst, mem, it, nil) }, dst.Buf
		}}
}

// scatterRule: a row MScatter add with one index outside the table.
func scatterRule(name string, badIdx int64) validationRule {
	return validationRule{name: name, want: ops.ErrBounds,
		setup: func(t *testing.T, rt *runtime.Runtime, rng *rand.Rand) (func(context.Context, *runtime.Stream) error, func() (ops.Explanation, error), *runtime.Buffer) {
			const rows, cols, n = 50, 16, 13
			mem := f32Shaped(t, rt, randF32(rng, rows*cols), rows, cols)
			idx := make([]byte, 4*n)
			for i := range n {
				binary.LittleEndian.PutUint32(idx[4*i:], uint32(rng.IntN(rows)))
			}
			binary.LittleEndian.PutUint32(idx[4*rng.IntN(n):], uint32(badIdx))
			it := ops.DenseTile(bufWith(t, rt, tile.S32, idx, n, 1))
			src := ops.DenseTile(f32Shaped(t, rt, randF32(rng, n*cols), n, cols))
			opt := ops.ScatterOptions{Op: ops.ScatterAdd}
			run := func(ctx context.Context, s *runtime.Stream) error {
				o := opt
				o.Stream = s
				return ops.MScatter(ctx, rt, mem, it, src, &o)
			}
			return run, func() (ops.Explanation, error) { return ops.ExplainMScatter(rt, mem, it, src, &opt) }, mem
		}}
}

// matmulAlphaRule: a host-side scalar refused by ops before any backend.
func matmulAlphaRule(name string, alpha float32) validationRule {
	return validationRule{name: name, want: ops.ErrArgument,
		setup: func(t *testing.T, rt *runtime.Runtime, rng *rand.Rand) (func(context.Context, *runtime.Stream) error, func() (ops.Explanation, error), *runtime.Buffer) {
			a := f32Shaped(t, rt, randF32(rng, 7*5), 7, 5)
			b := f32Shaped(t, rt, randF32(rng, 5*3), 5, 3)
			d := alloc(t, rt, tile.F32, 7, 3)
			run := func(ctx context.Context, s *runtime.Stream) error {
				return ops.MatMul(ctx, rt, ops.MatrixOf(d), ops.MatrixOf(a), ops.MatrixOf(b), &ops.MatMulOptions{Alpha: alpha, Stream: s})
			}
			return run, nil, d
		}}
}

// attentionScalarRule: a host-side attention scalar (Scale, SoftCap)
// refused by ops before any backend.
func attentionScalarRule(name string, scale, softCap float32) validationRule {
	return validationRule{name: name, want: ops.ErrArgument,
		setup: func(t *testing.T, rt *runtime.Runtime, rng *rand.Rand) (func(context.Context, *runtime.Stream) error, func() (ops.Explanation, error), *runtime.Buffer) {
			q := f32Shaped(t, rt, randF32(rng, 3*2*64), 1, 3, 2, 64)
			k := f32Shaped(t, rt, randF32(rng, 3*2*64), 1, 3, 2, 64)
			o := alloc(t, rt, tile.F32, 1, 3, 2, 64)
			run := func(ctx context.Context, s *runtime.Stream) error {
				return ops.Attention(ctx, rt, ops.AttnTensorOf(o), ops.AttnTensorOf(q), ops.AttnTensorOf(k), ops.AttnTensorOf(k),
					&ops.AttentionOptions{Scale: scale, SoftCap: softCap, Stream: s})
			}
			return run, nil, o
		}}
}

var (
	nan32  = float32(math.NaN())
	inf32  = float32(math.Inf(1))
	ninf32 = float32(math.Inf(-1))
)

// validationRules is the table of data rules every backend enforces.
var validationRules = func() []validationRule {
	var rs []validationRule
	for _, c := range []struct {
		name string
		v    float32
	}{{"NaN", nan32}, {"0", 0}, {"-1", -1}, {"+Inf", inf32}, {"-Inf", ninf32}, {"1e-40", 1e-40}, {"MaxFloat32", math.MaxFloat32}, {"-0", float32(math.Copysign(0, -1))}} {
		rs = append(rs,
			matmulScaleRule("matmul e4m3 ScaleA="+c.name, c.v, false, false),
			matmulScaleRule("matmul e4m3 per-row ScaleA one "+c.name, c.v, true, false),
			matmulScaleRule("matmul e4m3 ScaleB="+c.name, c.v, false, true),
			dequantRule("dequantize ScaleInv="+c.name, c.v, false),
			dequantRule("dequantize per-row ScaleInv one "+c.name, c.v, true),
			quantGivenRule("quantize per-row Scales one "+c.name, c.v),
		)
	}
	for _, c := range []struct {
		name string
		v    float32
	}{{"NaN", nan32}, {"+Inf", inf32}, {"-Inf", ninf32}} {
		rs = append(rs, matmulAlphaRule("matmul Alpha="+c.name, c.v),
			attentionScalarRule("attention Scale="+c.name, c.v, 0),
			attentionScalarRule("attention SoftCap="+c.name, 0, c.v))
	}
	rs = append(rs, attentionScalarRule("attention SoftCap=-1", 0, -1))
	for _, i := range []int64{50, -1, 1 << 30} {
		name := fmt.Sprint(i)
		rs = append(rs, gatherRule("gather index "+name, i), scatterRule("scatter add index "+name, i))
	}
	return rs
}()

// TestValidationTable runs every rule of validationRules on the CPU and on
// the simulated device, synchronously and on a stream: the error is the
// rule's (from the call, or from the stream's Synchronize) and the output
// is unchanged.
func TestValidationTable(t *testing.T) {
	forEachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		rng := rand.New(rand.NewPCG(31, 7))
		ctx := context.Background()
		gpu := rt.Device().GPU()
		for _, r := range validationRules {
			for _, async := range []bool{false, true} {
				run, explain, out := r.setup(t, rt, rng)
				if gpu && r.gpuKernel && explain != nil {
					e, err := explain()
					if err != nil {
						t.Fatalf("%s: explain: %v", r.name, err)
					}
					if k := e.Chosen(); k == nil || strings.HasPrefix(k.Name, "host.") {
						t.Errorf("%s: chose %v, want a GPU kernel (the rule must hold on it):\n%s", r.name, k, e)
					} else if !async && r.name == validationRules[0].name {
						t.Logf("%s: %s", r.name, k.Name)
					}
				}
				poison(t, out)
				before := bytesOf(t, out)
				var err error
				if async {
					s, serr := rt.NewStream()
					if serr != nil {
						t.Fatal(serr)
					}
					if err = run(ctx, s); err == nil {
						err = s.Synchronize(ctx)
					}
					s.Close()
				} else {
					err = run(ctx, nil)
				}
				if !errors.Is(err, r.want) {
					t.Errorf("%s (async %v): %v; want %v", r.name, async, err, r.want)
				}
				if !bytes.Equal(bytesOf(t, out), before) {
					t.Errorf("%s (async %v): the output was written", r.name, async)
				}
			}
		}
	})
}
