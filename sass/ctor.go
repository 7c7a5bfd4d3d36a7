package sass

// Constructors for the forms kernels use most. Each returns an Inst with no
// guard and a zero control word; chain With (modifiers), When (guard) and
// the control setters (Stall, Yield, WriteSB, ReadSB, Wait, Reuse). Sources
// named src accept a register, an immediate (Imm or F32), a constant (CB) or
// a uniform register where the opcode has that form; Encode reports a form
// that does not exist (ErrNoForm).

// MOV returns MOV d, src.
func MOV(d Reg, src Operand) Inst { return New("MOV", "", R(d), src) }

// S2R returns S2R d, sr.
func S2R(d Reg, sr SpecialReg) Inst { return New("S2R", "", R(d), SR(sr)) }

// CS2R returns CS2R d, sr (a 64-bit read: d, d+1); With("32") for CS2R.32.
func CS2R(d Reg, sr SpecialReg) Inst { return New("CS2R", "", R(d), SR(sr)) }

// ULDC64 returns ULDC.64 u, c[bank][off].
func ULDC64(u UReg, bank uint8, off int64) Inst { return New("ULDC", "64", UR(u), CB(bank, off)) }

// IMAD returns IMAD d, a, b, c (32-bit d = a*b + c).
func IMAD(d, a Reg, b, c Operand) Inst { return New("IMAD", "", R(d), R(a), b, c) }

// IMADWideU32 returns IMAD.WIDE.U32 d, a, b, c (d:d+1 = a*b + c:c+1).
func IMADWideU32(d, a Reg, b, c Operand) Inst { return New("IMAD", "WIDE.U32", R(d), R(a), b, c) }

// IADD3 returns IADD3 d, a, b, c.
func IADD3(d Reg, a, b, c Operand) Inst { return New("IADD3", "", R(d), a, b, c) }

// SHF returns SHF.<dir>.<typ>[.HI] d, a, shift, c: mods e.g. "R.U32.HI".
func SHF(mods string, d, a Reg, shift, c Operand) Inst { return New("SHF", mods, R(d), R(a), shift, c) }

// LOP3 returns LOP3.LUT d, a, b, c, lut, !PT.
func LOP3(d, a Reg, b, c Operand, lut uint8) Inst {
	return New("LOP3", "LUT", R(d), R(a), b, c, Imm(int64(lut)), NotP(PT))
}

// FFMA returns FFMA d, a, b, c.
func FFMA(d, a Reg, b, c Operand) Inst { return New("FFMA", "", R(d), R(a), b, c) }

// FADD returns FADD d, a, b.
func FADD(d Reg, a, b Operand) Inst { return New("FADD", "", R(d), a, b) }

// FMUL returns FMUL d, a, b.
func FMUL(d Reg, a, b Operand) Inst { return New("FMUL", "", R(d), a, b) }

// MUFU returns MUFU.<fn> d, a (fn: EX2, RCP, RSQ, LG2, SIN, COS, SQRT, TANH).
func MUFU(fn string, d, a Reg) Inst { return New("MUFU", fn, R(d), R(a)) }

// HMMA16816F32 returns HMMA.16816.F32 d, a, b, c (bf16 true: .BF16).
func HMMA16816F32(d, a, b, c Reg, bf16 bool) Inst {
	i := New("HMMA", "16816.F32", R(d), R(a), R(b), R(c))
	if bf16 {
		i = i.With("BF16")
	}
	return i
}

// LDG returns LDG.E[.size] d, [a.64+off] (size "", "64", "128", "U8", ...).
func LDG(size string, d, a Reg, off int64) Inst {
	return New("LDG", join("E", size), R(d), G64(a, off))
}

// STG returns STG.E[.size] [a.64+off], v.
func STG(size string, a Reg, off int64, v Reg) Inst {
	return New("STG", join("E", size), G64(a, off), R(v))
}

// LDS returns LDS[.size] d, [a.X<scale>+off].
func LDS(size string, d, a Reg, scale uint8, off int64) Inst {
	return New("LDS", size, R(d), Shared(a, scale, off))
}

// STS returns STS[.size] [a.X<scale>+off], v.
func STS(size string, a Reg, scale uint8, off int64, v Reg) Inst {
	return New("STS", size, Shared(a, scale, off), R(v))
}

// LDSM returns LDSM.16.M88[.n] (or .MT88 when trans) d, [a+off]; n is 1, 2 or 4.
func LDSM(n int, trans bool, d, a Reg, off int64) Inst {
	m := "16.M88"
	if trans {
		m = "16.MT88"
	}
	switch n {
	case 2:
		m += ".2"
	case 4:
		m += ".4"
	}
	return New("LDSM", m, R(d), Operand{Kind: KMem, N: uint8(a), Imm: off})
}

// LDGSTS128 returns LDGSTS.E.BYPASS.128 [s+soff], [g.64+goff].
func LDGSTS128(s Reg, soff int64, g Reg, goff int64) Inst {
	return New("LDGSTS", "E.BYPASS.128", Operand{Kind: KMem, N: uint8(s), Imm: soff}, G64(g, goff))
}

// LDGDEPBAR returns LDGDEPBAR (set its write scoreboard with WriteSB).
func LDGDEPBAR() Inst { return New("LDGDEPBAR", "") }

// DEPBARLE returns DEPBAR.LE SB<sb>, n.
func DEPBARLE(sb uint8, n int64) Inst { return New("DEPBAR", "LE", SB(sb), Imm(n)) }

// BARSync returns BAR.SYNC id.
func BARSync(id int64) Inst { return New("BAR", "SYNC", Imm(id)) }

// BARSyncCount returns BAR.SYNC id, threads (named barrier).
func BARSyncCount(id, threads int64) Inst { return New("BAR", "SYNC", Imm(id), Imm(threads)) }

// SHFL returns SHFL.<mode> PT, d, a, lane, clamp (mode IDX, UP, DOWN, BFLY;
// lane and clamp registers or immediates).
func SHFL(mode string, d, a Reg, lane, clamp Operand) Inst {
	return New("SHFL", mode, P(PT), R(d), R(a), lane, clamp)
}

// REDAddF32 returns RED.E.ADD.F32.FTZ.RN.STRONG.GPU [a.64+off], v.
func REDAddF32(a Reg, off int64, v Reg) Inst {
	return New("RED", "E.ADD.F32.FTZ.RN.STRONG.GPU", G64(a, off), R(v))
}

// ISETP returns ISETP.<cmp>[.U32].AND p, PT, a, b, PT (mods e.g. "GT.U32.AND").
func ISETP(mods string, p Pred, a Reg, b Operand) Inst {
	return New("ISETP", mods, P(p), P(PT), R(a), b, P(PT))
}

// BRA returns BRA to offset bytes after the next instruction.
func BRA(offset int64) Inst { return New("BRA", "", Target(offset)) }

// EXIT returns EXIT.
func EXIT() Inst { return New("EXIT", "") }

// NOP returns NOP.
func NOP() Inst { return New("NOP", "") }

func join(a, b string) string {
	if b == "" {
		return a
	}
	return a + "." + b
}
