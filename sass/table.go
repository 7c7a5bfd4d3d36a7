package sass

import "sync"

// The encoding tables. Every line is one opcode form (or, with an 'x' code,
// the ALU forms of one opcode); see def for the notation. Bit positions are
// those of the 128-bit word (bit 64 is bit 0 of the high half). Each was
// learnt by assembling PTX with ptxas -arch=sm_86 and varying one field of
// the word it printed under nvdisasm -b SM86; alias forms (IMAD.MOV, ...)
// come first, because nvdisasm prints them whenever their operands match.
var tables = []string{
	// moves, special registers, uniform data path
	`MOV x002 =72:4:15 :U | >R@16, $B/1456`,
	`S2R 919 | >R@16, SR@72`,
	`CS2R 805 80:1{32,_} | >R@16, SR@72`,
	`S2UR 9c3 | >UR@16, SR@72`,
	`ULDC ab9 73:3{?,?,?,?,_,64} | >UR@16, C@40`,
	// indexed by a uniform register: LDC's fields with bit 91 set
	// (ptxas's ULDC UR4, c[0x2][UR4+0x30] in the project's sg kernels)
	`ULDC abb =91:1:1 73:3{?,?,?,?,_,64} | >UR@16, CXU@24`,
	// The uniform datapath's ALU forms are the general ones with UR and
	// UP in the same fields ("uniform"), sources B and C in UR or an
	// immediate (selectors 1 and 4), and bit 91 set (testdata/ptxas/golden).
	// Only the source placements ptxas was seen to emit are listed.
	`UMOV x082 :U | >UR@16, $B/46`,
	`UIADD3 x290 uniform =91:1:1 =74:1:0 =87:4:15 =77:4:15 =81:3:7 =84:3:7 | >R@16, R@24-72, $B/14-63, $C-75`,
	`UIADD3 x290 uniform =91:1:1 =74:1:0 =87:4:15 =77:4:15 =84:3:7 | >R@16, >P@81, R@24-72, $B/14-63, $C-75`,
	`UIADD3 x290 uniform =91:1:1 74:1{?,X} =81:3:7 =84:3:7 | >R@16, R@24~72, $B/14~63, $C~75, P@87~90, P@77~80`,
	`ULOP3 x292 uniform =91:1:1 80:1{LUT,?} =81:3:7 :U | >R@16, R@24, $B/14, $C, U@72:8, P@87~90`,
	`ULOP3 x292 uniform =91:1:1 80:1{LUT,?} :U | >P@81, >R@16, R@24, $B/14, $C, U@72:8, P@87~90`,
	`USHF x299 uniform =91:1:1 76:1{L,R} 75:1{_,W} 73:2{S64,U64,S32,U32} 80:1{_,HI} :U | >R@16, R@24, $B/14, $C/14`,
	`UIMAD x2a5 uniform =91:1:1 73:1{WIDE.U32,WIDE} =74:1:0 =87:4:15 =81:3:7 | >R@16, R@24, $B/14, $C`,
	`UIMAD x2a4 uniform =91:1:1 73:1{U32,_} =74:1:0 =87:4:15 =81:3:7 | >R@16, R@24, $B/14, $C`,
	// ULEA: LEA's forms on the uniform datapath (URZ, 63, in the unused C field)
	`ULEA x291 uniform =91:1:1 =80:1:0 =81:3:7 =87:4:15 =64:8:63 :U | >R@16, R@24-72, $B/14, U@75:5`,
	`ULEA x291 uniform =91:1:1 =80:1:0 =87:4:15 =64:8:63 :U | >R@16, >P@81, R@24-72, $B/14, U@75:5`,
	`ULEA x291 uniform =91:1:1 80:1{?,HI} =74:1:0 =81:3:7 =87:4:15 :U | >R@16, R@24, $B/14, $C/14, U@75:5`,
	`ULEA x291 uniform =91:1:1 80:1{?,HI} 74:1{?,X} =81:3:7 :U | >R@16, R@24~72, $B/14, $C/14, U@75:5, P@87~90`,
	// R2UR: a register's value in the first active lane into a uniform register
	`R2UR 3c2 =81:3:7 | >UR@16, R@24`,
	`USEL x287 uniform =91:1:1 :U | >R@16, R@24, $B/14, P@87~90`,
	`UISETP x28c uniform =91:1:1 76:3{F,LT,EQ,LE,GT,NE,GE,T} 73:1{U32,_} 74:2{AND,OR,XOR} =72:1:0 =68:4:7 | >P@81, >P@84, R@24, $B/14, P@87~90`,
	`UISETP x28c uniform =91:1:1 76:3{F,LT,EQ,LE,GT,NE,GE,T} 73:1{U32,_} 74:2{AND,OR,XOR} 72:1{?,EX} | >P@81, >P@84, R@24, $B/14, P@87~90, P@68~71`,
	`UFLO 2bd =91:1:1 =81:3:7 73:1{U32,_} | >UR@16, UR@32`,
	`NOP 918 |`,
	// MEMBAR: 78:2 and 76:2 as seen in ptxas's fences (.ALL.GPU, .ALL.SYS)
	`MEMBAR 992 78:2{SC,?,ALL} 76:2{CTA,?,GPU,SYS} |`,
	`ERRBAR 9ab |`,
	// VOTEU: the VOTE mode at 72 into a uniform register and predicate
	`VOTEU 886 72:2{ALL,ANY,EQ} | >UR@16, >UP@81, P@87~90`,
	`EXIT 94d =87:3:7 |`,
	`BRA 947 =87:3:7 | T@32:50`,

	// predicated branches and exits, convergence barriers, calls and
	// indirect branches (ptxas's divergent code; testdata/ptxas/golden).
	// B<n> is 4 bits at 16 (BMOV: at 24); bit 86 selects .NOINC/.NODEC,
	// bit 85 RET.ABS (not modeled); the guard-like predicate at 87 (not at
	// 90) prints first when it is not PT.
	`BRA 947 | P@87~90, T@32:50`,
	`EXIT 94d | P@87~90`,
	`BSSY 945 =87:3:7 | B@16, T@32:50`,
	`BSYNC 941 =87:3:7 | B@16`,
	`BREAK 942 =87:3:7 | B@16`,
	`YIELD 946 =87:3:7 |`,
	`WARPSYNC 948 =87:3:7 | U@32:32`,
	`CALL 944 =87:3:7 0:0{REL} 86:1{_,NOINC} | T@32:50`,
	`RET 950 =87:3:7 =85:1:0 0:0{REL} 86:1{_,NODEC} | R@24, T@32:50s`,
	`BRX 949 =87:3:7 | R@24, I@32:50s`,
	`BRXU 958 =87:3:7 =91:1:1 | UR@24, I@32:50s`,
	`BMOV 356 0:0{32} | >B@24, R@32`,
	`BMOV 355 0:0{32} 84:1{_,CLEAR} | >R@16, B@24`,

	// integer multiply-add: aliases first. Immediates print signed
	// (IMAD R0, R3, -0x800000, R4) and the carry-in form's inverted addend
	// as ~R (nvdisasm 11.8 on ptxas's words, testdata/ptxas/golden).
	`IMAD x224 73:1{MOV.U32,MOV} =74:1:0 =87:4:15 =81:3:7 | >R@16, R@24=255, $B/123=255, $C-75`,
	`IMAD x224 73:1{SHL.U32,?} =74:1:0 =87:4:15 =81:3:7 | >R@16, R@24, $B/4p, $C=255`,
	`IMAD x224 73:1{IADD.U32,IADD} =74:1:0 =87:4:15 =81:3:7 | >R@16, R@24, $B/4=1, $C-75`,
	`IMAD x224 73:1{U32,_} =74:1:0 =87:4:15 =81:3:7 | >R@16, R@24, $B, $C-75`,
	`IMAD x224 73:1{?,_} 74:1{?,X} =81:3:7 | >R@16, R@24, $B, $C~75, P@87~90`,
	`IMAD x227 73:1{HI.U32,HI} =74:1:0 =87:4:15 =81:3:7 | >R@16, R@24, $B/134567, $C-75`,
	`IMAD x225 73:1{WIDE.U32,WIDE} =74:1:0 =87:4:15 =81:3:7 | >R@16, R@24, $B/134567, $C`,
	// with a carry-out predicate at 81, printed after the destination
	// (ptxas's 64-bit division: IMAD.HI.U32 R10, P1, R9, R13, R10)
	`IMAD x227 73:1{HI.U32,HI} =74:1:0 =87:4:15 | >R@16, >P@81, R@24, $B/1, $C-75`,
	`IMAD x225 73:1{WIDE.U32,WIDE} =74:1:0 =87:4:15 | >R@16, >P@81, R@24, $B/1, $C`,

	// integer add, logic, shifts
	`IADD3 x210 =74:1:0 =87:4:15 =77:4:15 =81:3:7 =84:3:7 | >R@16, R@24-72, $B/1456-63, $C-75`,
	`IADD3 x210 =74:1:0 =87:4:15 =77:4:15 =84:3:7 | >R@16, >P@81, R@24-72, $B/1456-63, $C-75`,
	`IADD3 x210 =74:1:0 =87:4:15 =77:4:15 | >R@16, >P@81, >P@84, R@24-72, $B/1456-63, $C-75`,
	`IADD3 x210 74:1{?,X} =81:3:7 =84:3:7 | >R@16, R@24~72, $B/1456~63, $C~75, P@87~90, P@77~80`,
	// .X with a carry out (ptxas's 96-bit add: IADD3.X R2, P0, R5, R7, RZ, P0, !PT)
	`IADD3 x210 =74:1:1 0:0{X} =84:3:7 | >R@16, >P@81, R@24~72, $B/1456~63, $C~75, P@87~90, P@77~80`,
	`LOP3 x212 80:1{LUT,?} =81:3:7 :U | >R@16, R@24, $B/1456, $C, U@72:8, P@87~90`,
	// with a predicate output (P = the result is nonzero), printed first
	`LOP3 x212 80:1{LUT,?} :U | >P@81, >R@16, R@24, $B/146, $C, U@72:8, P@87~90`,
	`SHF x219 76:1{L,R} 75:1{_,W} 73:2{S64,U64,S32,U32} 80:1{_,HI} :U | >R@16, R@24, $B/1245, $C/1245`,
	`LEA x211 =80:1:0 =81:3:7 =87:4:15 =64:8:255 :U | >R@16, R@24-72, $B/145, U@75:5`,
	`LEA x211 =80:1:0 =87:4:15 =64:8:255 :U | >R@16, >P@81, R@24-72, $B/145, U@75:5`,
	`LEA x211 80:1{?,HI} =74:1:0 =81:3:7 =87:4:15 ur=6 :U | >R@16, R@24, $B/145, $C/145, U@75:5`,
	`LEA x211 80:1{?,HI} 74:1{?,X} =81:3:7 ur=6 :U | >R@16, R@24~72, $B/145, $C/145, U@75:5, P@87~90`,
	`IMNMX x217 73:1{U32,_} | >R@16, R@24, $B, P@87~90`,
	`PRMT x216 :U | >R@16, R@24, $B, $C`,
	// SEL prints its immediate unsigned (SEL R6, RZ, 0xffffffff, !P0).
	`IABS 213 | >R@16, R@32`,
	// bit counts and reversal (variable latency; testdata/ptxas/golden/reduce.*):
	// FLO bit 73 signed (bare), bit 74 .SH (the shift amount, 31 - position)
	`POPC 309 | >R@16, R@32~63`,
	`BREV 301 | >R@16, R@32`,
	`FLO 300 =81:3:7 73:1{U32,_} 74:1{_,SH} | >R@16, R@32~63`,
	// MATCH.ANY: the lanes holding the same 32-bit (.U64: pair) value
	`MATCH 3a1 =81:3:7 =79:1:1 0:0{ANY} 73:1{_,U64} | >R@16, R@24`,
	// FRND: the rounding at 78, 75:2+84:2 the type as F2F's (F32 bare)
	`FRND 307 75:2+84:2{10=} 78:2{_,FLOOR,CEIL,TRUNC} | >R@16, R@32`,
	`FRND 313 75:2+84:2{15=F64} 78:2{_,FLOOR,CEIL,TRUNC} | >R@16, R@32`,
	`SEL x207 :U | >R@16, R@24, $B, P@87~90`,
	`FSEL x208 :F | >R@16, R@24, $B, P@87~90`,

	// comparisons
	// PLOP3.LUT Pd, Pe, Pa, Pb, Pc, lut, imm: sources at 87, 77, 68 (each
	// with its not bit above it; bit 67 makes the third a uniform
	// predicate), the truth table split over 64:3 and 72:5, a second
	// immediate at 16 (0x0 in ptxas's code). Learnt by flipping each bit.
	`PLOP3 81c 0:0{LUT} =67:1:0 | >P@81, >P@84, P@87~90, P@77~80, P@68~71, U@64:3h72:5, U@16:8`,
	`PLOP3 81c 0:0{LUT} =67:1:1 | >P@81, >P@84, P@87~90, P@77~80, UP@68~71, U@64:3h72:5, U@16:8`,
	`ISETP x20c 76:3{F,LT,EQ,LE,GT,NE,GE,T} 73:1{U32,_} 74:2{AND,OR,XOR} =72:1:0 =68:4:7 | >P@81, >P@84, R@24, $B, P@87~90`,
	`ISETP x20c 76:3{F,LT,EQ,LE,GT,NE,GE,T} 73:1{U32,_} 74:2{AND,OR,XOR} 72:1{?,EX} | >P@81, >P@84, R@24, $B, P@87~90, P@68~71`,
	`FSETP x20b 76:4{F,LT,EQ,LE,GT,NE,GE,NUM,NAN,LTU,EQU,LEU,GTU,NEU,GEU,T} 80:1{_,FTZ} 74:2{AND,OR,XOR} :F | >P@81, >P@84, R@24-72|73, $B/145-63|62, P@87~90`,

	// float arithmetic
	`FADD x221 80:1{_,FTZ} 78:2{_,RM,RP,RZ} 77:1{_,SAT} :F | >R@16, R@24-72|73, $B/123-63|62r2`,
	`FMUL x220 =84:3:4 80:1{_,FTZ} 78:2{_,RM,RP,RZ} 77:1{_,SAT} :F | >R@16, R@24-72, $B/145-63`,
	`FFMA x223 80:1{_,FTZ} 78:2{_,RM,RP,RZ} 77:1{_,SAT} :F | >R@16, R@24-72|73, $B/12345-63, $C/12345-75|74`,
	`FMNMX x209 80:1{_,FTZ} :F | >R@16, R@24-72|73, $B/145-63|62, P@87~90`,
	// binary64 on register pairs (variable latency). Negation and absolute
	// value bits follow the field (A 72/73, B at 32: 63/62, at 64: 75/74);
	// DADD's second source sits in the C field; a double immediate is the
	// value's high 32 bits; DSETP's F and T codes print MIN and MAX (the
	// DMNMX idiom). Learnt on ptxas's words and by flipping each bit.
	`DADD 229 78:2{_,RM,RP,RZ} | >R@16, R@24-72|73, R@64-75|74`,
	`DMUL x228 78:2{_,RM,RP,RZ} :D | >R@16, R@24-72|73, $B/14-63|62`,
	`DFMA 22b 78:2{_,RM,RP,RZ} | >R@16, R@24-72|73, R@32-63|62, R@64-75|74`,
	`DFMA 42b 78:2{_,RM,RP,RZ} | >R@16, R@24-72|73, R@64-75|74r1, D@32:32`,
	`DFMA a2b 78:2{_,RM,RP,RZ} | >R@16, R@24-72|73, C@40, R@64-75|74`,
	// (nvdisasm refuses DSETP with a reuse flag on the second source)
	`DSETP x22a 76:4{MIN,LT,EQ,LE,GT,NE,GE,NUM,NAN,LTU,EQU,LEU,GTU,NEU,GEU,MAX} 74:2{AND,OR,XOR} :D | >P@81, >P@84, R@24-72|73, $B/12-63|62^, P@87~90`,
	// MUFU: codes 6 and 7 are RCP64H and RSQ64H (the high word of a
	// binary64 seed); bit 73 .F16, with bit 60 reading the high half (.H1);
	// an immediate source at 32 (selector 4). Learnt from ptxas's fp64 and
	// f16 code (testdata/ptxas/golden).
	// (nvdisasm prints RCP64H/RSQ64H with .F16 as INVALID6/7).
	`MUFU 308 74:4{COS,SIN,EX2,LG2,RCP,RSQ,RCP64H,RSQ64H,SQRT,TANH} =73:1:0 | >R@16, R@32-63|62`,
	`MUFU 308 74:4{COS,SIN,EX2,LG2,RCP,RSQ,?,?,SQRT,TANH} 73:1{?,F16} | >R@16, R@32-63|62`,
	`MUFU 308 74:4{COS,SIN,EX2,LG2,RCP,RSQ,?,?,SQRT,TANH} 73:1{?,F16} =60:1:1 | >R@16, R@32.H1`,
	`MUFU 908 74:4{COS,SIN,EX2,LG2,RCP,RSQ,RCP64H,RSQ64H,SQRT,TANH} | >R@16, F@32:32`,

	// conversions and packs
	`F2FP x23e 75:1{_,RELU} 76:1{_,BF16} 64:8{255=PACK_AB} | >R@16, R@24, $B/1`,
	// sm_89 float8 packs (nvdisasm -b SM89 text; ptxas 11.8 does not emit them):
	// bits 76+87 the format, 77 SATFINITE, 78+90 PACK_AB_MERGE_C, 72 the
	// half of the merge register kept (.H1 when set).
	`F2FP 23e sm89 77:1{_,SATFINITE} 75:1{_,RELU} 76:1+87:1{?,?,E5M2,E4M3} 0:0{F32} 78:1+90:1{?,?,?,PACK_AB_MERGE_C} =72:1:0 | >R@16, R@24, R@32, R@64`,
	`F2FP 23e sm89 77:1{_,SATFINITE} 75:1{_,RELU} 76:1+87:1{?,?,E5M2,E4M3} 0:0{F32} 78:1+90:1{?,?,?,PACK_AB_MERGE_C} =72:1:1 | >R@16, R@24, R@32, R@64.H1`,
	`I2FP x245 75:2{?,?,F32,?} 84:2+74:1{2=U32,6=S32} 78:2{0=,3=RZ} | >R@16, $B/1`,
	// conversions: 75:2 1 is an F16 result, 84:2 1 an F16 (F2I, F2F) or
	// 16-bit integer (I2F) source; F2I bit 80 .FTZ; immediate (906) and
	// constant (b06, b12) sources of I2F (ptxas's division idiom
	// I2F.U32.RP R0, 0xb); F2F.F16.F64 / F64.F16 (310) and F2F 304 for
	// 32-bit to 16-bit (bit 77 BF16).
	`I2F 306 75:2{?,F16,_,?} 84:2+74:1{1=U16,2=U32,6=} 78:2{_,RM,RP,RZ} | >R@16, R@32`,
	`I2F 906 75:2{?,?,_,?} 84:2+74:1{2=U32,6=} 78:2{_,RM,RP,RZ} | >R@16, U@32:32`,
	`I2F b06 75:2{?,?,_,?} 84:2+74:1{2=U32,6=} 78:2{_,RM,RP,RZ} | >R@16, C@40`,
	`I2F b12 75:2{?,?,_,F64} 84:2+74:1{2=U32,6=,3=U64,7=S64} 78:2{_,RM,RP,RZ} | >R@16, C@40`,
	`I2F 312 75:2{?,?,_,F64} 84:2+74:1{2=U32,6=,3=U64,7=S64} 78:2{_,RM,RP,RZ} | >R@16, R@32`,
	`F2I 305 80:1{_,FTZ} 75:2+72:1{1=U16,2=U32,6=} 84:2{?,F16,_,?} 78:2{_,FLOOR,CEIL,TRUNC} 77:1{_,NTZ} | >R@16, R@32`,
	`F2I 311 75:2+72:1{2=U32,6=,3=U64,7=S64} 84:2{?,?,_,F64} 78:2{_,FLOOR,CEIL,TRUNC} 77:1{_,NTZ} | >R@16, R@32`,
	`F2F 310 75:2+84:2{14=F32.F64,11=F64.F32,13=F16.F64,7=F64.F16} 78:2{_,RM,RP,RZ} | >R@16, R@32`,
	`F2F 304 77:1+75:2+84:2{17=BF16.F32,18=F16.F32} 78:2{_,RM,RP,RZ} | >R@16, R@32`,
	`HADD2 x230 ur=7 | >R@16, R@24, $B/1-63r2`,
	// (nvdisasm refuses HADD2.F32 with a reuse flag: no reuse slots)
	`HADD2 230 78:1{?,F32} =60:2:3 | >R@16, R@24-72^, R@32^.H1_H1`,
	`HADD2 230 78:1{?,F32} =60:2:2 | >R@16, R@24-72^, R@32^.H0_H0`,
	`HMUL2 x232 | >R@16, R@24, $B/1`,
	// HMNMX2: min where the predicate holds, max where not, as IMNMX;
	// .BF16_V2 at 85 as HFMA2's, .NAN at 81 (half.ptx, one field varied)
	`HMNMX2 x240 85:1{_,BF16_V2} 81:1{_,NAN} | >R@16, R@24, $B/1, P@87~90`,
	`HFMA2 x231 85:1{_,BF16_V2} | >R@16, R@24, $B/1, $C/1`,
	`HMMA 23c 75:1{1688,16816} 76:1{?,F32} 82:1{_,BF16} | >R@16, R@24, R@32, R@64`,

	// memory
	`LDG 981 72:1{?,E} =76:1:1 =81:3:7 =87:5:24 84:3{0=EF,1=,3=LU,5=NA} 68:2{_,LTC64B,LTC128B} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,1=CONSTANT.PRIVATE,2=CONSTANT.CTA,4=CONSTANT,5=STRONG.SM,7=STRONG.GPU,8=MMIO.GPU,10=STRONG.SYS} | >R@16, MG@24`,
	`STG 986 72:1{?,E} =76:1:1 =87:5:24 84:3{0=EF,1=} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,5=STRONG.SM,7=STRONG.GPU,10=STRONG.SYS} | MG@24/64, R@32`,
	// local memory: addresses as shared ones without a scale field
	`LDL 983 84:3{1=} 73:3{U8,S8,U16,S16,_,64,128} | >R@16, MX@24`,
	`STL 387 84:3{1=} 73:3{U8,S8,U16,S16,_,64,128} | MX@24, R@32`,
	// LDC: a constant indexed by a register, byte offset 16 bits at 38,
	// bank at 54 (learnt by flipping each bit); the size field as LDS's
	`LDC b82 73:3{U8,S8,U16,S16,_,64} | >R@16, CX@24`,
	`LDS 984 73:3{U8,S8,U16,S16,_,64,128} | >R@16, MS@24`,
	`STS 388 73:3{U8,S8,U16,S16,_,64,128} | MS@24, R@32`,
	`LDSM 83b 78:2{16.M88,16.MT88} 72:2{_,2,4} | >R@16, MX@24`,
	`LDGSTS fae 0:0{E} =70:1:1 =76:1:1 =87:5:23 81:1{BYPASS,_} 71:2{_,LTC64B,LTC128B} 73:3{?,?,?,?,_,64,128} 84:3{1=} 77:4{0=} | MX@16+44:20, MG@24+32:12/64`,
	// with a zero-fill predicate at 87 (not at 90), printed last
	// (cp.async with a source size: testdata/ptxas/golden/kptx_sg.*)
	`LDGSTS fae 0:0{E} =70:1:1 =76:1:1 =91:1:1 81:1{BYPASS,_} 71:2{_,LTC64B,LTC128B} 73:3{?,?,?,?,_,64,128} 84:3{1=} 77:4{0=} | MX@16+44:20, MG@24+32:12/64, P@87~90`,
	`LDGDEPBAR 9af |`,
	`DEPBAR 91a 47:1{?,LE} | SB@44, U@38:6`,
	`BAR b1d 77:2{SYNC} =42:12:0 | U@54:4`,
	`BAR b1d 77:2{SYNC} | U@54:4, U@42:12n`,
	`BAR b1d 77:2{1=ARV} | U@54:4, U@42:12`,
	`BAR 51d 77:2{SYNC,ARV} | R@32, U@42:12`,
	`BAR 91d 77:2{SYNC,ARV} | U@54:4, R@32`,
	// warp reduction into a uniform register: 78:3 the operation (0 AND,
	// printed bare), 73 signed min/max (testdata/ptxas/golden/reduce.*)
	`REDUX 3c4 78:3{_,OR,XOR,SUM,MIN,MAX} 73:1{_,S32} | >UR@16, R@24`,
	// shared-memory atomics: the ATOMG operation field at 87, S32 / 64 at
	// 73, a shared address without a scale field; CAS and CAST.SPIN in
	// 38d (testdata/ptxas/golden/atomics.*)
	`ATOMS 38c 87:4{ADD,MIN,MAX,INC,DEC,AND,OR,XOR,EXCH} 73:3{_,S32} | >R@16, MX@24, R@32`,
	`ATOMS 38d 87:2{CAS,?,?,CAST.SPIN} 73:3{_,?,64} | >R@16, MX@24, R@32, R@64`,
	`SHFL f89 58:2{IDX,UP,DOWN,BFLY} | >P@81, >R@16, R@24, U@53:5, U@40:13`,
	`SHFL 589 58:2{IDX,UP,DOWN,BFLY} | >P@81, >R@16, R@24, R@32, U@40:13`,
	`SHFL 389 58:2{IDX,UP,DOWN,BFLY} | >P@81, >R@16, R@24, R@32, R@64`,
	`SHFL 989 58:2{IDX,UP,DOWN,BFLY} | >P@81, >R@16, R@24, U@53:5, R@64`,
	`RED 98e 72:1{?,E} =71:1:1 =90:2:3 87:3{ADD,MIN,MAX,INC,DEC,AND,OR,XOR} 73:3{_,S32,64,F32.FTZ.RN,F16x2.RN,?,F64.RN} 84:3{1=} 77:4{5=STRONG.SM,7=STRONG.GPU,10=STRONG.SYS} | MG@24/64, R@32`,
	`ATOMG 9a8 72:1{?,E} =70:2:3 =91:1:1 87:4{ADD,MIN,MAX,INC,DEC,AND,OR,XOR,EXCH} 73:3{_,S32,64,F32.FTZ.RN,F16x2.RN,S64,F64.RN} 84:3{1=} 77:4{5=STRONG.SM,7=STRONG.GPU,10=STRONG.SYS} | >P@81, >R@16, MG@24/64, R@32`,
	`ATOMG 3a9 72:1{?,E} 0:0{CAS} 73:3{_,?,64} 84:3{1=} 77:4{5=STRONG.SM,7=STRONG.GPU,10=STRONG.SYS} | >P@81, >R@16, MA@24/0, R@32, R@64`,
}

// The forms are built on first use, not at init: a program that imports
// the package (through the runtime) but never touches SASS pays nothing.
var tablesOnce sync.Once

// ensureTables builds the forms; every entry point reading formsByOp or
// formsByCode calls it first.
func ensureTables() {
	tablesOnce.Do(func() {
		for _, t := range tables {
			def(t)
		}
		for _, t := range tablesSG {
			def(t)
		}
		for _, t := range tablesMMA {
			def(t)
		}
		for _, t := range tablesTail {
			def(t)
		}
	})
}
