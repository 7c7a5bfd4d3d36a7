// Non-temporal row copy of the row gather (see gather_nt_amd64.go).

//go:build amd64 && !purego

#include "textflag.h"

// func copyRowsNT(dst unsafe.Pointer, dstStride int, mem unsafe.Pointer, rb int, pos *int, n int, ahead int)
// For r in [0, n): copies the rb bytes at mem + pos[r]·rb to dst + r·dstStride
// with non-temporal 32-byte stores (zeros when pos[r] < 0), prefetching the
// row of pos[r+ahead]. rb is a positive multiple of 64 and every destination
// row is 64-byte aligned. Ends with SFENCE.
TEXT ·copyRowsNT(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ dstStride+8(FP), R8
	MOVQ mem+16(FP), SI
	MOVQ rb+24(FP), R9
	MOVQ pos+32(FP), R10
	MOVQ n+40(FP), R11
	MOVQ ahead+48(FP), R12
	XORQ R13, R13             // r
	VPXOR Y4, Y4, Y4
row:
	CMPQ R13, R11
	JGE  done
	// prefetch row pos[r+ahead]
	LEAQ (R13)(R12*1), AX
	CMPQ AX, R11
	JGE  nopf
	MOVQ (R10)(AX*8), AX
	TESTQ AX, AX
	JS   nopf
	IMULQ R9, AX
	ADDQ SI, AX
	MOVQ R9, CX
pf:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	SUBQ $64, CX
	JG   pf
nopf:
	MOVQ R13, DX
	IMULQ R8, DX
	ADDQ DI, DX               // dst row
	MOVQ (R10)(R13*8), AX
	MOVQ R9, CX
	TESTQ AX, AX
	JS   zero
	IMULQ R9, AX
	ADDQ SI, AX               // src row
	CMPQ CX, $128
	JL   tail
loop128:
	VMOVDQU 0(AX), Y0
	VMOVDQU 32(AX), Y1
	VMOVDQU 64(AX), Y2
	VMOVDQU 96(AX), Y3
	VMOVNTDQ Y0, 0(DX)
	VMOVNTDQ Y1, 32(DX)
	VMOVNTDQ Y2, 64(DX)
	VMOVNTDQ Y3, 96(DX)
	ADDQ $128, AX
	ADDQ $128, DX
	SUBQ $128, CX
	CMPQ CX, $128
	JGE  loop128
tail:
	TESTQ CX, CX
	JZ   next
	VMOVDQU 0(AX), Y0
	VMOVDQU 32(AX), Y1
	VMOVNTDQ Y0, 0(DX)
	VMOVNTDQ Y1, 32(DX)
	JMP  next
zero:
	VMOVNTDQ Y4, 0(DX)
	VMOVNTDQ Y4, 32(DX)
	ADDQ $64, DX
	SUBQ $64, CX
	JG   zero
next:
	INCQ R13
	JMP  row
done:
	SFENCE
	VZEROUPPER
	RET
