// Package mma holds tcrt's tensor-core matmul and attention kernels for every NVIDIA GPU
// from sm_80 on (A100, A10/RTX 30, L4/L40S, H100/H200, and later parts
// through the PTX), written as PTX by a Go generator (package gen, kernels/mma/gen) and
// assembled by ptxas: mma.sync.aligned.m16n8k16 (f16 or bf16 inputs, f32
// accumulators), ldmatrix.x4 (.trans for operands stored with K rows),
// a 3-stage cp.async.cg 16-byte pipeline in dynamic shared memory with
// XOR-swizzled tiles, and an epilogue staged through shared memory.
//
// Matmul kernels (Variants, 32): tiles 128x128 (8 warps of 64x32), 128x64 and
// 64x128 (4 warps of 64x32), 256x128 (8 warps of 64x64; 144 KiB of shared
// memory, so sm_80/sm_87/sm_90-class devices only); K 64 deep a stage;
// inputs f16 or bf16; layouts NN, TN (A stored
// K x M), NT (B stored N x K), TT; the output type (f32, f16 or bf16) is
// the out parameter. Every kernel applies
// D = act(alpha·acc + beta·C + bias) (C in D's type, bias f32, act none,
// ReLU, GELU or SiLU as kernels/sm86mm), or, when its kc parameter is not 0
// (f32 output), adds alpha·acc to D with red.global.add.f32 (split-K).
//
// Edges: M, N and K need not be multiples of anything. Each 16-byte copy
// is a cp.async with src-size: the bytes inside the matrix are read and
// the rest of the chunk zero-filled (0 bytes, from the operand's base
// address, for a chunk wholly outside), so no copy reads past a row's last
// element; the epilogue stores only elements inside M x N. Requirements:
// lda and ldb multiples of 8 elements and A and B 16-byte aligned (Check).
//
// Shared layout: an operand tile is R rows of L 16-byte chunks (A plain:
// TM rows of BK; A transposed: BK rows of TM; B likewise), chunk c of row r
// stored at c ^ (r & 7). Each cp.async phase (8 threads of one row) and
// each ldmatrix matrix (8 rows at one logical chunk) then covers the 8
// distinct 16-byte bank groups of a 128-byte line; TestBankConflicts
// checks every access, and TestModelMatMul runs the algorithm (copies,
// swizzle, ldmatrix and mma fragment layouts, split K) in Go against a
// reference on ragged shapes.
//
// Attention (AttnVariants, 6; attn.go, gen/emit_attn.go): FlashAttention-2
// prefill for D 64, 128, 256 and f16/bf16, 64 query rows a CTA (4 warps of
// 16), K/V blocks of 64 keys (32 for D 256) double-buffered by cp.async,
// online base-2 softmax, causal/window masks aligned bottom-right, GQA,
// soft-cap, LSE; PlanAttention makes one launch, or one a sequence for
// varlen and per-sequence KV lengths. No paged cache or split-KV decode
// kernel yet: decode runs the same kernel with one query row.
//
// The launch plans (PlanMatMul, PlanAttention: tile and split-K choice, grid, block,
// shared bytes, parameters) takes plain values, so that the runtime and
// the tests call the same code. Nothing here has run on a GPU: ptxas
// accepts every kernel for sm_80, sm_86, sm_89 and sm_90 with no spills
// (TestPTXAssembles), and the CPU model tests pass; the PTX text itself is
// unverified on silicon and in the simulator.
package mma
