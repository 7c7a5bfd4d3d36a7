//go:build amd64 && !purego

package fallback

import "github.com/klauspost/cpuid/v2"

//go:generate sh -c "go run attn_bf16_gen.go > attn_bf16_amd64.s"

// The AVX512_BF16 kernels (attn_bf16_amd64.s, written by attn_bf16_gen.go):
// the prefill's two products on bf16 pairs with VDPBF16PS (see
// attnKernels.gemmBF16) and the decode logits (qk4BF16).

//go:noescape
func attnGemmBF16AVX512(c *float32, ldc int, a *byte, rsa, csa int, b *uint32, ldb int, kp, nc int, scale *float32, mul float32)

//go:noescape
func attnQK4BF16DPAVX512(s *float32, k *byte, ldk int, q *uint16, ldq, d, nk, pf int, scale float32)

//go:noescape
func attnPackPairsBF16AVX512(dst *uint32, r0, r1 *uint16, n int)

//go:noescape
func attnPackPairsF32BF16AVX512(dst *uint32, r0, r1 *float32, n int)

// attnBF16Features are the features of the avx512bf16 variant: those of
// avx512, AVX512BW for VPERMW and AVX512_BF16 for VDPBF16PS and
// VCVTNE2PS2BF16.
var attnBF16Features = []cpuid.FeatureID{cpuid.AVX512F, cpuid.AVX512VL, cpuid.AVX512BW, cpuid.AVX512BF16}

// attnBF16Variant is avx512bf16: avx512 plus the bf16 pair kernels, which
// take over the prefill when Q, K and V are all bf16 (attnRun.bf16), and
// the decode logits when Q and K are.
func attnBF16Variant(avx512 attnKernels) attnKernels {
	k := avx512
	k.name = "avx512bf16"
	k.features = attnBF16Features
	k.gemmBF16 = attnGemmBF16AVX512
	k.pairsBF16 = attnPackPairsBF16AVX512
	k.pairsF32BF16 = attnPackPairsF32BF16AVX512
	k.qk4BF16 = attnQK4BF16DPAVX512
	return k
}
