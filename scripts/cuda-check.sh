#!/usr/bin/env bash
# cuda-check.sh — keep the -tags cuda build from breaking silently, on a
# machine without a GPU: vet it and compile and link every package's test
# binary with -tags cuda against cuda.h and the stub libcuda.so from
# scripts/cuda-tools.sh, then run the PTX checks (ptxas for sm_80, sm_86,
# sm_89, sm_90) with CI=true so missing tools fail instead of skipping,
# and check that the default build is CGO-free, links purego (the driver
# loaded at run time) and not gorgonia.org/cu. Nothing built with the tag
# runs here: cu's init exits without a GPU.
#
#   scripts/cuda-check.sh            (CI calls this; TCRT_CUDA_CACHE is honoured)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cache=$(bash scripts/cuda-tools.sh)
# shellcheck disable=SC1091
source "$cache/env"
export CGO_ENABLED=1

echo "cuda-check: go vet -tags cuda ./..."
go vet -tags cuda ./...

echo "cuda-check: go build -tags cuda ./... (commands link too)"
go build -tags cuda ./...
for cmd in $(go list -tags cuda -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' ./...); do
	go build -tags cuda -o /dev/null "$cmd"
done

echo "cuda-check: linking test binaries with -tags cuda"
for pkg in $(go list -tags cuda ./...); do
	go test -tags cuda -c -o /dev/null "$pkg"
done

echo "cuda-check: default build stays CGO-free, loading the driver with purego"
CGO_ENABLED=0 go build ./...
deps=$(CGO_ENABLED=0 go list -deps ./ops)
grep -qx 'github.com/ebitengine/purego' <<<"$deps" || { echo "cuda-check: ./ops does not link purego" >&2; exit 1; }
if grep -q '^gorgonia.org/cu' <<<"$deps"; then echo "cuda-check: the default build links gorgonia.org/cu" >&2; exit 1; fi

echo "cuda-check: ptxas checks"
CI=true go test -count=1 -run 'TestPTXAssembles|TestCubinsCurrent' ./kernels/ptx
echo "cuda-check: ok"
