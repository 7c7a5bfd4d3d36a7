package tile

import "math"

// Slice codecs. Each checks its arguments (format, mode, lengths) and returns
// an error naming the argument instead of panicking; on error nothing is
// written. They run on the calling goroutine; the fallback package splits
// large tensors across cores. On amd64 with AVX-512, or AVX2 and F16C, the
// float32 paths use vector assembly (Float8SIMD names it; the CPU feature
// mask, TCRT_CPU, can hide it); elsewhere the branch-free scalar code.

const opCodec = "float8 codec"

func checkCodec(d DType, mode OverflowMode, ndst, nsrc int) error {
	if !IsFloat8(d) {
		return Errorf(ErrDType, opCodec, "format", "%v is not a float8 format (want e4m3 or e5m2)", d)
	}
	if !mode.Valid() {
		return Errorf(ErrArgument, opCodec, "mode", "unknown overflow mode %d", mode)
	}
	if ndst != nsrc {
		return Errorf(ErrShape, opCodec, "dst", "%d destination elements for %d source elements", ndst, nsrc)
	}
	return nil
}

// EncodeF32ToFloat8 sets dst[i] to src[i]·scale encoded as format d (E4M3 or
// E5M2): the product is rounded to float32 first (as a GPU's FMUL before its
// convert), then to the format with round-to-nearest-even and mode's
// overflow rule. A scale of 1 is the plain conversion. len(dst) must equal
// len(src).
func EncodeF32ToFloat8(d DType, dst []uint8, src []float32, scale float32, mode OverflowMode) error {
	if err := checkCodec(d, mode, len(dst), len(src)); err != nil {
		return err
	}
	encF32(d, dst, src, scale, mode)
	return nil
}

// EncodeF32ToFloat8Scales is EncodeF32ToFloat8 with one scale per element:
// dst[i] = enc(src[i]·scales[i]). The three slices have the same length.
func EncodeF32ToFloat8Scales(d DType, dst []uint8, src, scales []float32, mode OverflowMode) error {
	if err := checkCodec(d, mode, len(dst), len(src)); err != nil {
		return err
	}
	if len(scales) != len(src) {
		return Errorf(ErrShape, opCodec, "scales", "%d scales for %d elements", len(scales), len(src))
	}
	encF32Vec(d, dst, src, scales, mode)
	return nil
}

// EncodeF16ToFloat8 encodes binary16 bits src as format d, exactly as
// F16ToE4M3/F16ToE5M2 do (a 64K-entry table, built on first use).
func EncodeF16ToFloat8(d DType, dst []uint8, src []uint16, mode OverflowMode) error {
	if err := checkCodec(d, mode, len(dst), len(src)); err != nil {
		return err
	}
	t := enc16Table(false, d, mode)[:1<<16]
	for i, h := range src {
		dst[i] = t[h]
	}
	return nil
}

// EncodeBF16ToFloat8 encodes bfloat16 bits src as format d, exactly as
// BF16ToE4M3/BF16ToE5M2 do (a 64K-entry table, built on first use).
func EncodeBF16ToFloat8(d DType, dst []uint8, src []uint16, mode OverflowMode) error {
	if err := checkCodec(d, mode, len(dst), len(src)); err != nil {
		return err
	}
	t := enc16Table(true, d, mode)[:1<<16]
	for i, h := range src {
		dst[i] = t[h]
	}
	return nil
}

// DecodeFloat8ToF32 sets dst[i] to the value of src[i] (format d) times
// scale, rounded to float32 (exact when scale is 1 or a power of two that
// keeps the result normal).
func DecodeFloat8ToF32(d DType, dst []float32, src []uint8, scale float32) error {
	if err := checkCodec(d, Saturate, len(dst), len(src)); err != nil {
		return err
	}
	decF32(d, dst, src, scale)
	return nil
}

// DecodeFloat8ToF32Stream is DecodeFloat8ToF32 for a destination that is
// not read again soon, such as part of a tensor larger than the caches: the
// AVX2 kernel writes it with non-temporal stores, which skip reading each
// line of dst into the caches before overwriting it (a third of the memory
// traffic of a large decode). The values are the same.
func DecodeFloat8ToF32Stream(d DType, dst []float32, src []uint8, scale float32) error {
	if err := checkCodec(d, Saturate, len(dst), len(src)); err != nil {
		return err
	}
	decF32Stream(d, dst, src, scale)
	return nil
}

// DecodeFloat8ToF32Scales is DecodeFloat8ToF32 with one scale per element.
func DecodeFloat8ToF32Scales(d DType, dst []float32, src []uint8, scales []float32) error {
	if err := checkCodec(d, Saturate, len(dst), len(src)); err != nil {
		return err
	}
	if len(scales) != len(src) {
		return Errorf(ErrShape, opCodec, "scales", "%d scales for %d elements", len(scales), len(src))
	}
	decF32Vec(d, dst, src, scales)
	return nil
}

// DecodeFloat8ToF16 decodes src (format d) exactly to binary16 bits.
func DecodeFloat8ToF16(d DType, dst []uint16, src []uint8) error {
	if err := checkCodec(d, Saturate, len(dst), len(src)); err != nil {
		return err
	}
	t := &decTab.e4m3F16
	if d == E5M2 {
		t = &decTab.e5m2F16
	}
	for i, b := range src {
		dst[i] = t[b]
	}
	return nil
}

// DecodeFloat8ToBF16 decodes src (format d) exactly to bfloat16 bits.
func DecodeFloat8ToBF16(d DType, dst []uint16, src []uint8) error {
	if err := checkCodec(d, Saturate, len(dst), len(src)); err != nil {
		return err
	}
	t := decTable(d)
	for i, b := range src {
		dst[i] = uint16(t[b] >> 16)
	}
	return nil
}

// AbsMax returns max |src[i]| (0 for an empty slice). Any NaN makes the
// result NaN (the canonical quiet NaN): a NaN amax is a signal, not a value
// to skip.
func AbsMax(src []float32) float32 {
	m := absMaxBits(src)
	if m > 0x7f800000 {
		return math.Float32frombits(0x7fc00000)
	}
	return math.Float32frombits(m)
}

func decTable(d DType) *[256]uint32 {
	if d == E5M2 {
		return &decTab.e5m2F32
	}
	return &decTab.e4m3F32
}

// Portable kernels (the tails of the vector ones, and the whole job without
// AVX-512 or AVX2).

func encF32Go(d DType, dst []uint8, src []float32, scale float32, mode OverflowMode) {
	dst = dst[:len(src)]
	if d == E5M2 {
		for i, x := range src {
			dst[i] = encE5M2(x*scale, mode)
		}
		return
	}
	for i, x := range src {
		dst[i] = encE4M3(x*scale, mode)
	}
}

func encF32VecGo(d DType, dst []uint8, src, scales []float32, mode OverflowMode) {
	dst = dst[:len(src)]
	scales = scales[:len(src)]
	if d == E5M2 {
		for i, x := range src {
			dst[i] = encE5M2(x*scales[i], mode)
		}
		return
	}
	for i, x := range src {
		dst[i] = encE4M3(x*scales[i], mode)
	}
}

func decF32Go(d DType, dst []float32, src []uint8, scale float32) {
	t := decTable(d)
	dst = dst[:len(src)]
	for i, b := range src {
		dst[i] = math.Float32frombits(t[b]) * scale
	}
}

func decF32VecGo(d DType, dst []float32, src []uint8, scales []float32) {
	t := decTable(d)
	dst = dst[:len(src)]
	scales = scales[:len(src)]
	for i, b := range src {
		dst[i] = math.Float32frombits(t[b]) * scales[i]
	}
}

func absMaxGo(src []float32) uint32 {
	var m uint32
	for _, x := range src {
		m = max(m, math.Float32bits(x)&0x7fffffff)
	}
	return m
}
