package llama

import (
	"strconv"

	"github.com/tcrt-go/tcrt/tile"
)

// WeightSet holds one T per weight of a Llama model: a Tensor (a view of a
// checkpoint) in Weights, a *runtime.Buffer in a loaded Model. Weights the
// configuration does not have (biases without QKVBias, OutputBias or
// MLPBias) are
// T's zero value; when the embeddings are tied, LMHead is Embed.
type WeightSet[T any] struct {
	Embed  T // model.embed_tokens.weight [vocab, hidden]
	Layers []LayerSet[T]
	Norm   T // model.norm.weight [hidden]
	LMHead T // lm_head.weight [vocab, hidden]; Embed when tied
}

// LayerSet holds one T per weight of decoder layer N
// (model.layers.N.…). Projections are [out, in] as nn.Linear stores them.
type LayerSet[T any] struct {
	InputNorm         T // input_layernorm.weight [hidden]
	PostAttentionNorm T // post_attention_layernorm.weight [hidden]
	Q                 T // self_attn.q_proj.weight [heads·headDim, hidden]
	K                 T // self_attn.k_proj.weight [kvHeads·headDim, hidden]
	V                 T // self_attn.v_proj.weight [kvHeads·headDim, hidden]
	O                 T // self_attn.o_proj.weight [hidden, heads·headDim]
	QBias             T // self_attn.q_proj.bias [heads·headDim] (QKVBias)
	KBias             T // self_attn.k_proj.bias [kvHeads·headDim] (QKVBias)
	VBias             T // self_attn.v_proj.bias [kvHeads·headDim] (QKVBias)
	OBias             T // self_attn.o_proj.bias [hidden] (OutputBias)
	Gate              T // mlp.gate_proj.weight [intermediate, hidden]
	Up                T // mlp.up_proj.weight [intermediate, hidden]
	Down              T // mlp.down_proj.weight [hidden, intermediate]
	GateBias          T // mlp.gate_proj.bias [intermediate] (MLPBias)
	UpBias            T // mlp.up_proj.bias [intermediate] (MLPBias)
	DownBias          T // mlp.down_proj.bias [hidden] (MLPBias)
}

// slot is one row of the weight table: a checkpoint name (the part after
// model.layers.N. for a layer weight), its shape, and when a model has it.
type slot struct {
	name    string
	shape   func(c Config) []int
	present func(c Config) bool
}

func always(Config) bool         { return true }
func untied(c Config) bool       { return !c.TieWordEmbeddings }
func qkvBias(c Config) bool      { return c.QKVBias }
func outputBias(c Config) bool   { return c.OutputBias }
func mlpBias(c Config) bool      { return c.MLPBias }
func inter(c Config) []int       { return []int{c.IntermediateSize} }
func hidden(c Config) []int      { return []int{c.HiddenSize} }
func vocabHidden(c Config) []int { return []int{c.VocabSize, c.HiddenSize} }
func qDim(c Config) int          { return c.NumHeads * c.HeadDim }
func kvDim(c Config) int         { return c.NumKVHeads * c.HeadDim }

// globalSlots are in the order of WeightSet.globals.
var globalSlots = []slot{
	{"model.embed_tokens.weight", vocabHidden, always},
	{"model.norm.weight", hidden, always},
	{"lm_head.weight", vocabHidden, untied},
}

// layerSlots are in the order of LayerSet.slots.
var layerSlots = []slot{
	{"input_layernorm.weight", hidden, always},
	{"post_attention_layernorm.weight", hidden, always},
	{"self_attn.q_proj.weight", func(c Config) []int { return []int{qDim(c), c.HiddenSize} }, always},
	{"self_attn.k_proj.weight", func(c Config) []int { return []int{kvDim(c), c.HiddenSize} }, always},
	{"self_attn.v_proj.weight", func(c Config) []int { return []int{kvDim(c), c.HiddenSize} }, always},
	{"self_attn.o_proj.weight", func(c Config) []int { return []int{c.HiddenSize, qDim(c)} }, always},
	{"self_attn.q_proj.bias", func(c Config) []int { return []int{qDim(c)} }, qkvBias},
	{"self_attn.k_proj.bias", func(c Config) []int { return []int{kvDim(c)} }, qkvBias},
	{"self_attn.v_proj.bias", func(c Config) []int { return []int{kvDim(c)} }, qkvBias},
	{"self_attn.o_proj.bias", hidden, outputBias},
	{"mlp.gate_proj.weight", func(c Config) []int { return []int{c.IntermediateSize, c.HiddenSize} }, always},
	{"mlp.up_proj.weight", func(c Config) []int { return []int{c.IntermediateSize, c.HiddenSize} }, always},
	{"mlp.down_proj.weight", func(c Config) []int { return []int{c.HiddenSize, c.IntermediateSize} }, always},
	{"mlp.gate_proj.bias", inter, mlpBias},
	{"mlp.up_proj.bias", inter, mlpBias},
	{"mlp.down_proj.bias", hidden, mlpBias},
}

func (w *WeightSet[T]) globals() []*T { return []*T{&w.Embed, &w.Norm, &w.LMHead} }

func (l *LayerSet[T]) slots() []*T {
	return []*T{&l.InputNorm, &l.PostAttentionNorm, &l.Q, &l.K, &l.V, &l.O,
		&l.QBias, &l.KBias, &l.VBias, &l.OBias, &l.Gate, &l.Up, &l.Down, &l.GateBias, &l.UpBias, &l.DownBias}
}

// LayerPrefix is the checkpoint name prefix of decoder layer l.
func LayerPrefix(l int) string { return "model.layers." + strconv.Itoa(l) + "." }

// EachWeight calls fn for every weight a model of configuration c has, in
// checkpoint order (embedding, layers in order, final norm, LM head when
// untied), with its checkpoint name, its shape and where it goes in w
// (w.Layers is allocated to c.NumLayers first). It stops at fn's first
// error. A tied LM head is not visited: set w.LMHead = w.Embed. A c that
// does not Validate, a nil w or a nil fn is an error, and nothing is
// visited.
func EachWeight[T any](c Config, w *WeightSet[T], fn func(name string, shape []int, dst *T) error) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if w == nil || fn == nil {
		return tile.Errorf(tile.ErrArgument, "llama: EachWeight", "w, fn", "a WeightSet and a function are required")
	}
	if len(w.Layers) != c.NumLayers {
		w.Layers = make([]LayerSet[T], c.NumLayers)
	}
	g := w.globals()
	visit := func(s slot, name string, dst *T) error {
		if !s.present(c) {
			return nil
		}
		return fn(name, s.shape(c), dst)
	}
	if err := visit(globalSlots[0], globalSlots[0].name, g[0]); err != nil {
		return err
	}
	for l := range w.Layers {
		p := LayerPrefix(l)
		for i, dst := range w.Layers[l].slots() {
			if err := visit(layerSlots[i], p+layerSlots[i].name, dst); err != nil {
				return err
			}
		}
	}
	for i := 1; i < len(g); i++ {
		if err := visit(globalSlots[i], globalSlots[i].name, g[i]); err != nil {
			return err
		}
	}
	return nil
}

// weightShape is one kind of weight and how many a model has.
type weightShape struct {
	field string
	shape []int
	count int
}

// weightShapes lists every kind of weight c has (Validate bounds their
// sizes before anything is allocated).
func (c Config) weightShapes() []weightShape {
	var out []weightShape
	for _, s := range globalSlots {
		if s.present(c) {
			out = append(out, weightShape{s.name, s.shape(c), 1})
		}
	}
	for _, s := range layerSlots {
		if s.present(c) {
			out = append(out, weightShape{s.name, s.shape(c), c.NumLayers})
		}
	}
	return out
}

// NumParams is the number of parameters c has (tied embeddings counted
// once).
func (c Config) NumParams() int {
	n := 0
	for _, s := range c.weightShapes() {
		p, _ := tile.ProductSize(s.shape...)
		n += p * s.count
	}
	return n
}

// Weights are the typed views of a checkpoint's Llama weights, checked
// against its configuration: every weight present, with the configured
// shape, in f32, f16 or bf16. The views point into the checkpoint's
// mapping and are valid until the Checkpoint is closed.
type Weights struct {
	WeightSet[Tensor]
	// Unused names the checkpoint's tensors that are not Llama weights of
	// this configuration (a tied checkpoint's redundant lm_head.weight,
	// old rotary_emb.inv_freq buffers), sorted.
	Unused []string
}

// weightDTypes are the element types weights may have.
var weightDTypes = map[tile.DType]bool{tile.F32: true, tile.F16: true, tile.BF16: true}

const weightsOp = "llama weights"

// bindWeights finds every weight c has among tensors and checks its shape
// and element type.
func bindWeights(c Config, tensors map[string]Tensor) (*Weights, error) {
	w := &Weights{}
	used := map[string]bool{}
	err := EachWeight(c, &w.WeightSet, func(name string, shape []int, dst *Tensor) error {
		t, ok := tensors[name]
		if !ok {
			return tile.Errorf(tile.ErrArgument, weightsOp, name, "the checkpoint has no such tensor")
		}
		if !weightDTypes[t.DType] {
			return tile.Errorf(tile.ErrDType, weightsOp, name, "element type %s: weights must be F32, F16 or BF16", t.Format)
		}
		if !equalShape(t.Shape, shape) {
			return tile.Errorf(tile.ErrShape, weightsOp, name, "shape %v disagrees with config.json, which gives %v", t.Shape, shape)
		}
		*dst = t
		used[name] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	if c.TieWordEmbeddings {
		w.LMHead = w.Embed
	}
	for _, n := range sortedNames(tensors) {
		if !used[n] {
			w.Unused = append(w.Unused, n)
		}
	}
	return w, nil
}

func equalShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
