#!/usr/bin/env sh
# gen.sh — rebuild the ptxas corpus: compile every PTX source (this
# directory's kernels and the repository's other ptxas inputs) for sm_86 and
# sm_89 into cubin/, write every code word of every ptxas-built cubin with
# nvdisasm's text into golden/, record their SHA-256 sums in inputs.sum,
# and rewrite the coverage baselines gaps.txt (decoder) and simgaps.txt
# (simulator).
# Needs ptxas and nvdisasm (scripts/cuda-tools.sh). TestCorpusCurrent checks
# the output is up to date.
set -eu
cd "$(dirname "$0")/../.."
go test -count=1 -run 'TestCorpusCurrent$' -update-corpus .
go test -count=1 -run 'TestCorpusCoverage$' -update-corpus .
go test -count=1 -run 'TestSimCoverage$' ./sim -update-corpus
