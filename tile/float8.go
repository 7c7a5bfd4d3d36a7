package tile

import "math"

// OverflowMode selects what a float8 encoder does with values beyond the
// format's largest finite magnitude.
type OverflowMode uint8

const (
	// Saturate clamps finite overflow and ±Inf to ±largest finite, keeps NaN
	// as NaN and zero's sign: the behaviour of the hardware satfinite convert.
	Saturate OverflowMode = iota
	// NonSaturating maps overflow to NaN (E4M3, which has no infinity) or to
	// ±Inf (E5M2), as ml_dtypes does.
	NonSaturating
)

// String names the mode.
func (m OverflowMode) String() string {
	if m == NonSaturating {
		return "nonsaturating"
	}
	return "saturate"
}

// Valid reports whether m is a defined mode.
func (m OverflowMode) Valid() bool { return m <= NonSaturating }

// Float8 format facts, for callers that compute scales.
const (
	// E4M3Max is the largest finite E4M3 value (code 0x7E).
	E4M3Max = 448
	// E5M2Max is the largest finite E5M2 value (code 0x7B).
	E5M2Max = 57344
	// E4M3EMax and E5M2EMax are the exponents of the largest normal values
	// (448 = 1.75·2^8, 57344 = 1.75·2^15), the emax_elem of the OCP MX rule.
	E4M3EMax = 8
	E5M2EMax = 15
)

// IsFloat8 reports whether d is E4M3 or E5M2.
func IsFloat8(d DType) bool { return d == E4M3 || d == E5M2 }

// Float8Max returns the largest finite value of a float8 format (0 for any
// other type).
func Float8Max(d DType) float32 {
	switch d {
	case E4M3:
		return E4M3Max
	case E5M2:
		return E5M2Max
	}
	return 0
}

// Float8EMax returns the exponent of the largest normal value of a float8
// format (8 for E4M3, 15 for E5M2; 0 for any other type).
func Float8EMax(d DType) int {
	switch d {
	case E4M3:
		return E4M3EMax
	case E5M2:
		return E5M2EMax
	}
	return 0
}

// fp8Format describes one float8 format.
type fp8Format struct {
	mant     int   // mantissa bits
	bias     int   // exponent bias
	maxCode  uint8 // largest finite magnitude code
	infCode  uint8 // infinity code, 0 if none
	nanCode  uint8 // canonical NaN magnitude code
	overflow uint8 // magnitude code for non-saturating overflow (NaN or Inf)
}

var (
	fmtE4M3 = fp8Format{mant: 3, bias: 7, maxCode: 0x7E, nanCode: 0x7F, overflow: 0x7F}
	fmtE5M2 = fp8Format{mant: 2, bias: 15, maxCode: 0x7B, infCode: 0x7C, nanCode: 0x7F, overflow: 0x7C}
)

// pow2 is 2^k as a float64, exactly, for -1022 ≤ k ≤ 1023.
func pow2(k int) float64 { return math.Float64frombits(uint64(1023+k) << 52) }

// encode is the plainly written float8 encoder: exact power-of-two scaling in
// float64 followed by one round-to-nearest-even. It is the reference the fast
// paths are tested against.
func (f *fp8Format) encode(x float32, mode OverflowMode) uint8 {
	u := math.Float32bits(x)
	sign := uint8(u>>24) & 0x80
	a := math.Abs(float64(x))
	switch {
	case a != a: // NaN
		return sign | f.nanCode
	case math.IsInf(a, 0):
		if mode == Saturate {
			return sign | f.maxCode
		}
		return sign | f.overflow
	case a == 0:
		return sign
	}
	// Every non-zero float32 is a normal float64, so its exponent field gives
	// a = m·2^e with m in [1, 2).
	e := int(math.Float64bits(a)>>52) - 1023
	emin := 1 - f.bias
	if e < emin {
		e = emin // subnormal range: the quantum stays 2^(emin-mant)
	}
	n := math.RoundToEven(a * pow2(f.mant-e)) // exact scaling, one rounding
	code := float64((e+f.bias-1)<<f.mant) + n
	if code > float64(f.maxCode) {
		if mode == Saturate {
			return sign | f.maxCode
		}
		return sign | f.overflow
	}
	return sign | uint8(code)
}

// decode is the plainly written float8 decoder (the reference). NaN codes
// decode to the canonical quiet NaN with the code's sign.
func (f *fp8Format) decode(b uint8) float32 {
	sign := float32(1)
	if b&0x80 != 0 {
		sign = -1
	}
	m := b & 0x7f
	if f.infCode != 0 && m == f.infCode {
		return sign * float32(math.Inf(1))
	}
	if m > f.maxCode {
		return math.Float32frombits(uint32(b&0x80)<<24 | 0x7fc00000)
	}
	e := int(m >> f.mant)
	frac := int(m) & (1<<f.mant - 1)
	if e == 0 {
		return sign * float32(float64(frac)*pow2(1-f.bias-f.mant))
	}
	return sign * float32(float64(frac|1<<f.mant)*pow2(e-f.bias-f.mant))
}

// Single values. Encoders round to nearest even; see OverflowMode for values
// beyond the largest finite one. A NaN input gives the format's NaN code
// (0x7F) with the input's sign; its payload is dropped. Zero keeps its sign.
// Decoders are exact; NaN codes decode to the target type's canonical quiet
// NaN with the code's sign (E5M2's ±Inf to ±Inf).

// F32ToE4M3 encodes x as E4M3 (fn) with round-to-nearest-even.
func F32ToE4M3(x float32, mode OverflowMode) uint8 { return encE4M3(x, mode) }

// F32ToE5M2 encodes x as E5M2 with round-to-nearest-even.
func F32ToE5M2(x float32, mode OverflowMode) uint8 { return encE5M2(x, mode) }

// F16ToE4M3 encodes binary16 bits h as E4M3 with round-to-nearest-even (one
// rounding: every f16 is exactly a float32).
func F16ToE4M3(h uint16, mode OverflowMode) uint8 { return encE4M3(F16ToF32(h), mode) }

// F16ToE5M2 encodes binary16 bits h as E5M2 with round-to-nearest-even.
func F16ToE5M2(h uint16, mode OverflowMode) uint8 { return encE5M2(F16ToF32(h), mode) }

// BF16ToE4M3 encodes bfloat16 bits h as E4M3 with round-to-nearest-even.
func BF16ToE4M3(h uint16, mode OverflowMode) uint8 { return encE4M3(BF16ToF32(h), mode) }

// BF16ToE5M2 encodes bfloat16 bits h as E5M2 with round-to-nearest-even.
func BF16ToE5M2(h uint16, mode OverflowMode) uint8 { return encE5M2(BF16ToF32(h), mode) }

// E4M3ToF32 decodes E4M3 bits exactly.
func E4M3ToF32(b uint8) float32 { return math.Float32frombits(decE4M3Bits(b)) }

// E5M2ToF32 decodes E5M2 bits exactly.
func E5M2ToF32(b uint8) float32 { return math.Float32frombits(decE5M2Bits(b)) }

// E4M3ToF16 decodes E4M3 bits exactly to binary16 bits (every E4M3 value is
// an f16 value).
func E4M3ToF16(b uint8) uint16 { return decTab.e4m3F16[b] }

// E5M2ToF16 decodes E5M2 bits exactly to binary16 bits (E5M2 is the top byte
// of an f16; NaNs become the canonical quiet NaN).
func E5M2ToF16(b uint8) uint16 { return decTab.e5m2F16[b] }

// E4M3ToBF16 decodes E4M3 bits exactly to bfloat16 bits.
func E4M3ToBF16(b uint8) uint16 { return uint16(decE4M3Bits(b) >> 16) }

// E5M2ToBF16 decodes E5M2 bits exactly to bfloat16 bits.
func E5M2ToBF16(b uint8) uint16 { return uint16(decE5M2Bits(b) >> 16) }

// EncodeFloat8 encodes one value as format d (E4M3 or E5M2); it returns 0 for
// any other type.
func EncodeFloat8(d DType, x float32, mode OverflowMode) uint8 {
	switch d {
	case E4M3:
		return encE4M3(x, mode)
	case E5M2:
		return encE5M2(x, mode)
	}
	return 0
}

// DecodeFloat8 decodes one value of format d (E4M3 or E5M2) exactly; it
// returns 0 for any other type.
func DecodeFloat8(d DType, b uint8) float32 {
	switch d {
	case E4M3:
		return E4M3ToF32(b)
	case E5M2:
		return E5M2ToF32(b)
	}
	return 0
}

// EncodeFloat8Ref is the plainly written reference encoder (float64 scaling
// and one math.RoundToEven) that the fast codecs are tested against on every
// input. It is slow; use it for oracles, not for data. It returns 0 for a
// non-float8 d.
func EncodeFloat8Ref(d DType, x float32, mode OverflowMode) uint8 {
	if !IsFloat8(d) {
		return 0
	}
	if d == E5M2 {
		return fmtE5M2.encode(x, mode)
	}
	return fmtE4M3.encode(x, mode)
}

// DecodeFloat8Ref is the plainly written reference decoder. It returns 0 for
// a non-float8 d.
func DecodeFloat8Ref(d DType, b uint8) float32 {
	if !IsFloat8(d) {
		return 0
	}
	if d == E5M2 {
		return fmtE5M2.decode(b)
	}
	return fmtE4M3.decode(b)
}
