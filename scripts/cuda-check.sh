#!/usr/bin/env bash
# cuda-check.sh — keep the -tags cuda build from breaking silently, on a
# machine without a GPU: vet it and compile and link every package's test
# binary with -tags cuda against cuda.h and the stub libcuda.so from
# scripts/cuda-tools.sh, then run the PTX checks (ptxas for sm_80, sm_86,
# sm_89, sm_90) with CI=true so missing tools fail instead of skipping,
# and check that the default build is CGO-free, links purego (the driver
# loaded at run time) and not gorgonia.org/cu. Of what is built with the
# tag only runtime/cuda's fake-driver tests run, against
# runtime/cuda/testdata/fakecuda.c as libcuda.so.1 (cu's init exits
# without a working driver).
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

echo "cuda-check: the -tags cuda driver (gorgonia.org/cu) against the fake libcuda"
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
cc -shared -fPIC -O1 -Wl,-soname,libcuda.so.1 -o "$fake/libcuda.so.1" runtime/cuda/testdata/fakecuda.c
go test -tags cuda -c -o "$fake/cuda.test" ./runtime/cuda
(cd runtime/cuda && LD_LIBRARY_PATH="$fake" TCRT_FAKE_CUDA="$fake/libcuda.so.1" "$fake/cuda.test" -test.count=1 -test.run 'Fake')

echo "cuda-check: default build stays CGO-free, loading the driver with purego"
CGO_ENABLED=0 go build ./...
deps=$(CGO_ENABLED=0 go list -deps ./ops)
grep -qx 'github.com/ebitengine/purego' <<<"$deps" || { echo "cuda-check: ./ops does not link purego" >&2; exit 1; }
if grep -q '^gorgonia.org/cu' <<<"$deps"; then echo "cuda-check: the default build links gorgonia.org/cu" >&2; exit 1; fi

echo "cuda-check: ptxas checks"
CI=true go test -count=1 -run 'TestPTXAssembles|TestCubinsCurrent' ./kernels/ptx
echo "cuda-check: ok"
