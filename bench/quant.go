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

// QuantProblem is one quantisation the job and the benchmarks run: a
// Rows×Cols f32 tensor to Format with Gran scales. Per tensor the scale is
// given (Scale), so the op is one streaming pass; the other granularities
// compute their scales from the amax.
type QuantProblem struct {
	Format     tile.DType
	Gran       ops.Granularity
	Rows, Cols int
	// NoScaleInv quantises with the given per-tensor scale and no inverse
	// scales output (the call the SM86 SASS quantiser covers); quantize
	// only.
	NoScaleInv bool
}

// String is "e4m3 tensor 4096x4096" (", no inv" with NoScaleInv).
func (p QuantProblem) String() string {
	s := fmt.Sprintf("%v %v %dx%d", p.Format, p.Gran, p.Rows, p.Cols)
	if p.NoScaleInv {
		s += ", no inv"
	}
	return s
}

// ScaleBytes is the size of the inverse scales written.
func (p QuantProblem) ScaleBytes() int {
	sr, sc := p.Gran.ScaleGrid(p.Rows, p.Cols)
	if p.Gran == ops.MX {
		return sr * sc
	}
	return 4 * sr * sc
}

// QuantizeBytes counts the bytes Quantize reads and writes: f32 in, float8
// out, the inverse scales.
func (p QuantProblem) QuantizeBytes() float64 {
	return float64(5*p.Rows*p.Cols + p.ScaleBytes())
}

// DequantizeBytes counts the bytes Dequantize reads and writes (float8 and
// scales in, f32 out).
func (p QuantProblem) DequantizeBytes() float64 { return p.QuantizeBytes() }

// QuantSetup holds the buffers of one problem.
type QuantSetup struct {
	P                QuantProblem
	X, Q, ScaleInv   *runtime.Buffer
	Y                *runtime.Buffer
	XVals            []float32
	QuantOpt         ops.QuantizeOptions
	DequantOpt       ops.DequantizeOptions
	quantDone        bool
	xShape, invShape []int
}

// NewQuantSetup allocates a random input (normal values over a few
// binades), the float8 output, the inverse scales and a f32 output for
// dequantisation.
func NewQuantSetup(ctx context.Context, rt *runtime.Runtime, p QuantProblem, seed uint64) (*QuantSetup, error) {
	if err := checkSetup("bench: quantize", rt, "Rows, Cols", p.Rows, p.Cols); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0xf8))
	s := &QuantSetup{P: p, xShape: []int{p.Rows, p.Cols}}
	s.invShape = ops.ScaleShape(p.Gran, s.xShape)
	var err error
	cleanup := func() { s.Close() }
	if s.X, err = rt.Alloc(tile.F32, s.xShape...); err != nil {
		return nil, err
	}
	s.XVals = make([]float32, p.Rows*p.Cols)
	for i := range s.XVals {
		s.XVals[i] = float32(rng.NormFloat64()) * float32(int(1)<<rng.IntN(4))
	}
	if err = s.X.WriteFloat32(ctx, s.XVals); err != nil {
		cleanup()
		return nil, err
	}
	if s.Q, err = rt.Alloc(p.Format, s.xShape...); err != nil {
		cleanup()
		return nil, err
	}
	sdt := tile.F32
	if p.Gran == ops.MX {
		sdt = tile.U8
	}
	if s.ScaleInv, err = rt.Alloc(sdt, s.invShape...); err != nil {
		cleanup()
		return nil, err
	}
	if s.Y, err = rt.Alloc(tile.F32, s.xShape...); err != nil {
		cleanup()
		return nil, err
	}
	s.QuantOpt = ops.QuantizeOptions{Granularity: p.Gran, ScaleInv: s.ScaleInv}
	if p.Gran == ops.PerTensor {
		s.QuantOpt.Source, s.QuantOpt.Scale = ops.ScaleGiven, 64
	}
	if p.NoScaleInv {
		s.QuantOpt.ScaleInv = nil
	}
	s.DequantOpt = ops.DequantizeOptions{Granularity: p.Gran, ScaleInv: s.ScaleInv}
	return s, nil
}

// Quantize runs the quantisation.
func (s *QuantSetup) Quantize(ctx context.Context, rt *runtime.Runtime) error {
	s.quantDone = true
	return ops.Quantize(ctx, rt, s.Q, s.X, &s.QuantOpt)
}

// Dequantize runs the dequantisation (of what Quantize wrote).
func (s *QuantSetup) Dequantize(ctx context.Context, rt *runtime.Runtime) error {
	if !s.quantDone {
		if err := s.Quantize(ctx, rt); err != nil {
			return err
		}
	}
	return ops.Dequantize(ctx, rt, s.Y, s.Q, &s.DequantOpt)
}

// Close releases the buffers.
func (s *QuantSetup) Close() {
	for _, b := range []*runtime.Buffer{s.X, s.Q, s.ScaleInv, s.Y} {
		if b != nil {
			b.Close()
		}
	}
}

// reference runs fallback.QuantizeRef and DequantizeRef on the same input
// and returns q, the dequantised values.
func (s *QuantSetup) reference() ([]byte, []float32, error) {
	p := s.P
	x := make([]byte, 4*len(s.XVals))
	engine.EncodeFloat32(tile.F32, x, s.XVals)
	a := fallback.QuantizeArgs{Rows: p.Rows, Cols: p.Cols, XType: tile.F32, X: x, QType: p.Format, Q: make([]byte, p.Rows*p.Cols), Gran: p.Gran, ScaleInv: make([]byte, p.ScaleBytes())}
	if s.QuantOpt.Source == ops.ScaleGiven {
		a.Scales = []float32{s.QuantOpt.Scale}
	}
	if err := fallback.QuantizeRef(&a); err != nil {
		return nil, nil, err
	}
	y := make([]byte, 4*len(s.XVals))
	if err := fallback.DequantizeRef(&fallback.DequantizeArgs{Rows: p.Rows, Cols: p.Cols, QType: p.Format, Q: a.Q, YType: tile.F32, Y: y, Gran: p.Gran, ScaleInv: a.ScaleInv}); err != nil {
		return nil, nil, err
	}
	yv := make([]float32, len(s.XVals))
	engine.DecodeFloat32(tile.F32, yv, y)
	return a.Q, yv, nil
}

// QuantSizes are the problems of each -size for the tcrt command.
var QuantSizes = map[string][2]int{"small": {256, 256}, "medium": {1024, 1024}, "large": {4096, 4096}}

func init() {
	RegisterJob(Job{Name: "quantize", Order: 40, Run: func(ctx context.Context, rt *runtime.Runtime, cfg Config) ([]Result, error) {
		return runQuantJob(ctx, rt, cfg, false)
	}})
	RegisterJob(Job{Name: "dequantize", Order: 41, Run: func(ctx context.Context, rt *runtime.Runtime, cfg Config) ([]Result, error) {
		return runQuantJob(ctx, rt, cfg, true)
	}})
}

// runQuantJob times quantisation (or dequantisation) for both formats and
// three granularities. Quantize's max error is the fraction of float8 bytes
// that differ from the reference (it must be 0: the op is exact);
// Dequantize's is the max relative error against the reference's values.
func runQuantJob(ctx context.Context, rt *runtime.Runtime, cfg Config, dequant bool) ([]Result, error) {
	var out []Result
	sz, ok := QuantSizes[cfg.Size]
	if !ok {
		return nil, fmt.Errorf("unknown size %q", cfg.Size)
	}
	var problems []QuantProblem
	for _, f := range []tile.DType{tile.E4M3, tile.E5M2} {
		for _, g := range []ops.Granularity{ops.PerTensor, ops.PerRow, ops.Block1x128, ops.MX} {
			problems = append(problems, QuantProblem{Format: f, Gran: g, Rows: sz[0], Cols: sz[1]})
		}
		if rt.Device().GPU() && !dequant { // the call the SASS quantiser covers
			problems = append(problems, QuantProblem{Format: f, Gran: ops.PerTensor, Rows: sz[0], Cols: sz[1], NoScaleInv: true})
		}
	}
	for _, p := range problems {
		{
			s, err := NewQuantSetup(ctx, rt, p, uint64(sz[0]))
			if err != nil {
				return out, err
			}
			r, err := quantResult(ctx, rt, cfg, s, dequant)
			s.Close()
			if err != nil {
				return out, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func quantResult(ctx context.Context, rt *runtime.Runtime, cfg Config, s *QuantSetup, dequant bool) (Result, error) {
	op, run, bytes := "quantize", s.Quantize, s.P.QuantizeBytes()
	var ex ops.Explanation
	var err error
	if dequant {
		op, run, bytes = "dequantize", s.Dequantize, s.P.DequantizeBytes()
		if err = s.Quantize(ctx, rt); err != nil {
			return Result{}, err
		}
		if ex, err = ops.ExplainDequantize(rt, s.Y, s.Q, &s.DequantOpt); err != nil {
			return Result{}, err
		}
	} else if ex, err = ops.ExplainQuantize(rt, s.Q, s.X, &s.QuantOpt); err != nil {
		return Result{}, err
	}
	r := Result{Op: op, Problem: s.P.String(), Unit: "GB/s"} // Tol 0: both ops are exact
	if k := ex.Chosen(); k != nil {
		r.Kernel = k.Name
	}
	if cfg.Explain {
		r.Explain = ex.String()
	}
	med, sim, err := MedianOn(rt, func() error { return run(ctx, rt) }, 3, 300*time.Millisecond)
	if err != nil {
		return r, err
	}
	refQ, refY, err := s.reference()
	if err != nil {
		return r, err
	}
	if dequant {
		y := make([]float32, len(refY))
		if err := s.Y.ReadFloat32(ctx, y); err != nil {
			return r, err
		}
		r.MaxErr = MaxRelErr(y, refY, 1e-30)
	} else {
		q := make([]byte, len(refQ))
		if err := s.Q.Read(ctx, 0, q); err != nil {
			return r, err
		}
		bad := 0
		for i := range q {
			if q[i] != refQ[i] {
				bad++
			}
		}
		r.MaxErr = float64(bad) / float64(len(q))
	}
	r.OK = r.MaxErr <= r.Tol
	r.Seconds = med.Seconds()
	r.Sim = sim
	r.Value = bytes / med.Seconds() / 1e9
	return r, nil
}
