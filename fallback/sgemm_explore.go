//go:build explore && amd64 && !purego

package fallback

import "github.com/klauspost/cpuid/v2"

// The other AVX-512 register tiles of sgemm_explore_amd64.s (see explore in
// sgemm_gen.go), for the benchmarks to compare with the one in use. The
// assembly is generated, not committed: run
//
//	go run sgemm_gen.go -explore > sgemm_explore_amd64.s
//
// before building with -tags explore.

//go:noescape
func sgemmKernel15x32u4bcst(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernel6x64u4(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernel7x64u4bcst(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernel9x48u4(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernel12x32u4(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernel28x16u4(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernel14x32u8(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernel14x32u2(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernel14x32u4pfb1024(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernel14x32u4pfb2048(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernel14x32u4pfa512pfb1024(kc int, a, b, c *float32, ldc, accum int)

//go:noescape
func sgemmKernel14x32u4pfa1024(kc int, a, b, c *float32, ldc, accum int)

// exploreVariants are avx512 with each other kernel.
func exploreVariants() []*variant {
	base := asmVariants()[1] // avx512
	var vs []*variant
	for _, k := range []struct {
		name   string
		mr, nr int
		kernel kernelFunc
	}{
		{"15x32u4bcst", 15, 32, sgemmKernel15x32u4bcst},
		{"6x64u4", 6, 64, sgemmKernel6x64u4},
		{"7x64u4bcst", 7, 64, sgemmKernel7x64u4bcst},
		{"9x48u4", 9, 48, sgemmKernel9x48u4},
		{"12x32u4", 12, 32, sgemmKernel12x32u4},
		{"28x16u4", 28, 16, sgemmKernel28x16u4},
		{"14x32u8", 14, 32, sgemmKernel14x32u8},
		{"14x32u2", 14, 32, sgemmKernel14x32u2},
		{"14x32pfb1024", 14, 32, sgemmKernel14x32u4pfb1024},
		{"14x32pfb2048", 14, 32, sgemmKernel14x32u4pfb2048},
		{"14x32pfa512pfb1024", 14, 32, sgemmKernel14x32u4pfa512pfb1024},
		{"14x32pfa1024", 14, 32, sgemmKernel14x32u4pfa1024},
	} {
		vs = append(vs, &variant{
			MatMulVariant: MatMulVariant{Name: k.name, Features: []cpuid.FeatureID{cpuid.AVX512F}, MR: k.mr, NR: k.nr},
			kernel:        k.kernel,
			cvt:           base.cvt,
			transPack:     base.transPack,
		})
	}
	return vs
}
