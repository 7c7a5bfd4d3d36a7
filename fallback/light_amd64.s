//go:build amd64 && !purego

#include "textflag.h"

// AVX2 and FMA row kernels of the light ops (light_amd64.go). Each takes a
// count n and processes the largest multiple of 8 elements below it; the
// Go wrappers do the tails.

// lightExpK: the ExpF32 constants (see ExpF32), then 127 and the sign bit.
DATA ·lightExpK+0(SB)/4, $0x3fb8aa3b  // log2 e
DATA ·lightExpK+4(SB)/4, $0x4b400000  // 1.5·2^23
DATA ·lightExpK+8(SB)/4, $0x3f318000  // ln 2, high part
DATA ·lightExpK+12(SB)/4, $0xb95e8083 // −(ln 2, low part)
DATA ·lightExpK+16(SB)/4, $0x39506967 // p0
DATA ·lightExpK+20(SB)/4, $0x3ab743ce // p1
DATA ·lightExpK+24(SB)/4, $0x3c088908 // p2
DATA ·lightExpK+28(SB)/4, $0x3d2aa9c1 // p3
DATA ·lightExpK+32(SB)/4, $0x3e2aaaaa // p4
DATA ·lightExpK+36(SB)/4, $0x3f000000 // p5
DATA ·lightExpK+40(SB)/4, $0x3f800000 // 1
DATA ·lightExpK+44(SB)/4, $0xc2aeac4f // below: 0
DATA ·lightExpK+48(SB)/4, $0x42b17217 // above: +Inf
DATA ·lightExpK+52(SB)/4, $0x7f800000 // +Inf
DATA ·lightExpK+56(SB)/4, $0x0000007f // 127
DATA ·lightExpK+60(SB)/4, $0x80000000 // sign bit
GLOBL ·lightExpK(SB), RODATA|NOPTR, $64

// EXPSETUP loads the polynomial into Y6–Y11, 1 into Y12, 127 into Y13.
#define EXPSETUP \
	VBROADCASTSS ·lightExpK+16(SB), Y6; \
	VBROADCASTSS ·lightExpK+20(SB), Y7; \
	VBROADCASTSS ·lightExpK+24(SB), Y8; \
	VBROADCASTSS ·lightExpK+28(SB), Y9; \
	VBROADCASTSS ·lightExpK+32(SB), Y10; \
	VBROADCASTSS ·lightExpK+36(SB), Y11; \
	VBROADCASTSS ·lightExpK+40(SB), Y12; \
	VPBROADCASTD ·lightExpK+56(SB), Y13

// EXP computes Y2 = ExpF32(Y0) lane by lane with ExpF32's operations in
// its order (no fused multiply-adds), so the bits are ExpF32's. It uses
// Y1, Y3, Y4, Y5.
#define EXP \
	VBROADCASTSS ·lightExpK+0(SB), Y1; \
	VMULPS Y1, Y0, Y1; \
	VBROADCASTSS ·lightExpK+4(SB), Y2; \
	VADDPS Y2, Y1, Y1; \
	VSUBPS Y2, Y1, Y3; \
	VPSUBD Y2, Y1, Y1; \
	VBROADCASTSS ·lightExpK+8(SB), Y4; \
	VMULPS Y4, Y3, Y4; \
	VSUBPS Y4, Y0, Y4; \
	VBROADCASTSS ·lightExpK+12(SB), Y5; \
	VMULPS Y5, Y3, Y5; \
	VSUBPS Y5, Y4, Y3; \
	VMULPS Y3, Y6, Y2; \
	VADDPS Y7, Y2, Y2; \
	VMULPS Y3, Y2, Y2; \
	VADDPS Y8, Y2, Y2; \
	VMULPS Y3, Y2, Y2; \
	VADDPS Y9, Y2, Y2; \
	VMULPS Y3, Y2, Y2; \
	VADDPS Y10, Y2, Y2; \
	VMULPS Y3, Y2, Y2; \
	VADDPS Y11, Y2, Y2; \
	VMULPS Y3, Y2, Y2; \
	VMULPS Y3, Y2, Y2; \
	VADDPS Y3, Y2, Y2; \
	VADDPS Y12, Y2, Y2; \
	VPSRAD $1, Y1, Y4; \
	VPSUBD Y4, Y1, Y5; \
	VPADDD Y13, Y4, Y4; \
	VPADDD Y13, Y5, Y5; \
	VPSLLD $23, Y4, Y4; \
	VPSLLD $23, Y5, Y5; \
	VMULPS Y4, Y2, Y2; \
	VMULPS Y5, Y2, Y2; \
	VBROADCASTSS ·lightExpK+44(SB), Y4; \
	VCMPPS $1, Y4, Y0, Y5; \
	VANDNPS Y2, Y5, Y2; \
	VBROADCASTSS ·lightExpK+48(SB), Y4; \
	VCMPPS $0x1e, Y4, Y0, Y5; \
	VBROADCASTSS ·lightExpK+52(SB), Y4; \
	VBLENDVPS Y5, Y4, Y2, Y2; \
	VCMPPS $3, Y0, Y0, Y5; \
	VBLENDVPS Y5, Y0, Y2, Y2

// func lightSumSqAVX2(x *float32, n int) float32
TEXT ·lightSumSqAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
sq32:
	CMPQ CX, $32
	JLT  sq8
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VFMADD231PS Y4, Y4, Y0
	VFMADD231PS Y5, Y5, Y1
	VFMADD231PS Y6, Y6, Y2
	VFMADD231PS Y7, Y7, Y3
	ADDQ $128, SI
	SUBQ $32, CX
	JMP  sq32
sq8:
	CMPQ CX, $8
	JLT  sqdone
	VMOVUPS (SI), Y4
	VFMADD231PS Y4, Y4, Y0
	ADDQ $32, SI
	SUBQ $8, CX
	JMP  sq8
sqdone:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VZEROUPPER
	MOVSS X0, ret+16(FP)
	RET

// func lightAffineAVX2(dst, x, w, b *float32, m, s float32, n int)
// dst = (x − m)·s·w + b (the last two as one fused multiply-add).
TEXT ·lightAffineAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), DX
	MOVQ b+24(FP), BX
	VBROADCASTSS m+32(FP), Y14
	VBROADCASTSS s+36(FP), Y15
	MOVQ n+40(FP), CX
aff:
	CMPQ CX, $8
	JLT  affdone
	VMOVUPS (SI), Y0
	VSUBPS Y14, Y0, Y0
	VMULPS Y15, Y0, Y0
	VMOVUPS (DX), Y2
	VMOVUPS (BX), Y1
	VFMADD213PS Y1, Y2, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, BX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  aff
affdone:
	VZEROUPPER
	RET

// func lightScaleAVX2(dst, x *float32, s float32, n int)
TEXT ·lightScaleAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	VBROADCASTSS s+16(FP), Y15
	MOVQ n+24(FP), CX
scl:
	CMPQ CX, $8
	JLT  scldone
	VMULPS (SI), Y15, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  scl
scldone:
	VZEROUPPER
	RET

// func lightExpSumAVX2(dst, x *float32, m, inv float32, n int) float32
// dst = ExpF32((x − m)·inv); returns the sum of dst (eight lanes).
TEXT ·lightExpSumAVX2(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+24(FP), CX
	EXPSETUP
	VBROADCASTSS m+16(FP), Y15
	VXORPS Y14, Y14, Y14
expl:
	CMPQ CX, $8
	JLT  expdone
	VMOVUPS (SI), Y0
	VSUBPS Y15, Y0, Y0
	VBROADCASTSS inv+20(FP), Y1
	VMULPS Y1, Y0, Y0
	EXP
	VMOVUPS Y2, (DI)
	VADDPS Y2, Y14, Y14
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  expl
expdone:
	VEXTRACTF128 $1, Y14, X1
	VADDPS X1, X14, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VZEROUPPER
	MOVSS X0, ret+32(FP)
	RET

// func lightSiluAVX2(dst, a, b *float32, n int)
// dst = a / (1 + ExpF32(−a)), times b when b is not nil.
TEXT ·lightSiluAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), BX
	MOVQ n+24(FP), CX
	EXPSETUP
	VBROADCASTSS ·lightExpK+60(SB), Y15
silu:
	CMPQ CX, $8
	JLT  siludone
	VMOVUPS (SI), Y14
	VXORPS Y15, Y14, Y0
	EXP
	VADDPS Y12, Y2, Y2
	VDIVPS Y2, Y14, Y2
	TESTQ BX, BX
	JZ    silunob
	VMULPS (BX), Y2, Y2
	ADDQ  $32, BX
silunob:
	VMOVUPS Y2, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  silu
siludone:
	VZEROUPPER
	RET
