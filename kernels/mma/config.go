package mma

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tcrt-go/tcrt/tile"
)

// Inputs lists the element types of A and B (one type) the matmul
// kernels cover. E4M3 and E5M2 operands are converted to f16 in registers
// as they are copied to shared memory (every float8 value is exact in
// f16), so their kernels run f16 MMAs.
func Inputs() []tile.DType { return []tile.DType{tile.F16, tile.BF16, tile.E4M3, tile.E5M2} }

// Outputs lists the element types of D (and of C, read in the same type)
// in the order of their codes in the out parameter (OutCode).
func Outputs() []tile.DType { return []tile.DType{tile.F32, tile.F16, tile.BF16} }

// OutCode is the out parameter's code for D's type d: its index in
// Outputs, or -1 when the kernels do not cover d.
func OutCode(d tile.DType) int { return slices.Index(Outputs(), d) }

// Tile is a CTA tile shape.
type Tile int

// Tiles.
const (
	T128x128 Tile = iota
	T128x64
	T64x128
	T256x128
	numTiles
)

// BK is the K depth of one pipeline stage (elements).
const BK = 64

// Geometry describes one tile: TM x TN outputs a CTA, WarpsM x WarpsN
// warps each computing (TM/WarpsM) x (TN/WarpsN), Stages shared-memory
// stages of BK deep.
type Geometry struct {
	TM, TN         int
	WarpsM, WarpsN int
	Stages         int
}

var geometries = [numTiles]Geometry{
	T128x128: {128, 128, 2, 4, 3},
	T128x64:  {128, 64, 2, 2, 3},
	T64x128:  {64, 128, 1, 4, 3},
	T256x128: {256, 128, 4, 2, 3},
}

// Geometry returns the tile's shape (the zero Geometry for a Tile that is
// not one of the constants).
func (t Tile) Geometry() Geometry {
	if t >= numTiles {
		return Geometry{}
	}
	return geometries[t]
}

// String names the tile, e.g. "128x64".
func (t Tile) String() string {
	if t >= numTiles {
		return fmt.Sprintf("Tile(%d)", uint8(t))
	}
	g := geometries[t]
	return fmt.Sprintf("%dx%d", g.TM, g.TN)
}

// Threads is the block size.
func (g Geometry) Threads() int { return 32 * g.WarpsM * g.WarpsN }

// StageBytes is the shared memory of one pipeline stage (A and B tiles).
func (g Geometry) StageBytes() int { return (g.TM + g.TN) * BK * 2 }

// EpiStride is the row pitch, in f32, of the epilogue's staging tile: TN
// plus 8 so that the accumulator pair stores of a half-warp hit distinct
// banks.
func (g Geometry) EpiStride() int { return g.TN + 8 }

// SharedBytes is the dynamic shared memory a CTA needs: the pipeline, or
// the epilogue's f32 staging tile when that is larger (it reuses the same
// memory).
func (g Geometry) SharedBytes() int {
	return max(g.Stages*g.StageBytes(), g.TM*g.EpiStride()*4)
}

// Config selects one matmul kernel. The output type is a kernel
// parameter (out), not part of the kernel: the epilogue branches on it
// uniformly, which keeps the module at 32 matmul kernels.
type Config struct {
	Tile           Tile
	In             tile.DType // one of Inputs
	TransA, TransB bool
}

// Layout names the operand layout: NN, TN (A transposed), NT, TT.
func (c Config) Layout() string {
	s := [2]string{"N", "T"}
	b2i := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	return s[b2i(c.TransA)] + s[b2i(c.TransB)]
}

// Name is the kernel's entry symbol.
func (c Config) Name() string {
	return fmt.Sprintf("tcrt_mma_%s_%s_%s", c.Tile, c.In, strings.ToLower(c.Layout()))
}

// Tiles lists every tile shape, in order.
func Tiles() []Tile {
	out := make([]Tile, numTiles)
	for t := range out {
		out[t] = Tile(t)
	}
	return out
}

// Variants lists every kernel of the module.
func Variants() []Config {
	var out []Config
	for _, t := range Tiles() {
		for _, in := range Inputs() {
			for _, l := range [4][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
				out = append(out, Config{Tile: t, In: in, TransA: l[0], TransB: l[1]})
			}
		}
	}
	return out
}

// Activation codes of the act parameter: tile.Activation's values, which
// the compile-time check below ties them to.
const (
	ActNone = 0
	ActReLU = 1
	ActGELU = 2 // 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3))), tanh.approx.f32
	ActSiLU = 3 // x*sigmoid(x) = 0.5x(1+tanh(x/2)), tanh.approx.f32
)

// The codes must equal tile's: an array index out of range fails the build.
var _ = [1]struct{}{}[(ActNone-int(tile.ActNone))|(ActReLU-int(tile.ActReLU))|(ActGELU-int(tile.ActGELU))|(ActSiLU-int(tile.ActSiLU))]

// ParamNames lists the kernel parameters in order (the same for every
// variant; kernels/sm86mm's list plus out): D, A, B (u64 pointers); M, N,
// K, lda, ldb, ldd (u32); alpha, beta (f32); ldc, act (u32); C, bias (u64;
// bias is N f32 values, 0 for none); kc, koff (u32); out (u32, the OutCode
// of C and D); sA, sB (u64: f32 dequantisation scales of float8 A and B, 0
// for none), smode (u32: bits 0-1 A's scale, bits 2-3 B's: 0 none, 1 one
// value, 2 one a row of op(A) / column of op(B)). With kc = 0 the CTA
// covers K = [0, K) and applies the full epilogue. With kc > 0 (split-K,
// f32 output only) CTA z covers [koff + z·kc, min(K, koff + (z+1)·kc)) and
// adds alpha times its partial product into D with red.global.add.f32.
var ParamNames = []string{"D", "A", "B", "M", "N", "K", "lda", "ldb", "ldd", "alpha", "beta", "ldc", "act", "C", "bias", "kc", "koff", "out", "sA", "sB", "smode"}

// PTXVersion and PTXTarget are the module's .version and .target: PTX 7.8
// (ptxas 11.8) for sm_80, so that the driver can compile it for any later
// GPU.
const (
	PTXVersion = "7.8"
	PTXTarget  = 80
)
