package llama

import (
	"errors"
	"reflect"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

// TestWeightTable: every field of WeightSet and LayerSet gets the
// checkpoint name and shape it documents (the table and the fields'
// order agree), and absent weights are skipped.
func TestWeightTable(t *testing.T) {
	c := Config{ModelType: "llama", HiddenSize: 8, NumLayers: 2, NumHeads: 4, NumKVHeads: 2, HeadDim: 4,
		IntermediateSize: 5, VocabSize: 11, RMSNormEps: 1e-5, RopeTheta: 1e4, BOSTokenID: -1, QKVBias: true, OutputBias: true}
	type named struct {
		name  string
		shape []int
	}
	var w WeightSet[named]
	n := 0
	if err := EachWeight(c, &w, func(name string, shape []int, dst *named) error {
		*dst = named{name, shape}
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	l := w.Layers[1]
	for _, f := range []struct {
		got   named
		name  string
		shape []int
	}{
		{w.Embed, "model.embed_tokens.weight", []int{11, 8}},
		{w.Norm, "model.norm.weight", []int{8}},
		{w.LMHead, "lm_head.weight", []int{11, 8}},
		{l.InputNorm, "model.layers.1.input_layernorm.weight", []int{8}},
		{l.PostAttentionNorm, "model.layers.1.post_attention_layernorm.weight", []int{8}},
		{l.Q, "model.layers.1.self_attn.q_proj.weight", []int{16, 8}},
		{l.K, "model.layers.1.self_attn.k_proj.weight", []int{8, 8}},
		{l.V, "model.layers.1.self_attn.v_proj.weight", []int{8, 8}},
		{l.O, "model.layers.1.self_attn.o_proj.weight", []int{8, 16}},
		{l.QBias, "model.layers.1.self_attn.q_proj.bias", []int{16}},
		{l.KBias, "model.layers.1.self_attn.k_proj.bias", []int{8}},
		{l.VBias, "model.layers.1.self_attn.v_proj.bias", []int{8}},
		{l.OBias, "model.layers.1.self_attn.o_proj.bias", []int{8}},
		{l.Gate, "model.layers.1.mlp.gate_proj.weight", []int{5, 8}},
		{l.Up, "model.layers.1.mlp.up_proj.weight", []int{5, 8}},
		{l.Down, "model.layers.1.mlp.down_proj.weight", []int{8, 5}},
	} {
		if f.got.name != f.name || !reflect.DeepEqual(f.got.shape, f.shape) {
			t.Errorf("field for %s holds %s %v, want %v", f.name, f.got.name, f.got.shape, f.shape)
		}
	}
	if n != 3+2*13 {
		t.Errorf("%d weights visited", n)
	}
	// Tied, without biases: no lm_head, no bias slots.
	c.TieWordEmbeddings, c.QKVBias, c.OutputBias = true, false, false
	var w2 WeightSet[named]
	n = 0
	_ = EachWeight(c, &w2, func(name string, shape []int, dst *named) error { n++; *dst = named{name, shape}; return nil })
	if n != 2+2*9 || w2.LMHead.name != "" || w2.Layers[0].QBias.name != "" {
		t.Errorf("tied, no biases: %d weights, LMHead %q", n, w2.LMHead.name)
	}
}

// TestEachWeightHostile: EachWeight refuses a configuration that does not
// validate (2^40 layers would allocate for ever), a nil set and a nil
// function, visiting nothing.
func TestEachWeightHostile(t *testing.T) {
	visited := 0
	fn := func(string, []int, *int) error { visited++; return nil }
	if err := EachWeight(Config{NumLayers: 1 << 40}, &WeightSet[int]{}, fn); err == nil {
		t.Error("2^40 layers: no error")
	}
	c := Config{ModelType: "llama", HiddenSize: 8, NumLayers: 2, NumHeads: 4, NumKVHeads: 2, HeadDim: 4,
		IntermediateSize: 5, VocabSize: 11, RMSNormEps: 1e-5, RopeTheta: 1e4, BOSTokenID: -1}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := EachWeight(c, nil, fn); !errors.Is(err, tile.ErrArgument) {
		t.Errorf("nil set: %v", err)
	}
	if err := EachWeight[int](c, &WeightSet[int]{}, nil); !errors.Is(err, tile.ErrArgument) {
		t.Errorf("nil fn: %v", err)
	}
	if visited != 0 {
		t.Errorf("%d weights visited", visited)
	}
	if err := EachWeight(c, &WeightSet[int]{}, fn); err != nil || visited == 0 {
		t.Errorf("a valid config: %v, %d visited", err, visited)
	}
}
