#include "textflag.h"

// AVX-512 float8 kernels. n is a positive multiple of 16. The algorithm is
// the one described in float8_fast.go, sixteen lanes at a time.

// Loads the encode constants: Z16 scale is set by the caller's prologue.
#define ENC_CONSTS \
	MOVL $0x7fffffff, AX \
	VPBROADCASTD AX, Z17 \
	MOVL $1, AX \
	VPBROADCASTD AX, Z18 \
	VPBROADCASTD 0(R8), Z19 \
	VPBROADCASTD 4(R8), Z20 \
	VPBROADCASTD 8(R8), Z21 \
	VPBROADCASTD 12(R8), Z22 \
	VPBROADCASTD 16(R8), Z23 \
	VPBROADCASTD 20(R8), Z24 \
	VPBROADCASTD 24(R8), Z25 \
	VPBROADCASTD 28(R8), Z26 \
	MOVL $0x7f800000, AX \
	VPBROADCASTD AX, Z27 \
	MOVL $0x80, AX \
	VPBROADCASTD AX, Z28

// ENC_BODY encodes the 16 float32 values in Z0 into 16 bytes at (DI).
#define ENC_BODY \
	VPANDD Z17, Z0, Z1 \
	VPSRLD $24, Z0, Z2 \
	VPANDD Z28, Z2, Z2 \
	VPSRLVD Z20, Z1, Z3 \
	VPANDD Z18, Z3, Z3 \
	VPADDD Z1, Z3, Z3 \
	VPADDD Z19, Z3, Z3 \
	VPSRLVD Z20, Z3, Z3 \
	VPSUBD Z21, Z3, Z3 \
	VADDPS Z23, Z1, Z4 \
	VPSUBD Z23, Z4, Z4 \
	VPCMPUD $1, Z22, Z1, K1 \
	VMOVDQA32 Z4, K1, Z3 \
	VPCMPUD $6, Z24, Z3, K2 \
	VMOVDQA32 Z26, K2, Z3 \
	VPCMPUD $6, Z27, Z1, K3 \
	VMOVDQA32 Z25, K3, Z3 \
	VPORD Z2, Z3, Z3 \
	VPMOVDB Z3, (DI)

// func encF32AVX512(dst *uint8, src *float32, n int, scale float32, p *encParams)
TEXT ·encF32AVX512(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS scale+24(FP), Z16
	MOVQ p+32(FP), R8
	ENC_CONSTS
encloop:
	VMULPS (SI), Z16, Z0
	ENC_BODY
	ADDQ $64, SI
	ADDQ $16, DI
	SUBQ $16, CX
	JNZ encloop
	VZEROUPPER
	RET

// func encF32VecAVX512(dst *uint8, src, scales *float32, n int, p *encParams)
TEXT ·encF32VecAVX512(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ scales+16(FP), R9
	MOVQ n+24(FP), CX
	MOVQ p+32(FP), R8
	ENC_CONSTS
encvloop:
	VMOVUPS (R9), Z16
	VMULPS (SI), Z16, Z0
	ENC_BODY
	ADDQ $64, SI
	ADDQ $64, R9
	ADDQ $16, DI
	SUBQ $16, CX
	JNZ encvloop
	VZEROUPPER
	RET

#define DEC_CONSTS \
	MOVL $0x7f, AX \
	VPBROADCASTD AX, Z17 \
	MOVL $0x80, AX \
	VPBROADCASTD AX, Z28 \
	VPBROADCASTD 0(R8), Z20 \
	VPBROADCASTD 4(R8), Z21 \
	VPBROADCASTD 8(R8), Z22 \
	VPBROADCASTD 12(R8), Z23 \
	VPBROADCASTD 16(R8), Z24 \
	VPBROADCASTD 20(R8), Z26 \
	MOVL $0x7fc00000, AX \
	VPBROADCASTD AX, Z25 \
	MOVL $0x7f800000, AX \
	VPBROADCASTD AX, Z27

// DEC_BODY decodes the 16 bytes at (SI) into float32 bits in Z3.
#define DEC_BODY \
	VPMOVZXBD (SI), Z0 \
	VPANDD Z17, Z0, Z1 \
	VPANDD Z28, Z0, Z2 \
	VPSLLD $24, Z2, Z2 \
	VPSLLVD Z20, Z1, Z3 \
	VPADDD Z21, Z3, Z3 \
	VCVTDQ2PS Z1, Z4 \
	VMULPS Z22, Z4, Z4 \
	VPCMPUD $1, Z23, Z1, K1 \
	VMOVDQA32 Z4, K1, Z3 \
	VPCMPUD $6, Z24, Z1, K2 \
	VMOVDQA32 Z25, K2, Z3 \
	VPCMPEQD Z26, Z1, K3 \
	VMOVDQA32 Z27, K3, Z3 \
	VPORD Z2, Z3, Z3

// func decF32AVX512(dst *float32, src *uint8, n int, scale float32, p *decParams)
TEXT ·decF32AVX512(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS scale+24(FP), Z16
	MOVQ p+32(FP), R8
	DEC_CONSTS
decloop:
	DEC_BODY
	VMULPS Z16, Z3, Z3
	VMOVUPS Z3, (DI)
	ADDQ $16, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JNZ decloop
	VZEROUPPER
	RET

// func decF32VecAVX512(dst *float32, src *uint8, scales *float32, n int, p *decParams)
TEXT ·decF32VecAVX512(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ scales+16(FP), R9
	MOVQ n+24(FP), CX
	MOVQ p+32(FP), R8
	DEC_CONSTS
decvloop:
	DEC_BODY
	VMULPS (R9), Z3, Z3
	VMOVUPS Z3, (DI)
	ADDQ $16, SI
	ADDQ $64, R9
	ADDQ $64, DI
	SUBQ $16, CX
	JNZ decvloop
	VZEROUPPER
	RET

// func absMaxAVX512(src *float32, n int) uint32
// The maximum of the absolute values' bit patterns: for non-negative
// floats the integer order is the numeric order, and NaNs sort above Inf.
TEXT ·absMaxAVX512(SB), NOSPLIT, $0-20
	MOVQ src+0(FP), SI
	MOVQ n+8(FP), CX
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z17
	VPXORD Z0, Z0, Z0
amaxloop:
	VPANDD (SI), Z17, Z1
	VPMAXUD Z1, Z0, Z0
	ADDQ $64, SI
	SUBQ $16, CX
	JNZ amaxloop
	VEXTRACTI64X4 $1, Z0, Y1
	VPMAXUD Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPMAXUD X1, X0, X0
	VPSHUFD $0x4E, X0, X1
	VPMAXUD X1, X0, X0
	VPSHUFD $0xB1, X0, X1
	VPMAXUD X1, X0, X0
	VMOVD X0, AX
	MOVL AX, ret+16(FP)
	VZEROUPPER
	RET

// func encF32BlocksAVX512(dst *uint8, src, scales *float32, nblocks, blockLen int, p *encParams)
// Block b of blockLen (a multiple of 16) values is multiplied by scales[b].
TEXT ·encF32BlocksAVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ scales+16(FP), R9
	MOVQ nblocks+24(FP), CX
	MOVQ blockLen+32(FP), R10
	MOVQ p+40(FP), R8
	ENC_CONSTS
encbouter:
	VBROADCASTSS (R9), Z16
	MOVQ R10, DX
encbinner:
	VMULPS (SI), Z16, Z0
	ENC_BODY
	ADDQ $64, SI
	ADDQ $16, DI
	SUBQ $16, DX
	JNZ encbinner
	ADDQ $4, R9
	DECQ CX
	JNZ encbouter
	VZEROUPPER
	RET

// func decF32BlocksAVX512(dst *float32, src *uint8, scales *float32, nblocks, blockLen int, p *decParams)
TEXT ·decF32BlocksAVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ scales+16(FP), R9
	MOVQ nblocks+24(FP), CX
	MOVQ blockLen+32(FP), R10
	MOVQ p+40(FP), R8
	DEC_CONSTS
decbouter:
	VBROADCASTSS (R9), Z16
	MOVQ R10, DX
decbinner:
	DEC_BODY
	VMULPS Z16, Z3, Z3
	VMOVUPS Z3, (DI)
	ADDQ $16, SI
	ADDQ $64, DI
	SUBQ $16, DX
	JNZ decbinner
	ADDQ $4, R9
	DECQ CX
	JNZ decbouter
	VZEROUPPER
	RET

// func absMaxBlocksAVX512(dst *uint32, src *float32, nblocks, blockLen int)
TEXT ·absMaxBlocksAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ nblocks+16(FP), CX
	MOVQ blockLen+24(FP), R10
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z17
amaxbouter:
	VPXORD Z0, Z0, Z0
	MOVQ R10, DX
amaxbinner:
	VPANDD (SI), Z17, Z1
	VPMAXUD Z1, Z0, Z0
	ADDQ $64, SI
	SUBQ $16, DX
	JNZ amaxbinner
	VEXTRACTI64X4 $1, Z0, Y1
	VPMAXUD Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPMAXUD X1, X0, X0
	VPSHUFD $0x4E, X0, X1
	VPMAXUD X1, X0, X0
	VPSHUFD $0xB1, X0, X1
	VPMAXUD X1, X0, X0
	VMOVD X0, AX
	MOVL AX, (DI)
	ADDQ $4, DI
	DECQ CX
	JNZ amaxbouter
	VZEROUPPER
	RET
