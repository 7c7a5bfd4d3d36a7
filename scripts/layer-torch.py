#!/usr/bin/python3
"""One decode step of one Llama 3.2 1B-shaped decoder layer in PyTorch.

The PyTorch side of scripts/layer-vs-torch.sh: hidden 2048, 32 query and 8
KV heads of 64, MLP 8192, f32 weights and activations (torch's CPU f32
linear runs on the system BLAS: OpenBLAS on Debian), at one thread. The
sequence has a 128-token context and grows to 255, as in tcrt's
BenchmarkLlamaLayerDecode: RMSNorm, the fused QKV projection, RoPE, the KV
append, grouped-query attention over the cache, the output projection and
residual, RMSNorm, the fused gate|up projection, SiLU·up, the down
projection and residual. Prints "ns/step N" (the median of ROUNDS timed
runs of STEPS steps each).

Each projection is torch.mv (OpenBLAS's sgemv), the fastest form here:
F.linear on a 1-row input goes through addmm, about 4x slower on this
machine (Debian's torch 1.13); LINEAR=1 uses it instead.

    OPENBLAS_NUM_THREADS=1 scripts/layer-torch.py [STEPS=64] [ROUNDS=3]
"""
import os
import sys
import time

import torch
import torch.nn.functional as F

H, NH, NKV, HD, I = 2048, 32, 8, 64, 8192
CTX0, CTXMAX = 128, 256
EPS, THETA = 1e-5, 500000.0


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    torch.set_num_threads(1)
    torch.manual_seed(1)
    qd, kvd = NH * HD, NKV * HD
    w = lambda *s: torch.randn(*s) * 0.02
    wqkv, wo, wgu, wd = w(qd + 2 * kvd, H), w(H, qd), w(2 * I, H), w(H, I)
    n1, n2 = 1 + w(H), 1 + w(H)
    kc, vc = w(NKV, CTXMAX, HD), w(NKV, CTXMAX, HD)
    inv = 1.0 / THETA ** (torch.arange(0, HD, 2, dtype=torch.float64) / HD)
    ang = torch.arange(CTXMAX, dtype=torch.float64)[:, None] * inv[None, :]
    cos, sin = ang.cos().float(), ang.sin().float()

    def norm(x, g):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * g

    def rope(t, p):  # t [heads, HD], rotate-half layout
        a, b = t[:, : HD // 2], t[:, HD // 2:]
        c, s = cos[p], sin[p]
        return torch.cat((a * c - b * s, a * s + b * c), -1)

    if os.environ.get("LINEAR") == "1":
        def mul(m, v):  # m·v, as F.linear(v, m)
            return F.linear(v[None], m)[0]
    else:
        mul = torch.mv

    def step(x, p):  # x [H]
        h = norm(x, n1)
        qkv = mul(wqkv, h)
        q = rope(qkv[:qd].view(NH, HD), p)
        kc[:, p] = rope(qkv[qd:qd + kvd].view(NKV, HD), p)
        vc[:, p] = qkv[qd + kvd:].view(NKV, HD)
        q = q.view(NKV, NH // NKV, HD)
        s = torch.bmm(q, kc[:, : p + 1].transpose(1, 2)) * HD ** -0.5
        o = torch.bmm(torch.softmax(s, -1), vc[:, : p + 1]).reshape(qd)
        x = x + mul(wo, o)
        g, u = mul(wgu, norm(x, n2)).split(I)
        return x + mul(wd, F.silu(g) * u)

    x = w(H)
    p = CTX0
    times = []
    with torch.inference_mode():
        for _ in range(4):  # warm-up
            x = step(x, p)
        for _ in range(rounds):
            t = time.perf_counter_ns()
            for _ in range(steps):
                if p >= CTXMAX:
                    p = CTX0
                x = step(x, p) * 0.5  # keep the values bounded
                p += 1
            times.append((time.perf_counter_ns() - t) / steps)
    times.sort()
    print("ns/step %d" % times[len(times) // 2])


if __name__ == "__main__":
    main()
