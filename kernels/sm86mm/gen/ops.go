package gen

import "github.com/tcrt-go/tcrt/kernels/internal/sasskit"

// Shorthands for the kit's helpers, as the generator writes them.
var (
	r, imm, cb, rz, pt       = sasskit.R, sasskit.Imm, sasskit.CB, sasskit.RZ, sasskit.PT
	lop3, and, xor, shr, shl = sasskit.LOP3, sasskit.And, sasskit.Xor, sasskit.Shr, sasskit.Shl
	lea, iadd, isetp, sel    = sasskit.LEA, sasskit.IAdd, sasskit.ISETP, sasskit.Sel
	add64, ptr, asmf, log2   = sasskit.Add64, sasskit.Ptr, sasskit.Asmf, sasskit.Log2
)
