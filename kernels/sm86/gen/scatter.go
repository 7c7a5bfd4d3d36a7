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
	g.at("[B------:R-:W0:-:S01]", inst("S2R", "", r(rL), sass.SR(sass.SRTidX)))
	g.at("[B------:R-:W1:-:S01]", inst("S2R", "", r(rCta), sass.SR(sass.SRCtaidX)))
	g.at("[B------:R-:W-:-:S01]", inst("ULDC", "64", sass.UR(4), c0(0x118)))
	g.at("[B------:R-:W-:-:S01]", inst("MOV", "", r(rFour), imm(4)))
	g.at("[B01----:R-:W-:-:S04]", inst("LEA", "", r(rL), r(rCta), r(rL), imm(8)))
	g.at("[B------:R-:W-:-:S01]", inst("ISETP", "GE.U32.AND", p(sass.P0), pt, r(rL), param(sN), pt))
	// r = (umulhi(l, magic) + l) >> shift; c = l − r·cols.
	g.at("[B------:R-:W-:-:S01]", inst("IMAD", "HI.U32", r(rT), r(rL), param(sMagic), rz))
	g.at("[B------:R-:W-:-:S11]", inst("IMAD", "WIDE.U32", r(rSrcA), r(rL), r(rFour), param(sSrc)))
	g.at("[B------:R-:W-:-:S01]", inst("EXIT", "").When(sass.If(sass.P0)))
	g.at("[B------:R-:W2:-:S01]", inst("LDG", "E", r(rVal), sass.G64(rSrcA, 0)))
	g.at("[B------:R-:W-:-:S04]", inst("IADD3", "", r(rT), r(rT), r(rL), rz))
	g.at("[B------:R-:W-:-:S05]", inst("SHF", "R.U32.HI", r(rT), rz, param(sShift), r(rT)))
	g.at("[B------:R-:W-:-:S01]", inst("IMAD", "", r(rC), r(rT), param(sNegCols), r(rL)))
	g.at("[B------:R-:W-:-:S05]", inst("IMAD", "WIDE.U32", r(rIdxA), r(rT), r(rFour), param(sIdx)))
	g.at("[B------:R-:W3:-:S01]", inst("LDG", "E", r(rIdx), sass.G64(rIdxA, 0)))
	// P1: out of bounds; P2: clamped low (a negative signed index); P3:
	// dropped (skip).
	g.at("[B---3--:R-:W-:-:S04]", inst("ISETP", "GE.U32.AND", p(sass.P1), pt, r(rIdx), param(sMemRows), pt))
	g.at("[B------:R-:W-:-:S01]", inst("ISETP", "LT.AND", p(sass.P2), pt, r(rIdx), rz, p(sass.P1)))
	g.at("[B------:R-:W-:-:S04]", inst("ISETP", "NE.U32.AND", p(sass.P3), pt, rz, param(sSkip), p(sass.P1)))
	g.at("[B------:R-:W-:-:S01]", inst("ISETP", "NE.U32.AND", p(sass.P2), pt, rz, param(sSigned), p(sass.P2)))
	g.at("[B------:R-:W-:-:S04]", inst("SEL", "", r(rIdx), r(rIdx), param(sHiClamp), np(sass.P1)))
	g.at("[B------:R-:W-:-:S05]", inst("SEL", "", r(rIdx), rz, r(rIdx), p(sass.P2)))
	g.at("[B------:R-:W-:-:S04]", inst("IMAD", "", r(rIdx), r(rIdx), param(sCols), r(rC)))
	g.at("[B------:R-:W-:-:S05]", inst("IMAD", "WIDE.U32", r(rMemA), r(rIdx), r(rFour), param(sMem)))
	g.at("[B--2---:R-:W-:-:S01]", inst("RED", "E.ADD.F32.FTZ.RN.STRONG.GPU", sass.G64(rMemA, 0), r(rVal)).When(sass.IfNot(sass.P3)))
	g.at("[B------:R-:W-:Y:S05]", inst("EXIT", ""))
	return g.end()
}
