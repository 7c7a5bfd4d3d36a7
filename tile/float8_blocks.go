package tile

import (
	"math"
	"unsafe"
)

// Block codecs: a run of equal-length blocks, each with its own scale, in
// one call (the per-block call overhead dominates for MX's 32-value
// blocks). A partial last block is not handled here: callers pass it to
// the plain slice functions.

func checkBlocks(d DType, mode OverflowMode, ndst, nsrc, nblocks, bl int) error {
	if err := checkCodec(d, mode, ndst, nsrc); err != nil {
		return err
	}
	if n, ok := MulSize(nblocks, bl); bl <= 0 || !ok || n != nsrc {
		return Errorf(ErrShape, opCodec, "blockLen", "%d blocks of %d values for %d elements", nblocks, bl, nsrc)
	}
	return nil
}

// EncodeF32ToFloat8Blocks encodes src, len(scales) consecutive blocks of
// blockLen values, as format d: dst[i] = enc(src[i]·scales[i/blockLen]), the
// product rounded to float32 (the same bytes as EncodeF32ToFloat8 block by
// block).
func EncodeF32ToFloat8Blocks(d DType, dst []uint8, src, scales []float32, blockLen int, mode OverflowMode) error {
	if err := checkBlocks(d, mode, len(dst), len(src), len(scales), blockLen); err != nil {
		return err
	}
	encF32Blocks(d, dst, src, scales, blockLen, mode)
	return nil
}

// DecodeFloat8ToF32Blocks decodes src, len(scales) consecutive blocks of
// blockLen values: dst[i] = dec(src[i])·scales[i/blockLen] in float32.
func DecodeFloat8ToF32Blocks(d DType, dst []float32, src []uint8, scales []float32, blockLen int) error {
	if err := checkBlocks(d, Saturate, len(dst), len(src), len(scales), blockLen); err != nil {
		return err
	}
	decF32Blocks(d, dst, src, scales, blockLen)
	return nil
}

// DecodeFloat8ToF32BlocksStream is DecodeFloat8ToF32Blocks for a
// destination that is not read again soon (see DecodeFloat8ToF32Stream).
func DecodeFloat8ToF32BlocksStream(d DType, dst []float32, src []uint8, scales []float32, blockLen int) error {
	if err := checkBlocks(d, Saturate, len(dst), len(src), len(scales), blockLen); err != nil {
		return err
	}
	decF32BlocksStream(d, dst, src, scales, blockLen)
	return nil
}

// AbsMaxBlocks sets dst[b] to AbsMax of block b of src (len(dst) blocks of
// blockLen values).
func AbsMaxBlocks(dst []float32, src []float32, blockLen int) error {
	if n, ok := MulSize(len(dst), blockLen); blockLen <= 0 || !ok || n != len(src) {
		return Errorf(ErrShape, opCodec, "blockLen", "%d blocks of %d values for %d elements", len(dst), blockLen, len(src))
	}
	if len(dst) == 0 {
		return nil
	}
	bits := unsafe.Slice((*uint32)(unsafe.Pointer(&dst[0])), len(dst)) // dst's memory, as bits
	absMaxBlocks(bits, src, blockLen)
	for i, b := range bits {
		if b > 0x7f800000 {
			b = 0x7fc00000
		}
		dst[i] = math.Float32frombits(b)
	}
	return nil
}

func encF32BlocksGo(d DType, dst []uint8, src, scales []float32, bl int, mode OverflowMode) {
	for b, s := range scales {
		encF32Go(d, dst[b*bl:(b+1)*bl], src[b*bl:(b+1)*bl], s, mode)
	}
}

func decF32BlocksGo(d DType, dst []float32, src []uint8, scales []float32, bl int) {
	for b, s := range scales {
		decF32Go(d, dst[b*bl:(b+1)*bl], src[b*bl:(b+1)*bl], s)
	}
}

func absMaxBlocksGo(dst []uint32, src []float32, bl int) {
	for b := range dst {
		dst[b] = absMaxGo(src[b*bl : (b+1)*bl])
	}
}
