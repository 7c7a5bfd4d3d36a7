package fallback

import (
	"testing"

	"github.com/klauspost/cpuid/v2"
	"github.com/tcrt-go/tcrt/internal/cpufeat"
)

// TestPeakLoops: one loop a name, each runnable on this CPU, and an f32
// loop on every amd64 host with AVX2+FMA (not only AVX-512 ones).
func TestPeakLoops(t *testing.T) {
	seen := map[string]bool{}
	for _, l := range PeakLoops() {
		if seen[l.Name] {
			t.Errorf("two loops named %q", l.Name)
		}
		seen[l.Name] = true
		if !cpufeat.Supports(l.Features...) {
			t.Errorf("%s needs %s, which this CPU lacks", l.Name, l.ISA())
		}
		l.Run(3)
		t.Logf("%s: %s", l.Name, l.ISA())
	}
	if len(peakLoops) > 0 && cpufeat.Supports(cpuid.AVX2, cpuid.FMA3) && !seen["f32"] {
		t.Error("no f32 peak loop on an AVX2+FMA host")
	}
}

// TestPeakLoopsMasked: with AVX-512 hidden, f32 is the AVX2+FMA loop.
func TestPeakLoopsMasked(t *testing.T) {
	restore, err := cpufeat.Set("avx2", "")
	if err != nil {
		t.Fatal(err)
	}
	defer restore()
	for _, l := range PeakLoops() {
		for _, f := range l.Features {
			if f == cpuid.AVX512F {
				t.Errorf("%s is an AVX-512 loop under TCRT_CPU=avx2", l.Name)
			}
		}
	}
}
