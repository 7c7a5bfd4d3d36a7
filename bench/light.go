package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// LightProblem is one light op (norms, RoPE, gated activation, softmax,
// sampling) the job and the benchmarks run.
type LightProblem struct {
	// Op is "rmsnorm", "add_rmsnorm", "layernorm", "rope", "silu_mul",
	// "softmax" or "sample".
	Op    string
	DType tile.DType
	// Rows × Cols: tokens × hidden, tokens × heads·HeadDim for rope (q and
	// k both), rows × vocabulary for sample.
	Rows, Cols int
	HeadDim    int
	// Method names the sampler (a key of SampleMethods).
	Method string
}

// SampleMethods are the samplers of the job and BenchmarkSample.
var SampleMethods = map[string]ops.SampleOptions{
	"greedy":      {Temperature: 0, TopP: 1},
	"temperature": {Temperature: 0.8, TopP: 1},
	"topk":        {Temperature: 1, TopK: 50, TopP: 1},
	"topp":        {Temperature: 1, TopP: 0.9},
	"minp":        {Temperature: 1, TopP: 1, MinP: 0.05},
	"topk_topp":   {Temperature: 0.7, TopK: 50, TopP: 0.9},
}

// SampleMethodOrder lists SampleMethods' keys in order.
var SampleMethodOrder = []string{"greedy", "temperature", "topk", "topp", "minp", "topk_topp"}

// String is e.g. "bf16 4096x4096" ("topp 1x128256" for sample).
func (p LightProblem) String() string {
	if p.Op == "sample" {
		return fmt.Sprintf("%s %v %dx%d", p.Method, p.DType, p.Rows, p.Cols)
	}
	if p.Op == "rope" {
		return fmt.Sprintf("%v %dx%dx%d", p.DType, p.Rows, p.Cols/p.HeadDim, p.HeadDim)
	}
	return fmt.Sprintf("%v %dx%d", p.DType, p.Rows, p.Cols)
}

// Bytes is what the op must move: each input read once and each output
// written once (weights, positions and token ids are left out: they are
// a row or less).
func (p LightProblem) Bytes() float64 {
	n := float64(p.Rows) * float64(p.Cols) * float64(p.DType.Size())
	switch p.Op {
	case "add_rmsnorm":
		return 4 * n // x and residual in, both out
	case "rope":
		return 4 * n // q and k in and out
	case "silu_mul":
		return 3 * n // [a|b] in, y out
	case "sample":
		return n
	}
	return 2 * n
}

// LightSetup holds one problem's buffers.
type LightSetup struct {
	P    LightProblem
	bufs []*runtime.Buffer
	// Outs are the outputs, compared with the reference by the job.
	Outs    []*runtime.Buffer
	run     func(ctx context.Context) error
	explain func(rt *runtime.Runtime) (ops.Explanation, error)
}

// Close releases the buffers.
func (s *LightSetup) Close() {
	for _, b := range s.bufs {
		b.Close()
	}
}

// Run runs the op once (in-place ops update their inputs).
func (s *LightSetup) Run(ctx context.Context) error { return s.run(ctx) }

// Explain explains the kernel choice on rt.
func (s *LightSetup) Explain(rt *runtime.Runtime) (ops.Explanation, error) {
	return s.explain(rt)
}

// NewLightSetup allocates random inputs for p on rt (normal values; the
// same seed gives the same inputs on every runtime).
func NewLightSetup(ctx context.Context, rt *runtime.Runtime, p LightProblem, seed uint64) (*LightSetup, error) {
	if err := checkSetup("bench: "+p.Op, rt, "Rows, Cols", p.Rows, p.Cols); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x11))
	s := &LightSetup{P: p}
	fail := func(err error) (*LightSetup, error) { s.Close(); return nil, err }
	buf := func(d tile.DType, scale float32, shape ...int) (*runtime.Buffer, error) {
		b, _, err := RandomBuffer(ctx, rt, rng, d, scale, shape...)
		if err == nil {
			s.bufs = append(s.bufs, b)
		}
		return b, err
	}
	r, c := p.Rows, p.Cols
	switch p.Op {
	case "rmsnorm", "add_rmsnorm", "layernorm", "softmax":
		x, err := buf(p.DType, 2, r, c)
		if err != nil {
			return fail(err)
		}
		y, err := buf(p.DType, 1, r, c)
		if err != nil {
			return fail(err)
		}
		w, err := buf(tile.F32, 1, c)
		if err != nil {
			return fail(err)
		}
		xm, ym := ops.RowsOf(x), ops.RowsOf(y)
		switch p.Op {
		case "rmsnorm":
			s.run = func(ctx context.Context) error { return ops.RMSNorm(ctx, rt, ym, xm, w, nil) }
			s.explain = func(rt *runtime.Runtime) (ops.Explanation, error) { return ops.ExplainRMSNorm(rt, ym, xm, w, nil) }
			s.Outs = []*runtime.Buffer{y}
		case "add_rmsnorm": // y is the residual
			s.run = func(ctx context.Context) error { return ops.AddRMSNorm(ctx, rt, xm, ym, w, nil) }
			s.explain = func(rt *runtime.Runtime) (ops.Explanation, error) {
				return ops.ExplainAddRMSNorm(rt, xm, ym, w, nil)
			}
			s.Outs = []*runtime.Buffer{x, y}
		case "layernorm":
			s.run = func(ctx context.Context) error { return ops.LayerNorm(ctx, rt, ym, xm, w, w, nil) }
			s.explain = func(rt *runtime.Runtime) (ops.Explanation, error) {
				return ops.ExplainLayerNorm(rt, ym, xm, w, w, nil)
			}
			s.Outs = []*runtime.Buffer{y}
		default:
			s.run = func(ctx context.Context) error { return ops.Softmax(ctx, rt, ym, xm, nil) }
			s.explain = func(rt *runtime.Runtime) (ops.Explanation, error) { return ops.ExplainSoftmax(rt, ym, xm, nil) }
			s.Outs = []*runtime.Buffer{y}
		}
	case "rope":
		q, err := buf(p.DType, 1, r, c)
		if err != nil {
			return fail(err)
		}
		k, err := buf(p.DType, 1, r, c)
		if err != nil {
			return fail(err)
		}
		o := ops.DefaultRoPEOptions()
		o.HeadDim, o.Theta = p.HeadDim, 500000
		o.Scaling = ops.RoPEScaling{Kind: ops.RoPELlama3, Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPosition: 8192}
		qm, km := ops.RowsOf(q), ops.RowsOf(k)
		// Rerunning rotates again: the timing is the same; the job
		// compares a single run.
		s.run = func(ctx context.Context) error { return ops.RoPE(ctx, rt, qm, km, &o) }
		s.explain = func(rt *runtime.Runtime) (ops.Explanation, error) { return ops.ExplainRoPE(rt, qm, km, &o) }
		s.Outs = []*runtime.Buffer{q, k}
	case "silu_mul":
		x, err := buf(p.DType, 4, r, 2*c)
		if err != nil {
			return fail(err)
		}
		y, err := buf(p.DType, 1, r, c)
		if err != nil {
			return fail(err)
		}
		xm, ym := ops.RowsOf(x), ops.RowsOf(y)
		s.run = func(ctx context.Context) error { return ops.GatedActivate(ctx, rt, ym, xm, ops.SiLU, nil) }
		s.explain = func(rt *runtime.Runtime) (ops.Explanation, error) {
			return ops.ExplainGatedActivate(rt, ym, xm, ops.SiLU, nil)
		}
		s.Outs = []*runtime.Buffer{y}
	case "sample":
		opt, ok := SampleMethods[p.Method]
		if !ok {
			return fail(fmt.Errorf("unknown sampling method %q", p.Method))
		}
		x, err := buf(p.DType, 12, r, c)
		if err != nil {
			return fail(err)
		}
		out, err := rt.Alloc(tile.S32, r)
		if err != nil {
			return fail(err)
		}
		s.bufs = append(s.bufs, out)
		xm := ops.RowsOf(x)
		opt.Seed = seed
		s.run = func(ctx context.Context) error { return ops.Sample(ctx, rt, out, xm, &opt) }
		s.explain = func(rt *runtime.Runtime) (ops.Explanation, error) { return ops.ExplainSample(rt, out, xm, &opt) }
		s.Outs = []*runtime.Buffer{out}
	default:
		return fail(fmt.Errorf("unknown light op %q", p.Op))
	}
	return s, nil
}

// LightSizes are the (rows, cols) of each -size for the tcrt command; rope
// uses heads of 128, sample a 128256 vocabulary with Rows rows / 128.
var LightSizes = map[string][2]int{"small": {64, 1024}, "medium": {1024, 4096}, "large": {4096, 4096}}

// lightJobOps are the ops of the job, in order.
var lightJobOps = []string{"rmsnorm", "add_rmsnorm", "layernorm", "rope", "silu_mul", "softmax", "sample"}

func init() {
	RegisterJob(Job{Name: "light", Order: 50, Run: runLightJob})
}

// lightRefKernels forces every light op's reference kernel.
func lightRefKernels() string {
	var ks []string
	for _, op := range []string{engine.OpRMSNorm.Name(), engine.OpAddRMSNorm.Name(), engine.OpLayerNorm.Name(), engine.OpRoPE.Name(),
		engine.OpActivation.Name(), engine.OpSoftmax.Name(), engine.OpSample.Name()} {
		ks = append(ks, "cpu."+op+".reference")
	}
	return strings.Join(ks, ",")
}

// runLightJob runs each light op in bf16 at the size's shape, checks one
// run against the CPU reference kernels on the same inputs (sampled token
// ids must be equal: the error is the fraction that differ) and times it
// in GB/s of LightProblem.Bytes.
func runLightJob(ctx context.Context, rt *runtime.Runtime, cfg Config) ([]Result, error) {
	sz, ok := LightSizes[cfg.Size]
	if !ok {
		return nil, fmt.Errorf("unknown size %q", cfg.Size)
	}
	ref, err := runtime.Open(runtime.Options{Backend: runtime.BackendCPU, Kernel: lightRefKernels()})
	if err != nil {
		return nil, err
	}
	defer ref.Close()
	var out []Result
	for _, op := range lightJobOps {
		p := LightProblem{Op: op, DType: tile.BF16, Rows: sz[0], Cols: sz[1], HeadDim: 128}
		var ps []LightProblem
		if op == "sample" {
			for _, m := range []string{"greedy", "topp", "topk_topp"} {
				ps = append(ps, LightProblem{Op: op, DType: tile.F32, Rows: max(1, sz[0]/128), Cols: 128256, Method: m})
			}
		} else {
			ps = []LightProblem{p}
		}
		for _, p := range ps {
			r, err := lightResult(ctx, rt, ref, cfg, p)
			if err != nil {
				return out, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func lightResult(ctx context.Context, rt, ref *runtime.Runtime, cfg Config, p LightProblem) (Result, error) {
	r := Result{Op: p.Op, Problem: p.String(), Unit: "GB/s", Tol: lightTol(p)}
	s, err := NewLightSetup(ctx, rt, p, 7)
	if err != nil {
		return r, err
	}
	defer s.Close()
	rs, err := NewLightSetup(ctx, ref, p, 7)
	if err != nil {
		return r, err
	}
	defer rs.Close()
	ex, err := s.Explain(rt)
	if err != nil {
		return r, err
	}
	if k := ex.Chosen(); k != nil {
		r.Kernel = k.Name
	}
	if cfg.Explain {
		r.Explain = ex.String()
	}
	if err := s.Run(ctx); err != nil {
		return r, err
	}
	if err := rs.Run(ctx); err != nil {
		return r, err
	}
	for i, b := range s.Outs {
		got, want := make([]float32, b.Len()), make([]float32, b.Len())
		if p.Op == "sample" {
			g, w := make([]int32, b.Len()), make([]int32, b.Len())
			if err := runtime.ReadRaw(ctx, b, g); err != nil {
				return r, err
			}
			if err := runtime.ReadRaw(ctx, rs.Outs[i], w); err != nil {
				return r, err
			}
			for j := range g {
				if g[j] != w[j] {
					r.MaxErr += 1 / float64(len(g))
				}
			}
			continue
		}
		if err := b.ReadFloat32(ctx, got); err != nil {
			return r, err
		}
		if err := rs.Outs[i].ReadFloat32(ctx, want); err != nil {
			return r, err
		}
		r.MaxErr = max(r.MaxErr, MaxRelErr(got, want, 1e-3))
	}
	r.OK = r.MaxErr <= r.Tol
	med, sim, err := MedianOn(rt, func() error { return s.Run(ctx) }, 3, 300*time.Millisecond)
	if err != nil {
		return r, err
	}
	r.Seconds, r.Sim = med.Seconds(), sim
	r.Value = p.Bytes() / med.Seconds() / 1e9
	return r, nil
}

// lightTol is the job's bound on the max relative error (floor 1e-3): a
// few units of the output type's rounding; 0 for sampling (token ids are
// exact).
func lightTol(p LightProblem) float64 {
	if p.Op == "sample" {
		return 0
	}
	return 4 * 0x1p-8 // two bf16 roundings of values that differ by float32 rounding
}
