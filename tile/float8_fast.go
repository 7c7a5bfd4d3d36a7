package tile

import (
	"math"
	"sync"
)

// The fast codecs: branch-free integer code (the compiler turns the selects
// into conditional moves), 256-entry decode tables, and 64K-entry encode
// tables for the 16-bit input types, where a table lookup is exactly the
// conversion. They are separate code from fp8Format.encode/decode and are
// tested against them on every input.
//
// Encoding |x| (float32 bits a) to a format with m mantissa bits and bias b:
//   - normal range (a ≥ smallest normal): round a to m mantissa bits with
//     round-to-nearest-even done in integers, t = a + (2^(22−m) − 1) +
//     lsb, then code = (t >> (23−m)) − ((127−b) << m); a carry out of the
//     mantissa correctly bumps the exponent;
//   - subnormal range: |x| + 2^(emin−m+23) in float32 arithmetic rounds |x|
//     to a multiple of the subnormal quantum 2^(emin−m) (round to nearest
//     even, the FPU's default), and the low bits of the sum are the code;
//   - code > largest finite code → the mode's overflow code; NaN → 0x7F.
// The sign is OR-ed back in.

// encParams are the constants of one format and mode, laid out for the
// assembly kernels (broadcast as 32-bit lanes).
type encParams struct {
	half      uint32 // 2^(22-m) - 1
	shift     uint32 // 23 - m
	expAdj    uint32 // (127 - bias) << m
	minNormal uint32 // float32 bits of the smallest normal of the format
	magic     uint32 // float32 bits of 2^(emin - m + 23)
	maxCode   uint32
	nan       uint32
	ovf       uint32
	limit     uint32 // float32 bits of a power of two whose code overflows (AVX2)
}

var encParamTab = [2][2]encParams{
	{ // E4M3
		{half: 1<<19 - 1, shift: 20, expAdj: 120 << 3, minNormal: 121 << 23, magic: (127 + 14) << 23, maxCode: 0x7E, nan: 0x7F, ovf: 0x7E, limit: (127 + 9) << 23},
		{half: 1<<19 - 1, shift: 20, expAdj: 120 << 3, minNormal: 121 << 23, magic: (127 + 14) << 23, maxCode: 0x7E, nan: 0x7F, ovf: 0x7F, limit: (127 + 9) << 23},
	},
	{ // E5M2
		{half: 1<<20 - 1, shift: 21, expAdj: 112 << 2, minNormal: 113 << 23, magic: (127 + 7) << 23, maxCode: 0x7B, nan: 0x7F, ovf: 0x7B, limit: (127 + 16) << 23},
		{half: 1<<20 - 1, shift: 21, expAdj: 112 << 2, minNormal: 113 << 23, magic: (127 + 7) << 23, maxCode: 0x7B, nan: 0x7F, ovf: 0x7C, limit: (127 + 16) << 23},
	},
}

// simdCap caps the vector float8 kernels (on amd64: 2 allows AVX-512 and
// AVX2, 1 AVX2 only, 0 none) so that tests run every path on one machine.
var simdCap = 2

func fmtIndex(d DType) int {
	if d == E5M2 {
		return 1
	}
	return 0
}

// encE4M3 is the branch-free E4M3 encoder.
func encE4M3(x float32, mode OverflowMode) uint8 {
	u := math.Float32bits(x)
	a := u & 0x7fffffff
	c := (a+(1<<19-1)+(a>>20)&1)>>20 - 120<<3
	s := math.Float32bits(math.Float32frombits(a)+(1<<14)) - (127+14)<<23
	if a < 121<<23 {
		c = s
	}
	ovf := uint32(0x7E)
	if mode != Saturate {
		ovf = 0x7F
	}
	if c > 0x7E {
		c = ovf
	}
	if a > 0x7f800000 {
		c = 0x7F
	}
	return uint8(c | (u>>24)&0x80)
}

// encE5M2 is the branch-free E5M2 encoder.
func encE5M2(x float32, mode OverflowMode) uint8 {
	u := math.Float32bits(x)
	a := u & 0x7fffffff
	c := (a+(1<<20-1)+(a>>21)&1)>>21 - 112<<2
	s := math.Float32bits(math.Float32frombits(a)+(1<<7)) - (127+7)<<23
	if a < 113<<23 {
		c = s
	}
	ovf := uint32(0x7B)
	if mode != Saturate {
		ovf = 0x7C
	}
	if c > 0x7B {
		c = ovf
	}
	if a > 0x7f800000 {
		c = 0x7F
	}
	return uint8(c | (u>>24)&0x80)
}

// decBits is the branch-free decoder to float32 bits used to build the
// tables: m mantissa bits, bias b, infinity code inf (0x100 for none),
// largest finite code maxCode.
func decBits(v uint8, m, b, inf, maxCode uint32) uint32 {
	x := uint32(v) & 0x7f
	r := x<<(23-m) + (127-b)<<23
	sub := math.Float32bits(float32(x) * math.Float32frombits((127+1-b-m)<<23))
	if x < 1<<m {
		r = sub
	}
	if x > maxCode {
		r = 0x7fc00000
	}
	if x == inf {
		r = 0x7f800000
	}
	return r | (uint32(v)&0x80)<<24
}

var decTab struct {
	e4m3F32, e5m2F32 [256]uint32
	e4m3F16, e5m2F16 [256]uint16
}

func init() {
	for i := range 256 {
		v := uint8(i)
		decTab.e4m3F32[i] = decBits(v, 3, 7, 0x100, 0x7E)
		decTab.e5m2F32[i] = decBits(v, 2, 15, 0x7C, 0x7B)
		decTab.e4m3F16[i] = F32ToF16(math.Float32frombits(decTab.e4m3F32[i]))
		h := uint16(v) << 8 // E5M2 is the top byte of binary16
		if v&0x7f > 0x7C {
			h = uint16(v&0x80)<<8 | 0x7e00
		}
		decTab.e5m2F16[i] = h
	}
	// Canonical quiet NaN for f16.
	for _, i := range []int{0x7F, 0xFF} {
		decTab.e4m3F16[i] = uint16(i&0x80)<<8 | 0x7e00
	}
}

func decE4M3Bits(b uint8) uint32 { return decTab.e4m3F32[b] }
func decE5M2Bits(b uint8) uint32 { return decTab.e5m2F32[b] }

// enc16 holds the lazily built 64K-entry encode tables, indexed by
// [input: 0 f16, 1 bf16][format][mode].
var enc16 [2][2][2]struct {
	once sync.Once
	tab  []uint8
}

func enc16Table(bf16 bool, d DType, mode OverflowMode) []uint8 {
	in := 0
	if bf16 {
		in = 1
	}
	e := &enc16[in][fmtIndex(d)][mode]
	e.once.Do(func() {
		t := make([]uint8, 1<<16)
		for h := range 1 << 16 {
			var x float32
			if bf16 {
				x = BF16ToF32(uint16(h))
			} else {
				x = F16ToF32(uint16(h))
			}
			t[h] = EncodeFloat8(d, x, mode)
		}
		e.tab = t
	})
	return e.tab
}
