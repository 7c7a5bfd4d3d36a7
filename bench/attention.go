package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/internal/callargs"
	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// AttentionProblem is one attention the job and the benchmarks run: a
// prefill (seqQ = seqKV = Seq, all tokens at once) or a decode step (one
// query token per sequence against a contiguous KV cache of Seq tokens).
type AttentionProblem struct {
	Decode                           bool
	DType                            tile.DType // of Q, K, V, O and the cache
	Batch, HeadsQ, HeadsKV, Seq, Dim int
	Causal                           bool
}

// Name is the benchmark-style shape, e.g. "b1h32s2048d128" or
// "b1h32kv8ctx4096d128".
func (p AttentionProblem) Name() string {
	if p.Decode {
		return fmt.Sprintf("b%dh%dkv%dctx%dd%d", p.Batch, p.HeadsQ, p.HeadsKV, p.Seq, p.Dim)
	}
	s := fmt.Sprintf("b%dh%ds%dd%d", p.Batch, p.HeadsQ, p.Seq, p.Dim)
	if p.HeadsKV != p.HeadsQ {
		s = fmt.Sprintf("b%dh%dkv%ds%dd%d", p.Batch, p.HeadsQ, p.HeadsKV, p.Seq, p.Dim)
	}
	return s
}

// String is "prefill f32 b1h32s2048d128 causal".
func (p AttentionProblem) String() string {
	kind, mask := "prefill", ""
	if p.Decode {
		kind = "decode"
	}
	if p.Causal {
		mask = " causal"
	}
	return fmt.Sprintf("%s %v %s%s", kind, p.DType, p.Name(), mask)
}

// FLOPs counts 4·seqQ·seqKV·d·heads·batch, halved for a causal prefill.
func (p AttentionProblem) FLOPs() float64 {
	sq := p.Seq
	if p.Decode {
		sq = 1
	}
	f := 4 * float64(sq) * float64(p.Seq) * float64(p.Dim) * float64(p.HeadsQ) * float64(p.Batch)
	if p.Causal && !p.Decode {
		f /= 2
	}
	return f
}

// KVBytes is the size of the keys and values one call reads.
func (p AttentionProblem) KVBytes() float64 {
	return 2 * float64(p.Batch) * float64(p.Seq) * float64(p.HeadsKV) * float64(p.Dim) * float64(p.DType.Size())
}

// AttentionSetup holds the buffers of one problem.
type AttentionSetup struct {
	P       AttentionProblem
	Q, K, V ops.AttnTensor
	O       ops.AttnTensor
	Cache   *ops.KVCache
}

// NewAttentionSetup allocates random inputs (unit scale) and the output; a
// decode problem gets a cache filled with Seq tokens.
func NewAttentionSetup(ctx context.Context, rt *runtime.Runtime, p AttentionProblem, seed uint64) (*AttentionSetup, error) {
	if err := checkSetup("bench: attention", rt, "Batch, HeadsQ, HeadsKV, Seq, Dim", p.Batch, p.HeadsQ, p.Seq, p.Dim); err != nil {
		return nil, err
	}
	if err := checkSetup("bench: attention", rt, "HeadsKV", p.HeadsKV); err != nil {
		return nil, err
	}
	if p.HeadsQ%p.HeadsKV != 0 {
		return nil, tile.Errorf(tile.ErrShape, "bench: attention", "HeadsKV", "HeadsQ %d is not a multiple of HeadsKV %d", p.HeadsQ, p.HeadsKV)
	}
	rng := rand.New(rand.NewPCG(seed, 0xa77e))
	sq := p.Seq
	if p.Decode {
		sq = 1
	}
	s := &AttentionSetup{P: p}
	qb, _, err := RandomBuffer(ctx, rt, rng, p.DType, 1, p.Batch, sq, p.HeadsQ, p.Dim)
	if err != nil {
		return nil, err
	}
	s.Q = ops.AttnTensorOf(qb)
	ob, err := rt.Alloc(p.DType, p.Batch, sq, p.HeadsQ, p.Dim)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.O = ops.AttnTensorOf(ob)
	kb, _, err := RandomBuffer(ctx, rt, rng, p.DType, 1, p.Batch, p.Seq, p.HeadsKV, p.Dim)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.K = ops.AttnTensorOf(kb)
	vb, _, err := RandomBuffer(ctx, rt, rng, p.DType, 1, p.Batch, p.Seq, p.HeadsKV, p.Dim)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.V = ops.AttnTensorOf(vb)
	if p.Decode {
		s.Cache, err = ops.NewKVCache(rt, ops.KVCacheOptions{DType: p.DType, Batch: p.Batch, HeadsKV: p.HeadsKV, HeadDim: p.Dim, Capacity: p.Seq})
		if err == nil {
			err = s.Cache.Append(ctx, s.K, s.V, nil)
		}
		if err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

func (s *AttentionSetup) opts() *ops.AttentionOptions {
	return &ops.AttentionOptions{Causal: s.P.Causal}
}

// Run computes the attention once.
func (s *AttentionSetup) Run(ctx context.Context, rt *runtime.Runtime) error {
	if s.P.Decode {
		return ops.AttentionKVCache(ctx, rt, s.O, s.Q, s.Cache, s.opts())
	}
	return ops.Attention(ctx, rt, s.O, s.Q, s.K, s.V, s.opts())
}

// Explain says which kernel Run selects.
func (s *AttentionSetup) Explain(rt *runtime.Runtime) (ops.Explanation, error) {
	if s.P.Decode {
		return ops.ExplainAttentionKVCache(rt, s.O, s.Q, s.Cache, s.opts())
	}
	return ops.ExplainAttention(rt, s.O, s.Q, s.K, s.V, s.opts())
}

// Close releases the buffers.
func (s *AttentionSetup) Close() {
	for _, t := range []ops.AttnTensor{s.Q, s.K, s.V, s.O} {
		if t.Buf != nil {
			t.Buf.Close()
		}
	}
	if s.Cache != nil {
		s.Cache.Close()
	}
}

// headView is head h of t ([batch, seq, heads, d], dense), rows from row0.
func headView(t ops.AttnTensor, h, row0 int) ops.AttnTensor {
	sh := t.Buf.Shape()
	st := tile.RowMajorStrides(sh)
	return ops.AttnTensor{Buf: t.Buf, Offset: row0*st[1] + h*st[2],
		Shape: []int{sh[0], sh[1] - row0, 1, sh[3]}, Strides: st}
}

// Check compares O (after Run) with the float64 reference on a sample: the
// first and last query heads and the last 64 query rows (which see every
// key a causal mask allows), returning the max relative error (floor 1).
func (s *AttentionSetup) Check(ctx context.Context, rt *runtime.Runtime) (float64, error) {
	p := s.P
	worst := 0.0
	group := p.HeadsQ / p.HeadsKV
	row0 := 0
	if !p.Decode {
		row0 = max(0, p.Seq-64)
	}
	for _, h := range []int{0, p.HeadsQ - 1} {
		q, o := headView(s.Q, h, row0), headView(s.O, h, row0)
		k, v := headView(s.K, h/group, 0), headView(s.V, h/group, 0)
		ref, err := rt.Alloc(p.DType, o.Shape...)
		if err != nil {
			return 0, err
		}
		call, err := ops.AttentionPlan(rt, ops.AttnTensorOf(ref), q, k, v, s.opts())
		if err != nil {
			ref.Close()
			return 0, err
		}
		args, ok := callargs.As[engine.AttentionArgs](call)
		if !ok {
			ref.Close()
			return 0, fmt.Errorf("bench: the attention plan has no arguments to check")
		}
		if err := engine.WithHostArgs(ctx, engine.Handles.Runtime(rt), args, func() error {
			fallback.AttentionRef(engine.HostAttentionArgs(args, 1))
			return nil
		}); err != nil {
			ref.Close()
			return 0, err
		}
		want := make([]float32, ref.Len())
		if err := ref.ReadFloat32(ctx, want); err != nil {
			ref.Close()
			return 0, err
		}
		ref.Close()
		all := make([]float32, s.O.Buf.Len())
		if err := s.O.Buf.ReadFloat32(ctx, all); err != nil {
			return 0, err
		}
		got := make([]float32, 0, len(want))
		st := tile.RowMajorStrides(s.O.Buf.Shape())
		for b := 0; b < o.Shape[0]; b++ {
			for i := 0; i < o.Shape[1]; i++ {
				base := b*st[0] + (row0+i)*st[1] + h*st[2]
				got = append(got, all[base:base+p.Dim]...)
			}
		}
		worst = max(worst, MaxRelErr(got, want, 1))
	}
	return worst, nil
}

// AttentionSizes are the sequence lengths of each -size for the tcrt
// command (prefill length, decode context).
var AttentionSizes = map[string][2]int{"small": {256, 1024}, "medium": {1024, 4096}, "large": {2048, 4096}}

func init() {
	RegisterJob(Job{Name: "attention", Order: 30, Run: runAttentionJob})
}

func runAttentionJob(ctx context.Context, rt *runtime.Runtime, cfg Config) ([]Result, error) {
	var out []Result
	sz, ok := AttentionSizes[cfg.Size]
	if !ok {
		sz = AttentionSizes["medium"]
	}
	for _, decode := range []bool{false, true} {
		for _, dt := range []tile.DType{tile.F32, tile.F16, tile.BF16} {
			p := AttentionProblem{DType: dt, Batch: 1, HeadsQ: 32, HeadsKV: 32, Seq: sz[0], Dim: 128, Causal: true}
			if decode {
				p = AttentionProblem{Decode: true, DType: dt, Batch: 1, HeadsQ: 32, HeadsKV: 8, Seq: sz[1], Dim: 128}
			}
			r, err := runAttentionProblem(ctx, rt, cfg, p)
			if err != nil {
				return out, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func runAttentionProblem(ctx context.Context, rt *runtime.Runtime, cfg Config, p AttentionProblem) (Result, error) {
	r := Result{Op: "attention", Problem: p.String(), Unit: "GFLOP/s", Tol: 1e-4}
	if p.DType != tile.F32 {
		r.Tol = 1e-2
	}
	if p.Decode {
		r.Unit = "GB/s"
	}
	s, err := NewAttentionSetup(ctx, rt, p, uint64(p.Seq))
	if err != nil {
		return r, err
	}
	defer s.Close()
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
	med, sim, err := MedianOn(rt, func() error { return s.Run(ctx, rt) }, 3, 300*time.Millisecond)
	if err != nil {
		return r, err
	}
	if r.MaxErr, err = s.Check(ctx, rt); err != nil {
		return r, err
	}
	r.OK = r.MaxErr <= r.Tol
	r.Seconds = med.Seconds()
	r.Sim = sim
	if p.Decode {
		r.Value = p.KVBytes() / med.Seconds() / 1e9
	} else {
		r.Value = p.FLOPs() / med.Seconds() / 1e9
	}
	return r, nil
}
