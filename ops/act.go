package ops

import (
	"context"
	"math"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// Activation functions for Activate and GatedActivate.
const (
	SiLU     = fallback.FnSiLU     // x·σ(x)
	GELU     = fallback.FnGELU     // exact (erf) GELU
	GELUTanh = fallback.FnGELUTanh // tanh-approximated GELU
)

// Element-wise ops for Elementwise.
const (
	EltAdd   = fallback.EltAdd
	EltMul   = fallback.EltMul
	EltScale = fallback.EltScale
)

// ActivateOptions are the optional parts of Activate and
// GatedActivate.
type ActivateOptions struct {
	// Gate, for GatedActivate, is b as its own Rows × Cols view; nil
	// means x is the concatenation [a | b] of 2·Cols columns (the fused
	// gate/up matmul's output).
	Gate *Matrix
	// Stream makes the call asynchronous; nil runs it synchronously.
	Stream *runtime.Stream
}

// Activate writes y = f(x) element-wise (f SiLU, GELU or GELUTanh); y may
// be exactly x's view. The fast path computes f in float32 with an
// exponential within 2 ulp (and, for GELU, an erf within 1.5e-7), so it
// differs from the float64 reference by a few ulp of the result.
func Activate(ctx context.Context, rt *runtime.Runtime, y, x Matrix, f ActFunc, opt *ActivateOptions) error {
	args, s, err := activateArgs(rt, y, x, f, opt)
	if err != nil {
		return err
	}
	return runPooled(ctx, rt, s, engine.OpActivation.Name(), args, &actPool)
}

// ExplainActivate says which kernel Activate would select and why.
func ExplainActivate(rt *runtime.Runtime, y, x Matrix, f ActFunc, opt *ActivateOptions) (Explanation, error) {
	args, _, err := activateArgs(rt, y, x, f, opt)
	return explainOf(rt, engine.OpActivation.Name(), args, err)
}

// GatedActivate writes y = f(a)·b (SwiGLU for SiLU, GeGLU for GELU):
// a is x's first y.Cols columns and b the next y.Cols when opt.Gate is nil,
// else a is x and b is *opt.Gate. y may be exactly a's or b's view when
// they are separate; it may not overlap a concatenated x.
func GatedActivate(ctx context.Context, rt *runtime.Runtime, y, x Matrix, f ActFunc, opt *ActivateOptions) error {
	args, s, err := gatedActivateArgs(rt, y, x, f, opt)
	if err != nil {
		return err
	}
	return runPooled(ctx, rt, s, engine.OpActivation.Name(), args, &actPool)
}

// ExplainGatedActivate says which kernel GatedActivate would select.
func ExplainGatedActivate(rt *runtime.Runtime, y, x Matrix, f ActFunc, opt *ActivateOptions) (Explanation, error) {
	args, _, err := gatedActivateArgs(rt, y, x, f, opt)
	return explainOf(rt, engine.OpActivation.Name(), args, err)
}

func actCommon(rt *runtime.Runtime, f ActFunc, s *runtime.Stream) error {
	if err := checkRuntime(rt, s, engine.OpActivation.Name()); err != nil {
		return err
	}
	if !f.Valid() {
		return tile.Errorf(ErrArgument, engine.OpActivation.Name(), "f", "unknown activation %d", f)
	}
	return nil
}

// activateArgs validates an Activate without launching it.
func activateArgs(rt *runtime.Runtime, y, x Matrix, f ActFunc, opt *ActivateOptions) (*engine.ActArgs, *runtime.Stream, error) {
	op := engine.OpActivation.Name()
	var o ActivateOptions
	if opt != nil {
		o = *opt
	}
	if err := actCommon(rt, f, o.Stream); err != nil {
		return nil, nil, err
	}
	if o.Gate != nil {
		return nil, nil, tile.Errorf(ErrArgument, op, "Gate", "a gate is for GatedActivate")
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
	args, _ := actPool.get()
	*args = engine.ActArgs{Func: f, A: x.eng(), Y: y.eng()}
	return args, o.Stream, nil
}

// gatedActivateArgs validates a GatedActivate without launching it.
func gatedActivateArgs(rt *runtime.Runtime, y, x Matrix, f ActFunc, opt *ActivateOptions) (*engine.ActArgs, *runtime.Stream, error) {
	op := engine.OpActivation.Name()
	var o ActivateOptions
	if opt != nil {
		o = *opt
	}
	if err := actCommon(rt, f, o.Stream); err != nil {
		return nil, nil, err
	}
	var err error
	if y, err = checkRows(rt, op, "y", y, 0); err != nil {
		return nil, nil, err
	}
	n := y.Cols
	var a, b Matrix
	if o.Gate == nil {
		if x, err = checkRows(rt, op, "x", x, 0); err != nil {
			return nil, nil, err
		}
		if x.Cols != 2*n {
			return nil, nil, tile.Errorf(ErrShape, op, "x", "%d columns; a concatenated [a|b] for %d outputs has %d", x.Cols, n, 2*n)
		}
		a = Matrix{Buf: x.Buf, Offset: x.Offset, Rows: x.Rows, Cols: n, LD: x.LD}
		b = Matrix{Buf: x.Buf, Offset: x.Offset + n, Rows: x.Rows, Cols: n, LD: x.LD}
		if err := checkOut(op, "y", y, operand{m: x, name: "x"}); err != nil {
			return nil, nil, err
		}
	} else {
		if a, err = checkRows(rt, op, "x", x, n); err != nil {
			return nil, nil, err
		}
		if b, err = checkRows(rt, op, "Gate", *o.Gate, n); err != nil {
			return nil, nil, err
		}
		if b.Rows != a.Rows {
			return nil, nil, tile.Errorf(ErrShape, op, "Gate", "%d rows; x has %d", b.Rows, a.Rows)
		}
		if err := checkOut(op, "y", y, operand{m: a, name: "x", inPlace: true}, operand{m: b, name: "Gate", inPlace: true}); err != nil {
			return nil, nil, err
		}
	}
	if y.Rows != a.Rows {
		return nil, nil, tile.Errorf(ErrShape, op, "y", "%d rows; x has %d", y.Rows, a.Rows)
	}
	args, views := actPool.get()
	views[0] = b.eng()
	*args = engine.ActArgs{Func: f, A: a.eng(), B: &views[0], Y: y.eng()}
	return args, o.Stream, nil
}

// ElementwiseOptions are the optional parts of Elementwise.
type ElementwiseOptions struct {
	// Stream makes the call asynchronous; nil runs it synchronously.
	Stream *runtime.Stream
}

// Elementwise writes y = x + z (EltAdd), x·z (EltMul) or alpha·x (EltScale,
// z unused: pass Matrix{}) with one float32 operation per element, rounded
// to y's type. z is Rows × Cols, or one row (a bias or scale vector)
// broadcast to every row. y may be exactly x's or z's view. alpha must be
// finite.
func Elementwise(ctx context.Context, rt *runtime.Runtime, op EltOp, y, x, z Matrix, alpha float32, opt *ElementwiseOptions) error {
	args, s, err := elementwiseArgs(rt, op, y, x, z, alpha, opt)
	if err != nil {
		return err
	}
	return runPooled(ctx, rt, s, engine.OpElementwise.Name(), args, &eltPool)
}

// ExplainElementwise says which kernel Elementwise would select.
func ExplainElementwise(rt *runtime.Runtime, op EltOp, y, x, z Matrix, alpha float32, opt *ElementwiseOptions) (Explanation, error) {
	args, _, err := elementwiseArgs(rt, op, y, x, z, alpha, opt)
	return explainOf(rt, engine.OpElementwise.Name(), args, err)
}

// elementwiseArgs validates an Elementwise without launching it.
func elementwiseArgs(rt *runtime.Runtime, eop EltOp, y, x, z Matrix, alpha float32, opt *ElementwiseOptions) (*engine.EltArgs, *runtime.Stream, error) {
	op := engine.OpElementwise.Name()
	var o ElementwiseOptions
	if opt != nil {
		o = *opt
	}
	if err := checkRuntime(rt, o.Stream, op); err != nil {
		return nil, nil, err
	}
	if !eop.Valid() {
		return nil, nil, tile.Errorf(ErrArgument, op, "op", "unknown element-wise op %d", eop)
	}
	if math.IsNaN(float64(alpha)) || math.IsInf(float64(alpha), 0) {
		return nil, nil, tile.Errorf(ErrArgument, op, "alpha", "alpha %v; it must be finite", alpha)
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
	var insA [2]operand
	ins := append(insA[:0], operand{m: x, name: "x", inPlace: true})
	if eop == EltScale {
		if z.Buf != nil {
			return nil, nil, tile.Errorf(ErrArgument, op, "z", "scale takes no z")
		}
	} else {
		if z, err = checkRows(rt, op, "z", z, x.Cols); err != nil {
			return nil, nil, err
		}
		if z.Rows != x.Rows && z.Rows != 1 {
			return nil, nil, tile.Errorf(ErrShape, op, "z", "%d rows; want x's %d or 1 (broadcast)", z.Rows, x.Rows)
		}
		// A broadcast z is read once up front, but in place over it
		// would change it while later rows read it: only a full z may be y.
		ins = append(ins, operand{m: z, name: "z", inPlace: z.Rows == x.Rows})
	}
	if err := checkOut(op, "y", y, ins...); err != nil {
		return nil, nil, err
	}
	args, views := eltPool.get()
	*args = engine.EltArgs{Op: eop, X: x.eng(), Y: y.eng(), Alpha: alpha}
	if eop != EltScale {
		views[0] = z.eng()
		args.Z = &views[0]
	}
	return args, o.Stream, nil
}

// ActivatePlan validates an Activate call and selects its kernel once,
// without launching it: the returned Call runs it (Call.Run) and explains
// the choice (Call.Explain).
func ActivatePlan(rt *runtime.Runtime, y, x Matrix, f ActFunc, opt *ActivateOptions) (*Call, error) {
	args, s, err := activateArgs(rt, y, x, f, opt)
	return newCall(rt, s, engine.OpActivation.Name(), args, err)
}

// ElementwisePlan validates an Elementwise call and selects its kernel once,
// without launching it: the returned Call runs it (Call.Run) and explains
// the choice (Call.Explain).
func ElementwisePlan(rt *runtime.Runtime, eop EltOp, y, x, z Matrix, alpha float32, opt *ElementwiseOptions) (*Call, error) {
	args, s, err := elementwiseArgs(rt, eop, y, x, z, alpha, opt)
	return newCall(rt, s, engine.OpElementwise.Name(), args, err)
}

// GatedActivatePlan validates a GatedActivate call and selects its kernel
// once, without launching it: the returned Call runs it (Call.Run) and
// explains the choice (Call.Explain).
func GatedActivatePlan(rt *runtime.Runtime, y, x Matrix, f ActFunc, opt *ActivateOptions) (*Call, error) {
	args, s, err := gatedActivateArgs(rt, y, x, f, opt)
	return newCall(rt, s, engine.OpActivation.Name(), args, err)
}
