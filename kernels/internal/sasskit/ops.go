package sasskit

import (
	"fmt"

	"github.com/tcrt-go/tcrt/sass"
)

// Operands. Registers are given as ints (register maps are int constants).
var (
	RZ  = sass.R(sass.RZ)
	PT  = sass.P(sass.PT)
	NPT = sass.NotP(sass.PT)
)

// R is general register n.
func R(n int) sass.Operand { return sass.R(sass.Reg(n)) }

// Imm is the immediate v.
func Imm(v int64) sass.Operand { return sass.Imm(v) }

// CB is the constant-bank-0 operand c[0x0][off] (kernel parameters start
// at cubin.ParamBase).
func CB(off int64) sass.Operand { return sass.CB(0, off) }

// LOP3 is d = lut(a, b, RZ).
func LOP3(d, a int, b sass.Operand, lut int64) sass.Inst {
	return sass.New("LOP3", "LUT", R(d), R(a), b, RZ, Imm(lut), NPT)
}

// And is d = a & m.
func And(d, a int, m int64) sass.Inst { return LOP3(d, a, Imm(m), 0xc0) }

// Xor is d = a ^ b.
func Xor(d, a int, b sass.Operand) sass.Inst { return LOP3(d, a, b, 0x3c) }

// Shr is d = a >> n (unsigned).
func Shr(d, a int, n int64) sass.Inst { return sass.New("SHF", "R.U32.HI", R(d), RZ, Imm(n), R(a)) }

// Shl is d = a << n.
func Shl(d, a int, n int64) sass.Inst { return sass.New("SHF", "L.U32", R(d), R(a), Imm(n), RZ) }

// LEA is d = (a << sh) + b.
func LEA(d, a int, b sass.Operand, sh int64) sass.Inst {
	return sass.New("LEA", "", R(d), R(a), b, Imm(sh))
}

// IAdd is d = a + b.
func IAdd(d int, a, b sass.Operand) sass.Inst { return sass.New("IADD3", "", R(d), a, b, RZ) }

// IAdd3 is d = a + b + c; an immediate c is swapped into the B slot (the
// only one that takes it).
func IAdd3(d int, a, b, c sass.Operand) sass.Inst {
	if c.Kind == sass.KImm {
		b, c = c, b
	}
	return sass.New("IADD3", "", R(d), a, b, c)
}

// Mov is d = a.
func Mov(d int, a sass.Operand) sass.Inst { return sass.New("MOV", "", R(d), a) }

// ISETP sets predicate p to (a cmp b) AND comb; cmp is a comparison with
// its type (e.g. "GE.U32").
func ISETP(cmp string, p sass.Pred, a int, b sass.Operand, comb sass.Operand) sass.Inst {
	return sass.New("ISETP", cmp+".AND", sass.P(p), PT, R(a), b, comb)
}

// Sel is d = p ? a : b.
func Sel(d int, a, b sass.Operand, p sass.Pred) sass.Inst {
	return sass.New("SEL", "", R(d), a, b, sass.P(p))
}

// IMin is d = min(a, b) (signed).
func IMin(d int, a, b sass.Operand) sass.Inst { return sass.New("IMNMX", "", R(d), a, b, PT) }

// IMax is d = max(a, b) (signed).
func IMax(d int, a, b sass.Operand) sass.Inst { return sass.New("IMNMX", "", R(d), a, b, NPT) }

// FMax is d = max(a, b) (f32).
func FMax(d, a, b int) sass.Inst { return sass.New("FMNMX", "", R(d), R(a), R(b), NPT) }

// Wide is the pair d = a·b + c (IMAD.WIDE.U32; c a pair).
func Wide(d, a int, b sass.Operand, c int) sass.Inst {
	return sass.New("IMAD", "WIDE.U32", R(d), R(a), b, R(c))
}

// MUFU is d = fn(a) (the multi-function unit: EX2, RCP, TANH, ...).
func MUFU(fn string, d, a int) sass.Inst { return sass.New("MUFU", fn, R(d), R(a)) }

// Add64 adds b (an immediate or register) to the pointer pair at p, with
// carry predicate c.
func Add64(p int, b sass.Operand, c sass.Pred) []sass.Inst {
	return []sass.Inst{
		sass.New("IADD3", "", R(p), sass.P(c), R(p), b, RZ),
		sass.New("IADD3", "X", R(p+1), RZ, R(p+1), RZ, sass.P(c), NPT),
	}
}

// Ptr sets the pair p to the 64-bit parameter at bank offset at plus
// off << shift (off an unsigned 32-bit element offset), with carry
// predicate c.
func Ptr(p, off int, at int64, shift int64, c sass.Pred) []sass.Inst {
	return []sass.Inst{
		sass.New("LEA", "", R(p), sass.P(c), R(off), CB(at), Imm(shift)),
		sass.New("LEA", "HI.X", R(p+1), R(off), CB(at+4), RZ, Imm(shift), sass.P(c)),
	}
}

// Asm parses one instruction of the model's text form; generators pass
// fixed text, so an error is a bug and panics.
func Asm(s string) sass.Inst {
	i, err := sass.ParseInst(s, 0)
	if err != nil {
		panic(fmt.Sprintf("sasskit: %q: %v", s, err))
	}
	return i
}

// Asmf is Asm of a formatted string.
func Asmf(format string, a ...any) sass.Inst { return Asm(fmt.Sprintf(format, a...)) }

// Waits is the wait mask (sass.Control.Wait) of scoreboards sbs, each
// 0..5.
func Waits(sbs ...int) uint8 {
	var m uint8
	for _, s := range sbs {
		m |= 1 << s
	}
	return m
}

// Log2 is the base-2 logarithm of n rounded up (exact for powers of two).
func Log2(n int) int64 {
	k := int64(0)
	for 1<<k < n {
		k++
	}
	return k
}
