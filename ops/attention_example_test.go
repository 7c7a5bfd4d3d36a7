package ops_test

import (
	"context"
	"fmt"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// Two queries attend causally to three keys. With seqQ < seqKV the mask is
// aligned bottom-right: query 0 sits at position 1 and sees keys 0 and 1,
// query 1 sees all three. Zero queries weight the visible values equally.
// The same last row comes out of a decode step over a KV cache.
func ExampleAttention() {
	ctx := context.Background()
	rt, err := runtime.Open(runtime.Options{})
	if err != nil {
		panic(err)
	}
	defer rt.Close()
	buf := func(vals []float32, shape ...int) *runtime.Buffer {
		b, err := rt.Alloc(tile.F32, shape...)
		if err != nil {
			panic(err)
		}
		if err := b.WriteFloat32(ctx, vals); err != nil {
			panic(err)
		}
		return b
	}
	q := buf(make([]float32, 4), 1, 2, 1, 2) // [batch, seqQ, heads, headDim]
	k := buf([]float32{1, 0, 0, 1, 1, 1}, 1, 3, 1, 2)
	v := buf([]float32{1, 0, 0, 1, 3, 3}, 1, 3, 1, 2)
	o := buf(make([]float32, 4), 1, 2, 1, 2)
	err = ops.Attention(ctx, rt, ops.AttnTensorOf(o), ops.AttnTensorOf(q), ops.AttnTensorOf(k), ops.AttnTensorOf(v),
		&ops.AttentionOptions{Causal: true})
	if err != nil {
		panic(err)
	}
	out := make([]float32, 4)
	o.ReadFloat32(ctx, out)
	fmt.Printf("prefill: %.3f\n", out)

	cache, err := ops.NewKVCache(rt, ops.KVCacheOptions{DType: tile.BF16, Batch: 1, HeadsKV: 1, HeadDim: 2, PageSize: 16, NumPages: 4})
	if err != nil {
		panic(err)
	}
	defer cache.Close()
	if err := cache.SetBlockTable(0, []int{2}); err != nil {
		panic(err)
	}
	if err := cache.Append(ctx, ops.AttnTensorOf(k), ops.AttnTensorOf(v), nil); err != nil {
		panic(err)
	}
	q1 := buf(make([]float32, 2), 1, 1, 1, 2)
	o1 := buf(make([]float32, 2), 1, 1, 1, 2)
	if err := ops.AttentionKVCache(ctx, rt, ops.AttnTensorOf(o1), ops.AttnTensorOf(q1), cache, &ops.AttentionOptions{Causal: true}); err != nil {
		panic(err)
	}
	o1.ReadFloat32(ctx, out[:2])
	fmt.Printf("decode: %.3f (cache lengths %v)\n", out[:2], cache.Lens())
	// Output:
	// prefill: [0.500 0.500 1.333 1.333]
	// decode: [1.333 1.333] (cache lengths [3])
}
