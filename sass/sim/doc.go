package sim

// The simulator's model (Sim, Launch, Config).
//
// Modelled, with these semantics:
//
//   - Control: guards (@P, @!P; a never-written guard predicate faults in
//     poison mode), BRA, EXIT (per lane; a warp ends when all its lanes
//     have), CALL.REL.NOINC (a relative branch: ptxas passes the return
//     address in registers), CALL.REL.NOINC Ra (a function pointer: the
//     per-lane target as RET's, Ra an offset in the kernel's section that
//     ptxas keeps in the kernel's constant bank 2: call.go), RET.REL.NODEC
//     Ra and BRX/BRXU Ra (per-lane
//     target: the byte offset Ra + next instruction + the encoded offset;
//     outside the program is ErrOutOfBounds), NOP, MEMBAR, ERRBAR,
//     CCTL, NANOSLEEP (no effect); YIELD ends the warp's turn, so that a
//     spin loop (ptxas puts YIELD in every loop that may wait on another
//     warp) lets the other warps run. FCHK sets its predicate in every lane
//     (ptxas then takes the full-range division path, exact for every
//     input: only the instruction count differs). Running off the end of
//     the program faults.
//   - Poison (Config.Poison): a read of a register, predicate or
//     uniform register never written in the lane faults, except the source
//     of SEL and FSEL that the lane's predicate does not select (ptxas
//     selects between a guarded load's result and RZ: poison.go).
//     Registers are tracked by byte: PRMT, and the copies MOV, SEL and
//     FSEL, move undefined bytes without faulting (nvcc's PRMT R17, RZ,
//     0x7610, R17 merges into a register whose other half is don't-care),
//     a 1- or 2-byte store uses only its low bytes, a half-precision
//     source read as .H0_H0 or .H1_H1 (and each HADD2.F32 source) only its
//     half, LOP3 and SHF by a constant only the bytes that reach the
//     result, F2F only a binary16 source's low half, SHFL copies the
//     source lane's defined bytes, and any other read of an undefined
//     byte faults.
//   - Divergence (diverge.go): a branch whose guard or indirect target
//     differs across the running lanes splits the warp into (pc, mask)
//     groups; the warp runs the lowest-pc group that can run and merges
//     groups that reach the same pc. BSSY Bb records the executing lanes in
//     convergence barrier Bb; BREAK Bb removes the executing lanes from it;
//     BSYNC Bb holds its group until every lane of Bb that has not exited
//     is in it; WARPSYNC mask (or .ALL, or a register: one value for the
//     group, else ErrDivergent) likewise for the named live lanes;
//     WARPSYNC.EXCLUSIVE Ra as WARPSYNC Ra (inferred from the name).
//     BRA.DIV URa, target is taken when a live lane of URa's mask (~URa
//     with its not flag) is not in the running group, BRA.CONV when every
//     one is: inferred from nvcc's code around __shfl_sync/__syncwarp, the
//     whole group branching alike.
//     A guard that differs across the group on BSYNC/WARPSYNC is
//     ErrDivergent; groups all held at convergence points that cannot
//     complete are ErrDeadlock. The order in which diverged groups run
//     is this policy's, not the hardware's (unpublished): a program whose
//     result depends on it (lanes of one warp handing data to each other
//     without a convergence point) may differ from silicon. BMOV.32(.CLEAR)
//     Rd, Bb reads a barrier (and clears it), BMOV.32 Bb, Ra writes it
//     from a value that must be the same in every executing lane. Groups
//     at one pc merge whatever their call depth: a recursive function
//     whose depth differs across a warp's lanes is not modelled (the BMOV
//     restoring the caller's barrier reports ErrDivergent).
//   - Scoreboards: every instruction naming a write or read scoreboard
//     counts on it (guarded off or not); a wait mask or a DEPBAR on a
//     scoreboard whose count is zero is a no-op, as on hardware, or
//     ErrScoreboard under Config.StrictScoreboards. Results are ready
//     at once: timing hazards are the schedule checker's.
//   - Special and uniform registers: S2R/CS2R of SR_TID.X/Y/Z, SR_CTAID.*,
//     SR_LANEID, SR_EQMASK..SR_GEMASK, SR_CLOCKLO/HI and SR_GLOBALTIMERLO/HI
//     (the CTA's step count), SRZ, SR_VIRTID/SR_VIRTUALSMID (0); S2UR of
//     SR_CTAID.*, SR_CLOCKLO, SR_VIRTID/SR_VIRTUALSMID ;
//     ULDC(.64, and indexed by a uniform register), UMOV.
//   - The uniform datapath (the opcode table's general opcode, opcodes.go): UIADD3 (carries in
//     and out, negated sources), UIMAD(.WIDE(.U32)), USHF, ULOP3 (with a
//     uniform predicate output), ULEA(.HI.X), UISETP(.EX), USEL, UFLO,
//     UPOPC, UBREV, UPRMT compute what their general opcodes compute, once
//     per warp, on uniform registers and predicates UP0..UP6/UPT (one value
//     for the warp); R2UR takes the first executing lane's register, VOTEU
//     the warp's ballot. Uniform predicates may be read wherever a
//     predicate is (USEL, PLOP3, UIADD3.X, guards of ALU forms); ALU forms
//     with a uniform register source (IMAD R, R, UR, R; LEA R, P, R, UR;
//     FMUL R, R, UR; ...) read it in every lane.
//   - Integer: MOV, IMAD (MOV, SHL, IADD, U32, HI as hi32(a*b + the pair C:C+1), WIDE(.U32)
//     with a 64-bit addend, X with carry-in; a negated addend), IADD3 (negated
//     sources as ~x+1; carry-out predicates: the first set when the sum
//     carried at least once, the second when twice; .X with ~ sources and two
//     carry-ins), LOP3.LUT (truth table over a=0xF0, b=0xCC, c=0xAA), SHF
//     (L/R, U32/S32/U64/S64, HI, W; without W the shift clamps at 32 or 64),
//     LEA (carry-out), LEA.HI(.X)(.SX32), IMNMX(.U32) (PT min, !PT max), SEL, PRMT
//     (default mode: A bytes 0..3, C bytes 4..7, bit 3 of a selector nibble
//     replicates the sign), ISETP (F LT EQ LE GT NE GE T, .U32, AND/OR/XOR
//     chaining, .EX for 64-bit compares), POPC, IABS, BREV, FLO(.U32)(.SH),
//     VOTE, MATCH.ANY(.U64) (the executing lanes holding the same value),
//     PLOP3.LUT Pd, PT, a, b, c (the truth table over predicates as LOP3's;
//     a second output other than PT is refused), LDC(.U8/.S8/.U16/.S16/.64)
//     from c[bank][Ra+off] per lane (the banks Config.Banks gives; an
//     address outside the bank is ErrOutOfBounds);
//     IMAD.HI/IMAD.WIDE Rd, Pc, ... set Pc to the carry out of the 64-bit
//     sum (checked only through ptxas's 64-bit division, bit for bit).
//   - Binary64 on register pairs: DADD, DMUL, DFMA (round to nearest
//     only; other roundings are refused), DSETP (not .MIN/.MAX), bit-exact
//     IEEE (Go's float64); a NaN result is 0x7fffffffffffffff, the binary32
//     rule carried over (unverified).
//   - REDUX (AND, OR, XOR, SUM, MIN, MAX, .S32) over the executing lanes
//     into a uniform register; LOP3 with a predicate output P (set where
//     the result is not zero, ORed with the predicate input: inferred from
//     ptxas's 64-bit (x & m) != 0 test in kernels/ptx sg, which chains two
//     LOP3s through P0).
//   - Predicated branches and exits: @G BRA P, target and @G EXIT P act in
//     the lanes where both G and P hold (inferred from ptxas's code around
//     them, not documented). CALL/RET: each lane's call depth (CALL less
//     RET) is counted; deeper than MaxCallDepth, or a RET with no CALL
//     pending, is ErrOutOfBounds instead of a runaway stack.
//   - Float: FADD, FMUL, FFMA bit-exact binary32 in .RN/.RM/.RP/.RZ, with
//     .FTZ (sources and results: a result subnormal after rounding flushes),
//     .SAT ([0, 1], NaN to +0), -R and |R|; every NaN result is 0x7fffffff.
//     FMNMX (one NaN gives the other operand; -0 < +0), FSEL, FSETP (all 16
//     comparisons, ordered and unordered). MUFU (COS, SIN, EX2, LG2, RCP,
//     RSQ, SQRT, TANH) is binary64 math rounded to nearest binary32, with
//     subnormal sources and results flushed, SIN and COS taking revolutions
//     (ptxas scales by 1/2pi first): a documented approximation of the
//     hardware's few-ulp unit. I2F/I2FP (32- and 64-bit sources, all
//     directions), F2I (nearest even, FLOOR, CEIL, TRUNC; saturating, NaN to
//     0), F2F among F16, F32, F64. F2FP.PACK_AB (.BF16, .RELU) rounds to
//     nearest even, high source to bits 16..31; F2FP float8 (.E4M3/.E5M2,
//     satfinite) uses tile.F32ToE4M3/E5M2 with tile.Saturate, the merged
//     half of the third source in bits 16..31; F2FP.MERGE_C Rd, Rb, Rc
//     converts Rb into the low half and merges Rc's low (.H1: high) half
//     into the high half (the merge's placement assumed as the float8
//     packs'; ptxas only shows Rc = RZ). F2IP.U8.F32 Rd, RZ, Rb, RZ
//     (cvt.rni/rzi.sat.u8.f32): the saturated byte, NaN 0. FRND (.F16:
//     either half in, the result in the low half, the high half zero).
//     HMNMX2.XORSIGN: min/max of |a|, |b| with the sign a^b (a NaN's sign
//     unverified). HADD2.F32, HADD2, HMUL2,
//     HFMA2(.BF16_V2) round once to nearest even.
//   - Tensor cores (mma_tc.go), all 32 lanes taking part, with one
//     description of PTX's mma fragment layouts for every shape: HMMA
//     .16816/.1688 (f16, .BF16; .F32 or .F16 accumulators), .1688/.1684
//     .TF32 (the top 19 bits of each f32 register: truncation), HMMA.SP
//     .16816/.16832 and .1688/.16816.F32.TF32 (2:4 sparse A on 16-bit
//     units, 1:2 on tf32 elements; metadata register and selector;
//     metadata nibbles that repeat an index, or for tf32 any but 0b0100
//     and 0b1110, fault ErrUnsupported, as does a selector outside the
//     ISA's range, which ptxas 11.8 encodes for m16n8k32 .f32); each
//     HMMA output is the binary64 sum, in k order, of C and the products,
//     rounded once to binary32 or binary16 -- the tensor core's aligned
//     fixed-width adder may differ in the last bits (documented
//     approximation). IMMA (8816, 8832, 16816, 16832, 16864; S8/U8/S4/U4,
//     .SAT), IMMA.SP (16832/16864 on 8-bit, 16864/168128 on 4-bit
//     elements: 2:4 sparse A on 8-bit units, 4-bit elements in pairs) and
//     BMMA (88128, 168128, 168256; AND/XOR.POPC) exactly, wrapping or
//     clamping to int32. The sparse layouts of tf32 and the integers
//     follow the ISA's granularities with the f16 metadata layout, not
//     measured on hardware. DMMA.884: an IEEE binary64 fma chain in k order
//     from C, in the instruction's rounding direction. MOVM.16.MT88
//     (movmatrix.trans).
//   - Memory: LDG/STG (U8, S8, U16, S16, 32, 64, 128 bits; addresses are
//     64-bit register pairs, the descriptor ignored; [Ra.64+URb+off] and
//     [Ra.U32+URb+off] add the uniform pair URb:URb+1, assumed from the
//     address width, not measured), LDL/STL (a 16 KiB
//     window per thread below 0x1000000, the stack pointer c[0x0][0x28]
//     0xfffc00 inside it; zero, or 0xCD bytes in poison mode, at each CTA's
//     start), LDS/STS ([Ra.Xn+off]:
//     Ra times n plus the byte offset), LDSM.16.M88/MT88 x1/x2/x4 (all 32
//     lanes; rows given by lanes 8i..8i+7, 16-byte aligned), LDGSTS (4, 8,
//     16 bytes) with LDGDEPBAR groups and DEPBAR.LE retiring them, RED and
//     ATOMG (ADD MIN MAX INC DEC AND OR XOR EXCH CAS on 32/64 bits, ADD on
//     F32 (FTZ), F16x2, BF16x2, F64) serialised lane by lane under the
//     Memory's lock; ATOMS likewise on shared memory. Accesses must be
//     aligned to their width and inside a region (global) or the CTA's
//     shared bytes. STG.STRONG.* runs under the Memory's lock too:
//     single-copy atomic against other CTAs.
//   - Generic memory (mem_generic.go): LD, ST and ATOM (.E: 64-bit
//     addresses) as LDG, STG and ATOMG, except that an address in the
//     shared window (base c[0x0][0x18], 0x7ffe00000000) is the CTA's shared
//     memory and one in the local window (base c[0x0][0x20],
//     0x7fff00000000) the thread's local memory, each window 16 MiB, as
//     ptxas's cvta code expects; QSPC.E.{G,S,L} (isspacep) tests the
//     windows. A generic atomic on shared memory is atomic with ATOMS, on
//     global with ATOMG; one on the local window faults. RED stays global:
//     ptxas compiles a generic red to ATOM.E with an RZ result.
//   - LDGSTS visibility: the copy lands at issue but its bytes are in
//     flight until a DEPBAR (or a wait mask on the LDGDEPBAR's scoreboard)
//     retires its group; then they are visible to the copying thread, and
//     to every thread after a barrier the copying warp takes part in. Any
//     other LDS/LDSM/STS/LDGSTS access to them is ErrInFlight.
//   - Barriers: BAR.SYNC b (every live warp of the CTA; exited warps do not
//     count), BAR.SYNC b, n and BAR.ARV b, n (n threads, counted per warp);
//     BAR.RED.{POPC,AND,OR} b, [n,] P reduces the arriving lanes' P and
//     B2R.RESULT reads the warp's last result (barred.go);
//     a guard that differs across active lanes, or a warp whose lanes are
//     diverged (not all at this BAR), is ErrDivergent; a round
//     in which every live warp waits is ErrDeadlock.
//   - SHFL IDX/UP/DOWN/BFLY with PTX's clamp and segment mask (c = segmask<<8
//     | clamp) and its predicate; a value taken from a lane that did not
//     execute the SHFL is undefined: in poison mode the destination lane
//     counts as never written (but for the bytes the source lane defined).
//
// Not modelled (ErrUnsupported when executed): CALL/RET other than
// .REL.NOINC/.REL.NODEC (the hardware return stack), BMOV other than
// .32, texture and surface access, mbarrier operations other than the
// arrivals ptxas emits for mbarrier.arrive and cp.async.mbarrier.arrive
// .noinc (mbarrier.go: the word's layout is inferred from ptxas's own
// init and wait code, not measured), R2UR with a predicate result (its
// meaning is unpublished and ptxas 11.8 was not seen to emit it), generic accesses without .E, F2IP forms other than F2IP.U8.F32 Rd, RZ, Rb, RZ
// (f2ip.go), MATCH.ALL, PLOP3 with register sources, MOVM shapes other
// than .16.MT88, instruction timing, memory
// consistency between CTAs (CTAs run in parallel goroutines: plain
// conflicting global accesses of different CTAs are a program race) and
// shared-memory races between warps (warps run one at a time between
// barriers and YIELDs).
