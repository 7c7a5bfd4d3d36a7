package ops

import (
	"context"
	"math"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// Poolings for PoolOptions.Mode.
const (
	PoolMean = fallback.PoolMean // the mean of the sequence's tokens
	PoolCLS  = fallback.PoolCLS  // the first token
	PoolLast = fallback.PoolLast // the last token
)

// PoolOptions are the optional parts of Pool; the zero value (or nil) is
// the mean of one sequence of all rows, not normalised.
type PoolOptions struct {
	Mode PoolMode
	// Lengths are the sequences' token counts, packed one after another
	// in x's rows (a varlen batch): each positive, summing to x's rows.
	// nil is one sequence of every row.
	Lengths []int
	// Normalize divides each pooled row by max(‖y‖₂, Eps).
	Normalize bool
	// Eps guards the normalisation (0: 1e-12, as torch's F.normalize).
	Eps float32
	// Stream makes the call asynchronous; nil runs it synchronously.
	Stream *runtime.Stream
}

// L2NormalizeOptions are the optional parts of L2Normalize.
type L2NormalizeOptions struct {
	// Eps bounds the divisor below (0: 1e-12).
	Eps float32
	// Stream makes the call asynchronous; nil runs it synchronously.
	Stream *runtime.Stream
}

const defaultL2Eps = 1e-12

func l2Eps(op string, e float32) (float32, error) {
	if e == 0 {
		return defaultL2Eps, nil
	}
	if !(e > 0) || math.IsInf(float64(e), 0) {
		return 0, tile.Errorf(ErrArgument, op, "Eps", "eps %v; it must be positive and finite (0: 1e-12)", e)
	}
	return e, nil
}

// Pool reduces the tokens of each sequence of x (Tokens × Hidden) to one
// row of y (len(Lengths) × Hidden): their mean, the first (CLS) or the
// last token, optionally L2-normalised: the sentence embedding of an
// encoder. y may not overlap x.
func Pool(ctx context.Context, rt *runtime.Runtime, y, x Matrix, opt *PoolOptions) error {
	args, s, err := poolArgs(rt, y, x, opt)
	if err != nil {
		return err
	}
	return ert(rt).Run(ctx, estream(s), engine.OpPool.Name(), args)
}

// ExplainPool says which kernel Pool would select and why.
func ExplainPool(rt *runtime.Runtime, y, x Matrix, opt *PoolOptions) (Explanation, error) {
	args, _, err := poolArgs(rt, y, x, opt)
	return explainOf(rt, engine.OpPool.Name(), args, err)
}

// poolArgs validates a Pool without launching it.
func poolArgs(rt *runtime.Runtime, y, x Matrix, opt *PoolOptions) (*engine.PoolArgs, *runtime.Stream, error) {
	op := engine.OpPool.Name()
	var o PoolOptions
	if opt != nil {
		o = *opt
	}
	if err := checkRuntime(rt, o.Stream, op); err != nil {
		return nil, nil, err
	}
	if !o.Mode.Valid() {
		return nil, nil, tile.Errorf(ErrArgument, op, "Mode", "unknown pooling %d", o.Mode)
	}
	eps, err := l2Eps(op, o.Eps)
	if err != nil {
		return nil, nil, err
	}
	if x, err = checkRows(rt, op, "x", x, 0); err != nil {
		return nil, nil, err
	}
	lengths := o.Lengths
	if lengths == nil {
		lengths = []int{x.Rows}
		if x.Rows == 0 {
			lengths = []int{}
		}
	}
	total := 0
	for i, l := range lengths {
		if l <= 0 || l > x.Rows-total {
			return nil, nil, tile.Errorf(ErrShape, op, "Lengths", "sequence %d has length %d; lengths must be positive and sum to x's %d rows", i, l, x.Rows)
		}
		total += l
	}
	if total != x.Rows {
		return nil, nil, tile.Errorf(ErrShape, op, "Lengths", "the lengths sum to %d; x has %d rows", total, x.Rows)
	}
	if y, err = checkRows(rt, op, "y", y, x.Cols); err != nil {
		return nil, nil, err
	}
	if y.Rows != len(lengths) {
		return nil, nil, tile.Errorf(ErrShape, op, "y", "%d rows; want one per sequence, %d", y.Rows, len(lengths))
	}
	if err := checkOut(op, "y", y, operand{m: x, name: "x"}); err != nil {
		return nil, nil, err
	}
	return &engine.PoolArgs{Mode: o.Mode, X: x.eng(), Y: y.eng(), Lengths: append([]int(nil), lengths...), Normalize: o.Normalize, Eps: eps}, o.Stream, nil
}

// L2Normalize writes y = x / max(‖x‖₂, Eps) for every row; y may be exactly
// x's view.
func L2Normalize(ctx context.Context, rt *runtime.Runtime, y, x Matrix, opt *L2NormalizeOptions) error {
	args, s, err := l2NormalizeArgs(rt, y, x, opt)
	if err != nil {
		return err
	}
	return ert(rt).Run(ctx, estream(s), engine.OpL2Normalize.Name(), args)
}

// ExplainL2Normalize says which kernel L2Normalize would select and why.
func ExplainL2Normalize(rt *runtime.Runtime, y, x Matrix, opt *L2NormalizeOptions) (Explanation, error) {
	args, _, err := l2NormalizeArgs(rt, y, x, opt)
	return explainOf(rt, engine.OpL2Normalize.Name(), args, err)
}

// l2NormalizeArgs validates an L2Normalize without launching it.
func l2NormalizeArgs(rt *runtime.Runtime, y, x Matrix, opt *L2NormalizeOptions) (*engine.L2NormArgs, *runtime.Stream, error) {
	op := engine.OpL2Normalize.Name()
	var o L2NormalizeOptions
	if opt != nil {
		o = *opt
	}
	if err := checkRuntime(rt, o.Stream, op); err != nil {
		return nil, nil, err
	}
	eps, err := l2Eps(op, o.Eps)
	if err != nil {
		return nil, nil, err
	}
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
	return &engine.L2NormArgs{X: x.eng(), Y: y.eng(), Eps: eps}, o.Stream, nil
}

// L2NormalizePlan validates an L2Normalize call and selects its kernel once,
// without launching it: the returned Call runs it (Call.Run) and explains
// the choice (Call.Explain).
func L2NormalizePlan(rt *runtime.Runtime, y, x Matrix, opt *L2NormalizeOptions) (*Call, error) {
	args, s, err := l2NormalizeArgs(rt, y, x, opt)
	return newCall(rt, s, engine.OpL2Normalize.Name(), args, err)
}

// PoolPlan validates a Pool call and selects its kernel once, without
// launching it: the returned Call runs it (Call.Run) and explains the choice
// (Call.Explain).
func PoolPlan(rt *runtime.Runtime, y, x Matrix, opt *PoolOptions) (*Call, error) {
	args, s, err := poolArgs(rt, y, x, opt)
	return newCall(rt, s, engine.OpPool.Name(), args, err)
}
