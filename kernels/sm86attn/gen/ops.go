package gen

import "github.com/tcrt-go/tcrt/kernels/internal/sasskit"

// Shorthands for the kit's helpers, as the generator writes them.
var (
	r, imm, cb, rz, pt       = sasskit.R, sasskit.Imm, sasskit.CB, sasskit.RZ, sasskit.PT
	lop3, and, xor, shr, shl = sasskit.LOP3, sasskit.And, sasskit.Xor, sasskit.Shr, sasskit.Shl
	lea, iadd, iadd3, mov    = sasskit.LEA, sasskit.IAdd, sasskit.IAdd3, sasskit.Mov
	isetp, imin, imax, fmax  = sasskit.ISETP, sasskit.IMin, sasskit.IMax, sasskit.FMax
	wide, mufu, log2         = sasskit.Wide, sasskit.MUFU, sasskit.Log2
)
