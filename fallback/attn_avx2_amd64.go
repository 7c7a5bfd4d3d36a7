//go:build amd64 && !purego

package fallback

//go:generate sh -c "go run attn_avx2_gen.go > attn_avx2_amd64.s"

// The AVX2 prefill kernels (attn_avx2_amd64.s, by attn_avx2_gen.go): the gemm in 4-row by 16-
// (or 8-) column register tiles, the column max, the exponential and the
// bf16/f16 widening, for x86 CPUs without AVX-512.

//go:noescape
func attnGemm4x16AVX2(c *float32, ldc int, a *float32, rsa, csa int, b *float32, ldb int, kn int, scale *float32)

//go:noescape
func attnGemm4x8AVX2(c *float32, ldc int, a *float32, rsa, csa int, b *float32, ldb int, kn int, scale *float32)

//go:noescape
func attnColMaxAVX2(s *float32, lds, rows, cols int, mx *float32)

//go:noescape
func attnExpRowsAVX2(s *float32, lds, rows, cols int, m, sum *float32)

//go:noescape
func attnCvtBF16AVX2(dst *float32, src *uint16, n int)

//go:noescape
func attnCvtF16AVX2(dst *float32, src *uint16, n int)

// gemmAVX2 is the attnKernels gemm: two 4-row halves, each in 16- and
// 8-column tiles; columns past the last multiple of 8 (never in the
// attention itself, whose column counts are multiples of 8) take gemmGo.
func gemmAVX2(c *float32, ldc int, a *float32, rsa, csa int, b *float32, ldb int, kn, nc int, scale *float32) {
	n16, n8 := nc&^15, nc&^7
	for h := 0; h < 8; h += 4 {
		var s *float32
		if scale != nil {
			s = at(scale, h)
		}
		ch, ah := at(c, h*ldc), at(a, h*rsa)
		for j := 0; j < n16; j += 16 {
			attnGemm4x16AVX2(at(ch, j), ldc, ah, rsa, csa, at(b, j), ldb, kn, s)
		}
		if n8 > n16 {
			attnGemm4x8AVX2(at(ch, n16), ldc, ah, rsa, csa, at(b, n16), ldb, kn, s)
		}
	}
	if n8 < nc {
		gemmGo(at(c, n8), ldc, a, rsa, csa, at(b, n8), ldb, kn, nc-n8, scale)
	}
}

// colMaxAVX2 and expRowsAVX2 take any cols; the assembly handles multiples
// of 8 and Go the rest.
func colMaxAVX2(s *float32, lds, rows, cols int, mx *float32) {
	n := cols &^ 7
	if n > 0 {
		attnColMaxAVX2(s, lds, rows, n, mx)
	}
	if n < cols {
		colMaxGo(at(s, n), lds, rows, cols-n, at(mx, n))
	}
}

func expRowsAVX2(s *float32, lds, rows, cols int, m, sum *float32) {
	n := cols &^ 7
	if n > 0 {
		attnExpRowsAVX2(s, lds, rows, n, m, sum)
	}
	if n < cols {
		expRowsGo(at(s, n), lds, rows, cols-n, at(m, n), at(sum, n))
	}
}
