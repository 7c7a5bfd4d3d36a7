#!/usr/bin/env bash
# llama-vs-torch.sh — tcrt's Llama-family logits against Hugging Face's
# semantics in PyTorch (scripts/llama-torch.py), through TestAgainstTorch.
#
#   scripts/llama-vs-torch.sh                 every generated variant
#   scripts/llama-vs-torch.sh DIR [TOKENS]    one checkpoint directory
#
# With no argument the test writes a random checkpoint per variant with
# llamatest's writer (llama3/linear/yarn/dynamic RoPE, Qwen2 biases and
# window, a Mistral window shorter than the sequence, tied, GQA and MHA,
# head_dim != hidden/heads, f32/f16/bf16, sharded with an index, class
# defaults, real-repository file quirks). Each is run by tcrt on the CPU
# (a 13-token prefill, then 9 decode steps fed torch's greedy tokens) and
# by torch in float32 and natively in the checkpoint's dtype. It prints one
# table row per variant and torch mode: the largest |Δlogit| and relative
# difference over the prefill rows and over the decode rows, and how many
# positions have the same argmax. ROWS=1 adds one line per position.
# TOKENS is a comma-separated prompt for DIR (default 13 random ids).
#
# Needs /usr/bin/python3 with torch (or TCRT_PYTHON=interpreter).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -ge 1 ]; then
	TCRT_TORCH_DIR=$(cd "$1" && pwd)
	export TCRT_TORCH_DIR
fi
if [ $# -ge 2 ]; then
	export TCRT_TORCH_TOKENS=$2
fi
if [ -n "${ROWS:-}" ]; then
	export TCRT_TORCH_ROWS=1
fi
cd "$root"
status=0
CI= go test ./model/llama -run '^TestAgainstTorch$' -count=1 -v >"${TMPDIR:-/tmp}/llama-vs-torch.$$" 2>&1 || status=$?
sed -n 's/^ *torch_test\.go:[0-9]*: //p; /^--- \(FAIL\|SKIP\)/p; /^ *--- FAIL/p; /^FAIL/p' "${TMPDIR:-/tmp}/llama-vs-torch.$$"
grep -h -A3 'Error\|skip' "${TMPDIR:-/tmp}/llama-vs-torch.$$" | grep -v '^ *torch_test.go:[0-9]*: |' | head -40 || true
rm -f "${TMPDIR:-/tmp}/llama-vs-torch.$$"
exit $status
