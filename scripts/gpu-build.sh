#!/usr/bin/env bash
# gpu-build.sh — on a CPU machine, build what a GPU host needs to run tcrt's
# CUDA tests and benchmarks: test binaries built with -tags cuda (linked
# against the stub libcuda.so; the real driver is loaded on the GPU host),
# scripts/gpu-run.sh and the PyTorch comparison script.
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
cache=$(bash scripts/cuda-tools.sh)
# shellcheck disable=SC1091
source "$cache/env"
export CGO_ENABLED=1
for pkg in runtime ops bench; do
	go test -tags cuda -c -o "$out/$pkg.test" "./$pkg"
done
cp scripts/gpu-run.sh scripts/gpu-torch.py "$out/"
git rev-parse HEAD >"$out/COMMIT" 2>/dev/null || true
go version >"$out/GO_VERSION"
echo "$out"
