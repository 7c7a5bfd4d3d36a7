package ops

import (
	"context"
	"math"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// SoftmaxOptions are the optional parts of Softmax. Values are taken
// literally: start from DefaultSoftmaxOptions, or pass nil.
type SoftmaxOptions struct {
	// Temperature divides the logits; it must be positive and finite.
	Temperature float32
	// Log writes log-softmax instead.
	Log bool
	// Stream makes the call asynchronous; nil runs it synchronously.
	Stream *runtime.Stream
}

// DefaultSoftmaxOptions returns Temperature 1, softmax.
func DefaultSoftmaxOptions() SoftmaxOptions { return SoftmaxOptions{Temperature: 1} }

// Softmax writes softmax(x/T) (or log-softmax) over each row of x into y,
// which may be exactly x's view. Rows holding NaN, a +Inf maximum, or only
// −Inf give NaN rows (see fallback.SoftmaxArgs). The fast path uses the
// 2-ulp float32 exponential and float32 sums: within about 1e-6 relative
// (plus the output type's rounding) of the float64 reference.
func Softmax(ctx context.Context, rt *runtime.Runtime, y, x Matrix, opt *SoftmaxOptions) error {
	args, s, err := softmaxArgs(rt, y, x, opt)
	if err != nil {
		return err
	}
	return ert(rt).Run(ctx, estream(s), engine.OpSoftmax.Name(), args)
}

// ExplainSoftmax says which kernel Softmax would select and why.
func ExplainSoftmax(rt *runtime.Runtime, y, x Matrix, opt *SoftmaxOptions) (Explanation, error) {
	args, _, err := softmaxArgs(rt, y, x, opt)
	return explainOf(rt, engine.OpSoftmax.Name(), args, err)
}

// softmaxArgs validates a Softmax without launching it.
func softmaxArgs(rt *runtime.Runtime, y, x Matrix, opt *SoftmaxOptions) (*engine.SoftmaxArgs, *runtime.Stream, error) {
	op := engine.OpSoftmax.Name()
	o := DefaultSoftmaxOptions()
	if opt != nil {
		o = *opt
	}
	if err := checkRuntime(rt, o.Stream, op); err != nil {
		return nil, nil, err
	}
	if !(o.Temperature > 0) || math.IsInf(float64(o.Temperature), 0) {
		return nil, nil, tile.Errorf(ErrArgument, op, "Temperature", "temperature %v; it must be positive and finite", o.Temperature)
	}
	var err error
	if x, err = checkRows(rt, op, "x", x, 0); err != nil {
		return nil, nil, err
	}
	if y, err = checkRows(rt, op, "y", y, x.Cols); err != nil {
		return nil, nil, err
	}
	if y.Rows != x.Rows {
		return nil, nil, tile.Errorf(ErrShape, op, "y", "%d rows; x has %d", y.Rows, x.Rows)
	}
	if err := checkOut(op, "y", y, operand{m: x, name: "x", inPlace: true}); err != nil {
		return nil, nil, err
	}
	return &engine.SoftmaxArgs{X: x.eng(), Y: y.eng(), Temperature: o.Temperature, Log: o.Log}, o.Stream, nil
}

// SoftmaxPlan validates a Softmax call and selects its kernel once, without
// launching it: the returned Call runs it (Call.Run) and explains the choice
// (Call.Explain).
func SoftmaxPlan(rt *runtime.Runtime, y, x Matrix, opt *SoftmaxOptions) (*Call, error) {
	args, s, err := softmaxArgs(rt, y, x, opt)
	return newCall(rt, s, engine.OpSoftmax.Name(), args, err)
}
