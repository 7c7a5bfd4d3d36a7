package llama_test

import (
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tcrt-go/tcrt/model/llama"
	"github.com/tcrt-go/tcrt/model/llama/llamatest"
	"github.com/tcrt-go/tcrt/tile"
)

// TestHostileTensorAndConfig: a Tensor built by hand whose Shape does not
// match its Data, and a Config that does not Validate, are refused or
// answered with nothing instead of panicking, exhausting memory or
// running for minutes.
func TestHostileTensorAndConfig(t *testing.T) {
	for _, tt := range []llama.Tensor{
		{Name: "huge", DType: tile.F32, Shape: []int{1 << 40, 1 << 20}},
		{Name: "overflow", DType: tile.BF16, Shape: []int{math.MaxInt, 3}, Data: make([]byte, 6)},
		{Name: "short", DType: tile.F16, Shape: []int{4, 4}, Data: make([]byte, 30)},
		{Name: "long", DType: tile.F32, Shape: []int{2}, Data: make([]byte, 12)},
		{Name: "negative", DType: tile.F32, Shape: []int{-2, -2}, Data: make([]byte, 16)},
	} {
		if v, err := tt.Float32s(); !errors.Is(err, tile.ErrShape) || v != nil {
			t.Errorf("%s: Float32s() = %d values, %v; want ErrShape", tt.Name, len(v), err)
		}
	}
	good := llama.Tensor{Name: "ok", DType: tile.F16, Shape: []int{2}, Data: []byte{0, 0x3c, 0, 0xc0}}
	if v, err := good.Float32s(); err != nil || len(v) != 2 || v[0] != 1 || v[1] != -2 {
		t.Errorf("Float32s of f16 [1 -2] = %v, %v", v, err)
	}
	for _, hd := range []int{-2, 0, 1 << 40, math.MaxInt, math.MinInt} {
		start := time.Now()
		if f := (llama.Config{HeadDim: hd, RopeTheta: 10000}).RopeInvFreq(); f != nil {
			t.Errorf("RopeInvFreq with head_dim %d: %d frequencies; want nil", hd, len(f))
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("RopeInvFreq with head_dim %d took %v", hd, d)
		}
	}
}

// TestHostileLayerCount: a config.json with 2^31 layers of tiny weights
// (every weight's bytes fit an int) is refused by ParseConfig, before
// OpenCheckpoint or Load allocates a record per layer (it was a fatal
// out-of-memory error of the process).
func TestHostileLayerCount(t *testing.T) {
	cfg := llamatest.Tiny()
	dir := t.TempDir()
	if err := llamatest.WriteRandomCheckpoint(dir, cfg, tile.BF16, 1, nil); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1<<16 + 1, 1 << 31} {
		rewriteJSON(t, filepath.Join(dir, "config.json"), func(m map[string]any) { m["num_hidden_layers"] = n })
		if _, err := llama.ReadConfig(dir); !errors.Is(err, tile.ErrShape) || !strings.Contains(err.Error(), "num_hidden_layers") {
			t.Errorf("%d layers: ReadConfig: %v; want ErrShape naming num_hidden_layers", n, err)
		}
		if c, err := llama.OpenCheckpoint(dir); !errors.Is(err, tile.ErrShape) {
			t.Errorf("%d layers: OpenCheckpoint: %v; want ErrShape", n, err)
			if c != nil {
				c.Close()
			}
		}
	}
}
