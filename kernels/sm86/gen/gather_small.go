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
	plain := sass.Control{Stall: 1}
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
	g.Add(inst("S2R", "", r(t), sass.SR(sass.SRTidX)).WriteSB(sass.SB0))
	g.Add(inst("S2R", "", r(rgCta), sass.SR(sass.SRCtaidX)).WriteSB(sass.SB1))
	g.At(inst("ULDC", "64", sass.UR(4), c0(0x118)).C(plain))
	g.At(inst("MOV", "", r(4), param(sgSlot)).C(plain))
	g.At(inst("MOV", "", r(5), param(sgSlot+4)).C(plain))
	g.Add(inst("LDG", "E", r(rgSlotHi), sass.G64(4, 4)).WriteSB(sass.SB3))
	g.Add(inst("LEA", "", r(t), r(rgCta), r(t), imm(8)).Wait(waits(0, 1)))
	g.At(inst("SHF", "L.U32", r(t), r(t), imm(int64(bits.Len(sm86.GatherPerThread)-1)), rz).C(plain)) // G is a power of two
	g.At(inst("ISETP", "GE.U32.AND", p(sass.P0), pt, r(t), param(la.lanes), pt).C(plain))
	g.At(inst("EXIT", "").When(sass.If(sass.P0)).C(plain))
	g.At(inst("MOV", "", r(one), imm(1)).C(plain))
	g.At(inst("MOV", "", r(four), imm(4)).C(plain))
	for k, x := range lanes {
		// lane l = t·G + k: (r, c), its position's load, its tile address
		g.At(inst("IADD3", "", r(x.l), r(t), imm(int64(k)), rz).C(plain))
		g.At(inst("ISETP", "LT.U32.AND", p(x.live), pt, r(x.l), param(la.lanes), pt).C(plain))
		g.At(inst("IMAD", "HI.U32", r(x.r), r(x.l), param(la.magic), rz).C(plain))
		g.At(inst("IADD3", "", r(x.r), r(x.r), r(x.l), rz).C(plain))
		g.At(inst("SHF", "R.U32.HI", r(x.r), rz, param(la.shift), r(x.r)).C(plain))
		g.At(inst("IMAD", "", r(x.c), r(x.r), param(la.negCols), r(x.l)).C(plain))
		g.At(inst("IMAD", "", r(x.pa), r(x.r), param(efPR), rz).C(plain))
		g.At(inst("IMAD", "", r(x.pa), r(x.c), param(efPC), r(x.pa)).C(plain))
		g.At(inst("IMAD", "WIDE.U32", r(x.pa), r(x.pa), r(four), param(efPos)).C(plain))
		g.At(inst("MOV", "", r(x.pos), imm(0xffffffff)).C(plain)) // a lane past the end looks dropped
		g.Add(inst("LDG", "E", r(x.pos), sass.G64(x.pa, 0)).When(sass.If(x.live)).WriteSB(sass.SB2))
		g.At(inst("IMAD", "", r(x.ta), r(x.r), param(efSR), rz).C(plain))
		g.At(inst("IMAD", "", r(x.ta), r(x.c), param(efSC), r(x.ta)).C(plain))
		g.At(inst("IMAD", "WIDE.U32", r(x.ta), r(x.ta), r(one), param(efOut)).C(plain))
	}
	faultExit(&g)
	for k, x := range lanes {
		// the memory element's address; its load unless the lane is dropped
		wait := plain
		if k == 0 {
			wait = sass.Control{Wait: waits(2), Stall: 1}
		}
		g.At(inst("MOV", "", r(x.ma), param(efMR)).C(wait))
		g.At(inst("ISETP", "EQ.U32.AND", p(x.dropped), pt, r(x.pos), imm(-1), pt).C(plain)) // SGDropped
		g.At(inst("IMAD", "WIDE.U32", r(x.ma), r(x.pos), r(x.ma), param(efIn)).C(plain))
		g.At(inst("IMAD", "WIDE.U32", r(x.ma), r(x.c), param(efMC), r(x.ma)).C(plain))
		g.At(inst("MOV", "", r(x.data), rz).C(plain))
		g.Add(inst("LDG", sizeMod[b], r(x.data), sass.G64(x.ma, 0)).When(sass.IfNot(x.dropped)).WriteSB(sass.SB4))
	}
	for k, x := range lanes {
		wait := plain
		if k == 0 {
			wait = sass.Control{Wait: waits(4), Stall: 1}
		}
		g.At(inst("STG", sizeMod[b], sass.G64(x.ta, 0), r(x.data)).When(sass.If(x.live)).C(wait))
	}
	g.At(inst("EXIT", "").Yield().Stall(5))
	g.Prog = settle(g.Prog)
	return g.end()
}
