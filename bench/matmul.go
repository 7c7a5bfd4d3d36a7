package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// MatMulProblem is one matmul the job and the benchmarks run: D = A·B with A
// M×K, B K×N, all row-major, D f32. Float8 operands get per-tensor scales
// (matMulScaleA, matMulScaleB), a float8 Weight one scale per column of B.
type MatMulProblem struct {
	DType   tile.DType // of A and B
	M, N, K int
	// Weight, when not 0, is B's element type instead of DType: a
	// decoding step's weights beside its activations.
	Weight tile.DType
	// TransA and TransB store A as K×M and B as N×K.
	TransA, TransB bool
	// Out is D's element type (0: f32).
	Out tile.DType
}

// String is "f32 512x512x512", with the layout and output type when they
// are not NN and f32 ("f16 64x256x64 TN ->bf16").
func (p MatMulProblem) String() string {
	s := fmt.Sprintf("%v %dx%dx%d", p.DType, p.M, p.N, p.K)
	if p.Weight != 0 {
		s = fmt.Sprintf("%v·%v %dx%dx%d", p.DType, p.Weight, p.M, p.N, p.K)
	}
	if p.TransA || p.TransB {
		s += " " + map[bool]string{false: "N", true: "T"}[p.TransA] + map[bool]string{false: "N", true: "T"}[p.TransB]
	}
	if p.Out != 0 && p.Out != tile.F32 {
		s += " ->" + p.Out.String()
	}
	return s
}

// bType is B's element type.
func (p MatMulProblem) bType() tile.DType {
	if p.Weight == 0 {
		return p.DType
	}
	return p.Weight
}

// out is D's element type.
func (p MatMulProblem) out() tile.DType {
	if p.Out == 0 {
		return tile.F32
	}
	return p.Out
}

// FLOPs is 2·M·N·K.
func (p MatMulProblem) FLOPs() float64 { return 2 * float64(p.M) * float64(p.N) * float64(p.K) }

// MatMulSetup holds the buffers of one problem.
type MatMulSetup struct {
	P       MatMulProblem
	A, B, D ops.Matrix
	Opt     *ops.MatMulOptions // nil, or the float8 scales
	// scaleA and scaleB are the scales' values (nil: none).
	scaleA, scaleB []float32
}

// The per-tensor dequantisation scales of float8 operands.
const matMulScaleA, matMulScaleB = 0.5, 3

// matMulWeightRange is the magnitude of random float8 weights: e4m3's
// largest finite value.
const matMulWeightRange = 448

// NewMatMulSetup allocates random inputs (unit scale) and an output.
func NewMatMulSetup(ctx context.Context, rt *runtime.Runtime, p MatMulProblem, seed uint64) (*MatMulSetup, error) {
	if err := checkSetup("bench: matmul", rt, "M, K", p.M, p.K); err != nil {
		return nil, err
	}
	if err := checkSetup("bench: matmul", rt, "K, N", p.K, p.N); err != nil {
		return nil, err
	}
	if err := checkSetup("bench: matmul", rt, "M, N", p.M, p.N); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x7c17))
	ar, ac, br, bc := p.M, p.K, p.K, p.N
	if p.TransA {
		ar, ac = p.K, p.M
	}
	if p.TransB {
		br, bc = p.N, p.K
	}
	a, _, err := RandomBuffer(ctx, rt, rng, p.DType, 1, ar, ac)
	if err != nil {
		return nil, err
	}
	// Float8 weights span the format's range, as quantised ones do (each
	// row's largest at about the largest finite value, e4m3's 448), their
	// scales bringing them back to unit size.
	bScale := float32(1)
	if p.Weight != 0 && tile.IsFloat8(p.Weight) {
		bScale = matMulWeightRange
	}
	b, _, err := RandomBuffer(ctx, rt, rng, p.bType(), bScale, br, bc)
	if err != nil {
		a.Close()
		return nil, err
	}
	d, err := rt.Alloc(p.out(), p.M, p.N)
	if err != nil {
		a.Close()
		b.Close()
		return nil, err
	}
	am, bm := ops.MatrixOf(a), ops.MatrixOf(b)
	am.Trans, bm.Trans = p.TransA, p.TransB
	s := &MatMulSetup{P: p, A: am, B: bm, D: ops.MatrixOf(d)}
	if tile.IsFloat8(p.DType) {
		s.scaleA = []float32{matMulScaleA}
	}
	switch {
	case tile.IsFloat8(p.bType()) && p.Weight != 0:
		s.scaleB = make([]float32, p.N)
		for j := range s.scaleB {
			s.scaleB[j] = matMulScaleB * (1 + float32(j%7)/8) / matMulWeightRange
		}
	case tile.IsFloat8(p.bType()):
		s.scaleB = []float32{matMulScaleB}
	}
	if s.scaleA != nil || s.scaleB != nil {
		o := ops.DefaultMatMulOptions()
		for _, x := range []struct {
			dst **runtime.Buffer
			v   []float32
		}{{&o.ScaleA, s.scaleA}, {&o.ScaleB, s.scaleB}} {
			if x.v == nil {
				continue
			}
			if *x.dst, err = rt.Alloc(tile.F32, len(x.v)); err == nil {
				err = (*x.dst).WriteFloat32(ctx, x.v)
			}
			if err != nil {
				s.Opt = &o
				s.Close()
				return nil, err
			}
		}
		s.Opt = &o
	}
	return s, nil
}

// Run computes D = A·B.
func (s *MatMulSetup) Run(ctx context.Context, rt *runtime.Runtime) error {
	return ops.MatMul(ctx, rt, s.D, s.A, s.B, s.Opt)
}

// Close releases the buffers.
func (s *MatMulSetup) Close() {
	s.A.Buf.Close()
	s.B.Buf.Close()
	s.D.Buf.Close()
	if s.Opt != nil {
		for _, b := range []*runtime.Buffer{s.Opt.ScaleA, s.Opt.ScaleB} {
			if b != nil {
				b.Close()
			}
		}
	}
}

// Check compares D with the float64 reference (on the CPU) and returns the
// max relative error (floor 1).
func (s *MatMulSetup) Check(ctx context.Context, rt *runtime.Runtime) (float64, error) {
	got := make([]float32, s.D.Buf.Len())
	if err := s.D.Buf.ReadFloat32(ctx, got); err != nil {
		return 0, err
	}
	av := make([]float32, s.A.Buf.Len())
	bv := make([]float32, s.B.Buf.Len())
	if err := s.A.Buf.ReadFloat32(ctx, av); err != nil {
		return 0, err
	}
	if err := s.B.Buf.ReadFloat32(ctx, bv); err != nil {
		return 0, err
	}
	want := make([]float32, len(got))
	p := s.P
	f32 := func(v []float32) []byte {
		raw := make([]byte, 4*len(v))
		engine.EncodeFloat32(tile.F32, raw, v)
		return raw
	}
	wantRaw := make([]byte, 4*len(want))
	fallback.MatMulRef(&fallback.MatMulArgs{
		ScaleA: s.scaleA, ScaleB: s.scaleB,
		M: p.M, N: p.N, K: p.K, Batch: 1, Alpha: 1,
		A: fallback.Matrix{DType: tile.F32, Data: f32(av), Rows: s.A.Rows, Cols: s.A.Cols, LD: s.A.Cols, BatchStride: p.M * p.K, Trans: p.TransA},
		B: fallback.Matrix{DType: tile.F32, Data: f32(bv), Rows: s.B.Rows, Cols: s.B.Cols, LD: s.B.Cols, BatchStride: p.K * p.N, Trans: p.TransB},
		D: fallback.Matrix{DType: tile.F32, Data: wantRaw, Rows: p.M, Cols: p.N, LD: p.N, BatchStride: p.M * p.N},
	})
	engine.DecodeFloat32(tile.F32, want, wantRaw)
	return MaxRelErr(got, want, 1), nil
}

// GPUMatMulCoverage are the problems the tcrt command adds on a GPU device
// so that every GPU matmul variant runs once: the transposed layouts, both
// output types, the small-M (64×128) and small-N (128×64) tiles, and
// split-K (small M and N, large K, f32 out).
var GPUMatMulCoverage = []MatMulProblem{
	{DType: tile.F16, M: 128, N: 128, K: 64, TransB: true},
	{DType: tile.BF16, M: 128, N: 128, K: 64, TransA: true, Out: tile.BF16},
	{DType: tile.F16, M: 128, N: 128, K: 64, TransA: true, TransB: true, Out: tile.F16},
	{DType: tile.BF16, M: 64, N: 256, K: 64},
	{DType: tile.F16, M: 256, N: 64, K: 72},
	{DType: tile.F16, M: 16, N: 256, K: 2048},
}

// MatMulSizes are the problems of each -size for the tcrt command.
var MatMulSizes = map[string][]int{"small": {128}, "medium": {512}, "large": {2048}}

func init() {
	RegisterJob(Job{Name: "matmul", Order: 10, Run: runMatMulJob})
}

func runMatMulJob(ctx context.Context, rt *runtime.Runtime, cfg Config) ([]Result, error) {
	var out []Result
	var problems []MatMulProblem
	for _, n := range MatMulSizes[cfg.Size] {
		for _, dt := range []tile.DType{tile.F32, tile.F16, tile.BF16} {
			problems = append(problems, MatMulProblem{DType: dt, M: n, N: n, K: n})
		}
	}
	if rt.Device().GPU() {
		problems = append(problems, GPUMatMulCoverage...)
	}
	for _, p := range problems {
		{
			dt, n := p.DType, p.M
			s, err := NewMatMulSetup(ctx, rt, p, uint64(n))
			if err != nil {
				return out, err
			}
			ex, err := ops.ExplainMatMul(rt, s.D, s.A, s.B, nil)
			if err != nil {
				s.Close()
				return out, err
			}
			r := Result{Op: "matmul", Problem: p.String(), Unit: "GFLOP/s", Tol: 1e-4}
			if dt != tile.F32 {
				r.Tol = 1e-2 // inputs are rounded to 16 bits; the reference uses the same rounded values
			}
			if k := ex.Chosen(); k != nil {
				r.Kernel = k.Name
			}
			if cfg.Explain {
				r.Explain = ex.String()
			}
			med, sim, err := MedianOn(rt, func() error { return s.Run(ctx, rt) }, 3, 300*time.Millisecond)
			if err != nil {
				s.Close()
				return out, err
			}
			if r.MaxErr, err = s.Check(ctx, rt); err != nil {
				s.Close()
				return out, err
			}
			r.OK = r.MaxErr <= r.Tol
			r.Seconds = med.Seconds()
			r.Sim = sim
			r.Value = p.FLOPs() / med.Seconds() / 1e9
			out = append(out, r)
			s.Close()
		}
	}
	return out, nil
}
