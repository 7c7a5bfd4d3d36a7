package fallback

import (
	"encoding/binary"

	"github.com/klauspost/cpuid/v2"
	"github.com/tcrt-go/tcrt/internal/cpufeat"
)

// MemRead reads all of p and returns the XOR of its little-endian 64-bit
// words (the last partial word zero-padded), so that no load can be left
// out: the read-only yardstick of memory-bound kernels (bench's
// BenchmarkMemRead runs it on every core). With AVX-512 (the CPU feature
// mask applies) it reads the quarters of p as four streams, a 64-byte load
// from each a step (a few sequential streams, as the skinny matmul kernels
// read B), and nothing else: no prefetch, no store.
func MemRead(p []byte) uint64 {
	var x uint64
	n := 0
	if memReadFast != nil && len(p) >= 1024 && cpufeat.Supports(cpuid.AVX512F) {
		n = len(p) &^ 1023
		x = memReadFast(p[:n])
	}
	for ; n+8 <= len(p); n += 8 {
		x ^= binary.LittleEndian.Uint64(p[n:])
	}
	if n < len(p) {
		var w [8]byte
		copy(w[:], p[n:])
		x ^= binary.LittleEndian.Uint64(w[:])
	}
	return x
}

// memReadFast, when not nil, is MemRead's vector loop over p, len(p) a
// non-zero multiple of 1024.
var memReadFast func(p []byte) uint64
