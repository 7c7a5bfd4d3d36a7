package gen

import (
	"fmt"

	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/tile"
)

// Parameter offsets of the quantisation kernels (from cubin.ParamBase).
const (
	qDst   = 0x0
	qSrc   = 0x8
	qN     = 0x10
	qScale = 0x14
)

// quantParams is the quantisation kernels' parameter list.
var quantParams = []cubin.Param{{Size: 8, Align: 8}, {Size: 8, Align: 8}, {Size: 4, Align: 4}, {Size: 4, Align: 4}}

// f8Format holds the constants of a float8 format the integer encoder
// needs.
type f8Format struct {
	mant, bias int
	maxCode    int64
}

func formatOf(d tile.DType) (f8Format, error) {
	switch d {
	case tile.E4M3:
		return f8Format{mant: 3, bias: 7, maxCode: 0x7e}, nil
	case tile.E5M2:
		return f8Format{mant: 2, bias: 15, maxCode: 0x7b}, nil
	}
	return f8Format{}, fmt.Errorf("sm86: quantize: %v is not a float8 format", d)
}

// Registers of the quantisation kernels.
const (
	rTid, rCta, rRem = 0, 3, 2
	rX               = 4     // R4..R7: the group's four values
	rSrc, rDst       = 8, 10 // address pairs
	rK800000         = 48    // the implicit mantissa bit, for the integer encoder
	rLo, rHi, rOut   = 50, 51, 52
	rB1, rB2         = 53, 54 // bytes 1 and 2 of rOut, for the tail stores
	rSg              = 56     // R56, R57: the x_j's top bytes (their signs)
	rEnc             = 12     // first of the integer encoder's 4×8 registers
)

// The integer encoder gives element j encStride registers from
// rEnc+encStride·j; its code ends in the one at encT.
const encStride, encT = 8, 3

// encResult is the register holding element j's code after encodeInt.
func encResult(j int) sass.Operand { return r(sass.Reg(rEnc + encStride*j + encT)) }

// Quantize returns the float8 quantisation kernel for sm_<arch> (86 or 89)
// and format d (tile.E4M3 or tile.E5M2). The sm_89 kernel converts with
// F2FP.SATFINITE; the sm_86 one with integer code.
//
// Schedule: S2R results on SB0/SB1; the group's loads on SB2 (the full
// group's LDG.E.128, then — after a wait on SB2, so the two never write R4
// at once — the tail's first element), SB3 and SB4 (the tail's second and
// third); every other result is fixed-latency and covered by stalls from
// sched.DefaultLatencies (ALU→ALU 4, ALU↔FMA 5, a predicate tested by a
// guard 13). The integer encoder runs the four elements' 21-step chains
// interleaved, one instruction a cycle, so each step reads results four
// cycles old.
func Quantize(arch int, d tile.DType) (sass.Program, error) {
	return quantizeKernel(arch, d, false, true)
}

// quantizeElemKernel is quantizeKernel with blocks, each element taking
// its own multiplier (mul[(r / br)·sc + c / bc] for element e at (r, c) =
// (e / cols, e % cols)): any Cols, blocks of any width (one column, per
// column). Element j of the group loads its multiplier only when it
// exists (4q + j < n).
func quantizeElemKernel(arch int, d tile.DType, sat bool) (sass.Program, error) {
	return quantizeKernelOf(arch, d, true, true, sat)
}

// quantizeKernel is Quantize; with blocks, each group of four takes its
// scale from mul[(r / br)·sc + c / bc] (element 4q at (r, c) of a row-major
// matrix whose rows hold a multiple of 4 elements, blocks a multiple of 4
// wide) instead of the scale parameter, and a NaN scale gives the
// positive NaN code unless x is a NaN (fallback.QuantizeRef's x·NaN keeps
// x's NaN, and only that one's sign). Without sat (tile.NonSaturating)
// the integer encoder runs on either architecture (sm_89's F2FP converts
// with SATFINITE only), its clamp one code above the largest finite: the
// format's overflow code (E4M3 NaN, E5M2 Inf).
func quantizeKernel(arch int, d tile.DType, blocks, sat bool) (sass.Program, error) {
	return quantizeKernelOf(arch, d, blocks, false, sat)
}

func quantizeKernelOf(arch int, d tile.DType, blocks, elem, sat bool) (sass.Program, error) {
	f, err := formatOf(d)
	if err != nil {
		return nil, err
	}
	if !sat {
		f.maxCode++
	}
	if arch != 86 && arch != 89 {
		return nil, fmt.Errorf("sm86: quantize: no kernel for sm_%d", arch)
	}
	var g prog
	g.Add(inst("S2R", "", r(rTid), sass.SR(sass.SRTidX)).WriteSB(sass.SB0))
	g.Add(inst("S2R", "", r(rCta), sass.SR(sass.SRCtaidX)).WriteSB(sass.SB1))
	g.Add(inst("ULDC", "64", sass.UR(4), c0(0x118)))
	g.Add(inst("MOV", "", r(rSrc+1), imm(16)))
	g.Add(inst("MOV", "", r(rDst+1), imm(4)))
	g.Add(inst("MOV", "", r(rX+1), rz))
	g.Add(inst("CS2R", "", r(rX+2), sass.SR(sass.SRZero)))
	intEnc := arch == 86 || !sat
	if intEnc {
		g.Add(inst("MOV", "", r(rK800000), imm(0x800000)))
	}
	// group q = ctaid·256 + tid; rem = n − 4q elements from it on.
	g.At(inst("LEA", "", r(rTid), r(rCta), r(rTid), imm(8)).Wait(waits(0, 1)).Stall(4))
	g.Add(inst("SHF", "L.U32", r(rRem), r(rTid), imm(2), rz))
	switch {
	case elem:
		g.Prog[len(g.Prog)-1].Ctrl.Stall = 5 // the SHF that computed e
		// the multipliers of missing elements (not loaded) are 0
		g.Add(inst("CS2R", "", r(rElemMul), sass.SR(sass.SRZero)))
		g.Add(inst("CS2R", "", r(rElemMul+2), sass.SR(sass.SRZero)))
		for j := range 4 {
			g.At(inst("IADD3", "", r(rElemE), r(rRem), imm(int64(j)), rz).Stall(5))
			blockScaleAddrOf(&g, rElemE, sass.Reg(rElemA+2*j))
		}
	case blocks:
		blockScaleAddr(&g)
	}
	g.Add(inst("IMAD", "WIDE.U32", r(rSrc), r(rTid), r(rSrc+1), param(qSrc)))
	g.At(inst("IMAD", "WIDE.U32", r(rDst), r(rTid), r(rDst+1), param(qDst)).Stall(2))
	g.At(inst("IADD3", "", r(rRem), sass.Neg(r(rRem)), param(qN), rz).Stall(4))
	// P0: a full group; P3: nothing left (exit); P1, P2: a tail of at
	// least two, three elements.
	g.Add(inst("ISETP", "GE.AND", p(sass.P0), pt, r(rRem), imm(4), pt))
	g.At(inst("ISETP", "LT.AND", p(sass.P3), pt, r(rRem), imm(1), pt).Stall(3))
	if elem { // element j exists when rem > j: P5 (rem ≥ 2), P6 (rem ≥ 3), P0 (rem ≥ 4)
		g.Add(inst("ISETP", "GE.AND", p(sass.P5), pt, r(rRem), imm(2), pt))
		g.Add(inst("ISETP", "GE.AND", p(sass.P6), pt, r(rRem), imm(3), pt))
	}
	g.Add(inst("ISETP", "GE.AND", p(sass.P1), pt, r(rRem), imm(2), np(sass.P0)))
	g.At(inst("ISETP", "GE.AND", p(sass.P2), pt, r(rRem), imm(3), np(sass.P0)).Stall(9))
	g.At(inst("EXIT", "").When(sass.If(sass.P3)).Stall(5))
	g.Add(inst("LDG", "E.128", r(rX), sass.G64(rSrc, 0)).When(sass.If(sass.P0)).WriteSB(sass.SB2))
	g.Add(inst("LDG", "E", r(rX), sass.G64(rSrc, 0)).When(sass.IfNot(sass.P0)).Wait(waits(2)).WriteSB(sass.SB2))
	g.Add(inst("LDG", "E", r(rX+1), sass.G64(rSrc, 4)).When(sass.If(sass.P1)).WriteSB(sass.SB3))
	g.Add(inst("LDG", "E", r(rX+2), sass.G64(rSrc, 8)).When(sass.If(sass.P2)).WriteSB(sass.SB4))
	scale := func(int) sass.Operand { return param(qScale) }
	prmtWait := sass.Control{Wait: waits(2, 3, 4), Stall: 1}
	switch {
	case elem:
		scale, prmtWait = func(j int) sass.Operand { return r(sass.Reg(rElemMul + j)) }, sass.Control{Stall: 1}
		g.Add(inst("LDG", "E", r(rElemMul), sass.G64(rElemA, 0)).WriteSB(sass.SB5))
		g.Add(inst("LDG", "E", r(rElemMul+1), sass.G64(rElemA+2, 0)).When(sass.If(sass.P5)).WriteSB(sass.SB5))
		g.Add(inst("LDG", "E", r(rElemMul+2), sass.G64(rElemA+4, 0)).When(sass.If(sass.P6)).WriteSB(sass.SB5))
		g.Add(inst("LDG", "E", r(rElemMul+3), sass.G64(rElemA+6, 0)).When(sass.If(sass.P0)).WriteSB(sass.SB5))
		// a NaN multiplier: clear the sign of x_j unless x_j is a NaN.
		for j := range 4 {
			ctl := sass.Control{Stall: 4}
			if j == 0 {
				ctl = sass.Control{Wait: waits(2, 3, 4, 5), Stall: 4}
			}
			g.At(inst("ISETP", "GT.U32.AND", p(sass.P4), pt, r(sass.Reg(rElemMul+j)), imm(0x7f800000), pt).C(ctl))
			g.At(inst("LOP3", "LUT", r(rAbs), r(sass.Reg(rX+j)), imm(0x7fffffff), rz, imm(0xc0), npt).Stall(4))
			g.At(inst("ISETP", "LE.U32.AND", p(sass.P5), pt, r(rAbs), imm(0x7f800000), p(sass.P4)).Stall(5))
			g.At(inst("SEL", "", r(sass.Reg(rX+j)), r(rAbs), r(sass.Reg(rX+j)), p(sass.P5)).Stall(5))
		}
	case blocks:
		scale, prmtWait = func(int) sass.Operand { return r(rMul) }, sass.Control{Stall: 1}
		g.Add(inst("LDG", "E", r(rMul), sass.G64(rMulA, 0)).WriteSB(sass.SB5))
		// a NaN scale: clear the sign of every x that is not a NaN.
		g.At(inst("ISETP", "GT.U32.AND", p(sass.P4), pt, r(rMul), imm(0x7f800000), pt).Wait(waits(5)).Stall(4))
		for j := range 4 {
			ctl := sass.Control{Stall: 4}
			if j == 0 {
				ctl = sass.Control{Wait: waits(2, 3, 4), Stall: 4}
			}
			g.At(inst("LOP3", "LUT", r(rAbs), r(sass.Reg(rX+j)), imm(0x7fffffff), rz, imm(0xc0), npt).C(ctl))
			g.At(inst("ISETP", "LE.U32.AND", p(sass.P5), pt, r(rAbs), imm(0x7f800000), p(sass.P4)).Stall(5))
			g.At(inst("SEL", "", r(sass.Reg(rX+j)), r(rAbs), r(sass.Reg(rX+j)), p(sass.P5)).Stall(5))
		}
	}
	// The result's sign is x's (the scale is positive): the FMUL turns a
	// NaN into the canonical +NaN, the reference keeps x's sign. sg gathers
	// the x_j's top bytes (byte j from x_j), read before the FMULs
	// overwrite them.
	g.At(inst("PRMT", "", r(rSg), r(rX), imm(0x73), r(rX+1)).C(prmtWait))
	g.Add(inst("PRMT", "", r(rSg+1), r(rX+2), imm(0x73), r(rX+3)))
	// y = f32(x·scale), round to nearest even, subnormals kept.
	g.Add(inst("FMUL", "", r(rX), r(rX), scale(0)))
	g.Add(inst("FMUL", "", r(rX+1), r(rX+1), scale(1)))
	g.Add(inst("FMUL", "", r(rX+2), r(rX+2), scale(2)))
	g.Add(inst("PRMT", "", r(rSg), r(rSg), imm(0x5410), r(rSg+1)))
	if !intEnc {
		g.At(inst("FMUL", "", r(rX+3), r(rX+3), scale(3)).Stall(5))
		fm := "SATFINITE.E4M3.F32.PACK_AB_MERGE_C"
		if d == tile.E5M2 {
			fm = "SATFINITE.E5M2.F32.PACK_AB_MERGE_C"
		}
		// bytes 2, 3 first, then bytes 0, 1 with them merged in from the
		// low half: x3 x2 x1 x0 from the high byte down.
		g.At(inst("F2FP", fm, r(rHi), r(rX+3), r(rX+2), rz).Stall(4))
		g.At(inst("F2FP", fm, r(rLo), r(rX+1), r(rX), r(rHi)).Stall(5))
	} else {
		g.At(inst("FMUL", "", r(rX+3), r(rX+3), scale(3)).Stall(2))
		encodeInt(&g, f)
		g.At(inst("PRMT", "", r(rLo), encResult(0), imm(0x40), encResult(1)).Stall(2))
		g.At(inst("PRMT", "", r(rHi), encResult(2), imm(0x40), encResult(3)).Stall(4))
		g.At(inst("PRMT", "", r(rLo), r(rLo), imm(0x5410), r(rHi)).Stall(4))
	}
	// out = codes | (sg & 0x80808080)
	g.At(inst("LOP3", "LUT", r(rOut), r(rSg), imm(0x80808080), r(rLo), imm(0xea), npt).Stall(5))
	g.Add(inst("STG", "E", sass.G64(rDst, 0), r(rOut)).When(sass.If(sass.P0)))
	g.Add(inst("STG", "E.U8", sass.G64(rDst, 0), r(rOut)).When(sass.IfNot(sass.P0)))
	g.Add(inst("SHF", "R.U32.HI", r(rB1), rz, imm(8), r(rOut)))
	g.At(inst("SHF", "R.U32.HI", r(rB2), rz, imm(16), r(rOut)).Stall(5))
	g.Add(inst("STG", "E.U8", sass.G64(rDst, 1), r(rB1)).When(sass.If(sass.P1)))
	g.Add(inst("STG", "E.U8", sass.G64(rDst, 2), r(rB2)).When(sass.If(sass.P2)))
	g.At(inst("EXIT", "").Yield().Stall(5))
	return g.end(), nil
}

// encodeInt appends the integer float8 encoder for the four binary32
// values in R4..R7; element j's code (bits 0..6, the rest zero) ends in
// encResult(j). For one element, with y its bits, a = |y|, e = a>>23,
// S = 23 − mantissa bits:
//
//	normal  (a ≥ the smallest normal): code = min((a + K + (a>>S & 1)) >> S, max)
//	        with K = 2^(S−1) − 1 − (127−bias)<<23 (rebias and half-minus-one)
//	subnormal: m = mantissa | 2^23, s = 32 − ns, ns = max(e − (119−bias−mant), 1):
//	        code = (m + (2^31−1)>>ns + (m>>s & 1)) >> s  (a right shift by s with
//	        round to nearest even; ns ≥ 1 keeps s ≤ 31, which rounds every
//	        value below the smallest subnormal's half to zero)
//	NaN: code |= 0x7f (d = (0x7f800000 − a) >> 31 arithmetic is all ones)
//	(the sign is added by the caller, from x)
//
// Infinity and finite overflow meet the min with the largest finite code
// (saturation); zero and binary32 subnormals fall in the subnormal branch
// with ns = 1 and round to zero.
func encodeInt(g *prog, f f8Format) {
	S := int64(23 - f.mant)
	K := int64(int32(uint32(1)<<(S-1) - 1 - uint32(127-f.bias)<<23))
	minNormal := int64(128-f.bias) << 23
	nsBias := int64(119 - f.bias - f.mant)
	// Element j's registers: a, m, e (then ns), t (then the normal
	// code, then the result), d, s, h, q.
	const (
		a, m, e, t, d, s, h, q = 0, 1, 2, encT, 4, 5, 6, 7
	)
	reg := func(j, k int) sass.Operand { return r(sass.Reg(rEnc + encStride*j + k)) }
	y := func(j int) sass.Operand { return r(sass.Reg(rX + j)) }
	pn := func(j int) sass.Pred { return sass.P3 + sass.Pred(j) }
	steps := []func(j int) sass.Inst{
		func(j int) sass.Inst {
			return inst("LOP3", "LUT", reg(j, a), y(j), imm(0x7fffffff), rz, imm(0xc0), npt)
		},
		func(j int) sass.Inst {
			return inst("LOP3", "LUT", reg(j, m), y(j), imm(0x7fffff), r(rK800000), imm(0xea), npt)
		},
		func(j int) sass.Inst { return inst("SHF", "R.U32.HI", reg(j, e), rz, imm(23), reg(j, a)) },
		func(j int) sass.Inst { return inst("SHF", "R.U32.HI", reg(j, t), rz, imm(S), reg(j, a)) },
		func(j int) sass.Inst { return inst("IADD3", "", reg(j, d), sass.Neg(reg(j, a)), imm(0x7f800000), rz) },
		func(j int) sass.Inst {
			return inst("ISETP", "GE.U32.AND", p(pn(j)), pt, reg(j, a), imm(minNormal), pt)
		},
		func(j int) sass.Inst { return inst("LOP3", "LUT", reg(j, t), reg(j, t), imm(1), rz, imm(0xc0), npt) },
		func(j int) sass.Inst { return inst("IADD3", "", reg(j, e), reg(j, e), imm(-nsBias), rz) },
		func(j int) sass.Inst { return inst("SHF", "R.S32.HI", reg(j, d), rz, imm(31), reg(j, d)) },
		func(j int) sass.Inst { return inst("IADD3", "", reg(j, t), reg(j, a), imm(K), reg(j, t)) },
		func(j int) sass.Inst { return inst("IMNMX", "", reg(j, e), reg(j, e), imm(1), npt) },
		func(j int) sass.Inst { return inst("SHF", "R.U32.HI", reg(j, t), rz, imm(S), reg(j, t)) },
		func(j int) sass.Inst { return inst("IADD3", "", reg(j, s), sass.Neg(reg(j, e)), imm(32), rz) },
		func(j int) sass.Inst { return inst("SHF", "R.U32.HI", reg(j, h), rz, reg(j, e), imm(0x7fffffff)) },
		func(j int) sass.Inst { return inst("IMNMX", "U32", reg(j, t), reg(j, t), imm(f.maxCode), pt) },
		func(j int) sass.Inst { return inst("SHF", "R.U32.HI", reg(j, q), rz, reg(j, s), reg(j, m)) },
		func(j int) sass.Inst { return inst("LOP3", "LUT", reg(j, q), reg(j, q), imm(1), rz, imm(0xc0), npt) },
		func(j int) sass.Inst { return inst("IADD3", "", reg(j, q), reg(j, m), reg(j, h), reg(j, q)) },
		func(j int) sass.Inst { return inst("SHF", "R.U32.HI", reg(j, q), rz, reg(j, s), reg(j, q)) },
		func(j int) sass.Inst { return inst("SEL", "", reg(j, t), reg(j, t), reg(j, q), p(pn(j))) },
		func(j int) sass.Inst {
			return inst("LOP3", "LUT", reg(j, t), reg(j, d), imm(0x7f), reg(j, t), imm(0xea), npt)
		},
	}
	for _, st := range steps {
		for j := range 4 {
			g.Add(st(j))
		}
	}
	// the packing PRMTs read the last step's results four cycles on.
	g.Prog[len(g.Prog)-1].Ctrl.Stall = 2
}
