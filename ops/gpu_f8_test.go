package ops_test

// Tests of the float8 PTX kernels (kernels/ptx F8, registered in gpu_f8.go)
// as ops reach them through the registry: bit for bit against the CPU
// reference on fresh random inputs with tails and specials, scale errors
// identical to the CPU backend's with nothing written, and the host
// fallback for what the PTX does not cover. The bodies run on the simulated
// sm_86 and sm_89 devices (ptxas's cubins of the module, the kernels forced
// by name) in every build, and on a GPU under -tags cuda
// (gpu_f8_cuda_test.go; scripts/gpu-run.sh).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/internal/longtest"
	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

func openF8(t testing.TB, k runtime.BackendKind) *runtime.Runtime {
	t.Helper()
	return openF8With(t, runtime.Options{Backend: k})
}

// openF8With opens a runtime with opts, closed when t ends.
func openF8With(t testing.TB, opts runtime.Options) *runtime.Runtime {
	t.Helper()
	rt, err := runtime.Open(opts)
	if err != nil {
		t.Fatalf("open %s: %v", opts.Backend, err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func f8Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// f8OpsInput is random f32 data: values over a wide exponent range, random
// bit patterns, float8 rounding ties and specials (signed zeros and NaNs,
// infinities, f32 subnormals, the formats' limits).
func f8OpsInput(rng *rand.Rand, n int) []float32 {
	nan := func(b uint32) float32 { return math.Float32frombits(b) }
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		nan(0x7fc00000), nan(0xffc00000), nan(0x7f800001), nan(0xff812345),
		math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, math.MaxFloat32, -math.MaxFloat32,
		448, 464, 480, -480, 57344, 61440, -61440, 0x1p-9, 0x1p-10, 0x1.8p-10, 0x1p-16, 0x1p-17, 0x1.8p-17, 1e-30}
	x := make([]float32, n)
	for i := range x {
		switch r := rng.IntN(16); {
		case r == 0:
			x[i] = specials[rng.IntN(len(specials))]
		case r == 1:
			x[i] = math.Float32frombits(rng.Uint32())
		case r < 4: // a tie between two float8 neighbours (3 or 2 mantissa bits)
			m := uint32(rng.IntN(8))<<20 | 1<<19
			if rng.IntN(2) == 0 {
				m = uint32(rng.IntN(4))<<21 | 1<<20
			}
			e := uint32(127 + rng.IntN(40) - 20)
			x[i] = math.Float32frombits(uint32(rng.IntN(2))<<31 | e<<23 | m)
		default:
			x[i] = float32(rng.NormFloat64() * math.Pow(2, float64(rng.IntN(48)-24)))
		}
	}
	return x
}

// f8Scale is a random positive finite scale: a power of two or not.
func f8Scale(rng *rand.Rand) float32 {
	s := float32(math.Pow(2, float64(rng.IntN(24)-12)))
	if rng.IntN(2) == 0 {
		s *= 1 + rng.Float32()
	}
	return s
}

func f8Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	engine.EncodeFloat32(tile.F32, b, v)
	return b
}

func f8Alloc(t testing.TB, rt *runtime.Runtime, d tile.DType, data []byte, shape ...int) *runtime.Buffer {
	t.Helper()
	b, err := rt.Alloc(d, shape...)
	f8Must(t, err)
	t.Cleanup(func() { b.Close() })
	if data == nil { // poison: an output the kernel leaves alone shows
		data = make([]byte, b.Bytes())
		for i := range data {
			data[i] = 0xA5 ^ byte(i*7)
		}
	}
	f8Must(t, b.Write(context.Background(), 0, data))
	return b
}

func f8Read(t testing.TB, b *runtime.Buffer) []byte {
	t.Helper()
	out := make([]byte, b.Bytes())
	f8Must(t, b.Read(context.Background(), 0, out))
	return out
}

func f8ExplainDequantize(rt *runtime.Runtime, y, q *runtime.Buffer, opt *ops.DequantizeOptions) (ops.Explanation, error) {
	return ops.ExplainDequantize(rt, y, q, opt)
}

// f8Chosen fails unless the kernel e chose is want (or, with a trailing
// '*', starts with it).
func f8Chosen(t testing.TB, e ops.Explanation, want string) {
	t.Helper()
	k := e.Chosen()
	ok := k != nil && (k.Name == want || strings.HasSuffix(want, "*") && strings.HasPrefix(k.Name, strings.TrimSuffix(want, "*")))
	if !ok {
		t.Fatalf("chose %v, want %s:\n%v", k, want, e)
	}
}

// f8SameF32 compares f32 outputs bit for bit, except that any NaN matches
// any NaN: the GPU's mul.rn.f32 returns the canonical NaN, where the CPU
// keeps the decoded NaN's sign.
func f8SameF32(t testing.TB, what string, got, want []byte) {
	t.Helper()
	for i := 0; i+4 <= len(want); i += 4 {
		g := math.Float32frombits(uint32(got[i]) | uint32(got[i+1])<<8 | uint32(got[i+2])<<16 | uint32(got[i+3])<<24)
		w := math.Float32frombits(uint32(want[i]) | uint32(want[i+1])<<8 | uint32(want[i+2])<<16 | uint32(want[i+3])<<24)
		if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
			t.Fatalf("%s: element %d is %v (%#08x), want %v (%#08x)", what, i/4, g, math.Float32bits(g), w, math.Float32bits(w))
		}
	}
}

// f8Shapes are testF8Ops's shapes: tails (n mod 4 ≠ 0), rows past one
// block's threads, more rows than the per-row grid (32 a SM) and more quads
// than the per-tensor grid. The simulator runs the smaller ones.
//
//lint:ignore U1000 the -tags cuda suite (gpu_f8_cuda_test.go) runs these shapes
var f8Shapes = [][2]int{{1, 1}, {1, 3}, {3, 5}, {7, 129}, {33, 1000}, {257, 4099}, {4500, 3}, {1024, 2101}}

// testF8Ops quantises random data with every format, overflow mode and
// scale source on rt (whose quantize and dequantize must choose the PTX
// kernels) and dequantises the result, each bit for bit against the CPU
// reference.
func testF8Ops(t *testing.T, rt *runtime.Runtime, shapes [][2]int) {
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0xf8))
	for _, sh := range shapes {
		rows, cols := sh[0], sh[1]
		n := rows * cols
		for _, f := range []tile.DType{tile.E4M3, tile.E5M2} {
			for _, mode := range []tile.OverflowMode{tile.Saturate, tile.NonSaturating} {
				for _, kind := range []string{"scale", "tensor-buf", "row-buf"} {
					for _, withInv := range []bool{false, true} {
						name := fmt.Sprintf("%dx%d/%v/%v/%s/inv=%v", rows, cols, f, mode, kind, withInv)
						t.Run(name, func(t *testing.T) {
							x := f8OpsInput(rng, n)
							g := ops.PerTensor
							if kind == "row-buf" {
								g = ops.PerRow
							}
							nsc := 1
							if g == ops.PerRow {
								nsc = rows
							}
							scales := make([]float32, nsc)
							for i := range scales {
								scales[i] = f8Scale(rng)
							}
							xb := f8Alloc(t, rt, tile.F32, f8Bytes(x), rows, cols)
							qb := f8Alloc(t, rt, f, nil, rows, cols)
							opt := &ops.QuantizeOptions{Granularity: g, Mode: mode, Source: ops.ScaleGiven}
							if kind == "scale" {
								opt.Scale = scales[0]
							} else {
								opt.Scales = f8Alloc(t, rt, tile.F32, f8Bytes(scales), nsc)
							}
							var invb *runtime.Buffer
							if withInv {
								invb = f8Alloc(t, rt, tile.F32, nil, nsc)
								opt.ScaleInv = invb
							}
							e, err := ops.ExplainQuantize(rt, qb, xb, opt)
							f8Must(t, err)
							f8Chosen(t, e, "ptx.quantize")
							f8Must(t, ops.Quantize(ctx, rt, qb, xb, opt))

							ref := &fallback.QuantizeArgs{Rows: rows, Cols: cols, XType: tile.F32, X: f8Bytes(x), QType: f,
								Q: make([]byte, n), Gran: g, Mode: mode, Scales: scales, ScaleInv: make([]byte, 4*nsc)}
							f8Must(t, fallback.QuantizeRef(ref))
							got := f8Read(t, qb)
							for i := range ref.Q {
								if got[i] != ref.Q[i] {
									t.Fatalf("q[%d] of x=%v (%#08x), scale %v: %#02x, want %#02x", i, x[i], math.Float32bits(x[i]), scales[min(i/cols, nsc-1)], got[i], ref.Q[i])
								}
							}
							if withInv {
								f8SameF32(t, "ScaleInv", f8Read(t, invb), ref.ScaleInv)
							}

							// Dequantise what was quantised, with the reference's
							// inverse scales (or none: scale 1).
							dopt := &ops.DequantizeOptions{Granularity: g}
							dref := &fallback.DequantizeArgs{Rows: rows, Cols: cols, QType: f, Q: ref.Q, YType: tile.F32, Y: make([]byte, 4*n), Gran: g}
							if g == ops.PerRow || withInv {
								dopt.ScaleInv = f8Alloc(t, rt, tile.F32, ref.ScaleInv, nsc)
								dref.ScaleInv = ref.ScaleInv
							}
							yb := f8Alloc(t, rt, tile.F32, nil, rows, cols)
							de, err := f8ExplainDequantize(rt, yb, qb, dopt)
							f8Must(t, err)
							f8Chosen(t, de, "ptx.dequantize")
							f8Must(t, ops.Dequantize(ctx, rt, yb, qb, dopt))
							f8Must(t, fallback.DequantizeRef(dref))
							f8SameF32(t, "y", f8Read(t, yb), dref.Y)
						})
					}
				}
			}
		}
	}
}

// testF8ScaleErrors: a bad scale in device memory gives the CPU backend's
// error on the GPU runtime gpu, from the call or from Synchronize with a
// stream, and nothing is written; the stream goes on working.
func testF8ScaleErrors(t *testing.T, gpu *runtime.Runtime) {
	ctx := context.Background()
	cpu := openF8(t, runtime.BackendCPU)
	const rows, cols = 5, 7
	rng := rand.New(rand.NewPCG(1, 2))
	x := f8OpsInput(rng, rows*cols)
	fill := make([]byte, rows*cols*4)
	for i := range fill {
		fill[i] = 0x5A
	}
	for _, bad := range []float32{0, -1, float32(math.NaN()), float32(math.Inf(1))} {
		for _, g := range []ops.Granularity{ops.PerTensor, ops.PerRow} {
			t.Run(fmt.Sprintf("%v/%v", g, bad), func(t *testing.T) {
				nsc := 1
				if g == ops.PerRow {
					nsc = rows
				}
				sc := make([]float32, nsc)
				for i := range sc {
					sc[i] = 2
				}
				sc[nsc-1] = bad
				var errs [2]error
				for i, rt := range []*runtime.Runtime{cpu, gpu} {
					xb := f8Alloc(t, rt, tile.F32, f8Bytes(x), rows, cols)
					qb := f8Alloc(t, rt, tile.E4M3, fill[:rows*cols], rows, cols)
					yb := f8Alloc(t, rt, tile.F32, fill, rows, cols)
					sb := f8Alloc(t, rt, tile.F32, f8Bytes(sc), nsc)
					opt := &ops.QuantizeOptions{Granularity: g, Source: ops.ScaleGiven, Scales: sb}
					dopt := &ops.DequantizeOptions{Granularity: g, ScaleInv: sb}
					if rt == gpu {
						e, err := ops.ExplainQuantize(rt, qb, xb, opt)
						f8Must(t, err)
						f8Chosen(t, e, "ptx.quantize")
						de, err := f8ExplainDequantize(rt, yb, qb, dopt)
						f8Must(t, err)
						f8Chosen(t, de, "ptx.dequantize")
					}
					qerr := ops.Quantize(ctx, rt, qb, xb, opt)
					derr := ops.Dequantize(ctx, rt, yb, qb, dopt)
					if !errors.Is(qerr, ops.ErrArgument) || !errors.Is(derr, ops.ErrArgument) {
						t.Fatalf("%s: errors %v, %v; want ErrArgument", rt.Backend(), qerr, derr)
					}
					errs[i] = errors.Join(qerr, derr)
					if got := f8Read(t, qb); string(got) != string(fill[:rows*cols]) {
						t.Fatalf("%s: q written after a bad scale", rt.Backend())
					}
					if got := f8Read(t, yb); string(got) != string(fill) {
						t.Fatalf("%s: y written after a bad scale", rt.Backend())
					}
				}
				if errs[0].Error() != errs[1].Error() {
					t.Fatalf("%s error\n%v\ndiffers from cpu error\n%v", gpu.Backend(), errs[1], errs[0])
				}
			})
		}
	}

	t.Run("stream", func(t *testing.T) {
		s, err := gpu.NewStream()
		f8Must(t, err)
		defer s.Close()
		xb := f8Alloc(t, gpu, tile.F32, f8Bytes(x), rows, cols)
		qb := f8Alloc(t, gpu, tile.E5M2, fill[:rows*cols], rows, cols)
		bad := f8Alloc(t, gpu, tile.F32, f8Bytes([]float32{1, 1, 0, 1, 1}), rows)
		good := f8Alloc(t, gpu, tile.F32, f8Bytes([]float32{1, 2, 4, 8, 16}), rows)
		if err := ops.Quantize(ctx, gpu, qb, xb, &ops.QuantizeOptions{Granularity: ops.PerRow, Source: ops.ScaleGiven, Scales: bad, Stream: s}); err != nil {
			t.Fatalf("asynchronous call: %v", err)
		}
		if err := s.Synchronize(ctx); !errors.Is(err, ops.ErrArgument) {
			t.Fatalf("Synchronize: %v, want ErrArgument", err)
		}
		if got := f8Read(t, qb); string(got) != string(fill[:rows*cols]) {
			t.Fatal("q written after a bad scale")
		}
		// The stream still runs work.
		f8Must(t, ops.Quantize(ctx, gpu, qb, xb, &ops.QuantizeOptions{Granularity: ops.PerRow, Source: ops.ScaleGiven, Scales: good, Stream: s}))
		f8Must(t, s.Synchronize(ctx))
		ref := &fallback.QuantizeArgs{Rows: rows, Cols: cols, XType: tile.F32, X: f8Bytes(x), QType: tile.E5M2,
			Q: make([]byte, rows*cols), Gran: ops.PerRow, Scales: []float32{1, 2, 4, 8, 16}}
		f8Must(t, fallback.QuantizeRef(ref))
		if got := f8Read(t, qb); string(got) != string(ref.Q) {
			t.Fatalf("q after the good call: % x, want % x", got, ref.Q)
		}
	})
}

// testF8Fallbacks: what the PTX kernels do not cover is rejected with a
// reason and runs on the host fallback, bit for bit as on the CPU (rt must
// rank the PTX kernels above every other GPU kernel of the family).
//
//lint:ignore U1000 run by the -tags cuda suite (gpu_f8_cuda_test.go)
func testF8Fallbacks(t *testing.T, rt *runtime.Runtime) {
	ctx := context.Background()
	const rows, cols = 9, 300
	rng := rand.New(rand.NewPCG(3, 4))
	x := f8OpsInput(rng, rows*cols)
	for _, c := range []struct {
		name   string
		xt     tile.DType
		g      ops.Granularity
		given  bool
		amax   bool
		reason string
	}{
		{"amax-scale", tile.F32, ops.PerTensor, false, false, "amax"},
		{"amax-row", tile.F32, ops.PerRow, false, false, "amax"},
		{"f16", tile.F16, ops.PerTensor, true, false, "f32 only"},
		{"bf16-row", tile.BF16, ops.PerRow, true, false, "f32 only"},
		{"1x128", tile.F32, ops.Block1x128, true, false, "per tensor and per row only"},
		{"mx", tile.F32, ops.MX, false, false, "per tensor and per row only"},
		{"amax-out", tile.F32, ops.PerTensor, true, true, "Amax output"},
	} {
		t.Run(c.name, func(t *testing.T) {
			xs := make([]byte, rows*cols*c.xt.Size())
			engine.EncodeFloat32(c.xt, xs, x)
			xb := f8Alloc(t, rt, c.xt, xs, rows, cols)
			qb := f8Alloc(t, rt, tile.E4M3, nil, rows, cols)
			opt := &ops.QuantizeOptions{Granularity: c.g}
			ref := &fallback.QuantizeArgs{Rows: rows, Cols: cols, XType: c.xt, X: xs, QType: tile.E4M3, Q: make([]byte, rows*cols), Gran: c.g}
			if c.given {
				sr, sc := c.g.ScaleGrid(rows, cols)
				scales := make([]float32, sr*sc)
				for i := range scales {
					scales[i] = f8Scale(rng)
				}
				opt.Source = ops.ScaleGiven
				if c.g == ops.PerTensor {
					opt.Scale = scales[0]
				} else {
					opt.Scales = f8Alloc(t, rt, tile.F32, f8Bytes(scales), sr*sc)
				}
				ref.Scales = scales
			}
			if c.amax {
				opt.Amax = f8Alloc(t, rt, tile.F32, nil, 1)
				ref.Amax = make([]byte, 4)
			}
			e, err := ops.ExplainQuantize(rt, qb, xb, opt)
			f8Must(t, err)
			f8Chosen(t, e, "host.*")
			for _, cand := range e.Candidates {
				if cand.Kernel.Name == "ptx.quantize" && !strings.Contains(cand.Reason, c.reason) {
					t.Errorf("ptx.quantize rejected with %q; want it to mention %q", cand.Reason, c.reason)
				}
			}
			f8Must(t, ops.Quantize(ctx, rt, qb, xb, opt))
			f8Must(t, fallback.QuantizeRef(ref))
			if got := f8Read(t, qb); string(got) != string(ref.Q) {
				t.Fatal("host fallback's q differs from the reference")
			}
			if c.amax {
				f8SameF32(t, "Amax", f8Read(t, opt.Amax), ref.Amax)
			}
		})
	}
	t.Run("dequantize-bf16", func(t *testing.T) {
		q := make([]byte, rows*cols)
		for i := range q {
			q[i] = byte(rng.Uint32())
		}
		qb := f8Alloc(t, rt, tile.E5M2, q, rows, cols)
		yb := f8Alloc(t, rt, tile.BF16, nil, rows, cols)
		e, err := f8ExplainDequantize(rt, yb, qb, nil)
		f8Must(t, err)
		f8Chosen(t, e, "host.*")
		f8Must(t, ops.Dequantize(ctx, rt, yb, qb, nil))
		ref := &fallback.DequantizeArgs{Rows: rows, Cols: cols, QType: tile.E5M2, Q: q, YType: tile.BF16, Y: make([]byte, 2*rows*cols)}
		f8Must(t, fallback.DequantizeRef(ref))
		if got := f8Read(t, yb); string(got) != string(ref.Y) {
			t.Fatal("host fallback's y differs from the reference")
		}
	})
}

// TestSimF8Ops runs the float8 PTX module's kernels (ptxas's sm_86 and
// sm_89 cubins) on the simulated devices through ops.Quantize and
// ops.Dequantize, forced by name, bit for bit against the CPU reference;
// a bad scale gives the CPU's error with nothing written.
func TestSimF8Ops(t *testing.T) {
	// A shape of a million elements takes about 30 s here: it runs in the
	// long tests (TCRT_LONG_TESTS=1, as CI sets it); 4500×3 already has
	// more rows than the per-row grid.
	shapes := [][2]int{{1, 1}, {1, 3}, {3, 5}, {7, 129}, {33, 1000}, {4500, 3}}
	switch {
	case longtest.Enabled():
		shapes = append(shapes, [2]int{257, 4099})
	case longtest.Race: // the simulator under -race: the small shapes
		shapes = shapes[:4]
	}
	for _, arch := range []int{86, 89} {
		t.Run(fmt.Sprint("sim", arch), func(t *testing.T) {
			rt := openF8With(t, runtime.Options{Backend: runtime.BackendSim, SimArch: arch,
				Kernel: "ptx.quantize,ptx.dequantize"})
			t.Run("ops", func(t *testing.T) { testF8Ops(t, rt, shapes) })
			t.Run("scale-errors", func(t *testing.T) { testF8ScaleErrors(t, rt) })
		})
	}
}
