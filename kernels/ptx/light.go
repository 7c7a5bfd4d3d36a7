package ptx

import "github.com/tcrt-go/tcrt/runtime/backend"

import _ "embed"

//go:embed light.ptx
var lightPTX []byte

//go:embed cubin/light.sm_86.cubin
var lightSM86 []byte

//go:embed cubin/light.sm_89.cubin
var lightSM89 []byte

// Light is the light-ops module (light.ptx): RMSNorm with the fused
// residual add, SiLU·mul, rotary embeddings, and the encoder side:
// activations with the CPU's bits, LayerNorm, softmax and L2
// normalisation.
//
//	tcrt_rmsnorm(x, res, y, w, rows, cols, ldx, ldr, ldy u64, eps f32, hasres, gemma, hasw, tx, tr, ty, tw u32)
//	tcrt_silu_mul(a, b, y, rows, cols, lda, ldb, ldy u64, ta, tb, ty u32)
//	tcrt_rope(x, y, cs, tokens, heads, hd, rot, ldx, ldy u64, tx, ty, inter u32)
//	tcrt_act(a, b, y, rows, cols, lda, ldb, ldy u64, ta, tb, ty, fn u32)
//	tcrt_layernorm(x, res, y, w, b, rows, cols, ldx, ldr, ldy u64, eps f32, hasres, hasw, hasb, tx, tr, ty, tw, tb u32)
//	tcrt_softmax(x, y, rows, cols, ldx, ldy u64, k, invt f32, log, tx, ty u32)
//	tcrt_l2norm(x, y, rows, cols, ldx, ldy u64, eps f32, tx, ty u32)
//	tcrt_elementwise(x, z, y, rows, cols, ldx, ldz, ldy, zrows u64, alpha f32, op, tx, tz, ty u32)
//	tcrt_pool(x, y, starts, nseq, cols, ldx, ldy u64, mode, norm u32, eps f32, tx, ty u32)
//
// tcrt_act computes SiLU (fn 0), the erf GELU (1) and the tanh GELU (2)
// with the CPU fast path's operations (fallback's silu32, gelu32 and
// geluTanh32: every product and sum rounded as there, exact division), so
// it writes the CPU's bits; tcrt_elementwise (add, mul, scale; op codes
// those of fallback.EltOp) rounds one float32 operation, as the CPU does,
// and writes its bytes, as tcrt_pool does without normalisation (mode
// codes those of fallback.PoolMode; starts holds nseq + 1 u64 row
// offsets). LayerNorm, softmax, L2 normalisation and tcrt_pool run one block of LightNormBlock threads a row, as RMSNorm does, with a
// block reduction whose order differs from the CPU's: they agree within
// the light ops' bounds (softmax with ex2.approx and lg2.approx, LayerNorm
// with rsqrt.approx).
//
// Element types are LightF32, LightF16 or LightBF16, one u32 parameter
// each; row strides are in elements. RMSNorm runs
// one block of LightNormBlock threads per row (grid.x = rows): a pass
// summing v² (v = x, or with hasres res + x rounded to res's type
// and stored), a warp-shuffle and shared-memory reduction, inv =
// rsqrt.approx(Σv²/cols + eps), and a pass writing v·inv·w (w + 1 with
// gemma; 1 without hasw). SiLU·mul is a grid-stride loop over
// rows·cols elements: y = a/(1 + ex2.approx(−a·log2 e))·b, b 0 for plain
// SiLU. Both compute in float32 with approximate exp, reciprocal and rsqrt
// (a few ulp of float32), so they agree with the CPU kernels within the
// light ops' bounds, not bit for bit. RoPE takes a table of cos and sin per
// token (rot/2 of each, from the host) and rounds each product and sum on
// its own, so it writes the CPU kernels' bits.
func Light() *backend.Module {
	return &backend.Module{Name: "light", PTX: lightPTX, PTXTarget: 80, Cubins: map[int][]byte{86: lightSM86, 89: lightSM89}}
}

// Kernels of module Light.
const (
	LightRMSNorm     = "tcrt_rmsnorm"
	LightSiluMul     = "tcrt_silu_mul"
	LightRoPE        = "tcrt_rope"
	LightAct         = "tcrt_act"
	LightLayerNorm   = "tcrt_layernorm"
	LightSoftmax     = "tcrt_softmax"
	LightL2Norm      = "tcrt_l2norm"
	LightElementwise = "tcrt_elementwise"
	LightPool        = "tcrt_pool"
)

// LightNormBlock is the block size of the row kernels (tcrt_rmsnorm,
// tcrt_layernorm, tcrt_softmax, tcrt_l2norm: their reductions assume it).
const LightNormBlock = 256

// Element type codes of module Light.
const (
	LightF32  uint32 = 0
	LightF16  uint32 = 1
	LightBF16 uint32 = 2
)
