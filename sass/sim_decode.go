package sass

import "fmt"

// The simulator decodes a Program once into a table of dinst: small-int
// opcodes, resolved operands and modifier flags, so that executing an
// instruction is a switch on a byte and loops over 32 lanes -- no string
// compares at run time.

type xop uint8

const (
	xBad xop = iota // not modelled: dinst.err says why
	xNOP
	xEXIT
	xBRA
	xMOV
	xS2R
	xCS2R
	xS2UR
	xULDC
	xUMOV
	xIMAD
	xIMADHI
	xIMADWIDE
	xIADD3
	xLOP3
	xSHF
	xLEA
	xLEAHI
	xIMNMX
	xPRMT
	xSEL
	xISETP
	xFSETP
	xFADD
	xFMUL
	xFFMA
	xFMNMX
	xMUFU
	xF2FP
	xF2FP8
	xI2F
	xF2I
	xF2F
	xHADD2F32
	xHOP2
	xHMMA
	xLDG
	xSTG
	xLDS
	xSTS
	xLDSM
	xLDGSTS
	xLDGDEPBAR
	xDEPBAR
	xBAR
	xSHFL
	xRED
	xATOM
	xATOMCAS
	xPOPC
	xIABS
	xBREV
	xFLO
	xVOTE
	xDADD
	xDMUL
	xDFMA
	xDSETP
	xREDUX
	xBSSY     // BSSY Bb: the convergence barrier records the executing lanes
	xBSYNC    // BSYNC Bb: wait for the barrier's live lanes
	xBREAK    // BREAK Bb: the executing lanes leave the barrier
	xWARPSYNC // WARPSYNC mask: wait for the named live lanes
	xBRX      // BRX/RET.REL.NODEC Ra: per-lane target Ra + next + offset
	xLDL
	xSTL
	xBMOVW  // BMOV.32 Bb, Ra: the barrier from a register (uniform)
	xBMOVR  // BMOV.32(.CLEAR) Rd, Bb: the barrier into a register (and cleared)
	xP2R    // P2R Rd, PR, RZ, mask (sim_mma.go)
	xSGXT   // SGXT Rd, Ra, width (sim_mma.go)
	xPLOP3  // PLOP3.LUT Pd, PT, Pa, Pb, Pc, lut, 0x0: the truth table over lane masks
	xLDC    // LDC(.U8/.S8/.U16/.S16/.64) Rd, c[bank][Ra+off]: a per-lane constant load
	xMATCH  // MATCH.ANY(.U64) Rd, Ra: the lanes with an equal value
	xFRND   // FRND(.F64)(.FLOOR/.CEIL/.TRUNC) Rd, Ra: round to an integral value
	xLANE3  // table_tail.go's integer forms: Rd = dinst.lane3(a, b, c) per lane (sim_tail.go)
	xHSETP2 // HSETP2: dinst.lane3 compares the halves (sim_tail.go)
	xPLOP3S // PLOP3.LUT over three registers' sign bits (sim_tail.go)
)

// upBase is the index of UP0 in a warp's predicate file (P0..PT, then
// UP0..UPT): a decoded uniform predicate is upBase+n.
const upBase = 8

// uniformOps are the uniform datapath's opcodes that compute what a general
// opcode computes: they decode as it, with uniform registers and predicates
// in its operands, and run once for the warp (dinst.uni). R2UR is MOV from
// the first executing lane; VOTEU is VOTE, whose result is a warp-wide value.
var uniformOps = map[Op]Op{"UIADD3": "IADD3", "UIMAD": "IMAD", "USHF": "SHF", "ULOP3": "LOP3", "USEL": "SEL",
	"UISETP": "ISETP", "ULEA": "LEA", "UFLO": "FLO", "UPOPC": "POPC", "UBREV": "BREV", "UPRMT": "PRMT",
	"R2UR": "MOV", "VOTEU": "VOTE"}

// operand kinds of a decoded source.
const (
	oNone uint8 = iota
	oReg
	oZero
	oImm
	oConst
	oUReg
)

// sopnd is a decoded source operand.
type sopnd struct {
	k        uint8
	r        uint8 // register or uniform register
	v, v2    uint32
	bank     uint8
	off      int64
	neg, abs bool
	not      bool
	hiHalf   bool        // .H1_H1 selector
	arr      *[32]uint32 // the broadcast lanes of an immediate (bound)
	arr2     *[32]uint32 // the next word of a 64-bit constant
	fxor     uint32      // float source modifiers, applied as (x & fand) ^ fxor
	fand     uint32
}

// psrc is a predicate source.
type psrc struct {
	p   uint8
	not bool
}

// maddr is a decoded memory operand.
type maddr struct {
	base  uint8
	w64   bool
	scale int64
	off   int64
}

// span is a run of registers an instruction reads or writes (poison
// tracking): kind 0 general, 1 predicate, 2 uniform, 3 uniform predicate.
type span struct {
	kind, n, cnt uint8
}

type dinst struct {
	op   xop
	idx  int
	in   *Inst
	err  error
	cerr error // a constant operand outside its bank

	guarded, gnot bool
	gp            uint8

	d      uint8 // destination register (255 RZ)
	pd     [2]uint8
	npd    int
	s      [4]sopnd
	ps     [3]psrc
	mem    maddr
	mem2   maddr
	target int

	rnd                   rmode
	ftz, sat              bool
	cmp, logic            uint8
	u32, ex, x, hi, wide  bool
	bf, relu, trans, left bool
	signed, hiMerge       bool
	strong                bool // LDG/STG .STRONG.*: single-copy atomic (runs under the memory's lock)
	cond                  bool // BRA P / EXIT P: the executing lanes are also those of ps[0]
	call                  int8 // +1 CALL, -1 RET: the executing lanes' call depth changes (MaxCallDepth)
	shm                   bool // ATOMS: a shared-memory atomic
	special               bool // uni, cond or call: exec's one test for the rare cases
	// uni: a uniform-datapath instruction. It runs in the first executing
	// lane only (in every executing lane when uniAll: VOTEU's ballot) and
	// its uniform destination UR[ud], ucnt registers, takes that lane's
	// result; uniform predicates take one value for the warp.
	uni, uniAll bool
	ud, ucnt    uint8
	cb          []byte // LDC: the constant bank (bound at launch)
	width       int    // bytes of a memory access
	sub         uint8
	n           int

	wait     uint8
	wsb, rsb int8 // scoreboard index, -1 none

	pred, zfill bool  // LDGSTS with a predicate (ps[0]), .ZFILL (sim_mma.go)
	sbset       uint8 // DEPBAR's scoreboard set

	reads  []span
	writes []span

	lane3 func(a, b, c uint32) uint32 // xLANE3's operation (sim_tail.go)
}

func (d *dinst) text() string { return d.in.Text(int64(16 * d.idx)) }

func has(mods []string, m string) bool {
	for _, x := range mods {
		if x == m {
			return true
		}
	}
	return false
}

func rndOf(mods []string) rmode {
	switch {
	case has(mods, "RM"):
		return rnDown
	case has(mods, "RP"):
		return rnUp
	case has(mods, "RZ"):
		return rnZero
	}
	return rnEven
}

var cmpNames = map[string]uint8{"F": 0, "LT": 1, "EQ": 2, "LE": 3, "GT": 4, "NE": 5, "GE": 6, "NUM": 7, "NAN": 8,
	"LTU": 9, "EQU": 10, "LEU": 11, "GTU": 12, "NEU": 13, "GEU": 14, "T": 15}

func cmpOf(mods []string, float bool) (uint8, bool) {
	for _, m := range mods {
		if c, ok := cmpNames[m]; ok {
			if !float && c > 6 && c != 15 {
				return 0, false
			}
			if !float && c == 15 {
				return 7, true
			}
			return c, true
		}
	}
	return 0, false
}

func logicOf(mods []string) uint8 {
	switch {
	case has(mods, "OR"):
		return 1
	case has(mods, "XOR"):
		return 2
	}
	return 0
}

// decodeProgram decodes every instruction; ones it cannot model become
// xBad, reported when executed.
func decodeProgram(p Program) ([]dinst, int) {
	ds := make([]dinst, len(p))
	maxReg := 0
	for k := range p {
		d := &ds[k]
		d.idx = k
		d.in = &p[k]
		if err := decodeInst(d, p[k], len(p)); err != nil {
			*d = dinst{op: xBad, idx: k, in: &p[k], err: err}
		}
		d.special = d.uni || d.cond || d.call != 0
		for _, s := range d.reads {
			if s.kind == 0 && int(s.n)+int(s.cnt) > maxReg {
				maxReg = int(s.n) + int(s.cnt)
			}
		}
		for _, s := range d.writes {
			if s.kind == 0 && int(s.n)+int(s.cnt) > maxReg {
				maxReg = int(s.n) + int(s.cnt)
			}
		}
	}
	return ds, maxReg
}

// branchTarget is the instruction index a relative branch at idx with
// byte offset off reaches.
func branchTarget(idx int, off int64, plen int) (int, error) {
	if off%16 != 0 {
		return 0, bad("branch target offset %d not a multiple of 16", off)
	}
	t := int64(idx) + 1 + off/16
	if t < 0 || t >= int64(plen) {
		return 0, bad("branch target %d outside the program", t)
	}
	return int(t), nil
}

func bad(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrSimUnsupported, fmt.Sprintf(format, a...))
}

func decodeInst(d *dinst, in Inst, plen int) (err error) {
	d.wsb, d.rsb = -1, -1
	if in.Ctrl.WriteSB != NoSB {
		d.wsb = int8(in.Ctrl.WriteSB.Index())
	}
	if in.Ctrl.ReadSB != NoSB {
		d.rsb = int8(in.Ctrl.ReadSB.Index())
	}
	d.wait = in.Ctrl.Wait
	if in.Guard.Set && in.Guard.P != PT {
		gp := uint8(in.Guard.P)
		if in.Guard.Uniform {
			gp += upBase
		}
		d.guarded, d.gp, d.gnot = true, gp, in.Guard.Not
		d.reads = append(d.reads, span{1, gp, 1})
	} else if in.Guard.Set && in.Guard.Not {
		d.guarded, d.gp, d.gnot = true, uint8(PT), true
	}
	a := in.Args
	mods := in.Mods
	if g, ok := uniformOps[in.Op]; ok {
		in.Op, d.uni, d.uniAll = g, true, g == "VOTE"
	}
	if in.Op == "ULDC" && len(a) == 2 && a[1].Kind == KCBank && a[1].Indexed {
		// ULDC URd, c[bank][URa+off]: LDC with a uniform index
		in.Op, d.uni = "LDC", true
	}
	// kindOK: a uniform instruction's registers and predicates are uniform
	// ones where the general opcode names general ones.
	kindOK := func(got, want Kind) bool {
		return got == want || d.uni && (want == KReg && got == KUReg || want == KPred && got == KUPred)
	}
	want := func(kinds ...Kind) error {
		if len(a) != len(kinds) {
			return bad("%s: %d operands, want %d", in.Op, len(a), len(kinds))
		}
		for i, k := range kinds {
			if k != KNone && !kindOK(a[i].Kind, k) {
				return bad("%s: operand %d is a %v, want a %v", in.Op, i, a[i].Kind, k)
			}
		}
		return nil
	}
	// dst marks a general register destination of cnt registers (a uniform
	// one for a uniform instruction: the result lands in the discard
	// registers and is copied to UR[ud]).
	dst := func(o Operand, cnt int) error {
		if o.Kind == KUReg && d.uni {
			if o.N != 63 && int(o.N)+cnt-1 > 62 {
				return bad("%s: uniform tuple UR%d", in.Op, o.N)
			}
			d.d, d.ud, d.ucnt = 255, o.N, uint8(cnt)
			if o.N != 63 {
				d.writes = append(d.writes, span{2, o.N, uint8(cnt)})
			} else {
				d.ucnt = 0
			}
			return nil
		}
		if o.Kind != KReg {
			return bad("%s: destination is a %v", in.Op, o.Kind)
		}
		if o.N != 255 && int(o.N)+cnt-1 > 254 {
			return bad("%s: register tuple R%d..R%d", in.Op, o.N, int(o.N)+cnt-1)
		}
		if cnt > 1 && o.N != 255 && int(o.N)%cnt != 0 && cnt <= 4 {
			return bad("%s: register tuple R%d not aligned to %d", in.Op, o.N, cnt)
		}
		d.d = o.N
		if o.N != 255 {
			d.writes = append(d.writes, span{0, o.N, uint8(cnt)})
		}
		return nil
	}
	pdst := func(o Operand) error {
		if o.Kind == KUPred && d.uni {
			d.pd[d.npd] = upBase + o.N
			d.npd++
			if o.N != uint8(UPT) {
				d.writes = append(d.writes, span{3, upBase + o.N, 1})
			}
			return nil
		}
		if o.Kind != KPred {
			return bad("%s: predicate destination is a %v", in.Op, o.Kind)
		}
		d.pd[d.npd] = o.N
		d.npd++
		if o.N != uint8(PT) {
			d.writes = append(d.writes, span{1, o.N, 1})
		}
		return nil
	}
	psrcOf := func(o Operand, k int) error {
		if o.Kind == KUPred {
			// a uniform predicate: all lanes or none
			d.ps[k] = psrc{upBase + o.N, o.Not}
			if o.N != uint8(UPT) {
				d.reads = append(d.reads, span{1, upBase + o.N, 1})
			}
			return nil
		}
		if o.Kind != KPred {
			return bad("%s: predicate source is a %v", in.Op, o.Kind)
		}
		d.ps[k] = psrc{o.N, o.Not}
		if o.N != uint8(PT) {
			d.reads = append(d.reads, span{1, o.N, 1})
		}
		return nil
	}
	// src decodes a source of cnt consecutive registers (a 64-bit constant
	// when cnt is 2).
	src := func(o Operand, k, cnt int) error {
		s := &d.s[k]
		s.neg, s.abs, s.not = o.Neg, o.Abs, o.Not
		s.hiHalf = o.Sel == ".H1_H1"
		switch o.Kind {
		case KReg:
			if o.N == 255 {
				s.k = oZero
				return nil
			}
			if int(o.N)+cnt-1 > 254 {
				return bad("%s: register tuple R%d..R%d", in.Op, o.N, int(o.N)+cnt-1)
			}
			s.k, s.r = oReg, o.N
			d.reads = append(d.reads, span{0, o.N, uint8(cnt)})
		case KDouble:
			// a double immediate is the value's high word
			s.k, s.v, s.v2 = oImm, 0, uint32(o.Imm)
		case KImm, KFloat:
			s.k, s.v = oImm, uint32(o.Imm)
			if cnt == 2 && o.Kind == KImm && o.Imm < 0 {
				s.v2 = 0xffffffff
			}
		case KCBank:
			if o.Indexed && o.N != 255 {
				return bad("%s: indexed constant not modelled", in.Op)
			}
			s.k, s.bank, s.off = oConst, o.Bank, o.Imm
		case KUReg:
			if o.N == 63 {
				s.k = oZero
				return nil
			}
			if int(o.N)+cnt-1 > 62 {
				return bad("%s: uniform tuple UR%d", in.Op, o.N)
			}
			s.k, s.r = oUReg, o.N
			d.reads = append(d.reads, span{2, o.N, uint8(cnt)})
		default:
			return bad("%s: operand %d is a %v", in.Op, k, o.Kind)
		}
		s.fand = 0xffffffff
		if s.abs {
			s.fand = 0x7fffffff
		}
		if s.neg {
			s.fxor = 0x80000000
		}
		return nil
	}
	memOf := func(o Operand, global bool) (maddr, error) {
		if o.Kind != KMem {
			return maddr{}, bad("%s: address operand is a %v", in.Op, o.Kind)
		}
		m := maddr{base: o.N, w64: o.W64, scale: int64(o.Scale), off: o.Imm}
		if m.scale == 0 {
			m.scale = 1
		}
		if o.N != 255 {
			cnt := 1
			if global {
				cnt = 2
				if o.N > 253 {
					return maddr{}, bad("%s: address pair R%d", in.Op, o.N)
				}
			}
			d.reads = append(d.reads, span{0, o.N, uint8(cnt)})
		}
		return m, nil
	}
	widthOf := func() (int, bool) {
		switch {
		case has(mods, "U8"):
			return 1, false
		case has(mods, "S8"):
			return 1, true
		case has(mods, "U16"):
			return 2, false
		case has(mods, "S16"):
			return 2, true
		case has(mods, "64"):
			return 8, false
		case has(mods, "128"):
			return 16, false
		}
		return 4, false
	}
	regs := func(w int) int {
		if w <= 4 {
			return 1
		}
		return w / 4
	}

	if tailLane3(in) {
		// table_tail.go's integer forms, lane by lane (sim_tail.go)
		fn, n, err := lane3Of(in)
		if err != nil {
			return err
		}
		if len(a) < n+1 {
			return bad("%s: %d operands", in.Op, len(a))
		}
		d.op, d.lane3, d.n = xLANE3, fn, n
		for k := 0; k < n; k++ {
			if err := src(a[k+1], k, 1); err != nil {
				return err
			}
		}
		return dst(a[0], 1)
	}
	switch in.Op {
	case "NOP", "MEMBAR", "ERRBAR", "CCTL", "NANOSLEEP":
		d.op = xNOP
		return nil
	case "YIELD":
		d.op = xNOP
		return nil
	case "BSSY", "BSYNC", "BREAK":
		kinds := []Kind{KBar}
		if in.Op == "BSSY" {
			kinds = append(kinds, KTarget)
		}
		if err := want(kinds...); err != nil {
			return err
		}
		if a[0].N > 15 {
			return bad("%s: barrier B%d", in.Op, a[0].N)
		}
		d.op, d.sub = map[Op]xop{"BSSY": xBSSY, "BSYNC": xBSYNC, "BREAK": xBREAK}[in.Op], a[0].N
		return nil
	case "WARPSYNC":
		if len(mods) == 1 && mods[0] == "ALL" && len(a) == 0 {
			d.op, d.n = xWARPSYNC, -1
			return nil
		}
		if err := want(KImm); err != nil {
			return err
		}
		d.op, d.n = xWARPSYNC, int(uint32(a[0].Imm))
		return nil
	case "CALL":
		// CALL.REL.NOINC pushes nothing (the caller passes the return
		// address in registers): a relative branch.
		if !has(mods, "REL") || !has(mods, "NOINC") {
			return bad("CALL: only CALL.REL.NOINC is modelled")
		}
		if err := want(KTarget); err != nil {
			return err
		}
		t, err := branchTarget(d.idx, a[0].Imm, plen)
		if err != nil {
			return err
		}
		d.op, d.target, d.call = xBRA, t, 1
		return nil
	case "RET", "BRX", "BRXU":
		// RET.REL.NODEC Ra and BRX Ra: the target is the byte offset
		// Ra + (next instruction + offset) in every lane, as nvdisasm
		// prints it (ptxas sets Ra to a function-relative address and
		// the offset to minus the next instruction's).
		if in.Op == "RET" && (!has(mods, "REL") || !has(mods, "NODEC")) {
			return bad("RET: only RET.REL.NODEC is modelled")
		}
		rk := KReg
		if in.Op == "BRXU" {
			rk = KUReg
		}
		if err := want(rk, KNone); err != nil {
			return err
		}
		if a[1].Kind != KTarget && a[1].Kind != KImm {
			return bad("%s: operand 1 is a %v, want an offset", in.Op, a[1].Kind)
		}
		if err := src(a[0], 0, 1); err != nil {
			return err
		}
		d.op, d.n = xBRX, 16*(d.idx+1)+int(a[1].Imm)
		if in.Op == "RET" {
			d.call = -1
		}
		return nil
	case "EXIT", "BRA":
		// EXIT P and BRA P, target: the predicate operand narrows the
		// guard's lanes (ptxas's @!P1 BRA P2, 0x1e70 in the project's sg
		// kernels, taken where !P1 and P2: inferred from the code around
		// it, and @!P0 EXIT P1 in the corpus's tile_index)
		if len(a) > 0 && a[0].Kind == KPred {
			d.cond = true
			if err := psrcOf(a[0], 0); err != nil {
				return err
			}
			a = a[1:]
		}
		if in.Op == "EXIT" {
			d.op = xEXIT
			return want()
		}
		if err := want(KTarget); err != nil {
			return err
		}
		t, err := branchTarget(d.idx, a[0].Imm, plen)
		if err != nil {
			return err
		}
		d.op, d.target = xBRA, t
		return nil
	case "MOV":
		if err := want(KReg, KNone); err != nil {
			return err
		}
		if d.uni && a[1].Kind != KReg {
			return bad("R2UR: source is a %v", a[1].Kind)
		}
		d.op = xMOV
		if err := src(a[1], 0, 1); err != nil {
			return err
		}
		return dst(a[0], 1)
	case "S2R", "CS2R":
		if err := want(KReg, KSpecial); err != nil {
			return err
		}
		d.op, d.sub = xS2R, a[1].N
		cnt := 1
		if in.Op == "CS2R" && !has(mods, "32") {
			d.op, cnt = xCS2R, 2
		}
		return dst(a[0], cnt)
	case "S2UR":
		if err := want(KUReg, KSpecial); err != nil {
			return err
		}
		d.op, d.sub, d.d = xS2UR, a[1].N, a[0].N
		d.writes = append(d.writes, span{2, a[0].N, 1})
		return nil
	case "ULDC", "UMOV":
		if err := want(KUReg, KNone); err != nil {
			return err
		}
		cnt := 1
		if has(mods, "64") {
			cnt = 2
		}
		d.op, d.d, d.n = xULDC, a[0].N, cnt
		if a[0].N != 63 {
			if int(a[0].N)+cnt-1 > 62 {
				return bad("%s: uniform tuple", in.Op)
			}
			d.writes = append(d.writes, span{2, a[0].N, uint8(cnt)})
		}
		return src(a[1], 0, cnt)
	case "IMAD":
		d.u32 = has(mods, "U32")
		d.x = has(mods, "X")
		d.op = xIMAD
		cnt := 1
		switch {
		case has(mods, "HI"):
			// the addend is a register pair added to the 64-bit product
			// (ptxas's division: IMAD.HI.U32 R4, R7, R3, R6 with R6 = 0
			// and R7 the estimate; testdata/ptxas intmath divmod32)
			d.op, cnt = xIMADHI, 2
		case has(mods, "WIDE"):
			d.op, cnt = xIMADWIDE, 2
		}
		if d.x {
			if err := want(KReg, KReg, KNone, KNone, KPred); err != nil {
				return err
			}
			if err := psrcOf(a[4], 0); err != nil {
				return err
			}
		} else if d.op != xIMAD && len(a) == 5 && a[1].Kind == KPred {
			// IMAD.HI/IMAD.WIDE Rd, Pc, a, b, c: Pc is the carry out of
			// the 64-bit sum (ptxas's 64-bit division and mul.hi.u64)
			if err := pdst(a[1]); err != nil {
				return err
			}
			a = append(a[:1:1], a[2:]...)
		} else if err := want(KReg, KReg, KNone, KNone); err != nil {
			return err
		}
		if err := src(a[1], 0, 1); err != nil {
			return err
		}
		if err := src(a[2], 1, 1); err != nil {
			return err
		}
		if err := src(a[3], 2, cnt); err != nil {
			return err
		}
		if d.op == xIMADHI {
			return dst(a[0], 1)
		}
		return dst(a[0], cnt)
	case "IADD3":
		d.op = xIADD3
		d.x = has(mods, "X")
		if len(a) < 4 || len(a) > 7 || len(a) == 7 && !d.x {
			return bad("IADD3: %d operands", len(a))
		}
		var srcs []Operand
		if d.x {
			if len(a) == 7 {
				// IADD3.X Rd, Pc, a, b, c, Px, Py: Pc the carry out
				if err := pdst(a[1]); err != nil {
					return err
				}
				a = append(a[:1:1], a[2:]...)
			}
			if len(a) != 6 {
				return bad("IADD3.X: %d operands", len(a))
			}
			srcs = a[1:4]
			if err := psrcOf(a[4], 0); err != nil {
				return err
			}
			if err := psrcOf(a[5], 1); err != nil {
				return err
			}
		} else {
			srcs = a[len(a)-3:]
			for _, p := range a[1 : len(a)-3] {
				if err := pdst(p); err != nil {
					return err
				}
			}
		}
		for k, o := range srcs {
			if err := src(o, k, 1); err != nil {
				return err
			}
		}
		return dst(a[0], 1)
	case "LOP3":
		if len(a) == 7 {
			// LOP3.LUT P, R, A, B, C, lut, Q: P is set where the result is
			// not zero or Q is true. The OR is inferred from ptxas's test
			// of a 64-bit (x & m) != 0 in the project's sg kernels
			// (LOP3.LUT P0, RZ, R10, UR8, RZ, 0xc0, !PT, then LOP3.LUT P0,
			// RZ, R15, UR9, RZ, 0xc0, P0); with !PT, ptxas's usual input,
			// P is just result != 0.
			if len(mods) != 1 || mods[0] != "LUT" {
				return bad("LOP3.%v with a predicate output", mods)
			}
			if err := pdst(a[0]); err != nil {
				return err
			}
			if err := psrcOf(a[6], 0); err != nil {
				return err
			}
			a = a[1:]
		} else {
			d.ps[0] = psrc{uint8(PT), true}
		}
		if len(a) != 5 && len(a) != 6 {
			return bad("LOP3: %d operands", len(a))
		}
		if a[4].Kind != KImm {
			return bad("LOP3: truth table is a %v", a[4].Kind)
		}
		d.op, d.sub = xLOP3, uint8(a[4].Imm)
		for k := 0; k < 3; k++ {
			if err := src(a[k+1], k, 1); err != nil {
				return err
			}
		}
		return dst(a[0], 1)
	case "SHF":
		if err := want(KReg, KReg, KNone, KNone); err != nil {
			return err
		}
		d.op = xSHF
		d.left = has(mods, "L")
		d.hi = has(mods, "HI")
		d.x = has(mods, "W") // wrap
		d.wide = has(mods, "U64") || has(mods, "S64")
		d.signed = has(mods, "S64") || has(mods, "S32")
		for k := 0; k < 3; k++ {
			if err := src(a[k+1], k, 1); err != nil {
				return err
			}
		}
		return dst(a[0], 1)
	case "LEA":
		d.hi, d.x = has(mods, "HI"), has(mods, "X")
		if !d.hi {
			d.op = xLEA
			switch len(a) {
			case 4:
			case 5:
				if err := pdst(a[1]); err != nil {
					return err
				}
			default:
				return bad("LEA: %d operands", len(a))
			}
			n := len(a)
			if err := src(a[n-3], 0, 1); err != nil {
				return err
			}
			if err := src(a[n-2], 1, 1); err != nil {
				return err
			}
			if a[n-1].Kind != KImm {
				return bad("LEA: shift is a %v", a[n-1].Kind)
			}
			d.sub = uint8(a[n-1].Imm & 31)
			return dst(a[0], 1)
		}
		d.op = xLEAHI
		if d.x {
			if len(a) != 6 {
				return bad("LEA.HI.X: %d operands", len(a))
			}
			if err := psrcOf(a[5], 0); err != nil {
				return err
			}
		} else if len(a) != 5 {
			return bad("LEA.HI: %d operands", len(a))
		}
		for k := 0; k < 3; k++ {
			if err := src(a[k+1], k, 1); err != nil {
				return err
			}
		}
		if a[4].Kind != KImm {
			return bad("LEA: shift is a %v", a[4].Kind)
		}
		d.sub = uint8(a[4].Imm & 31)
		return dst(a[0], 1)
	case "IMNMX", "SEL", "FSEL", "FMNMX":
		if err := want(KReg, KNone, KNone, KPred); err != nil {
			return err
		}
		switch in.Op {
		case "IMNMX":
			d.op, d.u32 = xIMNMX, has(mods, "U32")
		case "FMNMX":
			d.op, d.ftz = xFMNMX, has(mods, "FTZ")
		default:
			d.op = xSEL
		}
		if err := src(a[1], 0, 1); err != nil {
			return err
		}
		if err := src(a[2], 1, 1); err != nil {
			return err
		}
		if err := psrcOf(a[3], 0); err != nil {
			return err
		}
		return dst(a[0], 1)
	case "PRMT":
		if len(mods) != 0 {
			return bad("PRMT mode %v", mods)
		}
		if err := want(KReg, KNone, KNone, KNone); err != nil {
			return err
		}
		d.op = xPRMT
		for k := 0; k < 3; k++ {
			if err := src(a[k+1], k, 1); err != nil {
				return err
			}
		}
		return dst(a[0], 1)
	case "HSETP2":
		cmp, ok := hcmpOf(in)
		if !ok || len(a) != 5 {
			return bad("HSETP2.%v", mods)
		}
		d.op, d.logic = xHSETP2, logicOf(mods)
		d.lane3 = func(x, y, _ uint32) uint32 { return cmp(x, y) }
		if err := pdst(a[0]); err != nil {
			return err
		}
		if err := pdst(a[1]); err != nil {
			return err
		}
		if err := src(a[2], 0, 1); err != nil {
			return err
		}
		if err := src(a[3], 1, 1); err != nil {
			return err
		}
		return psrcOf(a[4], 0)
	case "ISETP", "FSETP":
		float := in.Op == "FSETP"
		c, ok := cmpOf(mods, float)
		if !ok {
			return bad("%s: comparison %v", in.Op, mods)
		}
		d.cmp, d.logic = c, logicOf(mods)
		d.u32, d.ex, d.ftz = has(mods, "U32"), has(mods, "EX"), has(mods, "FTZ")
		d.op = xISETP
		if float {
			d.op = xFSETP
		}
		n := 5
		if d.ex {
			n = 6
		}
		if len(a) != n {
			return bad("%s: %d operands", in.Op, len(a))
		}
		if err := pdst(a[0]); err != nil {
			return err
		}
		if err := pdst(a[1]); err != nil {
			return err
		}
		if err := src(a[2], 0, 1); err != nil {
			return err
		}
		if err := src(a[3], 1, 1); err != nil {
			return err
		}
		if err := psrcOf(a[4], 0); err != nil {
			return err
		}
		if d.ex {
			if err := psrcOf(a[5], 1); err != nil {
				return err
			}
		}
		return nil
	case "DADD", "DMUL", "DFMA":
		// binary64 on register pairs: Go's float64 arithmetic (and
		// math.FMA) is IEEE's, subnormals included; .RM/.RP/.RZ adjust it
		// (dDirected, sim_tail.go).
		d.rnd = rndOf(mods)
		n := 3
		d.op = map[Op]xop{"DADD": xDADD, "DMUL": xDMUL, "DFMA": xDFMA}[in.Op]
		if in.Op == "DFMA" {
			n = 4
		}
		if len(a) != n || a[0].Kind != KReg {
			return bad("%s: %d operands", in.Op, len(a))
		}
		for k := 1; k < n; k++ {
			if err := src(a[k], k-1, 2); err != nil {
				return err
			}
		}
		return dst(a[0], 2)
	case "REDUX":
		// a reduction over the lanes that execute it, into a uniform
		// register: AND (no modifier), OR, XOR, SUM, MIN, MAX; .S32
		// compares signed
		if err := want(KUReg, KReg); err != nil {
			return err
		}
		d.op, d.sub, d.signed = xREDUX, 0, has(mods, "S32")
		for k, m := range []string{"OR", "XOR", "SUM", "MIN", "MAX"} {
			if has(mods, m) {
				d.sub = uint8(k + 1)
			}
		}
		d.d = a[0].N
		if a[0].N != 63 {
			d.writes = append(d.writes, span{2, a[0].N, 1})
		}
		return src(a[1], 0, 1)
	case "DSETP":
		c, ok := cmpOf(mods, true)
		if !ok {
			return bad("DSETP: comparison %v not modelled", mods)
		}
		d.cmp, d.logic, d.op = c, logicOf(mods), xDSETP
		if len(a) != 5 {
			return bad("DSETP: %d operands", len(a))
		}
		if err := pdst(a[0]); err != nil {
			return err
		}
		if err := pdst(a[1]); err != nil {
			return err
		}
		if err := src(a[2], 0, 2); err != nil {
			return err
		}
		if err := src(a[3], 1, 2); err != nil {
			return err
		}
		return psrcOf(a[4], 0)
	case "FADD", "FMUL", "FFMA":
		d.rnd, d.ftz, d.sat = rndOf(mods), has(mods, "FTZ"), has(mods, "SAT")
		n := 3
		d.op = xFADD
		if in.Op == "FMUL" {
			d.op = xFMUL
		}
		if in.Op == "FFMA" {
			d.op, n = xFFMA, 4
		}
		if len(a) != n || a[0].Kind != KReg {
			return bad("%s: %d operands", in.Op, len(a))
		}
		for k := 1; k < n; k++ {
			if err := src(a[k], k-1, 1); err != nil {
				return err
			}
		}
		return dst(a[0], 1)
	case "MUFU":
		if err := want(KReg, KNone); err != nil {
			return err
		}
		ops := []string{"COS", "SIN", "EX2", "LG2", "RCP", "RSQ", "SQRT", "TANH", "RCP64H", "RSQ64H"}
		found := false
		for k, o := range ops {
			if has(mods, o) {
				d.sub, found = uint8(k), true
			}
		}
		if !found || len(mods) != 1 {
			return bad("MUFU.%v", mods)
		}
		d.op = xMUFU
		if err := src(a[1], 0, 1); err != nil {
			return err
		}
		return dst(a[0], 1)
	case "F2FP":
		if has(mods, "E4M3") || has(mods, "E5M2") {
			d.op, d.wide = xF2FP8, has(mods, "E5M2")
			if len(a) != 3 && len(a) != 4 {
				return bad("F2FP float8: %d operands", len(a))
			}
			if len(a) == 4 {
				d.hiMerge = a[3].Sel == ".H1" || a[3].Sel == ".H1_H1"
				if err := src(a[3], 2, 1); err != nil {
					return err
				}
			} else {
				d.s[2].k = oZero
			}
		} else {
			if !has(mods, "PACK_AB") {
				return bad("F2FP.%v", mods)
			}
			d.op, d.bf, d.relu = xF2FP, has(mods, "BF16"), has(mods, "RELU")
			if len(a) != 3 {
				return bad("F2FP: %d operands", len(a))
			}
		}
		if err := src(a[1], 0, 1); err != nil {
			return err
		}
		if err := src(a[2], 1, 1); err != nil {
			return err
		}
		return dst(a[0], 1)
	case "I2F", "I2FP":
		if err := want(KReg, KNone); err != nil {
			return err
		}
		d.op, d.rnd = xI2F, rndOf(mods)
		d.signed = !has(mods, "U32") && !has(mods, "U64")
		d.wide = has(mods, "S64") || has(mods, "U64")
		d.x = has(mods, "F64") // binary64 result
		cnt, dcnt := 1, 1
		if d.wide {
			cnt = 2
		}
		if d.x {
			dcnt = 2
		}
		if has(mods, "F16") {
			return bad("I2F.F16")
		}
		if err := src(a[1], 0, cnt); err != nil {
			return err
		}
		return dst(a[0], dcnt)
	case "F2I":
		if err := want(KReg, KReg); err != nil {
			return err
		}
		d.op = xF2I
		if has(mods, "F16") || has(mods, "U16") {
			return bad("F2I.%v: 16-bit conversions not modelled", mods)
		}
		// .FTZ flushes a subnormal source to zero first: only FLOOR and
		// CEIL can tell (a tiny negative floors to -1, a flushed one to 0)
		if has(mods, "FTZ") && (has(mods, "FLOOR") || has(mods, "CEIL")) {
			return bad("F2I.%v not modelled", mods)
		}
		d.signed = !has(mods, "U32") && !has(mods, "U64")
		d.wide = has(mods, "S64") || has(mods, "U64")
		d.x = has(mods, "F64")
		switch {
		case has(mods, "FLOOR"):
			d.sub = 1
		case has(mods, "CEIL"):
			d.sub = 2
		case has(mods, "TRUNC"):
			d.sub = 3
		}
		cnt, dcnt := 1, 1
		if d.x {
			cnt = 2
		}
		if d.wide {
			dcnt = 2
		}
		if err := src(a[1], 0, cnt); err != nil {
			return err
		}
		return dst(a[0], dcnt)
	case "F2F":
		if err := want(KReg, KReg); err != nil {
			return err
		}
		var ts []string
		for _, m := range mods {
			if m == "F16" || m == "F32" || m == "F64" {
				ts = append(ts, m)
			}
		}
		if len(ts) != 2 {
			return bad("F2F.%v", mods)
		}
		code := map[string]uint8{"F16": 0, "F32": 1, "F64": 2}
		d.op, d.rnd = xF2F, rndOf(mods)
		d.sub, d.n = code[ts[0]], int(code[ts[1]])
		cnt, dcnt := 1, 1
		if d.n == 2 {
			cnt = 2
		}
		if d.sub == 2 {
			dcnt = 2
		}
		if err := src(a[1], 0, cnt); err != nil {
			return err
		}
		return dst(a[0], dcnt)
	case "HADD2", "HMUL2", "HFMA2":
		if len(a) == 4 && in.Op == "HMUL2" && a[2].Kind == KHalf && a[3].Kind == KHalf {
			// an f16x2 immediate (sim_mma.go)
			a = append(a[:2:2], halfPair(a[2], a[3]))
		}
		if in.Op == "HADD2" && has(mods, "F32") {
			if err := want(KReg, KReg, KReg); err != nil {
				return err
			}
			d.op = xHADD2F32
		} else {
			if len(mods) > 1 || (len(mods) == 1 && mods[0] != "BF16_V2") {
				return bad("%s.%v", in.Op, mods)
			}
			d.op, d.bf = xHOP2, has(mods, "BF16_V2")
			n := 3
			switch in.Op {
			case "HMUL2":
				d.sub = 1
			case "HFMA2":
				d.sub, n = 2, 4
			}
			if len(a) != n {
				return bad("%s: %d operands", in.Op, len(a))
			}
			if n == 3 {
				d.s[2].k = oZero
			}
		}
		for k := 1; k < len(a); k++ {
			if err := src(a[k], k-1, 1); err != nil {
				return err
			}
		}
		for k := 1; k < len(a); k++ {
			if a[k].Neg || a[k].Abs {
				if !(d.op == xHADD2F32 && k == 1 && a[k].Kind == KReg && a[k].N == 255) {
					return bad("%s: source modifiers", in.Op)
				}
			}
		}
		return dst(a[0], 1)
	case "HMMA":
		if err := want(KReg, KReg, KReg, KReg); err != nil {
			return err
		}
		if !has(mods, "F32") {
			return bad("HMMA without .F32 accumulate")
		}
		d.op, d.bf = xHMMA, has(mods, "BF16")
		na, nb := 4, 2
		d.n = 16
		if has(mods, "1688") {
			na, nb, d.n = 2, 1, 8
			if d.bf {
				return bad("HMMA.1688.F32.BF16")
			}
		} else if !has(mods, "16816") {
			return bad("HMMA shape %v", mods)
		}
		for k, c := range []int{na, nb, 4} {
			if a[k+1].N == 255 {
				d.s[k].k = oZero
				continue
			}
			if err := src(a[k+1], k, c); err != nil {
				return err
			}
		}
		return dst(a[0], 4)
	case "BMOV":
		if !has(mods, "32") || len(a) != 2 {
			return bad("BMOV: only BMOV.32 is modelled")
		}
		if a[0].Kind == KBar && a[0].N <= 15 {
			d.op, d.sub = xBMOVW, a[0].N
			return src(a[1], 0, 1)
		}
		if a[1].Kind != KBar || a[1].N > 15 {
			return bad("BMOV: operands %v, %v", a[0].Kind, a[1].Kind)
		}
		d.op, d.sub, d.x = xBMOVR, a[1].N, has(mods, "CLEAR")
		return dst(a[0], 1)
	case "LDG", "LDS", "LDL":
		if err := want(KReg, KMem); err != nil {
			return err
		}
		d.width, d.signed = widthOf()
		global := in.Op == "LDG"
		d.op = map[Op]xop{"LDG": xLDG, "LDS": xLDS, "LDL": xLDL}[in.Op]
		m, err := memOf(a[1], global)
		if err != nil {
			return err
		}
		d.mem = m
		return dst(a[0], regs(d.width))
	case "STG", "STS", "STL":
		if err := want(KMem, KReg); err != nil {
			return err
		}
		d.width, _ = widthOf()
		global := in.Op == "STG"
		d.strong = global && has(mods, "STRONG")
		d.op = map[Op]xop{"STG": xSTG, "STS": xSTS, "STL": xSTL}[in.Op]
		m, err := memOf(a[0], global)
		if err != nil {
			return err
		}
		d.mem = m
		return src(a[1], 0, regs(d.width))
	case "LDSM":
		if err := want(KReg, KMem); err != nil {
			return err
		}
		d.op, d.trans, d.n = xLDSM, has(mods, "MT88"), 1
		if has(mods, "2") {
			d.n = 2
		}
		if has(mods, "4") {
			d.n = 4
		}
		m, err := memOf(a[1], false)
		if err != nil {
			return err
		}
		d.mem = m
		// the address register is checked only in the lanes that give rows
		if len(d.reads) > 0 && d.reads[len(d.reads)-1].kind == 0 && d.reads[len(d.reads)-1].n == m.base {
			d.reads = d.reads[:len(d.reads)-1]
		}
		return dst(a[0], d.n)
	case "LDGSTS":
		if len(a) == 3 {
			// a predicated copy (sim_mma.go ldgstsSpan)
			if err := psrcOf(a[2], 0); err != nil {
				return err
			}
			d.pred, d.zfill, a = true, has(mods, "ZFILL"), a[:2]
		}
		if err := want(KMem, KMem); err != nil {
			return err
		}
		d.op = xLDGSTS
		d.width, _ = widthOf()
		if d.width < 4 || (d.zfill && d.width != 16) {
			return bad("LDGSTS.%v", mods)
		}
		m, err := memOf(a[0], false)
		if err != nil {
			return err
		}
		g, err := memOf(a[1], true)
		if err != nil {
			return err
		}
		d.mem, d.mem2 = m, g
		return nil
	case "LDGDEPBAR":
		d.op = xLDGDEPBAR
		return want()
	case "DEPBAR":
		if len(a) == 3 && a[2].Kind == KSBSet {
			d.sbset, a = uint8(a[2].Imm), a[:2]
		}
		if err := want(KSB, KImm); err != nil {
			return err
		}
		if a[0].N > 5 {
			return bad("DEPBAR on SB%d", a[0].N)
		}
		d.op, d.sub, d.n = xDEPBAR, a[0].N, int(a[1].Imm)
		return nil
	case "BAR":
		d.op = xBAR
		d.x = has(mods, "ARV")
		if !d.x && !has(mods, "SYNC") {
			return bad("BAR.%v", mods)
		}
		d.n = -1 // thread count: all
		switch len(a) {
		case 1, 2:
		default:
			return bad("BAR: %d operands", len(a))
		}
		if err := src(a[0], 0, 1); err != nil {
			return err
		}
		if len(a) == 2 {
			if err := src(a[1], 1, 1); err != nil {
				return err
			}
			d.n = 0
		}
		return nil
	case "SHFL":
		if err := want(KPred, KReg, KReg, KNone, KNone); err != nil {
			return err
		}
		modes := []string{"IDX", "UP", "DOWN", "BFLY"}
		found := false
		for k, m := range modes {
			if has(mods, m) {
				d.sub, found = uint8(k), true
			}
		}
		if !found {
			return bad("SHFL.%v", mods)
		}
		d.op = xSHFL
		if err := pdst(a[0]); err != nil {
			return err
		}
		for k := 0; k < 3; k++ {
			if err := src(a[k+2], k, 1); err != nil {
				return err
			}
		}
		// the source register is read in other lanes: handled by the op
		if d.s[0].k == oReg {
			for k, s := range d.reads {
				if s.kind == 0 && s.n == d.s[0].r {
					d.reads = append(d.reads[:k:k], d.reads[k+1:]...)
					break
				}
			}
		}
		return dst(a[1], 1)
	case "RED", "ATOMG":
		atomOps := []string{"ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR", "EXCH", "CAS"}
		found := false
		for k, o := range atomOps {
			if has(mods, o) {
				d.sub, found = uint8(k), true
			}
		}
		if !found {
			return bad("%s.%v", in.Op, mods)
		}
		// value types: 0 u32, 1 s32, 2 64-bit, 3 f32, 4 f16x2, 5 bf16x2, 6 f64
		d.n, d.width = 0, 4
		switch {
		case has(mods, "S32"):
			d.n = 1
		case has(mods, "S64"):
			d.n, d.width = 7, 8
		case has(mods, "64"):
			d.n, d.width = 2, 8
		case has(mods, "F32"):
			d.n, d.ftz = 3, true
		case has(mods, "F16x2"):
			d.n = 4
		case has(mods, "BF16x2"):
			d.n = 5
		case has(mods, "F64"):
			d.n, d.width = 6, 8
		}
		if d.n >= 3 && d.n <= 6 && d.sub != 0 {
			return bad("%s: float %v", in.Op, mods)
		}
		cnt := d.width / 4
		var rest []Operand
		if in.Op == "RED" {
			d.op = xRED
			if d.sub >= 8 {
				return bad("RED.%v", mods)
			}
			if err := want(KMem, KReg); err != nil {
				return err
			}
			m, err := memOf(a[0], true)
			if err != nil {
				return err
			}
			d.mem = m
			rest = a[1:]
			d.d = 255
		} else {
			d.op = xATOM
			n := 4
			if d.sub == 9 {
				d.op, n = xATOMCAS, 5
			}
			if len(a) != n || a[2].Kind != KMem {
				return bad("ATOMG: operands")
			}
			if err := pdst(a[0]); err != nil {
				return err
			}
			m, err := memOf(a[2], true)
			if err != nil {
				return err
			}
			d.mem = m
			rest = a[3:]
			if err := dst(a[1], cnt); err != nil {
				return err
			}
		}
		for k, o := range rest {
			if o.Kind != KReg {
				return bad("%s: value operand is a %v", in.Op, o.Kind)
			}
			if err := src(o, k, cnt); err != nil {
				return err
			}
		}
		return nil
	case "ATOMS":
		// shared-memory atomics, lane by lane: the operations of ATOMG;
		// CAS returns the old value, CAST.SPIN 1 where it stored and 0
		// where it did not (ptxas's shared CAS loop retries until 1)
		atomOps := []string{"ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR", "EXCH", "CAS", "CAST"}
		found := false
		for k, o := range atomOps {
			if has(mods, o) {
				d.sub, found = uint8(k), true
			}
		}
		if !found || has(mods, "POPC") || d.sub == 10 && !has(mods, "SPIN") {
			return bad("ATOMS.%v", mods)
		}
		d.op, d.shm, d.width, d.n = xATOM, true, 4, 0
		switch {
		case has(mods, "S32"):
			d.n = 1
		case has(mods, "64"):
			d.n, d.width = 2, 8
		}
		n := 3
		if d.sub >= 9 {
			d.op, n, d.x = xATOMCAS, 4, d.sub == 10
		}
		if len(a) != n || a[0].Kind != KReg || a[1].Kind != KMem {
			return bad("ATOMS: operands")
		}
		m, err := memOf(a[1], false)
		if err != nil {
			return err
		}
		d.mem = m
		cnt := d.width / 4
		for k, o := range a[2:] {
			if o.Kind != KReg {
				return bad("ATOMS: value operand is a %v", o.Kind)
			}
			if err := src(o, k, cnt); err != nil {
				return err
			}
		}
		return dst(a[0], cnt)
	case "FRND":
		if err := want(KReg, KReg); err != nil {
			return err
		}
		d.op, d.wide, d.sub = xFRND, has(mods, "F64"), 0
		for k, m := range []string{"FLOOR", "CEIL", "TRUNC"} {
			if has(mods, m) {
				d.sub = uint8(k + 1)
			}
		}
		cnt := 1
		if d.wide {
			cnt = 2
		}
		if err := src(a[1], 0, cnt); err != nil {
			return err
		}
		return dst(a[0], cnt)
	case "POPC", "IABS", "BREV", "FLO":
		if err := want(KReg, KNone); err != nil {
			return err
		}
		d.op = map[Op]xop{"POPC": xPOPC, "IABS": xIABS, "BREV": xBREV, "FLO": xFLO}[in.Op]
		d.u32, d.hi = has(mods, "U32"), has(mods, "SH")
		if err := src(a[1], 0, 1); err != nil {
			return err
		}
		return dst(a[0], 1)
	case "MATCH":
		// MATCH.ANY Rd, Ra: each executing lane gets the mask of the
		// executing lanes whose Ra (.U64: Ra pair) equals its own
		if err := want(KReg, KReg); err != nil {
			return err
		}
		if !has(mods, "ANY") {
			return bad("MATCH.%v", mods)
		}
		cnt := 1
		if has(mods, "U64") {
			cnt = 2
		}
		d.op, d.wide = xMATCH, cnt == 2
		if err := src(a[1], 0, cnt); err != nil {
			return err
		}
		return dst(a[0], 1)
	case "VOTE":
		if err := want(KReg, KPred, KPred); err != nil {
			return err
		}
		switch {
		case has(mods, "ANY"):
			d.sub = 0
		case has(mods, "ALL"):
			d.sub = 1
		case has(mods, "EQ"):
			d.sub = 2
		default:
			return bad("VOTE.%v", mods)
		}
		d.op = xVOTE
		if err := pdst(a[1]); err != nil {
			return err
		}
		if err := psrcOf(a[2], 0); err != nil {
			return err
		}
		return dst(a[0], 1)
	case "P2R":
		if err := decodeP2R(d, in); err != nil {
			return err
		}
		return dst(a[0], 1)
	case "SGXT":
		if err := decodeSGXT(d, in); err != nil {
			return err
		}
		if err := src(a[1], 0, 1); err != nil {
			return err
		}
		return dst(a[0], 1)
	case "PLOP3":
		// PLOP3.LUT Pd, Pe, Pa, Pb, Pc, lut, lut2: Pd is the truth table
		// over the three (uniform or not) predicates, bit 4a+2b+c as
		// LOP3's. What Pe gets from lut2 is not known here: ptxas writes
		// PT there, and other forms are refused.
		if len(mods) != 1 || mods[0] != "LUT" || len(a) != 7 || a[5].Kind != KImm || a[6].Kind != KImm {
			return bad("PLOP3.%v: %d operands", mods, len(a))
		}
		if a[1].Kind != KPred || a[1].N != uint8(PT) {
			return bad("PLOP3: second destination %v", a[1])
		}
		if err := pdst(a[0]); err != nil {
			return err
		}
		if a[2].Kind == KReg {
			// PLOP3.LUT Pd, PT, Ra.SIGN, Rb.SIGN, Rc.SIGN, lut: the table
			// over the registers' sign bits (sim_tail.go)
			for k := 0; k < 3; k++ {
				if err := src(a[k+2], k, 1); err != nil {
					return err
				}
			}
			d.op, d.sub = xPLOP3S, uint8(a[5].Imm)
			return nil
		}
		for k := 0; k < 3; k++ {
			if err := psrcOf(a[k+2], k); err != nil {
				return err
			}
		}
		d.op, d.sub = xPLOP3, uint8(a[5].Imm)
		return nil
	case "LDC":
		// LDC Rd, c[bank][Ra+off]: each lane's constant at its own byte
		// address (Ra = RZ: one address), zero- or sign-extended from 8 or
		// 16 bits, or a pair (.64); an address outside the bank faults.
		if err := want(KReg, KCBank); err != nil {
			return err
		}
		d.op = xLDC
		d.width, d.signed = widthOf()
		if d.width > 8 {
			return bad("LDC.%v", mods)
		}
		o := a[1]
		d.sub, d.mem = o.Bank, maddr{off: o.Imm}
		// the index: s[0], a register, a uniform register or none
		x := Operand{Kind: KReg, N: 255}
		if o.Indexed && o.UIndex {
			x = Operand{Kind: KUReg, N: o.N}
		} else if o.Indexed {
			x.N = o.N
		}
		if err := src(x, 0, 1); err != nil {
			return err
		}
		return dst(a[0], regs(d.width))
	}
	return bad("%s", in.Op)
}

// bind resolves constant-bank operands against the launch's banks and
// gives every immediate its broadcast lanes; it returns a copy of ds.
func bindProgram(ds []dinst, bank0 []byte, banks map[uint8][]byte) []dinst {
	out := make([]dinst, len(ds))
	copy(out, ds)
	cache := map[uint32]*[32]uint32{}
	bc := func(v uint32) *[32]uint32 {
		if a, ok := cache[v]; ok {
			return a
		}
		a := new([32]uint32)
		for i := range a {
			a[i] = v
		}
		cache[v] = a
		return a
	}
	word := func(b []byte, off int64) (uint32, bool) {
		if off < 0 || off+4 > int64(len(b)) || off%4 != 0 {
			return 0, false
		}
		return uint32(b[off]) | uint32(b[off+1])<<8 | uint32(b[off+2])<<16 | uint32(b[off+3])<<24, true
	}
	for k := range out {
		d := &out[k]
		if d.op == xLDC {
			d.cb = bank0
			if d.sub != 0 {
				d.cb = banks[d.sub]
			}
		}
		for j := range d.s {
			s := &d.s[j]
			if s.k == oConst {
				b := bank0
				if s.bank != 0 {
					b = banks[s.bank]
				}
				v, ok := word(b, s.off)
				v2, _ := word(b, s.off+4)
				if !ok && d.cerr == nil {
					d.cerr = fmt.Errorf("c[%#x][%#x] outside the bank (%d bytes)", s.bank, s.off, len(b))
				}
				s.k, s.v, s.v2 = oImm, v, v2
			}
			if s.k == oImm {
				s.arr, s.arr2 = bc(s.v), bc(s.v2)
			}
		}
	}
	return out
}
