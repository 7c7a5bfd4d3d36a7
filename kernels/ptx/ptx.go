package ptx

import (
	_ "embed"
	"math"

	"github.com/tcrt-go/tcrt/runtime/backend"
)

//go:embed f8.ptx
var f8PTX []byte

//go:embed cubin/f8.sm_86.cubin
var f8SM86 []byte

//go:embed cubin/f8.sm_89.cubin
var f8SM89 []byte

// F8 is the float8 quantise/dequantise module (f8.ptx).
func F8() *backend.Module {
	return &backend.Module{Name: "f8", PTX: f8PTX, PTXTarget: 80, Cubins: map[int][]byte{86: f8SM86, 89: f8SM89}}
}

// Modules lists every module the package embeds.
func Modules() []*backend.Module { return []*backend.Module{F8(), SG(), Light()} }

// Kernels of module F8.
const (
	F8Quantize   = "tcrt_f8_quantize"
	F8Dequantize = "tcrt_f8_dequantize"
)

// Flags of the F8 kernels.
const (
	F8E5M2          uint32 = 1 // E5M2 (else E4M3)
	F8NonSaturating uint32 = 2 // overflow to NaN/Inf (else the largest finite value)
	F8PerRow        uint32 = 4 // one scale per row (else one per tensor)
)

// F8Block is the thread-block size the F8 kernels are launched with.
const F8Block = 256

// F8Grid returns the number of blocks for an F8 kernel over rows × cols on
// a device with sms multiprocessors: per tensor, enough blocks for one quad
// of elements a thread up to 8 waves of blocks (the kernel loops over the
// rest); per row, one block a row up to 32 blocks an SM.
func F8Grid(rows, cols int64, perRow bool, sms int) int {
	sms = max(sms, 1)
	var want int64
	if perRow {
		want = min(rows, int64(32*sms))
	} else {
		quads := (rows*cols + 3) / 4
		want = min((quads+F8Block-1)/F8Block, int64(8*sms))
	}
	return int(max(1, min(want, math.MaxInt32)))
}
