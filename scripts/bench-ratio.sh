#!/usr/bin/env bash
# bench-ratio.sh — a memory-bound benchmark as a fraction of the machine's
# memory copy bandwidth, on a machine whose bandwidth wanders (a shared
# virtual machine moves by ±15% from minute to minute). It builds the bench
# test binary once, then runs ROUNDS rounds of: BenchmarkMemcpy, then each
# benchmark matching PATTERN, one run each, back to back, and prints every
# round's GB/s and ratio and the medians over the rounds.
#
#   scripts/bench-ratio.sh 'Attention/decode' [ROUNDS=7]
#   scripts/bench-ratio.sh 'Gather/rows/f32/random'
#
# REF and UNIT replace the reference benchmark and the metric compared, for
# ratios of compute-bound benchmarks taken the same way:
#
#   REF='MatMul/f32/2048x2048x2048/cpu' UNIT=GFLOP/s \
#     scripts/bench-ratio.sh 'MatMul/(bf16|e4m3)/2048x2048x2048/cpu' 5
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pattern=${1:?usage: bench-ratio.sh PATTERN [ROUNDS]}
rounds=${2:-7}
ref=${REF:-Memcpy/67108864}
unit=${UNIT:-GB/s}
bin=$(mktemp -d)/bench.test
trap 'rm -rf "$(dirname "$bin")"' EXIT
(cd "$root" && go test -c -o "$bin" ./bench/)
gbs() { # benchmark pattern -> "name value" lines, value in $unit
	(cd "$root/bench" && "$bin" -test.run XXX -test.bench "$1" -test.count 1) |
		awk -v u="$unit" '/^Benchmark/ { for (i = 1; i < NF; i++) if ($(i+1) == u) print $1, $i }'
}
out=$(mktemp)
for r in $(seq "$rounds"); do
	m=$(gbs "$ref" | awk 'NR == 1 {print $2}')
	gbs "$pattern" | while read -r name v; do
		echo "$name $v $m" | awk '{printf "%s %.2f %.2f %.3f\n", $1, $2, $3, $2/$3}'
	done
done | tee "$out" | awk -v u="$unit" '{printf "round: %-60s %7.2f %s  ref %6.2f  ratio %.3f\n", $1, $2, u, $3, $4}'
echo "medians over $rounds rounds:"
for name in $(awk '{print $1}' "$out" | sort -u); do
	grep "^$name " "$out" | sort -k4 -n | awk -v n="$name" '{v[NR]=$2; m[NR]=$3; r[NR]=$4}
		END {i = int((NR+1)/2); printf "  %-60s ratio %.3f (its round: %.2f, ref %.2f)\n", n, r[i], v[i], m[i]}'
done
rm -f "$out"
