package fallback

import (
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/internal/cpufeat"
	"github.com/tcrt-go/tcrt/tile"
)

// TestCPUMask runs the kernels under the CPU feature mask (TCRT_CPU,
// TCRT_CPU_FEATURES): the masked variants report unavailable and refuse to
// run, and the others still match the reference.
func TestCPUMask(t *testing.T) {
	r := newRand(t)
	for _, c := range []struct {
		level, features string
		want            []string // available matmul variants, best first
	}{
		{"", "-AVX512BF16", []string{"avx512", "avx2", "generic"}},
		{"avx2", "", []string{"avx2", "generic"}},
		{"generic", "", []string{"generic"}},
	} {
		restore, err := cpufeat.Set(c.level, c.features)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range MatMulVariants() {
			if v.Available() {
				got = append(got, v.Name)
			}
		}
		// On a CPU without some of these the list is shorter, never longer.
		if strings.Join(got, " ") != strings.Join(c.want, " ") && !strings.HasSuffix(strings.Join(c.want, " "), strings.Join(got, " ")) {
			t.Errorf("mask %q %q: available %v, want %v", c.level, c.features, got, c.want)
		}
		for _, v := range MatMulVariants() {
			if !v.Available() {
				a := MatMulArgs{M: 1, N: 1, K: 1, Batch: 1, A: Matrix{DType: tile.BF16}, B: Matrix{DType: tile.BF16}}
				if err := MatMulFast(v.Name, &a); err == nil {
					t.Errorf("mask %q %q: masked variant %s ran", c.level, c.features, v.Name)
				}
			}
		}
		for _, v := range AttentionVariants() {
			if v.Available() {
				continue
			}
			if err := AttentionFast(v.Name, &AttentionArgs{}); err == nil || !strings.Contains(err.Error(), v.Name) {
				t.Errorf("mask %q %q: masked attention variant %s: error %v", c.level, c.features, v.Name, err)
			}
		}
		cs := f32Case(29, 45, 37)
		check(t, r, cs)
		cs.A.dt, cs.B.dt, cs.B.trans = tile.BF16, tile.BF16, true
		check(t, r, cs)
		// The float8 codecs: AVX2 kernels under avx2, none under generic.
		if wantF8 := map[string]string{"avx2": "avx2", "generic": ""}[c.level]; c.level != "" && tile.Float8SIMD() != wantF8 && tile.Float8SIMD() != "" {
			t.Errorf("mask %q: float8 codecs use %q, want %q", c.level, tile.Float8SIMD(), wantF8)
		}
		restore()
	}
}
