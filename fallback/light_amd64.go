//go:build amd64 && !purego

package fallback

import "github.com/klauspost/cpuid/v2"

//go:generate sh -c "go run light_gen.go > light_fused_amd64.s"
//go:generate sh -c "go run light_gen.go -decl > light_fused_amd64.go"

// The AVX2 and FMA row kernels of light_amd64.s; n is rounded down to a
// multiple of 8.

//go:noescape
func lightSumSqAVX2(x *float32, n int) float32

//go:noescape
func lightAffineAVX2(dst, x, w, b *float32, m, s float32, n int)

//go:noescape
func lightScaleAVX2(dst, x *float32, s float32, n int)

//go:noescape
func lightExpSumAVX2(dst, x *float32, m, inv float32, n int) float32

//go:noescape
func lightSiluAVX2(dst, a, b *float32, n int)

//go:noescape
func lightRotAVX2(olo, ohi, xlo, xhi, c, s *float32, n int)

//go:noescape
func lightMaxAVX2(x *float32, n int) float32

//go:noescape
func lightGeluTanhAVX2(dst, a, b *float32, n int)

//go:noescape
func lightSumAVX2(x *float32, n int) float32

func init() {
	lightAsm = &lightKernels{
		features: []cpuid.FeatureID{cpuid.AVX2, cpuid.FMA3},
		sumSq:    lightSumSqAVX2,
		affine:   lightAffineAVX2,
		scale:    lightScaleAVX2,
		expSum:   lightExpSumAVX2,
		silu:     lightSiluAVX2,
		rot:      lightRotAVX2,
		max:      lightMaxAVX2,
		geluTanh: lightGeluTanhAVX2,
		sum:      lightSumAVX2,
	}
}
