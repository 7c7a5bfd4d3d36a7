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
	emin := 1 - f.bias
	_, e := math.Frexp(a) // a = frac * 2^e, frac in [0.5, 1)
	e--                   // a = m * 2^e with m in [1, 2)
	if e < emin {
		e = emin
	}
	n := math.RoundToEven(math.Ldexp(a, f.mant-e)) // exact scaling, one rounding
	code := float64((e+f.bias-1)<<f.mant) + n
	if code > float64(f.maxCode) {
		if mode == Saturate {
			return sign | f.maxCode
		}
		return sign | f.overflow
	}
	return sign | uint8(code)
}

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
		return float32(math.NaN()) * sign
	}
	e := int(m >> f.mant)
	frac := int(m) & (1<<f.mant - 1)
	if e == 0 {
		return sign * float32(math.Ldexp(float64(frac), 1-f.bias-f.mant))
	}
	return sign * float32(math.Ldexp(float64(frac|1<<f.mant), e-f.bias-f.mant))
}

// F32ToE4M3 encodes x as E4M3 (fn) with round-to-nearest-even.
func F32ToE4M3(x float32, mode OverflowMode) uint8 { return fmtE4M3.encode(x, mode) }

// F32ToE5M2 encodes x as E5M2 with round-to-nearest-even.
func F32ToE5M2(x float32, mode OverflowMode) uint8 { return fmtE5M2.encode(x, mode) }

// E4M3ToF32 decodes E4M3 bits exactly.
func E4M3ToF32(b uint8) float32 { return fmtE4M3.decode(b) }

// E5M2ToF32 decodes E5M2 bits exactly.
func E5M2ToF32(b uint8) float32 { return fmtE5M2.decode(b) }
