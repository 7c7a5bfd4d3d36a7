package ops

import (
	"context"
	"math"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// RMSNormOptions are the optional parts of RMSNorm and AddRMSNorm. Values
// are taken literally: start from DefaultRMSNormOptions, or pass nil.
type RMSNormOptions struct {
	// Eps is added to the mean square; it must be positive and finite.
	Eps float32
	// Gemma multiplies by (1 + w) instead of w (Gemma's weights are
	// stored as offsets from 1).
	Gemma bool
	// Stream makes the call asynchronous; nil runs it synchronously.
	Stream *runtime.Stream
}

// DefaultRMSNormOptions returns Eps 1e-6, the w form.
func DefaultRMSNormOptions() RMSNormOptions { return RMSNormOptions{Eps: 1e-6} }

// LayerNormOptions are the optional parts of LayerNorm. Values are taken
// literally: start from DefaultLayerNormOptions, or pass nil.
type LayerNormOptions struct {
	// Eps is added to the variance; it must be positive and finite.
	Eps float32
	// Residual, if set, is a Rows × Cols view updated first, residual +=
	// x, and then normalised (the rounded sum) into y; it may not overlap
	// x or y.
	Residual *Matrix
	// Stream makes the call asynchronous; nil runs it synchronously.
	Stream *runtime.Stream
}

// DefaultLayerNormOptions returns Eps 1e-5, PyTorch's default (BERT
// models use 1e-12: set it).
func DefaultLayerNormOptions() LayerNormOptions { return LayerNormOptions{Eps: 1e-5} }

func checkEps(op string, eps float32) error {
	if !(eps > 0) || math.IsInf(float64(eps), 0) {
		return tile.Errorf(ErrArgument, op, "Eps", "eps %v; it must be positive and finite", eps)
	}
	return nil
}

// RMSNorm writes, for every row of x (Rows × Cols),
//
//	y[r, j] = x[r, j] / sqrt(mean_j(x[r, j]²) + Eps) · w[j]
//
// (w[j] + 1 with Gemma), with float32 or wider arithmetic and one rounding
// to y's type. weight holds Cols values (f32, f16 or bf16; nil means 1).
// y may be exactly x's view (in place). Errors wrap ErrShape, ErrDType,
// ErrBounds, ErrAlias, ErrClosed or ErrArgument, and nothing is written.
func RMSNorm(ctx context.Context, rt *runtime.Runtime, y, x Matrix, weight *runtime.Buffer, opt *RMSNormOptions) error {
	args, s, err := rmsNormArgs(rt, y, x, weight, opt)
	if err != nil {
		return err
	}
	return runPooled(ctx, rt, s, engine.OpRMSNorm.Name(), args, &normPool)
}

// ExplainRMSNorm says which kernel RMSNorm would select and why.
func ExplainRMSNorm(rt *runtime.Runtime, y, x Matrix, weight *runtime.Buffer, opt *RMSNormOptions) (Explanation, error) {
	args, _, err := rmsNormArgs(rt, y, x, weight, opt)
	return explainOf(rt, engine.OpRMSNorm.Name(), args, err)
}

// rmsNormArgs validates an RMSNorm without launching it.
func rmsNormArgs(rt *runtime.Runtime, y, x Matrix, weight *runtime.Buffer, opt *RMSNormOptions) (*engine.NormArgs, *runtime.Stream, error) {
	return normPlan(rt, engine.OpRMSNorm.Name(), fallback.NormRMS, y, x, nil, weight, nil, opt)
}

// AddRMSNorm is the fused residual update of a pre-norm decoder layer, in
// place and in one pass over memory:
//
//	residual[r] += x[r]               (rounded to residual's type)
//	x[r] = rmsnorm(residual[r]) · w
//
// The norm is of the residual as stored, so the result equals an add
// followed by RMSNorm. x and residual are Rows × Cols views that may not
// overlap. Errors as for RMSNorm.
func AddRMSNorm(ctx context.Context, rt *runtime.Runtime, x, residual Matrix, weight *runtime.Buffer, opt *RMSNormOptions) error {
	args, s, err := addRMSNormArgs(rt, x, residual, weight, opt)
	if err != nil {
		return err
	}
	return runPooled(ctx, rt, s, engine.OpAddRMSNorm.Name(), args, &normPool)
}

// ExplainAddRMSNorm says which kernel AddRMSNorm would select and why.
func ExplainAddRMSNorm(rt *runtime.Runtime, x, residual Matrix, weight *runtime.Buffer, opt *RMSNormOptions) (Explanation, error) {
	args, _, err := addRMSNormArgs(rt, x, residual, weight, opt)
	return explainOf(rt, engine.OpAddRMSNorm.Name(), args, err)
}

// addRMSNormArgs validates an AddRMSNorm without launching it.
func addRMSNormArgs(rt *runtime.Runtime, x, residual Matrix, weight *runtime.Buffer, opt *RMSNormOptions) (*engine.NormArgs, *runtime.Stream, error) {
	return normPlan(rt, engine.OpAddRMSNorm.Name(), fallback.NormRMS, x, x, &residual, weight, nil, opt)
}

// LayerNorm writes, for every row of x (or of the updated residual, see
// LayerNormOptions.Residual),
//
//	y[r, j] = (x[r, j] − μ) / sqrt(σ² + Eps) · w[j] + b[j]
//
// with μ and σ² the row's mean and biased variance. weight and bias hold
// Cols values each (nil: 1 and 0). y may be exactly x's view. Errors as
// for RMSNorm.
func LayerNorm(ctx context.Context, rt *runtime.Runtime, y, x Matrix, weight, bias *runtime.Buffer, opt *LayerNormOptions) error {
	args, s, err := layerNormArgs(rt, y, x, weight, bias, opt)
	if err != nil {
		return err
	}
	return runPooled(ctx, rt, s, engine.OpLayerNorm.Name(), args, &normPool)
}

// ExplainLayerNorm says which kernel LayerNorm would select and why.
func ExplainLayerNorm(rt *runtime.Runtime, y, x Matrix, weight, bias *runtime.Buffer, opt *LayerNormOptions) (Explanation, error) {
	args, _, err := layerNormArgs(rt, y, x, weight, bias, opt)
	return explainOf(rt, engine.OpLayerNorm.Name(), args, err)
}

// layerNormArgs validates a LayerNorm without launching it.
func layerNormArgs(rt *runtime.Runtime, y, x Matrix, weight, bias *runtime.Buffer, opt *LayerNormOptions) (*engine.NormArgs, *runtime.Stream, error) {
	o := DefaultLayerNormOptions()
	if opt != nil {
		o = *opt
	}
	ro := RMSNormOptions{Eps: o.Eps, Stream: o.Stream}
	return normPlan(rt, engine.OpLayerNorm.Name(), fallback.NormLayer, y, x, o.Residual, weight, bias, &ro)
}

func normPlan(rt *runtime.Runtime, op string, kind fallback.NormKind, y, x Matrix, res *Matrix, weight, bias *runtime.Buffer, opt *RMSNormOptions) (*engine.NormArgs, *runtime.Stream, error) {
	o := DefaultRMSNormOptions()
	if opt != nil {
		o = *opt
	}
	if err := checkRuntime(rt, o.Stream, op); err != nil {
		return nil, nil, err
	}
	if err := checkEps(op, o.Eps); err != nil {
		return nil, nil, err
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
	args, views := normPool.get()
	var resid Matrix // the validated residual view, when there is one
	*args = engine.NormArgs{Kind: kind, X: x.eng(), Y: y.eng(), Weight: ebuf(weight), Bias: ebuf(bias), Eps: o.Eps, Gemma: o.Gemma}
	if res != nil {
		r, err := checkRows(rt, op, "residual", *res, x.Cols)
		if err != nil {
			return nil, nil, err
		}
		if r.Rows != x.Rows {
			return nil, nil, tile.Errorf(ErrShape, op, "residual", "%d rows; x has %d", r.Rows, x.Rows)
		}
		if err := checkOut(op, "residual", r, operand{m: x, name: "x"}, operand{m: y, name: "y"}); err != nil {
			return nil, nil, err
		}
		resid, views[0] = r, r.eng()
		args.Residual = &views[0]
	}
	if err := checkOut(op, "y", y, operand{m: x, name: "x", inPlace: true}); err != nil {
		return nil, nil, err
	}
	if err := checkVec(rt, op, "weight", weight, x.Cols); err != nil {
		return nil, nil, err
	}
	if err := checkVec(rt, op, "bias", bias, x.Cols); err != nil {
		return nil, nil, err
	}
	outs := [2]Matrix{y}
	if args.Residual != nil {
		outs[1] = resid
	}
	if err := checkBufAlias(op, "weight", weight, outs[:]...); err != nil {
		return nil, nil, err
	}
	if err := checkBufAlias(op, "bias", bias, outs[:]...); err != nil {
		return nil, nil, err
	}
	return args, o.Stream, nil
}

// AddRMSNormPlan validates an AddRMSNorm call and selects its kernel once,
// without launching it: the returned Call runs it (Call.Run) and explains
// the choice (Call.Explain).
func AddRMSNormPlan(rt *runtime.Runtime, x, residual Matrix, weight *runtime.Buffer, opt *RMSNormOptions) (*Call, error) {
	args, s, err := addRMSNormArgs(rt, x, residual, weight, opt)
	return newCall(rt, s, engine.OpAddRMSNorm.Name(), args, err)
}

// LayerNormPlan validates a LayerNorm call and selects its kernel once,
// without launching it: the returned Call runs it (Call.Run) and explains
// the choice (Call.Explain).
func LayerNormPlan(rt *runtime.Runtime, y, x Matrix, weight, bias *runtime.Buffer, opt *LayerNormOptions) (*Call, error) {
	args, s, err := layerNormArgs(rt, y, x, weight, bias, opt)
	return newCall(rt, s, engine.OpLayerNorm.Name(), args, err)
}

// RMSNormPlan validates an RMSNorm call and selects its kernel once, without
// launching it: the returned Call runs it (Call.Run) and explains the choice
// (Call.Explain).
func RMSNormPlan(rt *runtime.Runtime, y, x Matrix, weight *runtime.Buffer, opt *RMSNormOptions) (*Call, error) {
	args, s, err := rmsNormArgs(rt, y, x, weight, opt)
	return newCall(rt, s, engine.OpRMSNorm.Name(), args, err)
}
