package mma

import "fmt"

// AttnConfig selects one flash-attention kernel: head dimension D (64,
// 128 or 256) and the element type of Q, K, V and O.
type AttnConfig struct {
	D  int
	In Input
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
func (c AttnConfig) Name() string { return fmt.Sprintf("tcrt_mma_attn_d%d_%s", c.D, c.In) }

// AttnVariants lists every attention kernel of the module.
func AttnVariants() []AttnConfig {
	var out []AttnConfig
	for _, d := range []int{64, 128, 256} {
		for _, in := range []Input{F16, BF16} {
			out = append(out, AttnConfig{D: d, In: in})
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

var attnParamTypes = map[string]string{"Q": "u64", "K": "u64", "V": "u64", "O": "u64", "LSE": "u64",
	"scale": "f32", "softcap": "f32", "wl": "s32", "wr": "s32"}

// tileRows describes a shared tile of rows of L 16-byte chunks with the
// module's swizzle (chunk c of row r at c ^ (r & 7)).
type tileRows struct{ rows, l, off int }

// attnTiles returns the Q tile and the K and V tiles of stage 0 (stage 1
// follows at kvStage bytes).
func (c AttnConfig) attnTiles() (q, k, v tileRows, kvStage int) {
	l := c.D / 8
	q = tileRows{AttnBM, l, 0}
	kvb := c.BN() * c.D * 2
	k = tileRows{c.BN(), l, AttnBM * c.D * 2}
	v = tileRows{c.BN(), l, k.off + kvb}
	return q, k, v, 2 * kvb
}

// copyDst is the byte offset thread t's i-th 16-byte copy writes (threads
// nt): row t/L + i·(nt/L), chunk t % L, swizzled.
func (tr tileRows) copyDst(t, i, nt int) (row, ch, off int) {
	row, ch = t/tr.l+i*(nt/tr.l), t%tr.l
	return row, ch, swz(row, ch, tr.l) + tr.off
}

// attnLdsm is the byte offset lane passes to an ldmatrix.x4 (as the kernel
// forms it: a register for x % 4, an immediate for x / 4 and the other
// index): kind 'q' (A fragment of query rows w..w+15, d step x), 'k' (B
// fragments of keys 16y..16y+15, d step x, non-transposed), 'v' (B
// fragments of d 16x..16x+15, key step y, .trans).
func (tr tileRows) attnLdsm(kind byte, lane, w, x, y int) int {
	l7, h3, h4 := lane&7, (lane>>3)&1, lane>>4
	var row, ch int
	switch kind {
	case 'q':
		row, ch = w+(lane&15), h4
	case 'k':
		row, ch = y*16+h4*8+l7, h3
	default:
		row, ch = y*16+h3*8+l7, h4
	}
	return ((ch+2*(x%4))^l7)*16 + row*tr.l*16 + (x/4)*128 + tr.off
}
