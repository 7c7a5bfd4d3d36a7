package bench

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// TestHostileSetups: every New…Setup refuses a nil runtime and extents
// that are zero, negative, huge or overflowing with a typed error, before
// allocating (2^40 × 2^40 would have crashed the process out of memory).
func TestHostileSetups(t *testing.T) {
	ctx := context.Background()
	rt, err := runtime.Open(runtime.Options{Backend: runtime.BackendCPU})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	typed := func(err error) bool {
		return errors.Is(err, tile.ErrShape) || errors.Is(err, tile.ErrArgument)
	}
	for _, n := range []int{math.MinInt, -1, 0, 1 << 40, math.MaxInt} {
		for _, r := range []*runtime.Runtime{nil, rt} {
			calls := map[string]func() error{
				"attention": func() error {
					_, err := NewAttentionSetup(ctx, r, AttentionProblem{DType: tile.BF16, Batch: 1, HeadsQ: n, HeadsKV: 1, Seq: n, Dim: 64}, 1)
					return err
				},
				"attention heads": func() error {
					_, err := NewAttentionSetup(ctx, r, AttentionProblem{DType: tile.BF16, Batch: 1, HeadsQ: 8, HeadsKV: 3, Seq: 4, Dim: 64}, 1)
					return err
				},
				"gather": func() error {
					_, err := NewGatherSetup(ctx, r, GatherProblem{DType: tile.F32, TableRows: n, Cols: n, Lanes: 4}, 1)
					return err
				},
				"gather hot": func() error {
					_, err := NewGatherSetup(ctx, r, GatherProblem{DType: tile.F32, TableRows: 4, Cols: 4, Lanes: 4, Hot: n}, 1)
					return err
				},
				"gather_cas": func() error {
					_, err := NewGatherCASSetup(ctx, r, GatherCASProblem{MemBytes: n, Lanes: n}, 1)
					return err
				},
				"light": func() error {
					_, err := NewLightSetup(ctx, r, LightProblem{Op: "rmsnorm", DType: tile.F32, Rows: n, Cols: n}, 1)
					return err
				},
				"matmul": func() error {
					_, err := NewMatMulSetup(ctx, r, MatMulProblem{DType: tile.F32, M: n, N: n, K: n}, 1)
					return err
				},
				"quant": func() error {
					_, err := NewQuantSetup(ctx, r, QuantProblem{Format: tile.E4M3, Rows: n, Cols: n}, 1)
					return err
				},
				"scatter": func() error {
					_, err := NewScatterSetup(ctx, r, GatherProblem{DType: tile.F32, TableRows: n, Cols: 4, Lanes: n}, 1)
					return err
				},
				"scatter elements": func() error {
					_, err := NewScatterElementsSetup(ctx, r, GatherProblem{DType: tile.F32, TableRows: 4, Cols: n, Lanes: n}, 1)
					return err
				},
			}
			for name, call := range calls {
				if n == 0 && name == "gather hot" && r != nil {
					continue // Hot 0: the whole table, valid
				}
				if err := call(); !typed(err) {
					t.Errorf("%s, extent %d, runtime %v: %v", name, n, r != nil, err)
				}
			}
		}
	}
}
