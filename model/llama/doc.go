// Package llama loads Llama-family decoder models (Llama 2/3, Mistral,
// Qwen2) from Hugging Face model directories into tcrt runtime buffers.
//
// A directory holds config.json and either model.safetensors or
// model.safetensors.index.json with the shards its weight_map names.
// ParseConfig and ReadConfig read the configuration into a Config (defaults
// filled in, validated: sizes, head grouping, RoPE scaling of type linear or
// llama3, token ids); Qwen2's q/k/v biases, Llama's attention_bias and
// Mistral's or Qwen2's sliding window are flags of it.
//
// OpenSafetensors reads one safetensors file, memory-mapped read-only on
// Linux (read into memory elsewhere), validating its header against
// hostile input (ParseSafetensors states the rules): every
// broken rule is a *tile.ArgError naming the tensor and the rule. The reader
// is this package's own rather than github.com/nlpodyssey/safetensors: that
// library has no tagged release, takes the whole file as a []byte (no
// mapping), keeps the last of duplicate names silently (encoding/json's map
// decoding) and returns untyped errors.
//
// OpenCheckpoint opens a whole directory and binds the Llama weights
// (model.embed_tokens.weight, model.layers.N.…, model.norm.weight,
// lm_head.weight unless tied) to a Weights of typed views, each checked
// against the shape config.json implies. Load uploads them into buffers of
// a runtime, optionally converting to one element type, and returns a
// Model.
//
// Package llamatest writes random checkpoints for tests and holds the plain
// f32 reference forward pass, the oracle of the tcrt forward.
//
// Dependencies: model/llama → ops, runtime, tile (the loader alone needs
// only runtime and tile; the forward pass will add ops).
package llama
