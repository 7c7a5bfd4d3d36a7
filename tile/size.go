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

// ValidScale reports whether v can scale float8 data: positive and finite,
// with a finite float32 inverse (v above about 2.9e-39), so that the inverse
// a quantisation records is usable.
func ValidScale(v float32) bool {
	return v > 0 && v <= math.MaxFloat32 && 1/v <= math.MaxFloat32
}
