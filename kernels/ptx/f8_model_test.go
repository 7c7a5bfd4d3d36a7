package ptx

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

// encodeModel transliterates tcrt_f8_encode (f8.ptx) instruction by
// instruction, so the algorithm the PTX implements is checked against the
// reference encoder on the CPU. It checks the algorithm, not ptxas or the
// GPU.
func encodeModel(u, fmt_, nonsat uint32) uint32 {
	M, B, maxc, ovf := uint32(3), uint32(7), uint32(0x7E), uint32(0x7F)
	if fmt_ != 0 {
		M, B, maxc, ovf = 2, 15, 0x7B, 0x7C
	}
	if nonsat == 0 {
		ovf = maxc
	}
	sign := (u >> 24) & 0x80
	a := u & 0x7FFFFFFF
	if a > 0x7F800000 {
		return sign | 0x7F
	}
	if a == 0x7F800000 {
		return sign | ovf
	}
	e := a >> 23
	m := a & 0x7FFFFF
	normal := e >= 128-B
	tn := a - (127-B)<<23
	shn := 23 - M
	e1 := max(e, 1)
	imp := uint32(0)
	if e != 0 {
		imp = 0x800000
	}
	ts := m | imp
	shs := min(151-B-M-e1, 25)
	t, sh := ts, shs
	if normal {
		t, sh = tn, shn
	}
	q := t >> sh
	rem := t - q<<sh
	half := uint32(1) << (sh - 1)
	if rem > half || (rem == half && q&1 != 0) {
		q++
	}
	if q > maxc {
		return sign | ovf
	}
	return sign | q
}

// decodeModel transliterates tcrt_f8_decode.
func decodeModel(b, fmt_ uint32) float32 {
	M, B := uint32(3), uint32(7)
	if fmt_ != 0 {
		M, B = 2, 15
	}
	sign := (b & 0x80) << 24
	m := b & 0x7F
	if m == 0x7F || (fmt_ != 0 && m > 0x7C) {
		return math.Float32frombits(sign | 0x7FFFFFFF)
	}
	if fmt_ != 0 && m == 0x7C {
		return math.Float32frombits(sign | 0x7F800000)
	}
	e := m >> M
	f := m & (1<<M - 1)
	if e == 0 {
		unit := math.Float32frombits(0x3B000000)
		if fmt_ != 0 {
			unit = math.Float32frombits(0x37800000)
		}
		v := float32(f) * unit
		return math.Float32frombits(math.Float32bits(v) | sign)
	}
	return math.Float32frombits(sign | (e+127-B)<<23 | f<<(23-M))
}

func refEncode(x float32, fmt_, nonsat uint32) uint32 {
	mode := tile.Saturate
	if nonsat != 0 {
		mode = tile.NonSaturating
	}
	if fmt_ != 0 {
		return uint32(tile.F32ToE5M2(x, mode))
	}
	return uint32(tile.F32ToE4M3(x, mode))
}

func TestF8EncodeModel(t *testing.T) {
	n := 1 << 22
	if testing.Short() {
		n = 1 << 18
	}
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(u uint32) {
		for f := uint32(0); f < 2; f++ {
			for ns := uint32(0); ns < 4; ns += 2 {
				got, want := encodeModel(u, f, ns), refEncode(math.Float32frombits(u), f, ns)
				if got != want {
					t.Fatalf("encode %#08x (%g) fmt %d nonsat %d: model %#02x, reference %#02x", u, math.Float32frombits(u), f, ns, got, want)
				}
			}
		}
	}
	// Every exponent with boundary mantissas (halfway points, their
	// neighbours), both signs.
	for e := uint32(0); e < 256; e++ {
		for _, m := range []uint32{0, 1, 0x7FFFFF, 0x400000, 0x3FFFFF, 0x400001, 0x80000, 0x7FFFF, 0x80001, 0x100000, 0x0FFFFF, 0x100001, 0x180000, 0x280000} {
			check(e<<23 | m)
			check(1<<31 | e<<23 | m)
		}
	}
	for range n {
		check(rng.Uint32())
	}
	// The overflow thresholds: 448/464 (E4M3), 57344/61440 (E5M2).
	for _, v := range []float32{448, 464, 463.99997, 464.00003, 480, 57344, 61440, 61439.996, 1e30, 2.0 * 0.0078125 / 16} {
		check(math.Float32bits(v))
	}
}

func TestF8DecodeModel(t *testing.T) {
	for f := uint32(0); f < 2; f++ {
		for b := uint32(0); b < 256; b++ {
			got := decodeModel(b, f)
			want := tile.E4M3ToF32(uint8(b))
			if f != 0 {
				want = tile.E5M2ToF32(uint8(b))
			}
			if got != want && !(got != got && want != want) {
				t.Fatalf("decode %#02x fmt %d: model %g, reference %g", b, f, got, want)
			}
			if got == 0 && math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("decode %#02x fmt %d: zero sign differs", b, f)
			}
		}
	}
}
