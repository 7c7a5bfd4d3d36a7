package gen

import (
	"github.com/tcrt-go/tcrt/kernels/sm86"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/tile"
)

// Float8 dequantisation on hand-scheduled SASS (fallback.DequantizeRef's
// bytes): y = store(decode(q) · inv_b), the product rounded once in
// binary32, then once to the output type.
//
// Decoding is exact integer code: an E5M2 byte is the top byte of a binary16
// (q << 8); an E4M3 byte's magnitude shifted into binary16's exponent and
// fraction (m << 7, sign to bit 15) is its value times 2^-8 (subnormals
// included), so HADD2.F32 widens either exactly and an FMUL by 256 (exact)
// restores E4M3's bias. The scale multiply is FMUL.RN (no flush); bf16
// rounds to nearest even in integer code, f16 with F2FP.PACK_AB
// (cvt.rn.f16.f32: subnormals kept, overflow to ±Inf, as tile.F32ToF16;
// nvdisasm -b SM89 prints it F2FP.F16.F32.PACK_AB, sass.Inst.TextArch).
// The product is never a NaN (scales are positive and finite, or an MX
// NaN scale handled below), so F2FP's canonical NaN never shows. NaN codes give the CPU's NaN
// bits for the code's sign (the plan computes them with the tile
// conversions); an MX block with a NaN scale (E8M0 0xFF) gives the positive
// canonical NaN.
//
// Float scales are data the CPU checks (fallback.CheckScales: positive and
// finite) before writing anything: tcrt_sass_f8_checkscale records the first
// bad block in the fault slot, and the dequantiser exits when the slot is
// set.

// Dequantiser parameters: slot, y, q, inv; lanes, cols, magic, shift,
// -cols, block-rows magic and shift, block-cols magic and shift, blocks a
// row, the scale when inv is 0, NaN bits for + and − codes.
const (
	dqY       = 0x08
	dqQ       = 0x10
	dqInv     = 0x18
	dqBRMagic = 0x34
	dqBRShift = 0x38
	dqBCMagic = 0x3c
	dqBCShift = 0x40
	dqSC      = 0x44
	dqConst   = 0x48
	dqNaNPos  = 0x4c
	dqNaNNeg  = 0x50
)

var dequantParams = sgParamsOf(4, 13)

// dequantKernel decodes q (E4M3 or E5M2) with float32 (or, mx, E8M0)
// scales into y (F32, F16 or BF16), sm86.DequantPerThread consecutive elements
// a thread: first every element's code and scale loads, then the
// conversions and stores.
func dequantKernel(q, y tile.DType, mx bool) sass.Program {
	var g prog
	const plain = "[B------:R-:W-:-:S01]"
	const base, one, invNZ, nanPos, nanNeg, nanSel = 0, 1, 17, 24, 23, 26
	code := func(k int) sass.Reg { return sass.Reg(28 + k) }
	scale := func(k int) sass.Reg { return sass.Reg(32 + k) }
	saddr := func(k int) sass.Reg { return sass.Reg(36 + 2*k) }
	ysz := int64(y.Size())
	// thread t converts elements 4t .. 4t+3 (those below n)
	g.at("[B------:R-:W0:-:S01]", inst("S2R", "", r(base), sass.SR(sass.SRTidX)))
	g.at("[B------:R-:W1:-:S01]", inst("S2R", "", r(rgCta), sass.SR(sass.SRCtaidX)))
	g.at(plain, inst("ULDC", "64", sass.UR(4), c0(0x118)))
	g.at(plain, inst("MOV", "", r(4), param(sgSlot)))
	g.at(plain, inst("MOV", "", r(5), param(sgSlot+4)))
	g.at("[B------:R-:W3:-:S01]", inst("LDG", "E", r(rgSlotHi), sass.G64(4, 4)))
	g.at("[B01----:R-:W-:-:S01]", inst("LEA", "", r(base), r(rgCta), r(base), imm(8)))
	g.at(plain, inst("SHF", "L.U32", r(base), r(base), imm(2), rz))
	g.at(plain, inst("ISETP", "GE.U32.AND", p(sass.P0), pt, r(base), param(0x20), pt))
	g.at(plain, inst("EXIT", "").When(sass.If(sass.P0)))
	g.at(plain, inst("MOV", "", r(one), imm(1)))
	g.at(plain, inst("IMAD", "WIDE.U32", r(6), r(base), r(one), param(dqQ)))
	g.at(plain, inst("MOV", "", r(25), imm(ysz)))
	g.at(plain, inst("IMAD", "WIDE.U32", r(18), r(base), r(25), param(dqY)))
	g.at(plain, inst("MOV", "", r(14), param(dqInv)))
	g.at(plain, inst("MOV", "", r(15), param(dqInv+4)))
	g.at(plain, inst("LOP3", "LUT", r(invNZ), r(14), r(15), rz, imm(0xfc), npt))
	g.at(plain, inst("MOV", "", r(nanPos), param(dqNaNPos)))
	g.at(plain, inst("MOV", "", r(nanNeg), param(dqNaNNeg)))
	sb := int64(4)
	if mx {
		sb = 1
	}
	for k := range sm86.DequantPerThread {
		// e = 4t + k; P6: e < n; the code; (r, c) of e; the block's scale:
		// inv[(r / br)·sc + c / bc], or the constant (P5: there are scales).
		g.at(plain, inst("IADD3", "", r(9), r(base), imm(int64(k)), rz))
		g.at(plain, inst("ISETP", "LT.U32.AND", p(sass.P6), pt, r(9), param(0x20), pt))
		g.at(plain, inst("MOV", "", r(code(k)), rz))
		g.at("[B------:R-:W2:-:S01]", inst("LDG", "E.U8", r(code(k)), sass.G64(6, int64(k))).When(sass.If(sass.P6)))
		g.at(plain, inst("IMAD", "HI.U32", r(10), r(9), param(0x28), rz))
		g.at(plain, inst("IADD3", "", r(10), r(10), r(9), rz))
		g.at(plain, inst("SHF", "R.U32.HI", r(10), rz, param(0x2c), r(10)))
		g.at(plain, inst("IMAD", "", r(11), r(10), param(0x30), r(9)))
		g.at(plain, inst("IMAD", "HI.U32", r(12), r(10), param(dqBRMagic), rz))
		g.at(plain, inst("IMAD", "HI.U32", r(13), r(11), param(dqBCMagic), rz))
		g.at(plain, inst("IADD3", "", r(12), r(12), r(10), rz))
		g.at(plain, inst("IADD3", "", r(13), r(13), r(11), rz))
		g.at(plain, inst("SHF", "R.U32.HI", r(12), rz, param(dqBRShift), r(12)))
		g.at(plain, inst("SHF", "R.U32.HI", r(13), rz, param(dqBCShift), r(13)))
		g.at(plain, inst("MOV", "", r(9), imm(sb)))
		g.at(plain, inst("IMAD", "", r(12), r(12), param(dqSC), r(13)))
		g.at(plain, inst("IMAD", "WIDE.U32", r(saddr(k)), r(12), r(9), param(dqInv)))
		g.at(plain, inst("ISETP", "NE.U32.AND", p(sass.P5), pt, r(invNZ), rz, p(sass.P6)))
		g.at(plain, inst("MOV", "", r(scale(k)), param(dqConst)))
		if mx {
			g.at("[B------:R-:W4:-:S01]", inst("LDG", "E.U8", r(scale(k)), sass.G64(saddr(k), 0)).When(sass.If(sass.P5)))
		} else {
			g.at("[B------:R-:W4:-:S01]", inst("LDG", "E", r(scale(k)), sass.G64(saddr(k), 0)).When(sass.If(sass.P5)))
		}
	}
	faultExit(&g)
	for k := range sm86.DequantPerThread {
		c, sc := code(k), scale(k)
		wait := plain
		if k == 0 {
			wait = "[B--2-4-:R-:W-:-:S01]"
		}
		g.at(wait, inst("IADD3", "", r(9), r(base), imm(int64(k)), rz))
		g.at(plain, inst("ISETP", "LT.U32.AND", p(sass.P6), pt, r(9), param(0x20), pt))
		// decode: the value in the code's register (each store reads its
		// own), P2 a NaN code, P3 the sign.
		g.at(plain, inst("LOP3", "LUT", r(20), r(c), imm(0x7f), rz, imm(0xc0), npt))
		g.at(plain, inst("LOP3", "LUT", r(22), r(c), imm(0x80), rz, imm(0xc0), npt))
		if q == tile.E4M3 {
			g.at(plain, inst("ISETP", "GT.U32.AND", p(sass.P2), pt, r(20), imm(0x7e), pt))
			g.at(plain, inst("SHF", "L.U32", r(c), r(20), imm(7), rz))
			g.at(plain, inst("LEA", "", r(c), r(22), r(c), imm(8)))
		} else {
			g.at(plain, inst("ISETP", "GT.U32.AND", p(sass.P2), pt, r(20), imm(0x7c), pt))
			g.at(plain, inst("SHF", "L.U32", r(c), r(c), imm(8), rz))
		}
		g.at(plain, inst("ISETP", "NE.U32.AND", p(sass.P3), pt, r(22), rz, pt))
		g.at(plain, inst("HADD2", "F32", r(c), sass.Neg(rz), selOp(c, ".H0_H0")))
		if q == tile.E4M3 {
			g.at(plain, inst("FMUL", "", r(c), r(c), sass.F32Bits(0x43800000)))
		}
		g.at(plain, inst("SEL", "", r(nanSel), r(nanNeg), r(nanPos), p(sass.P3)))
		if mx { // E8M0 e: 2^(e−127); e = 0 is 2^-127 (0x00400000); e = 255 NaN (P4)
			g.at(plain, inst("ISETP", "EQ.U32.AND", p(sass.P4), pt, r(sc), imm(255), pt))
			g.at(plain, inst("ISETP", "EQ.U32.AND", p(sass.P5), pt, r(sc), rz, pt))
			g.at(plain, inst("SHF", "L.U32", r(sc), r(sc), imm(23), rz))
			g.at(plain, inst("SEL", "", r(sc), r(sc), imm(0x00400000), np(sass.P5)))
		}
		g.at(plain, inst("FMUL", "", r(c), r(c), r(sc)))
		if y == tile.BF16 { // round to nearest even on bit 16: u + 0x7fff + bit 16, then the top half
			g.at(plain, inst("SHF", "R.U32.HI", r(22), rz, imm(16), r(c)))
			g.at(plain, inst("LOP3", "LUT", r(22), r(22), imm(1), rz, imm(0xc0), npt))
			g.at(plain, inst("IADD3", "", r(c), r(c), imm(0x7fff), r(22)))
			g.at(plain, inst("SHF", "R.U32.HI", r(c), rz, imm(16), r(c)))
		}
		if y == tile.F16 { // cvt.rn.f16.f32: nearest even, subnormals kept, overflow to ±Inf
			g.at(plain, inst("F2FP", "PACK_AB", r(c), rz, r(c)))
		}
		g.at(plain, inst("SEL", "", r(c), r(nanSel), r(c), p(sass.P2)))
		if mx {
			g.at(plain, inst("SEL", "", r(c), r(nanPos), r(c), p(sass.P4)))
		}
		g.at(plain, inst("STG", sizeMod[int(ysz)], sass.G64(18, int64(k)*ysz), r(c)).When(sass.If(sass.P6)))
	}
	g.at("[B------:R-:W-:Y:S05]", inst("EXIT", ""))
	g.p = settle(g.p)
	return g.end()
}

// Scale check parameters: slot, inv; lanes (blocks), 1, 0, 0, -1.
var checkScaleParams = sgParamsOf(2, 5)

// checkScaleKernel records the first block whose float32 scale fails
// tile.ValidScale: its bits not in [tile.MinScaleBits, tile.MaxScaleBits]
// (zero, negative, NaN, Inf, subnormal, or above 2^126).
func checkScaleKernel() sass.Program {
	var g prog
	sgProlog(&g, lanesFrom(0x10), false)
	g.at("[B------:R-:W-:-:S01]", inst("MOV", "", r(9), imm(4)))
	g.at("[B------:R-:W-:-:S01]", inst("IMAD", "WIDE.U32", r(12), r(rgL), r(9), param(0x08)))
	g.at("[B------:R-:W2:-:S01]", inst("LDG", "E", r(8), sass.G64(12, 0)))
	g.at("[B------:R-:W-:-:S01]", inst("LOP3", "LUT", r(26), rz, r(rgL), rz, imm(0x33), npt))
	g.at("[B------:R-:W-:-:S01]", inst("MOV", "", r(27), imm(0xffffffff)))
	g.at("[B------:R-:W-:-:S01]", inst("MOV", "", r(28), param(sgSlot)))
	g.at("[B------:R-:W-:-:S01]", inst("MOV", "", r(29), param(sgSlot+4)))
	g.at("[B--2---:R-:W-:-:S01]", inst("IADD3", "", r(8), r(8), imm(-tile.MinScaleBits), rz))
	g.at("[B------:R-:W-:-:S01]", inst("ISETP", "GE.U32.AND", p(sass.P1), pt, r(8), imm(tile.MaxScaleBits-tile.MinScaleBits+1), pt))
	g.at("[B------:R-:W-:-:S01]", inst("ATOMG", "E.MAX.64.STRONG.GPU", pt, rz, sass.G64(28, 0), r(26)).When(sass.If(sass.P1)))
	g.at("[B------:R-:W-:Y:S05]", inst("EXIT", ""))
	g.p = settle(g.p)
	return g.end()
}

// dequantKernels lists the family: tcrt_sass_dequant_<q>_<y>[_mx].
var dequantKernels = func() []sgKernel {
	ks := []sgKernel{{"tcrt_sass_f8_checkscale", checkScaleKernel, checkScaleParams}}
	for _, q := range []tile.DType{tile.E4M3, tile.E5M2} {
		for _, y := range []tile.DType{tile.F32, tile.F16, tile.BF16} {
			for _, mx := range []bool{false, true} {
				ks = append(ks, sgKernel{sm86.DequantName(q, y, mx), func() sass.Program { return dequantKernel(q, y, mx) }, dequantParams})
			}
		}
	}
	return ks
}()
