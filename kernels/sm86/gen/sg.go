package gen

import (
	"fmt"

	"github.com/tcrt-go/tcrt/kernels/sm86"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/sass/sched"
)

// The scatter-gather family on hand-scheduled SASS. Every op is a launch
// sequence over device memory (see sm86.PlanGather and sm86.PlanScatter):
//
//  1. resolve (tcrt_sass_sg_resolve_<s32|u32|s64|u64>): one thread per index
//     lane reads the lane's index, applies the out-of-bounds policy
//     (tile.ResolveIndex's rules, 64-bit wrap by a Barrett reduction) and
//     writes the position (u32; SGDropped for a lane that OOBZero gathers as
//     zeros or OOBSkip drops) to a scratch array. Under OOBError an
//     out-of-bounds lane records ~lane with a 64-bit atomic max on the fault
//     slot (zero before the sequence), so the slot ends holding the
//     complement of the first faulting lane.
//  2. the effect: gather (tcrt_sass_sg_gather_<bytes>) or scatter
//     (tcrt_sass_sg_<op>_<type>), one thread per valid element, reading
//     the positions. Every thread reads the slot's high word first and
//     exits when it is non-zero: a fault changes neither memory nor the
//     destination.
//  3. gather only, when the destination has a pad: tcrt_sass_sg_pad_<bytes>
//     writes the pad pattern into every non-valid physical element (also
//     skipped after a fault).
//
// Every kernel maps thread l = ctaid.x·256 + tid.x to (r, c) = (l / cols,
// l % cols) with sm86.DivMagic; element (r, c) of a tile is at r·sr + c·sc
// bytes, so both layouts and any valid region inside a larger physical
// one are strides.

// SGDropped is the position the resolve kernel writes for a lane outside
// the memory whose policy does not move it (OOBError, OOBZero, OOBSkip).
const SGDropped = 0xffffffff

// sgParamsOf is n parameters: p pointers, then u32s.
func sgParamsOf(ptrs, words int) []cubin.Param {
	var ps []cubin.Param
	for range ptrs {
		ps = append(ps, cubin.Param{Size: 8, Align: 8})
	}
	for range words {
		ps = append(ps, cubin.Param{Size: 4, Align: 4})
	}
	return ps
}

// Parameter offsets shared by every scatter-gather kernel: the fault slot,
// then (after the kernel's other pointers) the lane count and the
// division by cols.
const (
	sgSlot = 0x00
)

// lanesAt are the offsets of the lane words (lanes, cols, magic, shift,
// -cols) for a kernel whose u32 parameters start at base.
type lanesAt struct{ lanes, magic, shift, negCols int64 }

func lanesFrom(base int64) lanesAt {
	return lanesAt{lanes: base, magic: base + 8, shift: base + 12, negCols: base + 16}
}

// Resolve kernel parameters: slot, pos, idx; lanes, cols, magic, shift,
// -cols, isr, isc, n, -n, n-1, policy, wrapAdd, mlo, mhi.
const (
	rvPos     = 0x08
	rvIdx     = 0x10
	rvISR     = 0x2c
	rvISC     = 0x30
	rvN       = 0x34
	rvNegN    = 0x38
	rvNm1     = 0x3c
	rvPolicy  = 0x40
	rvWrapAdd = 0x44
	rvMLo     = 0x48
	rvMHi     = 0x4c
)

var resolveParams = sgParamsOf(3, 14)

// Gather and scatter parameters: slot, pos, out (dst / mem), in (mem /
// src); lanes, cols, magic, shift, -cols, pr, pc, mr, mc, osr/isr, osc/isc.
// Gather: dst(r,c) at out + r·sr + c·sc gets in[pos[r·pr + c·pc]·mr +
// c·mc]. Scatter: out[pos·mr + c·mc] op= in + r·sr + c·sc.
const (
	efPos = 0x08
	efOut = 0x10
	efIn  = 0x18
	efPR  = 0x34
	efPC  = 0x38
	efMR  = 0x3c
	efMC  = 0x40
	efSR  = 0x44
	efSC  = 0x48
)

var effectParams = sgParamsOf(4, 11)

// Pad parameters: slot, dst; lanes, cols, magic, shift, -cols, vrows,
// vcols, dsr, dsc, pad low, pad high.
const (
	pdDst   = 0x08
	pdVRows = 0x24
	pdVCols = 0x28
	pdSR    = 0x2c
	pdSC    = 0x30
	pdLo    = 0x34
	pdHi    = 0x38
)

var padParams = sgParamsOf(2, 11)

// Registers of the common prologue.
const (
	rgL, rgC, rgR, rgCta = 0, 1, 2, 3
	rgSlotHi             = 5 // the fault slot's high word (effect kernels)
)

// sgProlog emits l, r, c (R0, R2, R1) and exits threads l ≥ lanes. With
// fault set it also loads the slot's high word into R5 on SB3.
func sgProlog(g *prog, la lanesAt, fault bool) {
	g.Add(inst("S2R", "", r(rgL), sass.SR(sass.SRTidX)).WriteSB(sass.SB0))
	g.Add(inst("S2R", "", r(rgCta), sass.SR(sass.SRCtaidX)).WriteSB(sass.SB1))
	g.Add(inst("ULDC", "64", sass.UR(4), c0(0x118)))
	if fault {
		g.Add(inst("MOV", "", r(4), param(sgSlot)))
		g.Add(inst("MOV", "", r(5), param(sgSlot+4)))
		g.Add(inst("LDG", "E", r(rgSlotHi), sass.G64(4, 4)).WriteSB(sass.SB3))
	}
	g.Add(inst("LEA", "", r(rgL), r(rgCta), r(rgL), imm(8)).Wait(waits(0, 1)))
	g.Add(inst("ISETP", "GE.U32.AND", p(sass.P0), pt, r(rgL), param(la.lanes), pt))
	g.Add(inst("IMAD", "HI.U32", r(rgR), r(rgL), param(la.magic), rz))
	g.Add(inst("IADD3", "", r(rgR), r(rgR), r(rgL), rz))
	g.Add(inst("SHF", "R.U32.HI", r(rgR), rz, param(la.shift), r(rgR)))
	g.Add(inst("IMAD", "", r(rgC), r(rgR), param(la.negCols), r(rgL)))
	g.Add(inst("EXIT", "").When(sass.If(sass.P0)))
}

// faultExit waits for the slot's high word (SB3) and exits when a fault
// was recorded.
func faultExit(g *prog) {
	g.Add(inst("ISETP", "NE.U32.AND", p(sass.P2), pt, r(rgSlotHi), rz, pt).Wait(waits(3)))
	g.Add(inst("EXIT", "").When(sass.If(sass.P2)))
}

// settle sets every stall count to the fewest cycles that meet the
// fixed-latency needs (sched.DefaultLatencies) of the instructions after it,
// never less than the one given. Variable-latency results are waited for
// with the scoreboards the generator chose.
func settle(p sass.Program) sass.Program {
	lat := sched.DefaultLatencies()
	type prod struct {
		at    int
		class sass.Class
	}
	last := map[sass.Loc]prod{}
	issue := make([]int, len(p))
	for k := range p {
		d, err := sass.DepsOf(p[k])
		if err != nil {
			panic(fmt.Sprintf("sm86: %s: %v", p[k], err))
		}
		t := 0
		if k > 0 {
			t = issue[k-1] + max(1, int(p[k-1].Ctrl.Stall))
		}
		need := func(l sass.Loc, to sass.Class) {
			if w, ok := last[l]; ok {
				t = max(t, w.at+lat.Need(w.class, to))
			}
		}
		for _, l := range d.Reads {
			need(l, d.Class)
		}
		if d.HasGuard {
			need(d.Guard, sass.ClassGuard)
		}
		issue[k] = t
		if k > 0 {
			s := t - issue[k-1]
			if s > 15 {
				panic(fmt.Sprintf("sm86: instruction %d needs a stall of %d", k, s))
			}
			p[k-1].Ctrl.Stall = uint8(s)
			if s > 11 { // longer stalls need the yield bit
				p[k-1].Ctrl.Yield = true
			}
		}
		for _, l := range d.Writes {
			if d.Class.Variable() {
				delete(last, l)
			} else {
				last[l] = prod{t, d.Class}
			}
		}
	}
	return p
}

// resolveKernel is the preflight and policy resolution for one index type
// (4 or 8 bytes; signed).
func resolveKernel(width int, signed bool) sass.Program {
	var g prog
	sgProlog(&g, lanesFrom(0x18), false)
	const one, four = 10, 4
	g.Add(inst("MOV", "", r(one), imm(1)))
	g.Add(inst("IMAD", "", r(6), r(rgR), param(rvISR), rz))
	g.Add(inst("IMAD", "", r(6), r(rgC), param(rvISC), r(6)))
	g.Add(inst("IMAD", "WIDE.U32", r(6), r(6), r(one), param(rvIdx)))
	if width == 8 {
		g.Add(inst("LDG", "E.64", r(8), sass.G64(6, 0)).WriteSB(sass.SB2))
	} else {
		g.Add(inst("LDG", "E", r(8), sass.G64(6, 0)).WriteSB(sass.SB2))
	}
	// pos address and the fault record's operands, under the load.
	g.Add(inst("MOV", "", r(four), imm(4)))
	g.Add(inst("IMAD", "WIDE.U32", r(24), r(rgL), r(four), param(rvPos)))
	g.Add(inst("LOP3", "LUT", r(26), rz, r(rgL), rz, imm(0x33), npt))
	g.Add(inst("MOV", "", r(27), imm(0xffffffff)))
	g.Add(inst("MOV", "", r(28), param(sgSlot)))
	g.Add(inst("MOV", "", r(29), param(sgSlot+4)))
	g.Add(inst("MOV", "", r(21), param(rvPolicy)))
	g.Add(inst("MOV", "", r(22), imm(0xffffffff)))
	g.Add(inst("ISETP", "EQ.U32.AND", p(sass.P5), pt, r(21), imm(1), pt))
	g.Add(inst("ISETP", "EQ.U32.AND", p(sass.P6), pt, r(21), imm(2), pt))
	// the raw index as 64 bits in R8:R9.
	switch {
	case width == 8:
	case signed:
		g.Add(inst("SHF", "R.S32.HI", r(9), rz, imm(31), r(8)).Wait(waits(2)))
	default:
		g.Add(inst("MOV", "", r(9), rz))
	}
	wait := sass.Control{Wait: waits(2), Stall: 1}
	if width == 4 && signed {
		wait = sass.Control{Stall: 1}
	}
	// P1: the index is outside [0, n) (unsigned 64-bit compare; a negative
	// signed index is a huge unsigned one).
	g.At(inst("ISETP", "GE.U32.AND", p(sass.P1), pt, r(8), param(rvN), pt).C(wait))
	g.Add(inst("ISETP", "GE.U32.AND.EX", p(sass.P1), pt, r(9), rz, pt, p(sass.P1)))
	// q = ⌊x·m / 2^64⌋ (m = ⌊(2^64−1)/n⌋), low word only; r = x − q·n < 2n.
	g.Add(inst("IMAD", "HI.U32", r(10), r(8), param(rvMLo), rz))
	g.Add(inst("MOV", "", r(11), rz))
	g.Add(inst("IMAD", "WIDE.U32", r(12), r(8), param(rvMHi), r(10)))
	g.Add(inst("MOV", "", r(10), r(12)))
	g.Add(inst("IMAD", "WIDE.U32", r(14), r(9), param(rvMLo), r(10)))
	g.Add(inst("IMAD", "", r(16), r(9), param(rvMHi), r(13)))
	g.Add(inst("IADD3", "", r(16), r(16), r(15), rz))
	g.Add(inst("IMAD", "", r(18), r(16), param(rvNegN), r(8)))
	g.Add(inst("IADD3", "", r(19), r(18), param(rvNegN), rz))
	g.Add(inst("ISETP", "GE.U32.AND", p(sass.P2), pt, r(18), param(rvN), pt))
	g.Add(inst("SEL", "", r(18), r(19), r(18), p(sass.P2)))
	if signed {
		// a negative x: its unsigned value is x + 2^64, so the wrapped
		// position is (r + n − 2^64 mod n) mod n; clamp goes to 0.
		g.Add(inst("ISETP", "LT.AND", p(sass.P3), pt, r(9), rz, pt))
		g.Add(inst("IADD3", "", r(19), r(18), param(rvWrapAdd), rz))
		g.Add(inst("ISETP", "GE.U32.AND", p(sass.P4), pt, r(19), param(rvN), pt))
		g.Add(inst("IADD3", "", r(20), r(19), param(rvNegN), rz))
		g.Add(inst("SEL", "", r(19), r(20), r(19), p(sass.P4)))
		g.Add(inst("SEL", "", r(18), r(19), r(18), p(sass.P3)))
		g.Add(inst("SEL", "", r(20), rz, param(rvNm1), p(sass.P3)))
	} else {
		g.Add(inst("MOV", "", r(20), param(rvNm1)))
	}
	// policy: clamp (1) the clamped position, wrap (2) the remainder, the
	// others SGDropped; an index inside keeps its low word.
	g.Add(inst("SEL", "", r(22), r(20), r(22), p(sass.P5)))
	g.Add(inst("SEL", "", r(22), r(18), r(22), p(sass.P6)))
	g.Add(inst("SEL", "", r(22), r(22), r(8), p(sass.P1)))
	g.Add(inst("ISETP", "EQ.U32.AND", p(sass.P6), pt, r(21), rz, p(sass.P1)))
	g.Add(inst("STG", "E", sass.G64(24, 0), r(22)))
	g.Add(inst("ATOMG", "E.MAX.64.STRONG.GPU", pt, rz, sass.G64(28, 0), r(26)).When(sass.If(sass.P6)))
	g.At(inst("EXIT", "").Yield().Stall(5))
	g.Prog = settle(g.Prog)
	return g.end()
}

// effectPrologue emits what gather and scatter share: lanes, the fault
// slot's load, the position (R8, SB2), the strided tile element's address
// (R10:R11) and P1 = the lane is dropped, R12:R13 the memory element's
// address.
func effectPrologue(g *prog) {
	sgProlog(g, lanesFrom(0x20), true)
	const one, four = 9, 3
	g.Add(inst("MOV", "", r(four), imm(4)))
	g.Add(inst("MOV", "", r(one), imm(1)))
	g.Add(inst("IMAD", "", r(6), r(rgR), param(efPR), rz))
	g.Add(inst("IMAD", "", r(6), r(rgC), param(efPC), r(6)))
	g.Add(inst("IMAD", "WIDE.U32", r(6), r(6), r(four), param(efPos)))
	g.Add(inst("LDG", "E", r(8), sass.G64(6, 0)).WriteSB(sass.SB2))
	g.Add(inst("IMAD", "", r(10), r(rgR), param(efSR), rz))
	g.Add(inst("IMAD", "", r(10), r(rgC), param(efSC), r(10)))
}

// sgTileAddr finishes the tile element's address: R10:R11 = base + R10.
func sgTileAddr(g *prog, base int64) {
	g.Add(inst("IMAD", "WIDE.U32", r(10), r(10), r(9), param(base)))
}

// sgMemAddr waits for the position and computes R12:R13 = in/out +
// pos·mr + c·mc and P1 = dropped.
func sgMemAddr(g *prog, base int64) {
	g.Add(inst("MOV", "", r(12), param(efMR)))
	g.Add(inst("ISETP", "EQ.U32.AND", p(sass.P1), pt, r(8), imm(-1), pt).Wait(waits(2))) // SGDropped
	g.Add(inst("IMAD", "WIDE.U32", r(12), r(8), r(12), param(base)))
	g.Add(inst("IMAD", "WIDE.U32", r(12), r(rgC), param(efMC), r(12)))
}

// sizeMod is the LDG/STG size modifier of an element of b bytes.
var sizeMod = map[int]string{1: "E.U8", 2: "E.U16", 4: "E", 8: "E.64", 16: "E.128"}

// gatherKernel copies one element of b bytes (1, 2, 4, 8, 16) per thread;
// a dropped lane stores zeros.
func gatherKernel(b int) sass.Program {
	var g prog
	effectPrologue(&g)
	sgTileAddr(&g, efOut)
	for k := 0; k < max(1, b/4); k++ {
		g.Add(inst("MOV", "", r(sass.Reg(16+k)), rz))
	}
	sgMemAddr(&g, efIn)
	faultExit(&g)
	g.Add(inst("LDG", sizeMod[b], r(16), sass.G64(12, 0)).When(sass.IfNot(sass.P1)).WriteSB(sass.SB4))
	g.Add(inst("STG", sizeMod[b], sass.G64(10, 0), r(16)).Wait(waits(4)))
	g.At(inst("EXIT", "").Yield().Stall(5))
	g.Prog = settle(g.Prog)
	return g.end()
}

// ScatterKind names one scatter kernel: an update and the element type it
// applies to.
type ScatterKind struct {
	Name  string // the kernel's name suffix
	Bytes int    // element size
	op    string // STG or RED modifiers
}

// scatterKinds lists the scatter kernels: stores of each width (strong,
// st.relaxed.gpu's STG: lanes storing to one element race, and only
// morally strong accesses are single-copy atomic in the PTX memory model,
// so an element ends holding one lane's value, never a torn mix) and
// the updates one RED instruction does exactly as the CPU does (integer
// add, max and min), and f64 add (ATOMG.ADD.F64.RN with the result
// discarded: it rounds to nearest without flushing, as Go does; RED has
// the f64 form too, but the model has no golden word for it yet).
var scatterKinds = []ScatterKind{
	{"store8", 1, "STG E.U8.STRONG.GPU"},
	{"store16", 2, "STG E.U16.STRONG.GPU"},
	{"store32", 4, "STG E.STRONG.GPU"},
	{"store64", 8, "STG E.64.STRONG.GPU"},
	{"add_i32", 4, "RED E.ADD.STRONG.GPU"},
	{"max_s32", 4, "RED E.MAX.S32.STRONG.GPU"},
	{"min_s32", 4, "RED E.MIN.S32.STRONG.GPU"},
	{"max_u32", 4, "RED E.MAX.STRONG.GPU"},
	{"min_u32", 4, "RED E.MIN.STRONG.GPU"},
	{"add_f64", 8, "ATOMG E.ADD.F64.RN.STRONG.GPU"},
}

// scatterKernel applies one update per thread; a dropped lane does nothing.
func scatterKernel(k ScatterKind) sass.Program {
	var g prog
	effectPrologue(&g)
	sgTileAddr(&g, efIn)
	g.Add(inst("LDG", sizeMod[k.Bytes], r(16), sass.G64(10, 0)).WriteSB(sass.SB4))
	sgMemAddr(&g, efOut)
	faultExit(&g)
	var op sass.Op
	var mods string
	fmt.Sscan(k.op, &op, &mods)
	args := []sass.Operand{sass.G64(12, 0), r(16)}
	if op == "ATOMG" { // the f64 add: the form with a (discarded) result
		args = append([]sass.Operand{pt, rz}, args...)
	}
	g.Add(inst(op, mods, args...).When(sass.IfNot(sass.P1)).Wait(waits(4)))
	g.At(inst("EXIT", "").Yield().Stall(5))
	g.Prog = settle(g.Prog)
	return g.end()
}

// padKernel writes the pad pattern (b bytes: 1, 2, 4, 8) into every
// non-valid physical element.
func padKernel(b int) sass.Program {
	var g prog
	sgProlog(&g, lanesFrom(0x10), true)
	g.Add(inst("MOV", "", r(9), imm(1)))
	g.Add(inst("MOV", "", r(16), param(pdLo)))
	g.Add(inst("MOV", "", r(17), param(pdHi)))
	g.Add(inst("ISETP", "LT.U32.AND", p(sass.P1), pt, r(rgR), param(pdVRows), pt))
	g.Add(inst("ISETP", "LT.U32.AND", p(sass.P1), pt, r(rgC), param(pdVCols), p(sass.P1)))
	g.Add(inst("IMAD", "", r(10), r(rgR), param(pdSR), rz))
	g.Add(inst("IMAD", "", r(10), r(rgC), param(pdSC), r(10)))
	g.Add(inst("IMAD", "WIDE.U32", r(10), r(10), r(9), param(pdDst)))
	faultExit(&g)
	g.Add(inst("STG", sizeMod[b], sass.G64(10, 0), r(16)).When(sass.IfNot(sass.P1)))
	g.At(inst("EXIT", "").Yield().Stall(5))
	g.Prog = settle(g.Prog)
	return g.end()
}

// sgKernel is one kernel of the family with its parameter list.
type sgKernel struct {
	name   string
	prog   func() sass.Program
	params []cubin.Param
}

// Index types of the resolve kernels: name suffix, bytes, signed.
var resolveTypes = []struct {
	name   string
	bytes  int
	signed bool
}{{"s32", 4, true}, {"u32", 4, false}, {"s64", 8, true}, {"u64", 8, false}}

// sgKernels lists the family in the module's order.
var sgKernels = func() []sgKernel {
	var ks []sgKernel
	for _, t := range resolveTypes {
		ks = append(ks, sgKernel{"tcrt_sass_sg_resolve_" + t.name, func() sass.Program { return resolveKernel(t.bytes, t.signed) }, resolveParams})
	}
	for _, b := range []int{1, 2, 4, 8, 16} {
		gen := func() sass.Program { return gatherKernel(b) }
		if sm86.GatherLanesPerThread(b) > 1 {
			gen = func() sass.Program { return gatherSmallKernel(b) }
		}
		ks = append(ks, sgKernel{fmt.Sprintf("tcrt_sass_sg_gather_%d", b), gen, effectParams})
	}
	for _, k := range scatterKinds {
		ks = append(ks, sgKernel{"tcrt_sass_sg_" + k.Name, func() sass.Program { return scatterKernel(k) }, effectParams})
	}
	ks = append(ks, sgKernel{"tcrt_sass_sg_max_f32", func() sass.Program { return scatterF32MinMaxKernel(false) }, effectParams},
		sgKernel{"tcrt_sass_sg_min_f32", func() sass.Program { return scatterF32MinMaxKernel(true) }, effectParams})
	ks = append(ks, sgKernel{"tcrt_sass_sg_claim", claimKernel, claimParams})
	for _, b := range []int{1, 2, 4, 8} {
		ks = append(ks, sgKernel{fmt.Sprintf("tcrt_sass_sg_detstore%d", 8*b), func() sass.Program { return detStoreKernel(b) }, detStoreParams})
	}
	for _, ft := range faddTypes {
		ks = append(ks, sgKernel{"tcrt_sass_sg_add_" + ft.d.String(), func() sass.Program { return faddKernel(ft) }, effectParams})
	}
	for _, b := range []int{1, 2, 4, 8} {
		ks = append(ks, sgKernel{fmt.Sprintf("tcrt_sass_sg_pad_%d", b), func() sass.Program { return padKernel(b) }, padParams})
	}
	for _, t := range resolveTypes {
		ks = append(ks, sgKernel{"tcrt_sass_sg_checkdisp_" + t.name, func() sass.Program { return checkDispKernel(t.bytes, t.signed) }, checkDispParams})
	}
	for _, b := range []int{1, 2, 4, 8} {
		ks = append(ks, sgKernel{fmt.Sprintf("tcrt_sass_sg_cas_%d", b), func() sass.Program { return casKernel(b) }, casParams})
	}
	ks = append(ks, sgKernel{"tcrt_sass_f8_scale", scaleKernel, scaleParams}, sgKernel{"tcrt_sass_f8_given", givenKernel, givenParams})
	return append(append(append(append(ks, amaxKernels...), dequantKernels...), widenKernels...), amaxColKernels...)
}()

// Displacement preflight parameters (gather-CAS): slot, pos (u64 byte
// offsets out), idx; lanes, cols, magic, shift, -cols, isr, isc, base low,
// base high, last low, last high (last = memory bytes − element bytes),
// alignment mask (element bytes − 1).
const (
	cdPos    = 0x08
	cdIdx    = 0x10
	cdISR    = 0x2c
	cdISC    = 0x30
	cdBaseLo = 0x34
	cdBaseHi = 0x38
	cdLastLo = 0x3c
	cdLastHi = 0x40
	cdAlign  = 0x44
)

var checkDispParams = sgParamsOf(3, 12)

// checkDispKernel is the gather-CAS preflight for one index type: lane l's
// element lies at byte x = base + idx (64-bit, the index sign- or
// zero-extended); it faults unless 0 ≤ x ≤ last (an unsigned index also
// must not carry past 2^64) and x is a multiple of the element size
// (tile.ResolveDisplacement's rules). Every lane writes x to pos.
func checkDispKernel(width int, signed bool) sass.Program {
	var g prog
	sgProlog(&g, lanesFrom(0x18), false)
	const one, eight = 10, 4
	g.Add(inst("MOV", "", r(one), imm(1)))
	g.Add(inst("IMAD", "", r(6), r(rgR), param(cdISR), rz))
	g.Add(inst("IMAD", "", r(6), r(rgC), param(cdISC), r(6)))
	g.Add(inst("IMAD", "WIDE.U32", r(6), r(6), r(one), param(cdIdx)))
	if width == 8 {
		g.Add(inst("LDG", "E.64", r(8), sass.G64(6, 0)).WriteSB(sass.SB2))
	} else {
		g.Add(inst("LDG", "E", r(8), sass.G64(6, 0)).WriteSB(sass.SB2))
	}
	g.Add(inst("MOV", "", r(eight), imm(8)))
	g.Add(inst("IMAD", "WIDE.U32", r(24), r(rgL), r(eight), param(cdPos)))
	g.Add(inst("LOP3", "LUT", r(26), rz, r(rgL), rz, imm(0x33), npt))
	g.Add(inst("MOV", "", r(27), imm(0xffffffff)))
	g.Add(inst("MOV", "", r(28), param(sgSlot)))
	g.Add(inst("MOV", "", r(29), param(sgSlot+4)))
	wait := sass.Control{Wait: waits(2), Stall: 1}
	switch {
	case width == 8:
	case signed:
		g.At(inst("SHF", "R.S32.HI", r(9), rz, imm(31), r(8)).C(wait))
		wait = sass.Control{Stall: 1}
	default:
		g.Add(inst("MOV", "", r(9), rz))
	}
	g.At(inst("IADD3", "", r(10), p(sass.P2), r(8), param(cdBaseLo), rz).C(wait))
	g.Add(inst("IADD3", "X", r(11), r(9), param(cdBaseHi), rz, p(sass.P2), npt))
	g.Add(inst("ISETP", "GT.U32.AND", p(sass.P1), pt, r(10), param(cdLastLo), pt))
	if signed {
		g.Add(inst("ISETP", "GT.U32.AND.EX", p(sass.P1), pt, r(11), param(cdLastHi), pt, p(sass.P1)))
	} else {
		// an unsigned displacement that carried out wrapped past 2^64.
		g.Add(inst("ISETP", "GT.U32.OR.EX", p(sass.P1), pt, r(11), param(cdLastHi), p(sass.P2), p(sass.P1)))
	}
	g.Add(inst("LOP3", "LUT", r(12), r(10), param(cdAlign), rz, imm(0xc0), npt))
	g.Add(inst("ISETP", "NE.U32.OR", p(sass.P1), pt, r(12), rz, p(sass.P1)))
	g.Add(inst("STG", "E.64", sass.G64(24, 0), r(10)))
	g.Add(inst("ATOMG", "E.MAX.64.STRONG.GPU", pt, rz, sass.G64(28, 0), r(26)).When(sass.If(sass.P1)))
	g.At(inst("EXIT", "").Yield().Stall(5))
	g.Prog = settle(g.Prog)
	return g.end()
}

// Gather-CAS parameters: slot, pos (the preflight's byte offsets), dst,
// mem, exp, rep; lanes, cols, magic, shift, -cols, dsr, dsc, esr, esc,
// rsr, rsc.
const (
	csPos = 0x08
	csDst = 0x10
	csMem = 0x18
	csExp = 0x20
	csRep = 0x28
	csDSR = 0x44
	csDSC = 0x48
	csESR = 0x4c
	csESC = 0x50
	csRSR = 0x54
	csRSC = 0x58
)

var casParams = sgParamsOf(6, 11)

// maOperand is the address [Ra] of ATOMG.CAS (a 64-bit pair, printed
// without .64).
func maOperand(a sass.Reg) sass.Operand { return sass.Operand{Kind: sass.KMem, N: uint8(a)} }

// casKernel is gather-CAS for elements of b bytes (1, 2, 4, 8): one
// ATOMG.CAS per lane for 4 and 8 bytes; for 1 and 2 bytes a retry loop on
// the containing aligned 32-bit word (compare the lane's bits, swap them in
// keeping the word's other bytes, retry while another lane changed the
// word), the warp branching back while any lane still retries (VOTE.ANY
// ballot, so the branch is uniform and the warp stays converged).
func casKernel(b int) sass.Program {
	var g prog
	sgProlog(&g, lanesFrom(0x30), true)
	const one, eight = 9, 3
	size := sizeMod[b]
	g.Add(inst("MOV", "", r(eight), imm(8)))
	g.Add(inst("MOV", "", r(one), imm(1)))
	g.Add(inst("IMAD", "WIDE.U32", r(6), r(rgL), r(eight), param(csPos)))
	g.Add(inst("LDG", "E.64", r(6), sass.G64(6, 0)).WriteSB(sass.SB2))
	tileAddr := func(d sass.Reg, sr, sc, base int64) {
		g.Add(inst("IMAD", "", r(d), r(rgR), param(sr), rz))
		g.Add(inst("IMAD", "", r(d), r(rgC), param(sc), r(d)))
		g.Add(inst("IMAD", "WIDE.U32", r(d), r(d), r(one), param(base)))
	}
	tileAddr(10, csESR, csESC, csExp)
	g.Add(inst("LDG", size, r(16), sass.G64(10, 0)).WriteSB(sass.SB4))
	tileAddr(12, csRSR, csRSC, csRep)
	g.Add(inst("LDG", size, r(18), sass.G64(12, 0)).WriteSB(sass.SB4))
	tileAddr(14, csDSR, csDSC, csDst)
	g.Add(inst("IADD3", "", r(6), p(sass.P2), r(6), param(csMem), rz).Wait(waits(2)))
	g.Add(inst("IADD3", "X", r(7), r(7), param(csMem+4), rz, p(sass.P2), npt))
	if b >= 4 {
		faultExit(&g)
		mods := "E.CAS.STRONG.GPU"
		if b == 8 {
			mods = "E.CAS.64.STRONG.GPU"
		}
		g.Add(inst("ATOMG", mods, pt, r(20), maOperand(6), r(16), r(18)).Wait(waits(4)).WriteSB(sass.SB5))
		g.Add(inst("STG", size, sass.G64(14, 0), r(20)).Wait(waits(5)))
		g.At(inst("EXIT", "").Yield().Stall(5))
		g.Prog = settle(g.Prog)
		return g.end()
	}
	// R22 the bit shift of the lane's bytes in their word, R23 their mask,
	// R6 the word's address; R16/R18 the expected and replacement bits in
	// place.
	g.Add(inst("LOP3", "LUT", r(22), r(6), imm(3), rz, imm(0xc0), npt))
	g.Add(inst("LOP3", "LUT", r(6), r(6), imm(0xfffffffc), rz, imm(0xc0), npt))
	g.Add(inst("IMAD", "SHL.U32", r(22), r(22), imm(8), rz))
	g.Add(inst("MOV", "", r(23), imm(int64(1)<<(8*b)-1)))
	g.Add(inst("SHF", "L.U32", r(23), r(23), r(22), rz))
	faultExit(&g)
	g.Add(inst("LDG", "E", r(20), sass.G64(6, 0)).WriteSB(sass.SB2))
	g.Add(inst("SHF", "L.U32", r(16), r(16), r(22), rz).Wait(waits(4)))
	g.Add(inst("SHF", "L.U32", r(18), r(18), r(22), rz))
	g.Add(inst("MOV", "", r(26), rz))
	g.Add(inst("MOV", "", r(27), rz))
	g.Add(inst("ISETP", "EQ.U32.AND", p(sass.P3), pt, rz, rz, pt).Wait(waits(2)))
	loop := len(g.Prog)
	// P3: the lane still retries; P6: it swaps this round.
	g.Add(inst("LOP3", "LUT", r(21), r(20), r(23), rz, imm(0xc0), npt))
	g.Add(inst("LOP3", "LUT", r(25), r(20), r(23), r(18), imm(0xba), npt))
	g.Add(inst("ISETP", "EQ.U32.AND", p(sass.P6), pt, r(21), r(16), p(sass.P3)))
	g.Add(inst("MOV", "", r(26), r(21)).When(sass.If(sass.P3)))
	g.Add(inst("ATOMG", "E.CAS.STRONG.GPU", pt, r(27), maOperand(6), r(20), r(25)).When(sass.If(sass.P6)).WriteSB(sass.SB5))
	g.Add(inst("ISETP", "NE.U32.AND", p(sass.P3), pt, r(27), r(20), p(sass.P6)).Wait(waits(5)))
	g.Add(inst("MOV", "", r(20), r(27)).When(sass.If(sass.P6)))
	g.Add(inst("VOTE", "ANY", r(28), pt, p(sass.P3)))
	g.Add(inst("ISETP", "NE.U32.AND", p(sass.P0), pt, r(28), rz, pt))
	g.Add(inst("BRA", "", sass.Target(int64(16*(loop-len(g.Prog)-1)))).When(sass.If(sass.P0)))
	g.Add(inst("SHF", "R.U32.HI", r(26), rz, r(22), r(26)))
	g.Add(inst("STG", size, sass.G64(14, 0), r(26)))
	g.At(inst("EXIT", "").Yield().Stall(5))
	g.Prog = settle(g.Prog)
	return g.end()
}

// scatterF32MinMaxKernel is scatter max (or, with min, min) on f32 with the
// CPU's rules (fallback's refCombine): an arriving NaN is dropped, a held
// NaN stays, −0 orders below +0. Floats compare through the ordered key
// x ^ (x<0 ? 0xffffffff : 0x80000000) (unsigned); each lane loops
// compare-and-swap on its element until it either installs its value or
// finds one it must not replace, the warp branching back while any lane
// retries (VOTE.ANY ballot: a uniform branch, the warp stays converged).
func scatterF32MinMaxKernel(min bool) sass.Program {
	var g prog
	effectPrologue(&g)
	sgTileAddr(&g, efIn)
	g.Add(inst("LDG", "E", r(16), sass.G64(10, 0)).WriteSB(sass.SB4))
	sgMemAddr(&g, efOut)
	faultExit(&g)
	g.Add(inst("MOV", "", r(20), rz))
	g.Add(inst("MOV", "", r(23), rz))
	// P3: the lane is live (not dropped) and its value is not a NaN.
	g.Add(inst("LOP3", "LUT", r(17), r(16), imm(0x7fffffff), rz, imm(0xc0), npt).Wait(waits(4)))
	g.Add(inst("ISETP", "LE.U32.AND", p(sass.P3), pt, r(17), imm(0x7f800000), np(sass.P1)))
	g.Add(inst("LDG", "E.STRONG.GPU", r(20), sass.G64(12, 0)).When(sass.If(sass.P3)).WriteSB(sass.SB2))
	g.Add(inst("SHF", "R.S32.HI", r(19), rz, imm(31), r(16)))
	g.Add(inst("LOP3", "LUT", r(19), r(19), imm(0x80000000), rz, imm(0xfc), npt))
	g.Add(inst("LOP3", "LUT", r(18), r(16), r(19), rz, imm(0x3c), npt)) // key(v)
	g.Add(inst("MOV", "", r(24), rz).Wait(waits(2)))
	loop := len(g.Prog)
	// P6: the lane swaps this round (its value beats the held one, which
	// is not a NaN).
	g.Add(inst("SHF", "R.S32.HI", r(22), rz, imm(31), r(20)))
	g.Add(inst("LOP3", "LUT", r(21), r(20), imm(0x7fffffff), rz, imm(0xc0), npt))
	g.Add(inst("LOP3", "LUT", r(22), r(22), imm(0x80000000), rz, imm(0xfc), npt))
	g.Add(inst("LOP3", "LUT", r(22), r(20), r(22), rz, imm(0x3c), npt)) // key(old)
	cmp := "GT.U32.AND"
	if min {
		cmp = "LT.U32.AND"
	}
	g.Add(inst("ISETP", cmp, p(sass.P6), pt, r(18), r(22), p(sass.P3)))
	g.Add(inst("ISETP", "LE.U32.AND", p(sass.P6), pt, r(21), imm(0x7f800000), p(sass.P6)))
	g.Add(inst("ATOMG", "E.CAS.STRONG.GPU", pt, r(23), maOperand(12), r(20), r(16)).When(sass.If(sass.P6)).WriteSB(sass.SB5))
	g.Add(inst("ISETP", "NE.U32.AND", p(sass.P3), pt, r(23), r(20), p(sass.P6)).Wait(waits(5)))
	g.Add(inst("MOV", "", r(20), r(23)).When(sass.If(sass.P6)))
	g.Add(inst("VOTE", "ANY", r(24), pt, p(sass.P3)))
	g.Add(inst("ISETP", "NE.U32.AND", p(sass.P0), pt, r(24), rz, pt))
	g.Add(inst("BRA", "", sass.Target(int64(16*(loop-len(g.Prog)-1)))).When(sass.If(sass.P0)))
	g.At(inst("EXIT", "").Yield().Stall(5))
	g.Prog = settle(g.Prog)
	return g.end()
}
