package sim

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/x448/float16"

	"github.com/tcrt-go/tcrt/sass"
)

// Tests of the tensor-core instructions (mma_tc.go) against references
// written from the PTX ISA's fragment figures, element by element (ai,
// bi, ci as the ISA numbers them, not registers), on fresh random
// inputs, with D's registers preloaded with poison that the instruction
// must overwrite (and, beyond D, keep). Integer results are compared bit
// for bit; floating-point ones with the exact sum (math/big) rounded once
// (HMMA's documented model) or the fma chain rounded per step (DMMA).

// tcHarness loads 24 words per lane (A R4-R7, B R8-R11, C R12-R15, D
// R16-R19 preloaded, metadata R20), runs one instruction and stores
// R16-R19.
const tcHarness = `
[B------:R-:W0:-:S01] S2R R1, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R26, 0x60 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R2, R1, R26, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E.128 R4, [R2.64] ;
[B------:R-:W1:-:S04] LDG.E.128 R8, [R2.64+0x10] ;
[B------:R-:W1:-:S04] LDG.E.128 R12, [R2.64+0x20] ;
[B------:R-:W1:-:S04] LDG.E.128 R16, [R2.64+0x30] ;
[B------:R-:W1:-:S04] LDG.E.128 R20, [R2.64+0x40] ;
[B-1----:R-:W2:-:S04] %s ;
[B------:R-:W-:-:S04] IMAD.WIDE R2, R1, R26, c[0x0][0x168] ;
[B--2---:R-:W-:-:S04] STG.E.128 [R2.64], R16 ;
[B------:R-:W-:-:S05] EXIT ;
`

// isaPos is an ISA fragment figure: the matrix position of element i of
// the fragment of the thread with groupID g and threadID_in_group t.
type isaPos func(g, t, i int) (row, col int)

// The ISA's A figures (row, col) and B figures (k row, col), by the
// number of elements of one 32-bit register (q) of an m16 A: rows g and
// g+8 alternate every q elements, the second K half after 2q; tf32's
// m16n8k8 alternates rows every element (a0 g, a1 g+8, a2 g, a3 g+8).
func isaA16(q int) isaPos {
	return func(g, t, i int) (int, int) {
		row := g
		if i/q%2 == 1 {
			row = g + 8
		}
		col := t*q + i%q
		if i >= 2*q {
			col += 4 * q
		}
		return row, col
	}
}

// isaA8 is an m8 A (one register, row g) and isaB a B: k = t*q + i%q,
// plus 4q for each further register, column g.
func isaA8(q int) isaPos { return func(g, t, i int) (int, int) { return g, t*q + i } }

func isaB(q int) isaPos {
	return func(g, t, i int) (int, int) { return t*q + i%q + 4*q*(i/q), g }
}

// isaC is C and D: c0, c1 row g, c2, c3 row g+8, column 2t + i%2.
func isaC(g, t, i int) (int, int) {
	if i >= 2 {
		return g + 8, 2*t + i%2
	}
	return g, 2*t + i%2
}

// tcCase is one instruction form and its reference.
type tcCase struct {
	text       string
	m, k       int
	wa, wb     int    // element bits (64: a register pair)
	kind       byte   // 'f' float (HMMA), 'i' IMMA, 'b' BMMA, 'd' DMMA
	ta, tb     string // element types: f16 bf16 tf32 s8 u8 s4 u4 b1 f64
	acc        string // f32 f16 s32 f64
	sat        bool
	xor        bool
	aPos, bPos isaPos
	sparse     bool
	sel        int
	rnd        big.RoundingMode
	negA, absC bool // DMMA source modifiers in text
}

// nA, nB and nC count a lane's elements of A, B and C.
func (c *tcCase) nA() int {
	if c.sparse {
		return c.m * c.k / 2 / 32
	}
	return c.m * c.k / 32
}
func (c *tcCase) nB() int { return 8 * c.k / 32 }
func (c *tcCase) nC() int { return c.m * 8 / 32 }
func (c *tcCase) accBits() int {
	switch c.acc {
	case "f16":
		return 16
	case "f64":
		return 64
	}
	return 32
}

// tcCases are every form the corpus has and the other PTX shapes of each
// opcode.
func tcCases() []tcCase {
	h := func(text string, k int, ta, acc string, aq int) tcCase {
		w := 16
		if ta == "tf32" {
			w = 32
		}
		return tcCase{text: text, m: 16, k: k, wa: w, wb: w, kind: 'f', ta: ta, tb: ta, acc: acc, aPos: isaA16(aq), bPos: isaB(32 / w)}
	}
	tf32k8 := h("HMMA.1688.F32.TF32 R16, R4, R8, R12", 8, "tf32", "f32", 1)
	tf32k4 := h("HMMA.1684.F32.TF32 R16, R4, R8, R12", 4, "tf32", "f32", 1)
	im := func(text string, m, k int, ta, tb string, sat bool) tcCase {
		w := 8
		if ta[1] == '4' {
			w = 4
		}
		c := tcCase{text: text, m: m, k: k, wa: w, wb: w, kind: 'i', ta: ta, tb: tb, acc: "s32", sat: sat, aPos: isaA16(32 / w), bPos: isaB(32 / w)}
		if m == 8 {
			c.aPos = isaA8(32 / w)
		}
		return c
	}
	bm := func(text string, m, k int, xor bool) tcCase {
		c := tcCase{text: text, m: m, k: k, wa: 1, wb: 1, kind: 'b', ta: "b1", tb: "b1", acc: "s32", xor: xor, aPos: isaA16(32), bPos: isaB(32)}
		if m == 8 {
			c.aPos = isaA8(32)
		}
		return c
	}
	dm := func(text string, rnd big.RoundingMode, negA, absC bool) tcCase {
		return tcCase{text: text, m: 8, k: 4, wa: 64, wb: 64, kind: 'd', ta: "f64", tb: "f64", acc: "f64", rnd: rnd, negA: negA, absC: absC,
			aPos: func(g, t, i int) (int, int) { return g, t }, bPos: func(g, t, i int) (int, int) { return t, g }}
	}
	sp := func(text string, k int, ta, acc string, sel int) tcCase {
		c := h(text, k, ta, acc, 2)
		if ta == "tf32" {
			c.aPos = isaA16(1)
		}
		c.sparse, c.sel = true, sel
		return c
	}
	isp := func(text string, k int, ta, tb string, sat bool, sel int) tcCase {
		c := im(text, 16, k, ta, tb, sat)
		c.sparse, c.sel = true, sel
		return c
	}
	return []tcCase{
		h("HMMA.16816.F32 R16, R4, R8, R12", 16, "f16", "f32", 2),
		h("HMMA.16816.F32.BF16 R16, R4, R8, R12", 16, "bf16", "f32", 2),
		h("HMMA.1688.F32 R16, R4, R8, R12", 8, "f16", "f32", 2),
		h("HMMA.16816.F16 R16, R4, R8, R12", 16, "f16", "f16", 2),
		h("HMMA.1688.F16 R16, R4, R8, R12", 8, "f16", "f16", 2),
		tf32k8, tf32k4,
		sp("HMMA.SP.16832.F32 R16, R4, R8, R12, R20, 0x0", 32, "f16", "f32", 0),
		sp("HMMA.SP.16832.F32 R16, R4, R8, R12, R20, 0x1", 32, "f16", "f32", 1),
		sp("HMMA.SP.16816.F32.BF16 R16, R4, R8, R12, R20, 0x1", 16, "bf16", "f32", 1),
		sp("HMMA.SP.16816.F32 R16, R4, R8, R12, R20, 0x3", 16, "f16", "f32", 3),
		sp("HMMA.SP.16832.F16 R16, R4, R8, R12, R20, 0x0", 32, "f16", "f16", 0),
		sp("HMMA.SP.1688.F32.TF32 R16, R4, R8, R12, R20, 0x1", 8, "tf32", "f32", 1),
		sp("HMMA.SP.1688.F32.TF32 R16, R4, R8, R12, R20, 0x3", 8, "tf32", "f32", 3),
		sp("HMMA.SP.16816.F32.TF32 R16, R4, R8, R12, R20, 0x1", 16, "tf32", "f32", 1),
		isp("IMMA.SP.16832.S8.S8 R16, R4.ROW, R8.COL, R12, R20, 0x1", 32, "s8", "s8", false, 1),
		isp("IMMA.SP.16832.U8.S8.SAT R16, R4.ROW, R8.COL, R12, R20, 0x0", 32, "u8", "s8", true, 0),
		isp("IMMA.SP.16864.U8.U8 R16, R4.ROW, R8.COL, R12, R20, 0x0", 64, "u8", "u8", false, 0),
		isp("IMMA.SP.16832.S8.U8.SAT R16, R4.ROW, R8.COL, R12, R20, 0x1", 32, "s8", "u8", true, 1),
		isp("IMMA.SP.16864.U8.S8 R16, R4.ROW, R8.COL, R12, R20, 0x0", 64, "u8", "s8", false, 0),
		isp("IMMA.SP.16864.S4.S4.SAT R16, R4.ROW, R8.COL, R12, R20, 0x1", 64, "s4", "s4", true, 1),
		isp("IMMA.SP.168128.U4.S4 R16, R4.ROW, R8.COL, R12, R20, 0x0", 128, "u4", "s4", false, 0),
		isp("IMMA.SP.16864.S8.U8.SAT R16, R4.ROW, R8.COL, R12, R20, 0x0", 64, "s8", "u8", true, 0),
		isp("IMMA.SP.16864.S4.S4 R16, R4.ROW, R8.COL, R12, R20, 0x1", 64, "s4", "s4", false, 1),
		isp("IMMA.SP.16864.U4.S4.SAT R16, R4.ROW, R8.COL, R12, R20, 0x0", 64, "u4", "s4", true, 0),
		isp("IMMA.SP.168128.S4.U4 R16, R4.ROW, R8.COL, R12, R20, 0x0", 128, "s4", "u4", false, 0),
		isp("IMMA.SP.168128.U4.U4.SAT R16, R4.ROW, R8.COL, R12, R20, 0x0", 128, "u4", "u4", true, 0),
		im("IMMA.16832.S8.S8 R16, R4.ROW, R8.COL, R12", 16, 32, "s8", "s8", false),
		im("IMMA.16832.U8.S8.SAT R16, R4.ROW, R8.COL, R12", 16, 32, "u8", "s8", true),
		im("IMMA.16816.U8.S8.SAT R16, R4.ROW, R8.COL, R12", 16, 16, "u8", "s8", true),
		im("IMMA.16816.U8.U8 R16, R4.ROW, R8.COL, R12", 16, 16, "u8", "u8", false),
		im("IMMA.8816.S8.U8 R16, R4.ROW, R8.COL, R12", 8, 16, "s8", "u8", false),
		im("IMMA.8816.S8.S8.SAT R16, R4.ROW, R8.COL, R12", 8, 16, "s8", "s8", true),
		im("IMMA.16864.S4.S4 R16, R4.ROW, R8.COL, R12", 16, 64, "s4", "s4", false),
		im("IMMA.16864.U4.S4.SAT R16, R4.ROW, R8.COL, R12", 16, 64, "u4", "s4", true),
		im("IMMA.16832.S4.S4 R16, R4.ROW, R8.COL, R12", 16, 32, "s4", "s4", false),
		im("IMMA.16832.U4.S4.SAT R16, R4.ROW, R8.COL, R12", 16, 32, "u4", "s4", true),
		im("IMMA.8832.U4.U4 R16, R4.ROW, R8.COL, R12", 8, 32, "u4", "u4", false),
		im("IMMA.8832.S4.U4.SAT R16, R4.ROW, R8.COL, R12", 8, 32, "s4", "u4", true),
		bm("BMMA.168256.AND.POPC R16, R4.ROW, R8.COL, R12", 16, 256, false),
		bm("BMMA.168256.XOR.POPC R16, R4.ROW, R8.COL, R12", 16, 256, true),
		bm("BMMA.168128.AND.POPC R16, R4.ROW, R8.COL, R12", 16, 128, false),
		bm("BMMA.168128.XOR.POPC R16, R4.ROW, R8.COL, R12", 16, 128, true),
		bm("BMMA.88128.AND.POPC R16, R4.ROW, R8.COL, R12", 8, 128, false),
		bm("BMMA.88128.XOR.POPC R16, R4.ROW, R8.COL, R12", 8, 128, true),
		dm("DMMA.884 R16, R4, R8, R12", big.ToNearestEven, false, false),
		dm("DMMA.884.RM R16, R4, R8, R12", big.ToNegativeInf, false, false),
		dm("DMMA.884.RP R16, R4, R8, R12", big.ToPositiveInf, false, false),
		dm("DMMA.884.RZ R16, -R4, R8, |R12|", big.ToZero, true, true),
	}
}

// tcMats are a case's matrices: floating-point values as float64
// (exactly), integers as int64, and the element bits packed into the
// fragments.
type tcMats struct {
	A     [16][256]float64
	B     [256][8]float64
	C     [16][8]float64
	Ab    [16][256]uint64
	Bb    [256][8]uint64
	Cb    [16][8]uint64
	keep  [16][256]bool // sparse: the kept (nonzero-pattern) A positions
	keepU [16][256]bool // sparse: the kept metadata units (unitBits)
}

// unitBits is the sparse metadata's unit (PTX ISA, sparse matrix
// storage): 2:4 on 16-bit units for f16, bf16 and tf32 (1:2 on tf32
// elements), on 8-bit units for s8/u8 and s4/u4 (4:8 in pairs).
func (c *tcCase) unitBits() int {
	if c.kind == 'i' {
		return 8
	}
	return 16
}

// unitsPerRow is the number of metadata units in a row of A.
func (c *tcCase) unitsPerRow() int { return c.k * c.wa / c.unitBits() }

// unitOf is the unit of column k of A (tf32: its first unit).
func (c *tcCase) unitOf(k int) int { return k * c.wa / c.unitBits() }

// elemVal is the value of element bits x of type ty.
func elemVal(x uint64, ty string) float64 {
	switch ty {
	case "f16":
		return float64(float16.Frombits(uint16(x)).Float32())
	case "bf16":
		return float64(math.Float32frombits(uint32(x) << 16))
	case "tf32":
		return float64(math.Float32frombits(uint32(x) &^ 0x1fff)) // PTX: the top 19 bits
	case "f32", "s32":
		if ty == "s32" {
			return float64(int32(x))
		}
		return float64(math.Float32frombits(uint32(x)))
	case "f64":
		return math.Float64frombits(x)
	case "s8":
		return float64(int8(x))
	case "s4":
		return float64(int64(x<<60) >> 60)
	}
	return float64(x) // u8 u4 b1
}

// randElem draws element bits of type ty: small exact values when exact,
// else normal-distributed floats (tf32 with random low 13 bits) or any
// bits.
func randElem(r *rand.Rand, ty string, exact bool) uint64 {
	v := r.NormFloat64()
	if exact {
		v = float64(r.IntN(17)-8) / 8
	}
	switch ty {
	case "f16":
		return uint64(float16.Fromfloat32(float32(v)).Bits())
	case "bf16":
		return uint64(math.Float32bits(float32(v)) >> 16)
	case "tf32", "f32":
		b := math.Float32bits(float32(v))
		if ty == "tf32" {
			b = b&^0x1fff | uint32(r.IntN(0x2000)) // what the tensor core drops
		}
		return uint64(b)
	case "f64":
		if exact {
			return math.Float64bits(v)
		}
		return math.Float64bits(math.Ldexp(v, r.IntN(40)-20))
	case "s32": // a third near each end of the range: sums overflow (wrap, or .SAT clamps)
		switch r.IntN(3) {
		case 0:
			return uint64(math.MaxInt32 - r.IntN(1<<18))
		case 1:
			return uint64(uint32(math.MinInt32 + r.IntN(1<<18)))
		}
		return uint64(r.Uint32())
	}
	w := 1 // b1
	switch ty {
	case "s8", "u8":
		w = 8
	case "s4", "u4":
		w = 4
	}
	return r.Uint64() & (1<<w - 1)
}

// tcOne is the bits of 1 in each element type (tf32 with low bits the
// tensor core drops).
var tcOne = map[string]uint64{"f16": 0x3c00, "bf16": 0x3f80, "tf32": 0x3f800000 | 0x1abc, "f64": math.Float64bits(1),
	"s8": 1, "u8": 1, "s4": 1, "u4": 1, "b1": 1}

// tcSparseNibbles are the valid 2:4 index pairs (i0 < i1).
var tcSparseNibbles = []uint32{0x4, 0x8, 0xc, 0x9, 0xd, 0xe}

// fill draws the matrices. onehotA = p >= 0 makes A zero but for a
// single 1 in each row i, at column oneCol(p, i); onehotB = p, B zero but
// for a 1 in each column j, at row oneCol(p, j) (the other operand
// random): p = 0..k-1 puts a 1 at every position.
func (c *tcCase) fill(r *rand.Rand, exact bool, onehotA, onehotB int) *tcMats {
	x := &tcMats{}
	one := tcOne[c.ta]
	set := func(ty string, bitsv uint64) (uint64, float64) { return bitsv, elemVal(bitsv, ty) }
	for i := 0; i < c.m; i++ {
		// sparse rows: two kept columns in each chunk of four
		if c.sparse {
			nibbles := tcSparseNibbles
			if c.ta == "tf32" {
				nibbles = []uint32{0x4, 0xe} // a whole tf32 element: units 0,1 or 2,3
			}
			for ch := 0; ch < c.unitsPerRow()/4; ch++ {
				nb := nibbles[r.IntN(len(nibbles))]
				ou := c.unitOf(c.oneCol(onehotA, i))
				for onehotA >= 0 && ou/4 == ch && int(nb&3) != ou%4 && int(nb>>2) != ou%4 {
					nb = nibbles[r.IntN(len(nibbles))] // keep the one-hot position
				}
				x.keepU[i][4*ch+int(nb&3)] = true
				x.keepU[i][4*ch+int(nb>>2)] = true
			}
			for k := 0; k < c.k; k++ {
				x.keep[i][k] = x.keepU[i][c.unitOf(k)]
			}
		}
		for k := 0; k < c.k; k++ {
			if c.sparse && !x.keep[i][k] {
				continue
			}
			b := randElem(r, c.ta, exact)
			if onehotA >= 0 || onehotB >= 0 {
				b = 0
				if onehotA >= 0 && c.oneCol(onehotA, i) == k {
					b = one
				} else if onehotB >= 0 {
					b = randElem(r, c.ta, exact)
				}
			}
			x.Ab[i][k], x.A[i][k] = set(c.ta, b)
		}
	}
	for k := 0; k < c.k; k++ {
		for j := 0; j < 8; j++ {
			b := randElem(r, c.tb, exact)
			if onehotB >= 0 {
				b = 0
				if c.oneCol(onehotB, j) == k {
					b = one
				}
			}
			x.Bb[k][j], x.B[k][j] = set(c.tb, b)
		}
	}
	cty := c.acc
	for i := 0; i < c.m; i++ {
		for j := 0; j < 8; j++ {
			x.Cb[i][j], x.C[i][j] = set(cty, randElem(r, cty, exact))
		}
	}
	return x
}

// oneCol is the one-hot position of row (or column) i for pass p.
func (c *tcCase) oneCol(p, i int) int { return (p + 3*i) % c.k }

// pack writes the fragments of x into the harness's 24 words per lane,
// per the ISA figures, and the poison D preload.
func (c *tcCase) pack(x *tcMats) []uint32 {
	in := make([]uint32, 24*32)
	put := func(l, base, bitOff, w int, v uint64) {
		for b := 0; b < w; b += 32 {
			word := &in[24*l+base+(bitOff+b)/32]
			if w >= 32 {
				*word = uint32(v >> b)
			} else {
				*word |= uint32(v&(1<<w-1)) << ((bitOff + b) % 32)
			}
		}
	}
	for l := 0; l < 32; l++ {
		g, t := l/4, l%4
		for i := 0; i < c.nA(); i++ {
			row, col := c.aPos(g, t, i)
			v := x.Ab[row][col]
			if c.sparse {
				v = x.Ab[row][c.sparseKept(x, row, col)]
			}
			put(l, 0, i*c.wa, c.wa, v)
		}
		for i := 0; i < c.nB(); i++ {
			k, col := c.bPos(g, t, i)
			put(l, 4, i*c.wb, c.wb, x.Bb[k][col])
		}
		for i := 0; i < c.nC(); i++ {
			row, col := isaC(g, t, i)
			put(l, 8, i*c.accBits(), c.accBits(), x.Cb[row][col])
		}
		for i := 12; i < 16; i++ {
			in[24*l+i] = 0x7fc0dead
		}
	}
	if c.sparse {
		c.packMeta(x, in)
	}
	return in
}

// sparseKept is the column of the cc-th kept element of row row.
func (c *tcCase) sparseKept(x *tcMats, row, cc int) int {
	n := -1
	for k := 0; k < c.k; k++ {
		if x.keep[row][k] {
			if n++; n == cc {
				return k
			}
		}
	}
	panic("sparse row short")
}

// packMeta writes the metadata (R20) as read from the ISA's figures: per
// quad, with u units to a row (unitBits), threads sel*u/16 + j hold kept
// units 8j..8j+7 (f16: thread sel for k16, 2sel and 2sel+1 for k32), row
// g in bits 0..15 and row g+8 in bits 16..31, the 2-bit index of each
// kept unit in order. The other lanes get
// random words (they must not matter).
func (c *tcCase) packMeta(x *tcMats, in []uint32) {
	for l := 0; l < 32; l++ {
		in[24*l+16] = uint32(l) * 0x9e3779b9
	}
	threads := c.unitsPerRow() / 16
	for row := 0; row < 16; row++ {
		for cc := 0; cc < c.unitsPerRow()/2; cc++ {
			lane := 4*(row%8) + threads*c.sel + cc/8
			n, ku := -1, 0 // the cc-th kept unit
			for u := 0; u < c.unitsPerRow(); u++ {
				if x.keepU[row][u] {
					if n++; n == cc {
						ku = u
						break
					}
				}
			}
			idx := uint32(ku % 4)
			word := &in[24*lane+16]
			if cc%8 == 0 && row < 8 {
				*word = 0
			}
			*word |= idx << (16*(row/8) + 2*(cc%8))
		}
	}
}

// bigRoundFmt rounds x to a binary format of mant fraction bits and least
// normal exponent emin, to nearest even (gradual underflow included).
func bigRoundFmt(x *big.Float, mant, emin int) float64 {
	if x.Sign() == 0 {
		return 0
	}
	e := x.MantExp(nil) - 1 // |x| in [2^e, 2^(e+1))
	e = max(e, emin)
	q := new(big.Float).SetMantExp(x, mant-e) // x / ulp
	qi, _ := q.Int(nil)
	rem := new(big.Float).Sub(q, new(big.Float).SetInt(qi))
	half := big.NewFloat(0.5)
	switch rem.Abs(rem).Cmp(half) {
	case 1:
		qi.Add(qi, big.NewInt(int64(q.Sign())))
	case 0:
		if qi.Bit(0) == 1 {
			qi.Add(qi, big.NewInt(int64(q.Sign())))
		}
	}
	f, _ := new(big.Float).SetMantExp(new(big.Float).SetInt(qi), e-mant).Float64()
	return f
}

// want is the reference D element (row, col) as accumulator bits.
func (c *tcCase) want(x *tcMats, row, col int) uint64 {
	switch c.kind {
	case 'i', 'b':
		s := int64(int32(x.Cb[row][col]))
		for k := 0; k < c.k; k++ {
			a, b := int64(x.A[row][k]), int64(x.B[k][col])
			switch {
			case c.kind == 'i':
				s += a * b
			case c.xor:
				s += int64(bits.OnesCount64(uint64(a ^ b)))
			default:
				s += a & b
			}
		}
		if c.sat {
			s = max(math.MinInt32, min(math.MaxInt32, s))
		}
		return uint64(uint32(s))
	case 'd':
		acc := new(big.Float).SetPrec(2000).SetFloat64(x.C[row][col])
		if c.absC {
			acc.Abs(acc)
		}
		for k := 0; k < c.k; k++ {
			p := new(big.Float).SetPrec(2000).SetFloat64(x.A[row][k])
			if c.negA {
				p.Neg(p)
			}
			p.Mul(p, new(big.Float).SetFloat64(x.B[k][col]))
			// an exact zero sum (math/big makes it +0): IEEE 754 gives the
			// sign of two like-signed zeros, else +0, or -0 rounding down
			zneg := c.rnd == big.ToNegativeInf
			if p.Sign() == 0 && acc.Sign() == 0 && p.Signbit() == acc.Signbit() {
				zneg = p.Signbit()
			}
			acc = new(big.Float).SetPrec(2000).Set(bigRound(acc.Add(acc, p), 53, c.rnd)) // one IEEE fma
			if acc.Sign() == 0 && zneg {
				acc.Neg(acc)
			}
		}
		f, _ := acc.Float64()
		return math.Float64bits(f)
	}
	s := new(big.Float).SetPrec(2000).SetFloat64(x.C[row][col])
	for k := 0; k < c.k; k++ {
		s.Add(s, new(big.Float).SetPrec(2000).Mul(big.NewFloat(x.A[row][k]), big.NewFloat(x.B[k][col])))
	}
	if c.acc == "f16" {
		return uint64(float16.Fromfloat32(float32(bigRoundFmt(s, 10, -14))).Bits())
	}
	return uint64(math.Float32bits(float32(bigRoundFmt(s, 23, -126))))
}

// tcProgs caches the harness programs by instruction text.
var tcProgs = map[string]sass.Program{}

// run launches the case on x and checks every D element and the untouched
// D registers.
func (c *tcCase) run(t *testing.T, x *tcMats, what string) {
	t.Helper()
	in := c.pack(x)
	m := NewMemory()
	ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", poisonWords(24*32), 0)
	p, ok := tcProgs[c.text]
	if !ok {
		p = asm(t, fmt.Sprintf(tcHarness, c.text))
		tcProgs[c.text] = p
	}
	if _, err := Launch(p, Config{StrictScoreboards: true, Block: [3]int{32}, Memory: m, Params: params(ai, ao), Poison: true}); err != nil {
		t.Fatalf("%s %s: %v", c.text, what, err)
	}
	c.check(t, x, simWords(m.Bytes("out")), what, func(l, r int) uint32 { return 0x7fc0dead })
}

// check compares D in out (24 words per lane, D first) with the
// reference, and the words after D with untouched(lane, word).
func (c *tcCase) check(t *testing.T, x *tcMats, out []uint32, what string, untouched func(l, r int) uint32) {
	t.Helper()
	w := c.accBits()
	for l := 0; l < 32; l++ {
		g, tt := l/4, l%4
		for i := 0; i < c.nC(); i++ {
			row, col := isaC(g, tt, i)
			var got uint64
			for b := 0; b < w; b += 32 {
				got |= uint64(out[24*l+(i*w+b)/32]) << b
			}
			if w < 32 {
				got = got >> (i * w % 32) & (1<<w - 1)
			}
			if want := c.want(x, row, col); got != want {
				t.Fatalf("%s %s: D[%d][%d] (lane %d c%d) = %#x, want %#x", c.text, what, row, col, l, i, got, want)
			}
		}
		for r := c.nC() * w / 32; r < 4; r++ {
			if out[24*l+r] != untouched(l, r) {
				t.Fatalf("%s %s: lane %d R%d = %#x, written beyond D", c.text, what, l, 16+r, out[24*l+r])
			}
		}
	}
}

// TestSimTensorCoreRandom runs every form on fresh random inputs: small
// exact values (every model of the adding order agrees), then normal
// ones (tf32 inputs with random low 13 bits, which the tensor core
// drops).
func TestSimTensorCoreRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(140, 141))
	for _, c := range tcCases() {
		for trial := 0; trial < 3; trial++ {
			c.run(t, c.fill(r, trial == 0, -1, -1), fmt.Sprint("trial ", trial))
		}
	}
}

// TestSimTensorCoreLayout puts a single 1 in each row of A (then each
// column of B), at every position over k passes, the other operand and C
// random: D must be C plus that B row (A column) where the ISA's figures
// place them.
func TestSimTensorCoreLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(142, 143))
	for _, c := range tcCases() {
		if c.rnd != big.ToNearestEven {
			continue // the rounding variants have the same layout
		}
		for p := 0; p < c.k; p++ {
			c.run(t, c.fill(r, true, p, -1), fmt.Sprintf("A one-hot pass %d (row i: column (%d+3i)%%%d)", p, p, c.k))
			c.run(t, c.fill(r, true, -1, p), fmt.Sprintf("B one-hot pass %d (column j: row (%d+3j)%%%d)", p, p, c.k))
		}
	}
}

// TestSimTF32Truncates checks that HMMA.TF32 drops the low 13 mantissa
// bits rather than rounding them: A = 1 + 2^-11 + 2^-12 (rounds to
// 1 + 2^-10 in tf32, truncates to 1), B = 1.
func TestSimTF32Truncates(t *testing.T) {
	c := tcCases()[5]
	if c.ta != "tf32" || c.k != 8 {
		t.Fatalf("case order changed: %s", c.text)
	}
	x := &tcMats{}
	for i := 0; i < 16; i++ {
		for k := 0; k < 8; k++ {
			x.Ab[i][k] = uint64(math.Float32bits(1 + 0x1p-11 + 0x1p-12))
			x.A[i][k] = 1
			x.Bb[k][i%8] = uint64(math.Float32bits(1))
			x.B[k][i%8] = 1
		}
	}
	c.run(t, x, "1+2^-11+2^-12 times 1")
	if got := c.want(x, 0, 0); math.Float32frombits(uint32(got)) != 8 {
		t.Fatalf("reference: %v, want 8 (eight truncated ones)", math.Float32frombits(uint32(got)))
	}
}

// TestSimTensorCoreFaults: a partial warp is refused (ErrDivergent), and
// so is sparse metadata that repeats an index in a chunk (undefined in
// PTX: ErrUnsupported).
func TestSimTensorCoreFaults(t *testing.T) {
	r := rand.New(rand.NewPCG(144, 145))
	for _, c := range tcCases() {
		in := c.pack(c.fill(r, true, -1, -1))
		m := NewMemory()
		ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", poisonWords(24*32), 0)
		_, err := Launch(asm(t, fmt.Sprintf(tcHarness, c.text)), Config{Block: [3]int{31}, Memory: m, Params: params(ai, ao)})
		if !errors.Is(err, ErrDivergent) {
			t.Fatalf("%s on 31 lanes: %v, want ErrDivergent", c.text, err)
		}
	}
	// undefined metadata: a repeated index (f16, s8), and for tf32 an
	// index pair other than 0b0100 and 0b1110 (here 0b1000: indices 0, 2)
	for _, f := range []struct {
		text   string
		lane   int
		nibble uint32
	}{
		{"HMMA.SP.16832.F32 R16, R4, R8, R12, R20, 0x0", 4, 0x5},
		{"HMMA.SP.1688.F32.TF32 R16, R4, R8, R12, R20, 0x1", 5, 0x8},
		{"IMMA.SP.16832.S8.S8 R16, R4.ROW, R8.COL, R12, R20, 0x1", 6, 0xf},
	} {
		c := tcCorpusCase(t, f.text)
		x := c.fill(r, true, -1, -1)
		in := c.pack(x)
		in[24*f.lane+16] = in[24*f.lane+16]&^0xf0 | f.nibble<<4 // row lane/4: chunk 1
		m := NewMemory()
		ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", poisonWords(24*32), 0)
		_, err := Launch(asm(t, fmt.Sprintf(tcHarness, c.text)), Config{Block: [3]int{32}, Memory: m, Params: params(ai, ao)})
		if !errors.Is(err, ErrUnsupported) {
			t.Fatalf("%s with metadata nibble %#x: %v, want ErrUnsupported", c.text, f.nibble, err)
		}
		checkPoison(t, "faulting "+c.text, simWords(m.Bytes("out")), 0)
	}
}

// TestSimMOVM runs MOVM.16.MT88 (movmatrix.trans) on random words: lane
// 4q+c holds row q, columns 2c, 2c+1 of an 8x8 matrix of 16-bit
// elements; afterwards lane 4q+c holds those of the transpose.
func TestSimMOVM(t *testing.T) {
	r := rand.New(rand.NewPCG(146, 147))
	p := asm(t, fmt.Sprintf(tcHarness, "MOVM.16.MT88 R16, R4"))
	for trial := 0; trial < 4; trial++ {
		in := make([]uint32, 24*32)
		var M [8][8]uint32
		for l := 0; l < 32; l++ {
			for i := range 24 {
				in[24*l+i] = r.Uint32()
			}
			in[24*l+13] = 0x7fc0dead
			M[l/4][2*(l%4)] = in[24*l] & 0xffff
			M[l/4][2*(l%4)+1] = in[24*l] >> 16
		}
		m := NewMemory()
		ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", poisonWords(24*32), 0)
		if _, err := Launch(p, Config{StrictScoreboards: true, Block: [3]int{32}, Memory: m, Params: params(ai, ao), Poison: true}); err != nil {
			t.Fatal(err)
		}
		out := simWords(m.Bytes("out"))
		for l := 0; l < 32; l++ {
			q, cc := l/4, l%4
			want := M[2*cc][q] | M[2*cc+1][q]<<16
			if out[24*l] != want || out[24*l+1] != in[24*l+13] {
				t.Fatalf("lane %d: %#x (R17 %#x), want %#x", l, out[24*l], out[24*l+1], want)
			}
		}
	}
}

// TestSimTensorCoreDeps checks that the registers the simulator reads and
// writes for each form are those the opcode table's register counts give
// the schedule tools (sass.DepsOf).
func TestSimTensorCoreDeps(t *testing.T) {
	for _, c := range append(tcCases(), tcCase{text: "MOVM.16.MT88 R16, R4"}) {
		in, err := sass.ParseInst(c.text+" ;", 0)
		if err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		deps, err := sass.DepsOf(in)
		if err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		var d dinst
		if err := decodeInst(&d, in, 1); err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		regs := func(sp []span) map[sass.Loc]bool {
			m := map[sass.Loc]bool{}
			for _, s := range sp {
				for k := 0; s.kind == 0 && k < int(s.cnt); k++ {
					m[sass.RegLoc(sass.Reg(int(s.n)+k))] = true
				}
			}
			return m
		}
		locs := func(l []sass.Loc) map[sass.Loc]bool {
			m := map[sass.Loc]bool{}
			for _, x := range l {
				m[x] = true
			}
			return m
		}
		if got, want := regs(d.reads), locs(deps.Reads); !maps.Equal(got, want) {
			t.Errorf("%s: simulator reads %v, DepsOf %v", c.text, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
		if got, want := regs(d.writes), locs(deps.Writes); !maps.Equal(got, want) {
			t.Errorf("%s: simulator writes %v, DepsOf %v", c.text, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
	}
}
