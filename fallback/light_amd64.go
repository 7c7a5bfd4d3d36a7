//go:build amd64 && !purego

package fallback

import "unsafe"

//go:generate sh -c "go run light_gen.go > light_fused_amd64.s"
//go:generate sh -c "go run light_gen.go -decl > light_fused_amd64.go"

// The vector kernels are the float32 variants of the fused kernels
// (light_fused_amd64.s, written by light_gen.go), with ordinary stores.
// The closures read lightFusedAsm when called: its init runs after this
// one.
func init() {
	f := &lightFusedAsm
	p := func(x *float32) unsafe.Pointer { return unsafe.Pointer(x) }
	lightAsm = &lightKernels{
		features: lightFusedFeatures,
		sumSq:    func(x *float32, n int) float32 { return f.sumSq[0](p(x), n) },
		affine: func(dst, x, w, b *float32, m, s float32, n int) {
			f.affine[0][0](p(dst), p(x), w, b, m, s, p(x), n, 0)
		},
		scale:  func(dst, x *float32, s float32, n int) { f.scale[0](p(dst), x, s, p(x), n, 0) },
		expSum: func(dst, x *float32, m, inv float32, n int) float32 { return f.expSumExact(dst, p(x), m, inv, n) },
		silu:   func(dst, a, b *float32, n int) { f.silu[0][0](p(dst), p(a), p(b), n, 0) },
		rot: func(olo, ohi, xlo, xhi, c, s *float32, n int) {
			f.rot[0][0](p(olo), p(ohi), p(xlo), p(xhi), c, s, n)
		},
		max:      func(x *float32, n int) float32 { return f.max[0](p(x), n) },
		geluTanh: func(dst, a, b *float32, n int) { f.geluTanh[0][0](p(dst), p(a), p(b), n, 0) },
		sum:      func(x *float32, n int) float32 { return f.sum[0](p(x), n) },
	}
}
