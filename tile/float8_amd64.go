package tile

import (
	"unsafe"

	"github.com/klauspost/cpuid/v2"
	"github.com/tcrt-go/tcrt/internal/cpufeat"
)

// float8Kernels is one instruction set's float8 kernels: width is the lane
// count (the contiguous kernels take a positive multiple of it, the block
// kernels a block length that is one).
type float8Kernels struct {
	name      string
	width     int
	features  []cpuid.FeatureID
	enc       func(dst *uint8, src *float32, n int, scale float32, p *encParams)
	encVec    func(dst *uint8, src, scales *float32, n int, p *encParams)
	dec       func(dst *float32, src *uint8, n int, scale float32, p *decParams)
	decVec    func(dst *float32, src *uint8, scales *float32, n int, p *decParams)
	absMax    func(src *float32, n int) uint32
	encBlocks func(dst *uint8, src, scales *float32, nblocks, blockLen int, p *encParams)
	decBlocks func(dst *float32, src *uint8, scales *float32, nblocks, blockLen int, p *decParams)
	amaxBlock func(dst *uint32, src *float32, nblocks, blockLen int)
	// decNT and decBlocksNT are dec and decBlocks with non-temporal stores
	// (dst 32-byte aligned), nil where the set has none.
	decNT       func(dst *float32, src *uint8, n int, scale float32, p *decParams)
	decBlocksNT func(dst *float32, src *uint8, scales *float32, nblocks, blockLen int, p *decParams)
}

// float8KernelTab lists the vector kernels, best first; the first whose
// features cpuid reports and the CPU feature mask (internal/cpufeat) leaves
// visible runs, at or below simdCap.
var float8KernelTab = [...]float8Kernels{
	{"avx512", 16, []cpuid.FeatureID{cpuid.AVX512F},
		encF32AVX512, encF32VecAVX512, decF32AVX512, decF32VecAVX512, absMaxAVX512,
		encF32BlocksAVX512, decF32BlocksAVX512, absMaxBlocksAVX512, nil, nil},
	{"avx2", 8, []cpuid.FeatureID{cpuid.AVX2, cpuid.F16C},
		encF32AVX2, encF32VecAVX2, decF32AVX2, decF32VecAVX2, absMaxAVX2,
		encF32BlocksAVX2, decF32BlocksAVX2, absMaxBlocksAVX2, decF32NTAVX2, decF32BlocksNTAVX2},
}

// simdKernels returns the vector kernels that run now, or nil.
func simdKernels() *float8Kernels { return kernelsAt(simdCap) }

// kernelsAt returns the best vector kernels allowed by limit (see simdCap), or
// nil.
func kernelsAt(limit int) *float8Kernels {
	for i := range float8KernelTab {
		k := &float8KernelTab[i]
		if len(float8KernelTab)-i <= limit && cpufeat.Supports(k.features...) {
			return k
		}
	}
	return nil
}

// Float8SIMD names the vector kernels the float8 slice codecs use ("avx512"
// or "avx2") or "" when they run the portable scalar code.
func Float8SIMD() string {
	if k := simdKernels(); k != nil {
		return k.name
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

//go:noescape
func encF32BlocksAVX512(dst *uint8, src, scales *float32, nblocks, blockLen int, p *encParams)

//go:noescape
func decF32BlocksAVX512(dst *float32, src *uint8, scales *float32, nblocks, blockLen int, p *decParams)

//go:noescape
func absMaxBlocksAVX512(dst *uint32, src *float32, nblocks, blockLen int)

//go:noescape
func encF32AVX2(dst *uint8, src *float32, n int, scale float32, p *encParams)

//go:noescape
func encF32VecAVX2(dst *uint8, src, scales *float32, n int, p *encParams)

//go:noescape
func decF32AVX2(dst *float32, src *uint8, n int, scale float32, p *decParams)

//go:noescape
func decF32VecAVX2(dst *float32, src *uint8, scales *float32, n int, p *decParams)

//go:noescape
func absMaxAVX2(src *float32, n int) uint32

//go:noescape
func encF32BlocksAVX2(dst *uint8, src, scales *float32, nblocks, blockLen int, p *encParams)

//go:noescape
func decF32BlocksAVX2(dst *float32, src *uint8, scales *float32, nblocks, blockLen int, p *decParams)

//go:noescape
func absMaxBlocksAVX2(dst *uint32, src *float32, nblocks, blockLen int)

//go:noescape
func decF32NTAVX2(dst *float32, src *uint8, n int, scale float32, p *decParams)

//go:noescape
func decF32BlocksNTAVX2(dst *float32, src *uint8, scales *float32, nblocks, blockLen int, p *decParams)

// vecLen is how many leading elements of an n-element slice the vector
// kernels k take (0 without kernels).
func vecLen(k *float8Kernels, n int) int {
	if k == nil {
		return 0
	}
	return n - n%k.width
}

func encF32(d DType, dst []uint8, src []float32, scale float32, mode OverflowMode) {
	encF32At(simdCap, d, dst, src, scale, mode)
}

// encF32At is encF32 with the kernels simdCap = limit would choose.
func encF32At(limit int, d DType, dst []uint8, src []float32, scale float32, mode OverflowMode) {
	k := kernelsAt(limit)
	n := vecLen(k, len(src))
	if n > 0 {
		k.enc(&dst[0], &src[0], n, scale, &encParamTab[fmtIndex(d)][mode])
	}
	encF32Go(d, dst[n:], src[n:], scale, mode)
}

func encF32Vec(d DType, dst []uint8, src, scales []float32, mode OverflowMode) {
	k := simdKernels()
	n := vecLen(k, len(src))
	if n > 0 {
		k.encVec(&dst[0], &src[0], &scales[0], n, &encParamTab[fmtIndex(d)][mode])
	}
	encF32VecGo(d, dst[n:], src[n:], scales[n:], mode)
}

func decF32(d DType, dst []float32, src []uint8, scale float32) {
	k := simdKernels()
	n := vecLen(k, len(src))
	if n > 0 {
		k.dec(&dst[0], &src[0], n, scale, &decParamTab[fmtIndex(d)])
	}
	decF32Go(d, dst[n:], src[n:], scale)
}

// decF32Stream is decF32 with the non-temporal kernel where there is one:
// the elements before the first 32-byte boundary of dst, and the tail, by
// the portable code.
func decF32Stream(d DType, dst []float32, src []uint8, scale float32) {
	k := simdKernels()
	if k == nil || k.decNT == nil || len(src) == 0 {
		decF32(d, dst, src, scale)
		return
	}
	h := min(len(src), int(-uintptr(unsafe.Pointer(&dst[0]))&31)/4)
	n := vecLen(k, len(src)-h)
	decF32Go(d, dst[:h], src[:h], scale)
	if n > 0 {
		k.decNT(&dst[h], &src[h], n, scale, &decParamTab[fmtIndex(d)])
	}
	decF32Go(d, dst[h+n:], src[h+n:], scale)
}

func decF32Vec(d DType, dst []float32, src []uint8, scales []float32) {
	k := simdKernels()
	n := vecLen(k, len(src))
	if n > 0 {
		k.decVec(&dst[0], &src[0], &scales[0], n, &decParamTab[fmtIndex(d)])
	}
	decF32VecGo(d, dst[n:], src[n:], scales[n:])
}

func absMaxBits(src []float32) uint32 {
	k := simdKernels()
	n := vecLen(k, len(src))
	var m uint32
	if n > 0 {
		m = k.absMax(&src[0], n)
	}
	return max(m, absMaxGo(src[n:]))
}

// blockKernels returns the vector kernels when they take blocks of bl.
func blockKernels(bl, nblocks int) *float8Kernels {
	if k := simdKernels(); k != nil && bl%k.width == 0 && nblocks > 0 {
		return k
	}
	return nil
}

// encF32Blocks: src holds len(scales) blocks of bl values (bl > 0).
func encF32Blocks(d DType, dst []uint8, src, scales []float32, bl int, mode OverflowMode) {
	if k := blockKernels(bl, len(scales)); k != nil {
		k.encBlocks(&dst[0], &src[0], &scales[0], len(scales), bl, &encParamTab[fmtIndex(d)][mode])
		return
	}
	encF32BlocksGo(d, dst, src, scales, bl, mode)
}

func decF32Blocks(d DType, dst []float32, src []uint8, scales []float32, bl int) {
	if k := blockKernels(bl, len(scales)); k != nil {
		k.decBlocks(&dst[0], &src[0], &scales[0], len(scales), bl, &decParamTab[fmtIndex(d)])
		return
	}
	decF32BlocksGo(d, dst, src, scales, bl)
}

// decF32BlocksStream is decF32Blocks with the non-temporal kernel where
// there is one and dst is 32-byte aligned.
func decF32BlocksStream(d DType, dst []float32, src []uint8, scales []float32, bl int) {
	if k := blockKernels(bl, len(scales)); k != nil && k.decBlocksNT != nil && uintptr(unsafe.Pointer(&dst[0]))&31 == 0 {
		k.decBlocksNT(&dst[0], &src[0], &scales[0], len(scales), bl, &decParamTab[fmtIndex(d)])
		return
	}
	decF32Blocks(d, dst, src, scales, bl)
}

func absMaxBlocks(dst []uint32, src []float32, bl int) {
	if k := blockKernels(bl, len(dst)); k != nil {
		k.amaxBlock(&dst[0], &src[0], len(dst), bl)
		return
	}
	absMaxBlocksGo(dst, src, bl)
}
