package sim

import (
	"fmt"
	"strings"
	"sync"

	"github.com/tcrt-go/tcrt/sass"
)

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
	xMMA  // HMMA, IMMA, BMMA, DMMA (mma_tc.go)
	xMOVM // MOVM (mma_tc.go)
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
	xBMOVW   // BMOV.32 Bb, Ra: the barrier from a register (uniform)
	xBMOVR   // BMOV.32(.CLEAR) Rd, Bb: the barrier into a register (and cleared)
	xP2R     // P2R Rd, PR, RZ, mask (mma.go)
	xR2P     // R2P PR, Ra, mask (mma.go)
	xSGXT    // SGXT Rd, Ra, width (mma.go)
	xPLOP3   // PLOP3.LUT Pd, PT, Pa, Pb, Pc, lut, 0x0: the truth table over lane masks
	xLDC     // LDC(.U8/.S8/.U16/.S16/.64) Rd, c[bank][Ra+off]: a per-lane constant load
	xMATCH   // MATCH.ANY(.U64) Rd, Ra: the lanes with an equal value
	xFRND    // FRND(.F64)(.FLOOR/.CEIL/.TRUNC) Rd, Ra: round to an integral value
	xLANE3   // Rd = dinst.lane3(a, b, c) per lane (tail.go)
	xHSETP2  // HSETP2: dinst.lane3 compares the halves (tail.go)
	xPLOP3S  // PLOP3.LUT over three registers' sign bits (tail.go)
	xFCHK    // FCHK Pd, Ra, Rb: set in every executing lane (the slow path)
	xTRAP    // BPT.TRAP/INT: fault ErrTrap
	xQSPC    // QSPC.E.{G,S,L} Pd, RZ, [Ra]: the generic address's space (mem_generic.go)
	xB2R     // B2R.RESULT Rd [, Pd]: the warp's last BAR.RED result (barred.go)
	xCALLX   // CALL.ABS: a call to an external function, fault ErrUnsupported when it runs
	xYIELD   // YIELD: the warp ends its turn (a spin loop lets the others run)
	xARRIVES // ARRIVES.LDGSTSBAR.64: an mbarrier arrival after the warp's copies (mbarrier.go)
	xBRADIV  // BRA.DIV/BRA.CONV URa, target: a branch on the warp's convergence (diverge.go)
)

// upBase is the index of UP0 in a warp's predicate file (P0..PT, then
// UP0..UPT): a decoded uniform predicate is upBase+n.
const upBase = 8

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
	bytes    uint8       // the register's bytes the operation uses (poison mode), 0: all four, byteNone: none
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
	// ur: an address's uniform register [Ra+URb+off] (hasUR; URZ is
	// none), a pair URb:URb+1 in a global address
	ur    uint8
	hasUR bool
	// u32: a global address's Ra is a 32-bit offset ([R2.U32+UR4])
	u32 bool
}

// span is a run of registers an instruction reads or writes (poison
// tracking): kind 0 general, 1 predicate, 2 uniform, 3 uniform predicate.
type span struct {
	kind, n, cnt uint8
}

type dinst struct {
	op   xop
	idx  int
	in   *sass.Inst
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
	gen                   bool // LD, ST, ATOM: generic addresses (mem_generic.go)
	special               bool // uni, cond, call or an op from xYIELD on: exec's one test for the rare cases
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

	pred, zfill bool  // LDGSTS with a predicate (ps[0]), .ZFILL (mma.go)
	sbset       uint8 // DEPBAR's scoreboard set

	mma *mmaForm // xMMA's shape and types (mma_tc.go)

	reads  []span
	writes []span

	lane3 func(a, b, c uint32) uint32 // xLANE3's and xHSETP2's operation (tail.go)
	h16   bool                        // F2I, MUFU: a binary16 source; I2F, MUFU: a binary16 result
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
func decodeProgram(p sass.Program) ([]dinst, int) {
	ds := make([]dinst, len(p))
	maxReg := 0
	for k := range p {
		d := &ds[k]
		d.idx = k
		d.in = &p[k]
		if err := decodeInst(d, p[k], len(p)); err != nil {
			*d = dinst{op: xBad, idx: k, in: &p[k], err: err}
		}
		d.special = d.uni || d.cond || d.call != 0 || d.op >= xYIELD
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
		// registers some decoders leave out of reads because the operation
		// checks them itself (LDSM's row addresses, SHFL's source read in
		// other lanes): the register file must still hold them
		for _, m := range [...]maddr{d.mem, d.mem2} {
			if m.base != 255 && int(m.base)+2 > maxReg {
				maxReg = int(m.base) + 2
			}
		}
		for _, s := range d.s {
			if s.k == oReg && int(s.r)+1 > maxReg {
				maxReg = int(s.r) + 1
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
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, a...))
}

func decodeInst(d *dinst, in sass.Inst, plen int) (err error) {
	d.wsb, d.rsb = -1, -1
	if in.Ctrl.WriteSB != sass.NoSB {
		d.wsb = int8(in.Ctrl.WriteSB.Index())
	}
	if in.Ctrl.ReadSB != sass.NoSB {
		d.rsb = int8(in.Ctrl.ReadSB.Index())
	}
	d.wait = in.Ctrl.Wait
	if in.Guard.Set && in.Guard.P != sass.PT {
		gp := uint8(in.Guard.P)
		if in.Guard.Uniform {
			gp += upBase
		}
		d.guarded, d.gp, d.gnot = true, gp, in.Guard.Not
		d.reads = append(d.reads, span{1, gp, 1})
	} else if in.Guard.Set && in.Guard.Not {
		d.guarded, d.gp, d.gnot = true, uint8(sass.PT), true
	}
	c := &decoder{d: d, in: in, a: in.Args, mods: in.Mods, plen: plen}
	o, ok := sass.LookupOp(in.Op)
	if !ok || decoders[o.Sim] == nil {
		return bad("%s", in.Op)
	}
	if err := checkModelled(o.Sim, in); err != nil {
		return err
	}
	if o.General != "" {
		c.in.Op, d.uni, d.uniAll = o.General, true, o.General == "VOTE"
	}
	return decoders[o.Sim](c)
}

// Modifier token groups of the modelled lists below.
const (
	tokCmp   = "F LT EQ LE GT NE GE NUM NAN LTU EQU LEU GTU NEU GEU T "
	tokLogic = "AND OR XOR "
	tokRnd   = "RM RP RZ "
	tokWidth = "U8 S8 U16 S16 32 64 128 "
	// cache eviction and L2 prefetch hints, memory ordering and scope:
	// nothing the functional model computes depends on them (STRONG is
	// read: such accesses run under the memory's lock)
	tokCache = "E EF EL EU LU NA VC LTC64B LTC128B LTC256B CONSTANT PRIVATE MMIO STRONG CTA SM GPU SYS "
	tokAtom  = "ADD MIN MAX INC DEC AND OR XOR EXCH CAS "
)

// modelled lists, for each simulator operation, the modifier tokens its
// decoder reads or that do not change what the instruction computes. An
// instruction carrying any other token is refused (ErrUnsupported) instead
// of running as if the token were absent: a form the opcode table learnt
// to encode and print (HFMA2.SAT, F2FP.RZ, BAR.RED, LEA.HI.SX32, ...) is
// not simulated until its decoder reads the token and this list names it.
var modelled = [sass.NumSimOps]string{
	sass.SimNop:          "SC ALL CTA SM GPU SYS VC " + /* MEMBAR */ "E U C PF1 PF2 WB IV RS PML2 DML2 RML2 IVALL IVALLP " + /* CCTL */ "WARP RAND", // NANOSLEEP
	sass.SimWarpSync:     "ALL EXCLUSIVE",
	sass.SimBranch:       "DIV CONV",
	sass.SimCall:         "REL NOINC ABS",
	sass.SimIndirect:     "REL NODEC",
	sass.SimS2R:          "32",
	sass.SimULDC:         "64",
	sass.SimIMAD:         "MOV U32 SHL IADD HI WIDE X",
	sass.SimIADD3:        "X",
	sass.SimLOP3:         "LUT",
	sass.SimSHF:          "L R HI W S32 S64 U32 U64",
	sass.SimLEA:          "HI X SX32 _NOTPT",
	sass.SimSelect:       "FTZ U32 NAN XORSIGN",
	sass.SimPRMT:         "F4E B4E RC8 ECL ECR RC16",
	sass.SimSetP:         tokCmp + tokLogic + "EX FTZ U32",
	sass.SimDouble:       tokRnd,
	sass.SimREDUX:        "OR XOR SUM MIN MAX S32",
	sass.SimDSETP:        tokCmp + tokLogic + "MIN MAX",
	sass.SimFloat:        tokRnd + "FTZ SAT",
	sass.SimMUFU:         "COS SIN EX2 LG2 RCP RSQ RCP64H RSQ64H SQRT TANH F16",
	sass.SimF2FP:         "BF16 PACK_AB RELU RZ F32 SATFINITE E4M3 E5M2 PACK_AB_MERGE_C MERGE_C",
	sass.SimI2F:          tokRnd + "F16 F32 F64 S8 U8 S16 U16 S32 U32 S64 U64",
	sass.SimF2I:          "FLOOR CEIL TRUNC FTZ NTZ F16 F64 U8 S8 U16 S16 U32 S64 U64",
	sass.SimF2F:          tokRnd + "F16 BF16 F32 F64",
	sass.SimHalf:         "BF16_V2 F32 FTZ SAT RELU",
	sass.SimHMMA:         "16816 1688 1684 16832 F32 F16 BF16 TF32 SP",
	sass.SimIMMA:         "8816 8832 16816 16832 16864 168128 U8 S8 U4 S4 SAT SP",
	sass.SimBMMA:         "88128 168128 168256 AND XOR POPC",
	sass.SimDMMA:         "884 " + tokRnd,
	sass.SimMOVM:         "16 MT88",
	sass.SimBMOV:         "32 CLEAR",
	sass.SimLoad:         tokWidth + tokCache,
	sass.SimStore:        tokWidth + tokCache,
	sass.SimLDSM:         "16 M88 MT88 2 4",
	sass.SimLDGSTS:       "E BYPASS 32 64 128 LTC64B LTC128B ZFILL EF EL LU EU NA",
	sass.SimDEPBAR:       "LE",
	sass.SimBAR:          "SYNC ARV DEFER_BLOCKING RED POPC AND OR",
	sass.SimSHFL:         "IDX UP DOWN BFLY",
	sass.SimGlobalAtomic: tokAtom + tokCache + "64 S32 S64 F32 FTZ RN F16x2 BF16x2 F64",
	sass.SimATOMS:        tokAtom + "CAST SPIN POPC 32 64 S32 ARRIVE",
	sass.SimFRND:         "F64 F16 FLOOR CEIL TRUNC FTZ",
	sass.SimBitUnary:     "SH U32",
	sass.SimMATCH:        "ANY U64",
	sass.SimVOTE:         "ALL ANY EQ",
	sass.SimP2R:          "B1 B2 B3",
	sass.SimSGXT:         "U32 W",
	sass.SimPLOP3:        "LUT",
	sass.SimLDC:          tokWidth,
	sass.SimLane3:        tokCmp + tokLogic + "U32 ACC U8 S8 U16 S16 S32 4A 2A LO HI W SAT BF16_V2 NAN BF FTZ XORSIGN F32 TRUNC NTZ",
	sass.SimHSETP2:       tokCmp + tokLogic + "H_AND FTZ",
	sass.SimFCHK:         "DIVIDE",
	sass.SimTrap:         "TRAP INT",
	sass.SimGeneric:      tokWidth + tokCache + tokAtom + "S32 S64 F32 FTZ RN F16x2 F64",
	sass.SimQSPC:         "E G S L",
	sass.SimB2R:          "RESULT",
	sass.SimARRIVES:      "LDGSTSBAR 64",
}

var (
	modelledOnce sync.Once
	modelledSet  [sass.NumSimOps]map[string]bool
)

// checkModelled refuses an instruction with a modifier token outside its
// operation's modelled list.
func checkModelled(op sass.SimOp, in sass.Inst) error {
	modelledOnce.Do(func() {
		for k, l := range modelled {
			modelledSet[k] = map[string]bool{}
			for _, t := range strings.Fields(l) {
				modelledSet[k][t] = true
			}
		}
	})
	for _, m := range in.Mods {
		if !modelledSet[op][m] {
			return bad("%s: modifier .%s not modelled", in.Op, m)
		}
	}
	return nil
}

// decoders is the simulator's decoder for each operation of the opcode
// table (sass.SimOp).
var decoders = [sass.NumSimOps]func(*decoder) error{
	sass.SimNop:          (*decoder).decNop,
	sass.SimConvBarrier:  (*decoder).decConvBarrier,
	sass.SimWarpSync:     (*decoder).decWarpSync,
	sass.SimCall:         (*decoder).decCall,
	sass.SimIndirect:     (*decoder).decIndirect,
	sass.SimBranch:       (*decoder).decBranch,
	sass.SimMove:         (*decoder).decMove,
	sass.SimS2R:          (*decoder).decS2R,
	sass.SimS2UR:         (*decoder).decS2UR,
	sass.SimULDC:         (*decoder).decULDC,
	sass.SimIMAD:         (*decoder).decIMAD,
	sass.SimIADD3:        (*decoder).decIADD3,
	sass.SimLOP3:         (*decoder).decLOP3,
	sass.SimSHF:          (*decoder).decSHF,
	sass.SimLEA:          (*decoder).decLEA,
	sass.SimSelect:       (*decoder).decSelect,
	sass.SimPRMT:         (*decoder).decPRMT,
	sass.SimSetP:         (*decoder).decSetP,
	sass.SimDouble:       (*decoder).decDouble,
	sass.SimREDUX:        (*decoder).decREDUX,
	sass.SimDSETP:        (*decoder).decDSETP,
	sass.SimFloat:        (*decoder).decFloat,
	sass.SimMUFU:         (*decoder).decMUFU,
	sass.SimF2FP:         (*decoder).decF2FP,
	sass.SimI2F:          (*decoder).decI2F,
	sass.SimF2I:          (*decoder).decF2I,
	sass.SimF2F:          (*decoder).decF2F,
	sass.SimHalf:         (*decoder).decHalf,
	sass.SimHMMA:         (*decoder).decHMMA,
	sass.SimIMMA:         (*decoder).decIMMA,
	sass.SimBMMA:         (*decoder).decBMMA,
	sass.SimDMMA:         (*decoder).decDMMA,
	sass.SimMOVM:         (*decoder).decMOVM,
	sass.SimBMOV:         (*decoder).decBMOV,
	sass.SimLoad:         (*decoder).decLoad,
	sass.SimStore:        (*decoder).decStore,
	sass.SimLDSM:         (*decoder).decLDSM,
	sass.SimLDGSTS:       (*decoder).decLDGSTS,
	sass.SimLDGDEPBAR:    (*decoder).decLDGDEPBAR,
	sass.SimDEPBAR:       (*decoder).decDEPBAR,
	sass.SimBAR:          (*decoder).decBAR,
	sass.SimSHFL:         (*decoder).decSHFL,
	sass.SimGlobalAtomic: (*decoder).decGlobalAtomic,
	sass.SimATOMS:        (*decoder).decATOMS,
	sass.SimFRND:         (*decoder).decFRND,
	sass.SimBitUnary:     (*decoder).decBitUnary,
	sass.SimMATCH:        (*decoder).decMATCH,
	sass.SimVOTE:         (*decoder).decVOTE,
	sass.SimP2R:          (*decoder).decP2R,
	sass.SimSGXT:         (*decoder).decSGXT,
	sass.SimPLOP3:        (*decoder).decPLOP3,
	sass.SimLDC:          (*decoder).decLDC,
	sass.SimLane3:        (*decoder).decLane3,
	sass.SimHSETP2:       (*decoder).decHSETP2,
	sass.SimFCHK:         (*decoder).decFCHK,
	sass.SimTrap:         (*decoder).decTrap,
	sass.SimGeneric:      (*decoder).decGeneric,
	sass.SimQSPC:         (*decoder).decQSPC,
	sass.SimB2R:          (*decoder).decB2R,
	sass.SimARRIVES:      (*decoder).decARRIVES,
}

// decLane3 decodes the forms that compute one register from up to three
// sources lane by lane (lane3Of, tail.go): VABSDIFF(4), IDP, BMSK, I2I,
// HSET2 and HMNMX2 with a constant predicate, PRMT's modes, SGXT by a
// register, packed halves with source modifiers.
// joinHalves joins an immediate pair (H1 first: mma.go) into one operand:
// HMUL2's B, HFMA2's B or C, HSET2's, HSETP2's and HMNMX2's B.
func (c *decoder) joinHalves() {
	for k := 2; k+1 < len(c.a); k++ {
		if hk := c.a[k].Kind; (hk == sass.KHalf || hk == sass.KBF16) && c.a[k+1].Kind == hk {
			c.a = append(append(c.a[:k:k], halfPair(c.a[k], c.a[k+1])), c.a[k+2:]...)
			c.in.Args = c.a
			return
		}
	}
}

func (c *decoder) decLane3() error {
	d := c.d
	c.joinHalves()
	if !tailLane3(c.in) {
		return bad("%s: form not modelled", c.in.Op)
	}
	fn, n, err := lane3Of(c.in)
	if err != nil {
		return err
	}
	if len(c.a) < n+1 {
		return bad("%s: %d operands", c.in.Op, len(c.a))
	}
	d.op, d.lane3, d.n = xLANE3, fn, n
	for k := 0; k < n; k++ {
		if err := c.src(c.a[k+1], k, 1); err != nil {
			return err
		}
	}
	return c.dst(c.a[0], 1)
}

// decHSETP2 decodes HSETP2: both predicates from the halves' comparison.
func (c *decoder) decHSETP2() error {
	d, mods := c.d, c.mods
	c.joinHalves()
	cmp, ok := hcmpOf(c.in)
	if !ok || len(c.a) != 5 {
		return bad("HSETP2.%v", mods)
	}
	d.op, d.logic = xHSETP2, logicOf(mods)
	d.lane3 = func(x, y, _ uint32) uint32 { return cmp(x, y) }
	return c.setpOperands(1)
}

// decFCHK decodes FCHK Pd, Ra, Rb, the range check of ptxas's IEEE
// division (div.rn.f32, rcp.rn): Pd set sends the lane to the full-range
// software path, clear keeps the fast one. The model sets it in every lane:
// the slow path computes the correctly rounded quotient for every input,
// so only the instruction count differs from hardware (documented).
func (c *decoder) decFCHK() error {
	d := c.d
	if err := c.want(sass.KPred, sass.KReg, sass.KReg); err != nil {
		return err
	}
	d.op = xFCHK
	if err := c.pdst(c.a[0]); err != nil {
		return err
	}
	if err := c.src(c.a[1], 0, 1); err != nil {
		return err
	}
	return c.src(c.a[2], 1, 1)
}

// decTrap decodes BPT.TRAP and BPT.INT: executing either faults.
func (c *decoder) decTrap() error {
	c.d.op = xTRAP
	return nil
}

// decATOMSPopcInc decodes ATOMS.POPC.INC.32 RZ, [Ra+URZ+off]: ptxas's
// shared atomic add of 1 whose old value nobody reads (the corpus's
// shared_hist: atom.shared.add.u32 _, [bin], 1). The hardware adds the
// count of lanes at each address; the model adds 1 per lane, atomically,
// which leaves the same memory.
func (c *decoder) decATOMSPopcInc() error {
	d := c.d
	if !has(c.mods, "INC") || len(c.a) != 2 || c.a[0].Kind != sass.KReg || c.a[0].N != 255 {
		return bad("ATOMS.%v: only the form with no result is modelled", c.mods)
	}
	if err := c.sharedUAddr(c.a[1]); err != nil {
		return err
	}
	d.op, d.shm, d.width, d.n, d.sub = xATOM, true, 4, 0, 0 // ADD
	d.s[0] = sopnd{k: oImm, v: 1}
	return c.dst(c.a[0], 1)
}

// setpOperands decodes the operands every compare-and-set-predicate
// instruction (ISETP, FSETP, DSETP, HSETP2) shares: Pd, Pe, a, b (cnt
// registers each), Pc.
func (c *decoder) setpOperands(cnt int) error {
	if err := c.pdst(c.a[0]); err != nil {
		return err
	}
	if err := c.pdst(c.a[1]); err != nil {
		return err
	}
	if err := c.src(c.a[2], 0, cnt); err != nil {
		return err
	}
	if err := c.src(c.a[3], 1, cnt); err != nil {
		return err
	}
	return c.psrcOf(c.a[4], 0)
}

// decoder holds one instruction being decoded: the dinst it fills, the
// instruction (a uniform opcode already renamed to the general one it
// computes as), its operands (which a decoder may narrow as it consumes a
// leading predicate or carry) and modifiers.
type decoder struct {
	d    *dinst
	in   sass.Inst
	a    []sass.Operand
	mods []string
	plen int
}

// kindOK: a uniform instruction's registers and predicates are uniform
// ones where the general opcode names general ones.
func (c *decoder) kindOK(got, want sass.Kind) bool {
	d := c.d
	return got == want || d.uni && (want == sass.KReg && got == sass.KUReg || want == sass.KPred && got == sass.KUPred)
}

func (c *decoder) want(kinds ...sass.Kind) error {
	in, a := c.in, c.a
	if len(a) != len(kinds) {
		return bad("%s: %d operands, want %d", in.Op, len(a), len(kinds))
	}
	for i, k := range kinds {
		if k != sass.KNone && !c.kindOK(a[i].Kind, k) {
			return bad("%s: operand %d is a %v, want a %v", in.Op, i, a[i].Kind, k)
		}
	}
	return nil
}

// dst marks a general register destination of cnt registers (a uniform
// one for a uniform instruction: the result lands in the discard
// registers and is copied to UR[ud]).
func (c *decoder) dst(o sass.Operand, cnt int) error {
	d, in := c.d, c.in
	if o.Kind == sass.KUReg && d.uni {
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
	if o.Kind != sass.KReg {
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

func (c *decoder) pdst(o sass.Operand) error {
	d, in := c.d, c.in
	if o.Kind == sass.KUPred && d.uni {
		d.pd[d.npd] = upBase + o.N
		d.npd++
		if o.N != uint8(sass.UPT) {
			d.writes = append(d.writes, span{3, upBase + o.N, 1})
		}
		return nil
	}
	if o.Kind != sass.KPred {
		return bad("%s: predicate destination is a %v", in.Op, o.Kind)
	}
	d.pd[d.npd] = o.N
	d.npd++
	if o.N != uint8(sass.PT) {
		d.writes = append(d.writes, span{1, o.N, 1})
	}
	return nil
}

func (c *decoder) psrcOf(o sass.Operand, k int) error {
	d, in := c.d, c.in
	if o.Kind == sass.KUPred {
		// a uniform predicate: all lanes or none
		d.ps[k] = psrc{upBase + o.N, o.Not}
		if o.N != uint8(sass.UPT) {
			d.reads = append(d.reads, span{1, upBase + o.N, 1})
		}
		return nil
	}
	if o.Kind != sass.KPred {
		return bad("%s: predicate source is a %v", in.Op, o.Kind)
	}
	d.ps[k] = psrc{o.N, o.Not}
	if o.N != uint8(sass.PT) {
		d.reads = append(d.reads, span{1, o.N, 1})
	}
	return nil
}

// halfBytes is the bytes of a register source that a half-precision
// operation uses: one half of a packed-half source under .H0_H0 or .H1_H1,
// and of each HADD2.F32 source (its low half unless .H1_H1); 0 (all) for
// any other source.
func halfBytes(in *sass.Inst, o sass.Operand) uint8 {
	switch in.Op {
	case "HADD2", "HMUL2", "HFMA2":
	default:
		return 0
	}
	switch {
	case o.Sel == ".H1_H1":
		return 0xc
	case o.Sel == ".H0_H0" || in.HasMod("F32"):
		return 0x3
	}
	return 0
}

// src decodes a source of cnt consecutive registers (a 64-bit constant
// when cnt is 2).
func (c *decoder) src(o sass.Operand, k, cnt int) error {
	d, in := c.d, c.in
	s := &d.s[k]
	s.neg, s.abs, s.not = o.Neg, o.Abs, o.Not
	s.hiHalf = o.Sel == ".H1_H1"
	switch o.Kind {
	case sass.KReg:
		if o.N == 255 {
			s.k = oZero
			return nil
		}
		if int(o.N)+cnt-1 > 254 {
			return bad("%s: register tuple R%d..R%d", in.Op, o.N, int(o.N)+cnt-1)
		}
		s.k, s.r = oReg, o.N
		d.reads = append(d.reads, span{0, o.N, uint8(cnt)})
		s.bytes = halfBytes(&c.in, o)
	case sass.KDouble:
		// a double immediate is the value's high word
		s.k, s.v, s.v2 = oImm, 0, uint32(o.Imm)
	case sass.KImm, sass.KFloat:
		s.k, s.v = oImm, uint32(o.Imm)
		if cnt == 2 && o.Kind == sass.KImm && o.Imm < 0 {
			s.v2 = 0xffffffff
		}
	case sass.KCBank:
		if o.Indexed && o.N != 255 {
			return bad("%s: indexed constant not modelled", in.Op)
		}
		s.k, s.bank, s.off = oConst, o.Bank, o.Imm
	case sass.KUReg:
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

func (c *decoder) memOf(o sass.Operand, global bool) (maddr, error) {
	d, in := c.d, c.in
	if o.Kind != sass.KMem {
		return maddr{}, bad("%s: address operand is a %v", in.Op, o.Kind)
	}
	m := maddr{base: o.N, w64: o.W64, scale: int64(o.Scale), off: o.Imm}
	if m.scale == 0 {
		m.scale = 1
	}
	if o.UIndex && o.Desc != 63 {
		// [Ra+URb+off]: URb (in Desc) adds to every lane's address; a
		// global address's URb is a 64-bit pair ([R2.U32+UR4]: a 64-bit
		// base and a 32-bit offset)
		ucnt := uint8(1)
		if global {
			ucnt = 2
			if o.Desc > 61 {
				return maddr{}, bad("%s: uniform address pair UR%d", in.Op, o.Desc)
			}
		}
		m.ur, m.hasUR = o.Desc, true
		d.reads = append(d.reads, span{2, o.Desc, ucnt})
	}
	if o.N != 255 {
		cnt := 1
		if global && !o.U32 {
			cnt = 2
			if o.N > 253 {
				return maddr{}, bad("%s: address pair R%d", in.Op, o.N)
			}
		}
		m.u32 = global && o.U32
		d.reads = append(d.reads, span{0, o.N, uint8(cnt)})
	}
	return m, nil
}

func (c *decoder) widthOf() (int, bool) {
	mods := c.mods
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

func (c *decoder) regs(w int) int {
	if w <= 4 {
		return 1
	}
	return w / 4
}

// decNop decodes NOP, MEMBAR, ERRBAR, CCTL, NANOSLEEP.
func (c *decoder) decNop() error {
	d := c.d
	d.op = xNOP
	if c.in.Op == "YIELD" {
		d.op = xYIELD
	}
	return nil
}

// decConvBarrier decodes BSSY, BSYNC, BREAK.
func (c *decoder) decConvBarrier() error {
	d, in := c.d, c.in
	kinds := []sass.Kind{sass.KBar}
	if in.Op == "BSSY" {
		kinds = append(kinds, sass.KTarget)
	}
	if err := c.want(kinds...); err != nil {
		return err
	}
	if c.a[0].N > 15 {
		return bad("%s: barrier B%d", in.Op, c.a[0].N)
	}
	d.op, d.sub = map[sass.Op]xop{"BSSY": xBSSY, "BSYNC": xBSYNC, "BREAK": xBREAK}[in.Op], c.a[0].N
	return nil
}

// decWarpSync decodes WARPSYNC.
func (c *decoder) decWarpSync() error {
	d, mods := c.d, c.mods
	if len(mods) == 1 && mods[0] == "ALL" && len(c.a) == 0 {
		d.op, d.n = xWARPSYNC, -1
		return nil
	}
	excl := len(mods) == 1 && mods[0] == "EXCLUSIVE"
	if len(c.a) == 1 && c.a[0].Kind == sass.KReg && (len(mods) == 0 || excl) {
		// WARPSYNC Ra: the mask from a register, one value for the
		// group (checked where it runs). WARPSYNC.EXCLUSIVE Ra runs as
		// WARPSYNC Ra: the name says no lane outside the mask takes part,
		// which a correct program's mask meets anyway (inferred, not
		// measured).
		d.op, d.x = xWARPSYNC, true
		return c.src(c.a[0], 0, 1)
	}
	if len(mods) != 0 {
		return bad("WARPSYNC.%v", mods)
	}
	if err := c.want(sass.KImm); err != nil {
		return err
	}
	d.op, d.n = xWARPSYNC, int(uint32(c.a[0].Imm))
	return nil
}

// decCall decodes CALL.
func (c *decoder) decCall() error {
	d, mods, plen := c.d, c.mods, c.plen
	// CALL.ABS(.NOINC) calls an external function (vprintf) at the
	// address the driver's relocation fills in: the simulator links none,
	// so the call faults (ErrUnsupported) if a lane reaches it, and a
	// kernel whose printf path is not taken runs.
	if has(mods, "ABS") {
		d.op = xCALLX
		return nil
	}
	// CALL.REL.NOINC pushes nothing (the caller passes the return
	// address in registers): a relative branch.
	if !has(mods, "REL") || !has(mods, "NOINC") {
		return bad("CALL: only CALL.REL.NOINC is modelled")
	}
	if len(c.a) == 2 {
		return c.decCallReg()
	}
	if err := c.want(sass.KTarget); err != nil {
		return err
	}
	t, err := branchTarget(d.idx, c.a[0].Imm, plen)
	if err != nil {
		return err
	}
	d.op, d.target, d.call = xBRA, t, 1
	return nil
}

// decIndirect decodes RET, BRX, BRXU.
func (c *decoder) decIndirect() error {
	d, in, mods := c.d, c.in, c.mods
	// RET.REL.NODEC Ra and BRX Ra: the target is the byte offset
	// Ra + (next instruction + offset) in every lane, as nvdisasm
	// prints it (ptxas sets Ra to a function-relative address and
	// the offset to minus the next instruction's).
	if in.Op == "RET" && (!has(mods, "REL") || !has(mods, "NODEC")) {
		return bad("RET: only RET.REL.NODEC is modelled")
	}
	rk := sass.KReg
	if in.Op == "BRXU" {
		rk = sass.KUReg
	}
	if err := c.want(rk, sass.KNone); err != nil {
		return err
	}
	if c.a[1].Kind != sass.KTarget && c.a[1].Kind != sass.KImm {
		return bad("%s: operand 1 is c.a %v, want an offset", in.Op, c.a[1].Kind)
	}
	if err := c.src(c.a[0], 0, 1); err != nil {
		return err
	}
	d.op, d.n = xBRX, 16*(d.idx+1)+int(c.a[1].Imm)
	if in.Op == "RET" {
		d.call = -1
	}
	return nil
}

// decBranch decodes EXIT, BRA.
func (c *decoder) decBranch() error {
	d, in, plen := c.d, c.in, c.plen
	// EXIT P and BRA P, target: the predicate operand narrows the
	// guard's lanes (ptxas's @!P1 BRA P2, 0x1e70 in the project's sg
	// kernels, taken where !P1 and P2: inferred from the code around
	// it, and @!P0 EXIT P1 in the corpus's tile_index)
	if len(c.a) > 0 && c.a[0].Kind == sass.KPred {
		d.cond = true
		if err := c.psrcOf(c.a[0], 0); err != nil {
			return err
		}
		c.a = c.a[1:]
	}
	if in.Op == "EXIT" {
		d.op = xEXIT
		return c.want()
	}
	if has(c.mods, "DIV") || has(c.mods, "CONV") {
		if err := c.want(sass.KUReg, sass.KTarget); err != nil {
			return err
		}
		if err := c.src(c.a[0], 0, 1); err != nil {
			return err
		}
		t, err := branchTarget(d.idx, c.a[1].Imm, plen)
		if err != nil {
			return err
		}
		d.op, d.target, d.hi = xBRADIV, t, has(c.mods, "CONV")
		return nil
	}
	if err := c.want(sass.KTarget); err != nil {
		return err
	}
	t, err := branchTarget(d.idx, c.a[0].Imm, plen)
	if err != nil {
		return err
	}
	d.op, d.target = xBRA, t
	return nil
}

// decMove decodes MOV.
func (c *decoder) decMove() error {
	d := c.d
	if d.uni && len(c.a) == 3 && c.a[0].Kind == sass.KPred {
		// nvcc's @P0 R2UR P1, UR4, R2 (issue #32): ptxas 11.8 was not
		// seen to emit it for the CUDA and PTX tried, so what P1 holds
		// is not known
		return bad("R2UR with a predicate result (%v): its meaning is not known", sass.Pred(c.a[0].N))
	}
	if err := c.want(sass.KReg, sass.KNone); err != nil {
		return err
	}
	if d.uni && c.a[1].Kind != sass.KReg {
		return bad("R2UR: source is a %v", c.a[1].Kind)
	}
	d.op = xMOV
	if err := c.src(c.a[1], 0, 1); err != nil {
		return err
	}
	return c.dst(c.a[0], 1)
}

// decS2R decodes S2R, CS2R.
func (c *decoder) decS2R() error {
	d, in, mods := c.d, c.in, c.mods
	if err := c.want(sass.KReg, sass.KSpecial); err != nil {
		return err
	}
	d.op, d.sub = xS2R, c.a[1].N
	cnt := 1
	if in.Op == "CS2R" && !has(mods, "32") {
		d.op, cnt = xCS2R, 2
	}
	return c.dst(c.a[0], cnt)
}

// decS2UR decodes S2UR.
func (c *decoder) decS2UR() error {
	d := c.d
	if err := c.want(sass.KUReg, sass.KSpecial); err != nil {
		return err
	}
	d.op, d.sub, d.d = xS2UR, c.a[1].N, c.a[0].N
	d.writes = append(d.writes, span{2, c.a[0].N, 1})
	return nil
}

// decULDC decodes ULDC, UMOV.
func (c *decoder) decULDC() error {
	d, in, mods := c.d, c.in, c.mods
	if in.Op == "ULDC" && len(c.a) == 2 && c.a[1].Kind == sass.KCBank && c.a[1].Indexed {
		// ULDC URd, c[bank][URa+off]: LDC with a uniform index
		c.in.Op, d.uni = "LDC", true
		return c.decLDC()
	}
	if err := c.want(sass.KUReg, sass.KNone); err != nil {
		return err
	}
	cnt := 1
	if has(mods, "64") {
		cnt = 2
	}
	d.op, d.d, d.n = xULDC, c.a[0].N, cnt
	if c.a[0].N != 63 {
		if int(c.a[0].N)+cnt-1 > 62 {
			return bad("%s: uniform tuple", in.Op)
		}
		d.writes = append(d.writes, span{2, c.a[0].N, uint8(cnt)})
	}
	return c.src(c.a[1], 0, cnt)
}

// decIMAD decodes IMAD.
func (c *decoder) decIMAD() error {
	d, mods := c.d, c.mods
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
		if err := c.want(sass.KReg, sass.KReg, sass.KNone, sass.KNone, sass.KPred); err != nil {
			return err
		}
		if err := c.psrcOf(c.a[4], 0); err != nil {
			return err
		}
	} else if d.op != xIMAD && len(c.a) == 5 && c.a[1].Kind == sass.KPred {
		// IMAD.HI/IMAD.WIDE Rd, Pc, a, b, c: Pc is the carry out of
		// the 64-bit sum (ptxas's 64-bit division and mul.hi.u64)
		if err := c.pdst(c.a[1]); err != nil {
			return err
		}
		c.a = append(c.a[:1:1], c.a[2:]...)
	} else if err := c.want(sass.KReg, sass.KReg, sass.KNone, sass.KNone); err != nil {
		return err
	}
	if err := c.src(c.a[1], 0, 1); err != nil {
		return err
	}
	if err := c.src(c.a[2], 1, 1); err != nil {
		return err
	}
	if err := c.src(c.a[3], 2, cnt); err != nil {
		return err
	}
	if d.op == xIMADHI {
		return c.dst(c.a[0], 1)
	}
	return c.dst(c.a[0], cnt)
}

// decIADD3 decodes IADD3.
func (c *decoder) decIADD3() error {
	d, mods := c.d, c.mods
	d.op = xIADD3
	d.x = has(mods, "X")
	if len(c.a) < 4 || len(c.a) > 7 || len(c.a) == 7 && !d.x {
		return bad("IADD3: %d operands", len(c.a))
	}
	var srcs []sass.Operand
	if d.x {
		if len(c.a) == 7 {
			// IADD3.X Rd, Pc, a, b, c, Px, Py: Pc the carry out
			if err := c.pdst(c.a[1]); err != nil {
				return err
			}
			c.a = append(c.a[:1:1], c.a[2:]...)
		}
		if len(c.a) != 6 {
			return bad("IADD3.X: %d operands", len(c.a))
		}
		srcs = c.a[1:4]
		if err := c.psrcOf(c.a[4], 0); err != nil {
			return err
		}
		if err := c.psrcOf(c.a[5], 1); err != nil {
			return err
		}
	} else {
		srcs = c.a[len(c.a)-3:]
		for _, p := range c.a[1 : len(c.a)-3] {
			if err := c.pdst(p); err != nil {
				return err
			}
		}
	}
	for k, o := range srcs {
		if err := c.src(o, k, 1); err != nil {
			return err
		}
	}
	return c.dst(c.a[0], 1)
}

// decLOP3 decodes LOP3.
func (c *decoder) decLOP3() error {
	d, mods := c.d, c.mods
	if len(c.a) == 7 {
		// LOP3.LUT P, R, A, B, C, lut, Q: P is set where the result is
		// not zero or Q is true. The OR is inferred from ptxas's test
		// of a 64-bit (x & m) != 0 in the project's sg kernels
		// (LOP3.LUT P0, RZ, R10, UR8, RZ, 0xc0, !PT, then LOP3.LUT P0,
		// RZ, R15, UR9, RZ, 0xc0, P0); with !PT, ptxas's usual input,
		// P is just result != 0.
		if len(mods) != 1 || mods[0] != "LUT" {
			return bad("LOP3.%v with c.a predicate output", mods)
		}
		if err := c.pdst(c.a[0]); err != nil {
			return err
		}
		if err := c.psrcOf(c.a[6], 0); err != nil {
			return err
		}
		c.a = c.a[1:]
	} else {
		d.ps[0] = psrc{uint8(sass.PT), true}
	}
	if len(c.a) != 5 && len(c.a) != 6 {
		return bad("LOP3: %d operands", len(c.a))
	}
	if c.a[4].Kind != sass.KImm {
		return bad("LOP3: truth table is c.a %v", c.a[4].Kind)
	}
	d.op, d.sub = xLOP3, uint8(c.a[4].Imm)
	for k := 0; k < 3; k++ {
		if err := c.src(c.a[k+1], k, 1); err != nil {
			return err
		}
	}
	for k := range 3 {
		d.s[k].bytes = byteMask(lop3Used(d.sub, k, &d.s))
	}
	return c.dst(c.a[0], 1)
}

// byteNone marks a source none of whose bytes the operation uses.
const byteNone = 0x10

// byteMask is sopnd.bytes for the source bits used.
func byteMask(bits uint32) uint8 {
	var m uint8
	for b := range 4 {
		if bits>>(8*b)&0xff != 0 {
			m |= 1 << b
		}
	}
	switch m {
	case 0:
		return byteNone
	case 0xf:
		return 0
	}
	return m
}

// known is a source's value when the decoder knows it (an immediate, RZ).
func (s *sopnd) known() (uint32, bool) {
	switch s.k {
	case oZero:
		return 0, true
	case oImm:
		return s.v, true
	}
	return 0, false
}

// lop3Used is the bits of LOP3's source k that can change its result,
// the other sources at their known values or free: the truth table and an
// immediate mask decide (LOP3.LUT R0, R17, 0xffff, RZ, 0xc0, !PT uses
// R17's low half only).
func lop3Used(lut uint8, k int, s *[4]sopnd) uint32 {
	var used uint32
	for free := range 4 {
		var v [3]uint32
		for j, f := 0, 0; j < 3; j++ {
			if j == k {
				continue
			}
			if x, ok := s[j].known(); ok {
				v[j] = x
			} else if free>>f&1 != 0 {
				v[j] = 0xffffffff
			}
			f++
		}
		v0, v1 := v, v
		v1[k] = 0xffffffff
		used |= lop3(lut, v0[0], v0[1], v0[2]) ^ lop3(lut, v1[0], v1[1], v1[2])
	}
	return used
}

// decSHF decodes SHF.
func (c *decoder) decSHF() error {
	d, mods := c.d, c.mods
	if err := c.want(sass.KReg, sass.KReg, sass.KNone, sass.KNone); err != nil {
		return err
	}
	d.op = xSHF
	d.left = has(mods, "L")
	d.hi = has(mods, "HI")
	d.x = has(mods, "W") // wrap
	d.wide = has(mods, "U64") || has(mods, "S64")
	d.signed = has(mods, "S64") || has(mods, "S32")
	for k := 0; k < 3; k++ {
		if err := c.src(c.a[k+1], k, 1); err != nil {
			return err
		}
	}
	if n, ok := d.s[1].known(); ok {
		// a constant shift uses the bits it keeps (SHF.R.U32.HI R0, RZ,
		// 0x10, R17: R17's high half); SHF is linear in a and c, so a
		// bit is used when it alone gives a nonzero result
		lim := uint32(32)
		if d.wide {
			lim = 64
		}
		var ua, uc uint32
		for j := range 32 {
			if shf(d, lim, 1<<j, n, 0) != 0 {
				ua |= 1 << j
			}
			if shf(d, lim, 0, n, 1<<j) != 0 {
				uc |= 1 << j
			}
		}
		d.s[0].bytes, d.s[2].bytes = byteMask(ua), byteMask(uc)
	}
	return c.dst(c.a[0], 1)
}

// decLEA decodes LEA.
func (c *decoder) decLEA() error {
	d, mods := c.d, c.mods
	d.hi, d.x = has(mods, "HI"), has(mods, "X")
	if !d.hi {
		d.op = xLEA
		switch len(c.a) {
		case 4:
		case 5:
			if err := c.pdst(c.a[1]); err != nil {
				return err
			}
		default:
			return bad("LEA: %d operands", len(c.a))
		}
		n := len(c.a)
		if err := c.src(c.a[n-3], 0, 1); err != nil {
			return err
		}
		if err := c.src(c.a[n-2], 1, 1); err != nil {
			return err
		}
		if c.a[n-1].Kind != sass.KImm {
			return bad("LEA: shift is c.a %v", c.a[n-1].Kind)
		}
		d.sub = uint8(c.a[n-1].Imm & 31)
		return c.dst(c.a[0], 1)
	}
	d.op = xLEAHI
	// .SX32 has no high-word source: the high word is a's sign
	// (LEA.HI.X.SX32 R27, R27, ~R26, 0x1, P2; tail_int.ptx simd)
	d.signed = has(mods, "SX32")
	ns := 3
	if d.signed {
		ns = 2
	}
	want := ns + 2
	if d.x {
		want++
	}
	if len(c.a) != want {
		return bad("LEA.HI: %d operands", len(c.a))
	}
	if d.x {
		if err := c.psrcOf(c.a[want-1], 0); err != nil {
			return err
		}
	}
	for k := 0; k < ns; k++ {
		if err := c.src(c.a[k+1], k, 1); err != nil {
			return err
		}
	}
	if c.a[ns+1].Kind != sass.KImm {
		return bad("LEA: shift is c.a %v", c.a[ns+1].Kind)
	}
	d.sub = uint8(c.a[ns+1].Imm & 31)
	return c.dst(c.a[0], 1)
}

// decSelect decodes IMNMX, SEL, FSEL, FMNMX.
func (c *decoder) decSelect() error {
	d, in, mods := c.d, c.in, c.mods
	if err := c.want(sass.KReg, sass.KNone, sass.KNone, sass.KPred); err != nil {
		return err
	}
	switch in.Op {
	case "IMNMX":
		d.op, d.u32 = xIMNMX, has(mods, "U32")
	case "FMNMX":
		if has(mods, "NAN") || has(mods, "XORSIGN") {
			return c.decFMNMXNaN()
		}
		d.op, d.ftz = xFMNMX, has(mods, "FTZ")
	default:
		d.op = xSEL
	}
	if err := c.src(c.a[1], 0, 1); err != nil {
		return err
	}
	if err := c.src(c.a[2], 1, 1); err != nil {
		return err
	}
	if err := c.psrcOf(c.a[3], 0); err != nil {
		return err
	}
	return c.dst(c.a[0], 1)
}

// decFMNMXNaN decodes FMNMX.NAN and FMNMX.XORSIGN (min/max.NaN,
// min/max.xorsign.abs) with a constant predicate (PT: min, !PT: max, as
// ptxas emits them) into a lane function (fmnmxNaN).
func (c *decoder) decFMNMXNaN() error {
	d, in, mods := c.d, c.in, c.mods
	if err := c.want(sass.KReg, sass.KNone, sass.KNone, sass.KPred); err != nil {
		return err
	}
	if p := in.Args[3]; p.N != uint8(sass.PT) {
		return bad("FMNMX.%v with a predicate other than PT or !PT", mods)
	}
	d.op, d.n = xLANE3, 2
	for k := 0; k < 2; k++ {
		if err := c.src(c.a[k+1], k, 1); err != nil {
			return err
		}
	}
	sa, sb := &d.s[0], &d.s[1]
	isMin, ftz, nan, xs := !in.Args[3].Not, has(mods, "FTZ"), has(mods, "NAN"), has(mods, "XORSIGN")
	d.lane3 = func(x, y, _ uint32) uint32 {
		return fmnmxNaN(x, y, fsrc(sa, x), fsrc(sb, y), isMin, ftz, nan, xs)
	}
	return c.dst(c.a[0], 1)
}

// decPRMT decodes PRMT.
func (c *decoder) decPRMT() error {
	if tailLane3(c.in) {
		return c.decLane3()
	}
	d, mods := c.d, c.mods
	if len(mods) != 0 {
		return bad("PRMT mode %v", mods)
	}
	if err := c.want(sass.KReg, sass.KNone, sass.KNone, sass.KNone); err != nil {
		return err
	}
	d.op = xPRMT
	for k := 0; k < 3; k++ {
		if err := c.src(c.a[k+1], k, 1); err != nil {
			return err
		}
	}
	return c.dst(c.a[0], 1)
}

// decSetP decodes ISETP, FSETP.
func (c *decoder) decSetP() error {
	d, in, mods := c.d, c.in, c.mods
	float := in.Op == "FSETP"
	cmp, ok := cmpOf(mods, float)
	if !ok {
		return bad("%s: comparison %v", in.Op, mods)
	}
	d.cmp, d.logic = cmp, logicOf(mods)
	d.u32, d.ex, d.ftz = has(mods, "U32"), has(mods, "EX"), has(mods, "FTZ")
	d.op = xISETP
	if float {
		d.op = xFSETP
	}
	n := 5
	if d.ex {
		n = 6
	}
	if len(c.a) != n {
		return bad("%s: %d operands", in.Op, len(c.a))
	}
	if err := c.setpOperands(1); err != nil {
		return err
	}
	if d.ex {
		if err := c.psrcOf(c.a[5], 1); err != nil {
			return err
		}
	}
	return nil
}

// decDouble decodes DADD, DMUL, DFMA.
func (c *decoder) decDouble() error {
	d, in, mods := c.d, c.in, c.mods
	// binary64 on register pairs: Go's float64 arithmetic (and
	// math.FMA) is IEEE's, subnormals included; .RM/.RP/.RZ adjust it
	// (dDirected, tail.go).
	d.rnd = rndOf(mods)
	n := 3
	d.op = map[sass.Op]xop{"DADD": xDADD, "DMUL": xDMUL, "DFMA": xDFMA}[in.Op]
	if in.Op == "DFMA" {
		n = 4
	}
	if len(c.a) != n || c.a[0].Kind != sass.KReg {
		return bad("%s: %d operands", in.Op, len(c.a))
	}
	for k := 1; k < n; k++ {
		if err := c.src(c.a[k], k-1, 2); err != nil {
			return err
		}
	}
	return c.dst(c.a[0], 2)
}

// decREDUX decodes REDUX.
func (c *decoder) decREDUX() error {
	d, mods := c.d, c.mods
	// a reduction over the lanes that execute it, into a uniform
	// register: AND (no modifier), OR, XOR, SUM, MIN, MAX; .S32
	// compares signed
	if err := c.want(sass.KUReg, sass.KReg); err != nil {
		return err
	}
	d.op, d.sub, d.signed = xREDUX, 0, has(mods, "S32")
	for k, m := range []string{"OR", "XOR", "SUM", "MIN", "MAX"} {
		if has(mods, m) {
			d.sub = uint8(k + 1)
		}
	}
	d.d = c.a[0].N
	if c.a[0].N != 63 {
		d.writes = append(d.writes, span{2, c.a[0].N, 1})
	}
	return c.src(c.a[1], 0, 1)
}

// decDSETP decodes DSETP.
func (c *decoder) decDSETP() error {
	d, mods := c.d, c.mods
	cmp, ok := cmpOf(mods, true)
	switch {
	case has(mods, "MIN"):
		d.sub = dsetpMin
	case has(mods, "MAX"):
		d.sub = dsetpMax
	case !ok:
		return bad("DSETP: comparison %v not modelled", mods)
	}
	d.cmp, d.logic, d.op = cmp, logicOf(mods), xDSETP
	if len(c.a) != 5 {
		return bad("DSETP: %d operands", len(c.a))
	}
	return c.setpOperands(2)
}

// decFloat decodes FADD, FMUL, FFMA.
func (c *decoder) decFloat() error {
	d, in, mods := c.d, c.in, c.mods
	d.rnd, d.ftz, d.sat = rndOf(mods), has(mods, "FTZ"), has(mods, "SAT")
	n := 3
	d.op = xFADD
	if in.Op == "FMUL" {
		d.op = xFMUL
	}
	if in.Op == "FFMA" {
		d.op, n = xFFMA, 4
	}
	if len(c.a) != n || c.a[0].Kind != sass.KReg {
		return bad("%s: %d operands", in.Op, len(c.a))
	}
	for k := 1; k < n; k++ {
		if err := c.src(c.a[k], k-1, 1); err != nil {
			return err
		}
	}
	return c.dst(c.a[0], 1)
}

// decMUFU decodes MUFU.
func (c *decoder) decMUFU() error {
	d, mods := c.d, c.mods
	if err := c.want(sass.KReg, sass.KNone); err != nil {
		return err
	}
	ops := []string{"COS", "SIN", "EX2", "LG2", "RCP", "RSQ", "SQRT", "TANH", "RCP64H", "RSQ64H"}
	found := false
	for k, o := range ops {
		if has(mods, o) {
			d.sub, found = uint8(k), true
		}
	}
	// .F16: the source is the low (.H1: high) half, the binary16 result
	// lands in the low half with the high half zero (assumed)
	d.h16, d.hiMerge = has(mods, "F16"), c.a[1].Sel == ".H1"
	if !found || len(mods) != 1 && !(len(mods) == 2 && d.h16) || d.h16 && d.sub > 7 {
		return bad("MUFU.%v", mods)
	}
	d.op = xMUFU
	if err := c.src(c.a[1], 0, 1); err != nil {
		return err
	}
	return c.dst(c.a[0], 1)
}

// decF2FP decodes F2FP.
func (c *decoder) decF2FP() error {
	d, mods := c.d, c.mods
	if has(mods, "E4M3") || has(mods, "E5M2") {
		d.op, d.wide = xF2FP8, has(mods, "E5M2")
		if len(c.a) != 3 && len(c.a) != 4 {
			return bad("F2FP float8: %d operands", len(c.a))
		}
		if len(c.a) == 4 {
			d.hiMerge = c.a[3].Sel == ".H1" || c.a[3].Sel == ".H1_H1"
			if err := c.src(c.a[3], 2, 1); err != nil {
				return err
			}
		} else {
			d.s[2].k = oZero
		}
	} else {
		// .MERGE_C Rd, Rb, Rc: one value converted into the low half, the
		// half of Rc named (.H1) or else its low half in the high half
		// (as the float8 packs' merge; ptxas's corpus only shows Rc = RZ)
		d.x = has(mods, "MERGE_C")
		if !has(mods, "PACK_AB") && !d.x {
			return bad("F2FP.%v", mods)
		}
		d.hiMerge = d.x && len(c.a) == 3 && c.a[2].Sel == ".H1"
		d.op, d.bf, d.relu, d.rnd = xF2FP, has(mods, "BF16"), has(mods, "RELU"), rndOf(mods)
		if d.rnd != rnEven && d.rnd != rnZero {
			return bad("F2FP.%v", mods)
		}
		if len(c.a) != 3 {
			return bad("F2FP: %d operands", len(c.a))
		}
	}
	if err := c.src(c.a[1], 0, 1); err != nil {
		return err
	}
	if err := c.src(c.a[2], 1, 1); err != nil {
		return err
	}
	return c.dst(c.a[0], 1)
}

// decI2F decodes I2F, I2FP.
func (c *decoder) decI2F() error {
	d, mods := c.d, c.mods
	if err := c.want(sass.KReg, sass.KNone); err != nil {
		return err
	}
	d.op, d.rnd = xI2F, rndOf(mods)
	d.signed = !has(mods, "U32") && !has(mods, "U64") && !has(mods, "U16") && !has(mods, "U8")
	d.wide = has(mods, "S64") || has(mods, "U64")
	// an 8- or 16-bit source: the register's low bits, extended (d.n)
	switch {
	case has(mods, "U8"), has(mods, "S8"):
		d.n = 8
	case has(mods, "U16"), has(mods, "S16"):
		d.n = 16
	}
	d.x = has(mods, "F64") // binary64 result
	cnt, dcnt := 1, 1
	if d.wide {
		cnt = 2
	}
	if d.x {
		dcnt = 2
	}
	// a binary16 result in the low half, the high half zero (assumed)
	d.h16 = has(mods, "F16")

	if err := c.src(c.a[1], 0, cnt); err != nil {
		return err
	}
	if d.n == 0 {
		// a binary16 source is the register's low half
		d.s[0].bytes = 0x3
	}
	return c.dst(c.a[0], dcnt)
}

// decF2I decodes F2I.
func (c *decoder) decF2I() error {
	d, mods := c.d, c.mods
	if err := c.want(sass.KReg, sass.KReg); err != nil {
		return err
	}
	d.op = xF2I
	// a binary16 source (the register's low half) and an 8- or 16-bit
	// destination (saturated to its range, sign- or zero-extended to 32
	// bits: assumed, as PTX defines the narrow value only)
	d.h16 = has(mods, "F16")
	switch {
	case has(mods, "U8"), has(mods, "S8"):
		d.n = 8
	case has(mods, "U16"), has(mods, "S16"):
		d.n = 16
	}
	// .FTZ flushes a subnormal source to zero first: only FLOOR and
	// CEIL can tell (a tiny negative floors to -1, a flushed one to 0)
	if has(mods, "FTZ") && (has(mods, "FLOOR") || has(mods, "CEIL")) {
		return bad("F2I.%v not modelled", mods)
	}
	d.signed = !has(mods, "U32") && !has(mods, "U64") && !has(mods, "U16") && !has(mods, "U8")
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
	if err := c.src(c.a[1], 0, cnt); err != nil {
		return err
	}
	if d.n == 0 {
		// a binary16 source is the register's low half
		d.s[0].bytes = 0x3
	}
	return c.dst(c.a[0], dcnt)
}

// decF2F decodes F2F.
func (c *decoder) decF2F() error {
	d, mods := c.d, c.mods
	if err := c.want(sass.KReg, sass.KReg); err != nil {
		return err
	}
	var ts []string
	for _, m := range mods {
		if m == "F16" || m == "F32" || m == "F64" || m == "BF16" {
			ts = append(ts, m)
		}
	}
	if len(ts) != 2 || ts[1] == "BF16" {
		return bad("F2F.%v", mods)
	}
	// destination (d.sub) and source (d.n): 3 is bfloat16 (F2F.BF16.F32)
	code := map[string]uint8{"F16": 0, "F32": 1, "F64": 2, "BF16": 3}
	d.op, d.rnd = xF2F, rndOf(mods)
	d.sub, d.n = code[ts[0]], int(code[ts[1]])
	cnt, dcnt := 1, 1
	if d.n == 2 {
		cnt = 2
	}
	if d.sub == 2 {
		dcnt = 2
	}
	if err := c.src(c.a[1], 0, cnt); err != nil {
		return err
	}
	if d.n == 0 {
		// a binary16 source is the register's low half
		d.s[0].bytes = 0x3
	}
	return c.dst(c.a[0], dcnt)
}

// decHalf decodes HADD2, HMUL2, HFMA2.
func (c *decoder) decHalf() error {
	c.joinHalves()
	if tailLane3(c.in) {
		return c.decLane3()
	}
	d, in, mods := c.d, c.in, c.mods
	if in.Op == "HADD2" && has(mods, "F32") {
		if err := c.want(sass.KReg, sass.KReg, sass.KReg); err != nil {
			return err
		}
		if len(mods) != 1 {
			return bad("HADD2.%v", mods)
		}
		d.op = xHADD2F32
	} else {
		d.op, d.bf = xHOP2, has(mods, "BF16_V2")
		d.ftz, d.sat, d.relu = has(mods, "FTZ"), has(mods, "SAT"), has(mods, "RELU")
		n := 3
		switch in.Op {
		case "HMUL2":
			d.sub = 1
		case "HFMA2":
			d.sub, n = 2, 4
		}
		if len(c.a) != n {
			return bad("%s: %d operands", in.Op, len(c.a))
		}
		if n == 3 {
			d.s[2].k = oZero
		}
	}
	for k := 1; k < len(c.a); k++ {
		if err := c.src(c.a[k], k-1, 1); err != nil {
			return err
		}
	}
	for k := 1; k < len(c.a); k++ {
		if c.a[k].Neg || c.a[k].Abs {
			if !(d.op == xHADD2F32 && k == 1 && c.a[k].Kind == sass.KReg && c.a[k].N == 255) {
				return bad("%s: source modifiers", in.Op)
			}
		}
	}
	return c.dst(c.a[0], 1)
}

// decBMOV decodes BMOV.
func (c *decoder) decBMOV() error {
	d, mods := c.d, c.mods
	if !has(mods, "32") || len(c.a) != 2 {
		return bad("BMOV: only BMOV.32 is modelled")
	}
	if c.a[0].Kind == sass.KBar && c.a[0].N <= 15 {
		d.op, d.sub = xBMOVW, c.a[0].N
		return c.src(c.a[1], 0, 1)
	}
	if c.a[1].Kind != sass.KBar || c.a[1].N > 15 {
		return bad("BMOV: operands %v, %v", c.a[0].Kind, c.a[1].Kind)
	}
	d.op, d.sub, d.x = xBMOVR, c.a[1].N, has(mods, "CLEAR")
	return c.dst(c.a[0], 1)
}

// decLoad decodes LDG, LDS, LDL.
func (c *decoder) decLoad() error {
	d, in := c.d, c.in
	if err := c.want(sass.KReg, sass.KMem); err != nil {
		return err
	}
	d.width, d.signed = c.widthOf()
	global := in.Op == "LDG"
	d.op = map[sass.Op]xop{"LDG": xLDG, "LDS": xLDS, "LDL": xLDL}[in.Op]
	m, err := c.memOf(c.a[1], global)
	if err != nil {
		return err
	}
	d.mem = m
	return c.dst(c.a[0], c.regs(d.width))
}

// decStore decodes STG, STS, STL.
func (c *decoder) decStore() error {
	d, in, mods := c.d, c.in, c.mods
	if err := c.want(sass.KMem, sass.KReg); err != nil {
		return err
	}
	d.width, _ = c.widthOf()
	global := in.Op == "STG"
	d.strong = global && has(mods, "STRONG")
	d.op = map[sass.Op]xop{"STG": xSTG, "STS": xSTS, "STL": xSTL}[in.Op]
	m, err := c.memOf(c.a[0], global)
	if err != nil {
		return err
	}
	d.mem = m
	return c.src(c.a[1], 0, c.regs(d.width))
}

// decLDSM decodes LDSM.
func (c *decoder) decLDSM() error {
	d, mods := c.d, c.mods
	if err := c.want(sass.KReg, sass.KMem); err != nil {
		return err
	}
	d.op, d.trans, d.n = xLDSM, has(mods, "MT88"), 1
	if has(mods, "2") {
		d.n = 2
	}
	if has(mods, "4") {
		d.n = 4
	}
	m, err := c.memOf(c.a[1], false)
	if err != nil {
		return err
	}
	d.mem = m
	// the address register is checked only in the lanes that give rows
	if len(d.reads) > 0 && d.reads[len(d.reads)-1].kind == 0 && d.reads[len(d.reads)-1].n == m.base {
		d.reads = d.reads[:len(d.reads)-1]
	}
	return c.dst(c.a[0], d.n)
}

// decLDGSTS decodes LDGSTS.
func (c *decoder) decLDGSTS() error {
	d, mods := c.d, c.mods
	if len(c.a) == 3 {
		// a predicated copy (mma.go ldgstsSpan)
		if err := c.psrcOf(c.a[2], 0); err != nil {
			return err
		}
		d.pred, d.zfill, c.a = true, has(mods, "ZFILL"), c.a[:2]
	}
	if err := c.want(sass.KMem, sass.KMem); err != nil {
		return err
	}
	d.op = xLDGSTS
	d.width, _ = c.widthOf()
	if d.width < 4 {
		return bad("LDGSTS.%v", mods)
	}
	m, err := c.memOf(c.a[0], false)
	if err != nil {
		return err
	}
	g, err := c.memOf(c.a[1], true)
	if err != nil {
		return err
	}
	d.mem, d.mem2 = m, g
	return nil
}

// decLDGDEPBAR decodes LDGDEPBAR.
func (c *decoder) decLDGDEPBAR() error {
	d := c.d
	d.op = xLDGDEPBAR
	return c.want()
}

// decDEPBAR decodes DEPBAR.
func (c *decoder) decDEPBAR() error {
	d := c.d
	if len(c.a) == 3 && c.a[2].Kind == sass.KSBSet {
		d.sbset, c.a = uint8(c.a[2].Imm), c.a[:2]
	}
	if err := c.want(sass.KSB, sass.KImm); err != nil {
		return err
	}
	if c.a[0].N > 5 {
		return bad("DEPBAR on SB%d", c.a[0].N)
	}
	d.op, d.sub, d.n = xDEPBAR, c.a[0].N, int(c.a[1].Imm)
	return nil
}

// decBAR decodes BAR.
func (c *decoder) decBAR() error {
	d, mods := c.d, c.mods
	d.op = xBAR
	d.x = has(mods, "ARV")
	if has(mods, "RED") {
		if err := c.decBARRed(); err != nil {
			return err
		}
	} else if !d.x && !has(mods, "SYNC") {
		return bad("BAR.%v", mods)
	}
	d.n = -1 // thread count: all
	switch len(c.a) {
	case 1, 2:
	default:
		return bad("BAR: %d operands", len(c.a))
	}
	if err := c.src(c.a[0], 0, 1); err != nil {
		return err
	}
	if len(c.a) == 2 {
		if err := c.src(c.a[1], 1, 1); err != nil {
			return err
		}
		d.n = 0
	}
	return nil
}

// decSHFL decodes SHFL.
func (c *decoder) decSHFL() error {
	d, mods := c.d, c.mods
	if err := c.want(sass.KPred, sass.KReg, sass.KReg, sass.KNone, sass.KNone); err != nil {
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
	if err := c.pdst(c.a[0]); err != nil {
		return err
	}
	for k := 0; k < 3; k++ {
		if err := c.src(c.a[k+2], k, 1); err != nil {
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
	return c.dst(c.a[1], 1)
}

// decGlobalAtomic decodes RED, ATOMG.
func (c *decoder) decGlobalAtomic() error {
	d, in, mods := c.d, c.in, c.mods
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
	var rest []sass.Operand
	if in.Op == "RED" {
		d.op = xRED
		if d.sub >= 8 {
			return bad("RED.%v", mods)
		}
		if err := c.want(sass.KMem, sass.KReg); err != nil {
			return err
		}
		m, err := c.memOf(c.a[0], true)
		if err != nil {
			return err
		}
		d.mem = m
		rest = c.a[1:]
		d.d = 255
	} else {
		d.op = xATOM
		n := 4
		if d.sub == 9 {
			d.op, n = xATOMCAS, 5
		}
		if len(c.a) != n || c.a[2].Kind != sass.KMem {
			return bad("ATOMG: operands")
		}
		if err := c.pdst(c.a[0]); err != nil {
			return err
		}
		m, err := c.memOf(c.a[2], true)
		if err != nil {
			return err
		}
		d.mem = m
		rest = c.a[3:]
		if err := c.dst(c.a[1], cnt); err != nil {
			return err
		}
	}
	for k, o := range rest {
		if o.Kind != sass.KReg {
			return bad("%s: value operand is c.a %v", in.Op, o.Kind)
		}
		if err := c.src(o, k, cnt); err != nil {
			return err
		}
	}
	return nil
}

// decATOMS decodes ATOMS.
func (c *decoder) decATOMS() error {
	d, mods := c.d, c.mods
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
	if has(mods, "POPC") {
		return c.decATOMSPopcInc()
	}
	if has(mods, "ARRIVE") {
		return c.decATOMSArrive()
	}
	if !found || d.sub == 10 && !has(mods, "SPIN") {
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
	if len(c.a) != n || c.a[0].Kind != sass.KReg || c.a[1].Kind != sass.KMem {
		return bad("ATOMS: operands")
	}
	m, err := c.memOf(c.a[1], false)
	if err != nil {
		return err
	}
	d.mem = m
	cnt := d.width / 4
	for k, o := range c.a[2:] {
		if o.Kind != sass.KReg {
			return bad("ATOMS: value operand is c.a %v", o.Kind)
		}
		if err := c.src(o, k, cnt); err != nil {
			return err
		}
	}
	return c.dst(c.a[0], cnt)
}

// decFRND decodes FRND.
func (c *decoder) decFRND() error {
	d, mods := c.d, c.mods
	if err := c.want(sass.KReg, sass.KReg); err != nil {
		return err
	}
	d.op, d.wide, d.sub, d.ftz = xFRND, has(mods, "F64"), 0, has(mods, "FTZ")
	// .F16: the source's low (.H1: high) half, the binary16 result in the
	// low half with the high half zero (assumed, as MUFU.F16's)
	d.h16, d.hiMerge = has(mods, "F16"), c.a[1].Sel == ".H1"
	if d.h16 && (d.wide || c.a[1].Neg || c.a[1].Abs) {
		return bad("FRND.%v with a negated or absolute source", mods)
	}
	for k, m := range []string{"FLOOR", "CEIL", "TRUNC"} {
		if has(mods, m) {
			d.sub = uint8(k + 1)
		}
	}
	cnt := 1
	if d.wide {
		cnt = 2
	}
	if err := c.src(c.a[1], 0, cnt); err != nil {
		return err
	}
	return c.dst(c.a[0], cnt)
}

// decBitUnary decodes POPC, IABS, BREV, FLO.
func (c *decoder) decBitUnary() error {
	d, in, mods := c.d, c.in, c.mods
	if err := c.want(sass.KReg, sass.KNone); err != nil {
		return err
	}
	d.op = map[sass.Op]xop{"POPC": xPOPC, "IABS": xIABS, "BREV": xBREV, "FLO": xFLO}[in.Op]
	d.u32, d.hi = has(mods, "U32"), has(mods, "SH")
	if err := c.src(c.a[1], 0, 1); err != nil {
		return err
	}
	return c.dst(c.a[0], 1)
}

// decMATCH decodes MATCH.
func (c *decoder) decMATCH() error {
	d, mods := c.d, c.mods
	// MATCH.ANY Rd, Ra: each executing lane gets the mask of the
	// executing lanes whose Ra (.U64: Ra pair) equals its own
	if err := c.want(sass.KReg, sass.KReg); err != nil {
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
	if err := c.src(c.a[1], 0, cnt); err != nil {
		return err
	}
	return c.dst(c.a[0], 1)
}

// decVOTE decodes VOTE.
func (c *decoder) decVOTE() error {
	d, mods := c.d, c.mods
	if len(c.a) == 2 {
		// VOTEU Pd, Pa: the form without a destination register (URZ)
		c.a = append([]sass.Operand{{Kind: sass.KReg, N: 255}}, c.a...)
	}
	if err := c.want(sass.KReg, sass.KPred, sass.KPred); err != nil {
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
	if err := c.pdst(c.a[1]); err != nil {
		return err
	}
	if err := c.psrcOf(c.a[2], 0); err != nil {
		return err
	}
	return c.dst(c.a[0], 1)
}

// decP2R decodes P2R.
func (c *decoder) decP2R() error {
	d, in := c.d, c.in
	if in.Op == "R2P" {
		if err := decodeR2P(d, in); err != nil {
			return err
		}
		return c.src(c.a[1], 0, 1)
	}
	if err := decodeP2R(d, in); err != nil {
		return err
	}
	return c.dst(c.a[0], 1)
}

// decSGXT decodes SGXT.
func (c *decoder) decSGXT() error {
	if tailLane3(c.in) {
		return c.decLane3()
	}
	d, in := c.d, c.in
	if err := decodeSGXT(d, in); err != nil {
		return err
	}
	if err := c.src(c.a[1], 0, 1); err != nil {
		return err
	}
	return c.dst(c.a[0], 1)
}

// decPLOP3 decodes PLOP3.
func (c *decoder) decPLOP3() error {
	d, mods := c.d, c.mods
	// PLOP3.LUT Pd, Pe, Pa, Pb, Pc, lut, lut2: Pd is the truth table
	// over the three (uniform or not) predicates, bit 4a+2b+c as
	// LOP3's. What Pe gets from lut2 is not known here: ptxas writes
	// PT there, and other forms are refused.
	if len(mods) != 1 || mods[0] != "LUT" || len(c.a) != 7 || c.a[5].Kind != sass.KImm || c.a[6].Kind != sass.KImm {
		return bad("PLOP3.%v: %d operands", mods, len(c.a))
	}
	if c.a[1].Kind != sass.KPred || c.a[1].N != uint8(sass.PT) {
		return bad("PLOP3: second destination %v", c.a[1])
	}
	if err := c.pdst(c.a[0]); err != nil {
		return err
	}
	if c.a[2].Kind == sass.KReg {
		// PLOP3.LUT Pd, PT, Ra.SIGN, Rb.SIGN, Rc.SIGN, lut: the table
		// over the registers' sign bits (tail.go)
		for k := 0; k < 3; k++ {
			if err := c.src(c.a[k+2], k, 1); err != nil {
				return err
			}
		}
		d.op, d.sub = xPLOP3S, uint8(c.a[5].Imm)
		return nil
	}
	for k := 0; k < 3; k++ {
		if err := c.psrcOf(c.a[k+2], k); err != nil {
			return err
		}
	}
	d.op, d.sub = xPLOP3, uint8(c.a[5].Imm)
	return nil
}

// decLDC decodes LDC.
func (c *decoder) decLDC() error {
	d, mods := c.d, c.mods
	// LDC Rd, c[bank][Ra+off]: each lane's constant at its own byte
	// address (Ra = RZ: one address), zero- or sign-extended from 8 or
	// 16 bits, or a pair (.64); an address outside the bank faults.
	if err := c.want(sass.KReg, sass.KCBank); err != nil {
		return err
	}
	d.op = xLDC
	d.width, d.signed = c.widthOf()
	if d.width > 8 {
		return bad("LDC.%v", mods)
	}
	o := c.a[1]
	d.sub, d.mem = o.Bank, maddr{off: o.Imm}
	// the index: s[0], a register, a uniform register or none
	x := sass.Operand{Kind: sass.KReg, N: 255}
	if o.Indexed && o.UIndex {
		x = sass.Operand{Kind: sass.KUReg, N: o.N}
	} else if o.Indexed {
		x.N = o.N
	}
	if err := c.src(x, 0, 1); err != nil {
		return err
	}
	return c.dst(c.a[0], c.regs(d.width))
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
