package gen

import (
	"github.com/tcrt-go/tcrt/kernels/sm86"
	"github.com/tcrt-go/tcrt/sass"
)

// The amax reduction of the float8 quantisers on hand-scheduled SASS
// (fallback.AmaxRef's result, bit for bit): sm86.PlanAmax's launches zero the
// per-block words, reduce, and finish them.
//
// Absolute values of IEEE floats order as their bits with the sign
// cleared, and every NaN's bits lie above the infinity's, so the reduction
// is an unsigned integer max: each thread takes a run of up to 8 elements
// of a row, keeps the largest |x| bits, and folds them into its block's
// word with RED.E.MAX (u32). The finishing kernel turns a word above the
// infinity's bits into the canonical quiet NaN 0x7fc00000 (AmaxRef's NaN)
// and, for f16 input, widens the f16 bits to binary32 (exact).

// Reduction parameters: out, x; lanes, runs, magic, shift, -runs, cols,
// block-rows magic and shift, block-cols magic and shift, blocks a row.
const (
	amOut     = 0x00
	amX       = 0x08
	amCols    = 0x24
	amBRMagic = 0x28
	amBRShift = 0x2c
	amBCMagic = 0x30
	amBCShift = 0x34
	amSC      = 0x38
)

var amaxParams = sgParamsOf(2, 11)

// Zero and finish parameters: out; lanes (blocks), cols 1, magic, shift,
// -1.
var amaxFinParams = sgParamsOf(1, 5)

func selOp(n sass.Reg, sel string) sass.Operand {
	o := r(n)
	o.Sel = sel
	return o
}

// amaxKernel reduces elements of esz bytes (4: f32; 2: bf16 or, with
// half, f16).
func amaxKernel(esz int, half bool) sass.Program {
	var g prog
	sgProlog(&g, lanesFrom(0x10), false)
	mask := int64(0x7fffffff)
	mod := "E"
	if esz == 2 {
		mask, mod = 0x7fff, "E.U16"
	}
	g.Add(inst("IMAD", "SHL.U32", r(rgC), r(rgC), imm(sm86.AmaxRun), rz)) // c0
	g.Add(inst("MOV", "", r(3), imm(int64(esz))))
	g.Add(inst("IMAD", "", r(6), r(rgR), param(amCols), r(rgC)))
	g.Add(inst("IMAD", "WIDE.U32", r(6), r(6), r(3), param(amX)))
	g.Add(inst("IADD3", "", r(8), sass.Neg(r(rgC)), param(amCols), rz))
	for k := 1; k < sm86.AmaxRun; k++ {
		g.Add(inst("ISETP", "GT.U32.AND", p(sass.Pred(k-1)), pt, r(8), imm(int64(k)), pt))
	}
	for k := 1; k < sm86.AmaxRun; k++ {
		g.Add(inst("MOV", "", r(sass.Reg(16+k)), rz))
	}
	g.Add(inst("LDG", mod, r(16), sass.G64(6, 0)).WriteSB(sass.SB2))
	for k := 1; k < sm86.AmaxRun; k++ {
		g.Add(inst("LDG", mod, r(sass.Reg(16+k)), sass.G64(6, int64(k*esz))).When(sass.If(sass.Pred(k - 1))).WriteSB(sass.SB2))
	}
	// the block: (r / br)·sc + c0 / bc.
	g.Add(inst("IMAD", "HI.U32", r(10), r(rgR), param(amBRMagic), rz))
	g.Add(inst("IMAD", "HI.U32", r(11), r(rgC), param(amBCMagic), rz))
	g.Add(inst("IADD3", "", r(10), r(10), r(rgR), rz))
	g.Add(inst("IADD3", "", r(11), r(11), r(rgC), rz))
	g.Add(inst("SHF", "R.U32.HI", r(10), rz, param(amBRShift), r(10)))
	g.Add(inst("SHF", "R.U32.HI", r(11), rz, param(amBCShift), r(11)))
	g.Add(inst("MOV", "", r(9), imm(4)))
	g.Add(inst("IMAD", "", r(10), r(10), param(amSC), r(11)))
	g.Add(inst("IMAD", "WIDE.U32", r(12), r(10), r(9), param(amOut)))
	g.Add(inst("LOP3", "LUT", r(16), r(16), imm(mask), rz, imm(0xc0), npt).Wait(waits(2)))
	for k := 1; k < sm86.AmaxRun; k++ {
		g.Add(inst("LOP3", "LUT", r(sass.Reg(16+k)), r(sass.Reg(16+k)), imm(mask), rz, imm(0xc0), npt))
	}
	for s := 1; s < sm86.AmaxRun; s *= 2 { // a tree: 16←17, 18←19, ...; 16←18, ...; 16←20
		for k := 0; k < sm86.AmaxRun; k += 2 * s {
			g.Add(inst("IMNMX", "U32", r(sass.Reg(16+k)), r(sass.Reg(16+k)), r(sass.Reg(16+k+s)), npt))
		}
	}
	if esz == 2 && !half { // bf16: the top half of binary32
		g.Add(inst("SHF", "L.U32", r(16), r(16), imm(16), rz))
	}
	g.Add(inst("RED", "E.MAX.STRONG.GPU", sass.G64(12, 0), r(16)))
	g.At(inst("EXIT", "").Yield().Stall(5))
	g.Prog = settle(g.Prog)
	return g.end()
}

// amaxZeroKernel zeroes the block words.
func amaxZeroKernel() sass.Program {
	var g prog
	sgProlog(&g, lanesFrom(0x08), false)
	g.Add(inst("MOV", "", r(9), imm(4)))
	g.Add(inst("IMAD", "WIDE.U32", r(12), r(rgL), r(9), param(amOut)))
	g.Add(inst("STG", "E", sass.G64(12, 0), rz))
	g.At(inst("EXIT", "").Yield().Stall(5))
	g.Prog = settle(g.Prog)
	return g.end()
}

// amaxFinKernel finishes the block words: NaN to 0x7fc00000; with half,
// f16 bits widened to binary32.
func amaxFinKernel(half bool) sass.Program {
	var g prog
	sgProlog(&g, lanesFrom(0x08), false)
	g.Add(inst("MOV", "", r(9), imm(4)))
	g.Add(inst("IMAD", "WIDE.U32", r(12), r(rgL), r(9), param(amOut)))
	g.Add(inst("LDG", "E", r(8), sass.G64(12, 0)).WriteSB(sass.SB2))
	g.Add(inst("MOV", "", r(9), imm(0x7fc00000)))
	inf := int64(0x7f800000)
	if half {
		inf = 0x7c00
	}
	g.Add(inst("ISETP", "GT.U32.AND", p(sass.P1), pt, r(8), imm(inf), pt).Wait(waits(2)))
	if half {
		g.Add(inst("HADD2", "F32", r(8), sass.Neg(rz), selOp(8, ".H0_H0")))
	}
	g.Add(inst("SEL", "", r(8), r(9), r(8), p(sass.P1)))
	g.Add(inst("STG", "E", sass.G64(12, 0), r(8)))
	g.At(inst("EXIT", "").Yield().Stall(5))
	g.Prog = settle(g.Prog)
	return g.end()
}

// amaxKernels lists the family in the module's order.
var amaxKernels = []sgKernel{
	{"tcrt_sass_amax_f32", func() sass.Program { return amaxKernel(4, false) }, amaxParams},
	{"tcrt_sass_amax_bf16", func() sass.Program { return amaxKernel(2, false) }, amaxParams},
	{"tcrt_sass_amax_f16", func() sass.Program { return amaxKernel(2, true) }, amaxParams},
	{"tcrt_sass_amax_zero", amaxZeroKernel, amaxFinParams},
	{"tcrt_sass_amax_fin", func() sass.Program { return amaxFinKernel(false) }, amaxFinParams},
	{"tcrt_sass_amax_fin_f16", func() sass.Program { return amaxFinKernel(true) }, amaxFinParams},
}
