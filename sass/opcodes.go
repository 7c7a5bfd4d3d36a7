package sass

import "sync"

// The opcode table: everything the package knows of each opcode, stated
// once. The encoder, decoder, printer and parser read its encoding forms;
// DepsOf, the schedule checker and the cycle model read its dependence
// facts (latency class, operand register counts, late reads, completion
// queue); the simulator reads its operation (SimOp) and, for the uniform
// datapath, the general opcode it computes as; kernels are built against
// it with New (which Encode checks against the forms).
//
// Encoding forms are in the notation of def (form.go): the opcode bits
// (an 'x' code: the ALU forms of one opcode), fixed bits, modifier fields
// (value -> token) and operand fields. Bit positions are those of the
// 128-bit word (bit 64 is bit 0 of the high half). Each was learnt by
// assembling PTX with ptxas -arch=sm_86 (and sm_89) and varying one field
// of the word it printed under nvdisasm -b SM86 (-b SM89 for the sm_89
// forms); the golden words are in testdata (golden_*.txt, ptxas/golden).
// Within an opcode the alias forms (IMAD.MOV, ...) come first, because
// nvdisasm prints them whenever their operands match.
//
// The uniform datapath's ALU forms (form option "uniform") are the general
// ones with UR and UP in the same fields, sources B and C in UR or an
// immediate (selectors 1 and 4), and bit 91 set (testdata/ptxas/golden);
// only the source placements ptxas was seen to emit are listed.
//
// Register counts (regs): the first rule whose modifier tokens are all
// present (and whose operand count matches, when nargs is set) gives, per
// operand index, the number of consecutive registers the operand names (0
// or absent: 1). A memory operand's base register is a pair when the
// address is .64, whatever the rule says. HMMA.16816.F32 D and C are four
// registers (a 16x8 f32 tile per warp), A four (16x16 f16), B two (16x8
// f16); with f16 accumulators D and C are two. HMMA.1688: A two, B one.
// IMAD.WIDE writes a pair and reads its C operand as a pair. LDSM.x2/.x4
// write two/four registers. .64/.128 loads and stores move two/four. CS2R
// writes a pair unless .32. ULDC.64 writes a uniform pair.
//
// Late reads (late): the instruction's register sources are read after
// issue. Memory instructions read their registers late:
// testdata/sched/var.ptx load_war shows it for a load's address (ptxas
// gives LDG.E R2, [R2.64] read scoreboard SB0 and makes the IMAD.X that
// overwrites R3 wait on it). Shared-memory loads are assumed to behave
// the same (same memory pipe); stores, RED, ATOMG and LDGSTS read their
// data late as well; HMMA reads its fragments late (mma_loop.ptx: the four
// HMMAs set read scoreboard SB5 and the LDSM that overwrites their A
// fragment waits on it).
var opcodes = []opcode{
	// Moves, special registers, the uniform datapath.
	{op: "MOV", class: ClassALU, sim: SimMove,
		forms: []string{
			`x002 =72:4:15 :U | >R@16, $B/1456`,
		},
	},
	{op: "S2R", class: ClassS2R, sim: SimS2R, noReuse: true,
		forms: []string{
			`919 | >R@16, SR@72`,
		},
	},
	{op: "CS2R", class: ClassALU, sim: SimS2R,
		forms: []string{
			`805 80:1{32,_} | >R@16, SR@72`,
		},
		regs: []regRule{
			{mods: "32", regs: nil},
			{regs: []uint8{2}},
		},
	},
	{op: "S2UR", class: ClassS2R, sim: SimS2UR,
		forms: []string{
			`9c3 | >UR@16, SR@72`,
		},
	},
	{op: "ULDC", class: ClassUniform, sim: SimULDC,
		forms: []string{
			`ab9 73:3{?,?,?,?,_,64} | >UR@16, C@40`,
			// indexed by a uniform register: LDC's fields with bit 91 set
			// (ptxas's ULDC UR4, c[0x2][UR4+0x30] in the project's sg kernels)
			`abb =91:1:1 73:3{?,?,?,?,_,64} | >UR@16, CXU@24`,
		},
		regs: []regRule{
			{mods: "64", regs: []uint8{2}},
		},
	},
	{op: "UMOV", class: ClassUniform, sim: SimULDC,
		forms: []string{
			`x082 :U | >UR@16, $B/46`,
		},
	},
	{op: "UIADD3", class: ClassUniform, general: "IADD3", sim: SimIADD3,
		forms: []string{
			`x290 uniform =91:1:1 =74:1:0 =87:4:15 =77:4:15 =81:3:7 =84:3:7 | >R@16, R@24-72, $B/14-63, $C-75`,
			`x290 uniform =91:1:1 =74:1:0 =87:4:15 =77:4:15 =84:3:7 | >R@16, >P@81, R@24-72, $B/14-63, $C-75`,
			`x290 uniform =91:1:1 74:1{?,X} =81:3:7 =84:3:7 | >R@16, R@24~72, $B/14~63, $C~75, P@87~90, P@77~80`,
		},
	},
	{op: "ULOP3", class: ClassUniform, general: "LOP3", sim: SimLOP3,
		forms: []string{
			`x292 uniform =91:1:1 80:1{LUT,?} =81:3:7 :U | >R@16, R@24, $B/14, $C, U@72:8, P@87~90`,
			`x292 uniform =91:1:1 80:1{LUT,?} :U | >P@81, >R@16, R@24, $B/14, $C, U@72:8, P@87~90`,
		},
	},
	{op: "USHF", class: ClassUniform, general: "SHF", sim: SimSHF,
		forms: []string{
			`x299 uniform =91:1:1 76:1{L,R} 75:1{_,W} 73:2{S64,U64,S32,U32} 80:1{_,HI} :U | >R@16, R@24, $B/14, $C/14`,
		},
	},
	{op: "UIMAD", class: ClassUniform, general: "IMAD", sim: SimIMAD,
		forms: []string{
			`x2a5 uniform =91:1:1 73:1{WIDE.U32,WIDE} =74:1:0 =87:4:15 =81:3:7 | >R@16, R@24, $B/14, $C`,
			// C may be an immediate (nvcc's UIMAD UR4, UR4, UR5, 0x1f: selector 2)
			`x2a4 uniform =91:1:1 73:1{U32,_} =74:1:0 =87:4:15 =81:3:7 | >R@16, R@24, $B/124, $C`,
		},
		regs: []regRule{
			{mods: "WIDE", regs: []uint8{2, 1, 1, 2}},
		},
	},
	{op: "ULEA", class: ClassUniform, general: "LEA", sim: SimLEA,
		forms: []string{
			// ULEA: LEA's forms on the uniform datapath (URZ, 63, in the unused C field)
			`x291 uniform =91:1:1 =80:1:0 =81:3:7 =87:4:15 =64:8:63 :U | >R@16, R@24-72, $B/14, U@75:5`,
			`x291 uniform =91:1:1 =80:1:0 =87:4:15 =64:8:63 :U | >R@16, >P@81, R@24-72, $B/14, U@75:5`,
			`x291 uniform =91:1:1 80:1{?,HI} =74:1:0 =81:3:7 =87:4:15 :U | >R@16, R@24, $B/14, $C/14, U@75:5`,
			`x291 uniform =91:1:1 80:1{?,HI} 74:1{?,X} =81:3:7 :U | >R@16, R@24~72, $B/14, $C/14, U@75:5, P@87~90`,
			// ULEA.HI(.X).SX32: LEA's (73 sign-extends A; negate bits without
			// .X, not bits with it; the carry in at 87), C URZ (nvcc's
			// ULEA.HI.X.SX32 UR5, UR4, UR7, 0x1, UP0; nvdisasm on the word,
			// one field varied at a time)
			`x291 uniform =91:1:1 0:0{HI} =80:1:1 =74:1:0 0:0{SX32} =73:1:1 =64:8:63 =81:3:7 =87:4:7 :U | >R@16, R@24-72, $B/14-63, U@75:5`,
			`x291 uniform =91:1:1 0:0{HI} =80:1:1 =74:1:0 0:0{SX32} =73:1:1 =64:8:63 =87:4:7 :U | >R@16, >P@81, R@24-72, $B/14-63, U@75:5`,
			`x291 uniform =91:1:1 0:0{HI} =80:1:1 =74:1:1 0:0{X} 0:0{SX32} =73:1:1 =64:8:63 =81:3:7 :U | >R@16, R@24~72, $B/14~63, U@75:5, P@87~90`,
			`x291 uniform =91:1:1 0:0{HI} =80:1:1 =74:1:1 0:0{X} 0:0{SX32} =73:1:1 =64:8:63 :U | >R@16, >P@81, R@24~72, $B/14~63, U@75:5, P@87~90`,
		},
	},
	// R2UR crosses from the vector to the uniform datapath with variable
	// latency: ptxas gives R2UR UR5, R8 a write scoreboard (kernels/mma).
	{op: "R2UR", class: ClassS2R, general: "MOV", sim: SimMove, noReuse: true,
		forms: []string{
			// R2UR: a register's value in the first active lane into a uniform register
			`3c2 =81:3:7 | >UR@16, R@24`,
			// with a predicate result at 81 (PT not printed: nvcc's @P0 R2UR
			// P1, UR4, R2; nvdisasm on the word with 81:3 varied)
			`3c2 | >P@81, >UR@16, R@24`,
		},
	},
	{op: "USEL", class: ClassUniform, general: "SEL", sim: SimSelect,
		forms: []string{
			`x287 uniform =91:1:1 :U | >R@16, R@24, $B/14, P@87~90`,
		},
	},
	{op: "UISETP", class: ClassUniform, general: "ISETP", sim: SimSetP,
		forms: []string{
			`x28c uniform =91:1:1 76:3{F,LT,EQ,LE,GT,NE,GE,T} 73:1{U32,_} 74:2{AND,OR,XOR} =72:1:0 =68:4:7 | >P@81, >P@84, R@24, $B/14, P@87~90`,
			`x28c uniform =91:1:1 76:3{F,LT,EQ,LE,GT,NE,GE,T} 73:1{U32,_} 74:2{AND,OR,XOR} 72:1{?,EX} | >P@81, >P@84, R@24, $B/14, P@87~90, P@68~71`,
		},
	},
	{op: "UFLO", class: ClassUniform, general: "FLO", sim: SimBitUnary,
		forms: []string{
			`2bd =91:1:1 =81:3:7 73:1{U32,_} | >UR@16, UR@32`,
		},
	},
	{op: "NOP", class: ClassBranch, sim: SimNop,
		forms: []string{
			`918 |`,
		},
	},
	{op: "MEMBAR", class: ClassBranch, sim: SimNop,
		forms: []string{
			// MEMBAR: 78:2 and 76:2 as seen in ptxas's fences (.ALL.GPU, .ALL.SYS)
			// and 76:3 5 .VC (nvcc -G's MEMBAR.SC.VC; flipping 76-80: 76:3 is
			// the scope, 1 .SM, 79 .ALL)
			`992 79:2{SC,ALL} 76:3{CTA,SM,GPU,SYS,?,VC} |`,
		},
	},
	{op: "ERRBAR", class: ClassBranch, sim: SimNop,
		forms: []string{
			`9ab |`,
		},
	},
	{op: "VOTEU", class: ClassUniform, general: "VOTE", sim: SimVOTE,
		forms: []string{
			// VOTEU: the VOTE mode at 72 into a uniform register and predicate
			// nvdisasm leaves out a URZ destination (VOTEU.ALL UP0, P0)
			`886 72:2{ALL,ANY,EQ} =16:8:63 | >UP@81, P@87~90`,
			`886 72:2{ALL,ANY,EQ} | >UR@16, >UP@81, P@87~90`,
		},
	},
	{op: "EXIT", class: ClassBranch, sim: SimBranch,
		forms: []string{
			`94d =87:3:7 |`,
			`94d | P@87~90`,
		},
	},
	{op: "BRA", class: ClassBranch, sim: SimBranch,
		forms: []string{
			`947 =87:3:7 | T@32:50`,
			// predicated branches and exits, convergence barriers, calls and
			// indirect branches (ptxas's divergent code; testdata/ptxas/golden).
			// B<n> is 4 bits at 16 (BMOV: at 24); bit 86 selects .NOINC/.NODEC,
			// bit 85 RET.ABS (not modeled); the guard-like predicate at 87 (not at
			// 90) prints first when it is not PT.
			`947 | P@87~90, T@32:50`,
			// BRA.DIV / BRA.CONV on a uniform register (nvcc's code around
			// __shfl_sync under divergence, testdata/nvcc/golden/diverge.*):
			// bit 91 names the register (at 24, 6 bits, its not bit 30), 32:2
			// the kind (0 plain; 1 and 2 print INVALID0/1); the guard-like
			// predicate at 87 as above. Flipping each bit of ptxas's
			// BRA.DIV ~URZ, 0x200.
			`947 32:2{?,?,DIV,CONV} =91:1:1 =87:3:7 | UR@24:6~30, T@32:50`,
			`947 32:2{?,?,DIV,CONV} =91:1:1 | P@87~90, UR@24:6~30, T@32:50`,
		},
	},
	{op: "BSSY", class: ClassBranch, sim: SimConvBarrier,
		forms: []string{
			`945 =87:3:7 | B@16, T@32:50`,
		},
	},
	{op: "BSYNC", class: ClassBranch, sim: SimConvBarrier,
		forms: []string{
			`941 =87:3:7 | B@16`,
		},
	},
	{op: "BREAK", class: ClassBranch, sim: SimConvBarrier,
		forms: []string{
			`942 =87:3:7 | B@16`,
		},
	},
	{op: "YIELD", class: ClassBranch, sim: SimNop,
		forms: []string{
			`946 =87:3:7 |`,
		},
	},
	{op: "WARPSYNC", class: ClassBranch, sim: SimWarpSync,
		forms: []string{
			// a register mask at 32 (opcode 0x348: nvcc's WARPSYNC R3
			// around __shfl_sync(mask)) with bit 86 .EXCLUSIVE (flipping
			// each bit; nvdisasm does not print it on the immediate form,
			// nor .reuse on the register)
			`948 =87:3:7 | U@32:32`,
			`348 86:1{_,EXCLUSIVE} =87:3:7 | R@32^`,
		},
	},
	{op: "CALL", class: ClassBranch, sim: SimCall,
		forms: []string{
			`944 =87:3:7 0:0{REL} 86:1{_,NOINC} | T@32:50`,
			// CALL.ABS (a call to an external function such as vprintf): the
			// absolute target, unsigned, at 32:49, filled by the loader's
			// relocation (0 in the cubin); flipping 32..80 moves it, 86 .NOINC
			`943 =87:3:7 0:0{ABS} 86:1{_,NOINC} | U@32:49`,
			// CALL through a register (call through a function pointer): the
			// target printed relative to the instruction after a blank, as RET's
			// (nvdisasm prints no .reuse on its register: the live oracle's
			// CALL.REL R4.reuse came back as CALL.REL R4)
			`344 =87:3:7 0:0{REL} 86:1{_,NOINC} | R@24^, T@32:50s`,
		},
	},
	{op: "RET", class: ClassBranch, sim: SimIndirect, noReuse: true,
		forms: []string{
			`950 =87:3:7 =85:1:0 0:0{REL} 86:1{_,NODEC} | R@24, T@32:50s`,
			// RET.ABS (bit 85: nvcc -G's returns): an absolute target at
			// 32:50, unsigned (flipping 32..81)
			`950 =87:3:7 =85:1:1 0:0{ABS} 86:1{_,NODEC} | R@24, U@32:50s`,
		},
		regs: []regRule{
			// RET and BRX read a 64-bit address pair (ptxas sets R21 with MOV
			// 32@hi(...) before RET R20, and sign-extends BRX R4's index into R5:
			// testdata/ptxas/golden/control.sm_86.txt).
			{regs: []uint8{2}},
		},
	},
	{op: "BRX", class: ClassBranch, sim: SimIndirect, noReuse: true,
		forms: []string{
			`949 =87:3:7 | R@24, I@32:50s`,
		},
		regs: []regRule{
			{regs: []uint8{2}},
		},
	},
	{op: "BRXU", class: ClassBranch, sim: SimIndirect,
		forms: []string{
			`958 =87:3:7 =91:1:1 | UR@24, I@32:50s`,
		},
		regs: []regRule{
			{regs: []uint8{2}},
		},
	},
	// BMOV is variable-latency: ptxas gives BMOV.32.CLEAR R2, B6 a write
	// scoreboard and BMOV.32 B6, R2 a read scoreboard (control.sm_86.txt).
	{op: "BMOV", class: ClassS2R, late: true, sim: SimBMOV, noReuse: true,
		forms: []string{
			`356 0:0{32} | >B@24, R@32`,
			`355 0:0{32} 84:1{_,CLEAR} | >R@16, B@24`,
		},
	},
	// integer multiply-add: aliases first. Immediates print signed
	// (IMAD R0, R3, -0x800000, R4) and the carry-in form's inverted addend
	// as ~R (nvdisasm 11.8 on ptxas's words, testdata/ptxas/golden).
	{op: "IMAD", class: ClassFMA, sim: SimIMAD,
		forms: []string{
			`x224 73:1{MOV.U32,MOV} =74:1:0 =87:4:15 =81:3:7 | >R@16, R@24=255, $B/123=255, $C-75`,
			`x224 73:1{SHL.U32,SHL} =74:1:0 =87:4:15 =81:3:7 | >R@16, R@24, $B/4p, $C=255`,
			`x224 73:1{IADD.U32,IADD} =74:1:0 =87:4:15 =81:3:7 | >R@16, R@24, $B/4=1, $C-75`,
			`x224 73:1{U32,_} =74:1:0 =87:4:15 =81:3:7 | >R@16, R@24, $B, $C-75`,
			`x224 73:1{U32,_} 74:1{?,X} =81:3:7 | >R@16, R@24, $B, $C~75, P@87~90`,
			`x227 73:1{HI.U32,HI} =74:1:0 =87:4:15 =81:3:7 | >R@16, R@24, $B/134567, $C-75`,
			`x225 73:1{WIDE.U32,WIDE} =74:1:0 =87:4:15 =81:3:7 | >R@16, R@24, $B/134567, $C`,
			// with a carry-out predicate at 81, printed after the destination
			// (ptxas's 64-bit division: IMAD.HI.U32 R10, P1, R9, R13, R10)
			`x227 73:1{HI.U32,HI} =74:1:0 =87:4:15 | >R@16, >P@81, R@24, $B/1, $C-75`,
			`x225 73:1{WIDE.U32,WIDE} =74:1:0 =87:4:15 | >R@16, >P@81, R@24, $B/145, $C`,
			// IMAD.WIDE(.U32).X: the carry in at 87 (the high word of a 64-bit
			// product-sum), with or without a carry out at 81.
			`x225 73:1{WIDE.U32,WIDE} =74:1:1 0:0{X} =81:3:7 | >R@16, R@24, $B/134567, $C~75, P@87~90`,
			`x225 73:1{WIDE.U32,WIDE} =74:1:1 0:0{X} | >R@16, >P@81, R@24, $B/134567, $C~75, P@87~90`,
		},
		regs: []regRule{
			// IMAD.WIDE.X first: the carry in at the end makes C a pair at
			// index 3 (4 with a carry out).
			{mods: "WIDE X", nargs: 5, regs: []uint8{2, 1, 1, 2}},
			{mods: "WIDE X", nargs: 6, regs: []uint8{2, 0, 1, 1, 2}},
			{mods: "WIDE", nargs: 5, regs: []uint8{2, 0, 1, 1, 2}},
			{mods: "WIDE", regs: []uint8{2, 1, 1, 2}},
			// IMAD.HI adds a register pair to the 64-bit product (ptxas's
			// division sets R6 = 0 before IMAD.HI.U32 R4, R7, R3, R6 with R7 the
			// estimate: testdata/ptxas/golden/intmath.sm_86.txt)
			{mods: "HI", nargs: 4, regs: []uint8{1, 1, 1, 2}},
		},
	},
	// Integer add, logic, shifts.
	{op: "IADD3", class: ClassALU, sim: SimIADD3,
		forms: []string{
			`x210 =74:1:0 =87:4:15 =77:4:15 =81:3:7 =84:3:7 | >R@16, R@24-72, $B/1456-63, $C-75`,
			`x210 =74:1:0 =87:4:15 =77:4:15 =84:3:7 | >R@16, >P@81, R@24-72, $B/1456-63, $C-75`,
			`x210 =74:1:0 =87:4:15 =77:4:15 | >R@16, >P@81, >P@84, R@24-72, $B/1456-63, $C-75`,
			`x210 74:1{?,X} =81:3:7 =84:3:7 | >R@16, R@24~72, $B/1456~63, $C~75, P@87~90, P@77~80`,
			// .X with a carry out (ptxas's 96-bit add: IADD3.X R2, P0, R5, R7, RZ, P0, !PT)
			`x210 =74:1:1 0:0{X} =84:3:7 | >R@16, >P@81, R@24~72, $B/1456~63, $C~75, P@87~90, P@77~80`,
		},
	},
	{op: "LOP3", class: ClassALU, sim: SimLOP3,
		forms: []string{
			`x212 80:1{LUT,?} =81:3:7 :U | >R@16, R@24, $B/1456, $C, U@72:8, P@87~90`,
			// with a predicate output (P = the result is nonzero), printed first
			// B may be a constant (LOP3.LUT P0, RZ, R4, c[0x0][0x168], RZ, 0xc0, !PT)
			`x212 80:1{LUT,?} :U | >P@81, >R@16, R@24, $B/1456, $C, U@72:8, P@87~90`,
		},
	},
	{op: "SHF", class: ClassALU, sim: SimSHF,
		forms: []string{
			// selector 3: C a constant (SHF.R.U64 R2, R2, R3, c[0x0][0x168])
			`x219 76:1{L,R} 75:1{_,W} 73:2{S64,U64,S32,U32} 80:1{_,HI} :U | >R@16, R@24, $B/12345, $C/12345`,
		},
	},
	{op: "LEA", class: ClassALU, sim: SimLEA,
		forms: []string{
			// B's negate bit is 63, A's 72 (LEA R3, R8, -R3, 0x1 and LEA.HI
			// R6, -R5, -R2, RZ, 0x1b: flipping each bit)
			`x211 =80:1:0 =81:3:7 =87:4:15 =64:8:255 :U | >R@16, R@24-72, $B/145-63, U@75:5`,
			`x211 =80:1:0 =87:4:15 =64:8:255 :U | >R@16, >P@81, R@24-72, $B/145-63, U@75:5`,
			`x211 80:1{?,HI} =74:1:0 =81:3:7 =87:4:15 ur=6 :U | >R@16, R@24-72, $B/145-63, $C/145, U@75:5`,
			`x211 80:1{?,HI} 74:1{?,X} =81:3:7 ur=6 :U | >R@16, R@24~72, $B/145, $C/145, U@75:5, P@87~90`,
			// LEA.HI(.X).SX32: 73 sign-extends the 32-bit A to the high word; the
			// C field holds RZ and is not printed. Without .X the sources take
			// negate bits, with it not bits and the carry in at 87.
			`x211 0:0{HI} =80:1:1 =74:1:0 0:0{SX32} =73:1:1 =64:8:255 =81:3:7 =87:4:7 :U | >R@16, R@24-72, $B/145-63, U@75:5`,
			`x211 0:0{HI} =80:1:1 =74:1:0 0:0{SX32} =73:1:1 =64:8:255 =87:4:7 :U | >R@16, >P@81, R@24-72, $B/145-63, U@75:5`,
			// the same with !PT in the unused carry field 87:4, which nvcc
			// writes (LEA.HI.SX32 R3, R3, R6, 0x1e from a signed division by a
			// power of two) and nvdisasm prints alike: the hidden
			// modifier _NOTPT (listings only) tells the words apart
			`211 0:0{HI} =80:1:1 =74:1:0 0:0{SX32} 0:0{_NOTPT} =73:1:1 =64:8:255 =81:3:7 =87:4:15 | >R@16, R@24-72, R@32-63, U@75:5`,
			`x211 0:0{HI} =80:1:1 =74:1:1 0:0{X} 0:0{SX32} =73:1:1 =64:8:255 =81:3:7 :U | >R@16, R@24~72, $B/145~63, U@75:5, P@87~90`,
			`x211 0:0{HI} =80:1:1 =74:1:1 0:0{X} 0:0{SX32} =73:1:1 =64:8:255 :U | >R@16, >P@81, R@24~72, $B/145~63, U@75:5, P@87~90`,
		},
	},
	{op: "IMNMX", class: ClassALU, sim: SimSelect,
		forms: []string{
			`x217 73:1{U32,_} | >R@16, R@24, $B, P@87~90`,
		},
	},
	{op: "PRMT", class: ClassALU, sim: SimPRMT,
		forms: []string{
			`x216 :U | >R@16, R@24, $B, $C`,
			// PRMT's mode at 72:3 (0 the byte selector of B, printed bare)
			`x216 72:3{_,F4E,B4E,RC8,ECL,ECR,RC16} :U | >R@16, R@24, $B, $C`,
		},
	},
	{op: "IABS", class: ClassALU, sim: SimBitUnary,
		forms: []string{
			// The source in the B field: a register, an immediate, a constant
			// (nvcc's IABS R5, c[0x0][0x174]) or a uniform register (0x813,
			// 0xa13, 0xc13: nvdisasm; bit 63 is ignored by nvdisasm, so not
			// modelled).
			`x213 | >R@16, $B/145`,
		},
	},
	// POPC, BREV, FLO and MATCH are variable-latency: ptxas gives each a
	// write scoreboard (testdata/ptxas/golden/reduce.sm_86.txt); the class
	// (SFU for the bit counts, SHARED, SHFL's, for MATCH) is assumed.
	{op: "POPC", class: ClassSFU, queue: QueueSFU, sim: SimBitUnary, noReuse: true,
		forms: []string{
			// bit counts and reversal (variable latency; testdata/ptxas/golden/reduce.*):
			// FLO bit 73 signed (bare), bit 74 .SH (the shift amount, 31 - position)
			`309 | >R@16, R@32~63`,
			`d09 =91:1:1 | >R@16, UR@32~63`,
		},
	},
	{op: "BREV", class: ClassSFU, queue: QueueSFU, sim: SimBitUnary, noReuse: true,
		forms: []string{
			`301 | >R@16, R@32`,
			`d01 =91:1:1 | >R@16, UR@32`,
		},
	},
	{op: "UBREV", class: ClassUniform, general: "BREV", sim: SimBitUnary,
		forms: []string{
			// nvcc's UBREV UR4, UR5 (cooperative groups' lane masks,
			// testdata/nvcc/golden/reduce.*): UPOPC's fields
			`2be =91:1:1 | >UR@16, UR@32`,
		},
	},
	{op: "FLO", class: ClassSFU, queue: QueueSFU, sim: SimBitUnary, noReuse: true,
		forms: []string{
			`300 =81:3:7 73:1{U32,_} 74:1{_,SH} | >R@16, R@32~63`,
			// bit counts of a uniform register (bit 91, selector 6; the row's
			// POPC and FLO take ~R, the not bit at 63)
			`d00 =91:1:1 =81:3:7 73:1{U32,_} 74:1{_,SH} | >R@16, UR@32~63`,
		},
	},
	{op: "MATCH", class: ClassSFU, sim: SimMATCH, noReuse: true,
		forms: []string{
			// MATCH.ANY: the lanes holding the same 32-bit (.U64: pair) value
			`3a1 =81:3:7 =79:1:1 0:0{ANY} 73:1{_,U64} | >R@16, R@24`,
		},
		regs: []regRule{
			// MATCH: variable latency; its sources are timed as an SFU op's (ptxas
			// gives them the ALU->SFU distance: reduce.ptx warp_match LOP3.LUT
			// R8->MATCH.ANY.U64 R6, R8 at 4 cycles).
			{mods: "U64", regs: []uint8{1, 2}},
		},
	},
	{op: "FRND", class: ClassSFU, queue: QueueSFU, sim: SimFRND, noReuse: true,
		forms: []string{
			// FRND: the rounding at 78, 75:2+84:2 the type as F2F's (F32 bare)
			`307 75:2+84:2{10=} 78:2{_,FLOOR,CEIL,TRUNC} | >R@16, R@32-63|62`,
			// FRND.FTZ (cvt.rzi.ftz.f32.f32): 80 flushes a subnormal source to
			// zero first (flipping 80 of ptxas's FRND.FTZ.TRUNC R18, R2)
			`307 75:2+84:2{10=} 80:1{_,FTZ} 78:2{_,FLOOR,CEIL,TRUNC} | >R@16, R@32-63|62`,
			`313 75:2+84:2{15=F64} 78:2{_,FLOOR,CEIL,TRUNC} | >R@16, R@32-63|62`,
			// FRND.F16 (cvt.rni.f16.f16): the type 5 in 75:2+84:2, bit 60 reads
			// the high half (.H1) as MUFU.F16's
			`307 75:2+84:2{5=F16} 78:2{_,FLOOR,CEIL,TRUNC} =60:1:0 | >R@16, R@32`,
			`307 75:2+84:2{5=F16} 78:2{_,FLOOR,CEIL,TRUNC} =60:1:1 | >R@16, R@32.H1`,
		},
		regs: []regRule{
			{mods: "F64", regs: []uint8{2, 2}},
		},
	},
	{op: "SEL", class: ClassALU, sim: SimSelect,
		forms: []string{
			`x207 :U | >R@16, R@24, $B, P@87~90`,
		},
	},
	{op: "FSEL", class: ClassALU, sim: SimSelect,
		forms: []string{
			// negation and absolute value on A (72/73) and a register or
			// constant B (63/62): nvcc's sinf, FSEL R7, -R7, -0.1666..., P0
			// (flipping each bit)
			`x208 :F | >R@16, R@24-72|73, $B-63|62, P@87~90`,
		},
	},
	// Comparisons.
	{op: "PLOP3", class: ClassALU, sim: SimPLOP3,
		forms: []string{
			// PLOP3.LUT Pd, Pe, Pa, Pb, Pc, lut, imm: sources at 87, 77, 68 (each
			// with its not bit above it; bit 67 makes the third a uniform
			// predicate), the truth table split over 64:3 and 72:5, a second
			// immediate at 16 (0x0 in ptxas's code). Learnt by flipping each bit.
			`81c 0:0{LUT} =67:1:0 | >P@81, >P@84, P@87~90, P@77~80, P@68~71, U@64:3h72:5, U@16:8`,
			`81c 0:0{LUT} =67:1:1 | >P@81, >P@84, P@87~90, P@77~80, UP@68~71, U@64:3h72:5, U@16:8`,
			// PLOP3 on the sign bits of three registers (ptxas's 64-bit sign
			// tests): Ra at 24, Rb 32, Rc 64 printed with .SIGN, the truth table at
			// 72:8, the second immediate at 16.
			`21f 0:0{LUT} | >P@81, >P@84, R@24.SIGN, R@32.SIGN, R@64.SIGN, U@72:8, U@16:8`,
		},
	},
	{op: "ISETP", class: ClassALU, sim: SimSetP,
		forms: []string{
			`x20c 76:3{F,LT,EQ,LE,GT,NE,GE,T} 73:1{U32,_} 74:2{AND,OR,XOR} =72:1:0 =68:4:7 | >P@81, >P@84, R@24, $B, P@87~90`,
			`x20c 76:3{F,LT,EQ,LE,GT,NE,GE,T} 73:1{U32,_} 74:2{AND,OR,XOR} 72:1{?,EX} | >P@81, >P@84, R@24, $B, P@87~90, P@68~71`,
		},
	},
	// FSET: FSETP's comparison into a register, 1.0 or 0 (.BF, which
	// nvdisasm prints on every word: nvcc's bf16 __hgt; flipping each bit)
	{op: "FSET", class: ClassALU, sim: SimLane3,
		forms: []string{
			`20a 0:0{BF} 76:4{F,LT,EQ,LE,GT,NE,GE,NUM,NAN,LTU,EQU,LEU,GTU,NEU,GEU,T} 80:1{_,FTZ} 74:2{AND,OR,XOR} | >R@16, R@24-72|73, R@32-63|62, P@87~90`,
		},
	},
	{op: "FSETP", class: ClassALU, sim: SimSetP,
		forms: []string{
			`x20b 76:4{F,LT,EQ,LE,GT,NE,GE,NUM,NAN,LTU,EQU,LEU,GTU,NEU,GEU,T} 80:1{_,FTZ} 74:2{AND,OR,XOR} :F | >P@81, >P@84, R@24-72|73, $B/145-63|62, P@87~90`,
		},
	},
	// Float arithmetic.
	{op: "FADD", class: ClassFMA, sim: SimFloat,
		forms: []string{
			`x221 80:1{_,FTZ} 78:2{_,RM,RP,RZ} 77:1{_,SAT} :F | >R@16, R@24-72|73, $B/123-63|62r2`,
		},
	},
	{op: "FMUL", class: ClassFMA, sim: SimFloat,
		forms: []string{
			// |A| at 73, |B| at 62 (nvcc's FMUL.FTZ R7, |R0|, R3; flipping
			// the bits of FMUL R7, R6, c[0x0][0x184])
			`x220 =84:3:4 80:1{_,FTZ} 78:2{_,RM,RP,RZ} 77:1{_,SAT} :F | >R@16, R@24-72|73, $B/145-63|62`,
		},
	},
	{op: "FFMA", class: ClassFMA, sim: SimFloat,
		forms: []string{
			// |B| at 62 (nvcc's sqrtf: FFMA R4, -|R11|, |R11|, R4; flipping 62)
			`x223 80:1{_,FTZ} 78:2{_,RM,RP,RZ} 77:1{_,SAT} :F | >R@16, R@24-72|73, $B/12345-63|62, $C/12345-75|74`,
		},
	},
	{op: "FMNMX", class: ClassALU, sim: SimSelect,
		forms: []string{
			`x209 80:1{_,FTZ} :F | >R@16, R@24-72|73, $B/145-63|62, P@87~90`,
			// min/max.NaN (81 .NAN: a NaN source gives the canonical NaN) and
			// .xorsign.abs (82 .XORSIGN: the result's sign is the XOR of the
			// sources' signs, ptxas sets both |.| bits), learnt by flipping 80-82 of
			// ptxas's FMNMX.NAN R35, R2, R3, !PT (tail2_math.ptx)
			`209 80:1{_,FTZ} 81:1{_,NAN} 82:1{_,XORSIGN} | >R@16, R@24-72|73, R@32-63|62, P@87~90`,
		},
	},
	{op: "DADD", class: ClassDouble, late: true, queue: QueueDouble, sim: SimDouble,
		forms: []string{
			// binary64 on register pairs (variable latency). Negation and absolute
			// value bits follow the field (A 72/73, B at 32: 63/62, at 64: 75/74);
			// DADD's second source sits in the C field; a double immediate is the
			// value's high 32 bits; DSETP's F and T codes print MIN and MAX (the
			// DMNMX idiom). Learnt on ptxas's words and by flipping each bit.
			`229 78:2{_,RM,RP,RZ} | >R@16, R@24-72|73, R@64-75|74`,
			// DADD with an immediate (the value's high 32 bits, its sign bit 63)
			// or a constant second source
			`429 78:2{_,RM,RP,RZ} | >R@16, R@24-72|73, D@32:32`,
			`629 78:2{_,RM,RP,RZ} | >R@16, R@24-72|73, C@40`,
		},
		regs: []regRule{
			// binary64: ptxas gives DADD, DMUL, DFMA and DSETP write scoreboards
			// (testdata/ptxas/golden/fp64.sm_86.txt), as the seed's model has it,
			// and they read their sources late, as the seed also says: in
			// fp64.ptx dmath DFMA.RZ R2, R2, R6, R4 sets read scoreboard SB0 and
			// MUFU.RCP64H R7 waits on it before overwriting R7.
			{regs: []uint8{2, 2, 2}},
		},
	},
	{op: "DMUL", class: ClassDouble, late: true, queue: QueueDouble, sim: SimDouble,
		forms: []string{
			// selector 5: a constant second source (DMUL R4, R4, c[0x0][0x180],
			// ptxas's fp64 stencil multiplying by a kernel parameter)
			`x228 78:2{_,RM,RP,RZ} :D | >R@16, R@24-72|73, $B/145-63|62`,
		},
		regs: []regRule{
			{regs: []uint8{2, 2, 2}},
		},
	},
	{op: "DFMA", class: ClassDouble, late: true, queue: QueueDouble, sim: SimDouble,
		forms: []string{
			`22b 78:2{_,RM,RP,RZ} | >R@16, R@24-72|73, R@32-63|62, R@64-75|74`,
			`42b 78:2{_,RM,RP,RZ} | >R@16, R@24-72|73, R@64-75|74r1, D@32:32`,
			`a2b 78:2{_,RM,RP,RZ} | >R@16, R@24-72|73, C@40-63|62, R@64-75|74`,
			// selector 3: the constant in the C field (nvcc's f64 math
			// library, DFMA R14, R10, R14, c[0x2][0x48]); each source's
			// bits follow its field (flipping 62, 63, 72-75)
			`62b 78:2{_,RM,RP,RZ} | >R@16, R@24-72|73, R@64-75|74r1, C@40-63|62`,
			// selector 4: a double immediate second source (DFMA R28, R28, -1, RZ)
			`82b 78:2{_,RM,RP,RZ} | >R@16, R@24-72|73, D@32:32, R@64-75|74`,
		},
		regs: []regRule{
			{regs: []uint8{2, 2, 2, 2}},
		},
	},
	{op: "DSETP", class: ClassDouble, late: true, queue: QueueDouble, sim: SimDSETP,
		forms: []string{
			// (nvdisasm refuses DSETP with a reuse flag on the second source)
			`x22a 76:4{MIN,LT,EQ,LE,GT,NE,GE,NUM,NAN,LTU,EQU,LEU,GTU,NEU,GEU,MAX} 74:2{AND,OR,XOR} :D | >P@81, >P@84, R@24-72|73, $B/12-63|62^, P@87~90`,
			// selector 3: a constant second source (DSETP.GT.AND P6, PT, R38,
			// c[0x0][0x178], PT: a compare with an f64 kernel parameter; 63/62
			// its - and |.| as for the register)
			`x22a 76:4{MIN,LT,EQ,LE,GT,NE,GE,NUM,NAN,LTU,EQU,LEU,GTU,NEU,GEU,MAX} 74:2{AND,OR,XOR} :D | >P@81, >P@84, R@24-72|73, $B/3-63|62, P@87~90`,
			// DSETP with a reuse flag on the second source, slot 2 (nvdisasm prints it
			// when the stall count allows: tail_float.ptx cmp)
			`x22a 76:4{MIN,LT,EQ,LE,GT,NE,GE,NUM,NAN,LTU,EQU,LEU,GTU,NEU,GEU,MAX} 74:2{AND,OR,XOR} ur=0 :D | >P@81, >P@84, R@24-72|73, $B/1-63|62r2, P@87~90`,
		},
		regs: []regRule{
			{regs: []uint8{0, 0, 2, 2}},
		},
	},
	{op: "MUFU", class: ClassSFU, queue: QueueSFU, sim: SimMUFU, noReuse: true,
		forms: []string{
			// MUFU: codes 6 and 7 are RCP64H and RSQ64H (the high word of a
			// binary64 seed); bit 73 .F16, with bit 60 reading the high half (.H1);
			// an immediate source at 32 (selector 4). Learnt from ptxas's fp64 and
			// f16 code (testdata/ptxas/golden).
			// (nvdisasm prints RCP64H/RSQ64H with .F16 as INVALID6/7).
			`308 74:4{COS,SIN,EX2,LG2,RCP,RSQ,RCP64H,RSQ64H,SQRT,TANH} =73:1:0 | >R@16, R@32-63|62`,
			`308 74:4{COS,SIN,EX2,LG2,RCP,RSQ,?,?,SQRT,TANH} 73:1{?,F16} | >R@16, R@32-63|62`,
			`308 74:4{COS,SIN,EX2,LG2,RCP,RSQ,?,?,SQRT,TANH} 73:1{?,F16} =60:1:1 | >R@16, R@32.H1`,
			`908 74:4{COS,SIN,EX2,LG2,RCP,RSQ,RCP64H,RSQ64H,SQRT,TANH} | >R@16, F@32:32`,
			// a constant (nvcc's MUFU.RCP R5, c[0x0][0x168]) or a uniform
			// register (0xd08, bit 91): the register form's -63 |62
			`b08 74:4{COS,SIN,EX2,LG2,RCP,RSQ,RCP64H,RSQ64H,SQRT,TANH} | >R@16, C@40-63|62`,
			`d08 =91:1:1 74:4{COS,SIN,EX2,LG2,RCP,RSQ,RCP64H,RSQ64H,SQRT,TANH} | >R@16, UR@32-63|62`,
		},
	},
	// Conversions and packs.
	{op: "F2FP", class: ClassConv, sim: SimF2FP,
		forms: []string{
			// B from an immediate or a constant too (nvcc's F2FP.BF16.PACK_AB
			// R0, R0, 1 for __floats2bfloat162_rn(x, 1.f): selectors 4 and 5)
			`x23e 75:1{_,RELU} 76:1{_,BF16} 64:8{255=PACK_AB} :F | >R@16, R@24, $B/145`,
			// sm_89 float8 packs (nvdisasm -b SM89 text; ptxas 11.8 does not emit them):
			// bits 76+87 the format, 77 SATFINITE, 78+90 PACK_AB_MERGE_C, 72 the
			// half of the merge register kept (.H1 when set).
			`23e sm89 77:1{_,SATFINITE} 75:1{_,RELU} 76:1+87:1{?,?,E5M2,E4M3} 0:0{F32} 78:1+90:1{?,?,?,PACK_AB_MERGE_C} =72:1:0 | >R@16, R@24, R@32, R@64`,
			`23e sm89 77:1{_,SATFINITE} 75:1{_,RELU} 76:1+87:1{?,?,E5M2,E4M3} 0:0{F32} 78:1+90:1{?,?,?,PACK_AB_MERGE_C} =72:1:1 | >R@16, R@24, R@32, R@64.H1`,
			// F2FP: 79:2 3 rounds toward zero (.RZ, cvt.rz); 78 selects MERGE_C:
			// one result into the half of Rc 72 does not name (.H1: the high half
			// kept), the sources at 32 and 64, RZ at 24 not printed.
			`x23e 75:1{_,RELU} 76:1{_,BF16} 64:8{255=PACK_AB} =78:1:0 79:2{0=,3=RZ} | >R@16, R@24, $B/1`,
			`23e 75:1{_,RELU} 76:1{_,BF16} 0:0{MERGE_C} =78:1:1 79:2{0=,3=RZ} =24:8:255 =72:1:0 | >R@16, R@32, R@64`,
			`23e 75:1{_,RELU} 76:1{_,BF16} 0:0{MERGE_C} =78:1:1 79:2{0=,3=RZ} =24:8:255 =72:1:1 | >R@16, R@32, R@64.H1`,
		},
	},
	{op: "I2FP", class: ClassConv, sim: SimI2F,
		forms: []string{
			// selector 5: a constant source (I2FP.F32.S32 R5, c[0x0][0x178],
			// cvt.rn.f32.s32 of a kernel parameter)
			`x245 75:2{?,?,F32,?} 84:2+74:1{2=U32,6=S32} 78:2{0=,3=RZ} | >R@16, $B/15`,
		},
	},
	{op: "I2F", class: ClassSFU, queue: QueueSFU, sim: SimI2F, noReuse: true,
		forms: []string{
			// conversions: 75:2 1 is an F16 result, 84:2 1 an F16 (F2I, F2F) or
			// 16-bit integer (I2F) source; F2I bit 80 .FTZ; immediate (906) and
			// constant (b06, b12) sources of I2F (ptxas's division idiom
			// I2F.U32.RP R0, 0xb); F2F.F16.F64 / F64.F16 (310) and F2F 304 for
			// 32-bit to 16-bit (bit 77 BF16).
			`306 75:2{?,F16,_,?} 84:2+74:1{1=U16,2=U32,6=} 78:2{_,RM,RP,RZ} | >R@16, R@32`,
			`906 75:2{?,?,_,?} 84:2+74:1{2=U32,6=} 78:2{_,RM,RP,RZ} | >R@16, U@32:32`,
			`b06 75:2{?,?,_,?} 84:2+74:1{2=U32,6=} 78:2{_,RM,RP,RZ} | >R@16, C@40`,
			`b12 75:2{?,?,_,F64} 84:2+74:1{2=U32,6=,3=U64,7=S64} 78:2{_,RM,RP,RZ} | >R@16, C@40`,
			`312 75:2{?,?,_,F64} 84:2+74:1{2=U32,6=,3=U64,7=S64} 78:2{_,RM,RP,RZ} | >R@16, R@32`,
			// from a uniform register (selector 6: nvcc's 64-bit division
			// by a kernel parameter, I2F.U64.RP R2, UR4)
			`d12 =91:1:1 75:2{?,?,_,F64} 84:2+74:1{3=U64,7=S64} 78:2{_,RM,RP,RZ} | >R@16, UR@32`,
			`306 75:2{?,F16,_,?} 84:2+74:1{0=U8,4=S8,5=S16} 78:2{_,RM,RP,RZ} | >R@16, R@32`,
			`312 75:2{?,F16,_,F64} 84:2+74:1{0=U8,4=S8,1=U16,5=S16,3=U64,7=S64} 78:2{_,RM,RP,RZ} | >R@16, R@32`,
		},
		regs: []regRule{
			{mods: "F64 U64", regs: []uint8{2, 2}},
			{mods: "F64 S64", regs: []uint8{2, 2}},
			{mods: "F64", regs: []uint8{2, 1}},
			{mods: "U64", regs: []uint8{1, 2}},
			{mods: "S64", regs: []uint8{1, 2}},
		},
	},
	{op: "F2I", class: ClassSFU, queue: QueueSFU, sim: SimF2I, noReuse: true,
		forms: []string{
			`305 80:1{_,FTZ} 75:2+72:1{1=U16,2=U32,6=} 84:2{?,F16,_,?} 78:2{_,FLOOR,CEIL,TRUNC} 77:1{_,NTZ} | >R@16, R@32`,
			`311 75:2+72:1{2=U32,6=,3=U64,7=S64} 84:2{?,?,_,F64} 78:2{_,FLOOR,CEIL,TRUNC} 77:1{_,NTZ} | >R@16, R@32`,
			// conversions to and from 8- and 16-bit integers: the integer type
			// is 75:2+72:1 (F2I) or 84:2+74:1 (I2F) as size | signed<<2 (U8 0,
			// U16 1, U32 2, U64 3, S8 4, ... S32 6 printed bare); 311/312 are the
			// forms with a 64-bit operand, 305/306 the 32-bit ones.
			`305 80:1{_,FTZ} 75:2+72:1{0=U8,4=S8,5=S16} 84:2{?,F16,_,?} 78:2{_,FLOOR,CEIL,TRUNC} 77:1{_,NTZ} | >R@16, R@32`,
			`311 75:2+72:1{0=U8,4=S8,1=U16,5=S16,3=U64,7=S64} 84:2{?,F16,_,F64} 78:2{_,FLOOR,CEIL,TRUNC} 77:1{_,NTZ} | >R@16, R@32`,
		},
		regs: []regRule{
			{mods: "U64 F64", regs: []uint8{2, 2}},
			{mods: "S64 F64", regs: []uint8{2, 2}},
			{mods: "F64", regs: []uint8{1, 2}},
			{mods: "U64", regs: []uint8{2, 1}},
			{mods: "S64", regs: []uint8{2, 1}},
		},
	},
	{op: "F2F", class: ClassSFU, late: true, queue: QueueSFU, sim: SimF2F, noReuse: true,
		forms: []string{
			`310 75:2+84:2{14=F32.F64,11=F64.F32,13=F16.F64,7=F64.F16} 78:2{_,RM,RP,RZ} | >R@16, R@32`,
			`304 77:1+75:2+84:2{17=BF16.F32,18=F16.F32} 78:2{_,RM,RP,RZ} | >R@16, R@32`,
		},
		regs: []regRule{
			// F2F reads its sources late (the seed's model: "late sources and
			// late result"); ptxas's corpus has no F2F overwritten sooner.
			{mods: "F64 F32", regs: []uint8{2, 1}},
			{mods: "F32 F64", regs: []uint8{1, 2}},
			{mods: "F64 F16", regs: []uint8{2, 1}},
			{mods: "F16 F64", regs: []uint8{1, 2}},
		},
	},
	{op: "HADD2", class: ClassHalf, sim: SimHalf,
		forms: []string{
			`x230 ur=7 | >R@16, R@24, $B/1-63r2`,
			// (nvdisasm refuses HADD2.F32 with a reuse flag: no reuse slots)
			`230 78:1{?,F32} =60:2:3 | >R@16, R@24-72^, R@32^.H1_H1`,
			`230 78:1{?,F32} =60:2:2 | >R@16, R@24-72^, R@32^.H0_H0`,
			`230 =78:1:0 80:1{_,FTZ} 77:1{_,SAT} | >R@16, R@24-72|73zh74, R@32-63|62zh60r2`,
			// (nvdisasm refuses HADD2.F32 with a reuse flag on A, prints it on B)
			`230 =78:1:1 0:0{F32} 80:1{_,FTZ} 77:1{_,SAT} | >R@16, R@24-72|73zh74^, R@32-63|62zh60r2`,
			// B a constant (0x630), with HFMA2's constant bits (w: c[0x0]
			// [0x168]); .F32 refuses A's reuse flag, as above
			`630 =78:1:0 80:1{_,FTZ} 77:1{_,SAT} | >R@16, R@24-72|73zh74, C@40-63|62zh60w`,
			`630 =78:1:1 0:0{F32} 80:1{_,FTZ} 77:1{_,SAT} | >R@16, R@24-72|73zh74^, C@40-63|62zh60w`,
		},
	},
	{op: "HMUL2", class: ClassHalf, sim: SimHalf,
		forms: []string{
			`x232 | >R@16, R@24, $B/1`,
			// HMUL2 by an f16x2 immediate: bits 32..63 hold the pair, H0 low;
			// nvdisasm prints H1 first (ptxas's mul.f16x2 by 0x40003C00 prints
			// HMUL2 R5, R0, 2, 1).
			`832 | >R@16, R@24, H@48:16, H@32:16`,
			`232 78:1{_,F32} 80:1+76:1{_,FTZ,FMZ} 77:1{_,SAT} | >R@16, R@24-72|73zh74, R@32-63|62zh60`,
			// B a constant (0xa32), as HADD2's (A reuses through slot 0, .F32
			// included; nvdisasm refuses slot 1)
			`a32 78:1{_,F32} 80:1+76:1{_,FTZ,FMZ} 77:1{_,SAT} | >R@16, R@24-72|73zh74, C@40-63|62zh60w`,
		},
	},
	{op: "HMNMX2", class: ClassHalf, sim: SimLane3,
		forms: []string{
			// HMNMX2: min where the predicate holds, max where not, as IMNMX;
			// .BF16_V2 at 85 as HFMA2's, .NAN at 81 (half.ptx, one field varied)
			`x240 85:1{_,BF16_V2} 81:1{_,NAN} | >R@16, R@24, $B/1, P@87~90`,
			// HMNMX2 with HFMA2's swizzles and negate/abs bits, 78 .F32, 80 .FTZ,
			// 82 .XORSIGN (min.xorsign.abs)
			`240 85:1{_,BF16_V2} 78:1{_,F32} 80:1{_,FTZ} 81:1{_,NAN} 82:1{_,XORSIGN} | >R@16, R@24-72|73zh74, R@32-63|62zh60, P@87~90`,
			// with a pair of bfloat16 immediates (selector 4: nvcc's bf16
			// clamp, HMNMX2.BF16_V2 R5, R5, 1, 1, PT)
			`840 0:0{BF16_V2} =85:1:1 80:1{_,FTZ} 81:1{_,NAN} | >R@16, R@24-72|73zh74, HB@48:16, HB@32:16, P@87~90`,
		},
	},
	{op: "HFMA2", class: ClassHalf, sim: SimHalf,
		forms: []string{
			`x231 85:1{_,BF16_V2} | >R@16, R@24, $B/1, $C/1`,
			// Half-precision pairs with swizzled operands: zhPOS is the 2-bit
			// selector at POS (0 none, 1 .F32, 2 .H0_H0, 3 .H1_H1): A at 74, B at
			// 60, C at 81. Negate/abs: A 72/73, B 63/62, C 84/83. 76 .FMZ and 80
			// .FTZ (both: INVALID3), 77 .SAT, 78 .F32 (the result in binary32), 85
			// .BF16_V2. HFMA2.RELU (79) prints the predicate at 87 unless it is PT
			// (ptxas writes PT); without .RELU the field is 0 and never printed.
			// HADD2's B reuses through slot 2 (bit 124), as its first form.
			`231 85:1{_,BF16_V2} 78:1{_,F32} 80:1+76:1{_,FTZ,FMZ} 77:1{_,SAT} =79:1:0 =87:4:0 | >R@16, R@24-72|73zh74, R@32-63|62zh60, R@64-84|83zh81`,
			`231 85:1{_,BF16_V2} 78:1{_,F32} 80:1+76:1{_,FTZ,FMZ} 0:0{RELU} =77:1:0 =79:1:1 =87:4:7 | >R@16, R@24-72|73zh74, R@32-63|62zh60, R@64-84|83zh81`,
			// A constant as C (selector 3, 0x631) or as B (5, 0xa31): the
			// constant takes the B field's swizzle, negate and abs bits (60,
			// 63, 62) in either place, the register at 64 the C field's (81,
			// 84, 83); as B that register reuses through slot 1 (nvdisasm
			// refuses slot 2). nvdisasm prints c[0x0] [0x168] (spec flag w),
			// the swizzle inside the bars. ptxas's fma.rn(.relu,.sat,.ftz)
			// .f16x2/.bf16x2 with a kernel parameter, one field varied.
			`631 85:1{_,BF16_V2} 78:1{_,F32} 80:1+76:1{_,FTZ,FMZ} 77:1{_,SAT} =79:1:0 =87:4:0 | >R@16, R@24-72|73zh74, R@64-84|83zh81r1, C@40-63|62zh60w`,
			`631 85:1{_,BF16_V2} 78:1{_,F32} 80:1+76:1{_,FTZ,FMZ} 0:0{RELU} =77:1:0 =79:1:1 =87:4:7 | >R@16, R@24-72|73zh74, R@64-84|83zh81r1, C@40-63|62zh60w`,
			`a31 85:1{_,BF16_V2} 78:1{_,F32} 80:1+76:1{_,FTZ,FMZ} 77:1{_,SAT} =79:1:0 =87:4:0 | >R@16, R@24-72|73zh74, C@40-63|62zh60w, R@64-84|83zh81`,
			`a31 85:1{_,BF16_V2} 78:1{_,F32} 80:1+76:1{_,FTZ,FMZ} 0:0{RELU} =77:1:0 =79:1:1 =87:4:7 | >R@16, R@24-72|73zh74, C@40-63|62zh60w, R@64-84|83zh81`,
			// An immediate pair as C (selector 2, 0x431) or as B (4, 0x831),
			// H1 printed first as HMUL2's, binary16 or (.BF16_V2) bfloat16:
			// nvcc's HFMA2.BF16_V2 R7, R3, 1, 1, R6 for __hfma2(x, one, one);
			// the register at 64 keeps its swizzle at 81 and negate/abs at
			// 84/83 (nvdisasm on the word, one bit flipped at a time); no
			// reuse flags (nvdisasm prints none). .RELU prints its predicate
			// unless PT (87), as above.
			`431 =85:1:0 80:1+76:1{_,FTZ,FMZ} 77:1{_,SAT} =78:1:0 =79:1:0 =87:4:0 | >R@16, R@24-72|73zh74^, R@64-84|83zh81^, H@48:16, H@32:16`,
			`431 0:0{BF16_V2} =85:1:1 80:1+76:1{_,FTZ,FMZ} 77:1{_,SAT} =78:1:0 =79:1:0 =87:4:0 | >R@16, R@24-72|73zh74^, R@64-84|83zh81^, HB@48:16, HB@32:16`,
			// (their A and C print .reuse: nvcc's HFMA2 R5, R24.reuse.H0_H0,
			// 6.1e-05, 6.1e-05, R5.H0_H0 and HFMA2.BF16_V2 R13, R8, 1, 1, R9.reuse)
			`831 =85:1:0 80:1+76:1{_,FTZ,FMZ} 77:1{_,SAT} =78:1:0 =79:1:0 =87:4:0 | >R@16, R@24-72|73zh74, H@48:16, H@32:16, R@64-84|83zh81`,
			`831 0:0{BF16_V2} =85:1:1 80:1+76:1{_,FTZ,FMZ} 77:1{_,SAT} =78:1:0 =79:1:0 =87:4:0 | >R@16, R@24-72|73zh74, HB@48:16, HB@32:16, R@64-84|83zh81`,
			`831 0:0{BF16_V2} =85:1:1 80:1+76:1{_,FTZ,FMZ} 0:0{RELU} =77:1:0 =78:1:0 =79:1:1 =87:4:7 | >R@16, R@24-72|73zh74, HB@48:16, HB@32:16, R@64-84|83zh81`,
		},
	},
	{op: "HMMA", class: ClassHMMA, late: true, queue: QueueHMMA, sim: SimHMMA,
		forms: []string{
			`23c 75:1{1688,16816} 76:1{?,F32} 82:1{_,BF16} | >R@16, R@24, R@32, R@64`,
			// Tensor-core shapes beyond the first HMMA form: 75+78 the HMMA shape
			// (1684: m16n8k4 tf32), 76 an F32 (set) or F16 accumulator, 82:2 .BF16
			// or .TF32 inputs. IMMA: 75+85:2 the shape, 76+83 and 78+84 the types
			// of A and B (signed, 4-bit), 82 .SAT; A is .ROW (73 clear) and B .COL
			// (74 set). BMMA: 75:2 the shape, 77:2 AND/XOR, 80 .POPC. DMMA.884:
			// negate/abs on A (72/73) and C (75/74), 78:2 the rounding. The
			// uniform predicate at 87 (UPT written as 0) is not modelled.
			`23c 75:1+78:1{1688,16816,1684} 76:1{F16,F32} 82:2{_,BF16,TF32} | >R@16, R@24, R@32, R@64`,
			// sparse HMMA (mma.sp): 73 .SP, 75+78 the shape (0: 1688, ptxas
			// 11.8's HMMA.SP.1688.F32.TF32 for mma.sp m16n8k8 .tf32), the
			// metadata register at 40 and its selector at 48:2 after C
			`23c =73:1:1 0:0{SP} 75:1+78:1{0=1688,1=16816,3=16832} 76:1{F16,F32} 82:2{_,BF16,TF32} | >R@16, R@24, R@32, R@64, R@40, U@48:2`,
		},
		regs: []regRule{
			// mma.sync fragments per lane: tf32 m16n8k8 A 4, B 2; m16n8k4 A 2,
			// B 1 (C and D 4 f32); IMMA/BMMA C and D 4 s32 (m8n8: 2) and A/B the
			// fragment bytes over 4; DMMA.884 A and B one f64, C and D two.
			// sparse tf32 (mma.sp m16n8k8 / k16 .tf32): A holds k/2 and B k
			// tf32 elements a column: m16n8k8 A 2, B 2; k16 A 4, B 4 (before the
			// dense tf32 rule, which they would match)
			{mods: "SP 1688", regs: []uint8{4, 2, 2, 4}},
			{mods: "SP 16816 TF32", regs: []uint8{4, 4, 4, 4}},
			{mods: "1688 F32 TF32", regs: []uint8{4, 4, 2, 4}},
			{mods: "1684", regs: []uint8{4, 2, 1, 4}},
			{mods: "SP 16832 F32", regs: []uint8{4, 4, 4, 4}},
			{mods: "SP 16832", regs: []uint8{2, 4, 4, 2}},
			{mods: "SP 16816 F32", regs: []uint8{4, 2, 2, 4}},
			{mods: "SP 16816", regs: []uint8{2, 2, 2, 2}},
			{mods: "16816 F32", regs: []uint8{4, 4, 2, 4}},
			{mods: "16816", regs: []uint8{2, 4, 2, 2}},
			{mods: "1688 F32", regs: []uint8{4, 2, 1, 4}},
			{mods: "1688", regs: []uint8{2, 2, 1, 2}},
		},
	},
	// Memory.
	{op: "LDG", class: ClassGlobal, late: true, sim: SimLoad, noReuse: true,
		forms: []string{
			`981 72:1{?,E} =76:1:1 =81:3:7 =87:5:24 84:3{0=EF,1=,3=LU,5=NA} 68:2{_,LTC64B,LTC128B} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,1=CONSTANT.PRIVATE,2=CONSTANT.CTA,4=CONSTANT,5=STRONG.SM,7=STRONG.GPU,8=MMIO.GPU,10=STRONG.SYS} | >R@16, MG@24`,
			// LDG and STG with a 32-bit register address [Ra+off] (codes 381 and
			// 386; ptxas's generic atomics fall back to it): LDG's and STG's
			// fields without the 64-bit address (87:5 0).
			`381 72:1{?,E} =81:3:7 84:3{0=EF,1=,3=LU,5=NA} 68:2{_,LTC64B,LTC128B} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,1=CONSTANT.PRIVATE,2=CONSTANT.CTA,4=CONSTANT,5=STRONG.SM,7=STRONG.GPU,8=MMIO.GPU,10=STRONG.SYS} | >R@16, MA@24/0`,
			// LDG and STG with every cache-eviction (84:3) and scope (77:4) value
			// nvdisasm names and the 256-byte L2 prefetch (68:2 3): ld.global
			// .L1::evict_last, .L2::256B, st.global.L1::no_allocate (tail_misc.ptx)
			`981 72:1{?,E} =76:1:1 =81:3:7 =87:5:24 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 68:2{_,LTC64B,LTC128B,LTC256B} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,1=CONSTANT.PRIVATE,2=CONSTANT.CTA,3=CONSTANT.CTA.PRIVATE,4=CONSTANT,5=STRONG.SM,6=STRONG.GPU.PRIVATE,7=STRONG.GPU,8=MMIO.GPU,9=CONSTANT.SM,10=STRONG.SYS,11=CONSTANT.SM.PRIVATE,12=MMIO.SYS,13=CONSTANT.VC,14=CONSTANT.VC.PRIVATE,15=CONSTANT.GPU} | >R@16, MG@24`,
			// with bit 101 set, nvdisasm prints the descriptor: desc[UR4][R6.64]
			// (ld.global.L2::cache_hint, tail_misc.ptx mem2; the operand MGD)
			`981 =101:1:1 72:1{?,E} =76:1:1 =81:3:7 =87:5:24 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 68:2{_,LTC64B,LTC128B,LTC256B} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,1=CONSTANT.PRIVATE,2=CONSTANT.CTA,3=CONSTANT.CTA.PRIVATE,4=CONSTANT,5=STRONG.SM,6=STRONG.GPU.PRIVATE,7=STRONG.GPU,8=MMIO.GPU,9=CONSTANT.SM,10=STRONG.SYS,11=CONSTANT.SM.PRIVATE,12=MMIO.SYS,13=CONSTANT.VC,14=CONSTANT.VC.PRIVATE,15=CONSTANT.GPU} | >R@16, MGD@24`,
			// with bit 76 clear the address adds a uniform register, at 32:6
			// in the descriptor's place: [Ra.64+URb+off], and with bit 90
			// clear [Ra.U32+URb+off] (nvdisasm on ptxas's LDG words, one
			// field varied; operand fMGU). 64:4 is then a trailing predicate
			// (0 none, printed P(7-v) with 67 its negation) whose meaning is
			// not known: kept at 0.
			`981 72:1{?,E} =76:1:0 =81:3:7 =87:5:24 =64:4:0 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 68:2{_,LTC64B,LTC128B,LTC256B} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,1=CONSTANT.PRIVATE,2=CONSTANT.CTA,3=CONSTANT.CTA.PRIVATE,4=CONSTANT,5=STRONG.SM,6=STRONG.GPU.PRIVATE,7=STRONG.GPU,8=MMIO.GPU,9=CONSTANT.SM,10=STRONG.SYS,11=CONSTANT.SM.PRIVATE,12=MMIO.SYS,13=CONSTANT.VC,14=CONSTANT.VC.PRIVATE,15=CONSTANT.GPU} | >R@16, MGU@24u32`,
			`981 72:1{?,E} =76:1:0 =81:3:7 =87:5:16 =64:4:0 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 68:2{_,LTC64B,LTC128B,LTC256B} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,1=CONSTANT.PRIVATE,2=CONSTANT.CTA,3=CONSTANT.CTA.PRIVATE,4=CONSTANT,5=STRONG.SM,6=STRONG.GPU.PRIVATE,7=STRONG.GPU,8=MMIO.GPU,9=CONSTANT.SM,10=STRONG.SYS,11=CONSTANT.SM.PRIVATE,12=MMIO.SYS,13=CONSTANT.VC,14=CONSTANT.VC.PRIVATE,15=CONSTANT.GPU} | >R@16, MGU32@24u32`,
		},
		regs: []regRule{
			{mods: "128", regs: []uint8{4}},
			{mods: "64", regs: []uint8{2}},
		},
	},
	{op: "STG", class: ClassGlobal, late: true, sim: SimStore, noReuse: true,
		forms: []string{
			`986 72:1{?,E} =76:1:1 =87:5:24 84:3{0=EF,1=} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,5=STRONG.SM,7=STRONG.GPU,10=STRONG.SYS} | MG@24/64, R@32`,
			`386 72:1{?,E} =81:3:7 84:3{0=EF,1=} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,5=STRONG.SM,7=STRONG.GPU,10=STRONG.SYS} | MA@24/0, R@32`,
			`986 72:1{?,E} =76:1:1 =87:5:24 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,1=CONSTANT.PRIVATE,2=CONSTANT.CTA,3=CONSTANT.CTA.PRIVATE,4=STRONG.SM.PRIVATE,5=STRONG.SM,6=STRONG.GPU.PRIVATE,7=STRONG.GPU,8=MMIO.GPU,9=CONSTANT.SM,10=STRONG.SYS,11=CONSTANT.SM.PRIVATE,12=MMIO.SYS,13=CONSTANT.VC,14=CONSTANT.VC.PRIVATE,15=CONSTANT.GPU} | MG@24/64, R@32`,
			`986 =101:1:1 72:1{?,E} =76:1:1 =87:5:24 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,1=CONSTANT.PRIVATE,2=CONSTANT.CTA,3=CONSTANT.CTA.PRIVATE,4=STRONG.SM.PRIVATE,5=STRONG.SM,6=STRONG.GPU.PRIVATE,7=STRONG.GPU,8=MMIO.GPU,9=CONSTANT.SM,10=STRONG.SYS,11=CONSTANT.SM.PRIVATE,12=MMIO.SYS,13=CONSTANT.VC,14=CONSTANT.VC.PRIVATE,15=CONSTANT.GPU} | MGD@24/64, R@32`,
			// LDG's uniform-register addresses, URb at 64:6 (the descriptor's place)
			`986 72:1{?,E} =76:1:0 =87:5:24 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,1=CONSTANT.PRIVATE,2=CONSTANT.CTA,3=CONSTANT.CTA.PRIVATE,4=STRONG.SM.PRIVATE,5=STRONG.SM,6=STRONG.GPU.PRIVATE,7=STRONG.GPU,8=MMIO.GPU,9=CONSTANT.SM,10=STRONG.SYS,11=CONSTANT.SM.PRIVATE,12=MMIO.SYS,13=CONSTANT.VC,14=CONSTANT.VC.PRIVATE,15=CONSTANT.GPU} | MGU@24u64, R@32`,
			`986 72:1{?,E} =76:1:0 =87:5:16 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,1=CONSTANT.PRIVATE,2=CONSTANT.CTA,3=CONSTANT.CTA.PRIVATE,4=STRONG.SM.PRIVATE,5=STRONG.SM,6=STRONG.GPU.PRIVATE,7=STRONG.GPU,8=MMIO.GPU,9=CONSTANT.SM,10=STRONG.SYS,11=CONSTANT.SM.PRIVATE,12=MMIO.SYS,13=CONSTANT.VC,14=CONSTANT.VC.PRIVATE,15=CONSTANT.GPU} | MGU32@24u64, R@32`,
		},
		regs: []regRule{
			{mods: "128", regs: []uint8{0, 4}},
			{mods: "64", regs: []uint8{0, 2}},
		},
	},
	{op: "LDL", class: ClassGlobal, late: true, sim: SimLoad, noReuse: true,
		forms: []string{
			// local memory: addresses as shared ones without a scale field
			// 84:3 the cache operation (EF, -, EL, LU, EU, NA; 6 and 7 print
			// INVALID6/7): nvcc's spills reload with LDL.LU (nvdisasm on
			// each value)
			`983 84:3{EF,_,EL,LU,EU,NA} 73:3{U8,S8,U16,S16,_,64,128} | >R@16, MX@24`,
		},
		regs: []regRule{
			// local memory goes through L1 like global memory; ptxas waits on
			// LDL through a write scoreboard (testdata/ptxas/golden/control.sm_86.txt)
			{mods: "128", regs: []uint8{4}},
			{mods: "64", regs: []uint8{2}},
		},
	},
	{op: "STL", class: ClassGlobal, late: true, sim: SimStore, noReuse: true,
		forms: []string{
			`387 84:3{EF,_,EL,LU,EU,NA} 73:3{U8,S8,U16,S16,_,64,128} | MX@24, R@32`,
		},
		regs: []regRule{
			{mods: "128", regs: []uint8{0, 4}},
			{mods: "64", regs: []uint8{0, 2}},
		},
	},
	{op: "LDC", class: ClassGlobal, late: true, sim: SimLDC, noReuse: true,
		forms: []string{
			// LDC: a constant indexed by a register, byte offset 16 bits at 38,
			// bank at 54 (learnt by flipping each bit); the size field as LDS's
			`b82 73:3{U8,S8,U16,S16,_,64} | >R@16, CX@24`,
		},
		regs: []regRule{
			// LDC sets a write scoreboard (control.sm_86.txt: LDC R4, c[0x2][R8])
			{mods: "64", regs: []uint8{2}},
		},
	},
	{op: "LDS", class: ClassShared, late: true, queue: QueueLDS, sim: SimLoad, noReuse: true,
		forms: []string{
			`984 73:3{U8,S8,U16,S16,_,64,128} | >R@16, MS@24`,
			// [Ra(.Xn)+URb+off]: bit 91 names URb, at 32:6 (nvcc's LDS R6,
			// [UR5] and LDS.128 R4, [UR4]; flipping the bits: nvdisasm then
			// prints URZ, and RZ only with a scale, [RZ.X16+UR5])
			`984 =91:1:1 73:3{U8,S8,U16,S16,_,64,128} | >R@16, MU@24u32`,
		},
		regs: []regRule{
			{mods: "128", regs: []uint8{4}},
			{mods: "64", regs: []uint8{2}},
		},
	},
	{op: "STS", class: ClassShared, late: true, sim: SimStore, noReuse: true,
		forms: []string{
			`388 73:3{U8,S8,U16,S16,_,64,128} | MS@24, R@32`,
			// [Ra(.Xn)+URb+off]: opcode 0x988 with bit 91, URb at 64:6
			// (nvcc's STS [UR4], R3; STS [R170.X4+UR4+0x10], R3 by flipping)
			`988 =91:1:1 73:3{U8,S8,U16,S16,_,64,128} | MU@24, R@32`,
		},
		regs: []regRule{
			{mods: "128", regs: []uint8{0, 4}},
			{mods: "64", regs: []uint8{0, 2}},
		},
	},
	{op: "LDSM", class: ClassShared, late: true, queue: QueueLDSM, sim: SimLDSM, noReuse: true,
		forms: []string{
			`83b 78:2{16.M88,16.MT88} 72:2{_,2,4} | >R@16, MX@24`,
		},
		regs: []regRule{
			{mods: "4", regs: []uint8{4}},
			{mods: "2", regs: []uint8{2}},
		},
	},
	{op: "LDGSTS", class: ClassGlobal, late: true, sim: SimLDGSTS, noReuse: true,
		forms: []string{
			`fae 0:0{E} =70:1:1 =76:1:1 =87:5:23 81:1{BYPASS,_} 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 71:2{_,LTC64B,LTC128B} 73:3{?,?,?,?,_,64,128} 77:4{0=} | MX@16+44:20, MG@24+32:12/64`,
			// with a zero-fill predicate at 87 (not at 90), printed last
			// (cp.async with a source size: testdata/ptxas/golden/kptx_sg.*)
			`fae 0:0{E} =70:1:1 =76:1:1 =91:1:1 81:1{BYPASS,_} 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 71:2{_,LTC64B,LTC128B} 73:3{?,?,?,?,_,64,128} 77:4{0=} | MX@16+44:20, MG@24+32:12/64, P@87~90`,
			// (84:3: the cache-eviction hint, printed after .BYPASS as LDG's:
			// nvdisasm on the word with 84:3 varied)
			// LDGSTS .ZFILL (bit 82): cp.async with a register source size. The
			// predicate at 87 (false: all 16 bytes zero) and the source address's
			// low 4 bits the number of trailing bytes zero-filled; ptxas builds the
			// address as src + (16-size)&15 and the predicate as size != 0.
			`fae 0:0{E} =70:1:1 =76:1:1 =91:1:1 81:1{BYPASS,_} 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 71:2{_,LTC64B,LTC128B} 73:3{?,?,?,?,_,64,128} 82:1{?,ZFILL} 77:4{0=} | MX@16+44:20, MG@24+32:12/64, P@87~90`,
			// with bit 76 clear the global address adds URb, at 64:6 in the
			// descriptor's place: [Ra.64+URb+off] (nvdisasm prints RZ.64 and
			// leaves out URZ; no .U32 form: bit 90 is the predicate's negation)
			`fae 0:0{E} =70:1:1 =76:1:0 =87:5:23 81:1{BYPASS,_} 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 71:2{_,LTC64B,LTC128B} 73:3{?,?,?,?,_,64,128} 77:4{0=} | MX@16+44:20, MGU@24+32:12u64Z`,
			`fae 0:0{E} =70:1:1 =76:1:0 =91:1:1 81:1{BYPASS,_} 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 71:2{_,LTC64B,LTC128B} 73:3{?,?,?,?,_,64,128} 77:4{0=} | MX@16+44:20, MGU@24+32:12u64Z, P@87~90`,
			`fae 0:0{E} =70:1:1 =76:1:0 =91:1:1 81:1{BYPASS,_} 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 71:2{_,LTC64B,LTC128B} 73:3{?,?,?,?,_,64,128} 82:1{?,ZFILL} 77:4{0=} | MX@16+44:20, MGU@24+32:12u64Z, P@87~90`,
		},
	},
	{op: "LDGDEPBAR", class: ClassSync, queue: QueueAsync, sim: SimLDGDEPBAR,
		forms: []string{
			`9af |`,
		},
	},
	{op: "DEPBAR", class: ClassSync, sim: SimDEPBAR,
		forms: []string{
			`91a 47:1{?,LE} | SB@44, U@38:6`,
			// DEPBAR.LE SBn, count, {set}: also waits for the scoreboards of the
			// 6-bit set at 32 (bit n: SBn), printed highest first.
			`91a 47:1{?,LE} | SB@44, U@38:6, SBS@32:6`,
		},
	},
	{op: "BAR", class: ClassSync, sim: SimBAR, noReuse: true,
		forms: []string{
			// bit 80 .DEFER_BLOCKING (nvdisasm 11.8 prints it; ptxas 11.8 was
			// not seen to set it for bar.sync or barrier.sync)
			`b1d 77:2{SYNC} 80:1{_,DEFER_BLOCKING} =42:12:0 | U@54:4`,
			`b1d 77:2{SYNC} 80:1{_,DEFER_BLOCKING} | U@54:4, U@42:12n`,
			`b1d 77:2{1=ARV} | U@54:4, U@42:12`,
			// a barrier number in a register and no thread count (bar.sync r2):
			// nvdisasm prints BAR.SYNC R0 when 42:12 is 0 (BAR.ARV always
			// prints its count)
			`51d 77:2{0=SYNC} =42:12:0 | R@32`,
			`51d 77:2{0=SYNC} | R@32, U@42:12n`,
			`51d 77:2{1=ARV} | R@32, U@42:12`,
			`91d 77:2{SYNC,ARV} | U@54:4, R@32`,
			// bar.red: 77:2 2 (RED), 74:2 the reduction, 80 .DEFER_BLOCKING, the
			// voting predicate at 87; B2R.RESULT reads the result (78 1), into a
			// register or (81) a predicate
			`b1d 77:2{2=RED} 74:2{POPC,AND,OR} 80:1{_,DEFER_BLOCKING} =42:12:0 | U@54:4, P@87~90`,
			`b1d 77:2{2=RED} 74:2{POPC,AND,OR} 80:1{_,DEFER_BLOCKING} | U@54:4, U@42:12n, P@87~90`,
		},
	},
	{op: "REDUX", class: ClassShared, sim: SimREDUX, noReuse: true,
		forms: []string{
			// warp reduction into a uniform register: 78:3 the operation (0 AND,
			// printed bare), 73 signed min/max (testdata/ptxas/golden/reduce.*)
			`3c4 78:3{_,OR,XOR,SUM,MIN,MAX} 73:1{_,S32} | >UR@16, R@24`,
		},
	},
	{op: "ATOMS", class: ClassShared, late: true, sim: SimATOMS, noReuse: true,
		forms: []string{
			// shared-memory atomics: the ATOMG operation field at 87, S32 / 64 at
			// 73, a shared address without a scale field; CAS and CAST.SPIN in
			// 38d (testdata/ptxas/golden/atomics.*)
			`38c 87:4{ADD,MIN,MAX,INC,DEC,AND,OR,XOR,EXCH} 73:3{_,S32} | >R@16, MX@24, R@32`,
			`38d 87:2{CAS,?,?,CAST.SPIN} 73:3{_,?,64} | >R@16, MX@24, R@32, R@64`,
			// shared atomics with a scaled address ([R3.X4+0x40], scale at 78:2)
			// and the 64-bit exchange (73:3 2)
			`38c 87:4{ADD,MIN,MAX,INC,DEC,AND,OR,XOR,EXCH} 73:3{_,S32,64} | >R@16, MS@24, R@32`,
			`38d 87:2{CAS,?,?,CAST.SPIN} 73:3{_,?,64} | >R@16, MS@24, R@32, R@64`,
			// shared atomics and arrivals addressed through a uniform register
			// (MU: [Ra+URb+off]): the warp-aggregated increment ptxas emits for
			// atom.shared.inc (87:5 26), mbarrier.arrive (87:5 25, .64 at 73:3)
			// and cp.async.mbarrier.arrive (ARRIVES.LDGSTSBAR.64)
			`f8c =87:5:26 0:0{POPC.INC.32} =73:3:0 | >R@16, MU@24`,
			`f8c =87:5:25 0:0{ARRIVE.64} =73:3:2 | >R@16, MU@24`,
		},
		regs: []regRule{
			// ATOMS and REDUX set write scoreboards (atomics.sm_86.txt, reduce.sm_86.txt)
			{mods: "64", regs: []uint8{2, 0, 2, 2}},
		},
	},
	{op: "SHFL", class: ClassShared, queue: QueueSHFL, sim: SimSHFL, noReuse: true,
		forms: []string{
			`f89 58:2{IDX,UP,DOWN,BFLY} | >P@81, >R@16, R@24, U@53:5, U@40:13`,
			`589 58:2{IDX,UP,DOWN,BFLY} | >P@81, >R@16, R@24, R@32, U@40:13`,
			`389 58:2{IDX,UP,DOWN,BFLY} | >P@81, >R@16, R@24, R@32, R@64`,
			`989 58:2{IDX,UP,DOWN,BFLY} | >P@81, >R@16, R@24, U@53:5, R@64`,
		},
	},
	{op: "RED", class: ClassGlobal, late: true, sim: SimGlobalAtomic, noReuse: true,
		forms: []string{
			`98e 72:1{?,E} =71:1:1 =90:2:3 87:3{ADD,MIN,MAX,INC,DEC,AND,OR,XOR} 73:3{_,S32,64,F32.FTZ.RN,F16x2.RN,?,F64.RN} 84:3{1=} 77:4{5=STRONG.SM,7=STRONG.GPU,10=STRONG.SYS} | MG@24/64, R@32`,
		},
		regs: []regRule{
			{mods: "64", regs: []uint8{0, 2}},
			{mods: "F64", regs: []uint8{0, 2}},
		},
	},
	{op: "ATOMG", class: ClassGlobal, late: true, sim: SimGlobalAtomic, noReuse: true,
		forms: []string{
			`9a8 72:1{?,E} =70:2:3 =91:1:1 87:4{ADD,MIN,MAX,INC,DEC,AND,OR,XOR,EXCH} 73:3{_,S32,64,F32.FTZ.RN,F16x2.RN,S64,F64.RN} 84:3{1=} 77:4{5=STRONG.SM,7=STRONG.GPU,10=STRONG.SYS} | >P@81, >R@16, MG@24/64, R@32`,
			`3a9 72:1{?,E} 0:0{CAS} 73:3{_,?,64} 84:3{1=} 77:4{5=STRONG.SM,7=STRONG.GPU,10=STRONG.SYS} | >P@81, >R@16, MA@24/0, R@32, R@64`,
		},
		regs: []regRule{
			{mods: "CAS 64", regs: []uint8{0, 2, 0, 2, 2}},
			{mods: "64", regs: []uint8{0, 2, 0, 2}},
			{mods: "F64", regs: []uint8{0, 2, 0, 2}},
		},
	},
	// fixed latency (ptxas gives it no scoreboard); ALU timing assumed, not measured
	{op: "VOTE", class: ClassALU, sim: SimVOTE,
		forms: []string{
			// vote.sync.{any,all,uni}.pred and .ballot: ptxas 11.8 prints VOTE.ANY
			// R, PT, P; the mode (72:2, ALL 0, ANY 1, EQ 2) and the predicate
			// result (81:3) from nvdisasm -b SM86 on those words with one field
			// changed.
			`806 72:2{ALL,ANY,EQ} | >R@16, >P@81, P@87~90`,
		},
	},
	// P2R and SGXT (the mma.sync kernels): fixed latency, no scoreboard in
	// ptxas's code; ALU timing assumed, not measured
	{op: "P2R", class: ClassALU, sim: SimP2R,
		forms: []string{
			// P2R Rd, PR, Ra, mask: the predicate file ANDed with a 32-bit mask
			// (32, printed signed) into byte 76:2 of Rd; Ra at 24 (ptxas: RZ).
			`803 76:2{_,B1,B2,B3} | >R@16, PR@0, R@24, I@32:32`,
		},
	},
	// R2P: the inverse, a register's bits 0..6 into the predicates the
	// mask selects (nvcc's f64 sin/cos argument reduction, R2P PR, R0,
	// 0x3; 76:2 selects a byte of it, printed R0.B1: not modelled)
	{op: "R2P", class: ClassALU, sim: SimP2R,
		forms: []string{
			`804 =76:2:0 | >PR@0, R@24, I@32:32`,
		},
	},
	{op: "SGXT", class: ClassALU, sim: SimSGXT,
		forms: []string{
			// SGXT Rd, Ra, width: zero (.U32, bit 73 clear) or sign extension
			// from the low width bits; 75 .W (wrap the width); width at 32:32.
			`81a 75:1{_,W} 73:1{U32,_} | >R@16, R@24, U@32:32`,
			// SGXT and BMSK with a register width (table_mma.go has SGXT's
			// immediate); 75 .W, SGXT 73 signed; BMSK's immediate prints unsigned.
			`x21a 75:1{_,W} 73:1{U32,_} :U | >R@16, R@24, $B/1`,
			// (SGXT with a constant width, SGXT.U32 R2, R0, c[0x1e][0x0], was
			// seen in a probe kernel, not in the corpus: not modelled.) BMSK
			// takes a constant width too (selector 5: BMSK.W R9, R3,
			// c[0x0][0x178], a kernel parameter).
		},
	},
	// The rest of what ptxas 11.8 emits (testdata/ptxas/tail_*.ptx). The
	// latency classes of these rows follow the nearest measured opcode's
	// and are assumed, not measured: the half-precision compares as HFMA2,
	// the video and dot-product ops on the integer pipes.
	{op: "HSETP2", class: ClassHalf, sim: SimHSETP2,
		forms: []string{
			// HSETP2 / HSET2: the FSETP comparison at 76:4, 71 .H_AND (HSETP2: both
			// halves into the first predicate) or .BF (HSET2: a 1.0 pair instead
			// of all ones), 80 .FTZ, 69:2 the boolean with the predicate at 87.
			`234 76:4{F,LT,EQ,LE,GT,NE,GE,NUM,NAN,LTU,EQU,LEU,GTU,NEU,GEU,T} 71:1{_,H_AND} 80:1{_,FTZ} 69:2{AND,OR,XOR} | >P@81, >P@84, R@24-72|73zh74, R@32-63|62zh60r2, P@87~90`,
			// with a pair of half immediates (nvcc's half math library,
			// HSETP2.GEU.OR P0, PT, R30.H0_H0, 8.5e-06, 8.5e-06, !P0)
			`434 76:4{F,LT,EQ,LE,GT,NE,GE,NUM,NAN,LTU,EQU,LEU,GTU,NEU,GEU,T} 71:1{_,H_AND} 80:1{_,FTZ} 69:2{AND,OR,XOR} | >P@81, >P@84, R@24-72|73zh74, H@48:16, H@32:16, P@87~90`,
		},
	},
	{op: "HSET2", class: ClassHalf, sim: SimLane3,
		forms: []string{
			`233 71:1{_,BF} 76:4{F,LT,EQ,LE,GT,NE,GE,NUM,NAN,LTU,EQU,LEU,GTU,NEU,GEU,T} 80:1{_,FTZ} 69:2{AND,OR,XOR} | >R@16, R@24-72|73zh74, R@32-63|62zh60r2, P@87~90`,
			// a pair of half immediates (selector 2, as HFMA2's: nvcc's
			// __heq2 with a constant, HSET2.BF.EQ.AND R17, R7, 0.304, 0.304, PT)
			`433 71:1{_,BF} 76:4{F,LT,EQ,LE,GT,NE,GE,NUM,NAN,LTU,EQU,LEU,GTU,NEU,GEU,T} 80:1{_,FTZ} 69:2{AND,OR,XOR} | >R@16, R@24-72|73zh74, H@48:16, H@32:16, P@87~90`,
		},
	},
	{op: "BMSK", class: ClassALU, sim: SimLane3,
		forms: []string{
			`x21b 75:1{_,W} :U | >R@16, R@24, $B/145`,
		},
	},
	{op: "VABSDIFF", class: ClassALU, sim: SimLane3,
		forms: []string{
			// VABSDIFF |a-b| + c (73 signed, 32-bit lanes), VABSDIFF4 per byte (73
			// signed, 75 .ACC: the four sums added to c); a predicate result at 81,
			// printed when it is not PT.
			`x214 73:1{U32,_} =81:3:7 :U | >R@16, R@24, $B/124, $C`,
			`x214 73:1{U32,_} :U | >R@16, >P@81, R@24, $B/14, $C/1`,
		},
	},
	{op: "VABSDIFF4", class: ClassALU, sim: SimLane3,
		forms: []string{
			`x215 73:1{U8,_} 75:1{_,ACC} =81:3:7 :U | >R@16, R@24, $B/14, $C/1`,
			`x215 73:1{U8,_} 75:1{_,ACC} :U | >R@16, >P@81, R@24, $B/14, $C/1`,
		},
	},
	{op: "IDP", class: ClassFMA, sim: SimLane3,
		forms: []string{
			// IDP (dp4a / dp2a): 76 .2A (with 77 .LO/.HI: the half of b taken),
			// 73 and 74 a's and b's signedness, 75 negates c; B a register or a
			// constant only (ur=0: nvdisasm refuses a uniform register).
			`x226 =76:1:0 =77:1:0 0:0{4A} 73:1{U8,S8} 74:1{U8,S8} ur=0 | >R@16, R@24, $B/15, $C/15-75`,
			`x226 =76:1:1 0:0{2A} 77:1{LO,HI} 73:1{U16,S16} 74:1{U8,S8} ur=0 | >R@16, R@24, $B/15, $C/15-75`,
		},
	},
	{op: "LD", class: ClassGlobal, late: true, sim: SimGeneric, noReuse: true,
		forms: []string{
			// Generic-space loads and stores: LDG's and STG's fields (the
			// predicate at 64 is PT written as 0, not modelled) with codes 980 and
			// 985; 77:4 and 84:3 every value nvdisasm names.
			`980 72:1{?,E} =76:1:1 =64:4:0 =81:3:0 =87:5:24 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 68:2{_,LTC64B,LTC128B} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,1=CONSTANT.PRIVATE,2=CONSTANT.CTA,3=CONSTANT.CTA.PRIVATE,4=CONSTANT,5=STRONG.SM,6=STRONG.GPU.PRIVATE,7=STRONG.GPU,8=MMIO.GPU,9=CONSTANT.SM,10=STRONG.SYS,11=CONSTANT.SM.PRIVATE,12=MMIO.SYS,13=CONSTANT.VC,14=CONSTANT.VC.PRIVATE,15=CONSTANT.GPU} | >R@16, MG@24`,
			// 32-bit generic addresses (bit 90 of 87:5 clear, 76 clear as ptxas
			// sets it): [Ra+off] with a 32-bit signed offset at 32, as CCTL's
			// (sm_89's local-memory fallback of a generic atomic: LD.E.64 R16, [R48])
			`980 72:1{?,E} =76:1:0 =64:4:0 =81:3:0 =87:5:0 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 68:2{_,LTC64B,LTC128B} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,1=CONSTANT.PRIVATE,2=CONSTANT.CTA,3=CONSTANT.CTA.PRIVATE,4=CONSTANT,5=STRONG.SM,6=STRONG.GPU.PRIVATE,7=STRONG.GPU,8=MMIO.GPU,9=CONSTANT.SM,10=STRONG.SYS,11=CONSTANT.SM.PRIVATE,12=MMIO.SYS,13=CONSTANT.VC,14=CONSTANT.VC.PRIVATE,15=CONSTANT.GPU} | >R@16, MA@24+32:32/0`,
		},
		regs: []regRule{
			// generic memory as global (LD/ST/ATOM as LDG/STG/ATOMG); QSPC in the
			// shared-memory queue: tail_mem.ptx gen's LDS R27 sets no scoreboard
			// and ptxas reads R27 after waiting only for a later QSPC.E.G's SB1.
			{mods: "128", regs: []uint8{4}},
			{mods: "64", regs: []uint8{2}},
		},
	},
	{op: "ST", class: ClassGlobal, late: true, sim: SimGeneric, noReuse: true,
		forms: []string{
			`985 72:1{?,E} =76:1:1 =87:5:24 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,1=CONSTANT.PRIVATE,2=CONSTANT.CTA,3=CONSTANT.CTA.PRIVATE,4=STRONG.SM.PRIVATE,5=STRONG.SM,6=STRONG.GPU.PRIVATE,7=STRONG.GPU,8=MMIO.GPU,9=CONSTANT.SM,10=STRONG.SYS,11=CONSTANT.SM.PRIVATE,12=MMIO.SYS,13=CONSTANT.VC,14=CONSTANT.VC.PRIVATE,15=CONSTANT.GPU} | MG@24/64, R@32`,
			// 32-bit generic addresses as LD's, code 385, the data at 64 (ST.E.64
			// [R48], R12)
			`385 72:1{?,E} =76:1:0 =87:5:0 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,1=CONSTANT.PRIVATE,2=CONSTANT.CTA,3=CONSTANT.CTA.PRIVATE,4=STRONG.SM.PRIVATE,5=STRONG.SM,6=STRONG.GPU.PRIVATE,7=STRONG.GPU,8=MMIO.GPU,9=CONSTANT.SM,10=STRONG.SYS,11=CONSTANT.SM.PRIVATE,12=MMIO.SYS,13=CONSTANT.VC,14=CONSTANT.VC.PRIVATE,15=CONSTANT.GPU} | MA@24+32:32/0, R@64`,
		},
		regs: []regRule{
			{mods: "128", regs: []uint8{0, 4}},
			{mods: "64", regs: []uint8{0, 2}},
		},
	},
	{op: "CCTL", class: ClassGlobal, late: true, sim: SimNop, noReuse: true,
		forms: []string{
			// CCTL (prefetch.* and the cache invalidations around fences): 87:4
			// the operation, [Ra+off] with a 32-bit offset at 32; the IVALL forms
			// name no address (Ra RZ) and print no .E (bit 72 clear).
			`98f 72:1{_,E} 78:2{_,U,C} 87:4{0=PF1,1=PF2,2=WB,3=IV,5=RS,9=PML2,10=DML2,11=RML2} | MA@24+32:32/0`,
			`98f =72:1:0 78:2{_,U,C} 87:4{4=IVALL,6=IVALLP} =24:8:255 |`,
		},
	},
	{op: "ATOM", class: ClassGlobal, late: true, sim: SimGeneric, noReuse: true,
		forms: []string{
			// generic-space atomics: ATOMG's fields with codes 98a and 38b
			`98a 72:1{?,E} =70:2:3 =91:1:1 87:4{ADD,MIN,MAX,INC,DEC,AND,OR,XOR,EXCH} 73:3{_,S32,64,F32.FTZ.RN,F16x2.RN,S64,F64.RN} 84:3{1=} 77:4{5=STRONG.SM,7=STRONG.GPU,10=STRONG.SYS} | >P@81, >R@16, MG@24/64, R@32`,
			`38b 72:1{?,E} 0:0{CAS} 73:3{_,?,64} 84:3{1=} 77:4{5=STRONG.SM,7=STRONG.GPU,10=STRONG.SYS} | >P@81, >R@16, MA@24/0, R@32, R@64`,
		},
		regs: []regRule{
			{mods: "CAS 64", regs: []uint8{0, 2, 0, 2, 2}},
			{mods: "64", regs: []uint8{0, 2, 0, 2}},
			{mods: "F64", regs: []uint8{0, 2, 0, 2}},
		},
	},
	{op: "QSPC", class: ClassShared, late: true, queue: QueueLDS, sim: SimQSPC, noReuse: true,
		forms: []string{
			// QSPC (isspacep): 73:2 the space, the result in the predicate at 81
			`3aa 72:1{_,E} 73:2{G,L,S} | >P@81, >R@16, MA@24/0`,
		},
	},
	{op: "B2R", class: ClassS2R, sim: SimB2R, noReuse: true,
		forms: []string{
			`31c =78:2:1 0:0{RESULT} =81:3:7 | >R@16`,
			`31c =78:2:1 0:0{RESULT} | >R@16, >P@81`,
		},
	},
	{op: "NANOSLEEP", class: ClassBranch, sim: SimNop, noReuse: true,
		forms: []string{
			// NANOSLEEP: a register (35d) or immediate (95d) duration, 85:2 .WARP
			// or .RAND, a predicate at 87 printed when it is not PT
			`35d 85:2{_,WARP,RAND} =87:4:7 | R@32`,
			`95d 85:2{_,WARP,RAND} =87:4:7 | U@32:32`,
			`35d 85:2{_,WARP,RAND} | P@87~90, R@32`,
			`95d 85:2{_,WARP,RAND} | P@87~90, U@32:32`,
		},
	},
	{op: "BPT", class: ClassBranch, sim: SimTrap,
		forms: []string{
			// BPT (trap, brkpt): 84:3 the kind, the code at 34:3 (0 not printed;
			// nvdisasm ignores bits 37 up)
			`95c 84:3{3=TRAP,4=INT} =34:3:0 |`,
			`95c 84:3{3=TRAP,4=INT} | U@34:3n`,
		},
	},
	{op: "FCHK", class: ClassSFU, queue: QueueSFU, sim: SimFCHK, noReuse: true,
		forms: []string{
			// FCHK: the IEEE division's range check (P = the fast path is not
			// exact), negate/abs as FFMA's A and B
			`302 | >P@81, R@24-72|73, R@32-63|62`,
			// the divisor from a constant (nvcc's FCHK P0, R0, c[0x0][0x168]),
			// a float immediate (0x902) or a uniform register (0xd02, bit 91)
			`b02 | >P@81, R@24-72|73, C@40-63|62`,
			`902 | >P@81, R@24-72|73, F@32:32`,
			`d02 =91:1:1 | >P@81, R@24-72|73, UR@32-63|62`,
		},
	},
	// I2I's source takes the B slot's reuse flag (123): ptxas printed
	// I2I.S16.S32.SAT R24, R4.reuse (tail2_math.ptx), flipping 123 clears it.
	{op: "I2I", class: ClassConv, sim: SimLane3,
		forms: []string{
			// I2I: a saturating narrowing of a signed 32-bit value (76:2 the
			// result type); F2IP: two floats to bytes packed into Rd, merged into
			// the half of Rc 72 does not name (cvt.rzi.sat.u8.f32), 74 .NTZ, 75 .RELU
			`238 76:2{U8,S8,U16,S16} 0:0{S32.SAT} | >R@16, R@32`,
		},
	},
	{op: "F2IP", class: ClassConv, sim: SimLane3, noReuse: true,
		forms: []string{
			`243 76:2{U8,S8} 0:0{F32} 78:2{0=,3=TRUNC} 74:1{_,NTZ} 75:1{_,RELU} =72:1:0 | >R@16, R@24, R@32, R@64`,
			`243 76:2{U8,S8} 0:0{F32} 78:2{0=,3=TRUNC} 74:1{_,NTZ} 75:1{_,RELU} =72:1:1 | >R@16, R@24, R@32, R@64.H1`,
		},
	},
	// IMMA's A and B take reuse flags 122 and 123 (ptxas's
	// IMMA.8832.S4.S4 R30, R8.reuse.ROW, R12.reuse.COL, R16, tail2 probe);
	// 124 is refused by nvdisasm, so C is marked ^.
	{op: "IMMA", class: ClassHMMA, late: true, queue: QueueHMMA, sim: SimIMMA,
		forms: []string{
			`237 =72:1:0 75:1+85:2{0=8816,2=8832,4=16816,5=16832,6=16864} 76:1+83:1{U8,S8,U4,S4} 78:1+84:1{U8,S8,U4,S4} 82:1{_,SAT} =73:1:0 =74:1:1 | >R@16, R@24.ROW, R@32.COL, R@64^`,
			// sparse IMMA (mma.sp on s8/u8/s4/u4): 72 .SP, the dense
			// fields (shape 7: 168128, m16n8k128 on 4-bit elements), the
			// metadata register at 40 and its selector at 48:2 after C, as
			// HMMA.SP (ptxas 11.8, mma.sp.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
			// gives IMMA.SP.16832.S8.S8 R4, R4.ROW, R6.COL, R8, R0, 0x1:
			// dense IMMA.16832's word with bit 72 set; flipping 40, 48, 49, 72
			// of ptxas's IMMA.SP.16864.S8.S8 R28, R8.ROW, R12.COL, R16, R18,
			// 0x0 agrees). The metadata's own reuse flag (50) is not modelled.
			`237 =72:1:1 0:0{SP} 75:1+85:2{5=16832,6=16864,7=168128} 76:1+83:1{U8,S8,U4,S4} 78:1+84:1{U8,S8,U4,S4} 82:1{_,SAT} =73:1:0 =74:1:1 =50:1:0 | >R@16, R@24.ROW, R@32.COL, R@64^, R@40^, U@48:2`,
		},
		regs: []regRule{
			// sparse: A k/2 columns, B k rows (mma.sp fragments): m16n8k32
			// on 8-bit and m16n8k64 on 4-bit elements A 2 and B 2 registers,
			// m16n8k64 8-bit and m16n8k128 4-bit A 4 and B 4
			{mods: "SP 168128", regs: []uint8{4, 4, 4, 4}},
			{mods: "SP 16864 S4", regs: []uint8{4, 2, 2, 4}},
			{mods: "SP 16864 U4", regs: []uint8{4, 2, 2, 4}},
			{mods: "SP 16864", regs: []uint8{4, 4, 4, 4}},
			{mods: "SP 16832", regs: []uint8{4, 2, 2, 4}},
			// m16n8k32 on 4-bit elements (ptxas: IMMA.16832.S4.S4 for
			// mma.m16n8k32 .s4) has A two registers and B one
			{mods: "16832 S4", regs: []uint8{4, 2, 1, 4}},
			{mods: "16832 U4", regs: []uint8{4, 2, 1, 4}},
			{mods: "16832", regs: []uint8{4, 4, 2, 4}},
			{mods: "16864", regs: []uint8{4, 4, 2, 4}},
			{mods: "16816", regs: []uint8{4, 2, 1, 4}},
			{regs: []uint8{2, 1, 1, 2}},
		},
	},
	{op: "BMMA", class: ClassHMMA, late: true, queue: QueueHMMA, sim: SimBMMA, noReuse: true,
		forms: []string{
			// 75:2 the shape (1: m16n8k128, ptxas 11.8's BMMA.168128.AND.POPC
			// for mma.m16n8k128 .b1), 77:2 the operation, 80 .POPC
			`23d 75:2{0=88128,1=168128,2=168256} 77:2{0=XOR,2=AND} 80:1{?,POPC} =73:1:0 =74:1:1 | >R@16, R@24.ROW, R@32.COL, R@64`,
		},
		regs: []regRule{
			{mods: "168128", regs: []uint8{4, 2, 1, 4}},
			{mods: "168256", regs: []uint8{4, 4, 2, 4}},
			{regs: []uint8{2, 1, 1, 2}},
		},
	},
	{op: "DMMA", class: ClassHMMA, late: true, queue: QueueHMMA, sim: SimDMMA, noReuse: true,
		forms: []string{
			`23f 0:0{884} =76:1:0 78:2{_,RM,RP,RZ} | >R@16, R@24-72|73, R@32, R@64-75|74`,
		},
		regs: []regRule{
			{regs: []uint8{4, 2, 2, 4}},
		},
	},
	{op: "MOVM", class: ClassShared, late: true, queue: QueueLDSM, sim: SimMOVM, noReuse: true,
		forms: []string{
			// MOVM (movmatrix): 78:2 the shape
			`23a 78:2{16.MT88,16.M832,16.M864} | >R@16, R@24`,
		},
	},
	{op: "ARRIVES", class: ClassShared, late: true, sim: SimARRIVES, noReuse: true,
		forms: []string{
			`9b0 =72:1:0 =73:3:5 =91:1:1 0:0{LDGSTSBAR.64} | MU@24`,
		},
	},
	{op: "CCTLL", class: ClassGlobal, late: true, sim: SimNop, noReuse: true,
		forms: []string{
			// CCTLL (prefetch.local.L1/L2): local-memory cache control, 87:4 the
			// operation (the values nvdisasm names), [Ra+off] with LDL's 24-bit
			// signed offset at 40 (flipping 24, 40, 63, 87..91 of ptxas's
			// CCTLL.PF1 [R2], tail2_sync.ptx)
			`990 87:4{0=PF1,1=PF2,2=WB,3=IV,5=RS} | MX@24`,
		},
	},
	{op: "I2IP", class: ClassConv, sim: SimLane3,
		forms: []string{
			// I2IP (cvt.pack.sat.{u8,s8,u16,s16}.s32.b32 d, a, b, c): A and B
			// saturated and packed, B low; the 8-bit types put C's low half above
			// them. 76:2 the type as I2I's; reuse 122-124 for A, B, C (flipping
			// each bit of ptxas's I2IP.S8.S32.SAT R33, R8, R9, R10, tail2_math.ptx).
			// 72 set takes C's high half (nvdisasm prints C.H1); ptxas was not
			// seen to emit it, so that form is not modelled.
			`239 76:2{U8,S8,U16,S16} 0:0{S32.SAT} =72:2:0 | >R@16, R@24, R@32, R@64`,
		},
	},
	{op: "UPOPC", class: ClassUniform, general: "POPC", sim: SimBitUnary,
		forms: []string{
			// UPOPC (the lane count of ptxas's warp-aggregated atomic,
			// tail2_math.ptx ubits): the source UR at 32, its not bit 63 (flipping
			// 9-11, 24, 63, 72-84 of ptxas's UPOPC UR5, UR4)
			`2bf =91:1:1 | >UR@16, UR@32~63`,
		},
	},
	{op: "PMTRIG", class: ClassBranch, sim: SimNone,
		forms: []string{
			// PMTRIG (pmevent): the event mask
			`801 =87:4:7 | U@32:32`,
		},
	},
}

// opcode is one row of the opcode table.
type opcode struct {
	op Op
	// class is the latency class (the schedule checker's and the cycle
	// model's), late that register sources are read after issue, queue
	// the in-order completion group of a variable-latency class.
	class Class
	late  bool
	queue Queue
	// general is, for a uniform-datapath opcode, the general opcode whose
	// operation it performs on uniform registers and predicates once for
	// the warp (R2UR: MOV from the first executing lane; VOTEU: VOTE).
	general Op
	// sim is the simulator's operation for the opcode (SimNone: decoded
	// and printed, not simulated).
	sim SimOp
	// noReuse: nvdisasm never prints the opcode's registers with .reuse
	// (measured); its operands get no reuse slot.
	noReuse bool
	// forms are the encodings, in def's notation without the opcode name.
	forms []string
	// regs are the register-count rules, first match wins.
	regs []regRule
}

// regRule is one register-count rule of an opcode.
type regRule struct {
	// mods: every token must be among the instruction's modifiers
	// (hasMods); nargs, when not 0, is the operand count the rule needs (a
	// form with a carry-out predicate has one more operand).
	mods  string
	nargs int
	regs  []uint8
}

// SimOp names the operation the simulator performs for an opcode: its
// decoder table is indexed by it. Several opcodes may share one (FADD,
// FMUL and FFMA are SimFloat; a uniform opcode shares its general one's).
type SimOp uint8

// The simulator's operations.
const (
	SimNone         SimOp = iota // not simulated
	SimNop                       // no effect the functional model sees (NOP, MEMBAR, YIELD, CCTL cache control, NANOSLEEP, ...)
	SimConvBarrier               // BSSY, BSYNC, BREAK
	SimWarpSync                  // WARPSYNC
	SimCall                      // CALL.REL.NOINC
	SimIndirect                  // RET.REL.NODEC, BRX, BRXU
	SimBranch                    // BRA, EXIT (predicated or not)
	SimMove                      // MOV (R2UR)
	SimS2R                       // S2R, CS2R
	SimS2UR                      // S2UR
	SimULDC                      // ULDC, UMOV
	SimIMAD                      // IMAD (.HI, .WIDE, .X)
	SimIADD3                     // IADD3
	SimLOP3                      // LOP3
	SimSHF                       // SHF
	SimLEA                       // LEA
	SimSelect                    // IMNMX, SEL, FSEL, FMNMX
	SimPRMT                      // PRMT
	SimSetP                      // ISETP, FSETP
	SimDouble                    // DADD, DMUL, DFMA
	SimREDUX                     // REDUX
	SimDSETP                     // DSETP
	SimFloat                     // FADD, FMUL, FFMA
	SimMUFU                      // MUFU
	SimF2FP                      // F2FP
	SimI2F                       // I2F, I2FP
	SimF2I                       // F2I
	SimF2F                       // F2F
	SimHalf                      // HADD2, HMUL2, HFMA2
	SimHMMA                      // HMMA
	SimIMMA                      // IMMA
	SimBMMA                      // BMMA
	SimDMMA                      // DMMA
	SimMOVM                      // MOVM
	SimBMOV                      // BMOV
	SimLoad                      // LDG, LDS, LDL
	SimStore                     // STG, STS, STL
	SimLDSM                      // LDSM
	SimLDGSTS                    // LDGSTS
	SimLDGDEPBAR                 // LDGDEPBAR
	SimDEPBAR                    // DEPBAR
	SimBAR                       // BAR
	SimSHFL                      // SHFL
	SimGlobalAtomic              // RED, ATOMG
	SimATOMS                     // ATOMS
	SimFRND                      // FRND
	SimBitUnary                  // POPC, IABS, BREV, FLO
	SimMATCH                     // MATCH
	SimVOTE                      // VOTE (VOTEU)
	SimP2R                       // P2R, R2P
	SimSGXT                      // SGXT
	SimPLOP3                     // PLOP3
	SimLDC                       // LDC
	SimLane3                     // one result from up to three sources, lane by lane (VABSDIFF, IDP, BMSK, I2I, HSET2, HMNMX2; PRMT modes, SGXT by register, packed halves with source modifiers)
	SimHSETP2                    // HSETP2
	SimFCHK                      // FCHK
	SimTrap                      // BPT.TRAP, BPT.INT: the launch stops with a fault
	SimGeneric                   // LD, ST, ATOM: generic-space memory (the address's window picks shared, local or global)
	SimQSPC                      // QSPC (isspacep)
	SimB2R                       // B2R.RESULT (BAR.RED's result)
	SimARRIVES                   // ARRIVES.LDGSTSBAR.64 (cp.async.mbarrier.arrive.noinc)
	NumSimOps
)

// OpInfo is the opcode table's row for an opcode, as the tools outside
// the package read it.
type OpInfo struct {
	// Class is the latency class; Late, that register sources are read
	// after issue; Queue, the completion queue.
	Class Class
	Late  bool
	Queue Queue
	// General is the general opcode a uniform-datapath opcode computes as
	// ("" for others).
	General Op
	// Sim is the simulator's operation.
	Sim SimOp
}

// LookupOp returns the opcode table's row for op, or false when op is not
// in the model.
func LookupOp(op Op) (OpInfo, bool) {
	o := lookupOp(op)
	if o == nil {
		return OpInfo{}, false
	}
	return OpInfo{Class: o.class, Late: o.late, Queue: o.queue, General: o.general, Sim: o.sim}, true
}

// Ops returns the opcodes of the table, in table order.
func Ops() []Op {
	out := make([]Op, len(opcodes))
	for k := range opcodes {
		out[k] = opcodes[k].op
	}
	return out
}

var opIndex map[Op]*opcode

func lookupOp(op Op) *opcode {
	ensureTables()
	return opIndex[op]
}

// The forms are built on first use, not at init: a program that imports
// the package (through the runtime) but never touches SASS pays nothing.
var tablesOnce sync.Once

// ensureTables builds the forms and the opcode index; every entry point
// reading formsByOp, formsByCode or opIndex calls it first.
func ensureTables() {
	tablesOnce.Do(func() {
		opIndex = make(map[Op]*opcode, len(opcodes))
		for k := range opcodes {
			o := &opcodes[k]
			if opIndex[o.op] != nil {
				panic("sass: opcode " + string(o.op) + " twice in the table")
			}
			opIndex[o.op] = o
			for _, f := range o.forms {
				def(o, f)
			}
		}
	})
}
