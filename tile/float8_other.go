//go:build !amd64

package tile

// Float8SIMD names the vector kernels the float8 slice codecs use ("" when
// they run the portable scalar code).
func Float8SIMD() string { return "" }

func encF32(d DType, dst []uint8, src []float32, scale float32, mode OverflowMode) {
	encF32Go(d, dst, src, scale, mode)
}

// encF32At is encF32 (there are no vector kernels to choose).
func encF32At(_ int, d DType, dst []uint8, src []float32, scale float32, mode OverflowMode) {
	encF32Go(d, dst, src, scale, mode)
}

func encF32Vec(d DType, dst []uint8, src, scales []float32, mode OverflowMode) {
	encF32VecGo(d, dst, src, scales, mode)
}

func decF32(d DType, dst []float32, src []uint8, scale float32) { decF32Go(d, dst, src, scale) }

func decF32Stream(d DType, dst []float32, src []uint8, scale float32) {
	decF32Go(d, dst, src, scale)
}

func decF32Vec(d DType, dst []float32, src []uint8, scales []float32) {
	decF32VecGo(d, dst, src, scales)
}

func absMaxBits(src []float32) uint32 { return absMaxGo(src) }

func encF32Blocks(d DType, dst []uint8, src, scales []float32, bl int, mode OverflowMode) {
	encF32BlocksGo(d, dst, src, scales, bl, mode)
}

func decF32Blocks(d DType, dst []float32, src []uint8, scales []float32, bl int) {
	decF32BlocksGo(d, dst, src, scales, bl)
}

func decF32BlocksStream(d DType, dst []float32, src []uint8, scales []float32, bl int) {
	decF32BlocksGo(d, dst, src, scales, bl)
}

func absMaxBlocks(dst []uint32, src []float32, bl int) { absMaxBlocksGo(dst, src, bl) }
