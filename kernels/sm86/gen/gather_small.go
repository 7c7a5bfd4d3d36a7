package gen

import (
	"math/bits"

	"github.com/tcrt-go/tcrt/kernels/sm86"
	"github.com/tcrt-go/tcrt/sass"
)

// gatherSmallKernel is gatherKernel for elements of b (1 or 2) bytes,
// sm86.GatherPerThread lanes a thread: lane t·G + k for k < G (those below the
// lane count); a dropped lane stores zeros.
func gatherSmallKernel(b int) sass.Program {
	var g prog
	const plain = "[B------:R-:W-:-:S01]"
	const t, one, four = 0, 9, 3
	type laneRegs struct {
		l, r, c, pos, ta, ma, pa, data sass.Reg
		live, dropped                  sass.Pred
	}
	lanes := []laneRegs{
		{10, 11, 12, 13, 14, 16, 28, 26, sass.P3, sass.P5},
		{18, 19, 20, 21, 22, 24, 30, 27, sass.P4, sass.P6},
	}[:sm86.GatherPerThread]
	la := lanesFrom(0x20)
	g.at("[B------:R-:W0:-:S01]", inst("S2R", "", r(t), sass.SR(sass.SRTidX)))
	g.at("[B------:R-:W1:-:S01]", inst("S2R", "", r(rgCta), sass.SR(sass.SRCtaidX)))
	g.at(plain, inst("ULDC", "64", sass.UR(4), c0(0x118)))
	g.at(plain, inst("MOV", "", r(4), param(sgSlot)))
	g.at(plain, inst("MOV", "", r(5), param(sgSlot+4)))
	g.at("[B------:R-:W3:-:S01]", inst("LDG", "E", r(rgSlotHi), sass.G64(4, 4)))
	g.at("[B01----:R-:W-:-:S01]", inst("LEA", "", r(t), r(rgCta), r(t), imm(8)))
	g.at(plain, inst("SHF", "L.U32", r(t), r(t), imm(int64(bits.Len(sm86.GatherPerThread)-1)), rz)) // G is a power of two
	g.at(plain, inst("ISETP", "GE.U32.AND", p(sass.P0), pt, r(t), param(la.lanes), pt))
	g.at(plain, inst("EXIT", "").When(sass.If(sass.P0)))
	g.at(plain, inst("MOV", "", r(one), imm(1)))
	g.at(plain, inst("MOV", "", r(four), imm(4)))
	for k, x := range lanes {
		// lane l = t·G + k: (r, c), its position's load, its tile address
		g.at(plain, inst("IADD3", "", r(x.l), r(t), imm(int64(k)), rz))
		g.at(plain, inst("ISETP", "LT.U32.AND", p(x.live), pt, r(x.l), param(la.lanes), pt))
		g.at(plain, inst("IMAD", "HI.U32", r(x.r), r(x.l), param(la.magic), rz))
		g.at(plain, inst("IADD3", "", r(x.r), r(x.r), r(x.l), rz))
		g.at(plain, inst("SHF", "R.U32.HI", r(x.r), rz, param(la.shift), r(x.r)))
		g.at(plain, inst("IMAD", "", r(x.c), r(x.r), param(la.negCols), r(x.l)))
		g.at(plain, inst("IMAD", "", r(x.pa), r(x.r), param(efPR), rz))
		g.at(plain, inst("IMAD", "", r(x.pa), r(x.c), param(efPC), r(x.pa)))
		g.at(plain, inst("IMAD", "WIDE.U32", r(x.pa), r(x.pa), r(four), param(efPos)))
		g.at(plain, inst("MOV", "", r(x.pos), imm(0xffffffff))) // a lane past the end looks dropped
		g.at("[B------:R-:W2:-:S01]", inst("LDG", "E", r(x.pos), sass.G64(x.pa, 0)).When(sass.If(x.live)))
		g.at(plain, inst("IMAD", "", r(x.ta), r(x.r), param(efSR), rz))
		g.at(plain, inst("IMAD", "", r(x.ta), r(x.c), param(efSC), r(x.ta)))
		g.at(plain, inst("IMAD", "WIDE.U32", r(x.ta), r(x.ta), r(one), param(efOut)))
	}
	faultExit(&g)
	for k, x := range lanes {
		// the memory element's address; its load unless the lane is dropped
		wait := plain
		if k == 0 {
			wait = "[B--2---:R-:W-:-:S01]"
		}
		g.at(wait, inst("MOV", "", r(x.ma), param(efMR)))
		g.at(plain, inst("ISETP", "EQ.U32.AND", p(x.dropped), pt, r(x.pos), imm(-1), pt)) // SGDropped
		g.at(plain, inst("IMAD", "WIDE.U32", r(x.ma), r(x.pos), r(x.ma), param(efIn)))
		g.at(plain, inst("IMAD", "WIDE.U32", r(x.ma), r(x.c), param(efMC), r(x.ma)))
		g.at(plain, inst("MOV", "", r(x.data), rz))
		g.at("[B------:R-:W4:-:S01]", inst("LDG", sizeMod[b], r(x.data), sass.G64(x.ma, 0)).When(sass.IfNot(x.dropped)))
	}
	for k, x := range lanes {
		wait := plain
		if k == 0 {
			wait = "[B----4-:R-:W-:-:S01]"
		}
		g.at(wait, inst("STG", sizeMod[b], sass.G64(x.ta, 0), r(x.data)).When(sass.If(x.live)))
	}
	g.at("[B------:R-:W-:Y:S05]", inst("EXIT", ""))
	g.p = settle(g.p)
	return g.end()
}
