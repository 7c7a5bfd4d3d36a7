package tile

import "encoding/binary"

// OOB is the policy for an index that falls outside its memory.
type OOB uint8

// Out-of-bounds policies. Gathers accept OOBError, OOBClamp, OOBWrap and
// OOBZero; scatters OOBError, OOBSkip, OOBClamp and OOBWrap.
const (
	// OOBError faults the whole op before anything is written (the default).
	OOBError OOB = iota
	// OOBClamp moves the index to the nearest bound: below 0 to 0, at or
	// above n to n−1.
	OOBClamp
	// OOBWrap takes the index modulo n, with a non-negative result
	// (−1 becomes n−1).
	OOBWrap
	// OOBZero gathers zero bits for the out-of-bounds lane.
	OOBZero
	// OOBSkip drops the out-of-bounds scatter lane.
	OOBSkip
	numOOB
)

// String names the policy.
func (p OOB) String() string {
	switch p {
	case OOBError:
		return "error"
	case OOBClamp:
		return "clamp"
	case OOBWrap:
		return "wrap"
	case OOBZero:
		return "zero"
	case OOBSkip:
		return "skip"
	}
	return "oob(?)"
}

// Valid reports whether p is a defined policy.
func (p OOB) Valid() bool { return p < numOOB }

// IsIndexType reports whether d may hold indices or byte displacements:
// s32, u32, s64 or u64.
func IsIndexType(d DType) bool { return d == S32 || d == U32 || d == S64 || d == U64 }

// LoadIndex reads element i of an index array of type d (s32, u32, s64 or
// u64, little-endian) as raw 64-bit value: signed types are sign-extended,
// unsigned zero-extended.
func LoadIndex(d DType, data []byte, i int) uint64 {
	switch d {
	case S32:
		return uint64(int64(int32(binary.LittleEndian.Uint32(data[4*i:]))))
	case U32:
		return uint64(binary.LittleEndian.Uint32(data[4*i:]))
	default:
		return binary.LittleEndian.Uint64(data[8*i:])
	}
}

// ResolveIndex maps an index (raw bits from LoadIndex; signed says whether
// they are two's-complement) to a position in [0, n) under policy p. ok is
// false when the index is out of bounds and p does not move it (OOBError,
// OOBZero, OOBSkip): the caller faults, gathers zero, or skips. With no
// positions (n ≤ 0) every index is out of bounds and ok is false.
func ResolveIndex(raw uint64, signed bool, n int, p OOB) (pos int, ok bool) {
	if n <= 0 {
		return 0, false
	}
	if signed {
		v := int64(raw)
		if v >= 0 && v < int64(n) {
			return int(v), true
		}
		switch p {
		case OOBClamp:
			if v < 0 {
				return 0, true
			}
			return n - 1, true
		case OOBWrap:
			m := v % int64(n)
			if m < 0 {
				m += int64(n)
			}
			return int(m), true
		}
		return 0, false
	}
	if raw < uint64(n) {
		return int(raw), true
	}
	switch p {
	case OOBClamp:
		return n - 1, true
	case OOBWrap:
		return int(raw % uint64(n)), true
	}
	return 0, false
}

// DisplacementFault says why a byte displacement was refused.
type DisplacementFault uint8

// Displacement faults.
const (
	DispOK         DisplacementFault = iota
	DispOutside                      // the element does not lie inside the memory
	DispMisaligned                   // the address is not a multiple of the transfer size
)

// ResolveDisplacement computes the byte address base + d of a size-byte
// element, where d is the raw displacement (sign-extended when signed), and
// checks that the element lies inside memory of limit bytes and that the
// address is a multiple of size. A base outside [0, limit] or a size that
// is not positive is DispOutside.
func ResolveDisplacement(base int, raw uint64, signed bool, limit, size int) (int, DisplacementFault) {
	if size <= 0 || base < 0 || base > limit {
		return 0, DispOutside
	}
	room := int64(limit - size - base) // largest displacement that still fits
	if signed {
		d := int64(raw)
		if d < -int64(base) || d > room {
			return 0, DispOutside
		}
		addr := base + int(d)
		if addr%size != 0 {
			return 0, DispMisaligned
		}
		return addr, DispOK
	}
	if room < 0 || raw > uint64(room) {
		return 0, DispOutside
	}
	addr := base + int(raw)
	if addr%size != 0 {
		return 0, DispMisaligned
	}
	return addr, DispOK
}
