package gen

import (
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/tile"
)

// Block-scaled quantisation with the scales computed on the device
// (fallback.QuantizeRef with Scales nil and a granularity of blocks: per
// tensor, per row, 1×128, 128×128): sm86.PlanQuantizeBlocks' launches reduce
// each block's amax (the amax kernels), turn it into the block's scale
// and its inverse (tcrt_sass_f8_scale, fallback.ScaleFromAmax bit for bit)
// and encode with the MX quantiser's code, which takes each group's
// multiplier from its block (tcrt_sass_quantize_mx_<q>).
//
// tcrt_sass_f8_scale does the two float32 divisions of the rule, fmax/amax
// and 1/s, in binary64: with amax = m·2^e (m in [1, 2)), 1/m by a MUFU.RCP
// seed and three Newton steps (DFMA), fmax·(1/m) with one residual
// correction, the power of two applied exactly, then one rounding to
// binary32 (F2F.F32.F64: overflow to Inf, subnormals rounded). A quotient
// of two 24-bit significands lies at least 2^-49 (relatively) from every
// binary32 rounding boundary unless it is one exactly, which it cannot be,
// so a binary64 quotient within a few ulps (2^-50) rounds as the exact one:
// the result is float32 division's. The margin is a multiplication by
// 2^-margin in binary64 (exact) and one rounding, which is what the CPU's
// division by the exact power (or its float64 path) gives.

// Scale kernel parameters: words (amax in, scales out), inv (1/s out; 0
// for none); lanes (blocks), 1, 0, 0, -1, fmax as binary64 (low, high),
// the high word of 2^-margin as binary64, the power-of-two mask.
const (
	scInv    = 0x08
	scFmaxLo = 0x24
	scFmaxHi = 0x28
	scMarHi  = 0x2c
	scMask   = 0x30
)

var scaleParams = sgParamsOf(2, 9)

// scaleKernel is fallback.ScaleFromAmax for one block per thread.
func scaleKernel() sass.Program {
	var g prog
	sgProlog(&g, lanesFrom(0x10), false)
	w2, b2, b23 := sass.Control{WriteSB: sass.SB2, Stall: 1}, sass.Control{Wait: waits(2), WriteSB: sass.SB2, Stall: 1}, sass.Control{Wait: waits(2, 3), WriteSB: sass.SB2, Stall: 1}
	plain, wait2 := sass.Control{Stall: 1}, sass.Control{Wait: waits(2), Stall: 1}
	g.At(inst("MOV", "", r(9), imm(4)).C(plain))
	g.At(inst("IMAD", "WIDE.U32", r(12), r(rgL), r(9), param(0x00)).C(plain))
	g.At(inst("LDG", "E", r(8), sass.G64(12, 0)).C(w2))
	g.At(inst("IMAD", "WIDE.U32", r(14), r(rgL), r(9), param(scInv)).C(plain))
	g.At(inst("MOV", "", r(16), param(scInv)).C(plain))
	g.At(inst("MOV", "", r(17), param(scInv+4)).C(plain))
	g.At(inst("ISETP", "NE.U32.AND", p(sass.P4), pt, r(16), rz, pt).C(plain))
	g.At(inst("ISETP", "NE.U32.OR", p(sass.P4), pt, r(17), rz, p(sass.P4)).C(plain))
	g.At(inst("MOV", "", r(24), rz).C(plain))
	g.At(inst("MOV", "", r(25), imm(0x3ff00000)).C(plain)) // 1.0
	g.At(inst("MOV", "", r(26), param(scFmaxLo)).C(plain))
	g.At(inst("MOV", "", r(27), param(scFmaxHi)).C(plain))
	g.At(inst("MOV", "", r(38), rz).C(plain))
	g.At(inst("MOV", "", r(39), param(scMarHi)).C(plain))
	g.At(inst("MOV", "", r(32), rz).C(plain))
	g.At(inst("MOV", "", r(50), rz).C(plain))
	// P1: amax is 0, NaN or Inf (scale 1); P2: amax is subnormal (fmax/amax
	// overflows: the largest scale).
	g.At(inst("LOP3", "LUT", r(8), r(8), imm(0x7fffffff), rz, imm(0xc0), npt).C(wait2))
	g.At(inst("IADD3", "", r(9), r(8), imm(-1), rz).C(plain))
	g.At(inst("ISETP", "GE.U32.AND", p(sass.P1), pt, r(9), imm(0x7f7fffff), pt).C(plain))
	g.At(inst("ISETP", "LT.U32.AND", p(sass.P2), pt, r(8), imm(0x800000), pt).C(plain))
	// reciprocal: m in R10 (binary32 in [1, 2)), e in R11
	recip := func(src, m, e, y, b, t sass.Reg) {
		g.At(inst("LOP3", "LUT", r(m), r(src), imm(0x7fffff), rz, imm(0xc0), npt).C(plain))
		g.At(inst("LOP3", "LUT", r(m), r(m), imm(0x3f800000), rz, imm(0xfc), npt).C(plain))
		g.At(inst("SHF", "R.U32.HI", r(e), rz, imm(23), r(src)).C(plain))
		g.At(inst("MUFU", "RCP", r(t), r(m)).C(w2))
		g.Add(inst("F2F", "F64.F32", r(b), r(m)).WriteSB(sass.SB3))
		g.At(inst("F2F", "F64.F32", r(y), r(t)).C(b2))
		for k := 0; k < 3; k++ { // y += y·(1 − m·y)
			if k == 0 {
				g.At(inst("DFMA", "", r(28), sass.Neg(r(b)), r(y), r(24)).C(b23))
			} else {
				g.At(inst("DFMA", "", r(28), sass.Neg(r(b)), r(y), r(24)).C(b2))
			}
			g.At(inst("DFMA", "", r(y), r(y), r(28), r(y)).C(b2))
		}
	}
	recip(8, 10, 11, 22, 20, 18)
	// q = fmax·y, corrected once: q += y·(fmax − m·q)
	g.At(inst("DMUL", "", r(28), r(26), r(22)).C(b2))
	g.At(inst("DFMA", "", r(30), sass.Neg(r(20)), r(28), r(26)).C(b2))
	g.At(inst("DFMA", "", r(28), r(30), r(22), r(28)).C(b2))
	// 2^(127 − e): high word (1150 − e) << 20
	g.At(inst("IADD3", "", r(33), sass.Neg(r(11)), imm(1150), rz).C(plain))
	g.At(inst("SHF", "L.U32", r(33), r(33), imm(20), rz).C(plain))
	g.At(inst("DMUL", "", r(28), r(28), r(32)).C(b2))
	g.At(inst("F2F", "F32.F64", r(34), r(28)).C(b2))
	g.At(inst("F2F", "F64.F32", r(36), r(34)).C(b2))
	g.At(inst("DMUL", "", r(36), r(36), r(38)).C(b2))
	g.At(inst("F2F", "F32.F64", r(34), r(36)).C(b2))
	// clamps, the special amax values, the power of two
	// into [tile.MinScale, tile.MaxScale]: above 2^126 (Inf included) gives
	// 2^126, below 2^-126 gives 2^-126
	g.At(inst("ISETP", "GT.U32.AND", p(sass.P3), pt, r(34), imm(tile.MaxScaleBits), pt).C(wait2))
	g.At(inst("SEL", "", r(34), r(34), imm(tile.MaxScaleBits), np(sass.P3)).C(plain))
	g.At(inst("ISETP", "LT.U32.AND", p(sass.P3), pt, r(34), imm(tile.MinScaleBits), pt).C(plain))
	g.At(inst("SEL", "", r(34), r(34), imm(tile.MinScaleBits), np(sass.P3)).C(plain))
	g.At(inst("SEL", "", r(34), r(34), imm(tile.MaxScaleBits), np(sass.P2)).C(plain))
	g.At(inst("SEL", "", r(34), r(34), imm(0x3f800000), np(sass.P1)).C(plain))
	g.At(inst("MOV", "", r(40), param(scMask)).C(plain))
	g.At(inst("LOP3", "LUT", r(34), r(34), r(40), rz, imm(0xc0), npt).C(plain))
	g.At(inst("STG", "E", sass.G64(12, 0), r(34)).C(plain))
	// 1/s the same way
	recip(34, 41, 42, 46, 44, 43)
	g.At(inst("IADD3", "", r(51), sass.Neg(r(42)), imm(1150), rz).C(plain))
	g.At(inst("SHF", "L.U32", r(51), r(51), imm(20), rz).C(plain))
	g.At(inst("DMUL", "", r(46), r(46), r(50)).C(b2))
	g.At(inst("F2F", "F32.F64", r(52), r(46)).C(b2))
	g.At(inst("STG", "E", sass.G64(14, 0), r(52)).When(sass.If(sass.P4)).C(wait2))
	g.At(inst("EXIT", "").Yield().Stall(5))
	g.Prog = settle(g.Prog)
	return g.end()
}

// Given-scale parameters: words, inv (0 for none); the scale's and its
// inverse's bits.
var givenParams = sgParamsOf(2, 2)

// givenKernel (thread 0 of one block) writes a given per-tensor scale to words[0]
// and its inverse, computed by the caller, to inv[0].
func givenKernel() sass.Program {
	var g prog
	plain := sass.Control{Stall: 1}
	g.Add(inst("S2R", "", r(0), sass.SR(sass.SRTidX)).WriteSB(sass.SB0))
	g.At(inst("ULDC", "64", sass.UR(4), c0(0x118)).C(plain))
	g.Add(inst("ISETP", "NE.U32.AND", p(sass.P1), pt, r(0), rz, pt).Wait(waits(0)))
	g.At(inst("EXIT", "").When(sass.If(sass.P1)).C(plain))
	g.At(inst("MOV", "", r(2), param(0x00)).C(plain))
	g.At(inst("MOV", "", r(3), param(0x04)).C(plain))
	g.At(inst("MOV", "", r(4), param(scInv)).C(plain))
	g.At(inst("MOV", "", r(5), param(scInv+4)).C(plain))
	g.At(inst("MOV", "", r(6), param(0x10)).C(plain))
	g.At(inst("MOV", "", r(7), param(0x14)).C(plain))
	g.At(inst("LOP3", "LUT", r(8), r(4), r(5), rz, imm(0xfc), npt).C(plain))
	g.At(inst("ISETP", "NE.U32.AND", p(sass.P0), pt, r(8), rz, pt).C(plain))
	g.At(inst("STG", "E", sass.G64(2, 0), r(6)).C(plain))
	g.At(inst("STG", "E", sass.G64(4, 0), r(7)).When(sass.If(sass.P0)).C(plain))
	g.At(inst("EXIT", "").Yield().Stall(5))
	g.Prog = settle(g.Prog)
	return g.end()
}
