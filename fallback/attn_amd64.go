//go:build amd64 && !purego

package fallback

//go:generate sh -c "go run attn_gen.go > attn_amd64.s"

import "github.com/klauspost/cpuid/v2"

//go:noescape
func attnGemmAVX512(c *float32, ldc int, a *float32, rsa, csa int, b *float32, ldb int, kn, nc int, scale *float32)

//go:noescape
func attnColMaxAVX512(s *float32, lds, rows, cols int, mx *float32)

//go:noescape
func attnExpRowsAVX512(s *float32, lds, rows, cols int, m, sum *float32)

//go:noescape
func attnCvtBF16AVX512(dst *float32, src *uint16, n int)

//go:noescape
func attnCvtF16AVX512(dst *float32, src *uint16, n int)

//go:noescape
func attnDot4x4AVX512(s *float32, lds int, k *float32, ldk int, q *float32, ldq int, d int)

//go:noescape
func attnPrefetchRows(p *byte, rows, stride, n int)

// colMaxAVX512 and expRowsAVX512 take any cols; the assembly handles
// multiples of 16 and Go the rest.
func colMaxAVX512(s *float32, lds, rows, cols int, mx *float32) {
	n := cols &^ 15
	if n > 0 {
		attnColMaxAVX512(s, lds, rows, n, mx)
	}
	if n < cols {
		colMaxGo(at(s, n), lds, rows, cols-n, at(mx, n))
	}
}

func expRowsAVX512(s *float32, lds, rows, cols int, m, sum *float32) {
	n := cols &^ 15
	if n > 0 {
		attnExpRowsAVX512(s, lds, rows, n, m, sum)
	}
	if n < cols {
		expRowsGo(at(s, n), lds, rows, cols-n, at(m, n), at(sum, n))
	}
}

func init() {
	avx512 := attnKernels{
		name:     "avx512",
		features: []cpuid.FeatureID{cpuid.AVX512F, cpuid.AVX512VL},
		gemm:     attnGemmAVX512,
		colMax:   colMaxAVX512,
		expRows:  expRowsAVX512,
		cvtBF16:  attnCvtBF16AVX512,
		cvtF16:   attnCvtF16AVX512,
		dot4x4:   attnDot4x4AVX512,
		prefetch: attnPrefetchRows,
		qk4:      qk4AVX512,
		pv4:      pv4AVX512,
		pf4:      true,
	}
	avx2 := attnKernels{
		name:     "avx2",
		features: []cpuid.FeatureID{cpuid.AVX2, cpuid.FMA3, cpuid.F16C},
		gemm:     gemmAVX2,
		colMax:   colMaxAVX2,
		expRows:  expRowsAVX2,
		cvtBF16:  attnCvtBF16AVX2,
		cvtF16:   attnCvtF16AVX2,
		prefetch: attnPrefetchRows,
		qk4:      qk4AVX2,
		pv4:      pv4AVX2,
		pf4:      true,
	}
	attnVariants = append([]attnKernels{attnBF16Variant(avx512), avx512, avx2}, attnVariants...)
}
