package gen

import (
	"github.com/tcrt-go/tcrt/kernels/sm86"
	"github.com/tcrt-go/tcrt/sass"
)

// Widening of f16 and bf16 elements to binary32, exactly
// (tile.F16ToF32, tile.BF16ToF32 bit for bit, NaN payloads and signs
// kept), four elements a thread: the step that lets the f32 block and MX
// quantisers take 16-bit input (sm86.PlanWiden into scratch, then the
// quantiser reads the scratch). bf16 is the top half of binary32 (a
// shift); f16 converts with HADD2.F32 (−0 + x, exact, subnormals
// included) except NaN and Inf, which integer code builds (sign, all-ones
// exponent, the 10 payload bits shifted up 13, a NaN quieted as
// x448/float16 quiets it).

// Widen parameters: out (binary32), x (16-bit); lanes (groups of
// sm86.WidenPer), 1, 0, 0, -1, n (elements).
var widenParams = sgParamsOf(2, 6)

// wdN is the offset of the element count n in the parameter window.
const wdN = 0x24

// widenKernel widens sm86.WidenPer consecutive elements a thread (the last
// group element by element): f16 with half, else bf16. The loads are
// independent (one dependent level, 8 bytes a thread in flight).
func widenKernel(half bool) sass.Program {
	var g prog
	sgProlog(&g, lanesFrom(0x10), false)
	g.Add(inst("MOV", "", r(9), imm(2*sm86.WidenPer)))
	g.Add(inst("IMAD", "WIDE.U32", r(6), r(rgL), r(9), param(0x08)))
	g.Add(inst("MOV", "", r(9), imm(4*sm86.WidenPer)))
	g.Add(inst("IMAD", "WIDE.U32", r(12), r(rgL), r(9), param(0x00)))
	// rem = n − sm86.WidenPer·lane elements from this group on (at least 1)
	g.Add(inst("IMAD", "SHL.U32", r(10), r(rgL), imm(sm86.WidenPer), rz))
	g.Add(inst("IADD3", "", r(10), sass.Neg(r(10)), param(wdN), rz))
	for k := 1; k < sm86.WidenPer; k++ {
		g.Add(inst("ISETP", "GT.U32.AND", p(sass.Pred(k-1)), pt, r(10), imm(int64(k)), pt))
	}
	for k := 1; k < sm86.WidenPer; k++ { // the tail's missing elements: defined, not stored
		g.Add(inst("MOV", "", r(sass.Reg(16+k)), rz))
	}
	g.Add(inst("LDG", "E.U16", r(16), sass.G64(6, 0)).WriteSB(sass.SB2))
	for k := 1; k < sm86.WidenPer; k++ {
		g.Add(inst("LDG", "E.U16", r(sass.Reg(16+k)), sass.G64(6, int64(2*k))).When(sass.If(sass.Pred(k - 1))).WriteSB(sass.SB2))
	}
	for k := range sm86.WidenPer {
		h, o := sass.Reg(16+k), sass.Reg(20+k)
		ctl := sass.Control{Stall: 1}
		if k == 0 {
			ctl = sass.Control{Wait: waits(2), Stall: 1}
		}
		if !half {
			g.At(inst("SHF", "L.U32", r(o), r(h), imm(16), rz).C(ctl))
			continue
		}
		g.At(inst("HADD2", "F32", r(o), sass.Neg(rz), selOp(h, ".H0_H0")).C(ctl))
		g.Add(inst("LOP3", "LUT", r(11), r(h), imm(0x7fff), rz, imm(0xc0), npt))
		g.Add(inst("ISETP", "GE.U32.AND", p(sass.P4), pt, r(11), imm(0x7c00), pt))
		g.Add(inst("ISETP", "GT.U32.AND", p(sass.P5), pt, r(11), imm(0x7c00), pt))
		g.Add(inst("SHF", "L.U32", r(14), r(h), imm(13), rz))
		g.Add(inst("LOP3", "LUT", r(15), r(h), imm(0x8000), rz, imm(0xc0), npt))
		g.Add(inst("LOP3", "LUT", r(14), r(14), imm(0x7fe000), rz, imm(0xc0), npt))
		g.Add(inst("SHF", "L.U32", r(15), r(15), imm(16), rz))
		g.Add(inst("LOP3", "LUT", r(14), r(14), imm(0x7f800000), r(15), imm(0xfe), npt))
		g.Add(inst("LOP3", "LUT", r(14), r(14), imm(0x400000), rz, imm(0xfc), npt).When(sass.If(sass.P5))) // a NaN comes back quiet
		g.Add(inst("SEL", "", r(o), r(14), r(o), p(sass.P4)))
	}
	g.Add(inst("STG", "E", sass.G64(12, 0), r(20)))
	for k := 1; k < sm86.WidenPer; k++ {
		g.Add(inst("STG", "E", sass.G64(12, int64(4*k)), r(sass.Reg(20+k))).When(sass.If(sass.Pred(k - 1))))
	}
	g.At(inst("EXIT", "").Yield().Stall(5))
	g.Prog = settle(g.Prog)
	return g.end()
}

// widenKernels lists the family in the module's order.
var widenKernels = []sgKernel{
	{"tcrt_sass_widen_f16", func() sass.Program { return widenKernel(true) }, widenParams},
	{"tcrt_sass_widen_bf16", func() sass.Program { return widenKernel(false) }, widenParams},
}
