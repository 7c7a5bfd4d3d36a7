package gen

import (
	"github.com/tcrt-go/tcrt/kernels/mma"
	"github.com/tcrt-go/tcrt/tile"
)

// mmaType is the MMA's operand type for t.
func mmaType(t tile.DType) string {
	if t == tile.BF16 {
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

var paramTypes = map[string]string{"D": "u64", "A": "u64", "B": "u64", "C": "u64", "bias": "u64", "alpha": "f32", "beta": "f32",
	"sA": "u64", "sB": "u64"}

// operand describes how one operand's tile sits in shared memory: R rows of
// L 16-byte chunks, chunk c of row r stored at chunk c ^ (r & 7) (L >= 8, so
// 8 consecutive rows read at one logical chunk hit 8 distinct bank groups).
// kContig operands (A plain, B transposed) have rows along M/N and mma.BK = 64
// elements (8 chunks) a row; the others rows along K and TM/8 (TN/8)
// chunks.
type operand struct {
	name    string // "A" or "B"
	kContig bool
	ext     int // tile extent along M (A) or N (B)
	r, l    int // rows, chunks a row
	off     int // byte offset of the tile inside a stage
}

func operands(c mma.Config) (a, b operand) {
	g := c.Tile.Geometry()
	mk := func(name string, kContig bool, ext, off int) operand {
		o := operand{name: name, kContig: kContig, ext: ext, off: off}
		if kContig {
			o.r, o.l = ext, mma.BK/8
		} else {
			o.r, o.l = mma.BK, ext/8
		}
		return o
	}
	return mk("A", !c.TransA, g.TM, 0), mk("B", c.TransB, g.TN, g.TM*mma.BK*2)
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

var attnParamTypes = map[string]string{"table": "u64", "lens": "u64", "wsO": "u64", "wsL": "u64", "Q": "u64", "K": "u64", "V": "u64", "O": "u64", "LSE": "u64",
	"scale": "f32", "softcap": "f32", "wl": "s32", "wr": "s32"}

// tileRows describes a shared tile of rows of L 16-byte chunks with the
// module's swizzle (chunk c of row r at c ^ (r & 7)).
type tileRows struct{ rows, l, off int }

// attnTiles returns the Q tile and the K and V tiles of stage 0 (stage 1
// follows at kvStage bytes).
func attnTiles(c mma.AttnConfig) (q, k, v tileRows, kvStage int) {
	l := c.D / 8
	q = tileRows{mma.AttnBM, l, 0}
	kvb := c.BN() * c.D * 2
	k = tileRows{c.BN(), l, mma.AttnBM * c.D * 2}
	v = tileRows{c.BN(), l, k.off + kvb}
	return q, k, v, 2 * kvb
}

// copyDst is the byte offset thread t's i-th 16-byte copy writes (threads
// nt): row t/L + i·(nt/L), chunk t % L, swizzled.
func (tr tileRows) copyDst(t, i, nt int) (row, ch, off int) {
	row, ch = t/tr.l+i*(nt/tr.l), t%tr.l
	return row, ch, swz(row, ch, tr.l) + tr.off
}

// attnLdsm is the byte offset lane passes to an ldmatrix.x4 (as the kernel
// forms it: a register for x % 4, an immediate for x / 4 and the other
// index): kind 'q' (A fragment of query rows w..w+15, d step x), 'k' (B
// fragments of keys 16y..16y+15, d step x, non-transposed), 'v' (B
// fragments of d 16x..16x+15, key step y, .trans).
func (tr tileRows) attnLdsm(kind byte, lane, w, x, y int) int {
	l7, h3, h4 := lane&7, (lane>>3)&1, lane>>4
	var row, ch int
	switch kind {
	case 'q':
		row, ch = w+(lane&15), h4
	case 'k':
		row, ch = y*16+h4*8+l7, h3
	default:
		row, ch = y*16+h3*8+l7, h4
	}
	return ((ch+2*(x%4))^l7)*16 + row*tr.l*16 + (x/4)*128 + tr.off
}
