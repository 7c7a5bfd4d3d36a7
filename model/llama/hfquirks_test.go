package llama_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/tcrt-go/tcrt/model/llama"
	"github.com/tcrt-go/tcrt/model/llama/llamatest"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// writeQuirkyCheckpoint replaces a tied checkpoint's weights with what
// real repositories hold: the tensors shuffled over two shards (with an
// index) and __metadata__, plus tensors the model does not use: an
// lm_head.weight that tying ignores and old rotary_emb.inv_freq buffers.
func writeQuirkyCheckpoint(t *testing.T, dir string, cfg llama.Config, dt tile.DType) {
	t.Helper()
	vals, err := llamatest.RandomWeights(cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	format := map[tile.DType]string{tile.F32: "F32", tile.F16: "F16", tile.BF16: "BF16"}[dt]
	var ts []llamatest.TensorData
	var ws llama.WeightSet[struct{}]
	_ = llama.EachWeight(cfg, &ws, func(name string, shape []int, _ *struct{}) error {
		ts = append(ts, llamatest.TensorData{Name: name, Format: format, Shape: shape, Data: llamatest.Encode(dt, vals[name])})
		return nil
	})
	junk := make([]float32, cfg.VocabSize*cfg.HiddenSize)
	for i := range junk {
		junk[i] = float32(i%7) - 3
	}
	ts = append(ts, llamatest.TensorData{Name: "lm_head.weight", Format: format, Shape: []int{cfg.VocabSize, cfg.HiddenSize}, Data: llamatest.Encode(dt, junk)})
	for l := range cfg.NumLayers {
		inv := make([]float32, cfg.HeadDim/2)
		ts = append(ts, llamatest.TensorData{Name: llama.LayerPrefix(l) + "self_attn.rotary_emb.inv_freq", Format: "F32", Shape: []int{len(inv)}, Data: llamatest.Encode(tile.F32, inv)})
	}
	rng := rand.New(rand.NewPCG(7, 8))
	rng.Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
	if err := os.Remove(filepath.Join(dir, llama.SingleFile)); err != nil {
		t.Fatal(err)
	}
	weightMap := map[string]string{}
	for s, part := range [][]llamatest.TensorData{ts[:len(ts)/2], ts[len(ts)/2:]} {
		name := "model-0000" + strconv.Itoa(s+1) + "-of-00002.safetensors"
		for _, x := range part {
			weightMap[x.Name] = name
		}
		if err := os.WriteFile(filepath.Join(dir, name), llamatest.EncodeSafetensors(part, map[string]string{"format": "pt"}), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	index, _ := json.Marshal(map[string]any{"metadata": map[string]any{"total_size": 0}, "weight_map": weightMap})
	if err := os.WriteFile(filepath.Join(dir, llama.IndexFile), index, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLoadHFQuirks loads, without torch, what real repositories hold and
// the generated checkpoints do not (writeQuirkyCheckpoint's files, and a
// config.json naming only its architecture, with rope_scaling null and a
// torch_dtype that disagrees with the stored type), and checks the forward
// pass against the Go reference.
func TestLoadHFQuirks(t *testing.T) {
	cfg := llamatest.Tiny()
	cfg.TieWordEmbeddings, cfg.RopeScaling = true, nil
	dir := t.TempDir()
	if err := llamatest.WriteRandomCheckpoint(dir, cfg, tile.BF16, 5, nil); err != nil {
		t.Fatal(err)
	}
	writeQuirkyCheckpoint(t, dir, cfg, tile.BF16)
	rewriteJSON(t, filepath.Join(dir, llama.ConfigFile), func(m map[string]any) {
		delete(m, "model_type")
		m["architectures"] = []string{"LlamaForCausalLM"}
		m["rope_scaling"] = nil
		m["torch_dtype"] = "float32"
	})
	ck, err := llama.OpenCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := ck.Config(); !reflect.DeepEqual(got, cfg) {
		t.Errorf("config:\n got %+v\nwant %+v", got, cfg)
	}
	if n := len(ck.Weights().Unused); n != 1+cfg.NumLayers {
		t.Errorf("unused tensors %v, want lm_head.weight and %d inv_freq", ck.Weights().Unused, cfg.NumLayers)
	}
	ref, err := llamatest.NewReference(ck)
	ck.Close()
	if err != nil {
		t.Fatal(err)
	}
	rt := openRT(t, runtime.Options{Backend: runtime.BackendCPU})
	m, err := llama.Load(context.Background(), rt, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	checkAgainstReference(t, &fixture{rt: rt, m: m, ref: ref, cfg: cfg, dir: dir}, 9, 4)
}
