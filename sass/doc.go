// Package sass is the SM86/SM89 (Ampere GA10x, Ada) instruction model of
// tcrt: a typed model of the SASS instructions, each with its control word
// (stall, yield, scoreboards, wait mask, operand reuse); an encoder and
// decoder for the 128-bit instruction words; a printer whose text matches
// nvdisasm's and a parser for that text; and the opcode table every tool
// reads. The tools built on it live beside it, one package per job:
//
//   - sass/cubin: the cubin (ELF) writer and reader;
//   - sass/sim: the functional simulator;
//   - sass/sched: the schedule checker, the latency table and the cycle
//     model.
//
// No kernels live here: they are in kernels/... and build their
// instructions with New (and the chaining methods), the one way to build
// them; Encode checks each against the opcode table's forms.
//
// Encodings are learnt from outside NVIDIA's binaries: PTX assembled with
// ptxas and read back with nvdisasm, one field varied at a time.
//
// # Model
//
// An Inst is a guard (Cond), an opcode (Op, e.g. "FFMA"), modifier tokens in
// nvdisasm's order (Mods: ["WIDE", "U32"]), operands in nvdisasm's order
// (Args: Operand values of a Kind: register, predicate, uniform register,
// immediate, float immediate, constant bank, memory address, special
// register, branch target, scoreboard) and a Control word. Build them with
// New and the chaining methods (With, When, Stall, Yield, WriteSB, ReadSB,
// Wait, Reuse), or by parsing text (Parse, for tests and tools). Inspect
// them with Class, VariableLatency, Reads, Writes, DepsOf and Arch.
//
// # Tables
//
// Every opcode is one row of the opcode table (opcodes.go): its encoding
// forms, its latency class and operand register counts (DepsOf), its
// simulator operation and its no-reuse rule, stated once. A form is one
// string (notation: def in form.go): the opcode bits, fixed bits, modifier fields
// (value -> token) and operand fields. A form is chosen by operand kinds and
// modifiers; alias forms (IMAD.MOV, IMAD.SHL, IMAD.IADD) come first because
// nvdisasm prints them whenever their operands fit. Anything a form does not
// name must be zero.
//
// # Decoding
//
// DecodeWord accepts a word only if re-encoding the decoded instruction gives
// the same 128 bits; anything else (an opcode outside the model, a field
// value no table lists, a set bit no form explains) is ErrUnmodeled. So the
// decoder never invents meaning, and every accepted word round-trips. The
// texture and surface instructions (TEX, TLD, TLD4, SULD, SUST) are refused
// by name: their errors also wrap ErrUnsupported.
//
// # Text
//
// Inst.Text(pc) and String (pc 0) print exactly nvdisasm -b SM86 -hex's
// instruction text for the word (nvdisasm -b SM89 for the sm_89-only forms),
// without the address and hex columns, including the guard, ".reuse" and the
// terminator. The control word is not part of nvdisasm's text, except that
// (measured, CUDA 11.8):
//   - ".reuse" is printed only on instructions without the yield flag;
//   - the terminator is ";" instead of " ;" when the stall count and the wait
//     mask are zero and the yield flag is set.
//
// Inst.Listing(pc) prefixes the control word, "[B0-----:R-:W2:Y:S04]" (wait
// mask over SB0..SB5, read and write scoreboard, yield, stall; ":U<m>" for
// reuse flags that no printed register shows; ":X<n>" for bits 126..127), and
// shows what nvdisasm's text loses: every reuse flag, a global access's
// hidden descriptor when it is not UR4 (hdesc[URn][...]), a NaN immediate as its bits
// (0fXXXXXXXX), the scale of a shared address on RZ, and a hidden modifier
// (a token starting with "_", e.g. LEA.HI.SX32._NOTPT) for bits nvdisasm
// prints alike. Parse and ParseInst read both forms; ParseInst(i.Listing(pc),
// pc) == i for every encodable i, and parsing nvdisasm's own text gives back
// the word except for what that text cannot show (the control word, the
// hidden descriptor and modifiers, NaN payloads).
//
// # Facts measured with the CUDA 11.8 tools (and unverified assumptions)
//
//   - nvdisasm 11.8 does not print the memory descriptor of LDG/STG/RED/ATOMG/
//     LDGSTS (desc[UR4]); it lives in bits 32..37 (LDG) or 64..69 (STG, RED,
//     ATOMG, LDGSTS) and is printed, desc[URn][...], only when bit 101 is set
//     (modelled for LDG and STG, where ptxas sets it for cache-hint accesses:
//     Operand.DescShown).
//   - F2FP prints as F2FP.PACK_AB / F2FP.BF16.PACK_AB under -b SM86, but as
//     F2FP.F16.F32.PACK_AB / F2FP.BF16.F32.PACK_AB under -b SM89 for the same
//     word. The sm_89 float8 pack F2FP.SATFINITE.{E4M3,E5M2}.F32.PACK_AB_MERGE_C
//     Rd, Ra, Rb, Rc[.H1]: format in bits 76+87, SATFINITE 77, the
//     PACK_AB_MERGE_C selector in bits 78+90, the merge half in bit 72. That Ra
//     is the high byte and Rb the low one follows the F16 pack (PTX
//     cvt.rn.f16x2.f32 d, a, b) and is unverified on silicon.
//   - BAR.SYNC prints as "BAR.SYNC 0x0" (no .DEFER_BLOCKING) in 11.8; a named
//     barrier as "BAR.SYNC 0x1, 0x80"; BAR.ARV always shows its count.
//   - Float immediates: %.20g below 1e9 in magnitude, %.20e from 1e9 on;
//     +INF, -INF, +QNAN, -QNAN (every NaN), -0.0 carry a trailing blank.
//   - Reuse flags follow the operand's place in the text (a second source held
//     in the C field reuses through B; FADD's second source reuses through C).
//     nvdisasm refuses reuse flags on slots that hold no register, B and C
//     reuse together on a yielding instruction, and HMMA's C reuse without
//     yield; the encoder refuses them too. Memory, conversion, MUFU, SHFL,
//     BAR and atomic operands never print .reuse: the model gives them no
//     reuse slot (stricter than nvdisasm, which ignores such bits).
//   - Only the special register names nvdisasm was seen to print are
//     modeled; others are refused.
//   - Which opcodes are variable-latency (VariableLatency) follows sm86.md
//     and ptxas's use of scoreboards; it is not measured here.
//   - A global address on RZ prints [RZ.64+off]; a shared one prints the
//     bare offset, hiding the scale ([RZ.X4+0x10] prints [0x10]); for ATOMG.CAS
//     (an address without .64) the shared rule is assumed.
//
// # Golden corpora and tests
//
// testdata/golden_sm86.txt holds ptxas words, words encoded from the tables
// for forms ptxas did not emit (Examples) and control-word variants, each with
// nvdisasm's text; testdata/golden_sm89.txt the float8 packs. go generate
// (internal/gengolden) rewrites them and needs the CUDA tools. The tests
// decode, print, re-encode and parse every golden word, fail when a form has
// no golden word, fuzz the decoder (FuzzDecode), and run the live oracle:
// every program registered with OracleProgram is encoded and disassembled by
// nvdisasm (found through TCRT_CUDA_HOME/bin or PATH) and compared with the
// printer; without the tools it is skipped, except under CI=true.
//
// testdata/nvcc is the nvcc corpus: CUDA C++ kernels in the spirit of
// real-world code (shuffle and cooperative-groups reductions under
// divergence, softmax, layernorm, divisions, atomics, spills, device calls,
// __constant__ data, function pointers, cp.async, WMMA, mma.sync, shared
// memory through uniform registers) compiled by nvcc 11.8 for sm_86 and
// sm_89 (cubin/, golden/; gen.sh rebuilds it, TestNVCCCorpusCurrent checks
// it where nvcc is installed, by the SHA-256 record inputs.sum unless it
// rebuilds under CI=true or -sass.rebuild-corpus). TestNVCCCorpusCoverage
// requires every word to decode, re-encode, print as nvdisasm and parse
// back (both the listing and nvdisasm's own text), with no baseline.
//
// testdata/ptxas is the ptxas corpus: PTX kernels written to cover what
// ptxas emits (GEMM with mma.sync/ldmatrix/cp.async, attention loops,
// collectives, atomics, f16x2/bf16x2, fp64, division, calls, switches,
// local memory, uniform-datapath code) plus the repository's other ptxas
// inputs, compiled for sm_86 and sm_89 (cubin/), and every code word of
// every ptxas-built cubin of the repository with nvdisasm's text (golden/).
// gen.sh rebuilds it; TestCorpusCurrent checks it is current (with the
// tools, not under -short; as TestNVCCCorpusCurrent, by inputs.sum);
// TestCorpusCoverage decodes, re-encodes and prints every word and holds
// the per-file counts of words outside the model to the baseline gaps.txt
// (-sass.corpus-strict requires none).
//
// Further measured facts (nvdisasm 11.8): IMAD immediates print signed and
// SEL's unsigned; an inverted non-predicate operand prints "~" (IMAD.X
// R10, RZ, RZ, ~R23, P2), a predicate "!"; .reuse follows the bars of |R|;
// IMAD.U32 by 0x10000 is not printed as IMAD.SHL.U32; nvdisasm -b SM89
// spells F2FP.PACK_AB as F2FP.F16.F32.PACK_AB (Inst.TextArch).
package sass
