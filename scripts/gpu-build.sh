#!/usr/bin/env bash
# gpu-build.sh — on any machine with Go (no CUDA toolkit, no cgo), build
# what a GPU host needs to run tcrt's CUDA tests and benchmarks: CGO-free
# test binaries and the tcrt command, which load libcuda.so.1 at run time
# (runtime/cuda/driver, purego), plus scripts/gpu-run.sh and the PyTorch
# comparison script. The GPU host needs only the NVIDIA driver.
#
#   scripts/gpu-build.sh [DIR]        (default DIR: gpu-bundle)
#
# Copy DIR to the GPU host and run DIR/gpu-run.sh there (no Go needed).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/gpu-bundle}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$root"
export CGO_ENABLED=0 GOOS=${GOOS:-linux} GOARCH=${GOARCH:-amd64}
for pkg in runtime runtime/cuda ops bench; do
	go test -c -o "$out/$(echo "$pkg" | tr / _).test" "./$pkg"
done
go build -o "$out/tcrt" ./bench/cmd/tcrt
cp scripts/gpu-run.sh scripts/gpu-torch.py "$out/"
git rev-parse HEAD >"$out/COMMIT" 2>/dev/null || true
go version >"$out/GO_VERSION"
echo "$out"
