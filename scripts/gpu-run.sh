#!/usr/bin/env bash
# gpu-run.sh — on a GPU host with only the NVIDIA driver (no Go, no CUDA
# toolkit), run the bundle scripts/gpu-build.sh made (CGO-free binaries
# that load libcuda.so.1 at run time): first the fallback check (the same
# tcrt binary, pointed at a driver library that does not exist, runs on the
# CPU and says why), then correctness tests (GPU kernels against the CPU
# reference on fresh random inputs; TCRT_REQUIRE_GPU=1 turns a CUDA device
# that does not open into failures, not skips), then the benchmarks
# (GB/s), then, when `python3 -c 'import torch'` works, the same operations
# through PyTorch for a side-by-side ratio.
#
#   ./gpu-run.sh [LOGDIR]      (default: $OUT if set, else ./gpu-logs)
#
# Exit status: non-zero when the fallback check or a correctness test
# failed (benchmarks and the PyTorch comparison still run and are logged).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
logs=${1:-${OUT:-$here/gpu-logs}}
mkdir -p "$logs"
cd "$here"
status=0
{
	echo "commit: $(cat COMMIT 2>/dev/null || echo unknown)"
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>/dev/null || echo "nvidia-smi: not available"
} | tee "$logs/host.txt"

echo "== fallback" | tee "$logs/fallback.txt"
# The same binary without a usable driver: CPU, exit 0, the reason on the
# backend line.
if TCRT_BACKEND=auto TCRT_CUDA_LIB=/nonexistent ./tcrt -ops quantize -size small -explain >"$logs/fallback-run.txt" 2>&1 &&
	grep -q '^backend: cpu (auto: GPU not used: cuda: .*/nonexistent' "$logs/fallback-run.txt"; then
	echo "fallback: ok ($(grep '^backend:' "$logs/fallback-run.txt"))" | tee -a "$logs/fallback.txt"
else
	echo "fallback: FAILED" | tee -a "$logs/fallback.txt"
	cat "$logs/fallback-run.txt" | tee -a "$logs/fallback.txt"
	status=1
fi
# And with the driver: auto must open CUDA.
if ./tcrt -size small -explain >"$logs/tcrt.txt" 2>&1 && grep -q '^device: cuda' "$logs/tcrt.txt"; then
	echo "tcrt on the GPU: ok" | tee -a "$logs/fallback.txt"
else
	echo "tcrt on the GPU: FAILED" | tee -a "$logs/fallback.txt"
	head -5 "$logs/tcrt.txt" | tee -a "$logs/fallback.txt"
	status=1
fi

echo "== correctness" | tee "$logs/test.txt"
export TCRT_REQUIRE_GPU=1
for t in runtime.test runtime_cuda.test bench.test; do
	[ -x "./$t" ] || continue
	if ! "./$t" -test.v -test.count=1 -test.timeout=300s 2>&1 | tee -a "$logs/test.txt"; then
		status=1
	fi
done
# The GPU suite (ops/gpu_test.go): the same tests CI runs on the simulated
# SM86/SM89 device, here also on the real GPU (subtests .../cuda0); the
# SASS-kernel tests skip on GPUs other than sm_86..89.
if [ -x ./ops.test ]; then
	if ! ./ops.test -test.v -test.count=1 -test.timeout=300s -test.run '^TestGPU' 2>&1 | tee -a "$logs/test.txt"; then
		status=1
	fi
fi

echo "== benchmarks" | tee "$logs/bench.txt"
for t in runtime.test runtime_cuda.test; do
	./$t -test.run '^$' -test.bench 'CUDA' -test.benchtime=50x 2>&1 | tee -a "$logs/bench.txt"
done
# Through ops and the registry on the cuda backend (each call synchronous):
# per tensor the PTX kernels, the other granularities the host fallback.
if [ -x ./bench.test ]; then
	./bench.test -test.run '^$' -test.bench '^Benchmark(Quantize|Dequantize)$/.*/.*/.*/cuda$' -test.benchtime=20x 2>&1 | tee -a "$logs/bench.txt"
fi

if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
	echo "== pytorch" | tee "$logs/torch.txt"
	python3 gpu-torch.py "$logs/bench.txt" 2>&1 | tee -a "$logs/torch.txt"
else
	echo "PyTorch with CUDA not available: no comparison" | tee "$logs/torch.txt"
fi
echo "logs in $logs"
exit $status
