//go:build amd64 && !purego

package fallback

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/cpuid/v2"
)

// TestMemReadKernels checks each vector loop of MemRead that this CPU
// has, whatever the feature mask selects, against a plain XOR of the
// words, on random buffers of 1, 2, 3 and 65 KiB.
func TestMemReadKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	buf := make([]byte, 65<<10)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for _, k := range []struct {
		name string
		f    cpuid.FeatureID
		read func(p *byte, n int) uint64
	}{{"avx512", cpuid.AVX512F, memReadAVX512}, {"avx2", cpuid.AVX2, memReadAVX2}} {
		if !cpuid.CPU.Supports(k.f) {
			continue
		}
		for _, n := range []int{1 << 10, 2 << 10, 3 << 10, 65 << 10} {
			var want uint64
			for i := 0; i < n; i += 8 {
				want ^= binary.LittleEndian.Uint64(buf[i:])
			}
			if got := k.read(&buf[0], n); got != want {
				t.Errorf("%s: %d bytes: %#x, want %#x", k.name, n, got, want)
			}
		}
	}
}
