package ops_test

import (
	"context"
	"fmt"
	"log"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// A decoder layer's residual step and the end of decoding: AddRMSNorm
// updates the residual stream and normalises it in place; Sample draws
// the next token from the logits.
func ExampleAddRMSNorm() {
	ctx := context.Background()
	rt, err := runtime.Open(runtime.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	x, _ := rt.Alloc(tile.BF16, 2, 4)       // the attention output
	residual, _ := rt.Alloc(tile.F32, 2, 4) // the residual stream
	w, _ := rt.Alloc(tile.F32, 4)
	x.WriteFloat32(ctx, []float32{1, 2, 3, 4, 0, 0, 0, 1})
	residual.WriteFloat32(ctx, []float32{1, 0, -1, 0, 2, 2, 2, 1})
	w.WriteFloat32(ctx, []float32{1, 1, 1, 1})
	if err := ops.AddRMSNorm(ctx, rt, ops.RowsOf(x), ops.RowsOf(residual), w, nil); err != nil {
		log.Fatal(err)
	}
	r, y := make([]float32, 8), make([]float32, 8)
	residual.ReadFloat32(ctx, r)
	x.ReadFloat32(ctx, y)
	fmt.Println("residual:", r)
	fmt.Printf("x: %.3f\n", y) // 2/√7 = 0.756 rounded to bf16
	// Output:
	// residual: [2 2 2 4 2 2 2 2]
	// x: [0.758 0.758 0.758 1.516 1.000 1.000 1.000 1.000]
}

func ExampleSample() {
	ctx := context.Background()
	rt, err := runtime.Open(runtime.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	logits, _ := rt.Alloc(tile.F32, 2, 5)
	logits.WriteFloat32(ctx, []float32{0.5, 3, 3, -1, 2, 1, 0, 9, 0, 1})
	tokens, _ := rt.Alloc(tile.S32, 2)
	get := func() []int32 {
		v := make([]int32, 2)
		runtime.ReadRaw(ctx, tokens, v)
		return v
	}
	// Greedy: the argmax, the lower index on ties.
	if err := ops.Sample(ctx, rt, tokens, ops.RowsOf(logits), &ops.SampleOptions{Temperature: 0, TopP: 1}); err != nil {
		log.Fatal(err)
	}
	fmt.Println("greedy:", get())
	// Top-k 2: only tokens 1 and 2 of row 0 and tokens 2 and 0 or 4 of row
	// 1 can come out; the seed fixes which.
	opt := ops.DefaultSampleOptions()
	opt.TopK, opt.Seed = 2, 42
	if err := ops.Sample(ctx, rt, tokens, ops.RowsOf(logits), &opt); err != nil {
		log.Fatal(err)
	}
	t := get()
	fmt.Println("top-k row 0 in {1, 2}:", t[0] == 1 || t[0] == 2)
	// Output:
	// greedy: [1 2]
	// top-k row 0 in {1, 2}: true
}
