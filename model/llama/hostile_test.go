package llama_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tcrt-go/tcrt/model/llama"
	"github.com/tcrt-go/tcrt/model/llama/llamatest"
	"github.com/tcrt-go/tcrt/runtime"
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

// TestHostileCheckpoint loads mutations of a Tiny checkpoint (one or two
// shards): a config.json or index field, a safetensors header entry's
// dtype, shape or offsets set to a hostile JSON value, an entry deleted,
// the data truncated. Load and OpenCheckpoint must return a typed error or
// succeed, without panicking or hanging, and leave no buffer live.
func TestHostileCheckpoint(t *testing.T) {
	rt, err := runtime.Open(runtime.Options{Backend: runtime.BackendCPU})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	n := 60
	if testing.Short() {
		n = 20
	}
	hostile := []any{-1, 0, 1, 3, 1 << 40, 1e300, "x", nil, true, []any{1, 2}, map[string]any{}, 9.5, 1 << 62, 1 << 31, 1<<31 - 1, 64}
	for _, shards := range []int{1, 2} {
		src := t.TempDir()
		if err := llamatest.WriteRandomCheckpoint(src, llamatest.Tiny(), tile.BF16, 1, &llamatest.Options{Shards: shards}); err != nil {
			t.Fatal(err)
		}
		files, err := os.ReadDir(src)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(shards), 5))
		for i := range n {
			dir := t.TempDir()
			for _, f := range files {
				b, err := os.ReadFile(filepath.Join(src, f.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, f.Name()), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			name := files[rng.IntN(len(files))].Name()
			what := mutateCheckpointFile(t, filepath.Join(dir, name), rng, hostile)
			what = fmt.Sprintf("shards %d #%d: %s: %s", shards, i, name, what)
			done := make(chan struct{})
			go func() {
				defer close(done)
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s: panic: %v", what, r)
					}
				}()
				m, err := llama.Load(context.Background(), rt, dir, nil)
				if err != nil && !isTypedErr(err) {
					t.Errorf("%s: Load: untyped error %v", what, err)
				}
				if m != nil {
					m.Close()
				}
				if c, err := llama.OpenCheckpoint(dir); err == nil {
					c.Close()
				} else if !isTypedErr(err) {
					t.Errorf("%s: OpenCheckpoint: untyped error %v", what, err)
				}
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("%s: Load still running after 20 s", what)
			}
			if st := rt.Stats(); st.LiveBuffers != 0 {
				t.Fatalf("%s: %d buffers left live", what, st.LiveBuffers)
			}
		}
	}
}

// mutateCheckpointFile sets one field of the JSON file or safetensors
// header at path to a hostile value and says which.
func mutateCheckpointFile(t *testing.T, path string, rng *rand.Rand, hostile []any) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pick := func() any { return hostile[rng.IntN(len(hostile))] }
	anyKey := func(m map[string]any) string {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return keys[rng.IntN(len(keys))]
	}
	var what string
	if filepath.Ext(path) == ".json" {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if wm, ok := m["weight_map"].(map[string]any); ok {
			k := anyKey(wm)
			wm[k] = pick()
			what = "weight_map." + k
		} else {
			k := anyKey(m)
			m[k] = pick()
			what = k
		}
		b, _ = json.Marshal(m)
	} else {
		n := binary.LittleEndian.Uint64(b)
		var h map[string]any
		if err := json.Unmarshal(b[8:8+n], &h); err != nil {
			t.Fatal(err)
		}
		body := b[8+n:]
		k := anyKey(h)
		if e, ok := h[k].(map[string]any); ok {
			f := []string{"dtype", "shape", "data_offsets"}[rng.IntN(3)]
			switch s, _ := e[f].([]any); {
			case len(s) > 0 && rng.IntN(2) == 0:
				s[rng.IntN(len(s))] = pick()
			case f == "dtype":
				e[f] = []any{"F64", "I8", "BOOL", "F8_E4M3", "U8", "F16", "F32", "ZZ", ""}[rng.IntN(9)]
			default:
				e[f] = pick()
			}
			what = k + "." + f
		} else {
			delete(h, k)
			what = "deleted " + k
		}
		if rng.IntN(5) == 0 {
			body = body[:len(body)/2]
			what += ", data truncated"
		}
		hb, _ := json.Marshal(h)
		b = append(binary.LittleEndian.AppendUint64(nil, uint64(len(hb))), append(hb, body...)...)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return what
}

func isTypedErr(err error) bool {
	for _, s := range []error{tile.ErrShape, tile.ErrDType, tile.ErrArgument, tile.ErrBounds, tile.ErrUnsupported, tile.ErrOutOfMemory, tile.ErrClosed} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
