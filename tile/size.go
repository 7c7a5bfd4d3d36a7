package tile

import (
	"math"
	"math/bits"
)

// Overflow-checked size arithmetic. Every size, offset and span the library
// computes from caller-supplied numbers goes through these helpers, so an
// absurd shape or stride is reported as an error instead of wrapping around
// to a small or negative number. Each returns ok == false when an operand is
// negative or the result does not fit in an int.

// MulSize returns a·b for non-negative a and b.
func MulSize(a, b int) (int, bool) {
	if a < 0 || b < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > maxInt {
		return 0, false
	}
	return int(lo), true
}

// AddSize returns a+b for non-negative a and b.
func AddSize(a, b int) (int, bool) {
	if a < 0 || b < 0 {
		return 0, false
	}
	s := uint64(a) + uint64(b)
	if s > maxInt {
		return 0, false
	}
	return int(s), true
}

// MulAddSize returns a·b + c for non-negative a, b and c.
func MulAddSize(a, b, c int) (int, bool) {
	p, ok := MulSize(a, b)
	if !ok {
		return 0, false
	}
	return AddSize(p, c)
}

// ProductSize returns the product of dims (1 for none), all non-negative.
func ProductSize(dims ...int) (int, bool) {
	n := 1
	for _, d := range dims {
		var ok bool
		if n, ok = MulSize(n, d); !ok {
			return 0, false
		}
	}
	return n, true
}

// ByteSize returns the bytes n elements of d occupy (packed 4-bit types
// round up to a whole byte).
func ByteSize(d DType, n int) (int, bool) {
	b, ok := MulSize(n, d.Bits())
	if !ok {
		return 0, false
	}
	return b/8 + min(b%8, 1), true
}

// ByteOffset returns the byte offset of element off of a buffer of d; for
// packed 4-bit types off must be even.
func ByteOffset(d DType, off int) (int, bool) {
	b, ok := MulSize(off, d.Bits())
	if !ok || b%8 != 0 {
		return 0, false
	}
	return b / 8, true
}

const maxInt = uint64(^uint(0) >> 1)

// MinScale and MaxScale bound the float8 scales tcrt accepts and writes:
// 2^-126 (the smallest normal float32) and 2^126. The range is closed under
// the float32 inverse (1/MinScale = MaxScale exactly, and 1/s rounds into
// [MinScale, MaxScale] for every s in it), so a scale and the inverse a
// quantisation records are both normal and finite, and either one can be
// given back as a scale. ClampScale maps a positive value into the range.
const (
	MinScale float32 = 0x1p-126
	MaxScale float32 = 0x1p126
)

// MinScaleBits and MaxScaleBits are MinScale's and MaxScale's float32 bit
// patterns: a scale is valid when its bits, read as an unsigned integer,
// lie in [MinScaleBits, MaxScaleBits] (what the GPU kernels test).
const (
	MinScaleBits = 0x00800000
	MaxScaleBits = 0x7e800000
)

// ValidScale reports whether v can scale float8 data: v in [MinScale,
// MaxScale], so that v and 1/v are both normal and finite. It is false for
// NaN, zero, negative values, infinities, subnormals and values above 2^126.
func ValidScale(v float32) bool {
	return v >= MinScale && v <= MaxScale
}

// ClampScale clamps a positive finite scale into [MinScale, MaxScale]; NaN,
// zero, negative values and infinities are returned unchanged (they are
// errors, not values to clamp).
func ClampScale(v float32) float32 {
	switch {
	case !(v > 0) || v > math.MaxFloat32:
		return v
	case v < MinScale:
		return MinScale
	case v > MaxScale:
		return MaxScale
	}
	return v
}
