package gen

import (
	"github.com/tcrt-go/tcrt/kernels/sm86"
	"github.com/tcrt-go/tcrt/sass"
)

// Per-column amax (blocks one element wide spanning every row,
// fallback.PerColumn): a thread reduces a segment of sm86.AmaxRun rows of one
// column (lanes ordered column-fastest, so a warp's loads are coalesced
// along a row), then one ordered-integer RED.MAX into the column's word;
// the amax zero and finish kernels do the rest, as for the other
// granularities.

// Column reduction parameters: out, x; lanes (segments × cols), cols,
// magic, shift, -cols (the lane split into segment and column), rows.
var amaxColParams = sgParamsOf(2, 6)

const amcRows = 0x24

// amaxColKernel reduces a column segment of elements of esz bytes (4: f32;
// 2: bf16 or, with half, f16).
func amaxColKernel(esz int, half bool) sass.Program {
	var g prog
	sgProlog(&g, lanesFrom(0x10), false) // rgR: the segment, rgC: the column
	mask := int64(0x7fffffff)
	mod := "E"
	if esz == 2 {
		mask, mod = 0x7fff, "E.U16"
	}
	const cols = 0x14                                                     // the lane split's divisor is Cols
	g.Add(inst("IMAD", "SHL.U32", r(rgR), r(rgR), imm(sm86.AmaxRun), rz)) // first row
	g.Add(inst("MOV", "", r(3), imm(int64(esz))))
	g.Add(inst("IMAD", "", r(4), r(rgR), param(cols), r(rgC))) // element index
	g.Add(inst("IADD3", "", r(8), sass.Neg(r(rgR)), param(amcRows), rz))
	for k := 1; k < sm86.AmaxRun; k++ {
		g.Add(inst("ISETP", "GT.U32.AND", p(sass.Pred(k-1)), pt, r(8), imm(int64(k)), pt))
	}
	for k := 1; k < sm86.AmaxRun; k++ {
		g.Add(inst("MOV", "", r(sass.Reg(16+k)), rz))
	}
	g.Add(inst("IMAD", "WIDE.U32", r(6), r(4), r(3), param(amX)))
	g.Add(inst("LDG", mod, r(16), sass.G64(6, 0)).WriteSB(sass.SB2))
	for k := 1; k < sm86.AmaxRun; k++ {
		a := sass.Reg(24 + 2*k)
		g.Add(inst("IADD3", "", r(4), r(4), param(cols), rz))
		g.Add(inst("IMAD", "WIDE.U32", r(a), r(4), r(3), param(amX)))
		g.Add(inst("LDG", mod, r(sass.Reg(16+k)), sass.G64(a, 0)).When(sass.If(sass.Pred(k - 1))).WriteSB(sass.SB2))
	}
	g.Add(inst("MOV", "", r(9), imm(4)))
	g.Add(inst("IMAD", "WIDE.U32", r(12), r(rgC), r(9), param(amOut)))
	g.Add(inst("LOP3", "LUT", r(16), r(16), imm(mask), rz, imm(0xc0), npt).Wait(waits(2)))
	for k := 1; k < sm86.AmaxRun; k++ {
		g.Add(inst("LOP3", "LUT", r(sass.Reg(16+k)), r(sass.Reg(16+k)), imm(mask), rz, imm(0xc0), npt))
	}
	for s := 1; s < sm86.AmaxRun; s *= 2 {
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

// amaxColKernels lists the family in the module's order.
var amaxColKernels = []sgKernel{
	{"tcrt_sass_amax_col_f32", func() sass.Program { return amaxColKernel(4, false) }, amaxColParams},
	{"tcrt_sass_amax_col_bf16", func() sass.Program { return amaxColKernel(2, false) }, amaxColParams},
	{"tcrt_sass_amax_col_f16", func() sass.Program { return amaxColKernel(2, true) }, amaxColParams},
}
