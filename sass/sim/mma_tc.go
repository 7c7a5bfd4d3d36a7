package sim

import (
	"math"

	"github.com/tcrt-go/tcrt/sass"
)

// The tensor-core instructions: HMMA (f16, bf16 and tf32 multiplicands,
// f32 or f16 accumulators, dense or 2:4 sparse A), IMMA (8- and 4-bit
// integers), BMMA (1-bit AND/XOR with population count), DMMA (binary64)
// and MOVM (movmatrix). Each is one PTX mma.sync (mma.sp.sync,
// movmatrix.sync) of a warp; all 32 lanes must execute it.
//
// One fragment layout serves every shape (PTX ISA, "Matrix fragments for
// mma.m16n8k*" and mma.m8n8k*): with g = lane/4 and t = lane%4, a 32-bit
// register holds per = 32/width elements (a binary64 element takes a
// register pair: per = 1 and the "register" is the pair):
//
//	A, register r, element e: row g + 8*(r&1), column per*t + e + 4*per*(r>>1)
//	B, register r, element e: row (k) per*t + e + 4*per*r, column g
//	C/D, element i:           row g + 8*(i>>1), column 2t + (i&1)
//
// An m8 A has one register (row g); an m8 C/D two elements (row g). f16
// accumulators pack elements 2j and 2j+1 into register j (low half
// first); binary64 ones take a pair each. N is 8 for every shape.
//
// Numerics:
//   - IMMA and BMMA are exact: the products (AND or XOR then population
//     count for BMMA) and C summed in 64 bits, then wrapped to 32 bits, or
//     clamped to the int32 range with .SAT.
//   - HMMA: tf32 inputs keep the top 19 bits of their f32 registers (sign,
//     exponent, 10 mantissa bits: the low 13 bits are dropped, truncation,
//     as the PTX ISA says mma .tf32 does with f32 register contents;
//     cvt.rna.tf32.f32 is how PTX code rounds earlier). Each output is
//     the binary64 sum of C and the products in k order (every product of
//     two f16, bf16 or tf32 values is exact in binary64), rounded once to
//     binary32 or, with f16 accumulators, to binary16 (nearest even; a
//     NaN result is the canonical 0x7fffffff or 0x7fff). The hardware
//     adds with a fixed-width aligned accumulator (24 fractional bits on
//     Ampere and Ada, and m16n8k16/m16n8k8-tf32 in two k halves, as
//     microsoft/MMA-Sim measured) so its result may differ in the last
//     bits when the terms' exponents differ widely or cancel: a
//     documented approximation, exact whenever every partial sum is
//     exact in both.
//   - DMMA.884 is an IEEE binary64 fused multiply-add chain in k order,
//     d = fma(a3, b3, fma(a2, b2, fma(a1, b1, fma(a0, b0, c)))), each step
//     rounded in the instruction's direction: the order MMA-Sim's
//     hardware-probed model gives for fp64 mma (each step a DFMA); not
//     measured here.

// mmaElem is a multiplicand's element type.
type mmaElem uint8

const (
	eF16 mmaElem = iota
	eBF16
	eTF32
	eS8
	eU8
	eS4
	eU4
	eB1
	eF64
)

// elemBits is each element type's width in bits.
var elemBits = [...]int{eF16: 16, eBF16: 16, eTF32: 32, eS8: 8, eU8: 8, eS4: 4, eU4: 4, eB1: 1, eF64: 64}

// intElems maps IMMA's type tokens to element types.
var intElems = map[string]mmaElem{"S8": eS8, "U8": eU8, "S4": eS4, "U4": eU4}

// mmaAcc is the accumulator (C and D) type.
type mmaAcc uint8

const (
	accF32 mmaAcc = iota
	accF16
	accS32
	accF64
)

// mmaForm is a decoded tensor-core instruction: D (m x 8) = A (m x k) *
// B (k x 8) + C.
type mmaForm struct {
	m, k       int
	a, b       mmaElem
	acc        mmaAcc
	sat        bool  // IMMA .SAT: clamp to the int32 range
	bop        uint8 // BMMA: bopAND or bopXOR
	sparse     bool  // HMMA.SP, IMMA.SP: A holds k/2 columns, metadata selects them
	sel        int   // the sparsity selector
	rnd        rmode // DMMA's rounding
	na, nb, nc int   // registers per lane of A, B, C/D
}

const (
	bopAND = 1
	bopXOR = 2
)

// mmaShapes are the shape tokens: m and k.
var mmaShapes = map[string][2]int{
	"1684": {16, 4}, "1688": {16, 8}, "16816": {16, 16}, "16832": {16, 32}, "16864": {16, 64},
	"8816": {8, 16}, "8832": {8, 32}, "884": {8, 4}, "88128": {8, 128}, "168128": {16, 128}, "168256": {16, 256},
}

// regsFor sets the register counts of f from its shape and types: A holds
// m*k elements over the warp (half of them when sparse), B k*8, C m*8.
func (f *mmaForm) regsFor() {
	ka := f.k
	if f.sparse {
		ka /= 2
	}
	f.na = f.m * ka * elemBits[f.a] / 1024
	f.nb = 8 * f.k * elemBits[f.b] / 1024
	accBits := [...]int{accF32: 32, accF16: 16, accS32: 32, accF64: 64}[f.acc]
	f.nc = f.m * 8 * accBits / 1024
}

// fragA, fragB and fragC are the fragment layout (see the top of the
// file): the matrix position of element e of register (or pair) r of
// lane l's fragment, per elements to a register; fragC of element i.
func fragA(l, r, e, per int) (row, col int) {
	return l/4 + 8*(r&1), per*(l%4) + e + 4*per*(r>>1)
}

func fragB(l, r, e, per int) (k, col int) {
	return per*(l%4) + e + 4*per*r, l / 4
}

func fragC(l, i int) (row, col int) {
	return l/4 + 8*(i>>1), 2*(l%4) + i&1
}

// mmaOperands decodes D, A, B, C (and the remaining operands, which the
// callers decode) with f's register counts.
func (c *decoder) mmaOperands(f *mmaForm) error {
	for k, cnt := range []int{f.na, f.nb, f.nc} {
		if err := c.src(c.a[k+1], k, cnt); err != nil {
			return err
		}
	}
	c.d.op, c.d.mma = xMMA, f
	return c.dst(c.a[0], f.nc)
}

// noSourceMods refuses negated or absolute-value operands (the forms have
// no bits for them).
func (c *decoder) noSourceMods() error {
	for _, o := range c.a {
		if o.Neg || o.Abs || o.Not {
			return bad("%s: source modifiers", c.in.Op)
		}
	}
	return nil
}

// mmaShape reads the shape token.
func (c *decoder) mmaShape(f *mmaForm) error {
	for _, m := range c.mods {
		if s, ok := mmaShapes[m]; ok {
			f.m, f.k = s[0], s[1]
			return nil
		}
	}
	return bad("%s: no shape", c.in.Op)
}

// decHMMA decodes HMMA(.SP).shape.{F32,F16}(.BF16|.TF32) D, A, B, C (,
// metadata, selector).
func (c *decoder) decHMMA() error {
	mods := c.mods
	f := &mmaForm{sparse: has(mods, "SP")}
	if err := c.mmaShape(f); err != nil {
		return err
	}
	switch {
	case has(mods, "F32"):
		f.acc = accF32
	case has(mods, "F16"):
		f.acc = accF16
	default:
		return bad("HMMA: no accumulator type")
	}
	switch {
	case has(mods, "TF32"):
		f.a = eTF32
	case has(mods, "BF16"):
		f.a = eBF16
	}
	f.b = f.a
	// the PTX shapes: f16/bf16 m16n8k8 and k16 (sparse k16 and k32), tf32
	// m16n8k4 and k8, f32 accumulators only for bf16 and tf32.
	ok := map[mmaElem]map[int]bool{eF16: {8: true, 16: true}, eBF16: {8: true, 16: true}, eTF32: {4: true, 8: true}}[f.a][f.k]
	if f.sparse {
		// mma.sp: f16/bf16 m16n8k16 and k32, tf32 m16n8k8 and k16
		ok = map[mmaElem]map[int]bool{eF16: {16: true, 32: true}, eBF16: {16: true, 32: true}, eTF32: {8: true, 16: true}}[f.a][f.k]
	}
	if !ok || f.m != 16 || f.acc == accF16 && f.a != eF16 {
		return bad("HMMA%v: shape and types not modelled", mods)
	}
	return c.mmaFinish(f)
}

// mmaFinish decodes the operands of HMMA (dense or .SP) and IMMA/BMMA:
// D, A, B, C and, when sparse, the metadata register and the sparsity
// selector (in range for the shape: 4 over the metadata threads per
// quad, sparseThreads).
func (c *decoder) mmaFinish(f *mmaForm) error {
	if f.sparse {
		if err := c.want(sass.KReg, sass.KReg, sass.KReg, sass.KReg, sass.KReg, sass.KImm); err != nil {
			return err
		}
		f.sel = int(c.a[5].Imm)
		if f.sel < 0 || f.sel >= 4/f.sparseThreads() {
			return bad("%s.SP: sparsity selector %d out of range for k%d (PTX: 0..%d)", c.in.Op, f.sel, f.k, 4/f.sparseThreads()-1)
		}
		if err := c.src(c.a[4], 3, 1); err != nil {
			return err
		}
	} else if err := c.want(sass.KReg, sass.KReg, sass.KReg, sass.KReg); err != nil {
		return err
	}
	f.regsFor()
	if err := c.noSourceMods(); err != nil {
		return err
	}
	return c.mmaOperands(f)
}

// decIMMA decodes IMMA.shape.atype.btype(.SAT) D, A.ROW, B.COL, C.
func (c *decoder) decIMMA() error {
	f := &mmaForm{acc: accS32, sat: has(c.mods, "SAT"), sparse: has(c.mods, "SP")}
	if err := c.mmaShape(f); err != nil {
		return err
	}
	var types []mmaElem
	for _, m := range c.mods {
		if e, ok := intElems[m]; ok {
			types = append(types, e)
		}
	}
	if len(types) != 2 || elemBits[types[0]] != elemBits[types[1]] {
		return bad("IMMA%v: element types", c.mods)
	}
	f.a, f.b = types[0], types[1]
	// PTX: m8n8k16 and m16n8k16/k32 on 8-bit, m8n8k32 and m16n8k32/k64 on
	// 4-bit elements: k*width is 128, or 256 for m16
	// (sparse: m16n8k32/k64 on 8-bit and m16n8k64/k128 on 4-bit, k*width
	// 256 or 512)
	kw := f.k * elemBits[f.a]
	if ok := kw == 128 || f.m == 16 && kw == 256; f.sparse && !(f.m == 16 && (kw == 256 || kw == 512)) || !f.sparse && !ok {
		return bad("IMMA%v: shape and types not modelled", c.mods)
	}
	return c.decIntMMA(f)
}

// decBMMA decodes BMMA.shape.{AND,XOR}.POPC D, A.ROW, B.COL, C.
func (c *decoder) decBMMA() error {
	f := &mmaForm{acc: accS32, a: eB1, b: eB1}
	if err := c.mmaShape(f); err != nil {
		return err
	}
	switch {
	case !has(c.mods, "POPC"):
		return bad("BMMA without .POPC")
	case has(c.mods, "AND"):
		f.bop = bopAND
	case has(c.mods, "XOR"):
		f.bop = bopXOR
	default:
		return bad("BMMA: no bit operation")
	}
	return c.decIntMMA(f)
}

// decIntMMA finishes IMMA and BMMA: the operands, A row-major and B
// column-major as the forms fix them.
func (c *decoder) decIntMMA(f *mmaForm) error {
	if len(c.a) < 3 || c.a[1].Sel != ".ROW" || c.a[2].Sel != ".COL" {
		return bad("%s: A must be .ROW and B .COL", c.in.Op)
	}
	return c.mmaFinish(f)
}

// decDMMA decodes DMMA.884(.rnd) D, [-|]A[|], B, [-|]C[|].
func (c *decoder) decDMMA() error {
	f := &mmaForm{acc: accF64, a: eF64, b: eF64, rnd: rndOf(c.mods)}
	if err := c.mmaShape(f); err != nil {
		return err
	}
	if err := c.want(sass.KReg, sass.KReg, sass.KReg, sass.KReg); err != nil {
		return err
	}
	if a := c.a; a[0].Neg || a[0].Abs || a[2].Neg || a[2].Abs || a[1].Not || a[3].Not {
		return bad("DMMA: source modifiers on D or B")
	}
	f.regsFor()
	return c.mmaOperands(f)
}

// decMOVM decodes MOVM.16.MT88 Rd, Ra: movmatrix.sync.aligned.m8n8.trans.b16.
func (c *decoder) decMOVM() error {
	if !has(c.mods, "MT88") || !has(c.mods, "16") {
		return bad("MOVM%v: only MOVM.16.MT88 is modelled", c.mods)
	}
	if err := c.want(sass.KReg, sass.KReg); err != nil {
		return err
	}
	if err := c.noSourceMods(); err != nil {
		return err
	}
	if err := c.src(c.a[1], 0, 1); err != nil {
		return err
	}
	c.d.op = xMOVM
	return c.dst(c.a[0], 1)
}

// mma executes xMMA: it reads every fragment before it writes D (D may
// overlap A, B or C).
func (c *cta) mma(w *warp, d *dinst, exec uint32) error {
	if exec != 0xffffffff {
		return c.fault(w, d, firstLane(^exec), ErrDivergent, "%s needs all 32 lanes (active %#08x)", d.in.Op, exec)
	}
	f := d.mma
	var out [4][32]uint32
	switch f.acc {
	case accS32:
		if err := c.mmaInt(w, d, &out); err != nil {
			return err
		}
	case accF64:
		c.mmaF64(w, d, &out)
	default:
		if err := c.mmaFloat(w, d, &out); err != nil {
			return err
		}
	}
	for i := 0; i < f.nc; i++ {
		*w.dstK(d.d, i) = out[i]
	}
	return nil
}

// elemOf is element e (width bits) of register word v, as an unsigned
// field.
func elemOf(v uint32, e, width int) uint32 {
	if width == 32 {
		return v
	}
	return v >> (width * e) & (1<<width - 1)
}

// intVal is an integer element's value.
func intVal(x uint32, t mmaElem) int64 {
	switch t {
	case eS8:
		return int64(int8(x))
	case eS4:
		return int64(int32(x<<28) >> 28)
	}
	return int64(x)
}

// mmaInt is IMMA and BMMA: exact sums, wrapped or saturated to int32.
func (c *cta) mmaInt(w *warp, d *dinst, out *[4][32]uint32) error {
	f := d.mma
	var A [16][256]int64
	var B [256][8]int64
	wa, wb := elemBits[f.a], elemBits[f.b]
	for l := 0; l < 32; l++ {
		for r := 0; r < f.na; r++ {
			v := w.srcK(&d.s[0], 0, r)[l]
			for e := 0; e < 32/wa; e++ {
				row, col := fragA(l, r, e, 32/wa)
				if f.sparse {
					var err error
					if col, err = c.sparseCol(w, d, row, col); err != nil {
						return err
					}
				}
				A[row][col] = intVal(elemOf(v, e, wa), f.a)
			}
		}
		for r := 0; r < f.nb; r++ {
			v := w.srcK(&d.s[1], 1, r)[l]
			for e := 0; e < 32/wb; e++ {
				k, col := fragB(l, r, e, 32/wb)
				B[k][col] = intVal(elemOf(v, e, wb), f.b)
			}
		}
	}
	for l := 0; l < 32; l++ {
		for i := 0; i < f.nc; i++ {
			row, col := fragC(l, i)
			s := int64(int32(w.srcK(&d.s[2], 2, i)[l]))
			for k := 0; k < f.k; k++ {
				switch f.bop {
				case bopAND:
					s += A[row][k] & B[k][col]
				case bopXOR:
					s += A[row][k] ^ B[k][col]
				default:
					s += A[row][k] * B[k][col]
				}
			}
			if f.sat {
				s = max(math.MinInt32, min(math.MaxInt32, s))
			}
			out[i][l] = uint32(s)
		}
	}
	return nil
}

// floatVal is a floating-point multiplicand element's value.
func floatVal(x uint32, t mmaElem) float64 {
	switch t {
	case eTF32:
		return f32(x &^ (1<<13 - 1))
	case eBF16:
		return bf16(uint16(x))
	}
	return h16(uint16(x))
}

// mmaFloat is HMMA: dense, or with A's kept columns placed by the
// metadata (sparseCol).
func (c *cta) mmaFloat(w *warp, d *dinst, out *[4][32]uint32) error {
	f := d.mma
	var A [16][32]float64
	var B [32][8]float64
	wa := elemBits[f.a]
	per := 32 / wa
	for l := 0; l < 32; l++ {
		for r := 0; r < f.na; r++ {
			v := w.srcK(&d.s[0], 0, r)[l]
			for e := 0; e < per; e++ {
				row, col := fragA(l, r, e, per)
				x := floatVal(elemOf(v, e, wa), f.a)
				if f.sparse {
					var err error
					if col, err = c.sparseCol(w, d, row, col); err != nil {
						return err
					}
				}
				A[row][col] = x
			}
		}
		for r := 0; r < f.nb; r++ {
			v := w.srcK(&d.s[1], 1, r)[l]
			for e := 0; e < per; e++ {
				k, col := fragB(l, r, e, per)
				B[k][col] = floatVal(elemOf(v, e, wa), f.b)
			}
		}
	}
	for l := 0; l < 32; l++ {
		for i := 0; i < 4; i++ {
			row, col := fragC(l, i)
			var acc float64
			if f.acc == accF16 {
				acc = h16(uint16(w.srcK(&d.s[2], 2, i/2)[l] >> (16 * (i & 1))))
			} else {
				acc = f32(w.srcK(&d.s[2], 2, i)[l])
			}
			for k := 0; k < f.k; k++ {
				acc += A[row][k] * B[k][col]
			}
			if f.acc == accF16 {
				out[i/2][l] |= uint32(toHalf(acc, 0, false)) << (16 * (i & 1))
			} else {
				out[i][l] = fround(acc, 0, rnEven)
			}
		}
	}
	return nil
}

// The sparse A (mma.sp, PTX ISA "Sparse matrix storage"): each row of A
// keeps half its elements, two in every chunk of four metadata units,
// and the metadata gives the 2-bit index within its chunk of each kept
// unit, in order. A unit is an element for f16, bf16, s8 and u8; a pair
// of adjacent elements for s4 and u4 (4:8 sparsity in pairs); half an
// element for tf32 (1:2 sparsity: the index pairs 0b0100 and 0b1110 are
// the only valid ones). With u units to a row, the selected threads of
// each quad (u/16 of them: sparseThreads) hold the metadata, thread
// sel*u/16 + j the kept units 8j..8j+7, row g in bits 0..15 and row g+8
// in bits 16..31. The f16/bf16 layout is read from the ISA's figures;
// the unit rule for tf32, s8/u8 and s4/u4 is the same layout with the
// ISA's granularities (its sparse fragment sections), neither measured
// on hardware.

// sparseUnit is the number of bits of one metadata unit: 16 for the
// floating-point types, 8 for the integer ones.
func (f *mmaForm) sparseUnit() int {
	if f.acc == accS32 {
		return 8
	}
	return 16
}

// sparseThreads is the number of threads of a quad that hold metadata.
func (f *mmaForm) sparseThreads() int { return f.k * elemBits[f.a] / f.sparseUnit() / 16 }

// sparseCol is the column of A (k wide) that the kept element at
// compressed column cc of row row stands for. Two kept units of a chunk
// with one index (metadata nibbles 0b0000, 0b0101, 0b1010, 0b1111), and
// for tf32 any pair but 0b0100 and 0b1110, are undefined in PTX: a fault.
func (c *cta) sparseCol(w *warp, d *dinst, row, cc int) (int, error) {
	f := d.mma
	unit, eb := f.sparseUnit(), elemBits[f.a]
	threads := f.sparseThreads()
	// the kept unit and the element's place in it (or, tf32, its first
	// of two units)
	u, rest, span := cc, 0, 1
	switch {
	case eb < unit:
		u, rest = cc/(unit/eb), cc%(unit/eb)
	case eb > unit:
		u, span = cc*(eb/unit), eb/unit
	}
	lane := 4*(row%8) + threads*f.sel + u/8
	meta := w.srcK(&d.s[3], 3, 0)[lane] >> (16 * (row / 8))
	pair := meta >> (4 * (u % 8 / 2)) & 0xf
	if pair&3 == pair>>2 || span == 2 && pair != 0x4 && pair != 0xe {
		return 0, c.fault(w, d, lane, ErrUnsupported, "sparse metadata %#04x of row %d is undefined in PTX for %s", pair, row, d.in.Op)
	}
	full := 4*(u/2) + int(meta>>(2*(u%8))&3) // the unit's place in the row
	if span == 2 {
		return full / 2, nil
	}
	return full*(unit/eb) + rest, nil
}

// mmaF64 is DMMA.884: a fused multiply-add chain in k order per output.
func (c *cta) mmaF64(w *warp, d *dinst, out *[4][32]uint32) {
	f := d.mma
	pair := func(s *sopnd, slot, r, l int) float64 {
		lo, hi := w.srcK(s, slot, 2*r)[l], w.srcK(s, slot, 2*r+1)[l]
		return math.Float64frombits(uint64(fsrc(s, hi))<<32 | uint64(lo))
	}
	var A [8][4]float64
	var B [4][8]float64
	for l := 0; l < 32; l++ {
		row, col := fragA(l, 0, 0, 1)
		A[row][col] = pair(&d.s[0], 0, 0, l)
		k, col := fragB(l, 0, 0, 1)
		B[k][col] = pair(&d.s[1], 1, 0, l)
	}
	for l := 0; l < 32; l++ {
		for i := 0; i < 2; i++ {
			row, col := fragC(l, i)
			acc := pair(&d.s[2], 2, i, l)
			for k := 0; k < f.k; k++ {
				if f.rnd == rnEven {
					acc = math.FMA(A[row][k], B[k][col], acc)
				} else {
					acc = dDirected(xDFMA, A[row][k], B[k][col], acc, f.rnd)
				}
			}
			b := math.Float64bits(acc)
			if acc != acc {
				b = nanF64
			}
			out[2*i][l], out[2*i+1][l] = uint32(b), uint32(b>>32)
		}
	}
}

// movm is MOVM.16.MT88 (movmatrix.trans of an 8x8 matrix of 16-bit
// elements): lane 4q+c holds row q, columns 2c and 2c+1 (low half
// first); after the transpose lane l holds elements (2t, g) and
// (2t+1, g) of the source, g = l/4, t = l%4.
func (c *cta) movm(w *warp, d *dinst, exec uint32) error {
	if exec != 0xffffffff {
		return c.fault(w, d, firstLane(^exec), ErrDivergent, "MOVM needs all 32 lanes (active %#08x)", exec)
	}
	a := w.src(&d.s[0], 0)
	el := func(row, col int) uint32 { return a[4*row+col/2] >> (16 * (col % 2)) & 0xffff }
	var out [32]uint32
	for l := 0; l < 32; l++ {
		g, t := l/4, l%4
		out[l] = el(2*t, g) | el(2*t+1, g)<<16
	}
	*w.dst(d.d) = out
	return nil
}
