package engine

import (
	"github.com/tcrt-go/tcrt/tile"
)

// argRule is what CheckArgs knows about one built-in op: its argument
// type, and the op's own rules (shape fields positive, views agreeing),
// checked after the operands' buffers.
type argRule struct {
	typed func(op string, args any) (Args, error)
	check func(op string, args Args) error
}

// rule is the argRule of argument type *A, with check (nil: none).
func rule[A any, P interface {
	*A
	Args
}](check func(*A) error) argRule {
	return argRule{
		typed: func(op string, args any) (Args, error) {
			a, err := argsOf[A](op, args)
			if err != nil {
				return nil, err
			}
			return P(a), nil
		},
		check: func(op string, args Args) error {
			a, err := argsOf[A](op, args)
			if err != nil || check == nil {
				return err
			}
			return check(a)
		},
	}
}

// field is a named int field of an argument struct.
type field struct {
	name string
	n    int
}

// checkPositive returns an error wrapping ErrShape naming the first field
// that is not positive.
func checkPositive(op string, fs ...field) error {
	for _, f := range fs {
		if f.n <= 0 {
			return tile.Errorf(ErrShape, op, f.name, "%d; must be positive", f.n)
		}
	}
	return nil
}

// argRules describes the argument structs of the built-in ops. The
// arguments of other ops must list their operands too (Args).
var argRules = map[string]argRule{
	OpMatMul.name: rule(checkMatMulArgs),
	OpAttention.name: rule(func(a *AttentionArgs) error { // SeqQ is 0 with CuSeqQ
		return checkPositive(OpAttention.name, field{"Batch", a.Batch}, field{"HeadsQ", a.HeadsQ}, field{"HeadsKV", a.HeadsKV}, field{"HeadDim", a.HeadDim})
	}),
	OpKVAppend.name: rule(func(a *KVAppendArgs) error {
		return checkPositive(OpKVAppend.name, field{"Batch", a.Batch}, field{"HeadsKV", a.HeadsKV}, field{"HeadDim", a.HeadDim})
	}),
	OpGather.name:    rule[GatherArgs](nil),
	OpScatter.name:   rule[ScatterArgs](nil),
	OpGatherCAS.name: rule[GatherCASArgs](nil),
	OpQuantize.name: rule(func(a *QuantizeArgs) error {
		return checkPositive(OpQuantize.name, field{"Rows", a.Rows}, field{"Cols", a.Cols})
	}),
	OpDequantize.name: rule(func(a *DequantizeArgs) error {
		return checkPositive(OpDequantize.name, field{"Rows", a.Rows}, field{"Cols", a.Cols})
	}),
	OpAmax.name: rule(func(a *AmaxArgs) error {
		return checkPositive(OpAmax.name, field{"Rows", a.Rows}, field{"Cols", a.Cols})
	}),
}

// CheckArgs checks the argument struct of a call before a kernel sees it,
// in one walk over its operands (Args.Operands): for a built-in op the
// right type and not nil; the required buffers set, every buffer open and
// r's; the op's shape rules (for matmul every view within its buffer);
// every operand's span within its buffer; and no output overlapping
// another operand (CheckAlias's rule). It returns an error wrapping
// ErrArgument (or ErrClosed, ErrShape, ErrBounds, ErrAlias) naming the
// field. This is the only check of the operands: the ops package checks
// each op's own rules and leaves these to the runtime (Run, Prepare,
// Select and LaunchKernel call it).
func (r *Runtime) CheckArgs(op string, args any) error {
	if err := r.checkOpen(op); err != nil {
		return err
	}
	rule, builtin := argRules[op]
	var a Args
	if builtin {
		var err error
		if a, err = rule.typed(op, args); err != nil {
			return err
		}
	} else if a, builtin = args.(Args); !builtin {
		if len(kernelsOf(op)) == 0 {
			return nil // no kernel: selection reports the op unsupported
		}
		// the launch holds and stages the buffers an Args lists, and no others
		return tile.Errorf(ErrArgument, op, "args", "%T does not list its operands (runtime.Args)", args)
	}
	ops := a.Operands()
	if err := checkBuffers(r, op, ops.All()); err != nil {
		return err
	}
	if rule.check != nil {
		if err := rule.check(op, a); err != nil {
			return err
		}
	}
	if err := checkSpans(op, ops.All()); err != nil {
		return err
	}
	return checkAliasOperands(op, ops.All())
}

// checkMatMulArgs checks a matmul's shape fields and views: shapes
// agreeing with M, N, K, and every view (Batch matrices) within its buffer.
func checkMatMulArgs(a *MatMulArgs) error {
	if err := checkPositive(OpMatMul.name, field{"M", a.M}, field{"N", a.N}, field{"K", a.K}, field{"Batch", a.Batch}); err != nil {
		return err
	}
	views := [...]struct {
		name       string
		m          Matrix
		rows, cols int // of op(m)
	}{{"A", a.A, a.M, a.K}, {"B", a.B, a.K, a.N}, {"D", a.D, a.M, a.N}, {"C", a.C, a.M, a.N}}
	for _, v := range views {
		if v.m.Buf == nil { // only C may be nil; CheckArgs required the others
			continue
		}
		if v.m.OpRows() != v.rows || v.m.OpCols() != v.cols {
			return tile.Errorf(ErrShape, OpMatMul.name, v.name, "op(%s) is %dx%d; want %dx%d", v.name, v.m.OpRows(), v.m.OpCols(), v.rows, v.cols)
		}
		if err := checkMatrixSpan(v.name, v.m, a.Batch); err != nil {
			return err
		}
	}
	if a.Beta != 0 && a.C.Buf == nil {
		return tile.Errorf(ErrArgument, OpMatMul.name, "C", "Beta is %v but C is nil", a.Beta)
	}
	if a.Bias != nil && a.Bias.Len() < a.N {
		return tile.Errorf(ErrShape, OpMatMul.name, "Bias", "%d values; want N = %d", a.Bias.Len(), a.N)
	}
	return nil
}

// checkMatrixSpan checks that batch matrices of m lie within m.Buf.
func checkMatrixSpan(name string, m Matrix, batch int) error {
	if m.LD < m.Cols || m.Offset < 0 || m.BatchStride < 0 {
		return tile.Errorf(ErrShape, OpMatMul.name, name, "LD %d (row %d), offset %d, batch stride %d: want LD ≥ the row, offset and stride ≥ 0",
			m.LD, m.Cols, m.Offset, m.BatchStride)
	}
	last, ok := tile.MulAddSize(batch-1, m.BatchStride, m.Offset)
	if ok {
		last, ok = tile.MulAddSize(m.Rows-1, m.LD, last)
	}
	if ok {
		last, ok = tile.AddSize(last, m.Cols)
	}
	if !ok || last > m.Buf.Len() {
		return tile.Errorf(ErrBounds, OpMatMul.name, name, "%d matrices %dx%d (LD %d, stride %d, offset %d) reach past the %d elements of the buffer",
			batch, m.Rows, m.Cols, m.LD, m.BatchStride, m.Offset, m.Buf.Len())
	}
	return nil
}
