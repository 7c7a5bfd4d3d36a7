package tile

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/cpuid/v2"
	"github.com/tcrt-go/tcrt/internal/cpufeat"
)

// TestFloat8CPUMask runs the slice codecs under the CPU feature mask, as
// TCRT_CPU=avx2 and TCRT_CPU=generic would set it: the mask picks the
// kernels (AVX2 under avx2 where the CPU has it, none under generic) and
// their output matches the reference bit for bit on fresh random inputs and
// the edge cases, for lengths that are no multiple of the vector width.
func TestFloat8CPUMask(t *testing.T) {
	seed := rand.Uint64()
	r := rand.New(rand.NewPCG(seed, 17))
	t.Logf("seed %d", seed)
	edges := []float32{
		0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), math.Float32frombits(0xffc00001), math.Float32frombits(0x7f800001),
		math.Float32frombits(1), math.Float32frombits(0x807fffff), 1e-3, -1e-3,
		448, 464, 480, -480, 57344, 61440, -61440, 1e30, -1e30, math.MaxFloat32,
		0x1p-9, 0x1p-10, 0x3p-11, 0x1p-16, 0x1p-17, 0x3p-18,
	}
	for _, c := range []struct{ level, want string }{{"avx2", "avx2"}, {"generic", ""}} {
		restore, err := cpufeat.Set(c.level, "")
		if err != nil {
			t.Fatal(err)
		}
		want := c.want
		if want == "avx2" && !cpuid.CPU.Supports(cpuid.AVX2) {
			want = ""
		}
		if got := Float8SIMD(); got != want {
			restore()
			t.Fatalf("TCRT_CPU=%s: float8 kernels %q, want %q", c.level, got, want)
		}
		for _, n := range []int{1, 7, 8, 9, 129, 1000} {
			src := make([]float32, n)
			scales := make([]float32, n)
			for i := range src {
				switch r.IntN(3) {
				case 0: // any bit pattern: NaNs, infinities, subnormals
					src[i] = math.Float32frombits(r.Uint32())
				case 1: // the formats' ranges
					src[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(40)-20))
				default:
					src[i] = edges[r.IntN(len(edges))]
				}
				scales[i] = float32(math.Ldexp(1+r.Float64(), r.IntN(8)-4))
			}
			copy(src, edges[:min(n, len(edges))])
			scale := scales[0]
			for _, d := range formats {
				for _, mode := range modes {
					got := poisonBytes(n)
					gotv := poisonBytes(n)
					if err := EncodeF32ToFloat8(d, got, src, scale, mode); err != nil {
						t.Fatal(err)
					}
					if err := EncodeF32ToFloat8Scales(d, gotv, src, scales, mode); err != nil {
						t.Fatal(err)
					}
					for i := range src {
						if w := EncodeFloat8Ref(d, src[i]*scale, mode); got[i] != w {
							t.Errorf("%s n=%d %v %v [%d] %#08x×%g: %#02x, reference %#02x", c.level, n, d, mode, i, math.Float32bits(src[i]), scale, got[i], w)
						}
						if w := EncodeFloat8Ref(d, src[i]*scales[i], mode); gotv[i] != w {
							t.Errorf("%s n=%d %v %v scales [%d]: %#02x, reference %#02x", c.level, n, d, mode, i, gotv[i], w)
						}
					}
				}
				codes := make([]uint8, n)
				for i := range codes {
					codes[i] = uint8(r.Uint32())
				}
				dec := poisonF32(n)
				decv := poisonF32(n)
				if err := DecodeFloat8ToF32(d, dec, codes, scale); err != nil {
					t.Fatal(err)
				}
				if err := DecodeFloat8ToF32Scales(d, decv, codes, scales); err != nil {
					t.Fatal(err)
				}
				for i, b := range codes {
					if w := DecodeFloat8Ref(d, b) * scale; math.Float32bits(dec[i]) != math.Float32bits(w) {
						t.Errorf("%s n=%d %v decode %#02x×%g: %#08x, reference %#08x", c.level, n, d, b, scale, math.Float32bits(dec[i]), math.Float32bits(w))
					}
					if w := DecodeFloat8Ref(d, b) * scales[i]; math.Float32bits(decv[i]) != math.Float32bits(w) {
						t.Errorf("%s n=%d %v decode scales %#02x: %#08x, reference %#08x", c.level, n, d, b, math.Float32bits(decv[i]), math.Float32bits(w))
					}
				}
			}
		}
		// Every code through the block decoder (blocks of 32 and 8, as MX
		// and the narrowest vector block), a random scale per block.
		for _, bl := range []int{8, 32} {
			codes := make([]uint8, 256)
			for i := range codes {
				codes[i] = uint8(i)
			}
			scales := make([]float32, 256/bl)
			for i := range scales {
				scales[i] = float32(math.Ldexp(1+r.Float64(), r.IntN(8)-4))
			}
			for _, d := range formats {
				dec := poisonF32(256)
				if err := DecodeFloat8ToF32Blocks(d, dec, codes, scales, bl); err != nil {
					t.Fatal(err)
				}
				for i, b := range codes {
					if w := DecodeFloat8Ref(d, b) * scales[i/bl]; math.Float32bits(dec[i]) != math.Float32bits(w) {
						t.Errorf("%s %v block decode %#02x (bl %d): %#08x, reference %#08x", c.level, d, b, bl, math.Float32bits(dec[i]), math.Float32bits(w))
					}
				}
			}
		}
		restore()
	}
}

// poisonBytes returns n bytes that no test expects unchanged (0xA5).
func poisonBytes(n int) []uint8 {
	b := make([]uint8, n)
	for i := range b {
		b[i] = 0xA5
	}
	return b
}

// poisonF32 returns n signalling-NaN float32s with a payload no codec makes.
func poisonF32(n int) []float32 {
	f := make([]float32, n)
	for i := range f {
		f[i] = math.Float32frombits(0x7fa5a5a5)
	}
	return f
}
