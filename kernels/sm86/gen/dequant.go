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
	plain := sass.Control{Stall: 1}
	const base, one, invNZ, nanPos, nanNeg, nanSel = 0, 1, 17, 24, 23, 26
	code := func(k int) sass.Reg { return sass.Reg(28 + k) }
	scale := func(k int) sass.Reg { return sass.Reg(32 + k) }
	saddr := func(k int) sass.Reg { return sass.Reg(36 + 2*k) }
	ysz := int64(y.Size())
	// thread t converts elements 4t .. 4t+3 (those below n)
	g.Add(inst("S2R", "", r(base), sass.SR(sass.SRTidX)).WriteSB(sass.SB0))
	g.Add(inst("S2R", "", r(rgCta), sass.SR(sass.SRCtaidX)).WriteSB(sass.SB1))
	g.At(inst("ULDC", "64", sass.UR(4), c0(0x118)).C(plain))
	g.At(inst("MOV", "", r(4), param(sgSlot)).C(plain))
	g.At(inst("MOV", "", r(5), param(sgSlot+4)).C(plain))
	g.Add(inst("LDG", "E", r(rgSlotHi), sass.G64(4, 4)).WriteSB(sass.SB3))
	g.Add(inst("LEA", "", r(base), r(rgCta), r(base), imm(8)).Wait(waits(0, 1)))
	g.At(inst("SHF", "L.U32", r(base), r(base), imm(2), rz).C(plain))
	g.At(inst("ISETP", "GE.U32.AND", p(sass.P0), pt, r(base), param(0x20), pt).C(plain))
	g.At(inst("EXIT", "").When(sass.If(sass.P0)).C(plain))
	g.At(inst("MOV", "", r(one), imm(1)).C(plain))
	g.At(inst("IMAD", "WIDE.U32", r(6), r(base), r(one), param(dqQ)).C(plain))
	g.At(inst("MOV", "", r(25), imm(ysz)).C(plain))
	g.At(inst("IMAD", "WIDE.U32", r(18), r(base), r(25), param(dqY)).C(plain))
	g.At(inst("MOV", "", r(14), param(dqInv)).C(plain))
	g.At(inst("MOV", "", r(15), param(dqInv+4)).C(plain))
	g.At(inst("LOP3", "LUT", r(invNZ), r(14), r(15), rz, imm(0xfc), npt).C(plain))
	g.At(inst("MOV", "", r(nanPos), param(dqNaNPos)).C(plain))
	g.At(inst("MOV", "", r(nanNeg), param(dqNaNNeg)).C(plain))
	sb := int64(4)
	if mx {
		sb = 1
	}
	for k := range sm86.DequantPerThread {
		// e = 4t + k; P6: e < n; the code; (r, c) of e; the block's scale:
		// inv[(r / br)·sc + c / bc], or the constant (P5: there are scales).
		g.At(inst("IADD3", "", r(9), r(base), imm(int64(k)), rz).C(plain))
		g.At(inst("ISETP", "LT.U32.AND", p(sass.P6), pt, r(9), param(0x20), pt).C(plain))
		g.At(inst("MOV", "", r(code(k)), rz).C(plain))
		g.Add(inst("LDG", "E.U8", r(code(k)), sass.G64(6, int64(k))).When(sass.If(sass.P6)).WriteSB(sass.SB2))
		g.At(inst("IMAD", "HI.U32", r(10), r(9), param(0x28), rz).C(plain))
		g.At(inst("IADD3", "", r(10), r(10), r(9), rz).C(plain))
		g.At(inst("SHF", "R.U32.HI", r(10), rz, param(0x2c), r(10)).C(plain))
		g.At(inst("IMAD", "", r(11), r(10), param(0x30), r(9)).C(plain))
		g.At(inst("IMAD", "HI.U32", r(12), r(10), param(dqBRMagic), rz).C(plain))
		g.At(inst("IMAD", "HI.U32", r(13), r(11), param(dqBCMagic), rz).C(plain))
		g.At(inst("IADD3", "", r(12), r(12), r(10), rz).C(plain))
		g.At(inst("IADD3", "", r(13), r(13), r(11), rz).C(plain))
		g.At(inst("SHF", "R.U32.HI", r(12), rz, param(dqBRShift), r(12)).C(plain))
		g.At(inst("SHF", "R.U32.HI", r(13), rz, param(dqBCShift), r(13)).C(plain))
		g.At(inst("MOV", "", r(9), imm(sb)).C(plain))
		g.At(inst("IMAD", "", r(12), r(12), param(dqSC), r(13)).C(plain))
		g.At(inst("IMAD", "WIDE.U32", r(saddr(k)), r(12), r(9), param(dqInv)).C(plain))
		g.At(inst("ISETP", "NE.U32.AND", p(sass.P5), pt, r(invNZ), rz, p(sass.P6)).C(plain))
		g.At(inst("MOV", "", r(scale(k)), param(dqConst)).C(plain))
		if mx {
			g.Add(inst("LDG", "E.U8", r(scale(k)), sass.G64(saddr(k), 0)).When(sass.If(sass.P5)).WriteSB(sass.SB4))
		} else {
			g.Add(inst("LDG", "E", r(scale(k)), sass.G64(saddr(k), 0)).When(sass.If(sass.P5)).WriteSB(sass.SB4))
		}
	}
	faultExit(&g)
	for k := range sm86.DequantPerThread {
		c, sc := code(k), scale(k)
		wait := plain
		if k == 0 {
			wait = sass.Control{Wait: waits(2, 4), Stall: 1}
		}
		g.At(inst("IADD3", "", r(9), r(base), imm(int64(k)), rz).C(wait))
		g.At(inst("ISETP", "LT.U32.AND", p(sass.P6), pt, r(9), param(0x20), pt).C(plain))
		// decode: the value in the code's register (each store reads its
		// own), P2 a NaN code, P3 the sign.
		g.At(inst("LOP3", "LUT", r(20), r(c), imm(0x7f), rz, imm(0xc0), npt).C(plain))
		g.At(inst("LOP3", "LUT", r(22), r(c), imm(0x80), rz, imm(0xc0), npt).C(plain))
		if q == tile.E4M3 {
			g.At(inst("ISETP", "GT.U32.AND", p(sass.P2), pt, r(20), imm(0x7e), pt).C(plain))
			g.At(inst("SHF", "L.U32", r(c), r(20), imm(7), rz).C(plain))
			g.At(inst("LEA", "", r(c), r(22), r(c), imm(8)).C(plain))
		} else {
			g.At(inst("ISETP", "GT.U32.AND", p(sass.P2), pt, r(20), imm(0x7c), pt).C(plain))
			g.At(inst("SHF", "L.U32", r(c), r(c), imm(8), rz).C(plain))
		}
		g.At(inst("ISETP", "NE.U32.AND", p(sass.P3), pt, r(22), rz, pt).C(plain))
		g.At(inst("HADD2", "F32", r(c), sass.Neg(rz), selOp(c, ".H0_H0")).C(plain))
		if q == tile.E4M3 {
			g.At(inst("FMUL", "", r(c), r(c), sass.F32Bits(0x43800000)).C(plain))
		}
		g.At(inst("SEL", "", r(nanSel), r(nanNeg), r(nanPos), p(sass.P3)).C(plain))
		if mx { // E8M0 e: 2^(e−127); e = 0 is 2^-127 (0x00400000); e = 255 NaN (P4)
			g.At(inst("ISETP", "EQ.U32.AND", p(sass.P4), pt, r(sc), imm(255), pt).C(plain))
			g.At(inst("ISETP", "EQ.U32.AND", p(sass.P5), pt, r(sc), rz, pt).C(plain))
			g.At(inst("SHF", "L.U32", r(sc), r(sc), imm(23), rz).C(plain))
			g.At(inst("SEL", "", r(sc), r(sc), imm(0x00400000), np(sass.P5)).C(plain))
		}
		g.At(inst("FMUL", "", r(c), r(c), r(sc)).C(plain))
		if y == tile.BF16 { // round to nearest even on bit 16: u + 0x7fff + bit 16, then the top half
			g.At(inst("SHF", "R.U32.HI", r(22), rz, imm(16), r(c)).C(plain))
			g.At(inst("LOP3", "LUT", r(22), r(22), imm(1), rz, imm(0xc0), npt).C(plain))
			g.At(inst("IADD3", "", r(c), r(c), imm(0x7fff), r(22)).C(plain))
			g.At(inst("SHF", "R.U32.HI", r(c), rz, imm(16), r(c)).C(plain))
		}
		if y == tile.F16 { // cvt.rn.f16.f32: nearest even, subnormals kept, overflow to ±Inf
			g.At(inst("F2FP", "PACK_AB", r(c), rz, r(c)).C(plain))
		}
		g.At(inst("SEL", "", r(c), r(nanSel), r(c), p(sass.P2)).C(plain))
		if mx {
			g.At(inst("SEL", "", r(c), r(nanPos), r(c), p(sass.P4)).C(plain))
		}
		g.At(inst("STG", sizeMod[int(ysz)], sass.G64(18, int64(k)*ysz), r(c)).When(sass.If(sass.P6)).C(plain))
	}
	g.At(inst("EXIT", "").Yield().Stall(5))
	g.Prog = settle(g.Prog)
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
	g.Add(inst("MOV", "", r(9), imm(4)))
	g.Add(inst("IMAD", "WIDE.U32", r(12), r(rgL), r(9), param(0x08)))
	g.Add(inst("LDG", "E", r(8), sass.G64(12, 0)).WriteSB(sass.SB2))
	g.Add(inst("LOP3", "LUT", r(26), rz, r(rgL), rz, imm(0x33), npt))
	g.Add(inst("MOV", "", r(27), imm(0xffffffff)))
	g.Add(inst("MOV", "", r(28), param(sgSlot)))
	g.Add(inst("MOV", "", r(29), param(sgSlot+4)))
	g.Add(inst("IADD3", "", r(8), r(8), imm(-tile.MinScaleBits), rz).Wait(waits(2)))
	g.Add(inst("ISETP", "GE.U32.AND", p(sass.P1), pt, r(8), imm(tile.MaxScaleBits-tile.MinScaleBits+1), pt))
	g.Add(inst("ATOMG", "E.MAX.64.STRONG.GPU", pt, rz, sass.G64(28, 0), r(26)).When(sass.If(sass.P1)))
	g.At(inst("EXIT", "").Yield().Stall(5))
	g.Prog = settle(g.Prog)
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
