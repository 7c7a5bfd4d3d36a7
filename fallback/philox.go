package fallback

import "math/bits"

// Philox4x32 constants (Salmon et al., "Parallel random numbers: as easy
// as 1, 2, 3", SC'11): the round multipliers and the Weyl key increments.
const (
	philoxM0 = 0xD2511F53
	philoxM1 = 0xCD9E8D57
	philoxW0 = 0x9E3779B9
	philoxW1 = 0xBB67AE85
)

// Philox4x32 returns Philox4x32-R of counter ctr under key (R rounds; 10
// is the standard Philox4x32-10 of cuRAND and Random123).
func Philox4x32(ctr [4]uint32, key [2]uint32, rounds int) [4]uint32 {
	c0, c1, c2, c3 := ctr[0], ctr[1], ctr[2], ctr[3]
	k0, k1 := key[0], key[1]
	for r := 0; r < rounds; r++ {
		if r > 0 {
			k0 += philoxW0
			k1 += philoxW1
		}
		hi0, lo0 := bits.Mul32(philoxM0, c0)
		hi1, lo1 := bits.Mul32(philoxM1, c2)
		c0, c1, c2, c3 = hi1^c1^k0, lo1, hi0^c3^k1, lo0
	}
	return [4]uint32{c0, c1, c2, c3}
}

// SampleUniform is the 64-bit uniform draw of a sampling row: the first
// two words of Philox4x32-10 with key (seed low, seed high) and counter
// (offset low, offset high, row low, row high), as x0 | x1<<32. The CPU,
// and any GPU kernel, draw the same value for the same seed, offset and
// row.
func SampleUniform(seed, offset uint64, row int) uint64 {
	r := uint64(row)
	x := Philox4x32([4]uint32{uint32(offset), uint32(offset >> 32), uint32(r), uint32(r >> 32)},
		[2]uint32{uint32(seed), uint32(seed >> 32)}, 10)
	return uint64(x[0]) | uint64(x[1])<<32
}
