package tile

import (
	"math"

	"github.com/x448/float16"
)

// F16ToF32 decodes IEEE binary16 bits exactly.
func F16ToF32(h uint16) float32 { return float16.Frombits(h).Float32() }

// F32ToF16 encodes f as IEEE binary16 bits, rounding to nearest even;
// overflow gives ±Inf, NaN stays NaN.
func F32ToF16(f float32) uint16 { return float16.Fromfloat32(f).Bits() }

// BF16ToF32 decodes bfloat16 bits exactly (bf16 is the top half of binary32).
func BF16ToF32(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }

// F32ToBF16 encodes f as bfloat16 bits, rounding to nearest even. NaN stays a
// (quiet) NaN with its sign; overflow rounds to ±Inf as IEEE rounding does.
func F32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 { // NaN: keep sign and top payload, force quiet
		return uint16(u>>16) | 0x0040
	}
	// Round to nearest even on bit 16.
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

// ToFloat32 converts one element of type d, given as its raw bits in the low
// bits of v, to float32. Integers convert by value (large 32/64-bit integers
// round to nearest). It returns 0 for packed and invalid types.
func ToFloat32(d DType, v uint64) float32 {
	switch d {
	case F32:
		return math.Float32frombits(uint32(v))
	case F64:
		return float32(math.Float64frombits(v))
	case F16:
		return F16ToF32(uint16(v))
	case BF16:
		return BF16ToF32(uint16(v))
	case E4M3:
		return E4M3ToF32(uint8(v))
	case E5M2:
		return E5M2ToF32(uint8(v))
	case S8:
		return float32(int8(v))
	case U8:
		return float32(uint8(v))
	case S16:
		return float32(int16(v))
	case U16:
		return float32(uint16(v))
	case S32:
		return float32(int32(v))
	case U32:
		return float32(uint32(v))
	case S64:
		return float32(int64(v))
	case U64:
		return float32(v)
	}
	return 0
}

// FromFloat32 converts f to the raw bits of one element of type d. Floats
// round to nearest even (float8 saturates to the largest finite value, as the
// hardware's satfinite convert does); integers round to nearest even and
// saturate to the type's range, NaN giving 0.
func FromFloat32(d DType, f float32) uint64 {
	switch d {
	case F32:
		return uint64(math.Float32bits(f))
	case F64:
		return math.Float64bits(float64(f))
	case F16:
		return uint64(F32ToF16(f))
	case BF16:
		return uint64(F32ToBF16(f))
	case E4M3:
		return uint64(F32ToE4M3(f, Saturate))
	case E5M2:
		return uint64(F32ToE5M2(f, Saturate))
	}
	if !d.IsInteger() || d.IsPacked() {
		return 0
	}
	x := math.RoundToEven(float64(f))
	if x != x {
		return 0
	}
	bits := uint(d.Bits())
	if d.IsSigned() {
		lo, hi := -math.Ldexp(1, int(bits)-1), math.Ldexp(1, int(bits)-1)-1
		x = math.Max(lo, math.Min(hi, x))
		return uint64(int64(x)) & (1<<bits - 1 | boolMask(bits == 64))
	}
	hi := math.Ldexp(1, int(bits)) - 1
	x = math.Max(0, math.Min(hi, x))
	if bits == 64 && x >= math.Ldexp(1, 64) {
		return math.MaxUint64
	}
	return uint64(x)
}

func boolMask(b bool) uint64 {
	if b {
		return math.MaxUint64
	}
	return 0
}
