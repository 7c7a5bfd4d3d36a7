package sm86

import (
	"math/bits"
)

// DivMagic returns the multiplier and shift with which the scatter kernel
// divides a lane l < 2^31 by d (1 ≤ d < 2^31):
//
//	l / d = (umulhi(l, magic) + l) >> shift
//
// with shift = ⌈log2 d⌉ and magic = ⌈2^(32+shift) / d⌉ − 2^32 (the
// round-up method: the 33-bit multiplier's top bit is the added l).
func DivMagic(d uint32) (magic, shift uint32) {
	if d <= 1 {
		return 0, 0
	}
	shift = uint32(bits.Len32(d - 1))
	// ⌈2^(32+shift)/d⌉ − 2^32, computed in 64 bits: 2^(32+shift) can reach
	// 2^63.
	num := uint64(1) << (32 + shift)
	m := (num + uint64(d) - 1) / uint64(d)
	return uint32(m - 1<<32), shift
}

// ScatterBlock is the thread-block size of the scatter kernel (lane =
// ctaid·256 + tid).
const ScatterBlock = 256

// ScatterGrid returns the number of blocks for n lanes, one thread each.
func ScatterGrid(n int) int { return max(1, (n+ScatterBlock-1)/ScatterBlock) }

// ScatterParams returns the parameter slots of one scatter-add launch:
// mem, idx and src are device addresses; n lanes, cols elements a row
// (1 in element mode), memRows rows (elements in element mode); signed
// says the indices are s32 (else u32); skip drops out-of-bounds lanes
// (else they are clamped).
func ScatterParams(mem, idx, src uint64, n, cols, memRows uint32, signed, skip bool) []uint64 {
	magic, shift := DivMagic(cols)
	b := func(v bool) uint64 {
		if v {
			return 1
		}
		return 0
	}
	return []uint64{mem, idx, src, uint64(n), uint64(cols), uint64(magic), uint64(shift),
		uint64(-cols), uint64(memRows), uint64(memRows - 1), b(signed), b(skip)}
}
