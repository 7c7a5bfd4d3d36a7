package ops

import (
	"context"
	"math"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// SampleOptions are the parameters of Sample. Values are taken literally:
// start from DefaultSampleOptions, or pass nil (temperature 1, no
// filters, seed 0).
type SampleOptions struct {
	// Temperature divides the logits; 0 is greedy (argmax, the lowest
	// index on ties). It must be finite and not negative.
	Temperature float32
	// TopK keeps the TopK most likely tokens (0: all); not negative.
	TopK int
	// TopP keeps the smallest set of most likely tokens holding TopP of
	// the probability (after TopK, when both are set); in (0, 1], 1: all.
	TopP float32
	// MinP keeps tokens whose probability is at least MinP times the
	// largest; in [0, 1], 0: all.
	MinP float32
	// Seed and Offset key the Philox4x32-10 draw of each row: the same
	// seed, offset, row and logits give the same token on every backend.
	// Bump Offset every decoding step.
	Seed, Offset uint64
	// Stream makes the call asynchronous; nil runs it synchronously.
	Stream *runtime.Stream
}

// DefaultSampleOptions returns temperature 1, no top-k, top-p or min-p.
func DefaultSampleOptions() SampleOptions { return SampleOptions{Temperature: 1, TopP: 1} }

// Sample draws one token per row of logits (Rows × Vocab, f32, f16 or
// bf16) into out's first Rows elements (s32). The rules are stated exactly in
// fallback/sample.go: probabilities are integer weights
// ⌊ExpF32(s − max s)·2^40⌋ of the scores s = logit·(1/T), the order is by
// score with ties to the lower index, top-k, top-p and min-p cut that order
// (top-p over what top-k kept), and the token is found by walking the kept
// set in index order with r = ⌊u·W/2^64⌋, u the row's Philox draw. NaN
// logits are never drawn (greedy counts them as −Inf); a row whose largest
// score is +Inf, or that has no score above −Inf, is sampled greedily.
// Errors wrap ErrShape, ErrDType, ErrBounds, ErrAlias, ErrClosed or
// ErrArgument, and nothing is written.
func Sample(ctx context.Context, rt *runtime.Runtime, out *runtime.Buffer, logits Matrix, opt *SampleOptions) error {
	args, s, err := sampleArgs(rt, out, logits, opt)
	if err != nil {
		return err
	}
	return runPooled(ctx, rt, s, engine.OpSample.Name(), args, &samplePool)
}

// ExplainSample says which kernel Sample would select and why.
func ExplainSample(rt *runtime.Runtime, out *runtime.Buffer, logits Matrix, opt *SampleOptions) (Explanation, error) {
	args, _, err := sampleArgs(rt, out, logits, opt)
	return explainOf(rt, engine.OpSample.Name(), args, err)
}

// sampleArgs validates a Sample without launching it.
func sampleArgs(rt *runtime.Runtime, out *runtime.Buffer, logits Matrix, opt *SampleOptions) (*engine.SampleArgs, *runtime.Stream, error) {
	op := engine.OpSample.Name()
	o := DefaultSampleOptions()
	if opt != nil {
		o = *opt
	}
	if err := checkRuntime(rt, o.Stream, op); err != nil {
		return nil, nil, err
	}
	switch {
	case !(o.Temperature >= 0) || math.IsInf(float64(o.Temperature), 0):
		return nil, nil, tile.Errorf(ErrArgument, op, "Temperature", "temperature %v; it must be finite and not negative", o.Temperature)
	case o.TopK < 0:
		return nil, nil, tile.Errorf(ErrArgument, op, "TopK", "top-k %d is negative", o.TopK)
	case !(o.TopP > 0 && o.TopP <= 1):
		return nil, nil, tile.Errorf(ErrArgument, op, "TopP", "top-p %v is outside (0, 1]", o.TopP)
	case !(o.MinP >= 0 && o.MinP <= 1):
		return nil, nil, tile.Errorf(ErrArgument, op, "MinP", "min-p %v is outside [0, 1]", o.MinP)
	}
	var err error
	if logits, err = checkRows(rt, op, "logits", logits, 0); err != nil {
		return nil, nil, err
	}
	if logits.Cols > 1<<24 {
		return nil, nil, tile.Errorf(ErrShape, op, "logits", "a vocabulary of %d; at most 2^24 (the integer weights' range)", logits.Cols)
	}
	if err := checkBuf(out, rt, op, "out"); err != nil {
		return nil, nil, err
	}
	if out.DType() != tile.S32 {
		return nil, nil, tile.Errorf(ErrDType, op, "out", "element type %v; want s32", out.DType())
	}
	if out.Len() < logits.Rows {
		return nil, nil, tile.Errorf(ErrShape, op, "out", "%d elements; want one per row, %d", out.Len(), logits.Rows)
	}
	if engine.Overlaps(ebuf(out), ebuf(logits.Buf)) {
		return nil, nil, tile.Errorf(ErrAlias, op, "out", "out is the logits' buffer")
	}
	args, _ := samplePool.get()
	*args = engine.SampleArgs{Logits: logits.eng(), Out: ebuf(out), Temperature: o.Temperature, TopK: o.TopK, TopP: o.TopP, MinP: o.MinP,
		Seed: o.Seed, Offset: o.Offset}
	return args, o.Stream, nil
}

// SamplePlan validates a Sample call and selects its kernel once, without
// launching it: the returned Call runs it (Call.Run) and explains the choice
// (Call.Explain).
func SamplePlan(rt *runtime.Runtime, out *runtime.Buffer, logits Matrix, opt *SampleOptions) (*Call, error) {
	args, s, err := sampleArgs(rt, out, logits, opt)
	return newCall(rt, s, engine.OpSample.Name(), args, err)
}
