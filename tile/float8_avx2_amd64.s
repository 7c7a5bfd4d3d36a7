#include "textflag.h"

// AVX2 float8 kernels: the algorithm of float8_fast.go eight lanes at a time
// (the AVX-512 kernels in float8_amd64.s do sixteen). n is a positive
// multiple of 8. AVX2 has only signed dword compares; every compared value
// is below 2^31 (|x| bits, codes), so they order as unsigned ones would.

// pack8 moves byte 0 of each dword of a 128-bit lane to bytes 0-3.
DATA pack8<>+0(SB)/8, $0x808080800c080400
DATA pack8<>+8(SB)/8, $0x8080808080808080
DATA pack8<>+16(SB)/8, $0x808080800c080400
DATA pack8<>+24(SB)/8, $0x8080808080808080
GLOBL pack8<>(SB), RODATA|NOPTR, $32

#define BCAST(imm, reg, x) \
	MOVL imm, AX \
	MOVD AX, x \
	VPBROADCASTD x, reg

// Encode constants from the encParams at R8; Y15 (scale) is the caller's.
#define ENC2_CONSTS \
	BCAST($0x7fffffff, Y14, X14) \
	VPBROADCASTD 0(R8), Y13 \
	VPBROADCASTD 4(R8), Y12 \
	VPBROADCASTD 8(R8), Y11 \
	VPBROADCASTD 12(R8), Y10 \
	VPBROADCASTD 16(R8), Y9 \
	VPBROADCASTD 20(R8), Y8 \
	VPBROADCASTD 24(R8), Y7 \
	VPBROADCASTD 28(R8), Y6 \
	BCAST($0x7f800000, Y5, X5)

// ENC2_BODY encodes the 8 float32 values in Y0 into 8 bytes at (DI).
#define ENC2_BODY \
	VPAND Y14, Y0, Y1 \
	VPSRLD $31, Y0, Y2 \
	VPSLLD $7, Y2, Y2 \
	VPSRLVD Y12, Y1, Y3 \
	VPSLLD $31, Y3, Y3 \
	VPSRLD $31, Y3, Y3 \
	VPADDD Y1, Y3, Y3 \
	VPADDD Y13, Y3, Y3 \
	VPSRLVD Y12, Y3, Y3 \
	VPSUBD Y11, Y3, Y3 \
	VADDPS Y9, Y1, Y4 \
	VPSUBD Y9, Y4, Y4 \
	VPCMPGTD Y1, Y10, Y0 \
	VPBLENDVB Y0, Y4, Y3, Y3 \
	VPCMPGTD Y8, Y3, Y0 \
	VPBLENDVB Y0, Y6, Y3, Y3 \
	VPCMPGTD Y5, Y1, Y0 \
	VPBLENDVB Y0, Y7, Y3, Y3 \
	VPOR Y2, Y3, Y3 \
	VPSHUFB pack8<>(SB), Y3, Y3 \
	VEXTRACTI128 $1, Y3, X4 \
	VPUNPCKLDQ X4, X3, X3 \
	VMOVQ X3, (DI)

// func encF32AVX2(dst *uint8, src *float32, n int, scale float32, p *encParams)
TEXT ·encF32AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS scale+24(FP), Y15
	MOVQ p+32(FP), R8
	ENC2_CONSTS
enc2loop:
	VMULPS (SI), Y15, Y0
	ENC2_BODY
	ADDQ $32, SI
	ADDQ $8, DI
	SUBQ $8, CX
	JNZ enc2loop
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
enc2vloop:
	VMOVUPS (R9), Y15
	VMULPS (SI), Y15, Y0
	ENC2_BODY
	ADDQ $32, SI
	ADDQ $32, R9
	ADDQ $8, DI
	SUBQ $8, CX
	JNZ enc2vloop
	VZEROUPPER
	RET

// func encF32BlocksAVX2(dst *uint8, src, scales *float32, nblocks, blockLen int, p *encParams)
// Block b of blockLen (a multiple of 8) values is multiplied by scales[b].
TEXT ·encF32BlocksAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ scales+16(FP), R9
	MOVQ nblocks+24(FP), CX
	MOVQ blockLen+32(FP), R10
	MOVQ p+40(FP), R8
	ENC2_CONSTS
enc2bouter:
	VBROADCASTSS (R9), Y15
	MOVQ R10, DX
enc2binner:
	VMULPS (SI), Y15, Y0
	ENC2_BODY
	ADDQ $32, SI
	ADDQ $8, DI
	SUBQ $8, DX
	JNZ enc2binner
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

// Constants of DEC4_BODY: Y12 = 256.0, X13 = 0xBFFF, X11 = 0x7FFF,
// X10 = 0x3F80 (E4M3 0x7F after the shift), X9 = 0x3F80^0x7E00 (words).
#define DEC4_CONSTS \
	BCAST($0x43800000, Y12, X12) \
	MOVL $0xBFFFBFFF, AX \
	MOVD AX, X13 \
	VPBROADCASTD X13, X13 \
	MOVL $0x7FFF7FFF, AX \
	MOVD AX, X11 \
	VPBROADCASTD X11, X11 \
	MOVL $0x3F803F80, AX \
	MOVD AX, X10 \
	VPBROADCASTD X10, X10 \
	MOVL $0x41804180, AX \
	MOVD AX, X9 \
	VPBROADCASTD X9, X9

// DEC4_BODY decodes the 8 E4M3 codes at off(SI) into float32 in Y1.
#define DEC4_BODY(off) \
	VPMOVSXBW off(SI), X0 \
	VPSLLW $7, X0, X0 \
	VPAND X13, X0, X0 \
	VPAND X11, X0, X2 \
	VPCMPEQW X10, X2, X2 \
	VPAND X9, X2, X2 \
	VPXOR X2, X0, X0 \
	VCVTPH2PS X0, Y1 \
	VMULPS Y12, Y1, Y1

// Constants of DEC5_BODY: X14 = 0, Y13 = 0xFFC00000.
#define DEC5_CONSTS \
	VPXOR X14, X14, X14 \
	BCAST($0xFFC00000, Y13, X13)

// DEC5_BODY decodes the 8 E5M2 codes at off(SI) into float32 in Y1: NaNs
// (unordered with themselves) keep their sign and quiet bit only.
#define DEC5_BODY(off) \
	VMOVQ off(SI), X0 \
	VPUNPCKLBW X0, X14, X0 \
	VCVTPH2PS X0, Y1 \
	VCMPPS $3, Y1, Y1, Y2 \
	VANDPS Y13, Y1, Y3 \
	VBLENDVPS Y2, Y3, Y1, Y1

// func decF32AVX2(dst *float32, src *uint8, n int, scale float32, p *decParams)
TEXT ·decF32AVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS scale+24(FP), Y15
	MOVQ p+32(FP), R8
	CMPL 16(R8), $0x7E
	JNE dec5
	DEC4_CONSTS
dec4loop:
	DEC4_BODY(0)
	VMULPS Y15, Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $8, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ dec4loop
	VZEROUPPER
	RET
dec5:
	DEC5_CONSTS
dec5loop:
	DEC5_BODY(0)
	VMULPS Y15, Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $8, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ dec5loop
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
dec4vloop:
	DEC4_BODY(0)
	VMULPS (R9), Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $8, SI
	ADDQ $32, R9
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ dec4vloop
	VZEROUPPER
	RET
dec5v:
	DEC5_CONSTS
dec5vloop:
	DEC5_BODY(0)
	VMULPS (R9), Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $8, SI
	ADDQ $32, R9
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ dec5vloop
	VZEROUPPER
	RET

// func decF32BlocksAVX2(dst *float32, src *uint8, scales *float32, nblocks, blockLen int, p *decParams)
TEXT ·decF32BlocksAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ scales+16(FP), R9
	MOVQ nblocks+24(FP), CX
	MOVQ blockLen+32(FP), R10
	MOVQ p+40(FP), R8
	CMPL 16(R8), $0x7E
	JNE dec5b
	DEC4_CONSTS
dec4bouter:
	VBROADCASTSS (R9), Y15
	MOVQ R10, DX
dec4binner:
	DEC4_BODY(0)
	VMULPS Y15, Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $8, SI
	ADDQ $32, DI
	SUBQ $8, DX
	JNZ dec4binner
	ADDQ $4, R9
	DECQ CX
	JNZ dec4bouter
	VZEROUPPER
	RET
dec5b:
	DEC5_CONSTS
dec5bouter:
	VBROADCASTSS (R9), Y15
	MOVQ R10, DX
dec5binner:
	DEC5_BODY(0)
	VMULPS Y15, Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $8, SI
	ADDQ $32, DI
	SUBQ $8, DX
	JNZ dec5binner
	ADDQ $4, R9
	DECQ CX
	JNZ dec5bouter
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
