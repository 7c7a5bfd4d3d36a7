package llama_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/model/llama"
	"github.com/tcrt-go/tcrt/model/llama/llamatest"
	"github.com/tcrt-go/tcrt/tile"
)

// llama32 is Llama 3.2 1B's config.json as published (the fields that
// matter; extra ones are ignored).
const llama32 = `{
  "architectures": ["LlamaForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 128000,
  "eos_token_id": [128001, 128008, 128009],
  "head_dim": 64,
  "hidden_act": "silu",
  "hidden_size": 2048,
  "initializer_range": 0.02,
  "intermediate_size": 8192,
  "max_position_embeddings": 131072,
  "mlp_bias": false,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 16,
  "num_key_value_heads": 8,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": {
    "factor": 32.0,
    "high_freq_factor": 4.0,
    "low_freq_factor": 1.0,
    "original_max_position_embeddings": 8192,
    "rope_type": "llama3"
  },
  "rope_theta": 500000.0,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "use_cache": true,
  "vocab_size": 128256
}`

const qwen2 = `{
  "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
  "bos_token_id": 151643, "eos_token_id": 151645,
  "hidden_act": "silu", "hidden_size": 896, "intermediate_size": 4864,
  "max_position_embeddings": 32768, "max_window_layers": 21,
  "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2,
  "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 32768,
  "tie_word_embeddings": true, "use_sliding_window": false, "vocab_size": 151936
}`

const mistral = `{
  "architectures": ["MistralForCausalLM"], "model_type": "mistral",
  "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
  "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 32768,
  "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "sliding_window": 4096,
  "tie_word_embeddings": false, "vocab_size": 32000
}`

func TestParseConfig(t *testing.T) {
	c, err := llama.ParseConfig([]byte(llama32))
	if err != nil {
		t.Fatal(err)
	}
	want := llama.Config{
		ModelType: "llama", HiddenSize: 2048, NumLayers: 16, NumHeads: 32, NumKVHeads: 8, HeadDim: 64,
		IntermediateSize: 8192, VocabSize: 128256, MaxPositionEmbeddings: 131072,
		RMSNormEps: 1e-5, RopeTheta: 500000, TieWordEmbeddings: true,
		RopeScaling: &llama.RopeScaling{Type: "llama3", Factor: 32, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPositionEmbeddings: 8192},
		BOSTokenID:  128000, EOSTokenIDs: []int{128001, 128008, 128009},
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("llama 3.2:\n got %+v\nwant %+v", c, want)
	}
	// 1,235,814,400 parameters is Llama 3.2 1B's published count (tied).
	if got := c.NumParams(); got != 1235814400 {
		t.Errorf("NumParams = %d", got)
	}

	q, err := llama.ParseConfig([]byte(qwen2))
	if err != nil {
		t.Fatal(err)
	}
	if !q.QKVBias || q.OutputBias || q.SlidingWindow != 0 || q.HeadDim != 64 || q.NumKVHeads != 2 || !reflect.DeepEqual(q.EOSTokenIDs, []int{151645}) {
		t.Errorf("qwen2: %+v", q)
	}
	qs, err := llama.ParseConfig([]byte(strings.Replace(qwen2, `"use_sliding_window": false`, `"use_sliding_window": true`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if qs.SlidingWindow != 32768 || qs.SlidingWindowFromLayer != 21 || qs.LayerSlidingWindow(20) != 0 || qs.LayerSlidingWindow(21) != 32768 {
		t.Errorf("qwen2 sliding: %+v", qs)
	}

	m, err := llama.ParseConfig([]byte(mistral))
	if err != nil {
		t.Fatal(err)
	}
	if m.SlidingWindow != 4096 || m.LayerSlidingWindow(0) != 4096 || m.QKVBias || m.HeadDim != 128 || m.TieWordEmbeddings {
		t.Errorf("mistral: %+v", m)
	}

	// Defaults: no num_key_value_heads, head_dim, eps, theta, rope_scaling,
	// bos_token_id (LlamaConfig's 1); eos_token_id null (none).
	d, err := llama.ParseConfig([]byte(`{"model_type":"llama","hidden_size":64,"num_hidden_layers":1,"num_attention_heads":4,
		"intermediate_size":7,"vocab_size":11,"rope_scaling":{"type":"linear","factor":2}, "head_dim": null, "eos_token_id": null}`))
	if err != nil {
		t.Fatal(err)
	}
	if d.NumKVHeads != 4 || d.HeadDim != 16 || d.RMSNormEps != llama.DefaultRMSNormEps || d.RopeTheta != llama.DefaultRopeTheta ||
		d.BOSTokenID != 1 || d.EOSTokenIDs != nil || d.RopeScaling == nil || d.RopeScaling.Type != "linear" {
		t.Errorf("defaults: %+v", d)
	}
	// attention_bias on Llama puts biases on q, k, v and o.
	b, err := llama.ParseConfig([]byte(`{"model_type":"llama","hidden_size":8,"num_hidden_layers":1,"num_attention_heads":2,
		"intermediate_size":7,"vocab_size":11,"attention_bias":true,"rope_scaling":{"rope_type":"default"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !b.QKVBias || !b.OutputBias || b.RopeScaling != nil {
		t.Errorf("attention_bias: %+v", b)
	}
	// Llama has no sliding window: the field is ignored.
	if l, err := llama.ParseConfig([]byte(strings.Replace(mistral, `"model_type": "mistral"`, `"model_type": "llama"`, 1))); err != nil || l.SlidingWindow != 0 {
		t.Errorf("llama with sliding_window: %+v %v", l, err)
	}
	// Qwen2's sliding window without max_window_layers starts at layer 28,
	// Hugging Face's default.
	qd, err := llama.ParseConfig([]byte(strings.Replace(strings.Replace(qwen2, `"use_sliding_window": false`, `"use_sliding_window": true`, 1), `"max_window_layers": 21,`, "", 1)))
	if err != nil || qd.SlidingWindowFromLayer != 28 {
		t.Errorf("qwen2 default max_window_layers: %+v %v", qd, err)
	}
}

// TestParseConfigClassDefaults: fields config.json leaves out take the
// values of the transformers class (LlamaConfig, MistralConfig,
// Qwen2Config), null clears a default, transformers 5's rope_parameters and
// a config naming only its architecture read as transformers reads them.
func TestParseConfigClassDefaults(t *testing.T) {
	sizes := `"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":7,"vocab_size":11`
	for _, c := range []struct {
		name, json string
		check      func(c llama.Config) bool
	}{
		{"llama sizes", `{"model_type":"llama"}`, func(c llama.Config) bool {
			return c.HiddenSize == 4096 && c.IntermediateSize == 11008 && c.NumLayers == 32 && c.NumHeads == 32 &&
				c.NumKVHeads == 32 && c.VocabSize == 32000 && c.MaxPositionEmbeddings == 2048 && c.HeadDim == 128
		}},
		{"mistral kv heads and window", `{"model_type":"mistral",` + strings.Replace(sizes, `"num_attention_heads":4`, `"num_attention_heads":16`, 1) + `}`, func(c llama.Config) bool {
			return c.NumKVHeads == 8 && c.SlidingWindow == 4096 && c.MaxPositionEmbeddings == 131072 && c.HeadDim == 4
		}},
		{"mistral null window and kv heads", `{"model_type":"mistral",` + sizes + `,"sliding_window":null,"num_key_value_heads":null}`, func(c llama.Config) bool {
			return c.NumKVHeads == 4 && c.SlidingWindow == 0
		}},
		{"qwen2 window off by default", `{"model_type":"qwen2",` + strings.Replace(sizes, `"num_attention_heads":4`, `"num_attention_heads":32`, 1) + `,"sliding_window":5}`, func(c llama.Config) bool {
			return c.SlidingWindow == 0 && c.NumKVHeads == 32 && c.MaxPositionEmbeddings == 32768 && c.QKVBias
		}},
		{"qwen2 window default size", `{"model_type":"qwen2",` + sizes + `,"num_key_value_heads":2,"use_sliding_window":true,"max_window_layers":1}`, func(c llama.Config) bool {
			return c.SlidingWindow == 4096 && c.SlidingWindowFromLayer == 1
		}},
		{"qwen2 layer_types", `{"model_type":"qwen2",` + sizes + `,"num_key_value_heads":2,"use_sliding_window":true,"sliding_window":6,"layer_types":["full_attention","sliding_attention"]}`, func(c llama.Config) bool {
			return c.SlidingWindow == 6 && c.SlidingWindowFromLayer == 1
		}},
		{"architectures only", `{"architectures":["MistralForCausalLM"],` + sizes + `,"num_key_value_heads":4}`, func(c llama.Config) bool {
			return c.ModelType == "mistral" && c.SlidingWindow == 4096
		}},
		{"rope_parameters", `{"model_type":"llama",` + sizes + `,"rope_theta":1,"rope_parameters":{"rope_type":"llama3","rope_theta":500000,"factor":8,"low_freq_factor":1,"high_freq_factor":4,"original_max_position_embeddings":64}}`, func(c llama.Config) bool {
			return c.RopeTheta == 500000 && c.RopeScaling != nil && c.RopeScaling.Type == "llama3" && c.RopeScaling.OriginalMaxPositionEmbeddings == 64
		}},
		{"rope_parameters default", `{"model_type":"llama",` + sizes + `,"rope_parameters":{"rope_theta":20000}}`, func(c llama.Config) bool {
			return c.RopeTheta == 20000 && c.RopeScaling == nil
		}},
		{"original context as a float", `{"model_type":"llama",` + sizes + `,"rope_scaling":{"rope_type":"llama3","factor":8,"low_freq_factor":1,"high_freq_factor":4,"original_max_position_embeddings":8192.0}}`, func(c llama.Config) bool {
			return c.RopeScaling != nil && c.RopeScaling.OriginalMaxPositionEmbeddings == 8192
		}},
		{"rope_scaling null", `{"model_type":"llama",` + sizes + `,"rope_scaling":null}`, func(c llama.Config) bool { return c.RopeScaling == nil }},
		{"yarn factor from the contexts", `{"model_type":"llama",` + sizes + `,"max_position_embeddings":256,"rope_scaling":{"rope_type":"yarn","original_max_position_embeddings":64,"attention_factor":1.1386294361119891}}`, func(c llama.Config) bool {
			r := c.RopeScaling
			return r != nil && r.Factor == 4 && r.OriginalMaxPositionEmbeddings == 64 && math.Abs(c.RopeAttentionFactor()-1.1386294361119891) < 1e-12
		}},
		{"yarn original context defaults", `{"model_type":"llama",` + sizes + `,"max_position_embeddings":256,"rope_scaling":{"type":"yarn","factor":2}}`, func(c llama.Config) bool {
			return c.RopeScaling != nil && c.RopeScaling.OriginalMaxPositionEmbeddings == 256
		}},
		{"llama ids", `{"model_type":"llama",` + sizes + `}`, func(c llama.Config) bool {
			return c.BOSTokenID == 1 && reflect.DeepEqual(c.EOSTokenIDs, []int{2})
		}},
		{"qwen2 ids", `{"model_type":"qwen2",` + sizes + `,"num_key_value_heads":4}`, func(c llama.Config) bool {
			return c.BOSTokenID == -1 && c.EOSTokenIDs == nil
		}},
		{"mlp_bias", `{"model_type":"llama",` + sizes + `,"mlp_bias":true}`, func(c llama.Config) bool { return c.MLPBias }},
		{"mlp_bias ignored by qwen2", `{"model_type":"qwen2",` + sizes + `,"num_key_value_heads":4,"mlp_bias":true}`, func(c llama.Config) bool { return !c.MLPBias }},
		{"dynamic", `{"model_type":"llama",` + sizes + `,"rope_scaling":{"type":"dynamic","factor":2}}`, func(c llama.Config) bool {
			return c.RopeScaling != nil && c.RopeScaling.Type == "dynamic" && c.RopeAttentionFactor() == 1
		}},
	} {
		got, err := llama.ParseConfig([]byte(c.json))
		if err != nil || !c.check(got) {
			t.Errorf("%s: %+v %v", c.name, got, err)
		}
	}
}

func TestConfigMarshalRoundTrip(t *testing.T) {
	base := llamatest.Tiny()
	qw := base
	qw.ModelType, qw.QKVBias, qw.SlidingWindow, qw.SlidingWindowFromLayer, qw.TieWordEmbeddings = "qwen2", true, 8, 1, true
	mi := base
	mi.ModelType, mi.SlidingWindow, mi.RopeScaling, mi.EOSTokenIDs, mi.BOSTokenID = "mistral", 5, &llama.RopeScaling{Type: "linear", Factor: 4}, []int{7}, -1
	ab := base
	ab.QKVBias, ab.OutputBias = true, true
	noWindow := mi // sliding_window: null, not the class default
	noWindow.SlidingWindow = 0
	yarn := base
	yarn.RopeScaling = &llama.RopeScaling{Type: "yarn", Factor: 4, OriginalMaxPositionEmbeddings: 64, BetaFast: 16, BetaSlow: 2}
	mlp := base
	mlp.MLPBias = true
	for _, c := range []llama.Config{base, qw, mi, ab, noWindow, yarn, mlp} {
		js, err := c.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		got, err := llama.ParseConfig(js)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.ModelType, err, js)
		}
		if !reflect.DeepEqual(got, c) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.ModelType, got, c)
		}
	}
	bad := base
	bad.ModelType, bad.QKVBias = "mistral", true
	if _, err := bad.MarshalJSON(); !errors.Is(err, tile.ErrUnsupported) {
		t.Errorf("mistral with biases: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	base := `"model_type":"llama","num_hidden_layers":2,"intermediate_size":32,"vocab_size":50`
	cases := []struct {
		name, json string
		want       error
		arg        string
	}{
		{"not JSON", `{`, tile.ErrArgument, "config.json"},
		{"wrong type", `{"model_type":"llama","hidden_size":"big"}`, tile.ErrArgument, "config.json"},
		{"unknown model", `{"model_type":"gpt2","hidden_size":8,"num_hidden_layers":1,"num_attention_heads":2,"intermediate_size":4,"vocab_size":5}`, tile.ErrUnsupported, "model_type"},
		{"no model type", `{"hidden_size":8}`, tile.ErrUnsupported, "model_type"},
		{"gelu", `{` + base + `,"hidden_size":8,"num_attention_heads":2,"hidden_act":"gelu"}`, tile.ErrUnsupported, "hidden_act"},
		{"zero hidden", `{` + base + `,"hidden_size":0,"num_attention_heads":2,"head_dim":4}`, tile.ErrShape, "hidden_size"},
		{"zero heads", `{` + base + `,"hidden_size":8,"num_attention_heads":0,"head_dim":4}`, tile.ErrShape, "num_attention_heads"},
		{"zero layers", `{"model_type":"llama","num_hidden_layers":0,"intermediate_size":32,"vocab_size":50,"hidden_size":8,"num_attention_heads":2}`, tile.ErrShape, "num_hidden_layers"},
		{"zero kv heads", `{` + base + `,"hidden_size":8,"num_attention_heads":2,"num_key_value_heads":0}`, tile.ErrShape, "num_key_value_heads"},
		{"negative", `{` + base + `,"hidden_size":-8,"num_attention_heads":2}`, tile.ErrShape, "hidden_size"},
		{"heads not divisible", `{` + base + `,"hidden_size":48,"num_attention_heads":6,"num_key_value_heads":4}`, tile.ErrShape, "num_key_value_heads"},
		{"hidden not divisible", `{` + base + `,"hidden_size":50,"num_attention_heads":4}`, tile.ErrShape, "head_dim"},
		{"odd head dim", `{` + base + `,"hidden_size":12,"num_attention_heads":4}`, tile.ErrShape, "head_dim"},
		{"huge dim", `{` + base + `,"hidden_size":9223372036854775807,"num_attention_heads":1}`, tile.ErrShape, "hidden_size"},
		{"overflowing product", `{"model_type":"llama","num_hidden_layers":65536,"intermediate_size":2147483648,"vocab_size":2147483648,"hidden_size":2147483648,"num_attention_heads":1}`, tile.ErrShape, "overflow"},
		{"zero eps", `{` + base + `,"hidden_size":8,"num_attention_heads":2,"rms_norm_eps":0}`, tile.ErrArgument, "rms_norm_eps"},
		{"negative theta", `{` + base + `,"hidden_size":8,"num_attention_heads":2,"rope_theta":-1}`, tile.ErrArgument, "rope_theta"},
		{"longrope", `{` + base + `,"hidden_size":8,"num_attention_heads":2,"rope_scaling":{"rope_type":"longrope","factor":2}}`, tile.ErrUnsupported, "rope_type"},
		{"yarn mscale", `{` + base + `,"hidden_size":8,"num_attention_heads":2,"rope_scaling":{"rope_type":"yarn","factor":2,"mscale":1,"mscale_all_dim":1}}`, tile.ErrUnsupported, "rope_scaling"},
		{"yarn attention factor", `{` + base + `,"hidden_size":8,"num_attention_heads":2,"rope_scaling":{"rope_type":"yarn","factor":2,"attention_factor":1.5}}`, tile.ErrUnsupported, "rope_scaling"},
		{"yarn betas", `{` + base + `,"hidden_size":8,"num_attention_heads":2,"rope_scaling":{"rope_type":"yarn","factor":2,"beta_fast":1,"beta_slow":2}}`, tile.ErrArgument, "beta_fast"},
		{"partial rotary", `{` + base + `,"hidden_size":8,"num_attention_heads":2,"partial_rotary_factor":0.5}`, tile.ErrUnsupported, "partial_rotary_factor"},
		{"partial rotary in rope_parameters", `{` + base + `,"hidden_size":8,"num_attention_heads":2,"rope_parameters":{"rope_type":"default","partial_rotary_factor":0.5}}`, tile.ErrUnsupported, "partial_rotary_factor"},
		{"dynamic no factor", `{` + base + `,"hidden_size":8,"num_attention_heads":2,"rope_scaling":{"rope_type":"dynamic"}}`, tile.ErrArgument, "factor"},
		{"layer_types interleaved", `{"model_type":"qwen2","num_hidden_layers":3,"intermediate_size":32,"vocab_size":50,"hidden_size":8,"num_attention_heads":2,"use_sliding_window":true,"layer_types":["sliding_attention","full_attention","sliding_attention"]}`, tile.ErrUnsupported, "layer_types"},
		{"layer_types count", `{"model_type":"qwen2","num_hidden_layers":3,"intermediate_size":32,"vocab_size":50,"hidden_size":8,"num_attention_heads":2,"use_sliding_window":true,"layer_types":["full_attention"]}`, tile.ErrShape, "layer_types"},
		{"unknown architecture", `{"architectures":["GPT2LMHeadModel"],"hidden_size":8}`, tile.ErrUnsupported, "model_type"},
		{"linear no factor", `{` + base + `,"hidden_size":8,"num_attention_heads":2,"rope_scaling":{"type":"linear"}}`, tile.ErrArgument, "factor"},
		{"llama3 inverted band", `{` + base + `,"hidden_size":8,"num_attention_heads":2,"rope_scaling":{"rope_type":"llama3","factor":8,"low_freq_factor":4,"high_freq_factor":1,"original_max_position_embeddings":8192}}`, tile.ErrArgument, "high_freq_factor"},
		{"llama3 no context", `{` + base + `,"hidden_size":8,"num_attention_heads":2,"rope_scaling":{"rope_type":"llama3","factor":8,"low_freq_factor":1,"high_freq_factor":4}}`, tile.ErrArgument, "original_max_position_embeddings"},
		{"eos outside vocab", `{` + base + `,"hidden_size":8,"num_attention_heads":2,"eos_token_id":[1,50]}`, tile.ErrArgument, "eos_token_id"},
		{"eos negative", `{` + base + `,"hidden_size":8,"num_attention_heads":2,"eos_token_id":-1}`, tile.ErrArgument, "eos_token_id"},
		{"eos string", `{` + base + `,"hidden_size":8,"num_attention_heads":2,"eos_token_id":"</s>"}`, tile.ErrArgument, "eos_token_id"},
		{"bos outside vocab", `{` + base + `,"hidden_size":8,"num_attention_heads":2,"bos_token_id":99}`, tile.ErrArgument, "bos_token_id"},
		{"rope_scaling without type", `{` + base + `,"hidden_size":8,"num_attention_heads":2,"rope_scaling":{"factor":8}}`, tile.ErrArgument, "rope_type"},
		{"negative window", `{` + strings.Replace(base, "llama", "mistral", 1) + `,"hidden_size":8,"num_attention_heads":2,"sliding_window":-1}`, tile.ErrShape, "sliding_window"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := llama.ParseConfig([]byte(c.json))
			if err == nil {
				t.Fatalf("accepted: %+v", cfg)
			}
			checkTyped(t, err, c.want, c.arg)
		})
	}
	// Validate on a hand-built Config.
	c := llamatest.Tiny()
	c.HeadDim = 0
	checkTyped(t, c.Validate(), tile.ErrShape, "head_dim")
	c = llamatest.Tiny()
	c.RMSNormEps = math.Inf(1)
	checkTyped(t, c.Validate(), tile.ErrArgument, "rms_norm_eps")
	c = llamatest.Tiny()
	c.ModelType = ""
	checkTyped(t, c.Validate(), tile.ErrUnsupported, "model_type")
}

// TestRopeInvFreq checks the scaled frequencies against Hugging Face's
// formulas written out for single values.
func TestRopeInvFreq(t *testing.T) {
	c := llamatest.Tiny() // head dim 16, theta 5e5, llama3 factor 8, band [1, 4], context 64
	f := c.RopeInvFreq()
	if len(f) != 8 {
		t.Fatalf("%d frequencies", len(f))
	}
	base := func(i int) float64 { return math.Pow(500000, -float64(2*i)/16) }
	for i, got := range f {
		b := base(i)
		wave := 2 * math.Pi / b
		var want float64
		switch {
		case wave < 64.0/4: // high frequency: kept
			want = b
		case wave > 64.0/1: // low frequency: divided by the factor
			want = b / 8
		default:
			s := (64/wave - 1) / (4 - 1)
			want = (1-s)*b/8 + s*b
		}
		if math.Abs(got-want) > 1e-15*want {
			t.Errorf("freq %d = %v, want %v", i, got, want)
		}
	}
	// The three llama3 regimes all occur in Tiny.
	if f[0] != base(0) || f[7] != base(7)/8 || f[1] == base(1) || f[1] == base(1)/8 {
		t.Errorf("regimes not covered: %v", f)
	}
	c.RopeScaling = &llama.RopeScaling{Type: "linear", Factor: 2}
	for i, got := range c.RopeInvFreq() {
		if want := base(i) / 2; math.Abs(got-want) > 1e-15*want {
			t.Errorf("linear freq %d = %v, want %v", i, got, want)
		}
	}
}

// FuzzParseConfig: no config.json panics; a rejected one is a typed
// error; an accepted one validates and survives MarshalJSON.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{llama32, qwen2, mistral, `{"model_type":"llama"}`, `{"model_type":"qwen2","hidden_size":8,"num_hidden_layers":1,"num_attention_heads":2,"intermediate_size":3,"vocab_size":5,"use_sliding_window":true,"sliding_window":4}`,
		`{"architectures":["Qwen2ForCausalLM"],"hidden_size":8,"num_hidden_layers":2,"num_attention_heads":2,"intermediate_size":3,"vocab_size":5,"use_sliding_window":true,"layer_types":["full_attention","sliding_attention"]}`,
		`{"model_type":"llama","hidden_size":8,"num_hidden_layers":1,"num_attention_heads":2,"intermediate_size":3,"vocab_size":5,"mlp_bias":true,"rope_parameters":{"rope_type":"yarn","rope_theta":1e4,"original_max_position_embeddings":64,"beta_fast":8}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := llama.ParseConfig(data)
		if err != nil {
			var ae *tile.ArgError
			if !errors.As(err, &ae) || ae.Err == nil {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted an invalid config: %v", err)
		}
		js, err := c.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		back, err := llama.ParseConfig(js)
		if err != nil || !reflect.DeepEqual(back, c) {
			t.Fatalf("round trip: %+v, %v\n%s", back, err, js)
		}
	})
}

// TestReadConfigGenerationEOS: generation_config.json's eos_token_id, when
// set, is the model's EOS ids (what transformers' generate stops at); a
// broken one is a typed error.
func TestReadConfigGenerationEOS(t *testing.T) {
	dir := writeTiny(t, llamatest.Tiny(), tile.F32, nil)
	gen := filepath.Join(dir, llama.GenerationConfigFile)
	for _, c := range []struct {
		file string
		want []int
		err  error
	}{
		{`{"bos_token_id": 1, "eos_token_id": [7, 9], "do_sample": true}`, []int{7, 9}, nil},
		{`{"eos_token_id": 5}`, []int{5}, nil},
		{`{"eos_token_id": null}`, llamatest.Tiny().EOSTokenIDs, nil},
		{`{"temperature": 0.6}`, llamatest.Tiny().EOSTokenIDs, nil},
		{`{"eos_token_id": [500]}`, nil, tile.ErrArgument},
		{`{"eos_token_id": `, nil, tile.ErrArgument},
	} {
		if err := os.WriteFile(gen, []byte(c.file), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := llama.ReadConfig(dir)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("%s: %v, want %v", c.file, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(cfg.EOSTokenIDs, c.want) {
			t.Errorf("%s: EOS %v %v, want %v", c.file, cfg.EOSTokenIDs, err, c.want)
		}
	}
}
