// Package sm86attn holds the hand-scheduled SM86/SM89 flash-attention
// prefill kernels (the FlashAttention-2 structure): a CTA of 4 warps owns
// 64 query rows (16 a warp) of one query head of one sequence; the key
// and value tiles of 64 keys stream through shared memory in a two-stage
// LDGSTS.E.BYPASS.128 pipeline, XOR-swizzled so that LDSM reads them
// without bank conflicts; S = Q·Kᵀ by HMMA.16816.F32 (Q fragments stay in
// registers for the whole kernel, K fragments by LDSM.16.M88.4); the
// online softmax stays in registers (the row maximum across the quad by
// SHFL.BFLY, exp2 by MUFU.EX2 of one FFMA that folds scale·log2(e),
// running sums, the rescale of O); P is packed to f16/bf16 by F2FP in the
// S registers and fed as the A fragment of P·V, V fragments read by
// LDSM.16.MT88.4 (transposed). The epilogue divides by the row sum and
// stores O (f32, f16 or bf16) and the natural-log LSE.
//
// Conventions are those of fallback.AttentionRef: tensors [batch, seq,
// heads, headDim] with the head dimension contiguous and byte strides for
// the other three; query i of nq sits at position i + nk − nq (masks
// aligned bottom-right) and sees key j when j ≥ pos − windowLeft
// (windowLeft ≥ 0) and j ≤ pos + windowRight (windowRight ≥ 0; causal is
// windowRight 0); soft-cap cap·tanh(x/cap) of the scaled logit; a row that
// sees no key stores zeros and LSE −Inf; varlen through cu_seqlens
// (int32, batch+1 offsets) for queries and keys, empty sequences included.
// Key blocks that no row of the CTA sees are skipped; blocks every row
// sees in full run an unmasked loop body, the others (the causal diagonal,
// window edges, the key tail) a masked one.
//
// The same kernel serves decode: with GQA (group > 1) a CTA's rows are
// the query rows of all the query heads of one KV head (K/V read once per
// KV head); keys may come from a KV cache read in place (SeqLensKV;
// contiguous, or paged through a block table with Config.Paged); and
// split-KV runs several CTAs over one row set's keys, each writing a
// normalised f32 partial O and its LSE, which the combine kernel
// (gen.GenerateCombine) merges. Head dimension 256 runs 8 warps, each with
// half of the head dimension, the pair of a row tile adding its partial
// S through shared memory (Config.Wide); calls with at most 16 rows a CTA
// run the 16-row decode variant (Config.Decode, Select). PlanPrefill and
// PlanSplitKV turn plain
// values into launches; docs/sm86-attention.md has the budgets, the
// schedule and the cycle-model figures.
//
// The generator is package gen (kernels/sm86attn/gen), which only go
// generate and the tests link. Nothing here has run on a GPU.
package sm86attn

import (
	"fmt"

	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/tile"
)

// Inputs lists the element types of Q, K and V (one type) the kernels
// cover.
func Inputs() []tile.DType { return []tile.DType{tile.F16, tile.BF16} }

// Outputs lists the element types of O the kernels cover.
func Outputs() []tile.DType { return []tile.DType{tile.F32, tile.F16, tile.BF16} }

// Config selects a prefill variant.
type Config struct {
	In      tile.DType // one of Inputs
	Out     tile.DType // one of Outputs
	HeadDim int        // 64, 128 or 256
	// SoftCap compiles the soft-cap: the logit becomes cap·tanh(s·scale/cap)
	// (MUFU.TANH); the parameters carry scale/cap and cap·log2(e).
	SoftCap bool
	// Paged reads K and V from a paged KV cache: key j of sequence b is
	// row j & (page-1) of page BlockTable[b*blocksPerSeq + j>>log2(page)]
	// (the K/V batch stride is the page stride); SeqLensKV gives nk.
	Paged bool
	// Decode is the 16-row variant: a CTA owns one m16 row tile (one warp;
	// the pair of half-d warps at head dimension 256) and key blocks of
	// 16, for calls whose CTA rows (SeqQ·G') are at most 16, where a
	// 64-row CTA would compute at least 48 idle rows (see Select).
	Decode bool
}

// Name returns the kernel's symbol name.
func (c Config) Name() string {
	s := fmt.Sprintf("tcrt_sm86_attn_fwd_d%d_%s_%s", c.HeadDim, c.In, c.Out)
	if c.SoftCap {
		s += "_softcap"
	}
	if c.Paged {
		s += "_paged"
	}
	if c.Decode {
		s += "_r16"
	}
	return s
}

// Geometry constants: 64 query rows a CTA (4 warps of 16), key blocks of
// 64, two stages of K then V. Head dimension 256 differs (see wide):
// 8 warps, key blocks of 32 (Config.KeyBlock, Config.CTAThreads).
const (
	BlockQ  = 64
	BlockKV = 64
	Threads = 128
	Stages  = 2
)

// Wide is the head-dimension-256 layout: 8 warps, warps w and w+4 own the
// same 16 rows (w&3) and half h = w>>2 of the head dimension each: the
// warp keeps its half of Q (32 registers) and of O (64), computes the
// partial S = Q_h·K_hᵀ over its 128 columns, and the pair adds the two
// partials through shared memory (ExchangeBytes a warp) so that both run the
// same online softmax on the full S; P·V then fills the warp's half of O.
// The register map is d=128's; key blocks are 32 so that two stages of K
// and V (32 KiB each) and the exchange fit in 80 KiB of shared memory.
func (c Config) Wide() bool { return c.HeadDim == 256 }

// Rows is the query rows a CTA owns: 64, or 16 for the decode variant.
func (c Config) Rows() int {
	if c.Decode {
		return 16
	}
	return BlockQ
}

// RowTiles is the 16-row tiles of a CTA (the warps of one head-dimension
// half).
func (c Config) RowTiles() int { return c.Rows() / 16 }

// CTAThreads is the CTA size: a warp per row tile, twice that at head
// dimension 256 (128 or 256 threads; 32 or 64 for the decode variant).
func (c Config) CTAThreads() int {
	n := 32 * c.RowTiles()
	if c.Wide() {
		n *= 2
	}
	return n
}

// KeyBlock is the keys a block of the main loop: 64, 32 at head dimension
// 256, 16 for the decode variant.
func (c Config) KeyBlock() int {
	switch {
	case c.Decode:
		return 16
	case c.Wide():
		return BlockKV / 2
	}
	return BlockKV
}

// ExchangeBytes is one warp's partial-S exchange area (wide only): 16 rows ×
// KeyBlock f32, stored as each lane's 4 n-tile quads (STS.128).
const ExchangeBytes = 32 * 16 * 4

// RowBytes is one shared row of K or V (HeadDim halves).
func (c Config) RowBytes() int { return 2 * c.HeadDim }

// StageBytes is one stage: the K tile then the V tile.
func (c Config) StageBytes() int { return 2 * c.KeyBlock() * c.RowBytes() }

// SharedBytes is the dynamic shared memory: two stages (the Q tile is
// loaded into the second stage before the loop and read into registers),
// and at head dimension 256 the 8 warps' exchange areas.
func (c Config) SharedBytes() int {
	n := Stages * c.StageBytes()
	if c.Wide() {
		n += 2 * c.RowTiles() * ExchangeBytes
	}
	return n
}

// Parameter offsets in constant bank 0 (see Params).
// paramEnd is the parameter window's size in bytes.
const paramEnd = 0xd4

// Params is the parameter list of every variant: Q, K, V, O, LSE, CuSeqQ,
// CuSeqKV (u64; LSE and the cu_seqlens may be 0), then u32 byte strides
// (seq, head, batch) of Q, K, V and O, the LSE's head and batch strides in
// bytes, seqQ, seqKV, group (query heads per KV head), groupMagic, c
// (f32: scale·log2 e, or cap·log2 e with the soft-cap), capIn (f32:
// scale/cap), windowLeft and windowRight (s32, negative: unbounded; causal
// is windowRight 0), then SeqLensKV (u64: int32 key counts of a KV
// cache, or 0), splits, splitMagic, blocksPerSplit (u32: CTA x is
// qBlock*splits + split; split s takes key blocks [s*bps, (s+1)*bps)),
// oSplit and lseSplit (u32 bytes between the splits' O and LSE), a
// padding word, BlockTable (u64, int32 page numbers), blocksPerSeq,
// pageShift and pageMask (u32; read by the paged variants only), then
// the row packing G', its magic, low factor and -G' (u32): packed row r
// of CTA (x, y) is query r/G' of query head y*G' + r%G' (G' = group packs
// a KV head's query heads into one CTA, y being the KV head; G' = 1 is
// one query head a CTA, y the query head).
func Params() []cubin.Param {
	var p []cubin.Param
	for k := 0; k < 7; k++ {
		p = append(p, cubin.Param{Size: 8, Align: 8})
	}
	for k := 0; k < (0x90-0x38)/4; k++ {
		p = append(p, cubin.Param{Size: 4, Align: 4})
	}
	p = append(p, cubin.Param{Size: 8, Align: 8})
	for k := 0; k < (0xb0-0x98)/4; k++ { // (0xac is padding)
		p = append(p, cubin.Param{Size: 4, Align: 4})
	}
	p = append(p, cubin.Param{Size: 8, Align: 8})
	for k := 0; k < (paramEnd-0xb8)/4; k++ {
		p = append(p, cubin.Param{Size: 4, Align: 4})
	}
	return p
}

// Variants lists every prefill kernel the package ships.
func Variants() []Config {
	var out []Config
	for _, d := range []int{64, 128, 256} {
		for _, in := range Inputs() {
			for _, o := range Outputs() {
				for _, sc := range []bool{false, true} {
					for _, pg := range []bool{false, true} {
						for _, dec := range []bool{false, true} {
							out = append(out, Config{In: in, Out: o, HeadDim: d, SoftCap: sc, Paged: pg, Decode: dec})
						}
					}
				}
			}
		}
	}
	return out
}
