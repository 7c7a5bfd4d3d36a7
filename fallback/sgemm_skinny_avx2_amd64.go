//go:build !purego

package fallback

import (
	"unsafe"

	"github.com/klauspost/cpuid/v2"
)

// AVX2+FMA strip skinny kernels in sgemm_amd64.s (see skinnyStripFunc and
// skinnyStripAVX2 in sgemm_gen.go): 1 to 16 rows of packed A by f32, bf16,
// f16, e4m3 or e5m2 B read in place, 16 columns (two ymm) a strip, the rows in groups
// of up to 6 whose sums stay in registers down a K block (with more than 6
// rows the first group copies the strip to buf for the others). They compute the
// whole strips only; skinnyStrips computes the last n mod 16 columns from a
// zero-padded f32 copy with the f32 kernel.

// skinnyRows1AVX2 to skinnyRows4AVX2 are the row-streaming kernels of 1
// to 4 rows of packed A by f32 B (see skinnyRowFunc, and skinnyRowsAVX2
// in sgemm_gen.go).

//go:noescape
func skinnyRows1AVX2(rows int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, pf int)

//go:noescape
func skinnyRows2AVX2(rows int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, pf int)

//go:noescape
func skinnyRows3AVX2(rows int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, pf int)

//go:noescape
func skinnyRows4AVX2(rows int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, pf int)

//go:noescape
func skinnyStrip1AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip2AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip3AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip4AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip5AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip6AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip7AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip8AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip9AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip10AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip11AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip12AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip13AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip14AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip15AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip1BF16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip2BF16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip3BF16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip4BF16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip5BF16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip6BF16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip7BF16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip8BF16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip9BF16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip10BF16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip11BF16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip12BF16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip13BF16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip14BF16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip15BF16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip16BF16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip1F16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip2F16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip3F16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip4F16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip5F16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip6F16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip7F16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip8F16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip9F16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip10F16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip11F16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip12F16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip13F16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip14F16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip15F16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip16F16AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

// AVX2+FMA dot kernels in sgemm_amd64.s for transposed B (see
// skinnyDotFunc and skinnyDotAVX2 in sgemm_gen.go): mr ≤ 4 rows of f32 A
// by nr ≤ 4 (8 with 1 row of A and f32, bf16 or f16 W; 3 with 4 rows of
// A, and with 3 of e4m3 W) rows of f32, bf16, f16, e4m3 or e5m2 W, both
// contiguous in K, over whole steps of 8.

//go:noescape
func skinnyDot1x1AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x2AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x3AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x4AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x5AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x6AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x7AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x8AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot2x1AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot2x2AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot2x3AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot2x4AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot3x1AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot3x2AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot3x3AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot3x4AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot4x1AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot4x2AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot4x3AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x1BF16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x2BF16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x3BF16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x4BF16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x5BF16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x6BF16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x7BF16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x8BF16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot2x1BF16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot2x2BF16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot2x3BF16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot2x4BF16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot3x1BF16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot3x2BF16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot3x3BF16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot3x4BF16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot4x1BF16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot4x2BF16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot4x3BF16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x1F16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x2F16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x3F16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x4F16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x5F16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x6F16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x7F16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x8F16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot2x1F16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot2x2F16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot2x3F16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot2x4F16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot3x1F16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot3x2F16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot3x3F16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot3x4F16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot4x1F16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot4x2F16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot4x3F16AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyStrip1E4M3AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip2E4M3AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip3E4M3AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip4E4M3AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip5E4M3AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip6E4M3AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip7E4M3AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip8E4M3AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip9E4M3AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip10E4M3AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip11E4M3AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip12E4M3AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip13E4M3AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip14E4M3AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip15E4M3AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip16E4M3AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip1E5M2AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip2E5M2AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip3E5M2AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip4E5M2AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip5E5M2AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip6E5M2AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip7E5M2AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip8E5M2AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip9E5M2AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip10E5M2AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip11E5M2AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip12E5M2AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip13E5M2AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip14E5M2AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip15E5M2AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip16E5M2AVX2(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyDot1x1E4M3AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x2E4M3AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x3E4M3AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x4E4M3AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot2x1E4M3AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot2x2E4M3AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot2x3E4M3AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot2x4E4M3AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot3x1E4M3AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot3x2E4M3AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot3x3E4M3AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot4x1E4M3AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot4x2E4M3AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot4x3E4M3AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x1E5M2AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x2E5M2AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x3E5M2AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot1x4E5M2AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot2x1E5M2AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot2x2E5M2AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot2x3E5M2AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot2x4E5M2AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot3x1E5M2AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot3x2E5M2AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot3x3E5M2AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot3x4E5M2AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot4x1E5M2AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot4x2E5M2AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

//go:noescape
func skinnyDot4x3E5M2AVX2(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

// skinnyRowRunAVX2 is the AVX2 row-streaming kernels' rowRun: tiles of
// 16 KiB of a row of B (4096 f32 columns; the sums 16 KiB of L1 with one
// row of A, 64 KiB with four), one item a thread. One thread, f32 B of
// 16 MiB or more, against 4 KiB tiles split four items a thread (and with
// one row of A, 8-row sweeps): with one row of A 1.3–1.5× the B bytes per
// CPU second, with four rows 1.0–1.2× those of tiles held to 16 KiB of
// sums (1024 columns), and 0.93–1.18× at 512 columns (docs/performance.md,
// 3 December 2026, 18:45 and 19:30 UTC).
const skinnyRowRunAVX2 = 16 << 10

// skinnyAVX2 holds the skinny kernels of the AVX2 variant: a row-streaming
// kernel for one row of A by f32 B, strip kernels for every M of the
// skinny path and f32, bf16, f16 (F16C's VCVTPH2PS), e4m3 and e5m2 B, dot
// kernels for transposed B of those types. AVX-512 hosts masked to AVX2 (TCRT_CPU=avx2) take them too.
var skinnyAVX2 = &skinnyKernels{
	features: []cpuid.FeatureID{cpuid.AVX2, cpuid.FMA3, cpuid.F16C},
	rowsF32:  []skinnyRowFunc{skinnyRows1AVX2, skinnyRows2AVX2, skinnyRows3AVX2, skinnyRows4AVX2},
	rowRun:   skinnyRowRunAVX2,
	strip: []skinnyStripFunc{
		skinnyStrip1AVX2,
		skinnyStrip2AVX2,
		skinnyStrip3AVX2,
		skinnyStrip4AVX2,
		skinnyStrip5AVX2,
		skinnyStrip6AVX2,
		skinnyStrip7AVX2,
		skinnyStrip8AVX2,
		skinnyStrip9AVX2,
		skinnyStrip10AVX2,
		skinnyStrip11AVX2,
		skinnyStrip12AVX2,
		skinnyStrip13AVX2,
		skinnyStrip14AVX2,
		skinnyStrip15AVX2,
		skinnyStrip16AVX2,
	},
	stripBF16: []skinnyStripFunc{
		skinnyStrip1BF16AVX2,
		skinnyStrip2BF16AVX2,
		skinnyStrip3BF16AVX2,
		skinnyStrip4BF16AVX2,
		skinnyStrip5BF16AVX2,
		skinnyStrip6BF16AVX2,
		skinnyStrip7BF16AVX2,
		skinnyStrip8BF16AVX2,
		skinnyStrip9BF16AVX2,
		skinnyStrip10BF16AVX2,
		skinnyStrip11BF16AVX2,
		skinnyStrip12BF16AVX2,
		skinnyStrip13BF16AVX2,
		skinnyStrip14BF16AVX2,
		skinnyStrip15BF16AVX2,
		skinnyStrip16BF16AVX2,
	},
	stripF16: []skinnyStripFunc{
		skinnyStrip1F16AVX2,
		skinnyStrip2F16AVX2,
		skinnyStrip3F16AVX2,
		skinnyStrip4F16AVX2,
		skinnyStrip5F16AVX2,
		skinnyStrip6F16AVX2,
		skinnyStrip7F16AVX2,
		skinnyStrip8F16AVX2,
		skinnyStrip9F16AVX2,
		skinnyStrip10F16AVX2,
		skinnyStrip11F16AVX2,
		skinnyStrip12F16AVX2,
		skinnyStrip13F16AVX2,
		skinnyStrip14F16AVX2,
		skinnyStrip15F16AVX2,
		skinnyStrip16F16AVX2,
	},
	dotF32: [][]skinnyDotFunc{
		{skinnyDot1x1AVX2, skinnyDot1x2AVX2, skinnyDot1x3AVX2, skinnyDot1x4AVX2, skinnyDot1x5AVX2, skinnyDot1x6AVX2, skinnyDot1x7AVX2, skinnyDot1x8AVX2},
		{skinnyDot2x1AVX2, skinnyDot2x2AVX2, skinnyDot2x3AVX2, skinnyDot2x4AVX2},
		{skinnyDot3x1AVX2, skinnyDot3x2AVX2, skinnyDot3x3AVX2, skinnyDot3x4AVX2},
		{skinnyDot4x1AVX2, skinnyDot4x2AVX2, skinnyDot4x3AVX2},
	},
	dotBF16: [][]skinnyDotFunc{
		{skinnyDot1x1BF16AVX2, skinnyDot1x2BF16AVX2, skinnyDot1x3BF16AVX2, skinnyDot1x4BF16AVX2, skinnyDot1x5BF16AVX2, skinnyDot1x6BF16AVX2, skinnyDot1x7BF16AVX2, skinnyDot1x8BF16AVX2},
		{skinnyDot2x1BF16AVX2, skinnyDot2x2BF16AVX2, skinnyDot2x3BF16AVX2, skinnyDot2x4BF16AVX2},
		{skinnyDot3x1BF16AVX2, skinnyDot3x2BF16AVX2, skinnyDot3x3BF16AVX2, skinnyDot3x4BF16AVX2},
		{skinnyDot4x1BF16AVX2, skinnyDot4x2BF16AVX2, skinnyDot4x3BF16AVX2},
	},
	dotF16: [][]skinnyDotFunc{
		{skinnyDot1x1F16AVX2, skinnyDot1x2F16AVX2, skinnyDot1x3F16AVX2, skinnyDot1x4F16AVX2, skinnyDot1x5F16AVX2, skinnyDot1x6F16AVX2, skinnyDot1x7F16AVX2, skinnyDot1x8F16AVX2},
		{skinnyDot2x1F16AVX2, skinnyDot2x2F16AVX2, skinnyDot2x3F16AVX2, skinnyDot2x4F16AVX2},
		{skinnyDot3x1F16AVX2, skinnyDot3x2F16AVX2, skinnyDot3x3F16AVX2, skinnyDot3x4F16AVX2},
		{skinnyDot4x1F16AVX2, skinnyDot4x2F16AVX2, skinnyDot4x3F16AVX2},
	},
	stripE4M3: []skinnyStripFunc{
		skinnyStrip1E4M3AVX2,
		skinnyStrip2E4M3AVX2,
		skinnyStrip3E4M3AVX2,
		skinnyStrip4E4M3AVX2,
		skinnyStrip5E4M3AVX2,
		skinnyStrip6E4M3AVX2,
		skinnyStrip7E4M3AVX2,
		skinnyStrip8E4M3AVX2,
		skinnyStrip9E4M3AVX2,
		skinnyStrip10E4M3AVX2,
		skinnyStrip11E4M3AVX2,
		skinnyStrip12E4M3AVX2,
		skinnyStrip13E4M3AVX2,
		skinnyStrip14E4M3AVX2,
		skinnyStrip15E4M3AVX2,
		skinnyStrip16E4M3AVX2,
	},
	stripE5M2: []skinnyStripFunc{
		skinnyStrip1E5M2AVX2,
		skinnyStrip2E5M2AVX2,
		skinnyStrip3E5M2AVX2,
		skinnyStrip4E5M2AVX2,
		skinnyStrip5E5M2AVX2,
		skinnyStrip6E5M2AVX2,
		skinnyStrip7E5M2AVX2,
		skinnyStrip8E5M2AVX2,
		skinnyStrip9E5M2AVX2,
		skinnyStrip10E5M2AVX2,
		skinnyStrip11E5M2AVX2,
		skinnyStrip12E5M2AVX2,
		skinnyStrip13E5M2AVX2,
		skinnyStrip14E5M2AVX2,
		skinnyStrip15E5M2AVX2,
		skinnyStrip16E5M2AVX2,
	},
	dotE4M3: [][]skinnyDotFunc{
		{skinnyDot1x1E4M3AVX2, skinnyDot1x2E4M3AVX2, skinnyDot1x3E4M3AVX2, skinnyDot1x4E4M3AVX2},
		{skinnyDot2x1E4M3AVX2, skinnyDot2x2E4M3AVX2, skinnyDot2x3E4M3AVX2, skinnyDot2x4E4M3AVX2},
		{skinnyDot3x1E4M3AVX2, skinnyDot3x2E4M3AVX2, skinnyDot3x3E4M3AVX2},
		{skinnyDot4x1E4M3AVX2, skinnyDot4x2E4M3AVX2, skinnyDot4x3E4M3AVX2},
	},
	dotE5M2: [][]skinnyDotFunc{
		{skinnyDot1x1E5M2AVX2, skinnyDot1x2E5M2AVX2, skinnyDot1x3E5M2AVX2, skinnyDot1x4E5M2AVX2},
		{skinnyDot2x1E5M2AVX2, skinnyDot2x2E5M2AVX2, skinnyDot2x3E5M2AVX2, skinnyDot2x4E5M2AVX2},
		{skinnyDot3x1E5M2AVX2, skinnyDot3x2E5M2AVX2, skinnyDot3x3E5M2AVX2, skinnyDot3x4E5M2AVX2},
		{skinnyDot4x1E5M2AVX2, skinnyDot4x2E5M2AVX2, skinnyDot4x3E5M2AVX2},
	},
	stripMinM:  1,
	stripWhole: true,
}
