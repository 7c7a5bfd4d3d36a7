#include "textflag.h"

// AVX2 float8 kernels, eight lanes a vector (the AVX-512 kernels in
// float8_amd64.s do sixteen). n is a positive multiple of 8. AVX2 has only
// signed dword compares; every compared value is below 2^31 (|x| bits,
// codes), so they order as unsigned ones would.
//
// The encoder rounds with one float addition over the whole range, normal
// and subnormal (float8_fast.go selects between an integer rounding and a
// float one): with a' = min(|x|, limit) and E the larger of a''s exponent
// bits and the smallest normal's (minNormal), M = E + ((23-m) << 23) is
// 2^(e+23-m), whose ulp is the format's quantum at a''s exponent e, so the
// FPU's round-to-nearest-even of a' + M keeps exactly the format's
// mantissa bits; k = bits(a' + M) - bits(M) is the rounded significand in
// quanta (carry included) and the code is k + ((E - minNormal) >> (23-m)).
// Codes above maxCode become the mode's overflow code by an unsigned min
// (ovf is maxCode or maxCode+1); NaN becomes 0x7F. limit (a power of two
// above the largest finite value) keeps M finite for huge |x| and Inf.
// Thirty-two codes are packed at a time: codes by unsigned saturation,
// signs by signed saturation of x itself, OR-ed, then one VPERMD.

DATA absmask<>+0(SB)/8, $0x7fffffff7fffffff
DATA absmask<>+8(SB)/8, $0x7fffffff7fffffff
DATA absmask<>+16(SB)/8, $0x7fffffff7fffffff
DATA absmask<>+24(SB)/8, $0x7fffffff7fffffff
GLOBL absmask<>(SB), RODATA|NOPTR, $32

DATA nan7f<>+0(SB)/8, $0x0000007f0000007f
DATA nan7f<>+8(SB)/8, $0x0000007f0000007f
DATA nan7f<>+16(SB)/8, $0x0000007f0000007f
DATA nan7f<>+24(SB)/8, $0x0000007f0000007f
GLOBL nan7f<>(SB), RODATA|NOPTR, $32

DATA sign80<>+0(SB)/8, $0x8080808080808080
DATA sign80<>+8(SB)/8, $0x8080808080808080
DATA sign80<>+16(SB)/8, $0x8080808080808080
DATA sign80<>+24(SB)/8, $0x8080808080808080
GLOBL sign80<>(SB), RODATA|NOPTR, $32

// permd orders the dwords of the packed bytes: 0 4 1 5 2 6 3 7.
DATA permd<>+0(SB)/8, $0x0000000400000000
DATA permd<>+8(SB)/8, $0x0000000500000001
DATA permd<>+16(SB)/8, $0x0000000600000002
DATA permd<>+24(SB)/8, $0x0000000700000003
GLOBL permd<>(SB), RODATA|NOPTR, $32

#define BCAST(imm, reg, x) \
	MOVL imm, AX \
	MOVD AX, x \
	VPBROADCASTD x, reg

// Encode constants from the encParams at R8: Y13 limit, Y12 0x7f800000
// (exponent mask and Inf), Y11 minNormal, Y10 (23-m) << 23, Y9 ovf, X14 the
// shift 23-m. Y15 (scale) is the caller's.
#define ENC2_CONSTS \
	VPBROADCASTD 32(R8), Y13 \
	BCAST($0x7f800000, Y12, X12) \
	VPBROADCASTD 12(R8), Y11 \
	VPBROADCASTD 16(R8), Y10 \
	VPSUBD Y11, Y10, Y10 \
	VPBROADCASTD 28(R8), Y9 \
	MOVL 4(R8), AX \
	MOVQ AX, X14

// ENC8 encodes the 8 float32 values in X (kept) into 8 codes without sign
// in S (dwords); A, E and M are clobbered.
#define ENC8(X, A, S, E, M) \
	VPAND absmask<>(SB), X, A \
	VPMINUD Y13, A, S \
	VPAND Y12, S, E \
	VPMAXSD Y11, E, E \
	VPADDD Y10, E, M \
	VADDPS M, S, S \
	VPSUBD M, S, S \
	VPSUBD Y11, E, E \
	VPSRLD X14, E, E \
	VPADDD E, S, S \
	VPMINUD Y9, S, S \
	VPCMPGTD Y12, A, E \
	VPBLENDVB E, nan7f<>(SB), S, S

// ENC32 encodes the 32 values loaded by LOADX(offset, reg) into 32 bytes
// at (DI).
#define ENC32(LOADX) \
	LOADX(0, Y0) \
	ENC8(Y0, Y1, Y2, Y3, Y4) \
	LOADX(32, Y5) \
	ENC8(Y5, Y1, Y6, Y3, Y4) \
	VPACKUSDW Y6, Y2, Y2 \
	VPACKSSDW Y5, Y0, Y0 \
	LOADX(64, Y5) \
	ENC8(Y5, Y1, Y6, Y3, Y4) \
	LOADX(96, Y7) \
	ENC8(Y7, Y1, Y8, Y3, Y4) \
	VPACKUSDW Y8, Y6, Y6 \
	VPACKSSDW Y7, Y5, Y5 \
	VPACKUSWB Y6, Y2, Y2 \
	VPACKSSWB Y5, Y0, Y0 \
	VPAND sign80<>(SB), Y0, Y0 \
	VPOR Y0, Y2, Y2 \
	VMOVDQU permd<>(SB), Y1 \
	VPERMD Y2, Y1, Y2 \
	VMOVDQU Y2, (DI)

// ENC8S encodes the 8 values loaded by LOADX into 8 bytes at (DI).
#define ENC8S(LOADX) \
	LOADX(0, Y0) \
	ENC8(Y0, Y1, Y2, Y3, Y4) \
	VPACKUSDW Y2, Y2, Y2 \
	VPACKSSDW Y0, Y0, Y0 \
	VPACKUSWB Y2, Y2, Y2 \
	VPACKSSWB Y0, Y0, Y0 \
	VPAND sign80<>(SB), Y0, Y0 \
	VPOR Y0, Y2, Y2 \
	VMOVDQU permd<>(SB), Y1 \
	VPERMD Y2, Y1, Y2 \
	VMOVQ X2, (DI)

// The loads: src at SI times the scale in Y15, or times the scales at R9.
#define LOAD_SCALE(off, r) VMULPS off(SI), Y15, r
#define LOAD_SCALES(off, r) \
	VMOVUPS off(R9), r \
	VMULPS off(SI), r, r

// func encF32AVX2(dst *uint8, src *float32, n int, scale float32, p *encParams)
TEXT ·encF32AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS scale+24(FP), Y15
	MOVQ p+32(FP), R8
	ENC2_CONSTS
	CMPQ CX, $32
	JB enc2tail
enc2loop:
	ENC32(LOAD_SCALE)
	ADDQ $128, SI
	ADDQ $32, DI
	SUBQ $32, CX
	CMPQ CX, $32
	JAE enc2loop
	TESTQ CX, CX
	JZ enc2done
enc2tail:
	ENC8S(LOAD_SCALE)
	ADDQ $32, SI
	ADDQ $8, DI
	SUBQ $8, CX
	JNZ enc2tail
enc2done:
	VZEROUPPER
	RET

// func encF32VecAVX2(dst *uint8, src, scales *float32, n int, p *encParams)
TEXT ·encF32VecAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ scales+16(FP), R9
	MOVQ n+24(FP), CX
	MOVQ p+32(FP), R8
	ENC2_CONSTS
	CMPQ CX, $32
	JB enc2vtail
enc2vloop:
	ENC32(LOAD_SCALES)
	ADDQ $128, SI
	ADDQ $128, R9
	ADDQ $32, DI
	SUBQ $32, CX
	CMPQ CX, $32
	JAE enc2vloop
	TESTQ CX, CX
	JZ enc2vdone
enc2vtail:
	ENC8S(LOAD_SCALES)
	ADDQ $32, SI
	ADDQ $32, R9
	ADDQ $8, DI
	SUBQ $8, CX
	JNZ enc2vtail
enc2vdone:
	VZEROUPPER
	RET

// func encF32BlocksAVX2(dst *uint8, src, scales *float32, nblocks, blockLen int, p *encParams)
// Block b of blockLen (a multiple of 8) values is multiplied by scales[b].
// The callers encode a row at a time, right after the row's amax has
// brought it from memory into L1; so the kernel prefetches into L2 the
// next call's input, as many bytes past this call's as it reads (R11), and
// the next row's amax finds it there: its memory reads overlap this
// encode's arithmetic.
TEXT ·encF32BlocksAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ scales+16(FP), R9
	MOVQ nblocks+24(FP), CX
	MOVQ blockLen+32(FP), R10
	MOVQ p+40(FP), R8
	MOVQ CX, R11
	IMULQ R10, R11
	SHLQ $2, R11
	ENC2_CONSTS
enc2bouter:
	VBROADCASTSS (R9), Y15
	MOVQ R10, DX
	CMPQ DX, $32
	JB enc2btail
enc2binner:
	PREFETCHT1 (SI)(R11*1)
	PREFETCHT1 64(SI)(R11*1)
	ENC32(LOAD_SCALE)
	ADDQ $128, SI
	ADDQ $32, DI
	SUBQ $32, DX
	CMPQ DX, $32
	JAE enc2binner
	TESTQ DX, DX
	JZ enc2bnext
enc2btail:
	ENC8S(LOAD_SCALE)
	ADDQ $32, SI
	ADDQ $8, DI
	SUBQ $8, DX
	JNZ enc2btail
enc2bnext:
	ADDQ $4, R9
	DECQ CX
	JNZ enc2bouter
	VZEROUPPER
	RET

// The decoders go through binary16 and VCVTPH2PS (F16C), which
// converts subnormals exactly: an E5M2 code is the top byte of its binary16
// value; an E4M3 code x (sign s, 7-bit magnitude m) is the binary16
// s | m<<7, exactly 2^-8 times its value. NaN codes are first rewritten to
// the binary16 quiet NaN s|0x7E00, which converts to s|0x7FC00000.
// E4M3 codes go sixteen at a time through the word steps, E5M2 eight.
// Each kernel exists twice: with plain stores, and with non-temporal ones
// (VMOVNTPS, dst 32-byte aligned; an SFENCE ends the kernel) for
// destinations that are not read again soon.

// Constants of DEC4: Y12 = 256.0, Y13 = 0xBFFF, Y11 = 0x7FFF, Y10 = 0x3F80
// (E4M3 0x7F after the shift), Y9 = 0x3F80^0x7E00 (words).
#define DEC4_CONSTS \
	BCAST($0x43800000, Y12, X12) \
	BCAST($0xBFFFBFFF, Y13, X13) \
	BCAST($0x7FFF7FFF, Y11, X11) \
	BCAST($0x3F803F80, Y10, X10) \
	BCAST($0x41804180, Y9, X9)

// DEC4_WORDS turns the sign-extended codes in W (words) into binary16.
#define DEC4_WORDS(W, T) \
	VPSLLW $7, W, W \
	VPAND Y13, W, W \
	VPAND Y11, W, T \
	VPCMPEQW Y10, T, T \
	VPAND Y9, T, T \
	VPXOR T, W, W

// DEC4_16 decodes the 16 E4M3 codes at (SI) to 64 bytes at (DI): SCALE(off,
// reg) multiplies by the scale of the values at byte off of the output,
// STORE(reg, off) stores.
#define DEC4_16(SCALE, STORE) \
	VPMOVSXBW (SI), Y0 \
	DEC4_WORDS(Y0, Y2) \
	VCVTPH2PS X0, Y1 \
	VEXTRACTI128 $1, Y0, X0 \
	VCVTPH2PS X0, Y3 \
	VMULPS Y12, Y1, Y1 \
	VMULPS Y12, Y3, Y3 \
	SCALE(0, Y1) \
	SCALE(32, Y3) \
	STORE(Y1, 0) \
	STORE(Y3, 32)

// DEC4_8 decodes 8 E4M3 codes at (SI) to 32 bytes at (DI).
#define DEC4_8(SCALE, STORE) \
	VPMOVSXBW (SI), X0 \
	DEC4_WORDS(Y0, Y2) \
	VCVTPH2PS X0, Y1 \
	VMULPS Y12, Y1, Y1 \
	SCALE(0, Y1) \
	STORE(Y1, 0)

// Constants of DEC5: X14 = 0, Y13 = 0xFFC00000.
#define DEC5_CONSTS \
	VPXOR X14, X14, X14 \
	BCAST($0xFFC00000, Y13, X13)

// DEC5_8 decodes the 8 E5M2 codes at (SI) to 32 bytes at (DI): NaNs
// (unordered with themselves) keep their sign and quiet bit only.
#define DEC5_8(SCALE, STORE) \
	VMOVQ (SI), X0 \
	VPUNPCKLBW X0, X14, X0 \
	VCVTPH2PS X0, Y1 \
	VCMPPS $3, Y1, Y1, Y2 \
	VANDPS Y13, Y1, Y3 \
	VBLENDVPS Y2, Y3, Y1, Y1 \
	SCALE(0, Y1) \
	STORE(Y1, 0)

#define SCALE_ONE(off, r) VMULPS Y15, r, r
#define SCALE_VEC(off, r) VMULPS off(R9), r, r
#define STORE_U(r, off) VMOVUPS r, off(DI)
#define STORE_NT(r, off) VMOVNTPS r, off(DI)

// DEC4_RUN decodes CX (a positive multiple of 8) E4M3 codes from SI to DI
// (and steps R9 by VSTEP), then jumps to done; DEC5_RUN is the same for
// E5M2. The other arguments are the loops' labels.
#define DEC4_RUN(SCALE, STORE, VSTEP, loop, tail, done) \
	CMPQ CX, $16 \
	JB tail \
loop: \
	DEC4_16(SCALE, STORE) \
	ADDQ $16, SI \
	ADDQ $64, DI \
	VSTEP(64) \
	SUBQ $16, CX \
	CMPQ CX, $16 \
	JAE loop \
	TESTQ CX, CX \
	JZ done \
tail: \
	DEC4_8(SCALE, STORE) \
	ADDQ $8, SI \
	ADDQ $32, DI \
	VSTEP(32) \
	JMP done

#define DEC5_RUN(SCALE, STORE, VSTEP, loop, done) \
loop: \
	DEC5_8(SCALE, STORE) \
	ADDQ $8, SI \
	ADDQ $32, DI \
	VSTEP(32) \
	SUBQ $8, CX \
	JNZ loop \
	JMP done

#define NOSTEP(n)
#define R9STEP(n) ADDQ $n, R9

// DEC_ONE is the body of decF32AVX2 and decF32NTAVX2 after the arguments
// are loaded.
#define DEC_ONE(STORE) \
	CMPL 16(R8), $0x7E \
	JNE dec5 \
	DEC4_CONSTS \
	DEC4_RUN(SCALE_ONE, STORE, NOSTEP, dec4loop, dec4tail, decdone) \
dec5: \
	DEC5_CONSTS \
	DEC5_RUN(SCALE_ONE, STORE, NOSTEP, dec5loop, decdone) \
decdone:

// func decF32AVX2(dst *float32, src *uint8, n int, scale float32, p *decParams)
TEXT ·decF32AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS scale+24(FP), Y15
	MOVQ p+32(FP), R8
	DEC_ONE(STORE_U)
	VZEROUPPER
	RET

// func decF32NTAVX2(dst *float32, src *uint8, n int, scale float32, p *decParams)
TEXT ·decF32NTAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS scale+24(FP), Y15
	MOVQ p+32(FP), R8
	DEC_ONE(STORE_NT)
	SFENCE
	VZEROUPPER
	RET

// func decF32VecAVX2(dst *float32, src *uint8, scales *float32, n int, p *decParams)
TEXT ·decF32VecAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ scales+16(FP), R9
	MOVQ n+24(FP), CX
	MOVQ p+32(FP), R8
	CMPL 16(R8), $0x7E
	JNE dec5v
	DEC4_CONSTS
	DEC4_RUN(SCALE_VEC, STORE_U, R9STEP, dec4vloop, dec4vtail, decvdone)
dec5v:
	DEC5_CONSTS
	DEC5_RUN(SCALE_VEC, STORE_U, R9STEP, dec5vloop, decvdone)
decvdone:
	VZEROUPPER
	RET

// DEC_BLOCKS is the body of decF32BlocksAVX2 and decF32BlocksNTAVX2 after
// the arguments are loaded: block b of blockLen (a multiple of 8) values is
// multiplied by scales[b].
#define DEC_BLOCKS(STORE) \
	CMPL 16(R8), $0x7E \
	JNE dec5b \
	DEC4_CONSTS \
dec4bouter: \
	VBROADCASTSS (R9), Y15 \
	MOVQ R10, CX \
	DEC4_RUN(SCALE_ONE, STORE, NOSTEP, dec4binner, dec4btail, dec4bnext) \
dec4bnext: \
	ADDQ $4, R9 \
	DECQ BX \
	JNZ dec4bouter \
	JMP decbdone \
dec5b: \
	DEC5_CONSTS \
dec5bouter: \
	VBROADCASTSS (R9), Y15 \
	MOVQ R10, CX \
	DEC5_RUN(SCALE_ONE, STORE, NOSTEP, dec5binner, dec5bnext) \
dec5bnext: \
	ADDQ $4, R9 \
	DECQ BX \
	JNZ dec5bouter \
decbdone:

// func decF32BlocksAVX2(dst *float32, src *uint8, scales *float32, nblocks, blockLen int, p *decParams)
TEXT ·decF32BlocksAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ scales+16(FP), R9
	MOVQ nblocks+24(FP), BX
	MOVQ blockLen+32(FP), R10
	MOVQ p+40(FP), R8
	DEC_BLOCKS(STORE_U)
	VZEROUPPER
	RET

// func decF32BlocksNTAVX2(dst *float32, src *uint8, scales *float32, nblocks, blockLen int, p *decParams)
TEXT ·decF32BlocksNTAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ scales+16(FP), R9
	MOVQ nblocks+24(FP), BX
	MOVQ blockLen+32(FP), R10
	MOVQ p+40(FP), R8
	DEC_BLOCKS(STORE_NT)
	SFENCE
	VZEROUPPER
	RET

// AMAX2_FOLD reduces the 8 unsigned lanes of Y0 to AX.
#define AMAX2_FOLD \
	VEXTRACTI128 $1, Y0, X1 \
	VPMAXUD X1, X0, X0 \
	VPSHUFD $0x4E, X0, X1 \
	VPMAXUD X1, X0, X0 \
	VPSHUFD $0xB1, X0, X1 \
	VPMAXUD X1, X0, X0 \
	VMOVD X0, AX

// func absMaxAVX2(src *float32, n int) uint32
// The maximum of the absolute values' bit patterns (see absMaxAVX512).
TEXT ·absMaxAVX2(SB), NOSPLIT, $0-20
	MOVQ src+0(FP), SI
	MOVQ n+8(FP), CX
	BCAST($0x7fffffff, Y14, X14)
	VPXOR Y0, Y0, Y0
amax2loop:
	VPAND (SI), Y14, Y1
	VPMAXUD Y1, Y0, Y0
	ADDQ $32, SI
	SUBQ $8, CX
	JNZ amax2loop
	AMAX2_FOLD
	MOVL AX, ret+16(FP)
	VZEROUPPER
	RET

// func absMaxBlocksAVX2(dst *uint32, src *float32, nblocks, blockLen int)
TEXT ·absMaxBlocksAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ nblocks+16(FP), CX
	MOVQ blockLen+24(FP), R10
	BCAST($0x7fffffff, Y14, X14)
amax2bouter:
	VPXOR Y0, Y0, Y0
	MOVQ R10, DX
amax2binner:
	VPAND (SI), Y14, Y1
	VPMAXUD Y1, Y0, Y0
	ADDQ $32, SI
	SUBQ $8, DX
	JNZ amax2binner
	AMAX2_FOLD
	MOVL AX, (DI)
	ADDQ $4, DI
	DECQ CX
	JNZ amax2bouter
	VZEROUPPER
	RET
