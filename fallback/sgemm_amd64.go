//go:build !purego

package fallback

import (
	"unsafe"

	"github.com/klauspost/cpuid/v2"
	"github.com/tcrt-go/tcrt/internal/cpufeat"
	"github.com/tcrt-go/tcrt/tile"
)

//go:generate sh -c "go run sgemm_gen.go > sgemm_amd64.s"

// Micro-kernels in sgemm_amd64.s (see kernelFunc).

//go:noescape
func sgemmKernelAVX512(kc int, a, b, c *float32, ldc, accum int)

// sgemmKernelAVX512Rows1 to sgemmKernelAVX512Rows13 are sgemmKernelAVX512
// for the first 1 to 13 rows of its 14-row A panels: the edge kernels
// (see variant.edge).
//
//go:noescape
func sgemmKernelAVX512Rows1(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernelAVX512Rows2(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernelAVX512Rows3(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernelAVX512Rows4(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernelAVX512Rows5(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernelAVX512Rows6(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernelAVX512Rows7(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernelAVX512Rows8(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernelAVX512Rows9(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernelAVX512Rows10(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernelAVX512Rows11(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernelAVX512Rows12(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernelAVX512Rows13(kc int, a, b, c *float32, ldc, accum int)

// sgemmKernelPackBAVX512 is sgemmKernelAVX512 reading each k step of B
// from f32 rows lds bytes apart, from src on, and storing it to the panel
// at b as it goes (see fuseB in sgemm_gen.go).
//
//go:noescape
func sgemmKernelPackBAVX512(kc int, a, b, c *float32, ldc, accum int, src unsafe.Pointer, lds int)

// sbgemmKernelAVX512BF16 is the 14×32 kernel on bf16 pairs: kc counts pair
// steps, each 32-bit panel value holds the bf16 values of k = 2s (low half)
// and 2s+1 (high half), and VDPBF16PS accumulates both products.
//
//go:noescape
func sbgemmKernelAVX512BF16(kc int, a, b, c *float32, ldc, accum int)

// pairRows32AVX512 writes, for each of panels panels of 32 columns, the 32
// words lo[c] | hi[c]<<16 at dst, then advances dst by stride bytes and lo,
// hi by 32 elements.
//
//go:noescape
func pairRows32AVX512(dst *float32, lo, hi *uint16, panels, stride int)

// pairRowsAVX512 is the bf16 pair variant's pairRows (see variant).
func pairRowsAVX512(dst []float32, lo, hi []uint16, W, kp int) int {
	panels := len(lo) / 32
	if W != 32 || panels == 0 {
		return 0
	}
	pairRows32AVX512(&dst[0], &lo[0], &hi[0], panels, 4*32*kp)
	return 32 * panels
}

// Skinny kernels in sgemm_amd64.s (see skinnyFunc and skinnyAVX512 in
// sgemm_gen.go): r rows of packed A by 64 columns of B read in place, f32,
// bf16 widened to f32, or bf16 in pairs for VDPBF16PS; the Store forms
// also copy what they read of B to a buffer, which the DPBF16Buf and Rest
// forms read back for the further rows, prefetching the next block of B.

//go:noescape
func skinny1x64AVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny2x64AVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny3x64AVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny4x64AVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny5x64AVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny6x64AVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny1x64AVX512Store(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny2x64AVX512Store(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny3x64AVX512Store(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny4x64AVX512Store(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny5x64AVX512Store(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny6x64AVX512Store(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny1x64BF16AVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny2x64BF16AVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny3x64BF16AVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny4x64BF16AVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny5x64BF16AVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny6x64BF16AVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny1x64BF16AVX512Store(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny2x64BF16AVX512Store(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny3x64BF16AVX512Store(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny4x64BF16AVX512Store(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny5x64BF16AVX512Store(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny6x64BF16AVX512Store(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny1x64DPBF16AVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny2x64DPBF16AVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny3x64DPBF16AVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny4x64DPBF16AVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny5x64DPBF16AVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny6x64DPBF16AVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny1x64DPBF16AVX512Store(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny2x64DPBF16AVX512Store(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny3x64DPBF16AVX512Store(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny4x64DPBF16AVX512Store(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny5x64DPBF16AVX512Store(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny6x64DPBF16AVX512Store(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny1x64DPBF16BufAVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny2x64DPBF16BufAVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny3x64DPBF16BufAVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny4x64DPBF16BufAVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny5x64DPBF16BufAVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny6x64DPBF16BufAVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny1x64RestAVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny2x64RestAVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny3x64RestAVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny4x64RestAVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny5x64RestAVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

//go:noescape
func skinny6x64RestAVX512(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

// Row-streaming skinny kernels in sgemm_amd64.s (see skinnyRowFunc and
// skinnyRowsAVX512 in sgemm_gen.go): m ≤ 4 rows of packed A, B read a few
// rows at a time along the whole column range, sums in an L1 tile.

//go:noescape
func skinnyRows1AVX512(rows int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, pf int)

//go:noescape
func skinnyRows2AVX512(rows int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, pf int)

//go:noescape
func skinnyRows3AVX512(rows int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, pf int)

//go:noescape
func skinnyRows4AVX512(rows int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, pf int)

//go:noescape
func skinnyRows1BF16AVX512(rows int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, pf int)

//go:noescape
func skinnyRows2BF16AVX512(rows int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, pf int)

//go:noescape
func skinnyRows3BF16AVX512(rows int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, pf int)

//go:noescape
func skinnyRows4BF16AVX512(rows int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, pf int)

//go:noescape
func skinnyRows1DPBF16AVX512(rows int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, pf int)

//go:noescape
func skinnyRows2DPBF16AVX512(rows int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, pf int)

//go:noescape
func skinnyRows3DPBF16AVX512(rows int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, pf int)

//go:noescape
func skinnyRows4DPBF16AVX512(rows int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, pf int)

// Strip skinny kernels in sgemm_amd64.s (see skinnyStripFunc and
// skinnyStripAVX512 in sgemm_gen.go): 9 to 16 rows of packed A by f32 B
// read in place 16 columns at a time down a K block, the sums in
// registers.

//go:noescape
func skinnyStrip9AVX512(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip10AVX512(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip11AVX512(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip12AVX512(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip13AVX512(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip14AVX512(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip15AVX512(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

//go:noescape
func skinnyStrip16AVX512(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

// skinnyAVX512 holds the skinny kernels of the f32 AVX-512 variant, and
// skinnyDPBF16 those of the bf16 pair variant. Their masks take AVX512BW's
// 64-bit mask moves, and the bf16 loads its VPMOVZXWD on zmm.
var (
	skinnyAVX512 = &skinnyKernels{
		features: []cpuid.FeatureID{cpuid.AVX512F, cpuid.AVX512BW},
		f32: []skinnyFunc{skinny1x64AVX512, skinny2x64AVX512, skinny3x64AVX512,
			skinny4x64AVX512, skinny5x64AVX512, skinny6x64AVX512},
		bf16: []skinnyFunc{skinny1x64BF16AVX512, skinny2x64BF16AVX512, skinny3x64BF16AVX512,
			skinny4x64BF16AVX512, skinny5x64BF16AVX512, skinny6x64BF16AVX512},
		f32Store: []skinnyFunc{skinny1x64AVX512Store, skinny2x64AVX512Store, skinny3x64AVX512Store,
			skinny4x64AVX512Store, skinny5x64AVX512Store, skinny6x64AVX512Store},
		bf16Store: []skinnyFunc{skinny1x64BF16AVX512Store, skinny2x64BF16AVX512Store, skinny3x64BF16AVX512Store,
			skinny4x64BF16AVX512Store, skinny5x64BF16AVX512Store, skinny6x64BF16AVX512Store},
		rest: []skinnyFunc{skinny1x64RestAVX512, skinny2x64RestAVX512, skinny3x64RestAVX512,
			skinny4x64RestAVX512, skinny5x64RestAVX512, skinny6x64RestAVX512},
		rowsF32:   []skinnyRowFunc{skinnyRows1AVX512, skinnyRows2AVX512, skinnyRows3AVX512, skinnyRows4AVX512},
		rowsBF16:  []skinnyRowFunc{skinnyRows1BF16AVX512, skinnyRows2BF16AVX512, skinnyRows3BF16AVX512, skinnyRows4BF16AVX512},
		stripMinM: skinnyStripMinM,
		strip:     []skinnyStripFunc{skinnyStrip9AVX512, skinnyStrip10AVX512, skinnyStrip11AVX512, skinnyStrip12AVX512, skinnyStrip13AVX512, skinnyStrip14AVX512, skinnyStrip15AVX512, skinnyStrip16AVX512},
	}
	skinnyDPBF16 = &skinnyKernels{
		features: []cpuid.FeatureID{cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512BF16},
		bf16: []skinnyFunc{skinny1x64DPBF16AVX512, skinny2x64DPBF16AVX512, skinny3x64DPBF16AVX512,
			skinny4x64DPBF16AVX512, skinny5x64DPBF16AVX512, skinny6x64DPBF16AVX512},
		bf16Store: []skinnyFunc{skinny1x64DPBF16AVX512Store, skinny2x64DPBF16AVX512Store, skinny3x64DPBF16AVX512Store,
			skinny4x64DPBF16AVX512Store, skinny5x64DPBF16AVX512Store, skinny6x64DPBF16AVX512Store},
		rest: []skinnyFunc{skinny1x64DPBF16BufAVX512, skinny2x64DPBF16BufAVX512, skinny3x64DPBF16BufAVX512,
			skinny4x64DPBF16BufAVX512, skinny5x64DPBF16BufAVX512, skinny6x64DPBF16BufAVX512},
		rowsBF16: []skinnyRowFunc{skinnyRows1DPBF16AVX512, skinnyRows2DPBF16AVX512, skinnyRows3DPBF16AVX512, skinnyRows4DPBF16AVX512},
		pairs:    true,
	}
)

//go:noescape
func sgemmKernelAVX2(kc int, a, b, c *float32, ldc, accum int)

// transPack14AVX512 and transPack16AVX512 transpose 14 or 16 rows of kc
// floats (row i at src + i·ld, kc a multiple of 16) into kc steps of dst, 14
// or 32 floats apart: float i of step k is float k of row i.

//go:noescape
func transPack14AVX512(dst, src *float32, ld, kc int)

//go:noescape
func transPack16AVX512(dst, src *float32, ld, kc int)

// transPackAVX512 is the variant's transPack (see variant).
func transPackAVX512(dst, src *float32, ld, kc, w int) bool {
	switch w {
	case 14:
		transPack14AVX512(dst, src, ld, kc)
	case 32:
		transPack16AVX512(dst, src, ld, kc)
		transPack16AVX512((*float32)(unsafe.Add(unsafe.Pointer(dst), 4*16)),
			(*float32)(unsafe.Add(unsafe.Pointer(src), 4*16*ld)), ld, kc)
	default:
		return false
	}
	return true
}

// transPack6AVX2 and transPack8AVX2 are the AVX2 counterparts for 6 and 8
// rows (kc a multiple of 8), into steps 6 or 16 floats apart;
// transPack6AVX2 writes 2 floats past the last step.

//go:noescape
func transPack6AVX2(dst, src *float32, ld, kc int)

//go:noescape
func transPack8AVX2(dst, src *float32, ld, kc int)

// transPackAVX2 is the AVX2 variant's transPack.
func transPackAVX2(dst, src *float32, ld, kc, w int) bool {
	switch w {
	case 6:
		transPack6AVX2(dst, src, ld, kc)
	case 16:
		transPack8AVX2(dst, src, ld, kc)
		transPack8AVX2((*float32)(unsafe.Add(unsafe.Pointer(dst), 4*8)),
			(*float32)(unsafe.Add(unsafe.Pointer(src), 4*8*ld)), ld, kc)
	default:
		return false
	}
	return true
}

// Conversions in sgemm_amd64.s over n elements, n a multiple of 16 (AVX512)
// or 8 (AVX2).

//go:noescape
func cvtF16ToF32AVX512(dst *float32, src *uint16, n int)

//go:noescape
func cvtBF16ToF32AVX512(dst *float32, src *uint16, n int)

//go:noescape
func cvtF32ToF16AVX512(dst *uint16, src *float32, n int)

//go:noescape
func cvtF32ToBF16AVX512(dst *uint16, src *float32, n int)

//go:noescape
func cvtF16ToF32AVX2(dst *float32, src *uint16, n int)

//go:noescape
func cvtBF16ToF32AVX2(dst *float32, src *uint16, n int)

//go:noescape
func cvtF32ToF16AVX2(dst *uint16, src *float32, n int)

//go:noescape
func cvtF32ToBF16AVX2(dst *uint16, src *float32, n int)

// Register tiles of the assembly kernels.
//
// AVX-512, 14×32: 28 zmm accumulators (14 rows of A by two 16-float vectors
// of B), 2 zmm for the row of B and 2 that take turns holding a broadcast
// element of A, all 32 registers. Each k step is 2 vector loads, 14
// broadcast loads and 28 VFMADD231PS, which Zen 5's two 512-bit FMA pipes
// retire in 14 cycles with the loads well within its load ports; a step of
// the B panel is two cache lines (with kc = 384 the panel is the size of
// L1D, see cacheBlocking), a step of the A panel one. Explicit broadcasts
// beat the FMA's embedded {1to16} form (15×32 with 30 accumulators: about
// 8% slower alone, 15% in a product). The explicit-broadcast tiles all
// reach about 220 GFLOP/s per core alone; in two-core f32 2048³ products
// on an idle machine 14×32 ran at 364 GFLOP/s (median of 6), 6×64 at 361,
// 12×32 at 341, and software prefetches of the panels changed nothing
// measurable (go test -tags explore -bench MatMulKernel ./fallback/).
//
// AVX2, 6×16: 12 ymm accumulators, 2 for B, 2 for broadcasts.
const (
	avx512MR, avx512NR = 14, 32
	avx2MR, avx2NR     = 6, 16
)

func asmVariants() []*variant {
	return []*variant{
		{
			MatMulVariant: MatMulVariant{
				Name:     "avx512bf16",
				Features: []cpuid.FeatureID{cpuid.AVX512F, cpuid.AVX512BF16},
				MR:       avx512MR, NR: avx512NR,
				BF16Pairs: true,
			},
			kernel:    sbgemmKernelAVX512BF16,
			transPack: transPackAVX512,
			pairRows:  pairRowsAVX512,
			skinny:    skinnyDPBF16,
			cvt:       wideConverters(16, cvtF16ToF32AVX512, cvtBF16ToF32AVX512, cvtF32ToF16AVX512, cvtF32ToBF16AVX512),
		},
		{
			MatMulVariant: MatMulVariant{
				Name:     "avx512",
				Features: []cpuid.FeatureID{cpuid.AVX512F},
				MR:       avx512MR, NR: avx512NR,
			},
			kernel: sgemmKernelAVX512,
			edge: []kernelFunc{nil, sgemmKernelAVX512Rows1, sgemmKernelAVX512Rows2, sgemmKernelAVX512Rows3,
				sgemmKernelAVX512Rows4, sgemmKernelAVX512Rows5, sgemmKernelAVX512Rows6, sgemmKernelAVX512Rows7,
				sgemmKernelAVX512Rows8, sgemmKernelAVX512Rows9, sgemmKernelAVX512Rows10, sgemmKernelAVX512Rows11,
				sgemmKernelAVX512Rows12, sgemmKernelAVX512Rows13},
			kernelPackB: sgemmKernelPackBAVX512,
			transPack:   transPackAVX512,
			skinny:      skinnyAVX512,
			cvt:         wideConverters(16, cvtF16ToF32AVX512, cvtBF16ToF32AVX512, cvtF32ToF16AVX512, cvtF32ToBF16AVX512),
		},
		{
			MatMulVariant: MatMulVariant{
				Name:     "avx2",
				Features: []cpuid.FeatureID{cpuid.AVX2, cpuid.FMA3, cpuid.F16C},
				MR:       avx2MR, NR: avx2NR,
			},
			kernel:    sgemmKernelAVX2,
			transPack: transPackAVX2,
			skinny:    skinnyAVX2,
			cvt:       wideConverters(8, cvtF16ToF32AVX2, cvtBF16ToF32AVX2, cvtF32ToF16AVX2, cvtF32ToBF16AVX2),
		},
	}
}

// wideConverters wraps assembly conversions of multiples of width elements
// with plain-Go tails.
func wideConverters(width int,
	f16 func(*float32, *uint16, int),
	bf16 func(*float32, *uint16, int),
	toF16 func(*uint16, *float32, int),
	toBF16 func(*uint16, *float32, int),
) converters {
	return converters{
		f16ToF32: func(dst []float32, src []uint16) {
			n := len(dst) / width * width
			if n > 0 {
				f16(&dst[0], &src[0], n)
			}
			for i := n; i < len(dst); i++ {
				dst[i] = tile.F16ToF32(src[i])
			}
		},
		bf16ToF32: func(dst []float32, src []uint16) {
			n := len(dst) / width * width
			if n > 0 {
				bf16(&dst[0], &src[0], n)
			}
			bf16ToF32Go(dst[n:], src[n:])
		},
		f32ToF16: func(dst []uint16, src []float32) {
			n := len(dst) / width * width
			if n > 0 {
				toF16(&dst[0], &src[0], n)
			}
			for i := n; i < len(dst); i++ {
				dst[i] = tile.F32ToF16(src[i])
			}
		},
		f32ToBF16: func(dst []uint16, src []float32) {
			n := len(dst) / width * width
			if n > 0 {
				toBF16(&dst[0], &src[0], n)
			}
			f32ToBF16Go(dst[n:], src[n:])
		},
	}
}

// peakFMAAVX512 and peakDPBF16AVX512 run n trips of 16 register-resident
// VFMADD231PS or VDPBF16PS on zmm (see PeakLoop).
//
//go:noescape
func peakFMAAVX512(n int)

//go:noescape
func peakDPBF16AVX512(n int)

// peakFMAAVX2 runs n trips of 12 register-resident VFMADD231PS on ymm.
//
//go:noescape
func peakFMAAVX2(n int)

func init() {
	peakLoops = append(peakLoops,
		PeakLoop{Name: "f32", Features: []cpuid.FeatureID{cpuid.AVX512F}, FLOPs: 16 * 16 * 2, run: peakFMAAVX512},
		PeakLoop{Name: "bf16dot", Features: []cpuid.FeatureID{cpuid.AVX512F, cpuid.AVX512BF16}, FLOPs: 16 * 16 * 4, run: peakDPBF16AVX512},
		PeakLoop{Name: "f32", Features: []cpuid.FeatureID{cpuid.AVX2, cpuid.FMA3}, FLOPs: 12 * 8 * 2, run: peakFMAAVX2},
	)
}

// e4m3ToBF16AVX512 and e5m2ToBF16AVX512 decode n float8 values (n a
// multiple of 16) into bf16, exactly (see sgemm_gen.go).
//
//go:noescape
func e4m3ToBF16AVX512(dst *uint16, src *uint8, n int)

//go:noescape
func e5m2ToBF16AVX512(dst *uint16, src *uint8, n int)

func init() {
	fp8ToBF16Fast = func(d tile.DType, dst []uint16, src []byte) int {
		n := len(src) &^ 15
		if n == 0 || !cpufeat.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX2) {
			return 0
		}
		if d == tile.E4M3 {
			e4m3ToBF16AVX512(&dst[0], &src[0], n)
		} else {
			e5m2ToBF16AVX512(&dst[0], &src[0], n)
		}
		return n
	}
}

// scaleF32AVX512 sets dst[i] *= f, and scaleColsF32AVX512 dst[i] *= f·s[i]
// (the product rounded to f32 first), for n floats.
//
//go:noescape
func scaleF32AVX512(dst *float32, f float32, n int)

//go:noescape
func scaleColsF32AVX512(dst, s *float32, f float32, n int)

func init() {
	scaleRowFast = func(out []float32, f float32, s []float32) bool {
		if len(out) == 0 || !cpufeat.Supports(cpuid.AVX512F) {
			return false
		}
		if s == nil {
			scaleF32AVX512(&out[0], f, len(out))
		} else {
			scaleColsF32AVX512(&out[0], &s[0], f, len(out))
		}
		return true
	}
}

// addF32AVX512 sets dst[i] += src[i] for n floats, n a multiple of 16.
//
//go:noescape
func addF32AVX512(dst, src *float32, n int)

func init() {
	addF32Fast = func(dst, src []float32) int {
		n := len(dst) &^ 15
		if n == 0 || !cpufeat.Supports(cpuid.AVX512F) {
			return 0
		}
		addF32AVX512(&dst[0], &src[0], n)
		return n
	}
}
