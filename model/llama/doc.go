// Package llama loads Llama-family decoder models (Llama 2/3, Mistral,
// Qwen2) from Hugging Face model directories into tcrt runtime buffers.
//
// A directory holds config.json and either model.safetensors or
// model.safetensors.index.json with the shards its weight_map names.
// ParseConfig and ReadConfig read the configuration into a Config, as
// transformers reads it: absent fields take the class's defaults (those of
// LlamaConfig, MistralConfig or Qwen2Config), RoPE scaling may be linear,
// llama3, yarn or dynamic (in rope_scaling or transformers 5's
// rope_parameters); then it is validated (sizes, head grouping, RoPE
// parameters, token ids). Qwen2's q/k/v biases, Llama's attention_bias and
// mlp_bias and Mistral's or Qwen2's sliding window are flags of it.
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
// Model. LoadOptions.Float8 then quantises the projection matrices to e4m3
// with one scale per output channel (the logit cost is TestLoadFloat8's
// bound; on the CPU the fallback dequantises B on every call today, so it
// saves memory, not decode time).
//
// # Forward pass and generation
//
// A Runner (NewRunner) runs the forward pass over steps that mix the
// prefill of new prompts with the decode of running sequences (continuous
// batching). Per step, with T the step's tokens packed in rows:
//
//	embedding gather (ops.MGather) → residual (f32) → RMSNorm
//	per layer: q|k|v = h·W_qkvᵀ (+bias), one matmul over the fused
//	  [q|k|v] weights Load makes (three into column ranges of the same
//	  buffer with LoadOptions.KeepSeparate);
//	  RoPE on q and k (NeoX, llama3/linear scaling, per-token positions);
//	  k, v appended to the layer's paged ops.KVCache; attention: varlen
//	  causal (ops.Attention with CuSeqQ) for prompts, paged decode
//	  (ops.AttentionKVCache) for running sequences; o_proj; AddRMSNorm
//	  (residual add fused with the next norm); h·W_gate|upᵀ, one matmul
//	  into [T, gate|up], GatedActivate(SiLU); down_proj; AddRMSNorm
//	LM head on each sequence's last token (every token's with AllLogits)
//
// Activations and the residual stream are f32 whatever the weights' type;
// the KV cache is f32 unless RunnerOptions.KVDType says otherwise. Each
// layer has its own paged cache; the runner hands pages from one free list
// to sequences as they grow and takes them back in FreeSequence. Every
// buffer is allocated by NewRunner and reused: a decode step allocates no
// buffer, and on the CPU backend a decode step makes no heap allocation
// at all in steady state (TestDecodeAllocs; the ops take their argument
// structs and scratch from pools). ops.KVCache.Append and ops.AttentionKVCache index sequences by
// their slot in a [MaxSeqs, seq, …] view, so the step's rows go through a
// slot-indexed staging buffer of 64 rows a sequence for the append and the
// decode queries. A prompt must fit in one step (no chunked prefill).
//
// An Engine (NewEngine) is what a service holds: Submit (or Generate)
// queues token ids with GenerateOptions (stop tokens, a maximum length,
// SampleOptions with a per-request seed) and returns a stream of Tokens;
// one goroutine admits requests into free slots and runs every running
// request in shared steps; cancelling a request's ctx stops it at the next
// step; Close ends everything with ErrClosed.
//
// Package llamatest writes random checkpoints for tests and holds the plain
// f32 reference forward pass, the oracle of the tcrt forward.
// TestAgainstTorch checks both against an outside one, Hugging Face's
// semantics in PyTorch (scripts/llama-torch.py; docs/llama.md has the
// rules followed and the measured agreement).
//
// Dependencies: model/llama → ops, runtime, tile (the loader needs ops
// only for Float8's ops.Quantize).
package llama
