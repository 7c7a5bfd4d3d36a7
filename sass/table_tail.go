package sass

import (
	"fmt"
	"strconv"
	"strings"
)

// Encoding forms of the rest of what ptxas 11.8 emits for sm_86 and sm_89
// (issue #14), in table.go's notation (see def). Each was learnt by
// assembling PTX with ptxas and flipping one bit of a word it printed at a
// time under nvdisasm -b SM86 (testdata/ptxas/tail_*.ptx and golden/ hold
// the words). A form here follows the table.go forms of its opcode: the
// decoder takes the first form that re-encodes to the word.
var tablesTail = []string{
	// Half-precision pairs with swizzled operands: zhPOS is the 2-bit
	// selector at POS (0 none, 1 .F32, 2 .H0_H0, 3 .H1_H1): A at 74, B at
	// 60, C at 81. Negate/abs: A 72/73, B 63/62, C 84/83. 76 .FMZ and 80
	// .FTZ (both: INVALID3), 77 .SAT, 78 .F32 (the result in binary32), 85
	// .BF16_V2. HFMA2.RELU (79) prints the predicate at 87 unless it is PT
	// (ptxas writes PT); without .RELU the field is 0 and never printed.
	// HADD2's B reuses through slot 2 (bit 124), as table.go's.
	`HFMA2 231 85:1{_,BF16_V2} 78:1{_,F32} 80:1+76:1{_,FTZ,FMZ} 77:1{_,SAT} =79:1:0 =87:4:0 | >R@16, R@24-72|73zh74, R@32-63|62zh60, R@64-84|83zh81`,
	`HFMA2 231 85:1{_,BF16_V2} 78:1{_,F32} 80:1+76:1{_,FTZ,FMZ} 0:0{RELU} =77:1:0 =79:1:1 =87:4:7 | >R@16, R@24-72|73zh74, R@32-63|62zh60, R@64-84|83zh81`,
	`HADD2 230 =78:1:0 80:1{_,FTZ} 77:1{_,SAT} | >R@16, R@24-72|73zh74, R@32-63|62zh60r2`,
	// (nvdisasm refuses HADD2.F32 with a reuse flag on A, prints it on B)
	`HADD2 230 =78:1:1 0:0{F32} 80:1{_,FTZ} 77:1{_,SAT} | >R@16, R@24-72|73zh74^, R@32-63|62zh60r2`,
	`HMUL2 232 78:1{_,F32} 80:1+76:1{_,FTZ,FMZ} 77:1{_,SAT} | >R@16, R@24-72|73zh74, R@32-63|62zh60`,
	// HSETP2 / HSET2: the FSETP comparison at 76:4, 71 .H_AND (HSETP2: both
	// halves into the first predicate) or .BF (HSET2: a 1.0 pair instead
	// of all ones), 80 .FTZ, 69:2 the boolean with the predicate at 87.
	`HSETP2 234 76:4{F,LT,EQ,LE,GT,NE,GE,NUM,NAN,LTU,EQU,LEU,GTU,NEU,GEU,T} 71:1{_,H_AND} 80:1{_,FTZ} 69:2{AND,OR,XOR} | >P@81, >P@84, R@24-72|73zh74, R@32-63|62zh60r2, P@87~90`,
	`HSET2 233 71:1{_,BF} 76:4{F,LT,EQ,LE,GT,NE,GE,NUM,NAN,LTU,EQU,LEU,GTU,NEU,GEU,T} 80:1{_,FTZ} 69:2{AND,OR,XOR} | >R@16, R@24-72|73zh74, R@32-63|62zh60r2, P@87~90`,

	// PRMT's mode at 72:3 (0 the byte selector of B, printed bare)
	`PRMT x216 72:3{_,F4E,B4E,RC8,ECL,ECR,RC16} :U | >R@16, R@24, $B, $C`,
	// PLOP3 on the sign bits of three registers (ptxas's 64-bit sign
	// tests): Ra at 24, Rb 32, Rc 64 printed with .SIGN, the truth table at
	// 72:8, the second immediate at 16.
	`PLOP3 21f 0:0{LUT} | >P@81, >P@84, R@24.SIGN, R@32.SIGN, R@64.SIGN, U@72:8, U@16:8`,
	// SGXT and BMSK with a register width (table_mma.go has SGXT's
	// immediate); 75 .W, SGXT 73 signed; BMSK's immediate prints unsigned.
	`SGXT x21a 75:1{_,W} 73:1{U32,_} :U | >R@16, R@24, $B/1`,
	`BMSK x21b 75:1{_,W} :U | >R@16, R@24, $B/14`,
	// VABSDIFF |a-b| + c (73 signed, 32-bit lanes), VABSDIFF4 per byte (73
	// signed, 75 .ACC: the four sums added to c); a predicate result at 81,
	// printed when it is not PT.
	`VABSDIFF x214 73:1{U32,_} =81:3:7 :U | >R@16, R@24, $B/14, $C/1`,
	`VABSDIFF x214 73:1{U32,_} :U | >R@16, >P@81, R@24, $B/14, $C/1`,
	`VABSDIFF4 x215 73:1{U8,_} 75:1{_,ACC} =81:3:7 :U | >R@16, R@24, $B/14, $C/1`,
	`VABSDIFF4 x215 73:1{U8,_} 75:1{_,ACC} :U | >R@16, >P@81, R@24, $B/14, $C/1`,
	// IDP (dp4a / dp2a): 76 .2A (with 77 .LO/.HI: the half of b taken),
	// 73 and 74 a's and b's signedness, 75 negates c; B a register or a
	// constant only (ur=0: nvdisasm refuses a uniform register).
	`IDP x226 =76:1:0 =77:1:0 0:0{4A} 73:1{U8,S8} 74:1{U8,S8} ur=0 | >R@16, R@24, $B/15, $C/15-75`,
	`IDP x226 =76:1:1 0:0{2A} 77:1{LO,HI} 73:1{U16,S16} 74:1{U8,S8} ur=0 | >R@16, R@24, $B/15, $C/15-75`,
	// IMAD.WIDE(.U32).X: the carry in at 87 (the high word of a 64-bit
	// product-sum), with or without a carry out at 81.
	`IMAD x225 73:1{WIDE.U32,WIDE} =74:1:1 0:0{X} =81:3:7 | >R@16, R@24, $B/134567, $C~75, P@87~90`,
	`IMAD x225 73:1{WIDE.U32,WIDE} =74:1:1 0:0{X} | >R@16, >P@81, R@24, $B/134567, $C~75, P@87~90`,
	// LEA.HI(.X).SX32: 73 sign-extends the 32-bit A to the high word; the
	// C field holds RZ and is not printed. Without .X the sources take
	// negate bits, with it not bits and the carry in at 87.
	`LEA x211 0:0{HI} =80:1:1 =74:1:0 0:0{SX32} =73:1:1 =64:8:255 =81:3:7 =87:4:7 :U | >R@16, R@24-72, $B/145-63, U@75:5`,
	`LEA x211 0:0{HI} =80:1:1 =74:1:0 0:0{SX32} =73:1:1 =64:8:255 =87:4:7 :U | >R@16, >P@81, R@24-72, $B/145-63, U@75:5`,
	`LEA x211 0:0{HI} =80:1:1 =74:1:1 0:0{X} 0:0{SX32} =73:1:1 =64:8:255 =81:3:7 :U | >R@16, R@24~72, $B/145~63, U@75:5, P@87~90`,
	`LEA x211 0:0{HI} =80:1:1 =74:1:1 0:0{X} 0:0{SX32} =73:1:1 =64:8:255 :U | >R@16, >P@81, R@24~72, $B/145~63, U@75:5, P@87~90`,
	// bit counts of a uniform register (bit 91, selector 6; table.go's
	// POPC and FLO take ~R, the not bit at 63)
	`FLO d00 =91:1:1 =81:3:7 73:1{U32,_} 74:1{_,SH} | >R@16, UR@32~63`,
	`POPC d09 =91:1:1 | >R@16, UR@32~63`,
	`BREV d01 =91:1:1 | >R@16, UR@32`,
	// Generic-space loads and stores: LDG's and STG's fields (the
	// predicate at 64 is PT written as 0, not modelled) with codes 980 and
	// 985; 77:4 and 84:3 every value nvdisasm names.
	`LD 980 72:1{?,E} =76:1:1 =64:4:0 =81:3:0 =87:5:24 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 68:2{_,LTC64B,LTC128B} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,1=CONSTANT.PRIVATE,2=CONSTANT.CTA,3=CONSTANT.CTA.PRIVATE,4=CONSTANT,5=STRONG.SM,6=STRONG.GPU.PRIVATE,7=STRONG.GPU,8=MMIO.GPU,9=CONSTANT.SM,10=STRONG.SYS,11=CONSTANT.SM.PRIVATE,12=MMIO.SYS,13=CONSTANT.VC,14=CONSTANT.VC.PRIVATE,15=CONSTANT.GPU} | >R@16, MG@24`,
	`ST 985 72:1{?,E} =76:1:1 =87:5:24 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,1=CONSTANT.PRIVATE,2=CONSTANT.CTA,3=CONSTANT.CTA.PRIVATE,4=STRONG.SM.PRIVATE,5=STRONG.SM,6=STRONG.GPU.PRIVATE,7=STRONG.GPU,8=MMIO.GPU,9=CONSTANT.SM,10=STRONG.SYS,11=CONSTANT.SM.PRIVATE,12=MMIO.SYS,13=CONSTANT.VC,14=CONSTANT.VC.PRIVATE,15=CONSTANT.GPU} | MG@24/64, R@32`,
	// CCTL (prefetch.* and the cache invalidations around fences): 87:4
	// the operation, [Ra+off] with a 32-bit offset at 32; the IVALL forms
	// name no address (Ra RZ) and print no .E (bit 72 clear).
	`CCTL 98f 72:1{_,E} 78:2{_,U,C} 87:4{0=PF1,1=PF2,2=WB,3=IV,5=RS,9=PML2,10=DML2,11=RML2} | MA@24+32:32/0`,
	`CCTL 98f =72:1:0 78:2{_,U,C} 87:4{4=IVALL,6=IVALLP} =24:8:255 |`,
	// shared atomics with a scaled address ([R3.X4+0x40], scale at 78:2)
	// and the 64-bit exchange (73:3 2)
	`ATOMS 38c 87:4{ADD,MIN,MAX,INC,DEC,AND,OR,XOR,EXCH} 73:3{_,S32,64} | >R@16, MS@24, R@32`,
	`ATOMS 38d 87:2{CAS,?,?,CAST.SPIN} 73:3{_,?,64} | >R@16, MS@24, R@32, R@64`,
	// generic-space atomics: ATOMG's fields with codes 98a and 38b
	`ATOM 98a 72:1{?,E} =70:2:3 =91:1:1 87:4{ADD,MIN,MAX,INC,DEC,AND,OR,XOR,EXCH} 73:3{_,S32,64,F32.FTZ.RN,F16x2.RN,S64,F64.RN} 84:3{1=} 77:4{5=STRONG.SM,7=STRONG.GPU,10=STRONG.SYS} | >P@81, >R@16, MG@24/64, R@32`,
	`ATOM 38b 72:1{?,E} 0:0{CAS} 73:3{_,?,64} 84:3{1=} 77:4{5=STRONG.SM,7=STRONG.GPU,10=STRONG.SYS} | >P@81, >R@16, MA@24/0, R@32, R@64`,
	// QSPC (isspacep): 73:2 the space, the result in the predicate at 81
	`QSPC 3aa 72:1{_,E} 73:2{G,L,S} | >P@81, >R@16, MA@24/0`,
	// bar.red: 77:2 2 (RED), 74:2 the reduction, 80 .DEFER_BLOCKING, the
	// voting predicate at 87; B2R.RESULT reads the result (78 1), into a
	// register or (81) a predicate
	`BAR b1d 77:2{2=RED} 74:2{POPC,AND,OR} 80:1{_,DEFER_BLOCKING} =42:12:0 | U@54:4, P@87~90`,
	`BAR b1d 77:2{2=RED} 74:2{POPC,AND,OR} 80:1{_,DEFER_BLOCKING} | U@54:4, U@42:12n, P@87~90`,
	`B2R 31c =78:2:1 0:0{RESULT} =81:3:7 | >R@16`,
	`B2R 31c =78:2:1 0:0{RESULT} | >R@16, >P@81`,
	// NANOSLEEP: a register (35d) or immediate (95d) duration, 85:2 .WARP
	// or .RAND, a predicate at 87 printed when it is not PT
	`NANOSLEEP 35d 85:2{_,WARP,RAND} =87:4:7 | R@32`,
	`NANOSLEEP 95d 85:2{_,WARP,RAND} =87:4:7 | U@32:32`,
	`NANOSLEEP 35d 85:2{_,WARP,RAND} | P@87~90, R@32`,
	`NANOSLEEP 95d 85:2{_,WARP,RAND} | P@87~90, U@32:32`,
	// BPT (trap, brkpt): 84:3 the kind, the code at 34:3 (0 not printed;
	// nvdisasm ignores bits 37 up)
	`BPT 95c 84:3{3=TRAP,4=INT} =34:3:0 |`,
	`BPT 95c 84:3{3=TRAP,4=INT} | U@34:3n`,
	// FCHK: the IEEE division's range check (P = the fast path is not
	// exact), negate/abs as FFMA's A and B
	`FCHK 302 | >P@81, R@24-72|73, R@32-63|62`,
	// DSETP with a reuse flag on the second source, slot 2 (nvdisasm prints it
	// when the stall count allows: tail_float.ptx cmp)
	`DSETP x22a 76:4{MIN,LT,EQ,LE,GT,NE,GE,NUM,NAN,LTU,EQU,LEU,GTU,NEU,GEU,MAX} 74:2{AND,OR,XOR} ur=0 :D | >P@81, >P@84, R@24-72|73, $B/1-63|62r2, P@87~90`,
	// F2FP: 79:2 3 rounds toward zero (.RZ, cvt.rz); 78 selects MERGE_C:
	// one result into the half of Rc 72 does not name (.H1: the high half
	// kept), the sources at 32 and 64, RZ at 24 not printed.
	`F2FP x23e 75:1{_,RELU} 76:1{_,BF16} 64:8{255=PACK_AB} =78:1:0 79:2{0=,3=RZ} | >R@16, R@24, $B/1`,
	`F2FP 23e 75:1{_,RELU} 76:1{_,BF16} 0:0{MERGE_C} =78:1:1 79:2{0=,3=RZ} =24:8:255 =72:1:0 | >R@16, R@32, R@64`,
	`F2FP 23e 75:1{_,RELU} 76:1{_,BF16} 0:0{MERGE_C} =78:1:1 79:2{0=,3=RZ} =24:8:255 =72:1:1 | >R@16, R@32, R@64.H1`,
	// conversions to and from 8- and 16-bit integers: the integer type
	// is 75:2+72:1 (F2I) or 84:2+74:1 (I2F) as size | signed<<2 (U8 0,
	// U16 1, U32 2, U64 3, S8 4, ... S32 6 printed bare); 311/312 are the
	// forms with a 64-bit operand, 305/306 the 32-bit ones.
	`F2I 305 80:1{_,FTZ} 75:2+72:1{0=U8,4=S8,5=S16} 84:2{?,F16,_,?} 78:2{_,FLOOR,CEIL,TRUNC} 77:1{_,NTZ} | >R@16, R@32`,
	`F2I 311 75:2+72:1{0=U8,4=S8,1=U16,5=S16,3=U64,7=S64} 84:2{?,F16,_,F64} 78:2{_,FLOOR,CEIL,TRUNC} 77:1{_,NTZ} | >R@16, R@32`,
	`I2F 306 75:2{?,F16,_,?} 84:2+74:1{0=U8,4=S8,5=S16} 78:2{_,RM,RP,RZ} | >R@16, R@32`,
	`I2F 312 75:2{?,F16,_,F64} 84:2+74:1{0=U8,4=S8,1=U16,5=S16,3=U64,7=S64} 78:2{_,RM,RP,RZ} | >R@16, R@32`,
	// I2I: a saturating narrowing of a signed 32-bit value (76:2 the
	// result type); F2IP: two floats to bytes packed into Rd, merged into
	// the half of Rc 72 does not name (cvt.rzi.sat.u8.f32), 74 .NTZ, 75 .RELU
	`I2I 238 76:2{U8,S8,U16,S16} 0:0{S32.SAT} | >R@16, R@32`,
	`F2IP 243 76:2{U8,S8} 0:0{F32} 78:2{0=,3=TRUNC} 74:1{_,NTZ} 75:1{_,RELU} =72:1:0 | >R@16, R@24, R@32, R@64`,
	`F2IP 243 76:2{U8,S8} 0:0{F32} 78:2{0=,3=TRUNC} 74:1{_,NTZ} 75:1{_,RELU} =72:1:1 | >R@16, R@24, R@32, R@64.H1`,
	// Tensor-core shapes beyond table.go's HMMA: 75+78 the HMMA shape
	// (1684: m16n8k4 tf32), 76 an F32 (set) or F16 accumulator, 82:2 .BF16
	// or .TF32 inputs. IMMA: 75+85:2 the shape, 76+83 and 78+84 the types
	// of A and B (signed, 4-bit), 82 .SAT; A is .ROW (73 clear) and B .COL
	// (74 set). BMMA: 75:2 the shape, 77:2 AND/XOR, 80 .POPC. DMMA.884:
	// negate/abs on A (72/73) and C (75/74), 78:2 the rounding. The
	// uniform predicate at 87 (UPT written as 0) is not modelled.
	`HMMA 23c 75:1+78:1{1688,16816,1684} 76:1{F16,F32} 82:2{_,BF16,TF32} | >R@16, R@24, R@32, R@64`,
	`IMMA 237 75:1+85:2{0=8816,2=8832,4=16816,5=16832,6=16864} 76:1+83:1{U8,S8,U4,S4} 78:1+84:1{U8,S8,U4,S4} 82:1{_,SAT} =73:1:0 =74:1:1 | >R@16, R@24.ROW, R@32.COL, R@64`,
	`BMMA 23d 75:2{0=88128,2=168256} 77:2{0=XOR,2=AND} 80:1{?,POPC} =73:1:0 =74:1:1 | >R@16, R@24.ROW, R@32.COL, R@64`,
	`DMMA 23f 0:0{884} =76:1:0 78:2{_,RM,RP,RZ} | >R@16, R@24-72|73, R@32, R@64-75|74`,
	// LDG and STG with a 32-bit register address [Ra+off] (codes 381 and
	// 386; ptxas's generic atomics fall back to it): LDG's and STG's
	// fields without the 64-bit address (87:5 0).
	`LDG 381 72:1{?,E} =81:3:7 84:3{0=EF,1=,3=LU,5=NA} 68:2{_,LTC64B,LTC128B} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,1=CONSTANT.PRIVATE,2=CONSTANT.CTA,4=CONSTANT,5=STRONG.SM,7=STRONG.GPU,8=MMIO.GPU,10=STRONG.SYS} | >R@16, MA@24/0`,
	`STG 386 72:1{?,E} =81:3:7 84:3{0=EF,1=} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,5=STRONG.SM,7=STRONG.GPU,10=STRONG.SYS} | MA@24/0, R@32`,
	// LDG and STG with every cache-eviction (84:3) and scope (77:4) value
	// nvdisasm names and the 256-byte L2 prefetch (68:2 3): ld.global
	// .L1::evict_last, .L2::256B, st.global.L1::no_allocate (tail_misc.ptx)
	`LDG 981 72:1{?,E} =76:1:1 =81:3:7 =87:5:24 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 68:2{_,LTC64B,LTC128B,LTC256B} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,1=CONSTANT.PRIVATE,2=CONSTANT.CTA,3=CONSTANT.CTA.PRIVATE,4=CONSTANT,5=STRONG.SM,6=STRONG.GPU.PRIVATE,7=STRONG.GPU,8=MMIO.GPU,9=CONSTANT.SM,10=STRONG.SYS,11=CONSTANT.SM.PRIVATE,12=MMIO.SYS,13=CONSTANT.VC,14=CONSTANT.VC.PRIVATE,15=CONSTANT.GPU} | >R@16, MG@24`,
	`STG 986 72:1{?,E} =76:1:1 =87:5:24 84:3{0=EF,1=,2=EL,3=LU,4=EU,5=NA} 73:3{U8,S8,U16,S16,_,64,128} 77:4{0=,1=CONSTANT.PRIVATE,2=CONSTANT.CTA,3=CONSTANT.CTA.PRIVATE,4=STRONG.SM.PRIVATE,5=STRONG.SM,6=STRONG.GPU.PRIVATE,7=STRONG.GPU,8=MMIO.GPU,9=CONSTANT.SM,10=STRONG.SYS,11=CONSTANT.SM.PRIVATE,12=MMIO.SYS,13=CONSTANT.VC,14=CONSTANT.VC.PRIVATE,15=CONSTANT.GPU} | MG@24/64, R@32`,
	// FRND.F16 (cvt.rni.f16.f16): the type 5 in 75:2+84:2, bit 60 reads
	// the high half (.H1) as MUFU.F16's
	`FRND 307 75:2+84:2{5=F16} 78:2{_,FLOOR,CEIL,TRUNC} =60:1:0 | >R@16, R@32`,
	`FRND 307 75:2+84:2{5=F16} 78:2{_,FLOOR,CEIL,TRUNC} =60:1:1 | >R@16, R@32.H1`,
	// HMNMX2 with HFMA2's swizzles and negate/abs bits, 78 .F32, 80 .FTZ,
	// 82 .XORSIGN (min.xorsign.abs)
	`HMNMX2 240 85:1{_,BF16_V2} 78:1{_,F32} 80:1{_,FTZ} 81:1{_,NAN} 82:1{_,XORSIGN} | >R@16, R@24-72|73zh74, R@32-63|62zh60, P@87~90`,
	// DADD with an immediate (the value's high 32 bits, its sign bit 63)
	// or a constant second source
	`DADD 429 78:2{_,RM,RP,RZ} | >R@16, R@24-72|73, D@32:32`,
	`DADD 629 78:2{_,RM,RP,RZ} | >R@16, R@24-72|73, C@40`,
	// CALL through a register (call through a function pointer): the
	// target printed relative to the instruction after a blank, as RET's
	`CALL 344 =87:3:7 0:0{REL} 86:1{_,NOINC} | R@24, T@32:50s`,
	// sparse HMMA (mma.sp): 73 .SP, 75+78 the shape, the metadata register
	// at 40 and its selector at 48:2 after C
	`HMMA 23c =73:1:1 0:0{SP} 75:1+78:1{1=16816,3=16832} 76:1{F16,F32} 82:2{_,BF16,TF32} | >R@16, R@24, R@32, R@64, R@40, U@48:2`,
	// MOVM (movmatrix): 78:2 the shape
	`MOVM 23a 78:2{16.MT88,16.M832,16.M864} | >R@16, R@24`,
	// shared atomics and arrivals addressed through a uniform register
	// (MU: [Ra+URb+off]): the warp-aggregated increment ptxas emits for
	// atom.shared.inc (87:5 26), mbarrier.arrive (87:5 25, .64 at 73:3)
	// and cp.async.mbarrier.arrive (ARRIVES.LDGSTSBAR.64)
	`ATOMS f8c =87:5:26 0:0{POPC.INC.32} =73:3:0 | >R@16, MU@24`,
	`ATOMS f8c =87:5:25 0:0{ARRIVE.64} =73:3:2 | >R@16, MU@24`,
	`ARRIVES 9b0 =72:1:0 =73:3:5 =91:1:1 0:0{LDGSTSBAR.64} | MU@24`,
	// PMTRIG (pmevent): the event mask
	`PMTRIG 801 =87:4:7 | U@32:32`,
}

// srNamesTail are the special registers nvdisasm -b SM86 names beyond
// operand.go's (S2R R28, SR<n> for every n, CUDA 11.8); nvdisasm spells 20
// SM_SHADER_TYPE.
var srNamesTail = map[SpecialReg]string{
	0x01: "SR_CLOCK", 0x02: "SR_VIRTCFG", 0x0f: "SR_ORDERING_TICKET", 0x10: "SR_PRIM_TYPE", 0x11: "SR_INVOCATION_ID",
	0x12: "SR_Y_DIRECTION", 0x13: "SR_THREAD_KILL", 0x14: "SM_SHADER_TYPE", 0x15: "SR_DIRECTCBEWRITEADDRESSLOW",
	0x16: "SR_DIRECTCBEWRITEADDRESSHIGH", 0x17: "SR_DIRECTCBEWRITEENABLED", 0x18: "SR_SW_SCRATCH", 0x19: "SR_MACHINE_ID_1",
	0x1a: "SR_MACHINE_ID_2", 0x1b: "SR_MACHINE_ID_3", 0x1c: "SR_AFFINITY", 0x1d: "SR_INVOCATION_INFO", 0x1e: "SR_WSCALEFACTOR_XY",
	0x1f: "SR_WSCALEFACTOR_Z", 0x28: "SR_NTID", 0x29: "SR_C", 0x2a: "SR_NLATC", 0x2c: "SR_SM_SPA_VERSION",
	0x2d: "SR_MULTIPASSSHADERINFO", 0x2e: "SR_LWINHI", 0x2f: "SR_SWINHI", 0x30: "SR_SWINLO", 0x31: "SR_SWINSZ", 0x32: "SR_SMEMSZ",
	0x33: "SR_SMEMBANKS", 0x34: "SR_LWINLO", 0x35: "SR_LWINSZ", 0x36: "SR_LMEMLOSZ", 0x37: "SR_LMEMHIOFF", 0x38: "SR_EQMASK",
	0x39: "SR_LTMASK", 0x3a: "SR_LEMASK", 0x3b: "SR_GTMASK", 0x3c: "SR_GEMASK", 0x3d: "SR_REGALLOC", 0x3e: "SR_BARRIERALLOC",
	0x40: "SR_GLOBALERRORSTATUS", 0x42: "SR_WARPERRORSTATUS", 0x44: "SR_VIRTUALENGINEID", 0x54: "SR_ESR_PC", 0x55: "SR_ESR_PC_HI",
	0x60: "SR_HWTASKID", 0x61: "SR_CIRCULARQUEUEENTRYINDEX", 0x62: "SR_CIRCULARQUEUEENTRYADDRESSLOW",
	0x63: "SR_CIRCULARQUEUEENTRYADDRESSHIGH", 0x84: "SR_VARIABLE_RATE", 0x85: "SR_TTU_TICKET_INFO",
}

// noReuseTail are table_tail.go's opcodes whose registers nvdisasm never
// prints with .reuse (TestLiveOracle on the examples: R2UR, ATOM, FLO) or whose
// words with a reuse flag it refuses (DMMA, IMMA); the memory and
// conversion ones as table.go's LDG, STG, F2I.
var noReuseTail = []Op{"R2UR", "ATOM", "FLO", "DMMA", "IMMA", "BMMA", "LD", "ST", "CCTL", "QSPC", "I2I", "F2IP", "MOVM", "B2R", "ARRIVES"}

func init() {
	for _, op := range noReuseTail {
		noReuseOps[op] = true
	}
	for n, s := range srNamesTail {
		srNames[n] = s
	}
	for k := SpecialReg(0); k < 8; k++ {
		srNames[0x64+2*k] = "SR_PM" + string(rune('0'+k))
		srNames[0x65+2*k] = "SR_PM_HI" + string(rune('0'+k))
		srNames[0x74+2*k] = "SR_SNAP_PM" + string(rune('0'+k))
		srNames[0x75+2*k] = "SR_SNAP_PM_HI" + string(rune('0'+k))
	}
}

// fMU is a shared address with a uniform register, [Ra(.Xn)+URb+off]
// (ATOMS.POPC.INC.32 RZ, [R0+URZ]; ATOMS.ARRIVE.64 R2, [URZ]): Ra at the
// field's position, URb at 64:6, the byte offset at 40:24, the scale at
// 78:2. Its Operand is a KMem with UIndex set and URb in Desc; nvdisasm
// leaves out Ra when it is RZ without a scale, and a zero offset.
const fMU fkind = 96

func init() { kindsMMA["MU"] = fMU }

func encodeMU(w *word, o ospec, a Operand) error {
	sc := map[uint8]uint64{0: 0, 4: 1, 8: 2, 16: 3}
	v, ok := sc[a.Scale]
	if !a.UIndex || a.W64 || a.Desc > 63 || !ok || a.Imm < -(1<<23) || a.Imm >= 1<<23 {
		return fmt.Errorf("%w: operand %v: not a shared address with a uniform register", ErrInvalid, a)
	}
	w.set(o.pos, 8, uint64(a.N))
	w.set(64, 6, uint64(a.Desc))
	w.set(40, 24, uint64(a.Imm))
	w.set(78, 2, v)
	return nil
}

func decodeMU(w word, o ospec) Operand {
	return Operand{Kind: KMem, UIndex: true, N: uint8(w.get(o.pos, 8)), Desc: uint8(w.get(64, 6)),
		Imm: signExtend(w.get(40, 24), 24), Scale: [4]uint8{0, 4, 8, 16}[w.get(78, 2)]}
}

func formatMU(o Operand) string {
	var parts []string
	if o.N != 255 || o.Scale != 0 {
		r := regName(o.N)
		if o.Scale != 0 {
			r += ".X" + strconv.Itoa(int(o.Scale))
		}
		parts = append(parts, r)
	}
	parts = append(parts, UReg(o.Desc).String())
	if o.Imm != 0 {
		parts = append(parts, hexs(o.Imm))
	}
	return "[" + strings.Join(parts, "+") + "]"
}

// parseMU reads formatMU's text.
func parseMU(t string) (Operand, bool) {
	a := Operand{Kind: KMem, UIndex: true, N: 255}
	if len(t) < 2 || t[0] != '[' || t[len(t)-1] != ']' {
		return a, false
	}
	seenUR := false
	for _, p := range strings.Split(t[1:len(t)-1], "+") {
		switch {
		case strings.HasPrefix(p, "UR"):
			if p == "URZ" {
				a.Desc = 63
			} else {
				n, err := strconv.Atoi(p[2:])
				if err != nil || n < 0 || n > 62 {
					return a, false
				}
				a.Desc = uint8(n)
			}
			seenUR = true
		case strings.HasPrefix(p, "R"):
			for _, sc := range []uint8{16, 8, 4} {
				if s := ".X" + strconv.Itoa(int(sc)); strings.HasSuffix(p, s) {
					a.Scale, p = sc, strings.TrimSuffix(p, s)
					break
				}
			}
			n, ok := parseRegName(p)
			if !ok {
				return a, false
			}
			a.N = n
		default:
			v, ok := parseInt(p)
			if !ok {
				return a, false
			}
			a.Imm = v
		}
	}
	return a, seenUR
}
