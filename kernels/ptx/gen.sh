#!/usr/bin/env sh
# gen.sh — assemble the PTX modules into the cubins the package embeds
# (sh kernels/ptx/gen.sh). Needs ptxas (scripts/cuda-tools.sh); the
# output is deterministic, and TestCubinsCurrent checks it is up to date.
set -eu
cd "$(dirname "$0")"
for m in f8 sg light; do
	for sm in 86 89; do
		ptxas -arch=sm_$sm -O3 "$m.ptx" -o "cubin/$m.sm_$sm.cubin"
	done
done
