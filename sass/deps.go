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
	NumClasses                // the number of classes (array bounds)
)

var classNames = [NumClasses]string{"none", "ALU", "FMA", "HALF", "CONV", "UNIFORM", "BRANCH", "GLOBAL", "SHARED",
	"SFU", "DOUBLE", "S2R", "HMMA", "SYNC", "GUARD"}

// String names the class.
func (c Class) String() string {
	if c < NumClasses {
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
	// BREV R4 only. FCHK too: in nvcc-built code (issue 32's held-out
	// corpus, 48 places) FCHK P0 sets no scoreboard and @!P0 BRA reads
	// P0 after a wait on a later SFU instruction's.
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
	NumQueues // the number of queues (array bounds)
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

// facts returns i's opcode table row and the register counts of its
// operands (nil: one register each), or a nil row outside the model.
func (i Inst) facts() (*opcode, []uint8) {
	o := lookupOp(i.Op)
	if o == nil {
		return nil, nil
	}
	for _, r := range o.regs {
		if hasMods(i.Mods, r.mods) && (r.nargs == 0 || r.nargs == len(i.Args)) {
			return o, r.regs
		}
	}
	return o, nil
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
	if o, _ := i.facts(); o != nil {
		return o.class
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
	r, widths := i.facts()
	if r == nil || r.class == ClassNone {
		return Deps{}, fmt.Errorf("%w: %s has no latency class in the opcode table", ErrUnmodeled, i.Op)
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
		if k < len(widths) {
			n = widths[k]
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
			// selects, R2P writes them; an instruction without one
			// reads or writes them all
			mask := int64(0x7f)
			if last := i.Args[len(i.Args)-1]; last.Kind == KImm {
				mask = last.Imm
			}
			for p := Loc(0); p < 7; p++ {
				if mask>>p&1 != 0 {
					out(LocP + p)
				}
			}
		case fMU:
			span(LocR+Loc(a.N), 1, uint8(RZ), read)
			span(LocUR+Loc(a.Desc), 1, uint8(URZ), read)
		case fMGU, fMGU32:
			// a global address's uniform register is a 64-bit base or offset
			w := uint8(1)
			if a.W64 {
				w = 2
			}
			span(LocR+Loc(a.N), w, uint8(RZ), read)
			span(LocUR+Loc(a.Desc), 2, uint8(URZ), read)
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
