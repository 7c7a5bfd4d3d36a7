package fallback

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestMemRead checks MemRead's checksum against a plain byte-wise XOR on
// random buffers of ragged lengths and offsets.
func TestMemRead(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 17))
	buf := make([]byte, 1<<16+64)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for _, n := range []int{0, 1, 7, 8, 129, 1000, 1023, 1024, 1025, 2048 + 8, 4097, 1 << 16} {
		for _, off := range []int{0, 1, 8, 63} {
			p := buf[off : off+n]
			var want [8]byte
			for i, c := range p {
				want[i%8] ^= c
			}
			if got := MemRead(p); got != binary.LittleEndian.Uint64(want[:]) {
				t.Errorf("MemRead(len %d, offset %d) = %#x, want %#x", n, off, got, binary.LittleEndian.Uint64(want[:]))
			}
		}
	}
}
