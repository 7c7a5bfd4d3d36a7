#!/usr/bin/env sh
# gen.sh — rebuild the nvcc corpus: compile every CUDA C++ source here with
# nvcc for sm_86 and sm_89 into cubin/ (a source's extra flags on a line
# "// nvcc-flags: ..."), and write every code word with nvdisasm's text into
# golden/ (their SHA-256 sums in inputs.sum). Needs nvcc and nvdisasm
# (scripts/cuda-tools.sh; source its env).
# TestNVCCCorpusCurrent checks the output is up to date.
#
# shim/ stands in for libcu++, which cooperative_groups.h includes and
# Debian's nvidia-cuda-dev does not ship; nvcc 11.8 refuses gcc 12, so
# without g++-11 it runs with --allow-unsupported-compiler
# (cudatools.NVCCHostFlags).
set -eu
cd "$(dirname "$0")/../.."
go test -count=1 -run 'TestNVCCCorpusCurrent$' -update-corpus .
