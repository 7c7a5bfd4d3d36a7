// Command quickstart: D = GELU(A·B) in bf16 on the best backend here, checked.
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
)

func main() {
	ctx := context.Background()
	rt, err := runtime.Open(runtime.Options{}) // a usable GPU, else the CPU
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()

	const m, k, n = 512, 1024, 256
	av, bv := make([]float32, m*k), make([]float32, k*n)
	for _, v := range [][]float32{av, bv} {
		for i := range v {
			v[i] = float32(rand.IntN(17)-8) / 8 // exact in bf16
		}
	}
	a, errA := rt.FromFloat32(ctx, runtime.BF16, av, m, k)
	b, errB := rt.FromFloat32(ctx, runtime.BF16, bv, k, n)
	d, errD := rt.Alloc(runtime.F32, m, n)
	if err := errors.Join(errA, errB, errD); err != nil {
		log.Fatal(err)
	}
	opt := &ops.MatMulOptions{Act: ops.ActGELU} // errors.Is(err, ops.ErrShape) …
	if err := ops.MatMul(ctx, rt, ops.MatrixOf(d), ops.MatrixOf(a), ops.MatrixOf(b), opt); err != nil {
		log.Fatal(err)
	}
	out, err := d.Float32s(ctx)
	if err != nil {
		log.Fatal(err)
	}
	worst := 0.0 // the last row against GELU of exact dot products
	for i, j := m-1, 0; j < n; j++ {
		dot := 0.0
		for x := range k {
			dot += float64(av[i*k+x]) * float64(bv[x*n+j])
		}
		want := 0.5 * dot * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(dot+0.044715*dot*dot*dot)))
		worst = max(worst, math.Abs(float64(out[i*n+j])-want)/(1+math.Abs(want)))
	}
	if worst > 1e-3 {
		log.Fatalf("D differs from the reference by %.1e", worst)
	}
	fmt.Printf("%s on %s: D = GELU(A·B) within %.1e of the reference\n", rt.Backend(), rt.Device().Name, worst)
}
