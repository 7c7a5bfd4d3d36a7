package ops_test

import (
	"context"
	"fmt"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// ExampleMatMul multiplies a 2×3 by a 3×2 matrix, adds a bias and applies
// ReLU.
func ExampleMatMul() {
	ctx := context.Background()
	rt, err := runtime.Open(runtime.Options{})
	if err != nil {
		panic(err)
	}
	defer rt.Close()

	a, _ := rt.Alloc(tile.F32, 2, 3)
	b, _ := rt.Alloc(tile.BF16, 3, 2)
	d, _ := rt.Alloc(tile.F32, 2, 2)
	bias, _ := rt.Alloc(tile.F32, 2)
	a.WriteFloat32(ctx, []float32{1, 2, 3, 4, 5, 6})
	b.WriteFloat32(ctx, []float32{1, -1, 0, 1, 2, -1})
	bias.WriteFloat32(ctx, []float32{0.5, 0})

	opt := ops.DefaultMatMulOptions()
	opt.Bias = bias
	opt.Act = ops.ActReLU
	if err := ops.MatMul(ctx, rt, ops.MatrixOf(d), ops.MatrixOf(a), ops.MatrixOf(b), &opt); err != nil {
		panic(err)
	}
	out := make([]float32, 4)
	d.ReadFloat32(ctx, out)
	fmt.Println(out)
	// Output: [7.5 0 16.5 0]
}

// ExampleExplainMatMul shows how the runtime chose a kernel.
func ExampleExplainMatMul() {
	rt, _ := runtime.Open(runtime.Options{})
	defer rt.Close()
	a, _ := rt.Alloc(tile.F32, 4, 4)
	d, _ := rt.Alloc(tile.F32, 4, 4)
	e, err := ops.ExplainMatMul(rt, ops.MatrixOf(d), ops.MatrixOf(a), ops.MatrixOf(a), nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(e.Chosen().Op, e.Chosen().Doc != "")
	// Output: matmul true
}
