package mma

import (
	"fmt"

	"github.com/tcrt-go/tcrt/tile"
)

// AttnConfig selects one flash-attention kernel: head dimension D (64,
// 128 or 256) and the element type of Q, K, V and O.
type AttnConfig struct {
	D  int
	In tile.DType // one of AttnInputs
	// Paged selects the decode kernel: keys and values in a paged cache
	// (block table and per-sequence lengths in device memory) and split-KV
	// (AttnPagedParamNames).
	Paged bool
}

// AttnBM is the query rows of a CTA (4 warps of 16 rows).
const AttnBM = 64

// AttnThreads is the attention block size.
const AttnThreads = 128

// BN is the keys of one KV block: 64, or 32 for D = 256 (to keep the
// double-buffered K and V tiles within sm_86's 99 KiB).
func (c AttnConfig) BN() int {
	if c.D > 128 {
		return 32
	}
	return 64
}

// SharedBytes is the CTA's dynamic shared memory: the Q tile and two
// stages of K and V tiles.
func (c AttnConfig) SharedBytes() int { return AttnBM*c.D*2 + 2*2*c.BN()*c.D*2 }

// Name is the kernel's entry symbol.
func (c AttnConfig) Name() string {
	if c.Paged {
		return fmt.Sprintf("tcrt_mma_attn_paged_d%d_%s", c.D, c.In)
	}
	return fmt.Sprintf("tcrt_mma_attn_d%d_%s", c.D, c.In)
}

// CombineName is the symbol of the split-KV combine kernel for D and in.
func CombineName(d int, in tile.DType) string {
	return fmt.Sprintf("tcrt_mma_attn_combine_d%d_%s", d, in)
}

// AttnInputs lists the element types of Q, K, V and O (one type) the
// attention kernels cover.
func AttnInputs() []tile.DType { return []tile.DType{tile.F16, tile.BF16} }

// AttnVariants lists every attention kernel of the module.
func AttnVariants() []AttnConfig {
	var out []AttnConfig
	for _, d := range []int{64, 128, 256} {
		for _, in := range AttnInputs() {
			out = append(out, AttnConfig{D: d, In: in}, AttnConfig{D: d, In: in, Paged: true})
		}
	}
	return out
}

// AttnParamNames lists the attention kernel's parameters in order. Q, K,
// V, O (u64) address element (0, 0, 0, 0) of the launch's sequences; LSE
// (u64, 0: none) f32 values; nq, nk (u32) the query and key counts; then
// the element strides (u32) batch, seq, head of Q, K, V and O and batch,
// head of LSE; group (u32) = query heads per KV head; scale, softcap (f32;
// softcap 0: none); wl, wr (s32; -1 unbounded; causal passes wr = 0).
// CTA (x, y, z) computes query rows [64x, 64x+64) of query head y of
// sequence z.
var AttnParamNames = []string{"Q", "K", "V", "O", "LSE", "nq", "nk",
	"q_bs", "q_ss", "q_hs", "k_bs", "k_ss", "k_hs", "v_bs", "v_ss", "v_hs", "o_bs", "o_ss", "o_hs", "lse_bs", "lse_hs",
	"group", "scale", "softcap", "wl", "wr"}

// AttnPagedParamNames are the paged decode kernel's parameters:
// AttnParamNames, where K and V address page 0 (their batch stride is the
// page stride) and nk is ignored, followed by table (u64: BlocksPerSeq
// int32 page numbers a sequence), bps (u32 BlocksPerSeq), pshift (u32:
// log2 PageSize), lens (u64: int32 key count a sequence), splits (u32),
// chunk (u32: keys a split, a multiple of the kernel's BN), wsO and wsL
// (u64: with splits > 1 the f32 partial outputs, normalised, at
// ((z·HeadsQ + h)·nq + i)·D + d, and natural LSEs at (z·HeadsQ + h)·nq + i,
// z = b·splits + s; O and LSE are then not written). CTA z covers
// sequence z / splits, keys [s·chunk, (s+1)·chunk); heads (u32) is
// HeadsQ.
var AttnPagedParamNames = append(append([]string(nil), AttnParamNames...),
	"table", "bps", "pshift", "lens", "splits", "chunk", "wsO", "wsL", "heads")

// CombineParamNames are the combine kernel's parameters: wsO, wsL (the
// partials), O (u64, element (0,0,0,0)), LSE (u64, 0: none), o_bs, o_ss,
// o_hs, lse_bs, lse_hs, nq, splits (u32). CTA (i, h, b) of D threads
// merges row i of head h of sequence b.
var CombineParamNames = []string{"wsO", "wsL", "O", "LSE", "o_bs", "o_ss", "o_hs", "lse_bs", "lse_hs", "nq", "heads", "splits"}
