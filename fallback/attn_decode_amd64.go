//go:build amd64 && !purego

package fallback

//go:generate sh -c "go run attn_decode_gen.go > attn_decode_amd64.s"
//go:generate sh -c "go run attn_decode_gen.go -isa avx2 > attn_decode_avx2_amd64.s"

//go:noescape
func attnQK4F32(s *float32, k *byte, ldk int, q *float32, ldq, d, nk, pf int)

//go:noescape
func attnQK4BF16(s *float32, k *byte, ldk int, q *float32, ldq, d, nk, pf int)

//go:noescape
func attnQK4F16(s *float32, k *byte, ldk int, q *float32, ldq, d, nk, pf int)

//go:noescape
func attnPV4F32(o *float32, ldo int, p *float32, v *byte, ldv, nk, d int, corr *float32, pf int)

//go:noescape
func attnPV4BF16(o *float32, ldo int, p *float32, v *byte, ldv, nk, d int, corr *float32, pf int)

//go:noescape
func attnPV4F16(o *float32, ldo int, p *float32, v *byte, ldv, nk, d int, corr *float32, pf int)

var (
	qk4AVX512 = [3]qk4Func{attnQK4F32, attnQK4BF16, attnQK4F16}
	pv4AVX512 = [3]pv4Func{attnPV4F32, attnPV4BF16, attnPV4F16}
)

//go:noescape
func attnQK4F32AVX2(s *float32, k *byte, ldk int, q *float32, ldq, d, nk, pf int)

//go:noescape
func attnQK4BF16AVX2(s *float32, k *byte, ldk int, q *float32, ldq, d, nk, pf int)

//go:noescape
func attnQK4F16AVX2(s *float32, k *byte, ldk int, q *float32, ldq, d, nk, pf int)

//go:noescape
func attnPV4F32AVX2(o *float32, ldo int, p *float32, v *byte, ldv, nk, d int, corr *float32, pf int)

//go:noescape
func attnPV4BF16AVX2(o *float32, ldo int, p *float32, v *byte, ldv, nk, d int, corr *float32, pf int)

//go:noescape
func attnPV4F16AVX2(o *float32, ldo int, p *float32, v *byte, ldv, nk, d int, corr *float32, pf int)

// The AVX2 decode kernels (attn_decode_gen.go -isa avx2).
var (
	qk4AVX2 = [3]qk4Func{attnQK4F32AVX2, attnQK4BF16AVX2, attnQK4F16AVX2}
	pv4AVX2 = [3]pv4Func{attnPV4F32AVX2, attnPV4BF16AVX2, attnPV4F16AVX2}
)
