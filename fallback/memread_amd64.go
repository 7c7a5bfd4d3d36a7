//go:build amd64 && !purego

package fallback

// memReadAVX512 returns the XOR of the 64-bit words of n bytes at p, n a
// non-zero multiple of 1024, read as four streams (memread_amd64.s).
//
//go:noescape
func memReadAVX512(p *byte, n int) uint64

func init() {
	memReadFast = func(p []byte) uint64 { return memReadAVX512(&p[0], len(p)) }
}
