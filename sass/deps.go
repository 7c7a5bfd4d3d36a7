package sass

import (
	"fmt"
	"strings"
)

// Loc names one architectural location an instruction may read or write:
// a general register, a predicate, a uniform register or a uniform
// predicate. The constant registers RZ, PT, URZ and UPT are never
// locations (they read as constants and discard writes).
type Loc uint16

// Location spaces: a Loc is the space's base plus the register number.
const (
	LocR  Loc = 0     // R0..R254
	LocP  Loc = 0x100 // P0..P6
	LocUR Loc = 0x200 // UR0..UR62
	LocUP Loc = 0x300 // UP0..UP6
)

// RegLoc returns the location of general register r.
func RegLoc(r Reg) Loc { return LocR + Loc(r) }

// PredLoc returns the location of predicate p.
func PredLoc(p Pred) Loc { return LocP + Loc(p) }

// URegLoc returns the location of uniform register u.
func URegLoc(u UReg) Loc { return LocUR + Loc(u) }

// String prints the location as nvdisasm names it: "R4", "P0", "UR4", "UP0".
func (l Loc) String() string {
	n := uint8(l & 0xff)
	switch l &^ 0xff {
	case LocR:
		return Reg(n).String()
	case LocP:
		return Pred(n).String()
	case LocUR:
		return UReg(n).String()
	case LocUP:
		return UPred(n).String()
	}
	return fmt.Sprintf("loc(%#x)", uint16(l))
}

// Class is the latency class of an instruction: which pipe executes it and
// whether its latency is fixed (the stall counts of the control words must
// cover it) or variable (its results are released through a write
// scoreboard that consumers wait on).
type Class uint8

// Latency classes. ClassGuard is never an instruction's class: it is the
// consumer class of a predicate read as an instruction's guard, which
// ptxas treats apart from a predicate source operand (see latencyTable).
const (
	ClassNone    Class = iota // not in the model
	ClassALU                  // integer and logic pipe: IADD3, LOP3, SHF, LEA, SEL, ISETP, MOV, PRMT, ...
	ClassFMA                  // FMA pipe: FFMA, FADD, FMUL, IMAD (every alias and .WIDE)
	ClassHalf                 // packed half precision: HFMA2, HADD2, HMUL2
	ClassConv                 // fixed-latency conversions: F2FP, I2FP
	ClassUniform              // uniform data path: ULDC
	ClassBranch               // BRA, EXIT, NOP: no register results
	ClassGlobal               // variable: LDG, STG, RED, ATOMG, LDGSTS
	ClassShared               // variable: LDS, STS, LDSM, SHFL
	ClassSFU                  // variable: MUFU, I2F, F2I, F2F
	ClassDouble               // variable: DADD, DMUL, DFMA, DSETP (binary64 on register pairs)
	ClassS2R                  // variable: S2R, S2UR
	ClassHMMA                 // variable: HMMA
	ClassSync                 // variable: BAR, LDGDEPBAR, DEPBAR
	ClassGuard                // consumer only: a guard predicate read
	numClasses
)

var classNames = [numClasses]string{"none", "ALU", "FMA", "HALF", "CONV", "UNIFORM", "BRANCH", "GLOBAL", "SHARED",
	"SFU", "DOUBLE", "S2R", "HMMA", "SYNC", "GUARD"}

// String names the class.
func (c Class) String() string {
	if c < numClasses {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", uint8(c))
}

// Variable reports whether instructions of the class have variable latency:
// their results must be waited for through a scoreboard.
func (c Class) Variable() bool { return c >= ClassGlobal && c <= ClassSync }

// Queue names a group of variable-latency instructions whose results are
// written in issue order, so that waiting for one of them also waits for
// every earlier one of the same queue. ptxas relies on it: in
// testdata/sched/mma_loop.ptx the first of three LDSM sets no scoreboard and
// its consumer waits only on the second's.
type Queue uint8

// Queues: QueueNone is "no ordering is assumed".
const (
	QueueNone  Queue = iota
	QueueLDSM        // LDSM results return in order (mma_loop.ptx)
	QueueAsync       // LDGDEPBAR groups retire in order (the PTX ISA's cp.async.wait_group)
	// QueueHMMA: HMMAs complete in issue order. ptxas sets no scoreboard
	// on most HMMAs of a chain and waits only on a later one's: in
	// kernels/mma tcrt_mma_attn_d128_f16, HMMA.16816.F32 R136, R96, R102,
	// R136 sets no scoreboard and FMUL R103, R136 reads it after a wait
	// on SB5 that only the later HMMA R140, R148, R92, R140 set; in
	// tcrt_mma_attn_d64_f16, LDSM R104 overwrites the A fragment of HMMA
	// R80, R104, R84, RZ (no read scoreboard) after a wait on the read
	// scoreboard of a later HMMA.
	QueueHMMA
	// QueueSFU: MUFU and the conversions I2F, F2I, F2F and FRND return
	// in issue order. In the corpus's attn.ptx softmax_row, @P1 MUFU.EX2
	// R14 sets no scoreboard and FFMA R5, R5, R12, R14 reads it after
	// waiting only on SB0 of the next MUFU.EX2 R12 (ptxas leaves MUFUs
	// without a scoreboard this way 248 times in the repository's
	// cubins); in intmath.ptx div_uniform I2F.U32.RP R11 sets none and
	// MUFU.RCP R11, R11 reads it after a wait on the MUFU.RCP between
	// them; in fp64.ptx dcvt F2F.F32.F64 R3 sets none and F2F.F64.F32
	// R10, R3 reads it after a wait on the next F2F's. POPC, BREV and FLO
	// belong to it too: in reduce.ptx bits, POPC R7 sets no scoreboard and
	// IMAD.IADD R11, R7, 0x1, R4 reads it after a wait on SB0 of the next
	// BREV R4 only.
	QueueSFU
	// QueueDouble: DADD, DMUL, DFMA and DSETP return in issue order. In
	// fp64.ptx dmath, DMUL.RP R6 sets no scoreboard and DFMA.RZ R2, R2,
	// R6, R4 reads it after waiting on SB0 of the next DMUL.RM only.
	QueueDouble
	// QueueLDS: LDS results return in issue order. In the corpus's
	// testdata/cubin multi.ptx dyn, LDS R5 sets no scoreboard and IADD3
	// R5, R0, R5 reads it after a wait on the next LDS R0's SB0.
	QueueLDS
	// QueueSHFL: SHFL results return in issue order. In atomics.ptx
	// atom_wide, SHFL.UP P0, R23 sets no scoreboard and @P0
	// IMAD.IADD.U32 R30, R30, 0x1, R23 reads both after a wait on the
	// next SHFL.IDX's SB0.
	QueueSHFL
	numQueues
)

// Deps is what one instruction reads and writes, and how it schedules.
type Deps struct {
	Class Class
	// Reads lists the locations read, each once, in operand order (the
	// guard predicate, when there is one, is reported apart in Guard).
	Reads []Loc
	// Late lists the subset of Reads that are read after issue: an
	// instruction that overwrites one must first wait on this
	// instruction's read scoreboard (or on its write scoreboard, which is
	// released later still).
	Late []Loc
	// Writes lists the locations written.
	Writes []Loc
	// Guard is the guard predicate's location when the instruction is
	// guarded by a predicate other than PT.
	Guard    Loc
	HasGuard bool
	// Queue is the in-order completion group of a variable-latency class.
	Queue Queue
}

// depRule is one row of depTable.
type depRule struct {
	op Op
	// mods: every token must be among the instruction's modifiers.
	mods  string
	class Class
	// widths gives, per operand index, the number of consecutive
	// registers the operand names (0 or absent: 1). A memory operand's
	// base register is a pair when the address is .64, whatever widths
	// says.
	widths []uint8
	// late: the instruction's register sources are read after issue.
	late  bool
	queue Queue
	// nargs, when not 0, is the operand count the row needs (a form
	// with a carry-out predicate has one more operand).
	nargs int
}

// depTable is the register dependence table: the first row whose opcode
// matches and whose modifier tokens are all present describes the
// instruction. Which operands are destinations comes from the encoding
// form (form.go); the table adds what the form does not say: how many
// registers each operand spans, the latency class, late reads and
// completion order.
//
// Widths: HMMA.16816.F32 D and C are four registers (a 16x8 f32 tile per
// warp), A four (16x16 f16), B two (16x8 f16); with f16 accumulators D and C
// are two. HMMA.1688: A two, B one. IMAD.WIDE writes a pair and reads its
// C operand as a pair. LDSM.x2/.x4 write two/four registers. .64/.128
// loads and stores move two/four. CS2R writes a pair unless .32. ULDC.64
// writes a uniform pair.
//
// Late reads: memory instructions read their registers after issue.
// testdata/sched/var.ptx load_war shows it for a load's address: ptxas gives
// LDG.E R2, [R2.64] read scoreboard SB0 and makes the IMAD.X that
// overwrites R3 wait on it. Shared-memory loads are assumed to behave the
// same (same memory pipe); stores, RED, ATOMG and LDGSTS read their data
// late as well; HMMA reads its fragments late (mma_loop.ptx: the four HMMAs
// set read scoreboard SB5 and the LDSM that overwrites their A fragment
// waits on it).
var depTable = []depRule{
	// The forms of table_tail.go (issue #14's remaining ptxas forms). Their
	// classes follow the nearest measured opcode's and are assumed, not
	// measured: the half-precision compares as HFMA2, the video and
	// dot-product ops on the integer pipes. The IMAD.WIDE.X rows come first:
	// the carry in at the end makes C a pair at index 3 (4 with a carry out).
	{op: "IMAD", mods: "WIDE X", class: ClassFMA, widths: []uint8{2, 1, 1, 2}, nargs: 5},
	{op: "IMAD", mods: "WIDE X", class: ClassFMA, widths: []uint8{2, 0, 1, 1, 2}, nargs: 6},
	{op: "HSET2", class: ClassHalf},
	{op: "HSETP2", class: ClassHalf},
	{op: "VABSDIFF", class: ClassALU},
	{op: "VABSDIFF4", class: ClassALU},
	{op: "BMSK", class: ClassALU},
	{op: "IDP", class: ClassFMA},
	// generic memory as global (LD/ST/ATOM as LDG/STG/ATOMG); QSPC in the
	// shared-memory queue: tail_mem.ptx gen's LDS R27 sets no scoreboard
	// and ptxas reads R27 after waiting only for a later QSPC.E.G's SB1.
	{op: "LD", mods: "128", class: ClassGlobal, widths: []uint8{4}, late: true},
	{op: "LD", mods: "64", class: ClassGlobal, widths: []uint8{2}, late: true},
	{op: "LD", class: ClassGlobal, late: true},
	{op: "ST", mods: "128", class: ClassGlobal, widths: []uint8{0, 4}, late: true},
	{op: "ST", mods: "64", class: ClassGlobal, widths: []uint8{0, 2}, late: true},
	{op: "ST", class: ClassGlobal, late: true},
	{op: "ATOM", mods: "CAS 64", class: ClassGlobal, widths: []uint8{0, 2, 0, 2, 2}, late: true},
	{op: "ATOM", mods: "64", class: ClassGlobal, widths: []uint8{0, 2, 0, 2}, late: true},
	{op: "ATOM", mods: "F64", class: ClassGlobal, widths: []uint8{0, 2, 0, 2}, late: true},
	{op: "ATOM", class: ClassGlobal, late: true},
	{op: "CCTL", class: ClassGlobal, late: true},
	{op: "QSPC", class: ClassShared, late: true, queue: QueueLDS},
	{op: "B2R", class: ClassS2R},
	{op: "NANOSLEEP", class: ClassBranch},
	{op: "BPT", class: ClassBranch},
	{op: "FCHK", class: ClassSFU},
	{op: "I2I", class: ClassConv},
	{op: "F2IP", class: ClassConv},
	// mma.sync fragments per lane: tf32 m16n8k8 A 4, B 2; m16n8k4 A 2,
	// B 1 (C and D 4 f32); IMMA/BMMA C and D 4 s32 (m8n8: 2) and A/B the
	// fragment bytes over 4; DMMA.884 A and B one f64, C and D two.
	{op: "HMMA", mods: "1688 F32 TF32", class: ClassHMMA, widths: []uint8{4, 4, 2, 4}, late: true, queue: QueueHMMA},
	{op: "HMMA", mods: "1684", class: ClassHMMA, widths: []uint8{4, 2, 1, 4}, late: true, queue: QueueHMMA},
	{op: "IMMA", mods: "16832", class: ClassHMMA, widths: []uint8{4, 4, 2, 4}, late: true, queue: QueueHMMA},
	{op: "IMMA", mods: "16864", class: ClassHMMA, widths: []uint8{4, 4, 2, 4}, late: true, queue: QueueHMMA},
	{op: "IMMA", mods: "16816", class: ClassHMMA, widths: []uint8{4, 2, 1, 4}, late: true, queue: QueueHMMA},
	{op: "IMMA", class: ClassHMMA, widths: []uint8{2, 1, 1, 2}, late: true, queue: QueueHMMA},
	{op: "BMMA", mods: "168256", class: ClassHMMA, widths: []uint8{4, 4, 2, 4}, late: true, queue: QueueHMMA},
	{op: "BMMA", class: ClassHMMA, widths: []uint8{2, 1, 1, 2}, late: true, queue: QueueHMMA},
	{op: "DMMA", class: ClassHMMA, widths: []uint8{4, 2, 2, 4}, late: true, queue: QueueHMMA},
	{op: "HMMA", mods: "SP 16832 F32", class: ClassHMMA, widths: []uint8{4, 4, 4, 4}, late: true, queue: QueueHMMA},
	{op: "HMMA", mods: "SP 16832", class: ClassHMMA, widths: []uint8{2, 4, 4, 2}, late: true, queue: QueueHMMA},
	{op: "HMMA", mods: "SP 16816 F32", class: ClassHMMA, widths: []uint8{4, 2, 2, 4}, late: true, queue: QueueHMMA},
	{op: "HMMA", mods: "SP 16816", class: ClassHMMA, widths: []uint8{2, 2, 2, 2}, late: true, queue: QueueHMMA},
	{op: "MOVM", class: ClassShared, late: true, queue: QueueLDSM},
	{op: "ARRIVES", class: ClassShared, late: true},
	{op: "PMTRIG", class: ClassBranch},

	{op: "HMMA", mods: "16816 F32", class: ClassHMMA, widths: []uint8{4, 4, 2, 4}, late: true, queue: QueueHMMA},
	{op: "HMMA", mods: "16816", class: ClassHMMA, widths: []uint8{2, 4, 2, 2}, late: true, queue: QueueHMMA},
	{op: "HMMA", mods: "1688 F32", class: ClassHMMA, widths: []uint8{4, 2, 1, 4}, late: true, queue: QueueHMMA},
	{op: "HMMA", mods: "1688", class: ClassHMMA, widths: []uint8{2, 2, 1, 2}, late: true, queue: QueueHMMA},

	{op: "IMAD", mods: "WIDE", class: ClassFMA, widths: []uint8{2, 0, 1, 1, 2}, nargs: 5},
	{op: "IMAD", mods: "WIDE", class: ClassFMA, widths: []uint8{2, 1, 1, 2}},
	// IMAD.HI adds a register pair to the 64-bit product (ptxas's
	// division sets R6 = 0 before IMAD.HI.U32 R4, R7, R3, R6 with R7 the
	// estimate: testdata/ptxas/golden/intmath.sm_86.txt)
	{op: "IMAD", mods: "HI", class: ClassFMA, widths: []uint8{1, 1, 1, 2}, nargs: 4},
	{op: "IMAD", class: ClassFMA},
	{op: "FFMA", class: ClassFMA},
	{op: "FADD", class: ClassFMA},
	{op: "FMUL", class: ClassFMA},

	{op: "MOV", class: ClassALU},
	{op: "IADD3", class: ClassALU},
	{op: "LOP3", class: ClassALU},
	{op: "SHF", class: ClassALU},
	{op: "LEA", class: ClassALU},
	{op: "IMNMX", class: ClassALU},
	{op: "PRMT", class: ClassALU},
	{op: "SEL", class: ClassALU},
	{op: "FSEL", class: ClassALU},
	{op: "ISETP", class: ClassALU},
	{op: "PLOP3", class: ClassALU},
	{op: "IABS", class: ClassALU},
	// P2R and SGXT (the mma.sync kernels): fixed latency, no scoreboard in
	// ptxas's code; ALU timing assumed, not measured
	{op: "P2R", class: ClassALU},
	{op: "SGXT", class: ClassALU},
	{op: "VOTEU", class: ClassUniform},
	{op: "MEMBAR", class: ClassBranch},
	{op: "FRND", mods: "F64", class: ClassSFU, widths: []uint8{2, 2}, queue: QueueSFU},
	{op: "FRND", class: ClassSFU, queue: QueueSFU},
	{op: "FSETP", class: ClassALU},
	{op: "FMNMX", class: ClassALU},
	{op: "VOTE", class: ClassALU}, // fixed latency (ptxas gives it no scoreboard); ALU timing assumed, not measured
	{op: "CS2R", mods: "32", class: ClassALU},
	{op: "CS2R", class: ClassALU, widths: []uint8{2}},

	{op: "HFMA2", class: ClassHalf},
	{op: "HADD2", class: ClassHalf},
	{op: "HMUL2", class: ClassHalf},
	{op: "HMNMX2", class: ClassHalf},
	{op: "F2FP", class: ClassConv},
	{op: "I2FP", class: ClassConv},

	{op: "ULDC", mods: "64", class: ClassUniform, widths: []uint8{2}},
	{op: "ULDC", class: ClassUniform},
	{op: "UMOV", class: ClassUniform},
	{op: "UIADD3", class: ClassUniform},
	{op: "ULOP3", class: ClassUniform},
	{op: "USHF", class: ClassUniform},
	{op: "UIMAD", mods: "WIDE", class: ClassUniform, widths: []uint8{2, 1, 1, 2}},
	{op: "USEL", class: ClassUniform},
	{op: "UISETP", class: ClassUniform},
	{op: "UFLO", class: ClassUniform},
	{op: "ULEA", class: ClassUniform},
	// R2UR crosses from the vector to the uniform datapath with variable
	// latency: ptxas gives R2UR UR5, R8 a write scoreboard (kernels/mma).
	{op: "R2UR", class: ClassS2R},
	// POPC, BREV, FLO and MATCH are variable-latency: ptxas gives each a
	// write scoreboard (testdata/ptxas/golden/reduce.sm_86.txt); the class
	// (SFU for the bit counts, SHARED, SHFL's, for MATCH) is assumed.
	{op: "POPC", class: ClassSFU, queue: QueueSFU},
	{op: "BREV", class: ClassSFU, queue: QueueSFU},
	{op: "FLO", class: ClassSFU, queue: QueueSFU},
	// MATCH: variable latency; its sources are timed as an SFU op's (ptxas
	// gives them the ALU->SFU distance: reduce.ptx warp_match LOP3.LUT
	// R8->MATCH.ANY.U64 R6, R8 at 4 cycles).
	{op: "MATCH", mods: "U64", class: ClassSFU, widths: []uint8{1, 2}},
	{op: "MATCH", class: ClassSFU},
	{op: "ERRBAR", class: ClassBranch},

	{op: "BRA", class: ClassBranch},
	{op: "EXIT", class: ClassBranch},
	{op: "NOP", class: ClassBranch},
	{op: "BSSY", class: ClassBranch},
	{op: "BSYNC", class: ClassBranch},
	{op: "BREAK", class: ClassBranch},
	{op: "YIELD", class: ClassBranch},
	{op: "WARPSYNC", class: ClassBranch},
	{op: "CALL", class: ClassBranch},
	// RET and BRX read a 64-bit address pair (ptxas sets R21 with MOV
	// 32@hi(...) before RET R20, and sign-extends BRX R4's index into R5:
	// testdata/ptxas/golden/control.sm_86.txt).
	{op: "RET", class: ClassBranch, widths: []uint8{2}},
	{op: "BRX", class: ClassBranch, widths: []uint8{2}},
	{op: "BRXU", class: ClassBranch, widths: []uint8{2}},
	// BMOV is variable-latency: ptxas gives BMOV.32.CLEAR R2, B6 a write
	// scoreboard and BMOV.32 B6, R2 a read scoreboard (control.sm_86.txt).
	{op: "BMOV", class: ClassS2R, late: true},

	{op: "LDG", mods: "128", class: ClassGlobal, widths: []uint8{4}, late: true},
	{op: "LDG", mods: "64", class: ClassGlobal, widths: []uint8{2}, late: true},
	{op: "LDG", class: ClassGlobal, late: true},
	{op: "STG", mods: "128", class: ClassGlobal, widths: []uint8{0, 4}, late: true},
	{op: "STG", mods: "64", class: ClassGlobal, widths: []uint8{0, 2}, late: true},
	{op: "STG", class: ClassGlobal, late: true},
	{op: "RED", mods: "64", class: ClassGlobal, widths: []uint8{0, 2}, late: true},
	{op: "RED", mods: "F64", class: ClassGlobal, widths: []uint8{0, 2}, late: true},
	{op: "RED", class: ClassGlobal, late: true},
	{op: "ATOMG", mods: "CAS 64", class: ClassGlobal, widths: []uint8{0, 2, 0, 2, 2}, late: true},
	{op: "ATOMG", mods: "64", class: ClassGlobal, widths: []uint8{0, 2, 0, 2}, late: true},
	{op: "ATOMG", mods: "F64", class: ClassGlobal, widths: []uint8{0, 2, 0, 2}, late: true},
	{op: "ATOMG", class: ClassGlobal, late: true},
	{op: "LDGSTS", class: ClassGlobal, late: true},
	// LDC sets a write scoreboard (control.sm_86.txt: LDC R4, c[0x2][R8])
	{op: "LDC", mods: "64", class: ClassGlobal, widths: []uint8{2}, late: true},
	{op: "LDC", class: ClassGlobal, late: true},
	// local memory goes through L1 like global memory; ptxas waits on
	// LDL through a write scoreboard (testdata/ptxas/golden/control.sm_86.txt)
	{op: "LDL", mods: "128", class: ClassGlobal, widths: []uint8{4}, late: true},
	{op: "LDL", mods: "64", class: ClassGlobal, widths: []uint8{2}, late: true},
	{op: "LDL", class: ClassGlobal, late: true},
	{op: "STL", mods: "128", class: ClassGlobal, widths: []uint8{0, 4}, late: true},
	{op: "STL", mods: "64", class: ClassGlobal, widths: []uint8{0, 2}, late: true},
	{op: "STL", class: ClassGlobal, late: true},

	{op: "LDS", mods: "128", class: ClassShared, widths: []uint8{4}, late: true, queue: QueueLDS},
	{op: "LDS", mods: "64", class: ClassShared, widths: []uint8{2}, late: true, queue: QueueLDS},
	{op: "LDS", class: ClassShared, late: true, queue: QueueLDS},
	{op: "STS", mods: "128", class: ClassShared, widths: []uint8{0, 4}, late: true},
	{op: "STS", mods: "64", class: ClassShared, widths: []uint8{0, 2}, late: true},
	{op: "STS", class: ClassShared, late: true},
	{op: "LDSM", mods: "4", class: ClassShared, widths: []uint8{4}, late: true, queue: QueueLDSM},
	{op: "LDSM", mods: "2", class: ClassShared, widths: []uint8{2}, late: true, queue: QueueLDSM},
	{op: "LDSM", class: ClassShared, late: true, queue: QueueLDSM},
	{op: "SHFL", class: ClassShared, queue: QueueSHFL},
	// ATOMS and REDUX set write scoreboards (atomics.sm_86.txt, reduce.sm_86.txt)
	{op: "ATOMS", mods: "64", class: ClassShared, widths: []uint8{2, 0, 2, 2}, late: true},
	{op: "ATOMS", class: ClassShared, late: true},
	{op: "REDUX", class: ClassShared},

	{op: "MUFU", class: ClassSFU, queue: QueueSFU},
	{op: "I2F", mods: "F64 U64", class: ClassSFU, widths: []uint8{2, 2}, queue: QueueSFU},
	{op: "I2F", mods: "F64 S64", class: ClassSFU, widths: []uint8{2, 2}, queue: QueueSFU},
	{op: "I2F", mods: "F64", class: ClassSFU, widths: []uint8{2, 1}, queue: QueueSFU},
	{op: "I2F", mods: "U64", class: ClassSFU, widths: []uint8{1, 2}, queue: QueueSFU},
	{op: "I2F", mods: "S64", class: ClassSFU, widths: []uint8{1, 2}, queue: QueueSFU},
	{op: "I2F", class: ClassSFU, queue: QueueSFU},
	{op: "F2I", mods: "U64 F64", class: ClassSFU, widths: []uint8{2, 2}, queue: QueueSFU},
	{op: "F2I", mods: "S64 F64", class: ClassSFU, widths: []uint8{2, 2}, queue: QueueSFU},
	{op: "F2I", mods: "F64", class: ClassSFU, widths: []uint8{1, 2}, queue: QueueSFU},
	{op: "F2I", mods: "U64", class: ClassSFU, widths: []uint8{2, 1}, queue: QueueSFU},
	{op: "F2I", mods: "S64", class: ClassSFU, widths: []uint8{2, 1}, queue: QueueSFU},
	{op: "F2I", class: ClassSFU, queue: QueueSFU},
	// F2F reads its sources late (the seed's model: "late sources and
	// late result"); ptxas's corpus has no F2F overwritten sooner.
	{op: "F2F", mods: "F64 F32", class: ClassSFU, widths: []uint8{2, 1}, late: true, queue: QueueSFU},
	{op: "F2F", mods: "F32 F64", class: ClassSFU, widths: []uint8{1, 2}, late: true, queue: QueueSFU},
	{op: "F2F", mods: "F64 F16", class: ClassSFU, widths: []uint8{2, 1}, late: true, queue: QueueSFU},
	{op: "F2F", mods: "F16 F64", class: ClassSFU, widths: []uint8{1, 2}, late: true, queue: QueueSFU},
	{op: "F2F", class: ClassSFU, late: true, queue: QueueSFU},

	// binary64: ptxas gives DADD, DMUL, DFMA and DSETP write scoreboards
	// (testdata/ptxas/golden/fp64.sm_86.txt), as the seed's model has it,
	// and they read their sources late, as the seed also says: in
	// fp64.ptx dmath DFMA.RZ R2, R2, R6, R4 sets read scoreboard SB0 and
	// MUFU.RCP64H R7 waits on it before overwriting R7.
	{op: "DADD", class: ClassDouble, widths: []uint8{2, 2, 2}, late: true, queue: QueueDouble},
	{op: "DMUL", class: ClassDouble, widths: []uint8{2, 2, 2}, late: true, queue: QueueDouble},
	{op: "DFMA", class: ClassDouble, widths: []uint8{2, 2, 2, 2}, late: true, queue: QueueDouble},
	{op: "DSETP", class: ClassDouble, widths: []uint8{0, 0, 2, 2}, late: true, queue: QueueDouble},

	{op: "S2R", class: ClassS2R},
	{op: "S2UR", class: ClassS2R},

	{op: "BAR", class: ClassSync},
	{op: "LDGDEPBAR", class: ClassSync, queue: QueueAsync},
	{op: "DEPBAR", class: ClassSync},
}

var depByOp = func() map[Op][]*depRule {
	m := map[Op][]*depRule{}
	for k := range depTable {
		r := &depTable[k]
		m[r.op] = append(m[r.op], r)
	}
	return m
}()

// rule returns the depTable row for i, or nil.
func (i Inst) depRule() *depRule {
	for _, r := range depByOp[i.Op] {
		if hasMods(i.Mods, r.mods) && (r.nargs == 0 || r.nargs == len(i.Args)) {
			return r
		}
	}
	return nil
}

// hasMods reports whether every token of want (space separated) is in
// mods. F2F.F64.F32 and F2F.F32.F64 are told apart by order: for them the
// tokens must appear in want's order.
func hasMods(mods []string, want string) bool {
	at := 0
	for _, w := range strings.Fields(want) {
		found := false
		for k := at; k < len(mods); k++ {
			if mods[k] == w {
				found, at = true, k+1
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// InstClass returns the latency class of i (ClassNone outside the model).
func InstClass(i Inst) Class {
	if r := i.depRule(); r != nil {
		return r.class
	}
	return ClassNone
}

// DepsOf returns what i reads and writes and its latency class. It fails
// (wrapping ErrUnknownOp or ErrNoForm) when the instruction has no encoding
// form, and with ErrUnmodeled when the dependence table lacks the opcode.
func DepsOf(i Inst) (Deps, error) {
	f, _, err := i.findForm()
	if err != nil {
		return Deps{}, err
	}
	r := i.depRule()
	if r == nil {
		return Deps{}, fmt.Errorf("%w: %s has no row in the dependence table", ErrUnmodeled, i.Op)
	}
	d := Deps{Class: r.class, Queue: r.queue}
	if i.Guard.Set && i.Guard.P != PT {
		d.Guard, d.HasGuard = PredLoc(i.Guard.P), true
		if i.Guard.Uniform {
			d.Guard = LocUP + Loc(i.Guard.P)
		}
	}
	seen := map[Loc]bool{}
	read := func(l Loc) {
		if !seen[l] {
			seen[l] = true
			d.Reads = append(d.Reads, l)
			// Only general registers are read late: ptxas overwrites
			// LDGSTS's zero-fill predicate P6 with ISETP.GT.AND P6
			// before waiting on its read scoreboard
			// (sm86mm/testdata/mma_ref.ptx, corpus cubin mma_ref).
			if r.late && l&^0xff == LocR {
				d.Late = append(d.Late, l)
			}
		}
	}
	span := func(base Loc, n uint8, zero uint8, out func(Loc)) {
		if uint8(base&0xff) == zero {
			return
		}
		if n == 0 {
			n = 1
		}
		for k := uint8(0); k < n; k++ {
			out(base + Loc(k))
		}
	}
	write := func(l Loc) { d.Writes = append(d.Writes, l) }
	for k, o := range f.ops {
		a := i.Args[k]
		var n uint8
		if k < len(r.widths) {
			n = r.widths[k]
		}
		out := read
		if o.dst {
			out = write
		}
		switch o.kind {
		case fR:
			span(LocR+Loc(a.N), n, uint8(RZ), out)
		case fP:
			span(LocP+Loc(a.N), 1, uint8(PT), out)
		case fUR:
			span(LocUR+Loc(a.N), n, uint8(URZ), out)
		case fUP:
			span(LocUP+Loc(a.N), 1, uint8(UPT), out)
		case fPR:
			// P2R reads the predicates its mask (the last operand)
			// selects; an instruction without one reads them all
			mask := int64(0x7f)
			if last := i.Args[len(i.Args)-1]; last.Kind == KImm {
				mask = last.Imm
			}
			for p := Loc(0); p < 7; p++ {
				if mask>>p&1 != 0 {
					read(LocP + p)
				}
			}
		case fMU:
			span(LocR+Loc(a.N), 1, uint8(RZ), read)
			span(LocUR+Loc(a.Desc), 1, uint8(URZ), read)
		case fMG, fMA, fMS, fMX:
			w := uint8(1)
			if a.W64 {
				w = 2
			}
			span(LocR+Loc(a.N), w, uint8(RZ), read)
			if o.desc != 0 {
				span(LocUR+Loc(a.Desc), 2, uint8(URZ), read)
			}
		}
	}
	return d, nil
}
