"""PyTorch references for ops' light ops and attention (TestAgainstTorch).

Reads cases.json from the directory given as argv[1]: each case names an
op, its parameters and its inputs (raw little-endian float32 files holding
the values tcrt was given, already rounded to the case's dtype). Writes
each reference output as raw little-endian float64 to <case>.<output>.ref.
Every reference is computed in float64 with torch's own functions where
torch has one (F.layer_norm, F.silu, F.gelu, torch.softmax, F.normalize...)
and from the published formulas otherwise (RMSNorm, RoPE with its
scalings). Written for torch 1.13 (Debian's python3-torch), CPU only.
"""

import json
import math
import os
import sys

import torch
import torch.nn.functional as F

D = torch.float64


def load(dirname, spec):
    t = torch.from_file(os.path.join(dirname, spec["file"]), size=math.prod(spec["shape"]), dtype=torch.float32)
    return t.reshape(spec["shape"]).to(D)


def rmsnorm(x, w, eps, gemma):
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return y * ((1 + w) if gemma else w)


def inv_freqs(p):
    """Inverse frequencies and the cos/sin factor of a rotary embedding
    (Hugging Face's rope_type semantics)."""
    dim, theta = p["rotary_dim"], p["theta"]
    inv = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=D) / dim))
    kind, mscale = p.get("scaling", "none"), 1.0
    if kind == "linear":
        inv = inv / p["factor"]
    elif kind == "llama3":
        factor, lo, hi, orig = p["factor"], p["low_freq_factor"], p["high_freq_factor"], p["original_max_position"]
        wave = 2 * math.pi / inv
        out = torch.where(wave > orig / lo, inv / factor, inv)
        smooth = (orig / wave - lo) / (hi - lo)
        smoothed = (1 - smooth) * out / factor + smooth * out
        medium = (wave >= orig / hi) & (wave <= orig / lo)
        inv = torch.where(medium, smoothed, out)
    elif kind == "yarn":
        factor, orig = p["factor"], p["original_max_position"]
        beta_fast, beta_slow = p.get("beta_fast", 32.0), p.get("beta_slow", 1.0)

        def corr_dim(rot):
            return dim * math.log(orig / (rot * 2 * math.pi)) / (2 * math.log(theta))

        low = max(math.floor(corr_dim(beta_fast)), 0)
        high = min(math.ceil(corr_dim(beta_slow)), dim - 1)
        if low == high:
            high += 0.001
        ramp = ((torch.arange(dim // 2, dtype=D) - low) / (high - low)).clamp(0, 1)
        extrap = 1 - ramp
        inv = inv / factor * (1 - extrap) + inv * extrap
        if factor > 1:
            mscale = 0.1 * math.log(factor) + 1
    return inv, mscale


def rope(x, pos, p):
    """x: tokens × heads·head_dim; rotates the first rotary_dim of each head."""
    hd, rd = p["head_dim"], p["rotary_dim"]
    t = x.reshape(x.shape[0], -1, hd).clone()
    inv, mscale = inv_freqs(p)
    ang = pos.to(D)[:, None] * inv[None, :]  # tokens × rd/2
    c, s = (torch.cos(ang) * mscale)[:, None, :], (torch.sin(ang) * mscale)[:, None, :]
    r = t[..., :rd]
    if p["interleaved"]:
        x0, x1 = r[..., 0::2], r[..., 1::2]
        out = torch.stack([x0 * c - x1 * s, x1 * c + x0 * s], dim=-1).flatten(-2)
    else:
        x0, x1 = r[..., : rd // 2], r[..., rd // 2 :]
        out = torch.cat([x0 * c - x1 * s, x1 * c + x0 * s], dim=-1)
    t[..., :rd] = out
    return t.reshape(x.shape)


ACT = {
    "silu": F.silu,
    "gelu": F.gelu,
    "gelu_tanh": lambda a: F.gelu(a, approximate="tanh"),
}


def attention(q, k, v, p):
    """q: [seqQ, hq, d]; k, v: [seqKV, hkv, d]; bottom-right causal."""
    sq, hq, d = q.shape
    skv, hkv = k.shape[0], k.shape[1]
    rep = hq // hkv
    k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
    scale = p.get("scale") or 1 / math.sqrt(d)
    logits = torch.einsum("qhd,khd->hqk", q, k) * scale
    cap = p.get("softcap", 0)
    if cap > 0:
        logits = cap * torch.tanh(logits / cap)
    qpos = torch.arange(sq, dtype=torch.int64)[:, None] + (skv - sq)
    kpos = torch.arange(skv, dtype=torch.int64)[None, :]
    keep = torch.ones(sq, skv, dtype=torch.bool)
    left, right = p.get("left", -1), p.get("right", -1)
    if p.get("causal"):
        right = 0 if right < 0 else min(right, 0)
    if left >= 0:
        keep &= kpos >= qpos - left
    if right >= 0:
        keep &= kpos <= qpos + right
    logits = logits.masked_fill(~keep[None], float("-inf"))
    probs = torch.softmax(logits, dim=-1).nan_to_num(0.0)  # rows that see no key: zeros
    return torch.einsum("hqk,khd->qhd", probs, v)


def run(c, ins):
    op, p = c["op"], c["params"]
    x = ins.get("x")
    if op == "rmsnorm":
        return {"y": rmsnorm(x, ins["w"], p["eps"], p["gemma"])}
    if op == "add_rmsnorm":
        res = x + ins["residual"]
        return {"residual": res, "x": rmsnorm(res, ins["w"], p["eps"], p["gemma"])}
    if op == "layernorm":
        return {"y": F.layer_norm(x, (x.shape[-1],), ins["w"], ins["b"], p["eps"])}
    if op == "rope":
        pos = ins["pos"].to(torch.int64)
        return {"q": rope(x, pos, p), "k": rope(ins["k"], pos, p)}
    if op == "act":
        return {"y": ACT[p["fn"]](x)}
    if op == "gated":
        n = x.shape[-1] // 2
        return {"y": ACT[p["fn"]](x[:, :n]) * x[:, n:]}
    if op == "softmax":
        z = x / p["temperature"]
        return {"y": torch.log_softmax(z, -1) if p["log"] else torch.softmax(z, -1)}
    if op == "l2norm":
        return {"y": F.normalize(x, dim=-1, eps=p["eps"])}
    if op == "pool":
        rows, start = [], 0
        for n in p["lengths"]:
            seq = x[start : start + n]
            rows.append({"mean": seq.mean(0), "cls": seq[0], "last": seq[-1]}[p["mode"]])
            start += n
        y = torch.stack(rows)
        return {"y": F.normalize(y, dim=-1, eps=1e-12) if p["normalize"] else y}
    if op == "attention":
        return {"o": attention(ins["q"], ins["k"], ins["v"], p)}
    raise ValueError("unknown op " + op)


def main():
    dirname = sys.argv[1]
    with open(os.path.join(dirname, "cases.json")) as f:
        cases = json.load(f)
    for c in cases:
        ins = {name: load(dirname, spec) for name, spec in c["inputs"].items()}
        for name, ref in run(c, ins).items():
            ref.contiguous().numpy().astype("<f8").tofile(os.path.join(dirname, c["name"] + "." + name + ".ref"))
    print(len(cases), "cases, torch", torch.__version__)


if __name__ == "__main__":
    main()
