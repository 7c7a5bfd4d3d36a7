package gen

import (
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/tile"
)

// Float scatter-add (f32, f16, bf16) with the CPU's bits (fallback's
// refCombine): the sum is old + v rounded once in binary32, then once to
// the element type (binary32 has 2p+2 bits or more for binary16's and
// bfloat16's p, so this double rounding equals one correct rounding, and
// FADD without .FTZ keeps subnormals as Go does). RED.ADD.F32 would flush
// subnormals, RED.ADD.F16x2 returns the canonical NaN; both differ from the
// CPU, so each lane runs a compare-and-swap loop on the element's aligned
// 32-bit word (a 16-bit element keeps its neighbour's bytes), the warp
// branching back while any lane retries (VOTE.ANY: a uniform branch, the
// warp stays converged).
//
// NaN results follow the CPU on amd64 (SSE): a NaN operand comes back
// quieted (its quiet bit set, payload kept, through the f16/bf16 ↔ f32
// conversions of tile), Inf − Inf gives the negative default NaN, and when
// both operands are NaN the one the Go compiler's operand order keeps wins
// (measured with fallback.ScatterRef and ScatterFast under Go 1.26 on
// amd64: the arriving value for f32 and f16, the held one for bf16;
// TestSimScatterAddNaN checks each against the reference). On a CPU with
// other NaN rules (arm64's default NaN is positive) only NaN payloads can
// differ.

// faddType is one element type of the float scatter-add.
type faddType struct {
	d        tile.DType
	quiet    uint32 // the quiet bit in the element's encoding
	defNaN   uint32 // Inf − Inf on amd64, in the element's encoding
	heldWins bool   // with two NaN operands the held value's NaN is kept
}

var faddTypes = []faddType{
	{tile.F32, 0x400000, 0xffc00000, false},
	{tile.F16, 0x200, 0xfe00, false},
	{tile.BF16, 0x40, 0xffc0, true},
}

// faddKernel adds one source element per thread into its memory element; a
// dropped lane does nothing.
func faddKernel(ft faddType) sass.Program {
	var g prog
	effectPrologue(&g)
	sgTileAddr(&g, efIn)
	narrow := ft.d.Size() == 2
	g.Add(inst("LDG", sizeMod[ft.d.Size()], r(16), sass.G64(10, 0)).WriteSB(sass.SB4))
	sgMemAddr(&g, efOut)
	faultExit(&g)
	const (
		rV, rV32, rVQ, rShift, rMask = 16, 17, 18, 22, 23
		rW, rO, rA32, rS32, rS, rT   = 20, 21, 24, 25, 26, 28
		rGot, rDef, rBallot          = 27, 19, 29
	)
	if narrow {
		// R22 the element's bit offset in its word, R23 its mask, R12 the
		// word's address.
		g.Add(inst("LOP3", "LUT", r(rShift), r(12), imm(3), rz, imm(0xc0), npt))
		g.Add(inst("LOP3", "LUT", r(12), r(12), imm(0xfffffffc), rz, imm(0xc0), npt))
		g.Add(inst("IMAD", "SHL.U32", r(rShift), r(rShift), imm(8), rz))
		g.Add(inst("MOV", "", r(rMask), imm(0xffff)))
		g.Add(inst("SHF", "L.U32", r(rMask), r(rMask), r(rShift), rz))
	}
	g.Add(inst("MOV", "", r(rW), rz))
	g.Add(inst("MOV", "", r(rGot), rz))
	g.Add(inst("MOV", "", r(rDef), imm(int64(ft.defNaN))))
	// P3: the lane is live (not dropped).
	g.Add(inst("ISETP", "EQ.U32.AND", p(sass.P3), pt, rz, rz, np(sass.P1)))
	g.Add(inst("LDG", "E.STRONG.GPU", r(rW), sass.G64(12, 0)).When(sass.If(sass.P3)).WriteSB(sass.SB2))
	// v as binary32 (R17), v quieted (R18), P4: v is a NaN.
	toF32 := func(d, s sass.Reg, wait sass.Control) {
		switch ft.d {
		case tile.F16:
			g.At(inst("HADD2", "F32", r(d), sass.Neg(rz), selOp(s, ".H0_H0")).C(wait))
		case tile.BF16:
			g.At(inst("SHF", "L.U32", r(d), r(s), imm(16), rz).C(wait))
		default:
			g.At(inst("MOV", "", r(d), r(s)).C(wait))
		}
	}
	toF32(rV32, rV, sass.Control{Wait: waits(4), Stall: 1})
	g.Add(inst("LOP3", "LUT", r(rVQ), r(rV), imm(int64(ft.quiet)), rz, imm(0xfc), npt))
	g.Add(inst("LOP3", "LUT", r(rT), r(rV32), imm(0x7fffffff), rz, imm(0xc0), npt))
	g.Add(inst("ISETP", "GT.U32.AND", p(sass.P4), pt, r(rT), imm(0x7f800000), pt))
	g.Add(inst("MOV", "", r(rBallot), rz).Wait(waits(2)))
	loop := len(g.Prog)
	old := sass.Reg(rW)
	if narrow {
		g.Add(inst("SHF", "R.U32.HI", r(rO), rz, r(rShift), r(rW)))
		g.Add(inst("LOP3", "LUT", r(rO), r(rO), imm(0xffff), rz, imm(0xc0), npt))
		old = rO
	}
	toF32(rA32, old, sass.Control{Stall: 1})
	g.Add(inst("FADD", "", r(rS32), r(rA32), r(rV32)))
	switch ft.d {
	case tile.F16:
		g.Add(inst("F2FP", "PACK_AB", r(rS), rz, r(rS32)))
	case tile.BF16:
		g.Add(inst("F2FP", "BF16.PACK_AB", r(rS), rz, r(rS32)))
	default:
		g.Add(inst("MOV", "", r(rS), r(rS32)))
	}
	// NaNs: the sum's NaN is the default one, then the operands' quieted
	// NaNs, the winner of two last.
	g.Add(inst("LOP3", "LUT", r(rT), r(rS32), imm(0x7fffffff), rz, imm(0xc0), npt))
	g.Add(inst("ISETP", "GT.U32.AND", p(sass.P5), pt, r(rT), imm(0x7f800000), pt))
	g.Add(inst("SEL", "", r(rS), r(rDef), r(rS), p(sass.P5)))
	g.Add(inst("LOP3", "LUT", r(rT), r(rA32), imm(0x7fffffff), rz, imm(0xc0), npt))
	g.Add(inst("ISETP", "GT.U32.AND", p(sass.P5), pt, r(rT), imm(0x7f800000), pt))
	g.Add(inst("LOP3", "LUT", r(rT), r(old), imm(int64(ft.quiet)), rz, imm(0xfc), npt))
	held := func() { g.At(inst("SEL", "", r(rS), r(rT), r(rS), p(sass.P5)).Stall(1)) }
	arriving := func() { g.At(inst("SEL", "", r(rS), r(rVQ), r(rS), p(sass.P4)).Stall(1)) }
	if ft.heldWins {
		arriving()
		held()
	} else {
		held()
		arriving()
	}
	if narrow { // the new word: the neighbour's bytes, this element's
		g.Add(inst("SHF", "L.U32", r(rS), r(rS), r(rShift), rz))
		g.Add(inst("LOP3", "LUT", r(rS), r(rW), r(rMask), r(rS), imm(0xba), npt))
	}
	g.Add(inst("ATOMG", "E.CAS.STRONG.GPU", pt, r(rGot), maOperand(12), r(rW), r(rS)).When(sass.If(sass.P3)).WriteSB(sass.SB5))
	g.Add(inst("ISETP", "NE.U32.AND", p(sass.P3), pt, r(rGot), r(rW), p(sass.P3)).Wait(waits(5)))
	g.Add(inst("MOV", "", r(rW), r(rGot)).When(sass.If(sass.P3)))
	g.Add(inst("VOTE", "ANY", r(rBallot), pt, p(sass.P3)))
	g.Add(inst("ISETP", "NE.U32.AND", p(sass.P0), pt, r(rBallot), rz, pt))
	g.Add(inst("BRA", "", sass.Target(int64(16*(loop-len(g.Prog)-1)))).When(sass.If(sass.P0)))
	g.At(inst("EXIT", "").Yield().Stall(5))
	g.Prog = settle(g.Prog)
	return g.end()
}
