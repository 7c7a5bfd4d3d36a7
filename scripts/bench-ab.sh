#!/usr/bin/env bash
# bench-ab.sh — the working tree's benchmarks against a base revision's, in
# one run: it builds the bench test binary of both (the base from
# `git archive BASE`, with the working tree's bench/ copied over it so both
# run the same benchmarks), then runs ROUNDS rounds of each benchmark
# matching PATTERN, base then new, and prints the medians over the rounds
# of UNIT (default GB/s) for each and of the ratio new/base.
#
#   scripts/bench-ab.sh main 'Attention/decode' [ROUNDS=5]
#   UNIT=GFLOP/s scripts/bench-ab.sh main 'MatMulSkinny/f32/m1/' 5
#
# Environment for both binaries (TCRT_CPU=avx2, TCRT_THREADS=1) passes
# through; BENCHTIME sets -test.benchtime (default 1s).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
base=${1:?usage: bench-ab.sh BASE PATTERN [ROUNDS]}
pattern=${2:?usage: bench-ab.sh BASE PATTERN [ROUNDS]}
rounds=${3:-5}
unit=${UNIT:-GB/s}
benchtime=${BENCHTIME:-1s}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/base"
(cd "$root" && git archive "$base" | tar -x -C "$tmp/base")
rm -rf "$tmp/base/bench" && cp -r "$root/bench" "$tmp/base/bench"
(cd "$tmp/base" && go test -c -o "$tmp/base.test" ./bench/)
(cd "$root" && go test -c -o "$tmp/new.test" ./bench/)
run() { # binary -> "name value" lines in $unit
	(cd "$root/bench" && "$1" -test.run XXX -test.bench "$pattern" -test.benchtime "$benchtime" -test.count 1) |
		awk -v u="$unit" '/^Benchmark/ { for (i = 1; i < NF; i++) if ($(i+1) == u) print $1, $i }'
}
for r in $(seq "$rounds"); do
	run "$tmp/base.test" >"$tmp/b"
	run "$tmp/new.test" >"$tmp/n"
	join <(sort "$tmp/b") <(sort "$tmp/n") | awk '{printf "%s %.3f %.3f %.3f\n", $1, $2, $3, $3/$2}' |
		tee -a "$tmp/all" | awk -v r="$r" -v u="$unit" '{printf "round %d: %-56s base %8.2f  new %8.2f %s  new/base %.3f\n", r, $1, $2, $3, u, $4}'
done
echo "medians over $rounds rounds ($unit; base $(cd "$root" && git rev-parse --short "$base"), new = working tree):"
for name in $(awk '{print $1}' "$tmp/all" | sort -u); do
	awk -v n="$name" '$1 == n' "$tmp/all" | awk -v n="$name" '
		{ a[NR] = $2; b[NR] = $3; c[NR] = $4 }
		function med(v,   i, j, x) { for (i = 2; i <= NR; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j+1] = v[j]; v[j+1] = x }
			return NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2 }
		END { printf "  %-56s base %8.2f  new %8.2f  new/base %.3f\n", n, med(a), med(b), med(c) }'
done
