package ops

import (
	"context"
	"math"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// Rotary scalings for RoPEScaling.Kind (see fallback.RoPEScalingKind for
// the formulas).
const (
	RoPENoScaling = fallback.RoPENoScaling
	RoPELinear    = fallback.RoPELinear
	RoPELlama3    = fallback.RoPELlama3
	RoPEYaRN      = fallback.RoPEYaRN
)

// DefaultMaxPosition is RoPEOptions.MaxPosition's value when it is 0.
const DefaultMaxPosition = 1 << 24

// RoPEOptions are the parameters of RoPE. Values are taken literally:
// start from DefaultRoPEOptions and set HeadDim.
type RoPEOptions struct {
	// HeadDim is the size of a head; q and k hold Cols/HeadDim heads.
	HeadDim int
	// RotaryDim is how many leading elements of each head rotate (0:
	// HeadDim); it must be even and at most HeadDim. The rest pass
	// through.
	RotaryDim int
	// Interleaved selects GPT-J's layout (pairs 2i, 2i+1); false is NeoX's
	// (pairs i, i + RotaryDim/2), which Llama, Qwen and Mistral use.
	Interleaved bool
	// Theta is the frequency base (inv_freq_i = Theta^(−2i/RotaryDim)),
	// positive and finite.
	Theta float64
	// Scaling stretches the frequencies (RoPELinear, RoPELlama3,
	// RoPEYaRN).
	Scaling RoPEScaling
	// Positions, if set, is an s32 buffer of one position per token (row;
	// elements past the token count are unused), for varlen batches. The kernel checks every value against
	// MaxPosition before writing anything (ErrBounds).
	Positions *runtime.Buffer
	// SeqLens and SeqOffsets, if set instead, describe a batch of
	// sequences packed in the rows: sequence i is the next SeqLens[i] rows,
	// its token t at position SeqOffsets[i] + t (the tokens already in the
	// KV cache).
	SeqLens, SeqOffsets []int
	// Offset is, when neither is set, the position of row 0 (one
	// sequence: row t is at Offset + t).
	Offset int
	// MaxPosition bounds the positions: each must be in [0, MaxPosition)
	// (0: DefaultMaxPosition).
	MaxPosition int
	// QOut and KOut, if set, receive the results (out of place) instead
	// of q and k; they must not overlap the inputs.
	QOut, KOut *Matrix
	// Stream makes the call asynchronous; nil runs it synchronously.
	Stream *runtime.Stream
}

// DefaultRoPEOptions returns Theta 10000, NeoX layout, no scaling;
// HeadDim is left to set.
func DefaultRoPEOptions() RoPEOptions { return RoPEOptions{Theta: 10000} }

// RoPE applies rotary position embeddings to q and, when k.Buf is set, k:
// Tokens × Heads·HeadDim row views (k may have fewer heads, as in GQA),
// in place unless QOut/KOut are given. For each token at position p and
// each pair (x0, x1) of the first RotaryDim elements of a head,
//
//	x0' = x0·cos(p·f_i) − x1·sin(p·f_i),  x1' = x1·cos(p·f_i) + x0·sin(p·f_i)
//
// with cos and sin computed in float64 and rounded to float32, the rotation
// in float32. Errors wrap ErrShape, ErrDType, ErrBounds, ErrAlias,
// ErrClosed or ErrArgument, and nothing is written.
func RoPE(ctx context.Context, rt *runtime.Runtime, q, k Matrix, opt *RoPEOptions) error {
	args, s, err := ropeArgs(rt, q, k, opt)
	if err != nil {
		return err
	}
	return runPooled(ctx, rt, s, engine.OpRoPE.Name(), args, &ropePool)
}

// ExplainRoPE says which kernel RoPE would select and why.
func ExplainRoPE(rt *runtime.Runtime, q, k Matrix, opt *RoPEOptions) (Explanation, error) {
	args, _, err := ropeArgs(rt, q, k, opt)
	return explainOf(rt, engine.OpRoPE.Name(), args, err)
}

func finitePos(v float64) bool { return v > 0 && !math.IsInf(v, 0) }

func checkScaling(op string, s RoPEScaling) error {
	bad := func(rule string, args ...any) error { return tile.Errorf(ErrArgument, op, "Scaling", rule, args...) }
	switch s.Kind {
	case RoPENoScaling:
	case RoPELinear:
		if !finitePos(s.Factor) {
			return bad("linear factor %v; it must be positive and finite", s.Factor)
		}
	case RoPELlama3:
		if !finitePos(s.Factor) || !finitePos(s.LowFreqFactor) || !finitePos(s.HighFreqFactor) || !(s.HighFreqFactor > s.LowFreqFactor) || s.OriginalMaxPosition <= 0 {
			return bad("Llama 3.1 scaling needs positive finite Factor, LowFreqFactor < HighFreqFactor and OriginalMaxPosition > 0 (got %+v)", s)
		}
	case RoPEYaRN:
		if !finitePos(s.Factor) || s.OriginalMaxPosition <= 0 || s.BetaFast < 0 || s.BetaSlow < 0 ||
			math.IsInf(s.BetaFast, 0) || math.IsInf(s.BetaSlow, 0) || (s.BetaFast != 0 && s.BetaSlow != 0 && !(s.BetaFast > s.BetaSlow)) {
			return bad("YaRN scaling needs a positive finite Factor, OriginalMaxPosition > 0 and BetaFast > BetaSlow ≥ 0 (0: 32 and 1) (got %+v)", s)
		}
	default:
		return bad("unknown scaling kind %d", s.Kind)
	}
	return nil
}

// ropeArgs validates a RoPE without launching it.
func ropeArgs(rt *runtime.Runtime, q, k Matrix, opt *RoPEOptions) (*engine.RoPEArgs, *runtime.Stream, error) {
	op := engine.OpRoPE.Name()
	o := DefaultRoPEOptions()
	if opt != nil {
		o = *opt
	}
	if err := checkRuntime(rt, o.Stream, op); err != nil {
		return nil, nil, err
	}
	if o.HeadDim <= 0 {
		return nil, nil, tile.Errorf(ErrShape, op, "HeadDim", "head size %d; it must be positive", o.HeadDim)
	}
	rot := o.RotaryDim
	if rot == 0 {
		rot = o.HeadDim
	}
	if rot < 0 || rot%2 != 0 || rot > o.HeadDim {
		return nil, nil, tile.Errorf(ErrShape, op, "RotaryDim", "rotary size %d; it must be even, positive and at most HeadDim %d", rot, o.HeadDim)
	}
	if !finitePos(o.Theta) {
		return nil, nil, tile.Errorf(ErrArgument, op, "Theta", "theta %v; it must be positive and finite", o.Theta)
	}
	if err := checkScaling(op, o.Scaling); err != nil {
		return nil, nil, err
	}
	maxPos := o.MaxPosition
	if maxPos == 0 {
		maxPos = DefaultMaxPosition
	}
	if maxPos < 0 || maxPos > math.MaxInt32 {
		return nil, nil, tile.Errorf(ErrArgument, op, "MaxPosition", "%d is outside [1, 2^31)", o.MaxPosition)
	}
	var err error
	if q, err = checkRows(rt, op, "q", q, 0); err != nil {
		return nil, nil, err
	}
	if q.Cols%o.HeadDim != 0 {
		return nil, nil, tile.Errorf(ErrShape, op, "q", "%d columns are not whole heads of %d", q.Cols, o.HeadDim)
	}
	pa := ropePool.getAll()
	args, views := &pa.a, &pa.m
	*args = engine.RoPEArgs{Q: q.eng(), QOut: q.eng(), HeadsQ: q.Cols / o.HeadDim, HeadDim: o.HeadDim, RotaryDim: rot,
		Interleaved: o.Interleaved, MaxPosition: maxPos, Theta: o.Theta, Scaling: o.Scaling}
	qout, kout := q, Matrix{} // the validated output views (kout: when k is set)
	var insArr [3]operand
	ins := append(insArr[:0], operand{m: q, name: "q"})
	if k.Buf != nil {
		if k, err = checkRows(rt, op, "k", k, 0); err != nil {
			return nil, nil, err
		}
		if k.Cols%o.HeadDim != 0 {
			return nil, nil, tile.Errorf(ErrShape, op, "k", "%d columns are not whole heads of %d", k.Cols, o.HeadDim)
		}
		if k.Rows != q.Rows {
			return nil, nil, tile.Errorf(ErrShape, op, "k", "%d rows (tokens); q has %d", k.Rows, q.Rows)
		}
		if spansOverlap(k, q) {
			return nil, nil, tile.Errorf(ErrAlias, op, "k", "k overlaps q")
		}
		views[0] = k.eng()
		args.K, args.KOut, args.HeadsK = &views[0], &views[0], k.Cols/o.HeadDim
		kout = k
		ins = append(ins, operand{m: k, name: "k"})
	} else if o.KOut != nil {
		return nil, nil, tile.Errorf(ErrArgument, op, "KOut", "KOut given without k")
	}
	if o.QOut != nil {
		qo, err := checkRows(rt, op, "QOut", *o.QOut, q.Cols)
		if err != nil {
			return nil, nil, err
		}
		if qo.Rows != q.Rows {
			return nil, nil, tile.Errorf(ErrShape, op, "QOut", "%d rows; q has %d", qo.Rows, q.Rows)
		}
		if err := checkOut(op, "QOut", qo, ins...); err != nil {
			return nil, nil, err
		}
		qout, args.QOut = qo, qo.eng()
	}
	if o.KOut != nil {
		ko, err := checkRows(rt, op, "KOut", *o.KOut, k.Cols)
		if err != nil {
			return nil, nil, err
		}
		if ko.Rows != k.Rows {
			return nil, nil, tile.Errorf(ErrShape, op, "KOut", "%d rows; k has %d", ko.Rows, k.Rows)
		}
		if err := checkOut(op, "KOut", ko, append(ins, operand{m: qout, name: "QOut"})...); err != nil {
			return nil, nil, err
		}
		kout, views[1] = ko, ko.eng()
		args.KOut = &views[1]
	}
	tokens := q.Rows
	switch {
	case o.Positions != nil:
		if o.SeqLens != nil || o.SeqOffsets != nil || o.Offset != 0 {
			return nil, nil, tile.Errorf(ErrArgument, op, "Positions", "give positions, sequence offsets or an offset, not more than one")
		}
		if err := checkBuf(o.Positions, rt, op, "Positions"); err != nil {
			return nil, nil, err
		}
		if o.Positions.DType() != tile.S32 || o.Positions.Len() < tokens {
			return nil, nil, tile.Errorf(ErrShape, op, "Positions", "a %v buffer of %d elements; want at least %d s32 (one per token)", o.Positions.DType(), o.Positions.Len(), tokens)
		}
		outs := []Matrix{qout}
		if args.KOut != nil {
			outs = append(outs, kout)
		}
		if err := checkBufAlias(op, "Positions", o.Positions, outs...); err != nil {
			return nil, nil, err
		}
		args.Positions = ebuf(o.Positions)
	case o.SeqLens != nil || o.SeqOffsets != nil:
		if o.Offset != 0 {
			return nil, nil, tile.Errorf(ErrArgument, op, "Offset", "give sequence offsets or an offset, not both")
		}
		if len(o.SeqLens) != len(o.SeqOffsets) {
			return nil, nil, tile.Errorf(ErrShape, op, "SeqOffsets", "%d offsets for %d sequences", len(o.SeqOffsets), len(o.SeqLens))
		}
		pos := pa.i32[:0] // the pooled struct's memory
		for i, l := range o.SeqLens {
			off := o.SeqOffsets[i]
			if l < 0 || l > tokens-len(pos) {
				return nil, nil, tile.Errorf(ErrShape, op, "SeqLens", "sequence %d has length %d; the lengths must be non-negative and sum to the %d tokens", i, l, tokens)
			}
			if off < 0 || off > maxPos-l {
				return nil, nil, tile.Errorf(ErrBounds, op, "SeqOffsets", "sequence %d spans positions [%d, %d+%d), outside [0, %d)", i, off, off, l, maxPos)
			}
			for t := range l {
				pos = append(pos, int32(off+t))
			}
		}
		if len(pos) != tokens {
			return nil, nil, tile.Errorf(ErrShape, op, "SeqLens", "the lengths sum to %d; q has %d tokens", len(pos), tokens)
		}
		args.HostPositions, pa.i32 = pos, pos
	default:
		if o.Offset < 0 || o.Offset > maxPos-tokens {
			return nil, nil, tile.Errorf(ErrBounds, op, "Offset", "tokens at positions [%d, %d+%d) are outside [0, %d)", o.Offset, o.Offset, tokens, maxPos)
		}
		pos := pa.i32[:0]
		for t := range tokens {
			pos = append(pos, int32(o.Offset+t))
		}
		args.HostPositions, pa.i32 = pos, pos
	}
	return args, o.Stream, nil
}

// RoPEPlan validates a RoPE call and selects its kernel once, without
// launching it: the returned Call runs it (Call.Run) and explains the choice
// (Call.Explain).
func RoPEPlan(rt *runtime.Runtime, q, k Matrix, opt *RoPEOptions) (*Call, error) {
	args, s, err := ropeArgs(rt, q, k, opt)
	return newCall(rt, s, engine.OpRoPE.Name(), args, err)
}
