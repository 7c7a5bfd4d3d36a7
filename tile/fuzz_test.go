package tile

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// FuzzFloat8Codecs checks every float8 codec entry point against the
// reference on fuzzed values, scales, block lengths and slice lengths: each
// call returns a typed error and leaves dst unchanged, or writes exactly
// what the reference gives.
func FuzzFloat8Codecs(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0xff, 0xff, 0x7f, 0x7f}, uint8(0), float32(1), 2, 0)
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0xc0, 0x7f, 0, 0, 0x80, 0xff}, uint8(3), float32(0.5), 1, 1)
	f.Add([]byte{0x7e, 0x7f, 0xfe, 0xff, 0x7c, 0}, uint8(1), float32(1e-40), 3, -1)
	f.Add([]byte{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}, uint8(2), float32(448), 4611686018427387905, 2)
	f.Fuzz(func(t *testing.T, raw []byte, sel uint8, scale float32, blockLen int, extra int) {
		d := []DType{E4M3, E5M2, F32, Invalid}[sel&3]
		mode := OverflowMode(sel >> 2 & 3) // 2 and 3 are not modes
		src := make([]float32, len(raw)/4)
		for i := range src {
			src[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		valid := IsFloat8(d) && (mode == Saturate || mode == NonSaturating)
		// Encoders: dst may be shorter or longer than src by extra.
		ndst := len(src) + max(-len(src), min(extra, 3))
		dst := make([]uint8, ndst)
		for i := range dst {
			dst[i] = 0xA5
		}
		err := EncodeF32ToFloat8(d, dst, src, scale, mode)
		if !valid || ndst != len(src) {
			wantTyped(t, err, dst)
		} else {
			if err != nil {
				t.Fatalf("EncodeF32ToFloat8(%v, mode %d, scale %v): %v", d, mode, scale, err)
			}
			for i, x := range src {
				if want := EncodeFloat8Ref(d, x*scale, mode); dst[i] != want {
					t.Fatalf("EncodeF32ToFloat8(%v, %#x·%v, mode %d) = %#x, reference %#x", d, math.Float32bits(x), scale, mode, dst[i], want)
				}
				if one := EncodeFloat8(d, x, mode); one != EncodeFloat8Ref(d, x, mode) {
					t.Fatalf("EncodeFloat8(%v, %#x, mode %d) = %#x, reference %#x", d, math.Float32bits(x), mode, one, EncodeFloat8Ref(d, x, mode))
				}
			}
		}
		// Block scales: len(src)/blockLen blocks (or a mismatched count).
		nb := 0
		if blockLen > 0 {
			nb = len(src) / blockLen
		}
		nb = max(0, nb+min(extra, 1)*(extra&1))
		scales := make([]float32, nb)
		for i := range scales {
			scales[i] = scale * float32(i+1)
		}
		bdst := make([]uint8, len(src))
		for i := range bdst {
			bdst[i] = 0x5A
		}
		err = EncodeF32ToFloat8Blocks(d, bdst, src, scales, blockLen, mode)
		n, ok := MulSize(nb, blockLen)
		if !valid || blockLen <= 0 || !ok || n != len(src) {
			wantTyped(t, err, bdst)
		} else {
			if err != nil {
				t.Fatalf("EncodeF32ToFloat8Blocks: %v", err)
			}
			for i, x := range src {
				if want := EncodeFloat8Ref(d, x*scales[i/blockLen], mode); bdst[i] != want {
					t.Fatalf("EncodeF32ToFloat8Blocks element %d = %#x, reference %#x", i, bdst[i], want)
				}
			}
		}
		amax := make([]float32, nb)
		for i := range amax {
			amax[i] = -1
		}
		if err := AbsMaxBlocks(amax, src, blockLen); blockLen <= 0 || !ok || n != len(src) {
			wantTyped(t, err, nil)
		} else if err != nil {
			t.Fatalf("AbsMaxBlocks: %v", err)
		}
		// Decoders: every byte of raw as a float8 code.
		fdst := make([]float32, len(raw))
		err = DecodeFloat8ToF32(d, fdst, raw, scale)
		if !IsFloat8(d) {
			wantTyped(t, err, nil)
			return
		}
		if err != nil {
			t.Fatalf("DecodeFloat8ToF32: %v", err)
		}
		for i, b := range raw {
			want := DecodeFloat8Ref(d, b) * scale
			if got := fdst[i]; math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
				t.Fatalf("DecodeFloat8ToF32(%v, %#x)·%v = %v, reference %v", d, b, scale, got, want)
			}
			if got, want := DecodeFloat8(d, b), DecodeFloat8Ref(d, b); math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
				t.Fatalf("DecodeFloat8(%v, %#x) = %v, reference %v", d, b, got, want)
			}
		}
	})
}

// wantTyped fails unless err wraps one of the package's argument sentinels;
// dst, if given, must still hold its fill byte.
func wantTyped(t *testing.T, err error, dst []uint8) {
	t.Helper()
	if err == nil || !(errors.Is(err, ErrShape) || errors.Is(err, ErrDType) || errors.Is(err, ErrArgument)) {
		t.Fatalf("got %v, want a typed error", err)
	}
	for i := 1; i < len(dst); i++ {
		if dst[i] != dst[0] {
			t.Fatalf("a rejected call wrote dst[%d]", i)
		}
	}
}
