#!/usr/bin/env bash
# openblas-ratio.sh — tcrt's f32 matmul as a fraction of OpenBLAS's (numpy's)
# on the same shapes, in one run: it builds the bench test binary once, then
# runs ROUNDS rounds of, for each thread count in THREADS: tcrt's
# BenchmarkMatMul/f32/2048x2048x2048 and BenchmarkMatMulSkinny (decode
# shapes, x·W and x·Wᵀ), then numpy timing the same products, and prints
# the medians over the rounds of both GFLOP/s figures and of their ratio.
#
#   scripts/openblas-ratio.sh [ROUNDS=5]
#   THREADS='1 2' SHAPES='MatMulSkinny/f32/m1/' scripts/openblas-ratio.sh 5
#
# It needs /usr/bin/python3 with numpy on OpenBLAS; on Debian:
#   apt-get install -y python3-numpy libopenblas0-pthread
# (the script checks that OpenBLAS is the library numpy loaded). Thread
# counts are pinned on both sides: TCRT_THREADS and GOMAXPROCS for tcrt,
# OPENBLAS_NUM_THREADS for numpy. Test-only: nothing in the Go module uses it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-5}
threads=${THREADS:-1 2}
shapes=${SHAPES:-MatMul/f32/2048x2048x2048/cpu|MatMulSkinny/f32/}
benchtime=${BENCHTIME:-0.3s}
py=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" -c 'import numpy' 2>/dev/null || {
	echo "openblas-ratio.sh: $py has no numpy (apt-get install -y python3-numpy libopenblas0-pthread)" >&2
	exit 1
}
(cd "$root" && go test -c -o "$tmp/bench.test" ./bench/)
cat >"$tmp/np.py" <<'PY'
# Reads keys ("f32/2048x2048x2048" or "f32/m<M>/<N>x<K>/bN|bT") on stdin and
# prints "key GFLOP/s" for numpy's matmul of each, timed as Go's benchmarks
# are: one warm-up call, then a loop of at least BENCHTIME seconds.
import os, re, sys, time
import numpy as np
a = np.ones((64, 64), np.float32); a @ a
libs = {l.split()[-1] for l in open("/proc/self/maps") if "blas" in l}
if not any("openblas" in l for l in libs):
    sys.exit("numpy is not on OpenBLAS: %s" % sorted(libs))
bt = float(os.environ["BENCHTIME"].rstrip("s"))
rng = np.random.default_rng(1)
for key in sys.stdin.read().split():
    m = re.fullmatch(r"f32/(\d+)x(\d+)x(\d+)", key)
    if m:
        M, N, K = map(int, m.groups()); trans = False
    else:
        m = re.fullmatch(r"f32/m(\d+)/(\d+)x(\d+)/(bN|bT)", key)
        M, N, K = map(int, m.groups()[:3]); trans = m.group(4) == "bT"
    x = rng.standard_normal((M, K), np.float32)
    w = rng.standard_normal((N, K) if trans else (K, N), np.float32)
    w = w.T if trans else w
    d = np.empty((M, N), np.float32)
    np.matmul(x, w, out=d)
    n, t0 = 0, time.perf_counter()
    while True:
        np.matmul(x, w, out=d); n += 1
        t = time.perf_counter() - t0
        if t >= bt:
            break
    print(key, 2 * M * N * K * n / t / 1e9)
PY
tcrt() { # thread count -> "key GFLOP/s" lines
	(cd "$root/bench" && TCRT_THREADS=$1 "$tmp/bench.test" -test.run XXX -test.cpu "$1" \
		-test.bench "$shapes" -test.benchtime "$benchtime" -test.count 1) |
		awk '/^Benchmark/ { for (i = 1; i < NF; i++) if ($(i+1) == "GFLOP/s") {
			k = $1; sub(/^BenchmarkMatMul(Skinny)?\//, "", k); sub(/\/cpu(-[0-9]+)?$/, "", k); print k, $i } }'
}
for r in $(seq "$rounds"); do
	for t in $threads; do
		tcrt "$t" >"$tmp/t"
		awk '{print $1}' "$tmp/t" | OPENBLAS_NUM_THREADS=$t BENCHTIME=$benchtime "$py" "$tmp/np.py" >"$tmp/o"
		join <(sort "$tmp/t") <(sort "$tmp/o") | awk -v t="$t" -v r="$r" '{printf "%s t%s %.2f %.2f %.3f\n", $1, t, $2, $3, $2/$3}' |
			tee -a "$tmp/all" | awk -v r="$r" '{printf "round %d: %-28s %-3s tcrt %8.2f  openblas %8.2f  ratio %.3f\n", r, $1, $2, $3, $4, $5}'
	done
done
echo "medians over $rounds rounds (GFLOP/s; AVX levels: $(grep -o -w 'avx2\|avx512f\|fma' /proc/cpuinfo | sort -u | tr '\n' ' '))"
awk '{print $1, $2}' "$tmp/all" | sort -u | while read -r key t; do
	awk -v k="$key" -v t="$t" '$1 == k && $2 == t' "$tmp/all" | awk -v k="$key" -v t="$t" '
		{ a[NR] = $3; b[NR] = $4; c[NR] = $5 }
		function med(v,   n, i, j, x) { n = NR; for (i = 2; i <= n; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j+1] = v[j]; v[j+1] = x }
			return n % 2 ? v[(n+1)/2] : (v[n/2] + v[n/2+1]) / 2 }
		END { printf "  %-28s %-3s tcrt %8.2f  openblas %8.2f  ratio %.3f\n", k, t, med(a), med(b), med(c) }'
done
