package llama

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/tcrt-go/tcrt/tile"
)

// Config is a Llama-family model's architecture, read from a Hugging Face
// config.json. A Config from ParseConfig or ReadConfig has every default
// filled in and has passed Validate.
type Config struct {
	// ModelType is config.json's model_type: "llama", "qwen2" or "mistral".
	ModelType string
	// HiddenSize is the width of the residual stream.
	HiddenSize int
	// NumLayers is the number of decoder layers.
	NumLayers int
	// NumHeads is the number of query heads.
	NumHeads int
	// NumKVHeads is the number of key/value heads (grouped-query attention);
	// it divides NumHeads. Defaults to NumHeads.
	NumKVHeads int
	// HeadDim is the width of one head; even. Defaults to
	// HiddenSize / NumHeads.
	HeadDim int
	// IntermediateSize is the width of the gated MLP.
	IntermediateSize int
	// VocabSize is the number of token ids.
	VocabSize int
	// MaxPositionEmbeddings is the context length the model was trained for
	// (the class default when config.json names none).
	MaxPositionEmbeddings int
	// RMSNormEps is the epsilon of every RMSNorm. Defaults to 1e-6.
	RMSNormEps float64
	// RopeTheta is RoPE's base. Defaults to 10000.
	RopeTheta float64
	// RopeScaling adjusts RoPE's frequencies for long contexts; nil for none.
	RopeScaling *RopeScaling
	// TieWordEmbeddings: the LM head is the embedding matrix (there is no
	// lm_head.weight).
	TieWordEmbeddings bool
	// QKVBias: the q, k and v projections have biases (Qwen2, or Llama's
	// attention_bias).
	QKVBias bool
	// OutputBias: the o projection has a bias (Llama's attention_bias).
	OutputBias bool
	// MLPBias: the gate, up and down projections have biases (Llama's
	// mlp_bias).
	MLPBias bool
	// SlidingWindow limits attention to the last SlidingWindow positions
	// (Mistral, Qwen2's use_sliding_window): query i sees key j when
	// 0 <= i-j < SlidingWindow. 0 means full causal attention.
	SlidingWindow int
	// SlidingWindowFromLayer is the first layer that uses the sliding
	// window (Qwen2's max_window_layers; 0 for Mistral).
	SlidingWindowFromLayer int
	// BOSTokenID is the beginning-of-sequence id, -1 when none is named
	// (Llama's and Mistral's class default is 1).
	BOSTokenID int
	// EOSTokenIDs are the end-of-sequence ids: one or a list, from
	// generation_config.json when ReadConfig finds one naming them, else
	// config.json's (Llama's and Mistral's class default is 2).
	EOSTokenIDs []int
}

// RopeScaling is config.json's rope_scaling (or the scaling part of
// transformers 5's rope_parameters).
type RopeScaling struct {
	// Type is "linear" (positions divided by Factor), "llama3" (Llama
	// 3.1's frequency-dependent scaling), "yarn", or "dynamic" (NTK-aware
	// scaling that changes only past MaxPositionEmbeddings, which a
	// Runner's sequences then may not reach: below it, it is no scaling).
	Type string
	// Factor is the context extension factor (> 0).
	Factor float64
	// LowFreqFactor and HighFreqFactor bound llama3's smooth band
	// (0 < low < high).
	LowFreqFactor, HighFreqFactor float64
	// OriginalMaxPositionEmbeddings is llama3's and yarn's pre-extension
	// context (yarn's defaults to MaxPositionEmbeddings).
	OriginalMaxPositionEmbeddings int
	// BetaFast and BetaSlow bound yarn's ramp in turns of the original
	// context (0: 32 and 1).
	BetaFast, BetaSlow float64
}

// Defaults that config.json may leave out.
const (
	DefaultRMSNormEps = 1e-6
	DefaultRopeTheta  = 10000.0
)

// maxDim bounds every size in config.json (2^31): far past any real model,
// and small enough that products of a few of them are checked, not wrapped.
const maxDim = 1 << 31

// maxLayers bounds num_hidden_layers (2^16, past any real model's hundred
// or so): the loader and EachWeight allocate a host record per layer
// before any weight is read, so 2^31 layers of tiny weights would exhaust
// the host's memory.
const maxLayers = 1 << 16

// hfConfig is config.json as Hugging Face writes it: the one place the
// field names are stated, for reading and for writing (MarshalJSON).
type hfConfig struct {
	Architectures         []string        `json:"architectures,omitempty"`
	ModelType             string          `json:"model_type"`
	HiddenSize            int64           `json:"hidden_size"`
	NumHiddenLayers       int64           `json:"num_hidden_layers"`
	NumAttentionHeads     int64           `json:"num_attention_heads"`
	NumKeyValueHeads      *int64          `json:"num_key_value_heads,omitempty"`
	HeadDim               *int64          `json:"head_dim,omitempty"`
	IntermediateSize      int64           `json:"intermediate_size"`
	VocabSize             int64           `json:"vocab_size"`
	MaxPositionEmbeddings int64           `json:"max_position_embeddings"`
	RMSNormEps            *float64        `json:"rms_norm_eps,omitempty"`
	RopeTheta             *float64        `json:"rope_theta,omitempty"`
	RopeScaling           *hfRopeScaling  `json:"rope_scaling,omitempty"`
	RopeParameters        *hfRopeScaling  `json:"rope_parameters,omitempty"` // transformers 5: theta and scaling
	TieWordEmbeddings     bool            `json:"tie_word_embeddings"`
	AttentionBias         bool            `json:"attention_bias,omitempty"`
	MLPBias               bool            `json:"mlp_bias,omitempty"`
	HiddenAct             string          `json:"hidden_act,omitempty"`
	SlidingWindow         *int64          `json:"sliding_window,omitempty"`
	UseSlidingWindow      *bool           `json:"use_sliding_window,omitempty"`
	MaxWindowLayers       *int64          `json:"max_window_layers,omitempty"`
	LayerTypes            []string        `json:"layer_types,omitempty"`
	PartialRotaryFactor   *float64        `json:"partial_rotary_factor,omitempty"`
	BOSTokenID            *int64          `json:"bos_token_id,omitempty"`
	EOSTokenID            json.RawMessage `json:"eos_token_id,omitempty"`
	TorchDType            string          `json:"torch_dtype,omitempty"`
}

type hfRopeScaling struct {
	RopeType                      string   `json:"rope_type,omitempty"`
	Type                          string   `json:"type,omitempty"`       // the older name of rope_type
	RopeTheta                     *float64 `json:"rope_theta,omitempty"` // rope_parameters only
	Factor                        float64  `json:"factor,omitempty"`
	LowFreqFactor                 float64  `json:"low_freq_factor,omitempty"`
	HighFreqFactor                float64  `json:"high_freq_factor,omitempty"`
	OriginalMaxPositionEmbeddings float64  `json:"original_max_position_embeddings,omitempty"` // 8192.0 is seen too
	BetaFast                      float64  `json:"beta_fast,omitempty"`
	BetaSlow                      float64  `json:"beta_slow,omitempty"`
	// Yarn's attention scaling is ops.RoPE's fixed 0.1·ln(factor)+1: one
	// named otherwise is refused.
	AttentionFactor *float64 `json:"attention_factor,omitempty"`
	MScale          float64  `json:"mscale,omitempty"`
	MScaleAllDim    float64  `json:"mscale_all_dim,omitempty"`
	Truncate        *bool    `json:"truncate,omitempty"`
	PartialRotary   *float64 `json:"partial_rotary_factor,omitempty"`
}

// modelTypes are the architectures this package reads: what each adds to
// plain Llama is a flag of Config. defaults are the fields config.json may
// leave out, with the values of the transformers class's __init__
// (LlamaConfig, MistralConfig, Qwen2Config), which from_pretrained uses.
var modelTypes = map[string]modelType{
	"llama": {arch: "LlamaForCausalLM", attentionBias: true, mlpBias: true, defaults: `{"vocab_size":32000,"bos_token_id":1,"eos_token_id":2,
		"hidden_size":4096,"intermediate_size":11008,"num_hidden_layers":32,"num_attention_heads":32,
		"max_position_embeddings":2048}`},
	"mistral": {arch: "MistralForCausalLM", slidingWindow: true, defaults: `{"vocab_size":32000,"bos_token_id":1,"eos_token_id":2,
		"hidden_size":4096,"intermediate_size":14336,"num_hidden_layers":32,"num_attention_heads":32,
		"num_key_value_heads":8,"max_position_embeddings":131072,"sliding_window":4096}`},
	"qwen2": {arch: "Qwen2ForCausalLM", qkvBias: true, slidingWindow: true, windowSwitch: true, defaults: `{"vocab_size":151936,
		"hidden_size":4096,"intermediate_size":22016,"num_hidden_layers":32,"num_attention_heads":32,
		"num_key_value_heads":32,"max_position_embeddings":32768,"use_sliding_window":false,
		"sliding_window":4096,"max_window_layers":28}`},
}

// modelType is what one model_type adds to Llama.
type modelType struct {
	arch          string // config.json's architectures entry
	qkvBias       bool   // q, k and v always have biases (Qwen2)
	attentionBias bool   // attention_bias puts biases on q, k, v and o (Llama)
	mlpBias       bool   // mlp_bias puts biases on gate, up and down (Llama)
	slidingWindow bool   // sliding_window is read (Llama ignores it, as Hugging Face does)
	// windowSwitch: the window needs use_sliding_window and starts at
	// layer max_window_layers, or where layer_types says (Qwen2); else it
	// is on every layer whenever sliding_window is set (Mistral).
	windowSwitch bool
	defaults     string // config.json fields the class fills in when absent
}

// archModelTypes maps an architectures entry to its model_type, for a
// config.json that names only the architecture.
var archModelTypes = func() map[string]string {
	m := map[string]string{}
	for name, mt := range modelTypes {
		m[mt.arch] = name
	}
	return m
}()

// biases returns Config.QKVBias and OutputBias for config.json's
// attention_bias.
func (m modelType) biases(attentionBias bool) biasFlags {
	if m.attentionBias && attentionBias {
		return biasFlags{true, true}
	}
	return biasFlags{m.qkvBias, false}
}

type biasFlags struct{ qkv, o bool }

const configOp = "llama config"

// ReadConfig reads and validates dir/config.json. When dir also holds a
// generation_config.json naming eos_token_id, those ids are EOSTokenIDs,
// as transformers' generate takes them.
func ReadConfig(dir string) (Config, error) {
	data, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		return Config{}, tile.Errorf(tile.ErrArgument, configOp, "dir", "reading config.json: %v", err)
	}
	c, err := ParseConfig(data)
	if err != nil {
		return Config{}, err
	}
	gen, err := os.ReadFile(filepath.Join(dir, GenerationConfigFile))
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return Config{}, tile.Errorf(tile.ErrArgument, configOp, "dir", "reading generation_config.json: %v", err)
	}
	var g struct {
		EOSTokenID json.RawMessage `json:"eos_token_id"`
	}
	if err := json.Unmarshal(gen, &g); err != nil {
		return Config{}, tile.Errorf(tile.ErrArgument, configOp, "generation_config.json", "not a valid generation config: %v", err)
	}
	eos, err := parseEOS(g.EOSTokenID)
	if err != nil || eos == nil {
		return c, err
	}
	c.EOSTokenIDs = eos
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// ParseConfig parses config.json's bytes, fills in the defaults and
// validates the result.
func ParseConfig(data []byte) (Config, error) {
	var h hfConfig
	if err := json.Unmarshal(data, &h); err != nil {
		return Config{}, tile.Errorf(tile.ErrArgument, configOp, "config.json", "not a valid config: %v", err)
	}
	if h.ModelType == "" && len(h.Architectures) > 0 {
		h.ModelType = archModelTypes[h.Architectures[0]]
	}
	mt, ok := modelTypes[h.ModelType]
	if !ok {
		return Config{}, tile.Errorf(tile.ErrUnsupported, configOp, "model_type", "%q is not one of llama, mistral, qwen2", h.ModelType)
	}
	// The class defaults first, config.json's fields over them (a field
	// set to null clears a default, as None does in transformers).
	name := h.ModelType
	h = hfConfig{}
	_ = json.Unmarshal([]byte(mt.defaults), &h)
	_ = json.Unmarshal(data, &h) // decoded once above: cannot fail
	h.ModelType = name
	if h.HiddenAct != "" && h.HiddenAct != "silu" {
		return Config{}, tile.Errorf(tile.ErrUnsupported, configOp, "hidden_act", "%q: only silu (SwiGLU) is supported", h.HiddenAct)
	}
	if h.PartialRotaryFactor != nil && *h.PartialRotaryFactor != 1 {
		return Config{}, tile.Errorf(tile.ErrUnsupported, configOp, "partial_rotary_factor", "%v: every element of a head rotates here", *h.PartialRotaryFactor)
	}
	// Every integer is bounded before it is narrowed to int.
	var c Config
	c.ModelType = h.ModelType
	ints := []struct {
		name string
		v    *int64
		dst  *int
	}{
		{"hidden_size", &h.HiddenSize, &c.HiddenSize},
		{"num_hidden_layers", &h.NumHiddenLayers, &c.NumLayers},
		{"num_attention_heads", &h.NumAttentionHeads, &c.NumHeads},
		{"intermediate_size", &h.IntermediateSize, &c.IntermediateSize},
		{"vocab_size", &h.VocabSize, &c.VocabSize},
		{"max_position_embeddings", &h.MaxPositionEmbeddings, &c.MaxPositionEmbeddings},
		{"num_key_value_heads", h.NumKeyValueHeads, &c.NumKVHeads},
		{"head_dim", h.HeadDim, &c.HeadDim},
	}
	for _, f := range ints {
		if f.v == nil { // absent: defaulted below
			continue
		}
		if *f.v < 0 || *f.v > maxDim {
			return Config{}, tile.Errorf(tile.ErrShape, configOp, f.name, "%d is outside [0, 2^31]", *f.v)
		}
		*f.dst = int(*f.v)
	}
	if h.NumKeyValueHeads == nil {
		c.NumKVHeads = c.NumHeads
	}
	if h.HeadDim == nil && c.NumHeads > 0 {
		if c.HiddenSize%c.NumHeads != 0 {
			return Config{}, tile.Errorf(tile.ErrShape, configOp, "head_dim", "absent, and hidden_size %d is not a multiple of num_attention_heads %d", c.HiddenSize, c.NumHeads)
		}
		c.HeadDim = c.HiddenSize / c.NumHeads
	}
	c.RMSNormEps = DefaultRMSNormEps
	if h.RMSNormEps != nil {
		c.RMSNormEps = *h.RMSNormEps
	}
	c.RopeTheta = DefaultRopeTheta
	if h.RopeTheta != nil {
		c.RopeTheta = *h.RopeTheta
	}
	rs, field := h.RopeScaling, "rope_scaling"
	if h.RopeParameters != nil { // transformers 5 keeps theta and scaling here
		rs, field = h.RopeParameters, "rope_parameters"
		if rs.RopeTheta != nil {
			c.RopeTheta = *rs.RopeTheta
		}
		if rs.RopeType == "" && rs.Type == "" {
			rs.RopeType = "default"
		}
	}
	if rs != nil {
		var err error
		if c.RopeScaling, err = parseRopeScaling(rs, field, c.MaxPositionEmbeddings); err != nil {
			return Config{}, err
		}
	}
	c.TieWordEmbeddings = h.TieWordEmbeddings
	b := mt.biases(h.AttentionBias)
	c.QKVBias, c.OutputBias = b.qkv, b.o
	c.MLPBias = mt.mlpBias && h.MLPBias
	// Mistral's sliding_window applies whenever it is set; Qwen2's only
	// with use_sliding_window, from layer max_window_layers (or the first
	// "sliding_attention" of layer_types) on.
	if mt.slidingWindow && h.SlidingWindow != nil && (!mt.windowSwitch || h.UseSlidingWindow != nil && *h.UseSlidingWindow) {
		if *h.SlidingWindow < 0 || *h.SlidingWindow > maxDim {
			return Config{}, tile.Errorf(tile.ErrShape, configOp, "sliding_window", "%d is outside [0, 2^31]", *h.SlidingWindow)
		}
		c.SlidingWindow = int(*h.SlidingWindow)
		if mt.windowSwitch {
			from, err := windowFromLayer(h, c.NumLayers)
			if err != nil {
				return Config{}, err
			}
			c.SlidingWindowFromLayer = from
		}
	}
	c.BOSTokenID = -1
	if h.BOSTokenID != nil {
		if *h.BOSTokenID < 0 || *h.BOSTokenID > maxDim {
			return Config{}, tile.Errorf(tile.ErrArgument, configOp, "bos_token_id", "%d is outside [0, 2^31]", *h.BOSTokenID)
		}
		c.BOSTokenID = int(*h.BOSTokenID)
	}
	eos, err := parseEOS(h.EOSTokenID)
	if err != nil {
		return Config{}, err
	}
	c.EOSTokenIDs = eos
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// parseRopeScaling reads rope_scaling (or rope_parameters, named field):
// nil for rope_type default. maxPos is max_position_embeddings, yarn's
// original context when the field names none.
func parseRopeScaling(rs *hfRopeScaling, field string, maxPos int) (*RopeScaling, error) {
	t := rs.RopeType
	if t == "" {
		t = rs.Type
	}
	if t == "" {
		return nil, tile.Errorf(tile.ErrArgument, configOp, field, "has no rope_type (or type)")
	}
	if rs.PartialRotary != nil && *rs.PartialRotary != 1 {
		return nil, tile.Errorf(tile.ErrUnsupported, configOp, field+".partial_rotary_factor", "%v: every element of a head rotates here", *rs.PartialRotary)
	}
	if t == "default" {
		return nil, nil
	}
	if o := rs.OriginalMaxPositionEmbeddings; !(o >= 0 && o <= maxDim) || o != math.Trunc(o) {
		return nil, tile.Errorf(tile.ErrShape, configOp, field+".original_max_position_embeddings", "%v is not an integer in [0, 2^31]", o)
	}
	r := &RopeScaling{Type: t, Factor: rs.Factor, LowFreqFactor: rs.LowFreqFactor, HighFreqFactor: rs.HighFreqFactor,
		OriginalMaxPositionEmbeddings: int(rs.OriginalMaxPositionEmbeddings), BetaFast: rs.BetaFast, BetaSlow: rs.BetaSlow}
	if t != "yarn" {
		return r, nil
	}
	if r.OriginalMaxPositionEmbeddings == 0 {
		r.OriginalMaxPositionEmbeddings = maxPos
	}
	if r.Factor == 0 && r.OriginalMaxPositionEmbeddings > 0 {
		r.Factor = float64(maxPos) / float64(r.OriginalMaxPositionEmbeddings)
	}
	if rs.MScale != 0 || rs.MScaleAllDim != 0 || rs.Truncate != nil && !*rs.Truncate ||
		rs.AttentionFactor != nil && math.Abs(*rs.AttentionFactor-r.attentionFactor()) > 1e-6 {
		return nil, tile.Errorf(tile.ErrUnsupported, configOp, field, "yarn with attention_factor, mscale, mscale_all_dim or truncate false: only the default attention factor 0.1·ln(factor)+1 and truncated bounds are supported")
	}
	return r, nil
}

// windowFromLayer is Qwen2's first sliding-window layer: the first
// "sliding_attention" of layer_types, which must be followed by sliding
// layers only (numLayers when there is none), else max_window_layers.
func windowFromLayer(h hfConfig, numLayers int) (int, error) {
	if h.LayerTypes == nil {
		if h.MaxWindowLayers == nil { // null: transformers fails too
			return 0, tile.Errorf(tile.ErrArgument, configOp, "max_window_layers", "null with use_sliding_window")
		}
		from := *h.MaxWindowLayers
		if from < 0 || from > maxDim {
			return 0, tile.Errorf(tile.ErrShape, configOp, "max_window_layers", "%d is outside [0, 2^31]", from)
		}
		return int(from), nil
	}
	if len(h.LayerTypes) != numLayers {
		return 0, tile.Errorf(tile.ErrShape, configOp, "layer_types", "%d entries for %d layers", len(h.LayerTypes), numLayers)
	}
	from := len(h.LayerTypes)
	for i, lt := range h.LayerTypes {
		switch {
		case lt == "sliding_attention" && from > i:
			from = i
		case lt == "full_attention" && from > i:
		case lt != "sliding_attention":
			return 0, tile.Errorf(tile.ErrUnsupported, configOp, "layer_types", "layer %d is %q: only full_attention layers followed by sliding_attention ones are supported", i, lt)
		}
	}
	return from, nil
}

// parseEOS reads eos_token_id: absent, null, one id or a list of ids.
func parseEOS(raw json.RawMessage) ([]int, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var ids []int64
	if raw[0] == '[' {
		if err := json.Unmarshal(raw, &ids); err != nil {
			return nil, tile.Errorf(tile.ErrArgument, configOp, "eos_token_id", "not a list of ids: %v", err)
		}
	} else {
		var id int64
		if err := json.Unmarshal(raw, &id); err != nil {
			return nil, tile.Errorf(tile.ErrArgument, configOp, "eos_token_id", "not an id or a list of ids: %v", err)
		}
		ids = []int64{id}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	out := make([]int, len(ids))
	for i, id := range ids {
		if id < 0 || id > maxDim {
			return nil, tile.Errorf(tile.ErrArgument, configOp, "eos_token_id", "id %d is outside [0, 2^31]", id)
		}
		out[i] = int(id)
	}
	return out, nil
}

// Validate checks that c describes a model this package can hold: positive
// sizes (at most 2^16 layers), heads divisible by KV heads, an even head width, positive finite
// epsilon and theta, a well-formed rope_scaling, token ids inside the
// vocabulary, and a parameter count whose byte size fits an int in f32.
// Each broken rule is an error wrapping tile.ErrShape (sizes) or
// tile.ErrArgument (values) naming the config.json field.
func (c Config) Validate() error {
	pos := []struct {
		name string
		v    int
	}{
		{"hidden_size", c.HiddenSize},
		{"num_hidden_layers", c.NumLayers},
		{"num_attention_heads", c.NumHeads},
		{"num_key_value_heads", c.NumKVHeads},
		{"head_dim", c.HeadDim},
		{"intermediate_size", c.IntermediateSize},
		{"vocab_size", c.VocabSize},
	}
	for _, f := range pos {
		if f.v <= 0 || f.v > maxDim {
			return tile.Errorf(tile.ErrShape, configOp, f.name, "%d must be in [1, 2^31]", f.v)
		}
	}
	if _, ok := modelTypes[c.ModelType]; !ok {
		return tile.Errorf(tile.ErrUnsupported, configOp, "model_type", "%q is not one of llama, mistral, qwen2", c.ModelType)
	}
	if c.NumLayers > maxLayers {
		return tile.Errorf(tile.ErrShape, configOp, "num_hidden_layers", "%d must be at most 2^16", c.NumLayers)
	}
	if c.NumHeads%c.NumKVHeads != 0 {
		return tile.Errorf(tile.ErrShape, configOp, "num_key_value_heads", "%d does not divide num_attention_heads %d", c.NumKVHeads, c.NumHeads)
	}
	if c.HeadDim%2 != 0 {
		return tile.Errorf(tile.ErrShape, configOp, "head_dim", "%d is odd; RoPE rotates pairs", c.HeadDim)
	}
	if c.MaxPositionEmbeddings < 0 || c.SlidingWindow < 0 || c.SlidingWindowFromLayer < 0 {
		return tile.Errorf(tile.ErrShape, configOp, "max_position_embeddings", "max_position_embeddings %d, sliding_window %d, max_window_layers %d must not be negative",
			c.MaxPositionEmbeddings, c.SlidingWindow, c.SlidingWindowFromLayer)
	}
	if !(c.RMSNormEps > 0) || math.IsInf(c.RMSNormEps, 0) {
		return tile.Errorf(tile.ErrArgument, configOp, "rms_norm_eps", "%v must be positive and finite", c.RMSNormEps)
	}
	if !(c.RopeTheta > 0) || math.IsInf(c.RopeTheta, 0) {
		return tile.Errorf(tile.ErrArgument, configOp, "rope_theta", "%v must be positive and finite", c.RopeTheta)
	}
	if err := c.RopeScaling.validate(); err != nil {
		return err
	}
	if c.BOSTokenID < -1 || c.BOSTokenID >= c.VocabSize {
		return tile.Errorf(tile.ErrArgument, configOp, "bos_token_id", "%d is outside the vocabulary of %d", c.BOSTokenID, c.VocabSize)
	}
	for _, id := range c.EOSTokenIDs {
		if id < 0 || id >= c.VocabSize {
			return tile.Errorf(tile.ErrArgument, configOp, "eos_token_id", "%d is outside the vocabulary of %d", id, c.VocabSize)
		}
	}
	// Every weight's f32 byte size, and the total, must fit an int: the
	// loader computes them with unchecked arithmetic after this.
	total := 0
	for _, s := range c.weightShapes() {
		n, ok := tile.ProductSize(s.shape...)
		if ok {
			n, ok = tile.MulSize(n, 4*s.count)
		}
		if ok {
			total, ok = tile.AddSize(total, n)
		}
		if !ok {
			return tile.Errorf(tile.ErrShape, configOp, s.field, "the f32 bytes of %d× %v, with those before, overflow an int", s.count, s.shape)
		}
	}
	return nil
}

func (r *RopeScaling) validate() error {
	if r == nil {
		return nil
	}
	finitePos := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	switch r.Type {
	case "linear", "dynamic":
		if !finitePos(r.Factor) {
			return tile.Errorf(tile.ErrArgument, configOp, "rope_scaling.factor", "%v must be positive and finite", r.Factor)
		}
	case "yarn":
		if !finitePos(r.Factor) || r.OriginalMaxPositionEmbeddings <= 0 || r.OriginalMaxPositionEmbeddings > maxDim {
			return tile.Errorf(tile.ErrArgument, configOp, "rope_scaling", "yarn factor %v must be positive and finite, original_max_position_embeddings %d in [1, 2^31]",
				r.Factor, r.OriginalMaxPositionEmbeddings)
		}
		bf, bs := r.betas()
		if !(bf > bs) || bs <= 0 || math.IsInf(bf, 0) {
			return tile.Errorf(tile.ErrArgument, configOp, "rope_scaling.beta_fast", "%v must be finite and exceed beta_slow %v > 0", bf, bs)
		}
	case "llama3":
		if !finitePos(r.Factor) || !finitePos(r.LowFreqFactor) || !finitePos(r.HighFreqFactor) {
			return tile.Errorf(tile.ErrArgument, configOp, "rope_scaling", "llama3 factor %v, low_freq_factor %v and high_freq_factor %v must be positive and finite",
				r.Factor, r.LowFreqFactor, r.HighFreqFactor)
		}
		if r.HighFreqFactor <= r.LowFreqFactor {
			return tile.Errorf(tile.ErrArgument, configOp, "rope_scaling.high_freq_factor", "%v must exceed low_freq_factor %v", r.HighFreqFactor, r.LowFreqFactor)
		}
		if r.OriginalMaxPositionEmbeddings <= 0 || r.OriginalMaxPositionEmbeddings > maxDim {
			return tile.Errorf(tile.ErrArgument, configOp, "rope_scaling.original_max_position_embeddings", "%d must be in [1, 2^31]", r.OriginalMaxPositionEmbeddings)
		}
	default:
		return tile.Errorf(tile.ErrUnsupported, configOp, "rope_scaling.rope_type", "%q: only linear, dynamic, yarn and llama3 are supported", r.Type)
	}
	return nil
}

// MarshalJSON writes c as a Hugging Face config.json (the fields this
// package reads, with Llama's names).
func (c Config) MarshalJSON() ([]byte, error) {
	h := hfConfig{
		ModelType:             c.ModelType,
		HiddenSize:            int64(c.HiddenSize),
		NumHiddenLayers:       int64(c.NumLayers),
		NumAttentionHeads:     int64(c.NumHeads),
		NumKeyValueHeads:      ptr(int64(c.NumKVHeads)),
		HeadDim:               ptr(int64(c.HeadDim)),
		IntermediateSize:      int64(c.IntermediateSize),
		VocabSize:             int64(c.VocabSize),
		MaxPositionEmbeddings: int64(c.MaxPositionEmbeddings),
		RMSNormEps:            ptr(c.RMSNormEps),
		RopeTheta:             ptr(c.RopeTheta),
		TieWordEmbeddings:     c.TieWordEmbeddings,
		HiddenAct:             "silu",
	}
	mt, ok := modelTypes[c.ModelType]
	if !ok {
		return nil, tile.Errorf(tile.ErrUnsupported, configOp, "model_type", "%q is not one of llama, mistral, qwen2", c.ModelType)
	}
	switch {
	case mt.biases(false) == (biasFlags{c.QKVBias, c.OutputBias}):
	case mt.biases(true) == (biasFlags{c.QKVBias, c.OutputBias}):
		h.AttentionBias = true
	default:
		return nil, tile.Errorf(tile.ErrUnsupported, configOp, "QKVBias", "model_type %s cannot express QKVBias=%v with OutputBias=%v", c.ModelType, c.QKVBias, c.OutputBias)
	}
	if c.MLPBias && !mt.mlpBias {
		return nil, tile.Errorf(tile.ErrUnsupported, configOp, "MLPBias", "model_type %s has no MLP biases", c.ModelType)
	}
	h.MLPBias = c.MLPBias
	if r := c.RopeScaling; r != nil {
		h.RopeScaling = &hfRopeScaling{RopeType: r.Type, Factor: r.Factor, LowFreqFactor: r.LowFreqFactor,
			HighFreqFactor: r.HighFreqFactor, OriginalMaxPositionEmbeddings: float64(r.OriginalMaxPositionEmbeddings),
			BetaFast: r.BetaFast, BetaSlow: r.BetaSlow}
	}
	if c.SlidingWindow > 0 {
		if !mt.slidingWindow {
			return nil, tile.Errorf(tile.ErrUnsupported, configOp, "SlidingWindow", "model_type %s has no sliding window", c.ModelType)
		}
		h.SlidingWindow = ptr(int64(c.SlidingWindow))
		if c.ModelType == "qwen2" {
			h.UseSlidingWindow = ptr(true)
			h.MaxWindowLayers = ptr(int64(c.SlidingWindowFromLayer))
		}
	}
	if c.BOSTokenID >= 0 {
		h.BOSTokenID = ptr(int64(c.BOSTokenID))
	}
	switch len(c.EOSTokenIDs) {
	case 0:
	case 1:
		h.EOSTokenID, _ = json.Marshal(c.EOSTokenIDs[0])
	default:
		h.EOSTokenID, _ = json.Marshal(c.EOSTokenIDs)
	}
	// What c leaves unset is an explicit null where an absent field would
	// take a class default (Mistral's sliding_window 4096, Llama's ids).
	b, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name  string
		unset bool
	}{
		{"sliding_window", c.SlidingWindow == 0 && mt.slidingWindow && !mt.windowSwitch},
		{"bos_token_id", c.BOSTokenID < 0},
		{"eos_token_id", len(c.EOSTokenIDs) == 0},
	} {
		if f.unset {
			m[f.name] = nil
		}
	}
	return json.MarshalIndent(m, "", "  ")
}

func ptr[T any](v T) *T { return &v }

// LayerSlidingWindow is the sliding window of layer l (0: full attention).
func (c Config) LayerSlidingWindow(l int) int {
	if l < c.SlidingWindowFromLayer {
		return 0
	}
	return c.SlidingWindow
}

// RopeInvFreq returns RoPE's HeadDim/2 inverse frequencies,
// 1/theta^(2i/HeadDim), with rope_scaling applied as Hugging Face does:
// linear divides every frequency by Factor; llama3 divides those whose
// wavelength exceeds OriginalMaxPositionEmbeddings/LowFreqFactor, keeps
// those below OriginalMaxPositionEmbeddings/HighFreqFactor, and blends
// linearly in between; yarn blends the same two along a ramp over the
// dimensions; dynamic is no scaling (within MaxPositionEmbeddings).
// Computed in float64. Cos and sin are then multiplied by
// RopeAttentionFactor. A HeadDim outside [1, 2^31] (a Config that does
// not Validate) gives nil.
func (c Config) RopeInvFreq() []float64 {
	if c.HeadDim <= 0 || c.HeadDim > maxDim {
		return nil
	}
	f := make([]float64, c.HeadDim/2)
	for i := range f {
		f[i] = 1 / math.Pow(c.RopeTheta, float64(2*i)/float64(c.HeadDim))
	}
	r := c.RopeScaling
	if r == nil {
		return f
	}
	switch r.Type {
	case "linear":
		for i := range f {
			f[i] /= r.Factor
		}
	case "yarn":
		// The dimensions whose wavelength turns bf (bs) times in the
		// original context bound a linear ramp from the original
		// frequencies to the interpolated (÷Factor) ones.
		bf, bs := r.betas()
		orig := float64(r.OriginalMaxPositionEmbeddings)
		dimOf := func(turns float64) float64 {
			return float64(c.HeadDim) * math.Log(orig/(turns*2*math.Pi)) / (2 * math.Log(c.RopeTheta))
		}
		lo, hi := max(math.Floor(dimOf(bf)), 0), min(math.Ceil(dimOf(bs)), float64(c.HeadDim-1))
		if lo == hi {
			hi += 0.001
		}
		for i, v := range f {
			ramp := min(max((float64(i)-lo)/(hi-lo), 0), 1)
			f[i] = v/r.Factor*ramp + v*(1-ramp)
		}
	case "llama3":
		old := float64(r.OriginalMaxPositionEmbeddings)
		lowWave, highWave := old/r.LowFreqFactor, old/r.HighFreqFactor
		for i, v := range f {
			wave := 2 * math.Pi / v
			switch {
			case wave < highWave:
			case wave > lowWave:
				f[i] = v / r.Factor
			default:
				s := (old/wave - r.LowFreqFactor) / (r.HighFreqFactor - r.LowFreqFactor)
				f[i] = (1-s)*v/r.Factor + s*v
			}
		}
	}
	return f
}

// RopeAttentionFactor is the factor RoPE's cos and sin are multiplied by:
// yarn's 0.1·ln(Factor)+1 (Factor > 1), else 1.
func (c Config) RopeAttentionFactor() float64 {
	if c.RopeScaling == nil || c.RopeScaling.Type != "yarn" {
		return 1
	}
	return c.RopeScaling.attentionFactor()
}

func (r *RopeScaling) attentionFactor() float64 {
	if r.Factor <= 1 {
		return 1
	}
	return 0.1*math.Log(r.Factor) + 1
}

// betas are yarn's BetaFast and BetaSlow with their defaults.
func (r *RopeScaling) betas() (fast, slow float64) {
	fast, slow = r.BetaFast, r.BetaSlow
	if fast == 0 {
		fast = 32
	}
	if slow == 0 {
		slow = 1
	}
	return fast, slow
}
