#!/usr/bin/env python3
"""gpu-torch.py BENCH_LOG — time tcrt's benchmarked GPU operations through
PyTorch on the same device and print, for each tcrt benchmark line in
BENCH_LOG, PyTorch's GB/s and the ratio tcrt/PyTorch. Bytes counted the
same way (read plus written)."""
import re
import sys

import torch

def gbps(fn, nbytes, iters=50):
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return nbytes * iters / (start.elapsed_time(end) / 1e3) / 1e9

def torch_op(name):
    """A closure and its bytes for a tcrt benchmark name, or None."""
    m = re.match(r"BenchmarkCUDAMemcpy/(\d+)/cuda", name)
    if m:
        n = int(m.group(1))
        src = torch.empty(n, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        return (lambda: dst.copy_(src)), 2 * n
    m = re.match(r"BenchmarkCUDAF8/(quantize|dequantize)/(tensor|row)/(e4m3|e5m2)/(\d+)x(\d+)/cuda", name)
    if m:
        kind, layout, fmt, rows, cols = m.group(1), m.group(2), m.group(3), int(m.group(4)), int(m.group(5))
        f8 = torch.float8_e4m3fn if fmt == "e4m3" else torch.float8_e5m2
        x = torch.randn(rows, cols, device="cuda")
        scale = torch.ones(rows, 1, device="cuda") if layout == "row" else torch.ones((), device="cuda")
        if kind == "quantize":
            return (lambda: (x * scale).to(f8)), 5 * rows * cols
        q = x.to(f8)
        return (lambda: q.to(torch.float32) * scale), 5 * rows * cols
    m = re.match(r"Benchmark(Quantize|Dequantize)/(e4m3|e5m2)/(tensor|row)/(\d+)/cuda", name)
    if m:
        # bench/quant_test.go: 4096 columns, per tensor a given scale, per
        # row scales from the amax; inverse scales written.
        kind, fmt, gran, n = m.group(1), m.group(2), m.group(3), int(m.group(4))
        cols = 4096
        rows = n // cols
        f8 = torch.float8_e4m3fn if fmt == "e4m3" else torch.float8_e5m2
        fmax = torch.finfo(f8).max
        x = torch.randn(rows, cols, device="cuda")
        nsc = rows if gran == "row" else 1
        nbytes = 5 * n + 4 * nsc
        inv = torch.empty(nsc, 1, device="cuda") if gran == "row" else torch.empty((), device="cuda")
        if kind == "Quantize":
            if gran == "tensor":
                scale = torch.full((), 64.0, device="cuda")
                def q():
                    torch.reciprocal(scale, out=inv)
                    return (x * scale).to(f8)
                return q, nbytes
            def qr():
                s = fmax / x.abs().amax(dim=1, keepdim=True)
                torch.reciprocal(s, out=inv)
                return (x * s).to(f8)
            return qr, nbytes
        q = x.to(f8)
        inv.fill_(0.5)
        return (lambda: q.to(torch.float32) * inv), nbytes
    m = re.match(r"BenchmarkCUDASG/(gather-rows|scatter-add)(?:-nocheck)?/f32/(\d+)x(\d+)/cuda", name)
    if m:
        kind, rows, cols = m.group(1), int(m.group(2)), int(m.group(3))
        table = torch.zeros(rows, cols, device="cuda")
        other = torch.zeros(rows, cols, device="cuda")
        idx = torch.randperm(rows, device="cuda")  # int64, no contention
        nbytes = 8 * rows + 4 * rows * cols * (2 if kind == "gather-rows" else 3)
        if kind == "gather-rows":
            return (lambda: torch.index_select(table, 0, idx, out=other)), nbytes
        return (lambda: table.index_add_(0, idx, other)), nbytes
    return None

def main():
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    line = re.compile(r"^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+.*?([\d.]+) GB/s")
    for text in open(sys.argv[1]):
        m = line.match(text)
        if not m:
            continue
        name, ours = m.group(1), float(m.group(2))
        op = torch_op(name)
        if op is None:
            continue
        theirs = gbps(*op)
        print(f"{name}\ttcrt {ours:.1f} GB/s\ttorch {theirs:.1f} GB/s\tratio {ours / theirs:.2f}")

if __name__ == "__main__":
    main()
