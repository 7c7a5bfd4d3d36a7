package gen

import (
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
)

// Parameter offsets of the scatter kernel (from cubin.ParamBase).
const (
	sMem     = 0x00
	sIdx     = 0x08
	sSrc     = 0x10
	sN       = 0x18
	sCols    = 0x1c
	sMagic   = 0x20
	sShift   = 0x24
	sNegCols = 0x28
	sMemRows = 0x2c
	sHiClamp = 0x30
	sSigned  = 0x34
	sSkip    = 0x38
)

// scatterParams is the scatter kernel's parameter list: three pointers,
// then nine u32.
var scatterParams = func() []cubin.Param {
	ps := []cubin.Param{{Size: 8, Align: 8}, {Size: 8, Align: 8}, {Size: 8, Align: 8}}
	for range 9 {
		ps = append(ps, cubin.Param{Size: 4, Align: 4})
	}
	return ps
}()

// ScatterAdd returns the f32 scatter-add kernel (the same program for
// sm_86 and sm_89).
//
// Schedule: S2R on SB0/SB1, the source value's load on SB2 (issued first,
// so it overlaps the index arithmetic and the index load), the index load
// on SB3; the rest is fixed-latency under sched.DefaultLatencies. The RED
// is the last instruction before EXIT, so nothing can overwrite its
// sources and it needs no read scoreboard.
func ScatterAdd() sass.Program {
	const (
		rL, rCta, rT, rFour = 0, 3, 2, 7
		rSrcA, rVal         = 4, 6 // src address pair, the value
		rC, rIdx, rIdxA     = 8, 9, 10
		rMemA               = 12
	)
	var g prog
	g.Add(inst("S2R", "", r(rL), sass.SR(sass.SRTidX)).WriteSB(sass.SB0))
	g.Add(inst("S2R", "", r(rCta), sass.SR(sass.SRCtaidX)).WriteSB(sass.SB1))
	g.Add(inst("ULDC", "64", sass.UR(4), c0(0x118)))
	g.Add(inst("MOV", "", r(rFour), imm(4)))
	g.At(inst("LEA", "", r(rL), r(rCta), r(rL), imm(8)).Wait(waits(0, 1)).Stall(4))
	g.Add(inst("ISETP", "GE.U32.AND", p(sass.P0), pt, r(rL), param(sN), pt))
	// r = (umulhi(l, magic) + l) >> shift; c = l − r·cols.
	g.Add(inst("IMAD", "HI.U32", r(rT), r(rL), param(sMagic), rz))
	g.At(inst("IMAD", "WIDE.U32", r(rSrcA), r(rL), r(rFour), param(sSrc)).Stall(11))
	g.Add(inst("EXIT", "").When(sass.If(sass.P0)))
	g.Add(inst("LDG", "E", r(rVal), sass.G64(rSrcA, 0)).WriteSB(sass.SB2))
	g.At(inst("IADD3", "", r(rT), r(rT), r(rL), rz).Stall(4))
	g.At(inst("SHF", "R.U32.HI", r(rT), rz, param(sShift), r(rT)).Stall(5))
	g.Add(inst("IMAD", "", r(rC), r(rT), param(sNegCols), r(rL)))
	g.At(inst("IMAD", "WIDE.U32", r(rIdxA), r(rT), r(rFour), param(sIdx)).Stall(5))
	g.Add(inst("LDG", "E", r(rIdx), sass.G64(rIdxA, 0)).WriteSB(sass.SB3))
	// P1: out of bounds; P2: clamped low (a negative signed index); P3:
	// dropped (skip).
	g.At(inst("ISETP", "GE.U32.AND", p(sass.P1), pt, r(rIdx), param(sMemRows), pt).Wait(waits(3)).Stall(4))
	g.Add(inst("ISETP", "LT.AND", p(sass.P2), pt, r(rIdx), rz, p(sass.P1)))
	g.At(inst("ISETP", "NE.U32.AND", p(sass.P3), pt, rz, param(sSkip), p(sass.P1)).Stall(4))
	g.Add(inst("ISETP", "NE.U32.AND", p(sass.P2), pt, rz, param(sSigned), p(sass.P2)))
	g.At(inst("SEL", "", r(rIdx), r(rIdx), param(sHiClamp), np(sass.P1)).Stall(4))
	g.At(inst("SEL", "", r(rIdx), rz, r(rIdx), p(sass.P2)).Stall(5))
	g.At(inst("IMAD", "", r(rIdx), r(rIdx), param(sCols), r(rC)).Stall(4))
	g.At(inst("IMAD", "WIDE.U32", r(rMemA), r(rIdx), r(rFour), param(sMem)).Stall(5))
	g.Add(inst("RED", "E.ADD.F32.FTZ.RN.STRONG.GPU", sass.G64(rMemA, 0), r(rVal)).When(sass.IfNot(sass.P3)).Wait(waits(2)))
	g.At(inst("EXIT", "").Yield().Stall(5))
	return g.end()
}
