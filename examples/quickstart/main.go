// Command quickstart is the README's "In a program" example: D = GELU(A·B)
// with bf16 inputs and an f32 output, checked against a plain dot product.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"math"
	"math/rand/v2"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

func main() {
	ctx := context.Background()
	rt, err := runtime.Open(runtime.Options{}) // CUDA if built in and usable, else CPU
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()

	const m, k, n = 512, 1024, 256
	aValues, bValues := make([]float32, m*k), make([]float32, k*n)
	for i := range aValues {
		aValues[i] = rand.Float32() - 0.5
	}
	for i := range bValues {
		bValues[i] = rand.Float32() - 0.5
	}
	a, err := rt.Alloc(tile.BF16, m, k)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	b, err := rt.Alloc(tile.BF16, k, n)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	d, err := rt.Alloc(tile.F32, m, n)
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	if err := a.WriteFloat32(ctx, aValues); err != nil { // rounded to nearest even
		log.Fatal(err)
	}
	if err := b.WriteFloat32(ctx, bValues); err != nil {
		log.Fatal(err)
	}

	opt := ops.DefaultMatMulOptions() // Alpha 1
	opt.Act = ops.ActGELU
	err = ops.MatMul(ctx, rt, ops.MatrixOf(d), ops.MatrixOf(a), ops.MatrixOf(b), &opt)
	if errors.Is(err, ops.ErrShape) || errors.Is(err, ops.ErrDType) {
		log.Fatal("bad arguments: ", err) // the error names the argument and the rule
	} else if err != nil {
		log.Fatal(err)
	}
	out := make([]float32, m*n)
	if err := d.ReadFloat32(ctx, out); err != nil {
		log.Fatal(err)
	}

	// Check D[i][j] against GELU of a dot product of the bf16-rounded inputs.
	i, j := m-1, n/3
	var dot float64
	for x := range k {
		ax := tile.ToFloat32(tile.BF16, tile.FromFloat32(tile.BF16, aValues[i*k+x]))
		bx := tile.ToFloat32(tile.BF16, tile.FromFloat32(tile.BF16, bValues[x*n+j]))
		dot += float64(ax) * float64(bx)
	}
	want := 0.5 * dot * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(dot+0.044715*dot*dot*dot)))
	got := float64(out[i*n+j])
	fmt.Printf("%s on %s: D[%d][%d] = %.6f, reference %.6f\n", rt.Backend(), rt.Device().Name, i, j, got, want)
	if math.Abs(got-want) > 1e-3*(1+math.Abs(want)) {
		log.Fatalf("D[%d][%d] = %v differs from the reference %v", i, j, got, want)
	}
}
