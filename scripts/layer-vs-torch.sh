#!/usr/bin/env bash
# layer-vs-torch.sh — one Llama 3.2 1B-shaped decoder layer's decode step,
# tcrt (BenchmarkLlamaLayerDecode, f32 and bf16 weights) against PyTorch
# with OpenBLAS (scripts/layer-torch.py, f32), both at one thread,
# alternating in ROUNDS rounds; prints each round's milliseconds per step
# and the medians of torch/tcrt (above 1: tcrt is faster).
#
#   scripts/layer-vs-torch.sh [ROUNDS=5] [STEPS=32]
#
# Needs /usr/bin/python3 with torch (Debian: apt-get install python3-torch).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-5}
steps=${2:-32}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go test -c -o "$tmp/llama.test" ./model/llama/)
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 TCRT_THREADS=1 GOMAXPROCS=1
for r in $(seq "$rounds"); do
	(cd "$tmp" && "$tmp/llama.test" -test.run '^$' -test.bench 'LlamaLayerDecode/(f32|bf16)/' -test.benchtime "${steps}x") |
		awk '/^BenchmarkLlamaLayerDecode\/f32/ {f = $3} /^BenchmarkLlamaLayerDecode\/bf16/ {b = $3}
			END {printf "%s %s ", f, b}'
	/usr/bin/python3 "$root/scripts/layer-torch.py" "$steps" 1 | awk '{print $2}'
done | tee "$tmp/out" | awk '{printf "round: tcrt f32 %6.2f ms  tcrt bf16 %6.2f ms  torch f32 %6.2f ms\n", $1/1e6, $2/1e6, $3/1e6}'
med() { awk "{print $1}" "$tmp/out" | sort -g | awk '{v[NR] = $1} END {printf "%.3f", v[int((NR+1)/2)]}'; }
echo "medians over $rounds rounds: torch/tcrt f32 $(med '$3/$1'), torch/tcrt bf16 $(med '$3/$2')"
