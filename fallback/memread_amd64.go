//go:build amd64 && !purego

package fallback

import (
	"github.com/klauspost/cpuid/v2"
	"github.com/tcrt-go/tcrt/internal/cpufeat"
)

// memReadAVX512 and memReadAVX2 return the XOR of the 64-bit words of n
// bytes at p, n a non-zero multiple of 1024, read as four streams
// (memread_amd64.s).
//
//go:noescape
func memReadAVX512(p *byte, n int) uint64

//go:noescape
func memReadAVX2(p *byte, n int) uint64

func init() {
	memReadFast = func(p []byte) (uint64, bool) {
		switch {
		case cpufeat.Supports(cpuid.AVX512F):
			return memReadAVX512(&p[0], len(p)), true
		case cpufeat.Supports(cpuid.AVX2):
			return memReadAVX2(&p[0], len(p)), true
		}
		return 0, false
	}
}
