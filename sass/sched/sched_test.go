package sched

import (
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/sass"
)

func mustParse(t *testing.T, text string) sass.Program {
	t.Helper()
	p, err := sass.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// cleanListing is a hand-scheduled program that breaks no rule: every
// fixed-latency pair at the table's distance, every variable-latency result
// waited for, the store's sources protected by its read scoreboard.
const cleanListing = `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S01] MOV R3, 0x4 ;
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B0-----:R-:W-:Y:S05] IMAD.WIDE.U32 R2, R0, R3, c[0x0][0x160] ;
[B------:R-:W2:-:S02] LDG.E R4, [R2.64] ;
[B--2---:R-:W-:Y:S04] FFMA R5, R4, R4, R4 ;
[B------:R-:W-:Y:S05] FADD R5, R5, R4 ;
[B------:R1:W-:-:S01] STG.E [R2.64], R5 ;
[B-1----:R-:W-:Y:S04] FADD R5, R4, R4 ;
[B------:R-:W-:Y:S13] ISETP.GT.U32.AND P0, PT, R0, 0x1f, PT ;
[B------:R-:W-:-:S05] @P0 EXIT ;
[B------:R-:W-:-:S01] STG.E [R2.64+0x4], R5 ;
[B------:R-:W-:-:S05] EXIT ;
`

func TestCheckScheduleClean(t *testing.T) {
	p := mustParse(t, cleanListing)
	if fs := Check(p, Options{}); len(fs) != 0 {
		t.Errorf("clean program reports:\n%s", findingsText(fs))
	}
}

func findingsText(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.String() + "\n")
	}
	return b.String()
}

// hazardCases are programs that each break one rule at one instruction.
var hazardCases = []struct {
	name  string
	text  string
	loop  bool // Options.Loop
	rule  Rule
	index int
	other int
}{
	{"ffma-too-soon", `
[B------:R-:W-:-:S02] FFMA R4, R0, R1, R2 ;
[B------:R-:W-:-:S04] FFMA R5, R4, R1, R2 ;
[B------:R-:W-:-:S05] EXIT ;`, false, RuleFixedLatency, 1, 0},
	{"alu-to-fma-cross-pipe", `
[B------:R-:W-:-:S04] IADD3 R4, R0, 0x1, RZ ;
[B------:R-:W-:-:S04] FFMA R5, R4, R1, R2 ;
[B------:R-:W-:-:S05] EXIT ;`, false, RuleFixedLatency, 1, 0},
	{"guard-too-soon", `
[B------:R-:W-:Y:S12] ISETP.GT.U32.AND P0, PT, R0, 0x1f, PT ;
[B------:R-:W-:-:S05] @P0 EXIT ;
[B------:R-:W-:-:S05] EXIT ;`, false, RuleFixedLatency, 1, 0},
	{"imad-wide-high-half", `
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W-:-:S04] IMAD.WIDE.U32 R2, R0, R1, c[0x0][0x160] ;
[B------:R-:W-:-:S01] STG.E [R2.64], R0 ;
[B------:R-:W-:-:S05] EXIT ;`, false, RuleFixedLatency, 2, 1},
	{"load-without-scoreboard", `
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W-:-:S02] LDG.E R4, [R2.64] ;
[B------:R-:W-:-:S05] EXIT ;`, false, RuleNoWriteScoreboard, 1, -1},
	{"load-result-unwaited", `
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W2:-:S02] LDG.E R4, [R2.64] ;
[B------:R-:W-:-:S04] FADD R5, R4, R4 ;
[B--2---:R-:W-:-:S05] EXIT ;`, false, RuleUnwaited, 2, 1},
	{"load-result-overwritten", `
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W2:-:S02] LDG.E R4, [R2.64] ;
[B------:R-:W-:-:S04] MOV R4, 0x1 ;
[B--2---:R-:W-:-:S05] EXIT ;`, false, RuleUnwaited, 2, 1},
	{"hmma-quad-destination", `
[B------:R-:W1:-:S08] HMMA.16816.F32 R4, R8, R12, R4 ;
[B------:R-:W-:-:S04] FADD R0, R7, R7 ;
[B-1----:R-:W-:-:S05] EXIT ;`, false, RuleUnwaited, 1, 0},
	{"ldsm-x4-destination", `
[B------:R-:W0:-:S04] LDSM.16.M88.4 R8, [R3] ;
[B------:R-:W-:-:S04] FADD R0, R11, R11 ;
[B0-----:R-:W-:-:S05] EXIT ;`, false, RuleUnwaited, 1, 0},
	{"store-data-overwritten", `
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W-:-:S01] STG.E [R2.64], R5 ;
[B------:R-:W-:-:S04] MOV R5, 0x1 ;
[B------:R-:W-:-:S05] EXIT ;`, false, RuleUnprotectedOverwrite, 2, 1},
	{"store-read-scoreboard-not-waited", `
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R0:W-:-:S01] STG.E [R2.64], R5 ;
[B------:R-:W-:-:S04] MOV R3, 0x1 ;
[B0-----:R-:W-:-:S05] EXIT ;`, false, RuleUnprotectedOverwrite, 2, 1},
	{"hmma-fragment-overwritten", `
[B------:R5:W5:-:S08] HMMA.16816.F32 R16, R24, R28, R16 ;
[B------:R-:W0:-:S04] LDSM.16.M88.4 R24, [R3] ;
[B0----5:R-:W-:-:S05] EXIT ;`, false, RuleUnprotectedOverwrite, 1, 0},
	{"reuse-with-yield", `
[B------:R-:W-:Y:S04] FFMA R4, R0.reuse, R1, R2 ;
[B------:R-:W-:-:S05] EXIT ;`, false, RuleReuseYield, 0, -1},
	{"long-stall-without-yield", `
[B------:R-:W-:-:S13] FFMA R4, R0, R1, R2 ;
[B------:R-:W-:-:S05] EXIT ;`, false, RuleLongStall, 0, -1},
	{"scoreboard-on-fixed", `
[B------:R-:W1:-:S04] FFMA R4, R0, R1, R2 ;
[B------:R-:W-:-:S05] EXIT ;`, false, RuleFixedScoreboard, 0, -1},
	{"scoreboard-reuse-counted-wait", `
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W-:-:S02] LDGSTS.E.BYPASS.128 [R19], [R2.64] ;
[B------:R-:W0:-:S02] LDGDEPBAR ;
[B------:R-:W-:-:S02] LDGSTS.E.BYPASS.128 [R19+0x100], [R2.64+0x200] ;
[B------:R-:W0:-:S02] LDGDEPBAR ;
[B------:R-:W0:-:S02] LDG.E R4, [R6.64] ;
[B------:R-:W-:-:S02] DEPBAR.LE SB0, 0x1 ;
[B0-----:R-:W-:-:S05] EXIT ;`, false, RuleScoreboardReuse, 5, 6},
	{"wait-unset", `
[B---3--:R-:W-:-:S04] FFMA R4, R0, R1, R2 ;
[B------:R-:W-:-:S05] EXIT ;`, false, RuleWaitUnset, 0, -1},
	{"loop-carried-too-soon", `
[B------:R-:W-:-:S04] FFMA R4, R4, R1, R2 ;
[B------:R-:W-:-:S01] IADD3 R0, R0, 0x1, RZ ;
[B------:R-:W-:-:S01] FFMA R2, R5, R5, R5 ;`, true, RuleFixedLatency, 0, 2},
	{"loop-back-edge-unwaited", `
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W-:-:S04] FADD R5, R4, R4 ;
[B------:R-:W2:-:S04] LDG.E R4, [R2.64] ;
[B------:R-:W-:Y:S13] ISETP.GT.U32.AND P0, PT, R0, 0x1f, PT ;
[B------:R-:W-:-:S05] @P0 BRA 0x10 ;
[B--2---:R-:W-:-:S05] EXIT ;`, false, RuleUnwaited, 1, 2},
	// The control-flow graph: a hazard only on a branch's taken side, in
	// a subroutine's result read after the return, in a switch case.
	{"taken-side-unwaited", `
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W2:-:S02] LDG.E R4, [R2.64] ;
[B------:R-:W-:Y:S13] ISETP.GT.U32.AND P0, PT, R0, 0x1f, PT ;
[B------:R-:W-:-:S05] @P0 BRA 0x60 ;
[B--2---:R-:W-:-:S04] FADD R5, R4, R4 ;
[B------:R-:W-:-:S05] EXIT ;
[B------:R-:W-:-:S04] FADD R6, R4, R4 ;
[B--2---:R-:W-:-:S05] EXIT ;`, false, RuleUnwaited, 6, 1},
	{"callee-result-unwaited", `
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W-:-:S05] CALL.REL.NOINC 0x40 ;
[B------:R-:W-:-:S04] FADD R5, R4, R4 ;
[B--2---:R-:W-:-:S05] EXIT ;
[B------:R-:W2:-:S02] LDG.E R4, [R2.64] ;
[B------:R-:W-:-:S05] RET.REL.NODEC R20 0x0 ;`, false, RuleUnwaited, 2, 4},
	{"switch-case-unwaited", `
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W2:-:S02] LDG.E R4, [R2.64] ;
[B------:R-:W-:-:S05] BRX R6 -0x30 ;
[B------:R-:W-:-:S04] FADD R5, R4, R4 ;
[B--2---:R-:W-:-:S05] EXIT ;`, false, RuleUnwaited, 3, 1},
	// In-order queues release earlier members only: a wait on the
	// earlier of two leaves the later in flight.
	{"mufu-queue-not-waited", `
[B------:R-:W-:-:S01] MUFU.EX2 R4, R0 ;
[B------:R-:W0:-:S01] MUFU.EX2 R5, R1 ;
[B------:R-:W-:-:S04] FADD R6, R4, R4 ;
[B0-----:R-:W-:-:S05] EXIT ;`, false, RuleUnwaited, 2, 0},
	{"hmma-queue-earlier-waited", `
[B------:R-:W5:-:S08] HMMA.16816.F32 R4, R8, R12, R4 ;
[B------:R-:W-:-:S08] HMMA.16816.F32 R16, R8, R14, R16 ;
[B-----5:R-:W-:-:S04] FADD R0, R16, R16 ;
[B------:R-:W-:-:S05] EXIT ;`, false, RuleUnwaited, 2, 1},
	{"store-read-order-earlier-waited", `
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R0:W-:-:S01] STG.E [R2.64], R5 ;
[B------:R-:W-:-:S01] STG.E [R2.64+0x4], R6 ;
[B0-----:R-:W-:-:S04] MOV R6, 0x1 ;
[B------:R-:W-:-:S05] EXIT ;`, false, RuleUnprotectedOverwrite, 3, 2},
	// The seed: binary64 sources stay busy until read.
	{"double-source-overwritten", `
[B------:R0:W1:-:S02] DFMA.RZ R2, R2, R6, R4 ;
[B------:R-:W-:-:S04] MOV R7, 0x1 ;
[B01----:R-:W-:-:S05] EXIT ;`, false, RuleUnprotectedOverwrite, 1, 0},
	// The calibrated latencies still bind.
	{"alu-to-sfu-too-soon", `
[B------:R-:W-:-:S03] IADD3 R4, R0, 0x1, RZ ;
[B------:R-:W0:-:S01] MUFU.EX2 R5, R4 ;
[B0-----:R-:W-:-:S05] EXIT ;`, false, RuleFixedLatency, 1, 0},
	{"uniform-too-soon", `
[B------:R-:W-:-:S01] ULDC UR4, c[0x0][0x160] ;
[B------:R-:W-:-:S04] UIADD3 UR5, UR4, 0x1, URZ ;
[B------:R-:W-:-:S05] EXIT ;`, false, RuleFixedLatency, 1, 0},
	// A barrier drains the warp's shared loads only: BAR.SYNC, not
	// BAR.ARV; LDS, not LDSM or a global load.
	{"lds-before-bar-arv", `
[B------:R-:W-:-:S01] LDS R4, [R2] ;
[B------:R-:W-:-:S06] BAR.ARV 0x0, 0x20 ;
[B------:R-:W-:-:S04] FADD R5, R4, R4 ;
[B------:R-:W-:-:S05] EXIT ;`, false, RuleUnwaited, 2, 0},
	{"ldsm-before-bar-sync", `
[B------:R-:W-:-:S01] LDSM.16.M88.4 R4, [R2] ;
[B------:R-:W-:-:S06] BAR.SYNC 0x0 ;
[B------:R-:W-:-:S04] FADD R8, R4, R4 ;
[B------:R-:W-:-:S05] EXIT ;`, false, RuleUnwaited, 2, 0},
	{"ldg-before-bar-sync", `
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W0:-:S01] LDG.E R4, [R2.64] ;
[B------:R-:W-:-:S06] BAR.SYNC 0x0 ;
[B------:R-:W-:-:S04] FADD R5, R4, R4 ;
[B0-----:R-:W-:-:S05] EXIT ;`, false, RuleUnwaited, 3, 1},
	// Guards are complementary only under the same predicate, negated
	// the other way, not written in between.
	{"guard-same-sense", `
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W0:-:S01] @P0 LDG.E R12, [R2.64] ;
[B------:R-:W1:-:S01] @P0 MUFU.RCP R12, R3 ;
[B01----:R-:W-:-:S05] EXIT ;`, false, RuleUnwaited, 2, 1},
	{"guard-other-predicate", `
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W0:-:S01] @P0 LDG.E R12, [R2.64] ;
[B------:R-:W1:-:S01] @!P1 MUFU.RCP R12, R3 ;
[B01----:R-:W-:-:S05] EXIT ;`, false, RuleUnwaited, 2, 1},
	{"guard-rewritten", `
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W0:-:S01] @P0 LDG.E R12, [R2.64] ;
[B------:R-:W-:Y:S13] ISETP.GT.U32.AND P0, PT, R0, 0x1f, PT ;
[B------:R-:W1:-:S01] @!P0 MUFU.RCP R12, R3 ;
[B01----:R-:W-:-:S05] EXIT ;`, false, RuleUnwaited, 3, 1},
	// FCHK is in the SFU queue: its predicate still needs a wait on it
	// or a later member.
	{"fchk-unwaited", `
[B------:R-:W-:-:S02] FCHK P0, R0, R1 ;
[B------:R-:W-:-:S05] @!P0 EXIT ;
[B------:R-:W-:-:S05] EXIT ;`, false, RuleUnwaited, 1, 0},
}

// ptxasPatterns are schedules ptxas 11.8 writes that the calibration
// accepts, each reduced to a few instructions; the comment names where
// ptxas does it (the rule's evidence is in deps.go, flow.go,
// cfg.go and latency.go).
var ptxasPatterns = []struct{ name, text string }{
	// kernels/mma tcrt_mma_attn_d64_f16: HMMAs without scoreboards, the
	// chain's results read after a wait on a later HMMA's scoreboard, a
	// B fragment overwritten by the next HMMA.
	{"hmma-chain", `
[B------:R-:W-:-:S08] HMMA.16816.F32 R80, R104, R84, RZ ;
[B------:R-:W-:-:S08] HMMA.16816.F32 R84, R104, R86, RZ ;
[B------:R-:W5:-:S08] HMMA.16816.F32 R88, R104, R92, RZ ;
[B-----5:R-:W-:-:S04] FMUL R61, R80, R85 ;
[B------:R-:W-:-:S05] EXIT ;`},
	// attn.ptx softmax_row; intmath.ptx div_uniform (I2F then MUFU).
	{"sfu-queue", `
[B------:R-:W-:-:S08] I2F.U32.RP R11, 0x7 ;
[B------:R-:W1:-:S08] MUFU.RCP R10, R10 ;
[B-1----:R-:W-:-:S04] MUFU.RCP R11, R11 ;
[B------:R-:W0:-:S01] MUFU.EX2 R12, R13 ;
[B0-----:R-:W-:-:S04] FADD R14, R11, R12 ;
[B------:R-:W-:-:S05] EXIT ;`},
	// fp64.ptx dmath.
	{"double-queue", `
[B------:R-:W-:Y:S04] DMUL.RP R6, R4, R2 ;
[B------:R-:W0:Y:S06] DMUL.RM R2, R10, R2 ;
[B0-----:R-:W1:-:S02] DFMA.RZ R2, R2, R6, R4 ;
[B-1----:R-:W-:-:S05] EXIT ;`},
	// fp64.ptx dmath: a double's source overwritten after its read
	// scoreboard.
	{"double-source-waited", `
[B------:R0:W1:-:S02] DFMA.RZ R2, R2, R6, R4 ;
[B0-----:R-:W0:-:S01] MUFU.RCP64H R7, R9 ;
[B01----:R-:W-:-:S05] EXIT ;`},
	// sm86mm mma_ref: a store without scoreboards, its data overwritten
	// after a wait on a later store's read scoreboard.
	{"store-read-order", `
[B------:R-:W-:-:S04] ULDC.64 UR8, c[0x0][0x118] ;
[B------:R-:W-:-:S01] @P3 STG.E desc[UR8][R4.64], R14 ;
[B------:R3:W-:-:S01] @P4 STG.E desc[UR8][R6.64], R15 ;
[B---3--:R-:W-:-:S01] IADD3 R14, R0, 0x20, RZ ;
[B------:R-:W-:-:S05] EXIT ;`},
	// sm86mm mma_ref: LDGSTS's zero-fill predicate is read at issue.
	{"ldgsts-predicate", `
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R1:W-:-:S01] @!P6 LDGSTS.E.BYPASS.128 [R65+0x2000], [R48.64], !P0 ;
[B------:R-:W-:-:S01] ISETP.GT.AND P0, PT, R107, RZ, PT ;
[B-1----:R-:W-:-:S05] EXIT ;`},
	// kernels/mma tcrt_mma_64x128_e5m2_nt: a second wait on a drained
	// scoreboard.
	{"wait-again", `
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S02] LDG.E R4, [R2.64] ;
[B-1----:R-:W-:-:S04] FADD R5, R4, R4 ;
[B-1----:R-:W-:-:S04] FADD R6, R4, R4 ;
[B------:R-:W-:-:S05] EXIT ;`},
	// Issue 32's held-out nvcc corpus (a tensor-core GEMM): shared loads
	// with no scoreboard just before BAR.SYNC, read after it.
	{"lds-bar-sync", `
[B------:R-:W-:-:S01] LDS R4, [R2] ;
[B------:R-:W-:-:S01] LDS R5, [R2+0x80] ;
[B------:R-:W-:-:S06] BAR.SYNC.DEFER_BLOCKING 0x0 ;
[B------:R-:W-:-:S04] FADD R6, R4, R5 ;
[B------:R-:W-:-:S05] EXIT ;`},
	// The same corpus: a guarded load and a reciprocal into its register
	// under the complementary guard.
	{"guard-complement", `
[B------:R-:W-:-:S04] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W0:-:S01] @P0 LDG.E R12, [R2.64] ;
[B------:R-:W1:-:S01] @!P0 MUFU.RCP R12, R3 ;
[B01----:R-:W-:-:S04] FADD R5, R12, R12 ;
[B------:R-:W-:-:S05] EXIT ;`},
	// The same corpus: FCHK with no scoreboard, its predicate read after a
	// wait on a later MUFU's.
	{"fchk-sfu-queue", `
[B------:R-:W-:-:S01] FCHK P0, R0, R1 ;
[B------:R-:W0:-:S01] MUFU.RCP R4, R1 ;
[B0-----:R-:W-:-:S05] @!P0 EXIT ;
[B------:R-:W-:-:S05] EXIT ;`},
	// sm86mm mma_ref, attn.ptx flash_attn: uniform results after 2.
	{"uniform-2", `
[B------:R-:W-:-:S02] ULDC UR5, c[0x0][0x160] ;
[B------:R-:W-:-:S02] USHF.L.U32 UR5, UR5, 0x6, URZ ;
[B------:R-:W-:-:S02] ISETP.NE.U32.AND P1, PT, RZ, UR5, PT ;
[B------:R-:W-:-:S05] EXIT ;`},
}

func TestCheckSchedulePtxasPatterns(t *testing.T) {
	for _, tc := range ptxasPatterns {
		p := mustParse(t, tc.text)
		if fs := Check(p, Options{}); len(fs) != 0 {
			t.Errorf("%s:\n%s", tc.name, findingsText(fs))
		}
	}
}

func TestCheckScheduleHazards(t *testing.T) {
	for _, tc := range hazardCases {
		t.Run(tc.name, func(t *testing.T) {
			p := mustParse(t, tc.text)
			fs := Check(p, Options{Loop: tc.loop, Strict: tc.rule == RuleWaitUnset})
			found := false
			for _, f := range fs {
				if f.Rule == tc.rule && f.Index == tc.index && f.Other == tc.other {
					found = true
					if f.Text != p[f.Index].Text(int64(16*f.Index)) {
						t.Errorf("finding text %q, want the instruction's", f.Text)
					}
				} else if f.Rule != tc.rule {
					t.Errorf("unexpected finding: %v", f)
				}
			}
			if !found {
				t.Errorf("want %s at %d (other %d), got:\n%s", tc.rule, tc.index, tc.other, findingsText(fs))
			}
		})
	}
}

// TestCheckScheduleCoversRules checks that every rule has a hazard case.
func TestCheckScheduleCoversRules(t *testing.T) {
	have := map[Rule]bool{RuleUnmodeled: true} // TestCheckScheduleUnmodeled
	for _, tc := range hazardCases {
		have[tc.rule] = true
	}
	for _, r := range []Rule{RuleFixedLatency, RuleNoWriteScoreboard, RuleUnwaited, RuleUnprotectedOverwrite,
		RuleReuseYield, RuleLongStall, RuleFixedScoreboard, RuleScoreboardReuse, RuleWaitUnset, RuleUnmodeled} {
		if !have[r] {
			t.Errorf("rule %s has no hazard case", r)
		}
	}
}

func TestCheckScheduleUnmodeled(t *testing.T) {
	p := sass.Program{{Op: "VOTE"}, sass.New("EXIT", "").Stall(5)}
	fs := Check(p, Options{})
	if len(fs) != 1 || fs[0].Rule != RuleUnmodeled || fs[0].Index != 0 {
		t.Errorf("got:\n%s", findingsText(fs))
	}
}

// TestCheckScheduleLoopTaken: a wait in a loop body on a scoreboard only
// the previous iteration sets is not "wait-unset", even under Strict
// (ptxas's mma loop waits so at its top), and a loop-carried dependence
// that is far enough is clean.
func TestCheckScheduleLoopTaken(t *testing.T) {
	p := mustParse(t, `
[B-----5:R-:W0:-:S04] LDSM.16.M88.4 R24, [R3] ;
[B0-----:R5:W5:-:S08] HMMA.16816.F32 R16, R24, R28, R16 ;
[B------:R-:W-:Y:S13] ISETP.GT.U32.AND P0, PT, R0, 0x1f, PT ;
[B------:R-:W-:-:S05] @P0 BRA 0x0 ;
[B-----5:R-:W-:-:S05] EXIT ;`)
	if fs := Check(p, Options{Strict: true}); len(fs) != 0 {
		t.Errorf("reports:\n%s", findingsText(fs))
	}
}

// pairClass is the latency class of one end of a producer-consumer pair
// the latency tests print: an opcode, or "@" for a guard read.
func pairClass(op string) sass.Class {
	if op == "@" {
		return sass.ClassGuard
	}
	if o, ok := sass.LookupOp(sass.Op(op)); ok {
		return o.Class
	}
	return sass.ClassNone
}

// TestCheckScheduleWaitUnsetStrict: a wait on a scoreboard nothing sets is
// a no-op on hardware (ptxas emits such waits), so only Strict reports it;
// the same wait on a scoreboard the path does set is clean either way.
func TestCheckScheduleWaitUnsetStrict(t *testing.T) {
	p := mustParse(t, `
[B---3--:R-:W-:-:S04] FFMA R4, R0, R1, R2 ;
[B------:R-:W-:-:S05] EXIT ;`)
	if fs := Check(p, Options{}); len(fs) != 0 {
		t.Errorf("default options report:\n%s", findingsText(fs))
	}
	fs := Check(p, Options{Strict: true})
	if len(fs) != 1 || fs[0].Rule != RuleWaitUnset || fs[0].Index != 0 {
		t.Errorf("strict: got:\n%s", findingsText(fs))
	}
	set := mustParse(t, `
[B------:R-:W3:-:S02] LDG.E R0, [R2.64] ;
[B---3--:R-:W-:-:S04] FFMA R4, R0, R1, R2 ;
[B------:R-:W-:-:S05] EXIT ;`)
	if fs := Check(set, Options{Strict: true}); len(fs) != 0 {
		t.Errorf("strict, scoreboard set: got:\n%s", findingsText(fs))
	}
}
