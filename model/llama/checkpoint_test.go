package llama_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/model/llama"
	"github.com/tcrt-go/tcrt/model/llama/llamatest"
	"github.com/tcrt-go/tcrt/tile"
)

// TestCheckpointRoundTrip writes random checkpoints in each dtype, whole
// and sharded, and reads every weight back: its shape is the configured
// one and its values are the generator's, rounded to the dtype.
func TestCheckpointRoundTrip(t *testing.T) {
	configs := map[string]llama.Config{"llama": llamatest.Tiny()}
	q := llamatest.Tiny()
	q.ModelType, q.QKVBias, q.TieWordEmbeddings = "qwen2", true, true
	configs["qwen2-tied"] = q
	for cname, cfg := range configs {
		want, err := llamatest.RandomWeights(cfg, 42)
		if err != nil {
			t.Fatal(err)
		}
		for _, dt := range []tile.DType{tile.F32, tile.F16, tile.BF16} {
			for _, shards := range []int{1, 3} {
				t.Run(fmt.Sprintf("%s/%v/shards%d", cname, dt, shards), func(t *testing.T) {
					dir := t.TempDir()
					if err := llamatest.WriteRandomCheckpoint(dir, cfg, dt, 42, &llamatest.Options{Shards: shards}); err != nil {
						t.Fatal(err)
					}
					ck, err := llama.OpenCheckpoint(dir)
					if err != nil {
						t.Fatal(err)
					}
					defer ck.Close()
					if !reflect.DeepEqual(ck.Config(), cfg) {
						t.Fatalf("config %+v", ck.Config())
					}
					if len(ck.Files()) != shards {
						t.Fatalf("files %v", ck.Files())
					}
					w := ck.Weights()
					n := 0
					err = llama.EachWeight(cfg, &w.WeightSet, func(name string, shape []int, tt *llama.Tensor) error {
						n++
						if tt.Name != name || tt.DType != dt || !reflect.DeepEqual(tt.Shape, shape) {
							return fmt.Errorf("%s: got %s %v %v", name, tt.Name, tt.DType, tt.Shape)
						}
						got, err := tt.Float32s()
						if err != nil {
							return err
						}
						exp := llamatest.Round(dt, want[name])
						for i := range got {
							if got[i] != exp[i] {
								return fmt.Errorf("%s[%d] = %v, want %v", name, i, got[i], exp[i])
							}
						}
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
					if n != len(want) || n != len(ck.Names()) {
						t.Fatalf("%d weights visited, %d generated, %d in the files", n, len(want), len(ck.Names()))
					}
					if cfg.TieWordEmbeddings != (w.LMHead.Name == "model.embed_tokens.weight") {
						t.Fatalf("LMHead is %q", w.LMHead.Name)
					}
					if cfg.QKVBias != (w.Layers[1].KBias.Name != "") || w.Layers[0].OBias.Name != "" {
						t.Fatalf("biases: %q %q", w.Layers[1].KBias.Name, w.Layers[0].OBias.Name)
					}
					if err := ck.Close(); err != nil {
						t.Fatal(err)
					}
					if ck.Weights() != nil {
						t.Fatal("weights after Close")
					}
				})
			}
		}
	}
}

// TestRandomWeightsDeterministic: a seed fixes the values; another seed
// changes them; leaving a weight out changes no other.
func TestRandomWeightsDeterministic(t *testing.T) {
	cfg := llamatest.Tiny()
	a, _ := llamatest.RandomWeights(cfg, 1)
	b, _ := llamatest.RandomWeights(cfg, 1)
	c, _ := llamatest.RandomWeights(cfg, 2)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different weights")
	}
	if reflect.DeepEqual(a["lm_head.weight"], c["lm_head.weight"]) {
		t.Fatal("different seeds, same weights")
	}
	for _, v := range a["model.layers.0.self_attn.q_proj.weight"] {
		if v == 0 || v < -0.25 || v > 0.25 {
			t.Fatalf("q_proj value %v outside (-sqrt(3/64), sqrt(3/64)) or zero", v)
		}
	}
}

func writeTiny(t *testing.T, cfg llama.Config, dt tile.DType, opts *llamatest.Options) string {
	t.Helper()
	dir := t.TempDir()
	if err := llamatest.WriteRandomCheckpoint(dir, cfg, dt, 9, opts); err != nil {
		t.Fatal(err)
	}
	return dir
}

func rewriteJSON(t *testing.T, path string, edit func(m map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	data, _ = json.Marshal(m)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCheckpointErrors(t *testing.T) {
	cfg := llamatest.Tiny()
	cases := []struct {
		name  string
		setup func(t *testing.T) string
		want  error
		arg   string
	}{
		{"no config", func(t *testing.T) string { return t.TempDir() }, tile.ErrArgument, "config.json"},
		{"no weights", func(t *testing.T) string {
			dir := writeTiny(t, cfg, tile.F32, nil)
			os.Remove(filepath.Join(dir, llama.SingleFile))
			return dir
		}, tile.ErrArgument, "model.safetensors"},
		{"missing weight", func(t *testing.T) string {
			return writeTiny(t, cfg, tile.F32, &llamatest.Options{Skip: []string{"model.layers.1.mlp.up_proj.weight"}})
		}, tile.ErrArgument, "model.layers.1.mlp.up_proj.weight"},
		{"missing bias", func(t *testing.T) string {
			dir := writeTiny(t, cfg, tile.F32, nil)
			rewriteJSON(t, filepath.Join(dir, llama.ConfigFile), func(m map[string]any) { m["attention_bias"] = true })
			return dir
		}, tile.ErrArgument, "model.layers.0.self_attn.q_proj.bias"},
		{"config disagrees: intermediate", func(t *testing.T) string {
			dir := writeTiny(t, cfg, tile.BF16, nil)
			rewriteJSON(t, filepath.Join(dir, llama.ConfigFile), func(m map[string]any) { m["intermediate_size"] = 97 })
			return dir
		}, tile.ErrShape, "model.layers.0.mlp.gate_proj.weight"},
		{"config disagrees: kv heads", func(t *testing.T) string {
			dir := writeTiny(t, cfg, tile.F16, nil)
			rewriteJSON(t, filepath.Join(dir, llama.ConfigFile), func(m map[string]any) { m["num_key_value_heads"] = 4 })
			return dir
		}, tile.ErrShape, "model.layers.0.self_attn.k_proj.weight"},
		{"config disagrees: vocab", func(t *testing.T) string {
			dir := writeTiny(t, cfg, tile.F16, nil)
			rewriteJSON(t, filepath.Join(dir, llama.ConfigFile), func(m map[string]any) { m["vocab_size"] = 100 })
			return dir
		}, tile.ErrShape, "model.embed_tokens.weight"},
		{"untied config, tied file", func(t *testing.T) string {
			c := cfg
			c.TieWordEmbeddings = true
			dir := writeTiny(t, c, tile.F32, nil)
			rewriteJSON(t, filepath.Join(dir, llama.ConfigFile), func(m map[string]any) { m["tie_word_embeddings"] = false })
			return dir
		}, tile.ErrArgument, "lm_head.weight"},
		{"integer weight", func(t *testing.T) string {
			dir := writeTiny(t, cfg, tile.F32, nil)
			f, err := llama.OpenSafetensors(filepath.Join(dir, llama.SingleFile))
			if err != nil {
				t.Fatal(err)
			}
			var out []llamatest.TensorData
			for _, n := range f.Names() {
				tt, _ := f.Tensor(n)
				d := llamatest.TensorData{Name: n, Format: tt.Format, Shape: tt.Shape, Data: append([]byte(nil), tt.Data...)}
				if n == "model.norm.weight" {
					d.Format = "I32"
				}
				out = append(out, d)
			}
			f.Close()
			os.WriteFile(filepath.Join(dir, llama.SingleFile), llamatest.EncodeSafetensors(out, nil), 0o644)
			return dir
		}, tile.ErrDType, "model.norm.weight"},
		{"hostile shard", func(t *testing.T) string {
			dir := writeTiny(t, cfg, tile.F32, &llamatest.Options{Shards: 2})
			p := filepath.Join(dir, "model-00002-of-00002.safetensors")
			data, _ := os.ReadFile(p)
			os.WriteFile(p, data[:len(data)-1], 0o644) // truncated: the last tensor runs past the end
			return dir
		}, tile.ErrBounds, "model-00002-of-00002.safetensors"},
		{"index path traversal", func(t *testing.T) string {
			dir := writeTiny(t, cfg, tile.F32, &llamatest.Options{Shards: 2})
			rewriteJSON(t, filepath.Join(dir, llama.IndexFile), func(m map[string]any) {
				m["weight_map"].(map[string]any)["model.norm.weight"] = "../../etc/passwd"
			})
			return dir
		}, tile.ErrArgument, "plain file names"},
		{"index misplaces", func(t *testing.T) string {
			dir := writeTiny(t, cfg, tile.F32, &llamatest.Options{Shards: 2})
			rewriteJSON(t, filepath.Join(dir, llama.IndexFile), func(m map[string]any) {
				m["weight_map"].(map[string]any)["model.norm.weight"] = "model-00001-of-00002.safetensors"
			})
			return dir
		}, tile.ErrArgument, "model.norm.weight"},
		{"index omits", func(t *testing.T) string {
			dir := writeTiny(t, cfg, tile.F32, &llamatest.Options{Shards: 2})
			rewriteJSON(t, filepath.Join(dir, llama.IndexFile), func(m map[string]any) {
				delete(m["weight_map"].(map[string]any), "model.norm.weight")
			})
			return dir
		}, tile.ErrArgument, "does not list it"},
		{"index names absent tensor", func(t *testing.T) string {
			dir := writeTiny(t, cfg, tile.F32, &llamatest.Options{Shards: 2})
			rewriteJSON(t, filepath.Join(dir, llama.IndexFile), func(m map[string]any) {
				m["weight_map"].(map[string]any)["ghost"] = "model-00001-of-00002.safetensors"
			})
			return dir
		}, tile.ErrArgument, "ghost"},
		{"index names absent shard", func(t *testing.T) string {
			dir := writeTiny(t, cfg, tile.F32, &llamatest.Options{Shards: 2})
			os.Remove(filepath.Join(dir, "model-00002-of-00002.safetensors"))
			return dir
		}, tile.ErrArgument, "model-00002-of-00002.safetensors"},
		{"index without weight_map", func(t *testing.T) string {
			dir := writeTiny(t, cfg, tile.F32, &llamatest.Options{Shards: 2})
			os.WriteFile(filepath.Join(dir, llama.IndexFile), []byte(`{"metadata":{}}`), 0o644)
			return dir
		}, tile.ErrArgument, "weight_map"},
		{"index duplicate name", func(t *testing.T) string {
			dir := writeTiny(t, cfg, tile.F32, &llamatest.Options{Shards: 2})
			os.WriteFile(filepath.Join(dir, llama.IndexFile), []byte(`{"weight_map":{"a":"x.safetensors","a":"y.safetensors"}}`), 0o644)
			return dir
		}, tile.ErrArgument, "duplicate"},
		{"index not JSON", func(t *testing.T) string {
			dir := writeTiny(t, cfg, tile.F32, &llamatest.Options{Shards: 2})
			os.WriteFile(filepath.Join(dir, llama.IndexFile), []byte(`{"weight_map":`), 0o644)
			return dir
		}, tile.ErrArgument, "index"},
		{"tensor in two shards", func(t *testing.T) string {
			dir := writeTiny(t, cfg, tile.F32, &llamatest.Options{Shards: 2})
			// Shard 2 gets a copy of shard 1's first tensor too.
			f1, _ := llama.OpenSafetensors(filepath.Join(dir, "model-00001-of-00002.safetensors"))
			f2, _ := llama.OpenSafetensors(filepath.Join(dir, "model-00002-of-00002.safetensors"))
			var out []llamatest.TensorData
			for _, f := range []*llama.File{f2, f1} {
				for i, n := range f.Names() {
					if f == f1 && i > 0 {
						break
					}
					tt, _ := f.Tensor(n)
					out = append(out, llamatest.TensorData{Name: n, Format: tt.Format, Shape: tt.Shape, Data: append([]byte(nil), tt.Data...)})
				}
			}
			f1.Close()
			f2.Close()
			os.WriteFile(filepath.Join(dir, "model-00002-of-00002.safetensors"), llamatest.EncodeSafetensors(out, nil), 0o644)
			return dir
		}, tile.ErrArgument, "model.embed_tokens.weight"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := c.setup(t)
			ck, err := llama.OpenCheckpoint(dir)
			if err == nil {
				ck.Close()
				t.Fatal("accepted")
			}
			t.Log(err)
			checkTyped(t, err, c.want, c.arg)
		})
	}
}

// TestCheckpointUnused: a tied checkpoint that still carries lm_head.weight
// (and an old rotary buffer) loads, and lists them as unused.
func TestCheckpointUnused(t *testing.T) {
	cfg := llamatest.Tiny()
	dir := writeTiny(t, cfg, tile.F32, nil)
	f, err := llama.OpenSafetensors(filepath.Join(dir, llama.SingleFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []llamatest.TensorData
	for _, n := range f.Names() {
		tt, _ := f.Tensor(n)
		out = append(out, llamatest.TensorData{Name: n, Format: tt.Format, Shape: tt.Shape, Data: append([]byte(nil), tt.Data...)})
	}
	f.Close()
	out = append(out, llamatest.TensorData{Name: "model.layers.0.self_attn.rotary_emb.inv_freq", Format: "F32", Shape: []int{8}, Data: make([]byte, 32)})
	os.WriteFile(filepath.Join(dir, llama.SingleFile), llamatest.EncodeSafetensors(out, nil), 0o644)
	rewriteJSON(t, filepath.Join(dir, llama.ConfigFile), func(m map[string]any) { m["tie_word_embeddings"] = true })
	ck, err := llama.OpenCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	want := []string{"lm_head.weight", "model.layers.0.self_attn.rotary_emb.inv_freq"}
	if got := ck.Weights().Unused; !reflect.DeepEqual(got, want) {
		t.Fatalf("unused %v", got)
	}
	if ck.Weights().LMHead.Name != "model.embed_tokens.weight" {
		t.Fatal("tied LM head is not the embedding")
	}
	var nilCk *llama.Checkpoint
	if nilCk.Close() == nil || nilCk.Weights() != nil || !strings.Contains(nilCk.Close().Error(), "nil") {
		t.Fatal("nil checkpoint")
	}
}
