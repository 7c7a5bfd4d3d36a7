package gen

import (
	"github.com/tcrt-go/tcrt/kernels/sm86"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/tile"
)

// MX quantisation on hand-scheduled SASS (fallback.QuantizeRef with
// Granularity MX, f32 input, tile.Saturate or NonSaturating): sm86.PlanQuantizeMX's launches
// reduce each 32-element block's amax (the amax kernels), turn it into the
// block's E8M0 scale and multiplier (tcrt_sass_mx_scale_<q>, fallback.MXScale
// in integer code), and encode with the per-tensor quantiser's code taking
// each group's multiplier from the block (tcrt_sass_quantize_mx_<q>).

// Block-scale quantiser parameters: the per-tensor ones (dst, src, n,
// scale unused), then mul; cols, magic, shift, -cols, block-rows magic and
// shift, block-cols magic and shift, blocks a row.
const (
	qbMul     = 0x18
	qbMagic   = 0x24
	qbShift   = 0x28
	qbNegCols = 0x2c
	qbBRMagic = 0x30
	qbBRShift = 0x34
	qbBCMagic = 0x38
	qbBCShift = 0x3c
	qbSC      = 0x40
)

var quantBlockParams = append(append([]cubin.Param{}, quantParams...), sgParamsOf(1, 9)...)

// Registers of the block-scale code (outside the encoder's).
const (
	rMul, rMulA, rAbs = 62, 60, 44
	rBR, rBC          = 58, 59
)

// Registers of the per-element multipliers (quantizeKernel with elem):
// element j's index in rElemE, its multiplier's address in
// rElemA+2j, the multiplier in rElemMul+j.
const (
	rElemE   = 49
	rElemA   = 64
	rElemMul = 72
)

// blockScaleAddr computes the address of the group's multiplier into
// rMulA from e = 4q in rRem.
func blockScaleAddr(g *prog) {
	g.Prog[len(g.Prog)-1].Ctrl.Stall = 5 // the SHF that computed e
	blockScaleAddrOf(g, rRem, rMulA)
}

// blockScaleAddrOf computes into the pair at dst the address of the
// multiplier of element e (row-major index in register e): mul +
// 4·((e/cols)/br·sc + (e%cols)/bc).
func blockScaleAddrOf(g *prog, e, dst sass.Reg) {
	g.At(inst("IMAD", "HI.U32", r(rBR), r(e), param(qbMagic), rz).Stall(5))
	g.At(inst("IADD3", "", r(rBR), r(rBR), r(e), rz).Stall(5))
	g.At(inst("SHF", "R.U32.HI", r(rBR), rz, param(qbShift), r(rBR)).Stall(5))
	g.At(inst("IMAD", "", r(rBC), r(rBR), param(qbNegCols), r(e)).Stall(5))
	g.At(inst("IMAD", "HI.U32", r(45), r(rBR), param(qbBRMagic), rz).Stall(5))
	g.At(inst("IMAD", "HI.U32", r(46), r(rBC), param(qbBCMagic), rz).Stall(5))
	g.At(inst("IADD3", "", r(45), r(45), r(rBR), rz).Stall(5))
	g.At(inst("IADD3", "", r(46), r(46), r(rBC), rz).Stall(5))
	g.At(inst("SHF", "R.U32.HI", r(45), rz, param(qbBRShift), r(45)).Stall(5))
	g.At(inst("SHF", "R.U32.HI", r(46), rz, param(qbBCShift), r(46)).Stall(5))
	g.At(inst("MOV", "", r(47), imm(4)).Stall(5))
	g.At(inst("IMAD", "", r(45), r(45), param(qbSC), r(46)).Stall(5))
	g.At(inst("IMAD", "WIDE.U32", r(dst), r(45), r(47), param(qbMul)).Stall(5))
}

// MX scale parameters: words (the amax output, replaced by the
// multipliers), e8m0 (one byte a block); lanes, 1, 0, 0, -1.
var mxScaleParams = sgParamsOf(2, 5)

// mxScaleKernel is fallback.MXScale for one block: from a = amax's bits,
// e = max(a>>23 − 127 − emax, −127) (−127 for a zero exponent), the E8M0
// byte e + 127 and the multiplier 2^-e, bits (127 − e) << 23; a NaN or
// infinite amax gives 0xFF and a NaN multiplier.
func mxScaleKernel(emax int) sass.Program {
	var g prog
	sgProlog(&g, lanesFrom(0x10), false)
	g.Add(inst("MOV", "", r(9), imm(4)))
	g.Add(inst("IMAD", "WIDE.U32", r(12), r(rgL), r(9), param(0x00)))
	g.Add(inst("LDG", "E", r(8), sass.G64(12, 0)).WriteSB(sass.SB2))
	g.Add(inst("MOV", "", r(3), imm(1)))
	g.Add(inst("IMAD", "WIDE.U32", r(14), r(rgL), r(3), param(0x08)))
	g.Add(inst("LOP3", "LUT", r(8), r(8), imm(0x7fffffff), rz, imm(0xc0), npt).Wait(waits(2)))
	g.Add(inst("ISETP", "GE.U32.AND", p(sass.P1), pt, r(8), imm(0x7f800000), pt))
	g.Add(inst("SHF", "R.U32.HI", r(10), rz, imm(23), r(8)))
	g.Add(inst("ISETP", "EQ.U32.AND", p(sass.P2), pt, r(10), rz, pt))
	g.Add(inst("IADD3", "", r(10), r(10), imm(int64(-127-emax)), rz))
	g.Add(inst("IMNMX", "", r(10), r(10), imm(-127), npt))
	g.Add(inst("SEL", "", r(10), r(10), imm(0xffffff81), np(sass.P2))) // −127
	g.Add(inst("IADD3", "", r(11), r(10), imm(127), rz))               // the E8M0 byte
	g.Add(inst("IADD3", "", r(16), sass.Neg(r(10)), imm(127), rz))     // 127 − e
	g.Add(inst("SHF", "L.U32", r(16), r(16), imm(23), rz))
	g.Add(inst("SEL", "", r(11), r(11), imm(0xff), np(sass.P1)))
	g.Add(inst("SEL", "", r(16), r(16), imm(0x7fc00000), np(sass.P1)))
	g.Add(inst("STG", "E.U8", sass.G64(14, 0), r(11)))
	g.Add(inst("STG", "E", sass.G64(12, 0), r(16)))
	g.At(inst("EXIT", "").Yield().Stall(5))
	g.Prog = settle(g.Prog)
	return g.end()
}

// mxKernels lists the family for sm_<arch>.
func mxKernels(arch int) ([]sgKernel, error) {
	var ks []sgKernel
	for _, q := range []tile.DType{tile.E4M3, tile.E5M2} {
		if _, err := quantizeKernel(arch, q, true, true); err != nil {
			return nil, err
		}
		ks = append(ks,
			sgKernel{"tcrt_sass_mx_scale_" + q.String(), func() sass.Program { return mxScaleKernel(tile.Float8EMax(q)) }, mxScaleParams},
			sgKernel{"tcrt_sass_quantize_mx_" + q.String(), func() sass.Program { p, _ := quantizeKernel(arch, q, true, true); return p }, quantBlockParams},
			sgKernel{"tcrt_sass_quantize_mx_" + q.String() + "_nonsat", func() sass.Program { p, _ := quantizeKernel(arch, q, true, false); return p }, quantBlockParams},
			sgKernel{sm86.EncodeElemKernel(q, false), func() sass.Program { p, _ := quantizeElemKernel(arch, q, true); return p }, quantBlockParams},
			sgKernel{sm86.EncodeElemKernel(q, true), func() sass.Program { p, _ := quantizeElemKernel(arch, q, false); return p }, quantBlockParams})
	}
	return ks, nil
}
