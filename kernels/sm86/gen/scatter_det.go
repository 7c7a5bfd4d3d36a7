package gen

import (
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
)

// Deterministic plain scatter (fallback.ScatterArgs.Deterministic: the
// updates of each destination apply in increasing lane order, so the
// largest lane's value stays) in two passes over a scratch array holding
// one u32 per destination (memory element; row mode: memory row), zeroed
// first by the pad kernel:
//
//  1. tcrt_sass_sg_claim: one thread per index lane l whose position is not
//     dropped does RED.MAX.U32 win[pos] ← l + 1 (lanes in the CPU's order:
//     row-major over the index tile's valid region, by row in row mode).
//  2. tcrt_sass_sg_detstore<bits>: the store kernel, each thread storing
//     only when win[pos] is its lane + 1, so exactly one lane writes each
//     destination element, the largest.
//
// Deterministic float adds need the updates of a destination in lane
// order (a sort by destination on the device); they run on the host (see
// sm86.ScatterSupports).

// Claim parameters: slot, pos, win; lanes, cols (1), magic, shift, -cols.
const (
	clPos = 0x08
	clWin = 0x10
)

var claimParams = sgParamsOf(3, 5)

// claimKernel is pass 1: win[pos[l]] = max(win[pos[l]], l + 1).
func claimKernel() sass.Program {
	var g prog
	sgProlog(&g, lanesFrom(0x18), false)
	const four = 3
	g.Add(inst("MOV", "", r(four), imm(4)))
	g.Add(inst("IMAD", "WIDE.U32", r(6), r(rgL), r(four), param(clPos)))
	g.Add(inst("LDG", "E", r(8), sass.G64(6, 0)).WriteSB(sass.SB2))
	g.Add(inst("IADD3", "", r(9), r(rgL), imm(1), rz))
	g.Add(inst("ISETP", "EQ.U32.AND", p(sass.P1), pt, r(8), imm(-1), pt).Wait(waits(2))) // SGDropped
	g.Add(inst("IMAD", "WIDE.U32", r(12), r(8), r(four), param(clWin)))
	g.Add(inst("RED", "E.MAX.STRONG.GPU", sass.G64(12, 0), r(9)).When(sass.IfNot(sass.P1)))
	g.At(inst("EXIT", "").Yield().Stall(5))
	g.Prog = settle(g.Prog)
	return g.end()
}

// The deterministic store's parameters: the effect kernels', then win.
const dsWin = 0x50

var detStoreParams = append(sgParamsOf(4, 11), cubin.Param{Size: 8, Align: 8})

// detStoreKernel is pass 2 for elements of b bytes (1, 2, 4, 8): the store
// kernel, writing only the winning lane's value.
func detStoreKernel(b int) sass.Program {
	var g prog
	effectPrologue(&g)
	// the index lane r·pr + c·pc, plus one
	g.Add(inst("IMAD", "", r(14), r(rgR), param(efPR), rz))
	g.Add(inst("IMAD", "", r(14), r(rgC), param(efPC), r(14)))
	g.Add(inst("IADD3", "", r(14), r(14), imm(1), rz))
	sgTileAddr(&g, efIn)
	g.Add(inst("LDG", sizeMod[b], r(16), sass.G64(10, 0)).WriteSB(sass.SB4))
	sgMemAddr(&g, efOut)
	g.Add(inst("MOV", "", r(15), imm(0)))
	g.Add(inst("IMAD", "WIDE.U32", r(18), r(8), r(3), param(dsWin)))
	g.Add(inst("LDG", "E", r(15), sass.G64(18, 0)).When(sass.IfNot(sass.P1)).WriteSB(sass.SB2))
	faultExit(&g)
	g.Add(inst("ISETP", "NE.U32.OR", p(sass.P1), pt, r(15), r(14), p(sass.P1)).Wait(waits(2)))
	g.Add(inst("STG", sizeMod[b], sass.G64(12, 0), r(16)).When(sass.IfNot(sass.P1)).Wait(waits(4)))
	g.At(inst("EXIT", "").Yield().Stall(5))
	g.Prog = settle(g.Prog)
	return g.end()
}
