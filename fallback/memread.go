package fallback

import "encoding/binary"

// MemRead reads all of p and returns the XOR of its little-endian 64-bit
// words (the last partial word zero-padded), so that no load can be left
// out: the read-only yardstick of memory-bound kernels (bench's
// BenchmarkMemRead runs it on every core). With AVX-512 or AVX2 (the CPU
// feature mask applies) it reads the quarters of p as four streams, a
// line from each a step (one 64-byte load or two of 32: a few sequential
// streams, as the skinny matmul kernels read B), and nothing else: no
// prefetch, no store.
func MemRead(p []byte) uint64 {
	var x uint64
	n := 0
	if memReadFast != nil && len(p) >= 1024 {
		var ok bool
		if x, ok = memReadFast(p[:len(p)&^1023]); ok {
			n = len(p) &^ 1023
		}
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
// non-zero multiple of 1024: it reports false, having read nothing, where
// the CPU (and its mask) has none of its instructions.
var memReadFast func(p []byte) (uint64, bool)
