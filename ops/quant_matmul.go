package ops

import (
	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// matmulInput are the operand types MatMul accepts for A and B.
var matmulInput = map[tile.DType]bool{tile.F32: true, tile.F16: true, tile.BF16: true, tile.E4M3: true, tile.E5M2: true}

// checkMatMulScales validates MatMulOptions.ScaleA/ScaleB and records them
// in args.
func checkMatMulScales(rt *runtime.Runtime, o *MatMulOptions, args *engine.MatMulArgs) error {
	for _, s := range []struct {
		name string
		buf  *runtime.Buffer
		op   engine.Matrix
		n    int
		dim  string
		dst  **engine.Buffer
	}{
		{"ScaleA", o.ScaleA, args.A, args.M, "M (rows of op(A))", &args.ScaleA},
		{"ScaleB", o.ScaleB, args.B, args.N, "N (columns of op(B))", &args.ScaleB},
	} {
		if s.buf == nil {
			continue
		}
		if err := checkBuf(s.buf, rt, opMatMul, s.name); err != nil {
			return err
		}
		if !tile.IsFloat8(s.op.Buf.DType()) {
			return tile.Errorf(ErrArgument, opMatMul, s.name, "scales apply to float8 operands; this operand is %v", s.op.Buf.DType())
		}
		if s.buf.DType() != tile.F32 {
			return tile.Errorf(ErrDType, opMatMul, s.name, "element type %v; scales are f32", s.buf.DType())
		}
		if l := s.buf.Len(); l != 1 && l != s.n {
			return tile.Errorf(ErrShape, opMatMul, s.name, "%d scales; want 1 (per tensor) or %d = %s", l, s.n, s.dim)
		}
		if ebuf(s.buf) == args.D.Buf {
			return tile.Errorf(ErrAlias, opMatMul, s.name, "scales are the output buffer")
		}
		*s.dst = ebuf(s.buf)
	}
	return nil
}
