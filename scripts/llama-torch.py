#!/usr/bin/python3
"""Logits of a Llama-family checkpoint with Hugging Face's semantics, in PyTorch.

The outside reference of model/llama (TestAgainstTorch, scripts/llama-vs-torch.sh):
an independent forward pass of LlamaForCausalLM, Qwen2ForCausalLM and
MistralForCausalLM written from transformers' published model definitions
(modeling_llama.py, modeling_qwen2.py, modeling_mistral.py,
modeling_rope_utils.py, configuration_*.py), with no transformers package.
It reads DIR/config.json and the safetensors file(s) itself (one
model.safetensors, or model.safetensors.index.json and its shards).

What it follows, module by module, as transformers does:
  * config: each class's defaults for absent fields (LlamaConfig,
    MistralConfig, Qwen2Config); rope_theta/rope_scaling or v5's
    rope_parameters; head_dim from config.json or hidden/heads; a missing
    model_type taken from architectures[0].
  * embedding gather; RMSNorm in float32, cast back to the input dtype, then
    times the weight (in the weight's dtype);
  * q/k/v/o projections (q/k/v biases for Qwen2 or attention_bias, o bias
    for attention_bias), gate/up/down (mlp_bias); GQA by repeating KV heads;
  * rotary: inv_freq in float32 (default, linear, dynamic NTK, yarn,
    llama3), angles pos*inv_freq in float32, cos/sin times
    attention_scaling, cast to the activations' dtype, rotate_half layout;
  * eager attention: q.kT in the dtype, times head_dim^-0.5, plus a causal
    (and sliding-window: key j seen by query i when i-j < sliding_window)
    mask of the dtype's minimum, softmax in float32, cast back, times v;
  * Mistral's sliding_window on every layer; Qwen2's only with
    use_sliding_window, on layers >= max_window_layers (or layer_types);
  * final norm, lm_head (the embedding when tie_word_embeddings).
The activations are in the model dtype, each MODE of --dtype one run:
"stored" (the embedding's stored dtype) or "auto" (config.json's
torch_dtype or dtype, else the stored one, as from_pretrained's
torch_dtype="auto") or bf16/f16 round at every op as torch does; "f32"
upcasts every weight and runs in float32. (torch 1.13's CPU has no f16
matmul or silu: those run in float32 and round once to f16.)

Each run prefills PROMPT (one forward over every prompt token), then makes
GENERATE-1 greedy decode steps with a KV cache (HF's generate). It writes
OUT.MODE.incr.f32: the logits of every prompt token and of every decoded
one, rows of vocab_size little-endian float32; OUT.MODE.full.f32: the same
rows from one forward over the whole sequence; and prints one JSON line,
{MODE: {"vocab": V, "tokens": [prompt + greedy tokens], "rows": R,
"dtype": D}, ...}.

    /usr/bin/python3 scripts/llama-torch.py DIR --tokens 1,2,3 [--generate 8]
        [--dtype f32,stored] --out PREFIX
    /usr/bin/python3 scripts/llama-torch.py --jobs JOBS.json

--jobs runs many checkpoints in one process (torch's import costs a few
seconds): JOBS.json is a list of {"dir", "tokens": [...], "generate",
"dtype": "MODE,...", "out"}, and the output line a list of the results.
"""
import argparse
import json
import math
import os
import struct
import sys

import torch
import torch.nn.functional as F

DTYPES = {
    "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "F64": torch.float64,
    "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
    "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
}
# Storage views torch.frombuffer can take (bf16 goes through int16).
RAW = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.int16, "F64": torch.float64}

# Each class's __init__ defaults (configuration_llama.py, _mistral.py, _qwen2.py).
CLASS_DEFAULTS = {
    "llama": dict(vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                  num_attention_heads=32, num_key_value_heads=None, max_position_embeddings=2048,
                  rms_norm_eps=1e-6, tie_word_embeddings=False, rope_theta=10000.0, rope_scaling=None,
                  attention_bias=False, mlp_bias=False, head_dim=None, hidden_act="silu"),
    "mistral": dict(vocab_size=32000, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                    num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=4096 * 32,
                    rms_norm_eps=1e-6, tie_word_embeddings=False, rope_theta=10000.0, rope_scaling=None,
                    head_dim=None, sliding_window=4096, hidden_act="silu"),
    "qwen2": dict(vocab_size=151936, hidden_size=4096, intermediate_size=22016, num_hidden_layers=32,
                  num_attention_heads=32, num_key_value_heads=32, max_position_embeddings=32768,
                  rms_norm_eps=1e-6, tie_word_embeddings=False, rope_theta=10000.0, rope_scaling=None,
                  use_sliding_window=False, sliding_window=4096, max_window_layers=28, layer_types=None,
                  hidden_act="silu"),
}
ARCHS = {"LlamaForCausalLM": "llama", "MistralForCausalLM": "mistral", "Qwen2ForCausalLM": "qwen2"}


class Config:
    """config.json with the class defaults applied, as PretrainedConfig does."""

    def __init__(self, raw):
        mt = raw.get("model_type") or ARCHS.get((raw.get("architectures") or [""])[0])
        if mt not in CLASS_DEFAULTS:
            sys.exit(f"llama-torch: model_type {mt!r} is not llama, mistral or qwen2")
        self.model_type = mt
        c = dict(CLASS_DEFAULTS[mt])
        c.update(raw)  # extra keys (head_dim for qwen2) become attributes too
        if c["num_key_value_heads"] is None:
            c["num_key_value_heads"] = c["num_attention_heads"]
        if c.get("head_dim") is None:
            c["head_dim"] = c["hidden_size"] // c["num_attention_heads"]
        # RoPE: v5's rope_parameters, else rope_theta and rope_scaling.
        rp = c.get("rope_parameters")
        if rp:
            rope = dict(rp)
        else:
            rope = dict(c.get("rope_scaling") or {})
            rope["rope_theta"] = c.get("rope_theta", 10000.0)
        rope["rope_type"] = rope.get("rope_type", rope.get("type", "default"))
        self.rope = rope
        if mt == "qwen2":
            window = c["sliding_window"] if c["use_sliding_window"] else None
            lt = c.get("layer_types") or [
                "sliding_attention" if window is not None and i >= c["max_window_layers"] else "full_attention"
                for i in range(c["num_hidden_layers"])]
            self.windows = [window if t == "sliding_attention" else None for t in lt]
            self.qkv_bias, self.o_bias, self.mlp_bias = True, False, False
        elif mt == "mistral":
            self.windows = [c.get("sliding_window")] * c["num_hidden_layers"]
            self.qkv_bias = self.o_bias = self.mlp_bias = False
        else:
            self.windows = [None] * c["num_hidden_layers"]
            self.qkv_bias = self.o_bias = bool(c.get("attention_bias"))
            self.mlp_bias = bool(c.get("mlp_bias"))
        if c.get("hidden_act", "silu") != "silu":
            sys.exit(f"llama-torch: hidden_act {c['hidden_act']!r} is not silu")
        self.c = c

    def __getattr__(self, k):
        try:
            return self.__dict__["c"][k]
        except KeyError:
            raise AttributeError(k)


def read_safetensors(path):
    """Every tensor of one safetensors file, by name, in its stored dtype."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        dt = t["dtype"]
        if dt not in RAW:
            sys.exit(f"llama-torch: {name}: dtype {dt} unsupported")
        if b == a:
            x = torch.zeros(0, dtype=RAW[dt])
        else:
            x = torch.frombuffer(bytearray(data[base + a:base + b]), dtype=RAW[dt])
        if dt == "BF16":
            x = x.view(torch.bfloat16)
        out[name] = x.reshape(t["shape"])
    return out


def read_weights(d):
    index = os.path.join(d, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    w = {}
    for fn in files:
        w.update(read_safetensors(os.path.join(d, fn)))
    return w


def rope_inv_freq(cfg, seq_len=None):
    """(inv_freq float32 [head_dim/2], attention_scaling), modeling_rope_utils."""
    r = cfg.rope
    base = float(r["rope_theta"])
    dim = int(cfg.head_dim * r.get("partial_rotary_factor", 1.0))
    kind = r["rope_type"]

    def default(b):
        return 1.0 / (b ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))

    if kind == "default":
        return default(base), 1.0
    if kind == "linear":
        return default(base) / r["factor"], 1.0
    if kind == "dynamic":
        mpe = cfg.max_position_embeddings
        s = mpe if seq_len is None else max(seq_len, mpe)
        factor = r["factor"]
        b = base * ((factor * s / mpe) - (factor - 1)) ** (dim / (dim - 2))
        return default(b), 1.0
    if kind == "llama3":
        # Wavelengths past old/low are interpolated (÷factor), those under
        # old/high kept, the band between blended linearly in old/wave.
        inv = default(base)
        factor, lo, hi = r["factor"], r["low_freq_factor"], r["high_freq_factor"]
        old = r["original_max_position_embeddings"]
        wave = 2 * math.pi / inv
        s = (old / wave - lo) / (hi - lo)
        blend = (1 - s) * inv / factor + s * inv
        out = torch.where(wave < old / hi, inv, blend)
        return torch.where(wave > old / lo, inv / factor, out), 1.0
    if kind == "yarn":
        factor = r.get("factor")
        orig = r.get("original_max_position_embeddings") or cfg.max_position_embeddings
        if factor is None:
            factor = cfg.max_position_embeddings / orig

        def mscale(scale, m=1.0):
            return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

        att = r.get("attention_factor")
        if att is None:
            if r.get("mscale") and r.get("mscale_all_dim"):
                att = mscale(factor, r["mscale"]) / mscale(factor, r["mscale_all_dim"])
            else:
                att = mscale(factor)
        fast, slow = r.get("beta_fast") or 32, r.get("beta_slow") or 1

        def corr_dim(turns):
            return (dim * math.log(orig / (turns * 2 * math.pi))) / (2 * math.log(base))

        lo, hi = corr_dim(fast), corr_dim(slow)
        if r.get("truncate", True):
            lo, hi = math.floor(lo), math.ceil(hi)
        lo, hi = max(lo, 0), min(hi, dim - 1)
        if lo == hi:
            hi += 0.001
        ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - lo) / (hi - lo), 0, 1)
        pos = base ** (torch.arange(0, dim, 2).float() / dim)
        extra = 1 - ramp
        inv = (1.0 / (factor * pos)) * (1 - extra) + (1.0 / pos) * extra
        return inv, float(att)
    sys.exit(f"llama-torch: rope_type {kind!r} unsupported")


def half_safe(fn, *args):
    """fn over args, in float32 and rounded back for float16 (torch 1.13's CPU
    has no f16 matmul or silu): one rounding of an f32 result, as an f16
    kernel accumulating in f32 gives."""
    if any(a is not None and a.dtype == torch.float16 for a in args):
        return fn(*(None if a is None else a.float() for a in args)).half()
    return fn(*args)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class Model:
    def __init__(self, raw, weights, dtype):
        self.cfg = cfg = Config(raw)
        stored = weights["model.embed_tokens.weight"].dtype
        if dtype == "stored":
            dt = stored
        elif dtype == "auto":
            dt = DTYPES.get(raw.get("torch_dtype") or raw.get("dtype"), stored)
        else:
            dt = DTYPES[dtype]
        self.dtype = dt
        self.w = {k: v.to(dt) for k, v in weights.items()}
        if cfg.tie_word_embeddings:
            self.w["lm_head.weight"] = self.w["model.embed_tokens.weight"]

    def lin(self, x, name, bias):
        b = self.w[name + ".bias"] if bias else None
        return half_safe(F.linear, x, self.w[name + ".weight"], b)

    def norm(self, x, name):
        dt = x.dtype
        h = x.to(torch.float32)
        var = h.pow(2).mean(-1, keepdim=True)
        h = h * torch.rsqrt(var + self.cfg.rms_norm_eps)
        return self.w[name] * h.to(dt)

    def forward(self, ids, cache):
        """Logits [len(ids), V] of ids at positions len(cache) onward."""
        cfg, dt = self.cfg, self.dtype
        T = len(ids)
        p0 = cache["n"]
        pos = torch.arange(p0, p0 + T)
        inv, att = rope_inv_freq(cfg, seq_len=p0 + T)
        freqs = (inv[:, None].float() @ pos[None, :].float()).t()  # [T, d/2], float32
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = (emb.cos() * att).to(dt), (emb.sin() * att).to(dt)
        nh, nkv, hd = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
        x = self.w["model.embed_tokens.weight"][torch.tensor(ids)]
        S = p0 + T
        qi = torch.arange(p0, S)[:, None]
        kj = torch.arange(S)[None, :]
        for l in range(cfg.num_hidden_layers):
            p = f"model.layers.{l}."
            h = self.norm(x, p + "input_layernorm.weight")
            q = self.lin(h, p + "self_attn.q_proj", cfg.qkv_bias).view(T, nh, hd).transpose(0, 1)
            k = self.lin(h, p + "self_attn.k_proj", cfg.qkv_bias).view(T, nkv, hd).transpose(0, 1)
            v = self.lin(h, p + "self_attn.v_proj", cfg.qkv_bias).view(T, nkv, hd).transpose(0, 1)
            q = (q * cos) + (rotate_half(q) * sin)
            k = (k * cos) + (rotate_half(k) * sin)
            if l in cache["k"]:
                k = torch.cat((cache["k"][l], k), dim=1)
                v = torch.cat((cache["v"][l], v), dim=1)
            cache["k"][l], cache["v"][l] = k, v
            rep = nh // nkv
            kr = k.repeat_interleave(rep, dim=0)
            vr = v.repeat_interleave(rep, dim=0)
            visible = kj <= qi
            win = cfg.windows[l]
            if win is not None:
                visible = visible & (kj > qi - win)
            mask = torch.zeros(T, S, dtype=dt).masked_fill(~visible, torch.finfo(dt).min)
            a = half_safe(torch.matmul, q, kr.transpose(1, 2)) * (hd ** -0.5)
            a = a + mask
            a = F.softmax(a, dim=-1, dtype=torch.float32).to(dt)
            o = half_safe(torch.matmul, a, vr).transpose(0, 1).reshape(T, nh * hd)
            x = x + self.lin(o, p + "self_attn.o_proj", cfg.o_bias)
            h = self.norm(x, p + "post_attention_layernorm.weight")
            g = self.lin(h, p + "mlp.gate_proj", cfg.mlp_bias)
            u = self.lin(h, p + "mlp.up_proj", cfg.mlp_bias)
            x = x + self.lin(half_safe(F.silu, g) * u, p + "mlp.down_proj", cfg.mlp_bias)
        cache["n"] = S
        x = self.norm(x, "model.norm.weight")
        return half_safe(F.linear, x, self.w["lm_head.weight"])


def new_cache():
    return {"n": 0, "k": {}, "v": {}}


def run(m, prompt, generate, out):
    """Prefill prompt, decode generate-1 greedy tokens; write the rows."""
    toks, rows = list(prompt), []
    with torch.no_grad():
        cache = new_cache()
        logits = m.forward(prompt, cache)
        rows.append(logits)
        for i in range(generate):
            t = int(torch.argmax(logits[-1].float()))
            toks.append(t)
            if i + 1 == generate:
                break
            logits = m.forward([t], cache)
            rows.append(logits)
        incr = torch.cat(rows).float()
        full = m.forward(toks[:incr.shape[0]], new_cache()).float()
    incr.numpy().astype("<f4").tofile(out + ".incr.f32")
    full.numpy().astype("<f4").tofile(out + ".full.f32")
    return {"vocab": incr.shape[1], "tokens": toks, "rows": incr.shape[0], "dtype": str(m.dtype)[6:]}


def job(d, tokens, generate, modes, out):
    """Every mode's run over checkpoint d; the results by mode."""
    with open(os.path.join(d, "config.json")) as f:
        raw = json.load(f)
    weights = read_weights(d)
    return {mode: run(Model(raw, weights, mode), tokens, max(generate, 1), out + "." + mode)
            for mode in modes.split(",")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", nargs="?")
    ap.add_argument("--tokens")
    ap.add_argument("--generate", type=int, default=1)
    ap.add_argument("--dtype", default="stored", help="comma-separated: stored, auto, f32, bf16, f16")
    ap.add_argument("--out")
    ap.add_argument("--jobs", help="a JSON file of [{dir, tokens, generate, dtype, out}]: one output line, a list")
    a = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("TORCH_THREADS", "1")))
    if a.jobs:
        with open(a.jobs) as f:
            jobs = json.load(f)
        print(json.dumps([job(j["dir"], j["tokens"], j["generate"], j["dtype"], j["out"]) for j in jobs]))
        return
    if not (a.dir and a.tokens and a.out):
        ap.error("DIR, --tokens and --out are needed without --jobs")
    print(json.dumps(job(a.dir, [int(t) for t in a.tokens.split(",")], a.generate, a.dtype, a.out)))


if __name__ == "__main__":
    main()
