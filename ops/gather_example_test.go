package ops_test

import (
	"context"
	"fmt"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// Gather three rows of a 4×3 table into a tile whose physical region is
// 4×4: the row past the valid region and the fourth column get the pad
// value, and index −1 wraps to the last row.
func ExampleMGather() {
	ctx := context.Background()
	rt, _ := runtime.Open(runtime.Options{})
	defer rt.Close()

	table, _ := rt.Alloc(tile.S32, 4, 3)
	runtime.WriteRaw(ctx, table, []int32{0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32})
	idxBuf, _ := rt.Alloc(tile.S64, 3)
	runtime.WriteRaw(ctx, idxBuf, []int64{2, 0, -1})
	dstBuf, _ := rt.Alloc(tile.S32, 4, 4)
	dst := ops.TileOf(dstBuf, tile.Tile{DType: tile.S32, ValidRows: 3, ValidCols: 3, Rows: 4, Cols: 4, Pad: tile.PadValue(99)})

	err := ops.MGather(ctx, rt, dst, table, ops.DenseTile(idxBuf), &ops.GatherOptions{OOB: ops.OOBWrap})
	if err != nil {
		fmt.Println(err)
		return
	}
	out := make([]int32, 16)
	runtime.ReadRaw(ctx, dstBuf, out)
	for r := 0; r < 4; r++ {
		fmt.Println(out[4*r : 4*r+4])
	}
	// Output:
	// [20 21 22 99]
	// [0 1 2 99]
	// [30 31 32 99]
	// [99 99 99 99]
}

// Compare-and-swap two counters at byte displacements from a base; the
// destination receives what each lane observed.
func ExampleMGatherCAS() {
	ctx := context.Background()
	rt, _ := runtime.Open(runtime.Options{})
	defer rt.Close()

	mem, _ := rt.Alloc(tile.U32, 4)
	runtime.WriteRaw(ctx, mem, []uint32{7, 8, 9, 10})
	mk := func(d tile.DType, vals any) ops.Tile {
		b, _ := rt.Alloc(d, 1, 2)
		switch v := vals.(type) {
		case []int32:
			runtime.WriteRaw(ctx, b, v)
		case []uint32:
			runtime.WriteRaw(ctx, b, v)
		}
		return ops.DenseTile(b)
	}
	idx := mk(tile.S32, []int32{-8, 4}) // base 8: elements 0 and 3
	expected := mk(tile.U32, []uint32{7, 0})
	replacement := mk(tile.U32, []uint32{70, 100})
	dst := mk(tile.U32, []uint32{0, 0})

	opt := ops.DefaultGatherCASOptions()
	opt.Base = 8
	if err := ops.MGatherCAS(ctx, rt, dst, mem, idx, expected, replacement, &opt); err != nil {
		fmt.Println(err)
		return
	}
	observed, memory := make([]uint32, 2), make([]uint32, 4)
	runtime.ReadRaw(ctx, dst.Buf, observed)
	runtime.ReadRaw(ctx, mem, memory)
	fmt.Println("observed", observed, "memory", memory)
	// Output:
	// observed [7 10] memory [70 8 9 10]
}
