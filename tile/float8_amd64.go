package tile

import (
	"github.com/klauspost/cpuid/v2"
	"github.com/tcrt-go/tcrt/internal/cpufeat"
)

// useAVX512 allows the AVX-512 float8 kernels where cpuid reports AVX512F
// and the CPU feature mask (internal/cpufeat) does not hide it; tests turn
// it off to run the portable code on the same machine.
var useAVX512 = true

// avx512 reports whether the AVX-512 kernels run now.
func avx512() bool { return useAVX512 && cpufeat.Supports(cpuid.AVX512F) }

// Float8SIMD names the vector kernels the float8 slice codecs use ("avx512")
// or "" when they run the portable scalar code.
func Float8SIMD() string {
	if avx512() {
		return "avx512"
	}
	return ""
}

// decParams are one format's decode constants for the assembly kernel.
type decParams struct {
	shl      uint32 // 23 - m
	expAdj   uint32 // (127 - bias) << 23
	subScale uint32 // float32 bits of 2^(1 - bias - m)
	subLimit uint32 // 1 << m
	maxCode  uint32
	infCode  uint32 // 0x100 when the format has no infinity
}

var decParamTab = [2]decParams{
	{shl: 20, expAdj: 120 << 23, subScale: (127 - 9) << 23, subLimit: 8, maxCode: 0x7E, infCode: 0x100},
	{shl: 21, expAdj: 112 << 23, subScale: (127 - 16) << 23, subLimit: 4, maxCode: 0x7B, infCode: 0x7C},
}

//go:noescape
func encF32AVX512(dst *uint8, src *float32, n int, scale float32, p *encParams)

//go:noescape
func encF32VecAVX512(dst *uint8, src, scales *float32, n int, p *encParams)

//go:noescape
func decF32AVX512(dst *float32, src *uint8, n int, scale float32, p *decParams)

//go:noescape
func decF32VecAVX512(dst *float32, src *uint8, scales *float32, n int, p *decParams)

//go:noescape
func absMaxAVX512(src *float32, n int) uint32

func encF32(d DType, dst []uint8, src []float32, scale float32, mode OverflowMode) {
	n := len(src) &^ 15
	if avx512() && n > 0 {
		encF32AVX512(&dst[0], &src[0], n, scale, &encParamTab[fmtIndex(d)][mode])
	} else {
		n = 0
	}
	encF32Go(d, dst[n:], src[n:], scale, mode)
}

func encF32Vec(d DType, dst []uint8, src, scales []float32, mode OverflowMode) {
	n := len(src) &^ 15
	if avx512() && n > 0 {
		encF32VecAVX512(&dst[0], &src[0], &scales[0], n, &encParamTab[fmtIndex(d)][mode])
	} else {
		n = 0
	}
	encF32VecGo(d, dst[n:], src[n:], scales[n:], mode)
}

func decF32(d DType, dst []float32, src []uint8, scale float32) {
	n := len(src) &^ 15
	if avx512() && n > 0 {
		decF32AVX512(&dst[0], &src[0], n, scale, &decParamTab[fmtIndex(d)])
	} else {
		n = 0
	}
	decF32Go(d, dst[n:], src[n:], scale)
}

func decF32Vec(d DType, dst []float32, src []uint8, scales []float32) {
	n := len(src) &^ 15
	if avx512() && n > 0 {
		decF32VecAVX512(&dst[0], &src[0], &scales[0], n, &decParamTab[fmtIndex(d)])
	} else {
		n = 0
	}
	decF32VecGo(d, dst[n:], src[n:], scales[n:])
}

func absMaxBits(src []float32) uint32 {
	n := len(src) &^ 15
	var m uint32
	if avx512() && n > 0 {
		m = absMaxAVX512(&src[0], n)
	} else {
		n = 0
	}
	return max(m, absMaxGo(src[n:]))
}

//go:noescape
func encF32BlocksAVX512(dst *uint8, src, scales *float32, nblocks, blockLen int, p *encParams)

//go:noescape
func decF32BlocksAVX512(dst *float32, src *uint8, scales *float32, nblocks, blockLen int, p *decParams)

//go:noescape
func absMaxBlocksAVX512(dst *uint32, src *float32, nblocks, blockLen int)

// encF32Blocks: src holds len(scales) blocks of bl values (bl > 0).
func encF32Blocks(d DType, dst []uint8, src, scales []float32, bl int, mode OverflowMode) {
	if avx512() && bl%16 == 0 && len(scales) > 0 {
		encF32BlocksAVX512(&dst[0], &src[0], &scales[0], len(scales), bl, &encParamTab[fmtIndex(d)][mode])
		return
	}
	encF32BlocksGo(d, dst, src, scales, bl, mode)
}

func decF32Blocks(d DType, dst []float32, src []uint8, scales []float32, bl int) {
	if avx512() && bl%16 == 0 && len(scales) > 0 {
		decF32BlocksAVX512(&dst[0], &src[0], &scales[0], len(scales), bl, &decParamTab[fmtIndex(d)])
		return
	}
	decF32BlocksGo(d, dst, src, scales, bl)
}

func absMaxBlocks(dst []uint32, src []float32, bl int) {
	if avx512() && bl%16 == 0 && len(dst) > 0 {
		absMaxBlocksAVX512(&dst[0], &src[0], len(dst), bl)
		return
	}
	absMaxBlocksGo(dst, src, bl)
}
