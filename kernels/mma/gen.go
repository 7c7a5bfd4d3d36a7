package mma

import (
	"fmt"
	"strings"
)

// Input is the element type of A and B.
type Input int

// Inputs. E4M3 and E5M2 operands are converted to f16 in registers as
// they are copied to shared memory (every float8 value is exact in f16),
// so their kernels run f16 MMAs.
const (
	F16 Input = iota
	BF16
	E4M3
	E5M2
	numInputs
)

var inputNames = [numInputs]string{"f16", "bf16", "e4m3", "e5m2"}

// String names the input type.
func (t Input) String() string { return inputNames[t] }

// fp8 reports whether t is a float8 type.
func (t Input) fp8() bool { return t == E4M3 || t == E5M2 }

// Size is the element size in bytes.
func (t Input) Size() int {
	if t.fp8() {
		return 1
	}
	return 2
}

// mmaType is the MMA's operand type for t.
func (t Input) mmaType() string {
	if t == BF16 {
		return "bf16"
	}
	return "f16"
}

// Float8 to f16 conversion, four bytes b0..b3 of a word x at a time: the
// permutes spread them to the high bytes of two f16 lanes (prmt selectors
// fp8Lo for b0, b1 and fp8Hi for b2, b3), which is the f16 value of an
// e5m2 byte. An e4m3 byte then keeps its sign and moves its exponent and
// mantissa down one bit (e4m3's 3 mantissa bits land at f16's top 3), a
// value 2^-8 of the e4m3 one (normal and subnormal alike, the biases
// differing by 8), and a multiplication by 256 (exact) restores it. The
// e4m3 NaN (0x7F, 0xFF) becomes ±480, not NaN.
const (
	fp8Lo       = 0x1404
	fp8Hi       = 0x3424
	fp8SignMask = 0x80008000
	fp8BodyMask = 0x7F007F00
	f16x2Of256  = 0x5C005C00
)

// Output is the element type of D (and of C, read in the same type).
type Output int

// Outputs.
const (
	OutF32 Output = iota
	OutF16
	OutBF16
)

var outputNames = [...]string{"f32", "f16", "bf16"}

// String names the output type.
func (o Output) String() string { return outputNames[o] }

// Size is the output element size in bytes.
func (o Output) Size() int {
	if o == OutF32 {
		return 4
	}
	return 2
}

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

// Geometry returns the tile's shape.
func (t Tile) Geometry() Geometry { return geometries[t] }

// String names the tile, e.g. "128x64".
func (t Tile) String() string { g := geometries[t]; return fmt.Sprintf("%dx%d", g.TM, g.TN) }

// Threads is the block size.
func (g Geometry) Threads() int { return 32 * g.WarpsM * g.WarpsN }

// StageBytes is the shared memory of one pipeline stage (A and B tiles).
func (g Geometry) StageBytes() int { return (g.TM + g.TN) * BK * 2 }

// epiStride is the row pitch, in f32, of the epilogue's staging tile: TN
// plus 8 so that the accumulator pair stores of a half-warp hit distinct
// banks.
func (g Geometry) epiStride() int { return g.TN + 8 }

// SharedBytes is the dynamic shared memory a CTA needs: the pipeline, or
// the epilogue's f32 staging tile when that is larger (it reuses the same
// memory).
func (g Geometry) SharedBytes() int {
	return max(g.Stages*g.StageBytes(), g.TM*g.epiStride()*4)
}

// Config selects one matmul kernel. The output type is a kernel
// parameter (out), not part of the kernel: the epilogue branches on it
// uniformly, which keeps the module at 32 matmul kernels.
type Config struct {
	Tile           Tile
	In             Input
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

// Variants lists every kernel of the module.
func Variants() []Config {
	var out []Config
	for t := Tile(0); t < numTiles; t++ {
		for _, in := range []Input{F16, BF16, E4M3, E5M2} {
			for _, l := range [4][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
				out = append(out, Config{Tile: t, In: in, TransA: l[0], TransB: l[1]})
			}
		}
	}
	return out
}

// Activation codes of the act parameter (fallback.Activation's values).
const (
	ActNone = 0
	ActReLU = 1
	ActGELU = 2 // 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3))), tanh.approx.f32
	ActSiLU = 3 // x*sigmoid(x) = 0.5x(1+tanh(x/2)), tanh.approx.f32
)

// ParamNames lists the kernel parameters in order (the same for every
// variant; kernels/sm86mm's list plus out): D, A, B (u64 pointers); M, N,
// K, lda, ldb, ldd (u32); alpha, beta (f32); ldc, act (u32); C, bias (u64;
// bias is N f32 values, 0 for none); kc, koff (u32); out (u32, the Output
// of C and D); sA, sB (u64: f32 dequantisation scales of float8 A and B, 0
// for none), smode (u32: bits 0-1 A's scale, bits 2-3 B's: 0 none, 1 one
// value, 2 one a row of op(A) / column of op(B)). With kc = 0 the CTA
// covers K = [0, K) and applies the full epilogue. With kc > 0 (split-K,
// f32 output only) CTA z covers [koff + z·kc, min(K, koff + (z+1)·kc)) and
// adds alpha times its partial product into D with red.global.add.f32.
var ParamNames = []string{"D", "A", "B", "M", "N", "K", "lda", "ldb", "ldd", "alpha", "beta", "ldc", "act", "C", "bias", "kc", "koff", "out", "sA", "sB", "smode"}

var paramTypes = map[string]string{"D": "u64", "A": "u64", "B": "u64", "C": "u64", "bias": "u64", "alpha": "f32", "beta": "f32",
	"sA": "u64", "sB": "u64"}

// operand describes how one operand's tile sits in shared memory: R rows of
// L 16-byte chunks, chunk c of row r stored at chunk c ^ (r & 7) (L >= 8, so
// 8 consecutive rows read at one logical chunk hit 8 distinct bank groups).
// kContig operands (A plain, B transposed) have rows along M/N and BK = 64
// elements (8 chunks) a row; the others rows along K and TM/8 (TN/8)
// chunks.
type operand struct {
	name    string // "A" or "B"
	kContig bool
	ext     int // tile extent along M (A) or N (B)
	r, l    int // rows, chunks a row
	off     int // byte offset of the tile inside a stage
}

func (c Config) operands() (a, b operand) {
	g := c.Tile.Geometry()
	mk := func(name string, kContig bool, ext, off int) operand {
		o := operand{name: name, kContig: kContig, ext: ext, off: off}
		if kContig {
			o.r, o.l = ext, BK/8
		} else {
			o.r, o.l = BK, ext/8
		}
		return o
	}
	return mk("A", !c.TransA, g.TM, 0), mk("B", c.TransB, g.TN, g.TM*BK*2)
}

// swz is the shared byte offset of logical chunk ch of row r in a tile of l
// chunks a row.
func swz(r, ch, l int) int { return (r*l + (ch ^ (r & 7))) * 16 }

// copySlot returns the row and chunk thread t copies in its i-th copy of
// operand o (threads per CTA nt): chunk t % L, rows t/L + i·(nt/L).
func (o operand) copySlot(t, i, nt int) (row, ch int) {
	return t/o.l + i*(nt/o.l), t % o.l
}

// copies is the number of 16-byte copies a thread makes per stage.
func (o operand) copies(nt int) int { return o.r * o.l / nt }

// ldsm returns the logical (row, chunk) inside operand o's tile whose
// address lane gives to the ldmatrix.x4 that loads fragment j (A: the
// 16x16 block mi = j of the warp's rows; B: the 16-column pair nj = j) at
// k step kk (16 deep), for a warp whose tile starts at element w along
// M/N. The four 8x8 matrices are, by lane group: A (a0..a3) rows 0-7 / 8-15
// by k 0-7 / 8-15; B (b0, b1 of n-tile 2j, then of 2j+1).
func (o operand) ldsm(lane, w, j, kk int) (row, ch int) {
	l7, h3, h4 := lane&7, (lane>>3)&1, lane>>4
	switch {
	case o.name == "A" && o.kContig: // rows m, non-transposed
		return w + j*16 + (lane & 15), kk*2 + h4
	case o.name == "A": // rows k, .trans
		return kk*16 + l7 + h4*8, (w+j*16)/8 + h3
	case o.kContig: // B rows n, non-transposed
		return w + j*16 + l7 + h4*8, kk*2 + h3
	default: // B rows k, .trans
		return kk*16 + l7 + h3*8, (w+j*16)/8 + h4
	}
}

// trans reports whether o's fragments load with ldmatrix .trans: when the
// tile's rows run along K (A transposed, B plain).
func (o operand) trans() bool { return !o.kContig }

// ldsmAddr is the byte offset inside a stage that lane passes to the
// ldmatrix of fragment j at k step kk, computed the way the kernel does:
// a per-lane register ((chunk + 2x) ^ (lane&7))·16 + row·L·16 for the index
// x that moves the chunk (kk for kContig operands, j otherwise), plus an
// immediate for the other index and the operand's offset.
func (o operand) ldsmAddr(lane, w, j, kk int) int {
	l7, h3, h4 := lane&7, (lane>>3)&1, lane>>4
	var row, ch int
	switch {
	case o.name == "A" && o.kContig:
		row, ch = (lane&15)+w, h4
	case o.name == "A":
		row, ch = h4*8+l7, w/8+h3
	case o.kContig:
		row, ch = h4*8+l7+w, h3
	default:
		row, ch = h3*8+l7, w/8+h4
	}
	x, imm := j, kk*16*o.l*16
	if o.kContig {
		x, imm = kk, j*16*o.l*16
	}
	return ((ch+2*x)^l7)*16 + row*o.l*16 + imm + o.off
}

// copyDst is the shared byte offset inside a stage of thread t's i-th copy
// as the kernel forms it: copy 0's swizzled offset plus i·threads·16.
func (o operand) copyDst(t, i, nt int) int {
	r0, ch := t/o.l, t%o.l
	return swz(r0, ch, o.l) + i*nt*16 + o.off
}
