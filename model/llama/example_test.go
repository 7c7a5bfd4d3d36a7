package llama_test

import (
	"context"
	"fmt"
	"os"

	"github.com/tcrt-go/tcrt/model/llama"
	"github.com/tcrt-go/tcrt/model/llama/llamatest"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// Load a model directory into a runtime, keeping the weights in bf16.
func ExampleLoad() {
	dir, _ := os.MkdirTemp("", "llama")
	defer os.RemoveAll(dir)
	// A random 2-layer checkpoint stands in for a downloaded one.
	if err := llamatest.WriteRandomCheckpoint(dir, llamatest.Tiny(), tile.F32, 1, &llamatest.Options{Shards: 2}); err != nil {
		fmt.Println(err)
		return
	}

	rt, err := runtime.Open(runtime.Options{Backend: runtime.BackendCPU})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()
	m, err := llama.Load(context.Background(), rt, dir, &llama.LoadOptions{DType: tile.BF16})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	c := m.Config()
	fmt.Printf("%s: %d layers, %d heads (%d KV) of %d, %d parameters\n", c.ModelType, c.NumLayers, c.NumHeads, c.NumKVHeads, c.HeadDim, c.NumParams())
	fmt.Println("o_proj of layer 1:", m.Weights().Layers[1].O.DType(), m.Weights().Layers[1].O.Shape())
	f := m.FusedLayers()[1]
	fmt.Println("q|k|v and gate|up of layer 1:", f.QKV.Shape(), f.GateUp.Shape())
	// Output:
	// llama: 2 layers, 4 heads (2 KV) of 16, 74688 parameters
	// o_proj of layer 1: bf16 [64 64]
	// q|k|v and gate|up of layer 1: [128 64] [192 64]
}

// Load a model and generate from a prompt of token ids: the lines a
// service writes (here on a random checkpoint, so the ids mean nothing).
func ExampleEngine() {
	dir, _ := os.MkdirTemp("", "llama")
	defer os.RemoveAll(dir)
	if err := llamatest.WriteRandomCheckpoint(dir, llamatest.Tiny(), tile.BF16, 1, nil); err != nil {
		fmt.Println(err)
		return
	}

	ctx := context.Background()
	rt, err := runtime.Open(runtime.Options{}) // TCRT_BACKEND picks the backend
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()
	m, err := llama.Load(ctx, rt, dir, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	e, err := llama.NewEngine(m, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	tokens, err := e.Generate(ctx, []int32{1, 15, 42}, &llama.GenerateOptions{MaxNewTokens: 8})
	fmt.Println(tokens, err)
	// Output:
	// [53 30 30 30 30 30 30 30] <nil>
}
