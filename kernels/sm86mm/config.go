// Package sm86mm holds the hand-scheduled SM86/SM89 matmul kernels
// (embedded cubins), their variants and the launch plan:
// LDGSTS.E.BYPASS.128 global->shared copies in a multi-stage pipeline
// (LDGDEPBAR / DEPBAR.LE), swizzled shared tiles read by LDSM.x4 (and
// LDSM.x4.T for an operand stored with k rows: B plain, A transposed),
// HMMA.16816.F32 with the fragments
// double-buffered in registers, and a predicated epilogue.
//
// The generator is package gen (kernels/sm86mm/gen), which only go
// generate and the tests link.
//
// Variants (Config): CTA tiles 128x128 (8 warps, 2 x 4), 128x64 (4
// warps, 2 x 2) and 64x128 (4 warps, 1 x 4: the small-M tile), every warp
// 64x32 (4x4 HMMA tiles of 16x8) so that the main loop is the same; K step
// 32; 4 shared stages; f16 or bf16 inputs, f32 accumulation; D in f32, f16
// or bf16. The epilogue stages the accumulators through shared memory and
// computes act(alpha*acc + beta*C + bias) four columns a thread, with
// 16-byte (f32) or 8-byte (f16/bf16) stores where they fit; the split-K
// kernels add alpha*acc into an f32 D with RED.E.ADD.F32 instead.
//
// Operands: A is M x K row-major (lda elements per row), or K x M with
// Config.TransA; B is K x N row-major (ldb), or N x K with Config.TransB;
// C and D are M x N row-major (ldc, ldd). Requirements (the 16-byte
// copies): lda and ldb multiples of 8, A and B 16-byte aligned; K a
// positive multiple of 8 when an operand is copied along K (A plain or B
// transposed: every layout but TN); and for an operand copied along N or
// M (B plain, A transposed) ldb >= N (lda >= M) rounded up to 8 (a copy
// that starts below N may read up to 7 elements of the row's padding;
// those only reach output columns >= N (rows >= M), which are not
// stored).
// M, N any positive values; grid Geometry.Grid, Geometry.Threads threads,
// Geometry.SharedBytes of dynamic shared memory. Nothing here has run on a
// GPU.
package sm86mm

import (
	"fmt"

	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/tile"
)

// Inputs lists the element types of A and B (one type) the kernels cover.
func Inputs() []tile.DType { return []tile.DType{tile.F16, tile.BF16} }

// Outputs lists the element types of D (and of C, which the epilogue reads
// in the same type) the kernels cover.
func Outputs() []tile.DType { return []tile.DType{tile.F32, tile.F16, tile.BF16} }

// Tile is a CTA tile shape. Every tile is built from warps of 64x32
// (4x4 HMMA.16816 tiles), so the main loop of each warp is the same.
type Tile int

// Tiles.
const (
	// Tile128x128: 8 warps, 2 (M) x 4 (N).
	Tile128x128 Tile = iota
	// Tile128x64: 4 warps, 2 x 2, for N <= 64.
	Tile128x64
	// Tile64x128: 4 warps, 1 x 4: the small-M (decode-shaped) tile.
	Tile64x128
)

// Tiles lists every tile shape.
func Tiles() []Tile { return []Tile{Tile128x128, Tile128x64, Tile64x128} }

// Config selects a variant: In one of Inputs, Out one of Outputs (f32
// with SplitK).
//
// The epilogue options (beta*C, bias, activation) are kernel parameters,
// not variants: beta == 0 skips every C load (C may then be 0), a zero bias
// pointer skips the bias, and the activation code selects none, ReLU, GELU
// (tanh form) or SiLU without a branch. With SplitK the kernel instead adds
// alpha times its partial product over one K range into D with
// RED.E.ADD.F32 (D f32, no beta, bias or activation: see SplitKChunk).
type Config struct {
	In     tile.DType
	Tile   Tile
	Out    tile.DType
	SplitK bool
	// TransA: A is stored K x M row-major (lda elements a k row), the
	// operand used is its transpose. The copies run along M and the
	// fragments are read with LDSM.16.MT88.4.
	TransA bool
	// TransB: B is stored N x K row-major (ldb elements an n row: the
	// "weights stored N x K" layout). The copies run along K and the
	// fragments are read with LDSM.16.M88.4.
	TransB bool
}

// Layout is the BLAS-style layout code: op(A) then op(B), N plain, T
// transposed.
func (c Config) Layout() string {
	l := []byte("nn")
	if c.TransA {
		l[0] = 't'
	}
	if c.TransB {
		l[1] = 't'
	}
	return string(l)
}

// Geometry is the tile shape of a variant.
type Geometry struct {
	// TM x TN is the CTA tile, WM x WN its warp grid (each warp 64x32).
	TM, TN, WM, WN int
}

// Geometry returns the variant's tile shape.
func (c Config) Geometry() Geometry {
	switch c.Tile {
	case Tile128x64:
		return Geometry{128, 64, 2, 2}
	case Tile64x128:
		return Geometry{64, 128, 1, 4}
	}
	return Geometry{128, 128, 2, 4}
}

// Threads is the CTA size.
func (g Geometry) Threads() int { return 32 * g.WM * g.WN }

// StageBytes is one pipeline stage: the A tile (TM x 32 halves) then the B
// tile (32 x TN halves).
func (g Geometry) StageBytes() int { return g.TM*TileK*2 + TileK*g.TN*2 }

// SharedBytes is the dynamic shared memory: the larger of the Stages-stage
// ring and the epilogue's staging area (8 KiB a warp).
func (g Geometry) SharedBytes() int { return max(Stages*g.StageBytes(), g.WM*g.WN*8192) }

// Grid returns the launch grid for an M x N problem (splits CTAs along K
// for the split-K kernel; 1 otherwise).
func (g Geometry) Grid(M, N, splits int) [3]int {
	if g.TM <= 0 || g.TN <= 0 {
		return [3]int{} // not a tile's geometry
	}
	return [3]int{(N + g.TN - 1) / g.TN, (M + g.TM - 1) / g.TM, max(splits, 1)}
}

func (g Geometry) String() string { return fmt.Sprintf("%dx%d", g.TM, g.TN) }

// Geometry of the 128x128 tile (variant 1), and the constants every tile
// shares.
const (
	TileM   = 128
	TileN   = 128
	TileK   = 32
	Threads = 256
	Stages  = 4
	// StageBytes is one stage of the 128x128 tile: the A tile (128x32
	// halves, 8 KiB) then the B tile (32x128 halves, 8 KiB).
	StageBytes  = 0x4000
	SharedBytes = Stages * StageBytes
)

// Activation codes (the act parameter): tile.Activation's values, which
// the compile-time check below ties them to.
const (
	ActNone = 0
	ActReLU = 1
	ActGELU = 2 // 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3))), MUFU.TANH
	ActSiLU = 3 // x*sigmoid(x) = 0.5x(1+tanh(x/2)), MUFU.TANH
)

// The codes must equal tile's: an array index out of range fails the build.
var _ = [1]struct{}{}[(ActNone-int(tile.ActNone))|(ActReLU-int(tile.ActReLU))|(ActGELU-int(tile.ActGELU))|(ActSiLU-int(tile.ActSiLU))]

// Params is the kernel's parameter list, the same for every variant: D, A,
// B (pointers), M, N, K, lda, ldb, ldd (u32), alpha, beta (f32), ldc, act
// (u32), C, bias (pointers; bias is N f32 values), kc, koff (u32: the
// split-K kernel's CTA z does K range [koff + z*kc, min(K, koff+(z+1)*kc));
// the other kernels ignore them).
func Params() []cubin.Param {
	p := []cubin.Param{{Size: 8, Align: 8}, {Size: 8, Align: 8}, {Size: 8, Align: 8}}
	for k := 0; k < 10; k++ {
		p = append(p, cubin.Param{Size: 4, Align: 4})
	}
	p = append(p, cubin.Param{Size: 8, Align: 8}, cubin.Param{Size: 8, Align: 8})
	return append(p, cubin.Param{Size: 4, Align: 4}, cubin.Param{Size: 4, Align: 4})
}

// Name returns the kernel's symbol name.
func (c Config) Name() string {
	g := c.Geometry()
	s := fmt.Sprintf("tcrt_sm86_mm_%dx%dx32_%s_%s", g.TM, g.TN, c.In, c.Out)
	if c.SplitK {
		s += "_splitk"
	}
	if c.TransA || c.TransB {
		s += "_" + c.Layout()
	}
	return s
}

// Variants lists every kernel the package ships: each tile, input and
// output type, and the split-K kernel (f32 output) of each tile and input,
// in each operand layout (NN first, then NT, TN, TT).
func Variants() []Config {
	var out []Config
	for _, l := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
		for _, t := range Tiles() {
			for _, in := range Inputs() {
				for _, o := range Outputs() {
					out = append(out, Config{In: in, Tile: t, Out: o, TransA: l[0], TransB: l[1]})
				}
				out = append(out, Config{In: in, Tile: t, Out: tile.F32, SplitK: true, TransA: l[0], TransB: l[1]})
			}
		}
	}
	return out
}
