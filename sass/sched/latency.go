package sched

import (
	"sync"

	"github.com/tcrt-go/tcrt/sass"
)

// Latency is one entry of a latency table: the fewest stall cycles
// (the sum of the stall counts from the producer up to, not including, the
// consumer) between a fixed-latency producer of class From and a consumer of
// class To that reads its result, and where the figure comes from.
type Latency struct {
	From, To sass.Class
	Cycles   int
	Source   string
}

// VarLatency is the assumed time from issue until a variable-latency
// instruction of Class releases its write scoreboard (results written) and
// its read scoreboard (sources read). The schedule checker does not use it
// (consumers wait on the scoreboard whatever its latency); the cycle model
// does, to decide when a wait is satisfied.
type VarLatency struct {
	Class       sass.Class
	Write, Read int
	Source      string
}

// LatencyTable is the timing model shared by Check and CycleModel.
type LatencyTable struct {
	// Fixed lists the measured fixed-latency pairs.
	Fixed []Latency
	// SameClass and CrossClass are the rule for fixed-latency pairs
	// Fixed does not list: a consumer of the producer's class, or of
	// another class. Guard is the rule for a guard predicate read.
	SameClass, CrossClass, Guard int
	// Variable lists the assumed variable latencies.
	Variable []VarLatency

	once  sync.Once
	fixed [sass.NumClasses][sass.NumClasses]int
	vars  [sass.NumClasses]VarLatency
}

// DefaultLatencies returns the SM86 table: each fixed entry is the fewest
// stall cycles ptxas 11.8 leaves between a dependent producer and consumer
// of its classes (the smallest distance ptxas accepts: an upper bound on
// the hardware's need) and cites the kernel that shows it: a PTX snippet
// under testdata/sched, a kernel of the ptxas corpus (testdata/ptxas) or
// of the repository's ptxas-built cubins (kernels/ptx, kernels/mma), or
// the measurement in /work/shared/notes/sm86.md it rests on.
// TestLatencyEvidence re-derives the fixed entries from ptxas's output,
// and TestCheckSchedulePtxasCorpus checks that no ptxas schedule in the
// repository is closer than the table allows.
func DefaultLatencies() *LatencyTable {
	t := &LatencyTable{
		Fixed: []Latency{
			{sass.ClassFMA, sass.ClassFMA, 4, "fixed.ptx ffma_chain: FFMA->FFMA, FFMA->FADD, FADD->FMUL, FMUL->FFMA; int_chain IMAD->IMAD (sm86.md: FFMA->FFMA 4, IMAD->IMAD 4)"},
			{sass.ClassALU, sass.ClassALU, 4, "fixed.ptx int_chain: IADD3->IADD3, IADD3->LOP3, LOP3->SHF; setp_guard ISETP->SEL, FSETP->FSEL; half_chain PRMT->IADD3; var.ptx load_war IADD3->ISETP, MOV->MOV (sm86.md: IADD3/LOP3->ALU 4)"},
			{sass.ClassALU, sass.ClassFMA, 5, "fixed.ptx int_chain: SHF->IMAD, LOP3->IMAD; setp_guard SEL->IMAD; var.ptx load_war IADD3 carry P1->IMAD.X (sm86.md: LOP3->IMAD 5)"},
			{sass.ClassFMA, sass.ClassALU, 5, "fixed.ptx int_chain: IMAD->IADD3; setp_guard IMAD->ISETP"},
			{sass.ClassHalf, sass.ClassHalf, 4, "fixed.ptx half_chain: HFMA2->HFMA2"},
			{sass.ClassHalf, sass.ClassALU, 5, "fixed.ptx half_chain: HFMA2->PRMT"},
			{sass.ClassConv, sass.ClassHalf, 5, "fixed.ptx half_chain: F2FP.PACK_AB->HFMA2"},
			{sass.ClassFMA, sass.ClassConv, 5, "fixed.ptx half_chain: FFMA->F2FP"},
			{sass.ClassConv, sass.ClassFMA, 5, "var.ptx store_war: I2FP->FADD"},
			{sass.ClassFMA, sass.ClassGlobal, 5, "fixed.ptx ffma_chain: FADD->STG data; var.ptx var_chain IMAD.WIDE->LDG address, FADD->STG; uniform_load IMAD.MOV->LDG address; guard.ptx IMAD.MOV->STG address"},
			{sass.ClassALU, sass.ClassGlobal, 5, "fixed.ptx setp_guard: FSEL->STG data"},
			{sass.ClassFMA, sass.ClassSFU, 4, "var.ptx var_chain: FMUL->MUFU.EX2"},
			{sass.ClassUniform, sass.ClassGlobal, 2, "kernels/ptx sg.ptx tcrt_sg_gather_cas: ULDC.64 UR8->LDG.E.U8.CONSTANT desc[UR8] (guard.ptx and var.ptx show 4 where ptxas had nothing else to schedule)"},
			// Calibrated on the ptxas corpus (testdata/ptxas and the
			// repository's ptxas-built cubins): the pairs ptxas schedules
			// closer than the rules above said.
			{sass.ClassALU, sass.ClassSFU, 4, "attn.ptx flash_attn: IADD3->MUFU.EX2; transcendental LOP3->MUFU.RCP, FSEL->MUFU.EX2; intmath.ptx divmod64 SEL->I2F; atomics.ptx atom_int IADD3->F2I"},
			{sass.ClassALU, sass.ClassBranch, 4, "attn.ptx flash_attn: MOV R3->RET.REL.NODEC R2 (the return address pair); control.ptx switch8 SHF->BRX R4 (its index pair)"},
			{sass.ClassFMA, sass.ClassBranch, 4, "attn.ptx transcendental: IMAD.MOV.U32 R13->RET.REL.NODEC R12"},
			{sass.ClassALU, sass.ClassConv, 4, "kernels/mma mma.ptx tcrt_mma_256x128_e5m2_tt: FSEL->F2FP.PACK_AB"},
			{sass.ClassConv, sass.ClassALU, 4, "kernels/ptx sg.ptx tcrt_sg_scatter: F2FP.PACK_AB->PRMT"},
			{sass.ClassUniform, sass.ClassUniform, 2, "sm86mm mma_ref.ptx: ULDC->USHF; attn.ptx flash_attn ULDC->UIADD3; atomics.ptx shared_hist VOTEU->UFLO; kernels/mma tcrt_mma_attn_d256_bf16 UMOV->UIMAD"},
			{sass.ClassFMA, sass.ClassS2R, 4, "kernels/mma mma.ptx tcrt_mma_attn_d256_bf16: FMUL R9->R2UR UR9, R9"},
			{sass.ClassUniform, sass.ClassALU, 2, "kernels/ptx sg.ptx tcrt_sg_scatter: ULDC UR4->ISETP.NE.U32.AND P1, PT, RZ, UR4"},
			{sass.ClassUniform, sass.ClassSFU, 2, "tail_mem.ptx atom: VOTEU.ANY UR6->FLO.U32 R37, UR6 (ptxas's warp-aggregated atomic)"},
			// Calibrated on the nvcc corpus (testdata/nvcc: CUDA C++
			// through nvcc 11.8), where ptxas schedules closer still.
			{sass.ClassUniform, sass.ClassFMA, 2, "nvcc arith.cu fdiv_scalar: ULDC UR6->IMAD.U32 R6, RZ, RZ, UR6; call.cu const_lut UMOV UR5->IMAD.U32 R3, RZ, RZ, UR5 (tail2_sync.ptx trace shows 3)"},
			{sass.ClassFMA, sass.ClassShared, 4, "nvcc reduce.cu coalesced_count: IMAD->REDUX.SUM UR8, R0 (var.ptx var_chain's FMUL->STS data shows 5)"},
			{sass.ClassALU, sass.ClassShared, 4, "nvcc arith.cu atomics: SHF->REDUX UR12, R8"},
			{sass.ClassConv, sass.ClassSFU, 4, "nvcc mathlib.cu mathf: I2FP.F32.S32 R17->MUFU.EX2 R2, R17 (powf)"},
			{sass.ClassALU, sass.ClassS2R, 4, "nvcc cgscan.cu cgall: VOTE.ANY R3->R2UR UR5, R3"},
		},
		SameClass:  4,
		CrossClass: 5,
		Guard:      13,
		Variable: []VarLatency{
			{sass.ClassHMMA, 33, 33, "sm86.md: dependent HMMA.16816.F32 about 33 cycles (published); the read scoreboard is assumed released no earlier"},
			{sass.ClassShared, 29, 4, "sm86.md: shared memory about 29 cycles (published); sources assumed read within 4"},
			{sass.ClassGlobal, 190, 4, "sm86.md: L2 about 190 cycles (published); sources assumed read within 4"},
			{sass.ClassSFU, 21, 4, "sm86.md: MUFU about 17-21 cycles (published, the upper figure); sources assumed read within 4"},
			{sass.ClassS2R, 21, 4, "assumed equal to SFU: no measurement yet"},
			{sass.ClassSync, 20, 20, "assumed: a barrier all warps reach together; no measurement yet"},
		},
	}
	return t
}

// The defaults for pairs Fixed lacks: SameClass 4 and CrossClass 5 are
// the pattern of every measured pair above (a consumer on the producer's
// pipe gets the result after 4, any other after 5); Guard 13 is
// guard.ptx's ISETP->@P EXIT (both kernels) and var.ptx's FSETP->@!P FMUL,
// also sm86.md's "ISETP->guard predicate 13".

// index fills the lookup arrays from the lists, once: change a table's
// lists only before its first use.
func (t *LatencyTable) index() { t.once.Do(t.build) }

func (t *LatencyTable) build() {
	for a := range t.fixed {
		for b := range t.fixed[a] {
			switch {
			case sass.Class(b) == sass.ClassGuard:
				t.fixed[a][b] = t.Guard
			case a == b:
				t.fixed[a][b] = t.SameClass
			default:
				t.fixed[a][b] = t.CrossClass
			}
		}
	}
	for _, l := range t.Fixed {
		t.fixed[l.From][l.To] = l.Cycles
	}
	for _, v := range t.Variable {
		t.vars[v.Class] = v
	}
}

// Need returns the fewest stall cycles between a fixed-latency producer of
// class from and a consumer of class to.
func (t *LatencyTable) Need(from, to sass.Class) int {
	t.index()
	if from >= sass.NumClasses || to >= sass.NumClasses {
		return t.CrossClass
	}
	return t.fixed[from][to]
}

// Release returns the cycles after issue at which a variable-latency
// instruction of class c releases its write and read scoreboards.
func (t *LatencyTable) Release(c sass.Class) (write, read int) {
	t.index()
	if c < sass.NumClasses {
		if v := t.vars[c]; v.Class == c && v.Write > 0 {
			return v.Write, v.Read
		}
	}
	return t.CrossClass, t.CrossClass
}
