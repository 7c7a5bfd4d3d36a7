package sass

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tcrt-go/tcrt/tile"
)

// Reg is a general register R0..R254; RZ (255) reads as zero and discards writes.
type Reg uint8

// RZ is the zero register.
const RZ Reg = 255

// String returns "R<n>" or "RZ".
func (r Reg) String() string {
	if r == RZ {
		return "RZ"
	}
	return "R" + strconv.Itoa(int(r))
}

// Pred is a predicate register P0..P6; PT (7) is always true.
type Pred uint8

// Predicate registers.
const (
	P0 Pred = iota
	P1
	P2
	P3
	P4
	P5
	P6
	PT
)

// String returns "P<n>" or "PT".
func (p Pred) String() string {
	if p == PT {
		return "PT"
	}
	return "P" + strconv.Itoa(int(p))
}

// UReg is a uniform register UR0..UR62; URZ (63) reads as zero.
type UReg uint8

// URZ is the uniform zero register.
const URZ UReg = 63

// String returns "UR<n>" or "URZ".
func (u UReg) String() string {
	if u == URZ {
		return "URZ"
	}
	return "UR" + strconv.Itoa(int(u))
}

// UPred is a uniform predicate UP0..UP6; UPT (7) is always true.
type UPred uint8

// UPT is the always-true uniform predicate.
const UPT UPred = 7

// String returns "UP<n>" or "UPT".
func (p UPred) String() string {
	if p == UPT {
		return "UPT"
	}
	return "UP" + strconv.Itoa(int(p))
}

// SpecialReg is a special register read by S2R or CS2R (SR_TID.X, ...).
type SpecialReg uint8

// Special registers (numbers as the 8-bit field of S2R holds them).
const (
	SRLaneID        SpecialReg = 0x00
	SRClock         SpecialReg = 0x50 // SR_CLOCKLO
	SRClockHi       SpecialReg = 0x51 // SR_CLOCKHI
	SRGlobalTimerLo SpecialReg = 0x52
	SRGlobalTimerHi SpecialReg = 0x53
	SRTidX          SpecialReg = 0x21
	SRTidY          SpecialReg = 0x22
	SRTidZ          SpecialReg = 0x23
	SRCtaidX        SpecialReg = 0x25
	SRCtaidY        SpecialReg = 0x26
	SRCtaidZ        SpecialReg = 0x27
	SRZero          SpecialReg = 0xff // SRZ
)

// srNames holds the special register names nvdisasm -b SM86 prints (S2R
// R28, SR<n> for every n, CUDA 11.8; it spells 0x14 SM_SHADER_TYPE);
// numbers absent from it are refused.
var srNames = map[SpecialReg]string{
	0x00: "SR_LANEID", 0x01: "SR_CLOCK", 0x02: "SR_VIRTCFG", 0x03: "SR_VIRTID", 0x0f: "SR_ORDERING_TICKET",
	0x10: "SR_PRIM_TYPE", 0x11: "SR_INVOCATION_ID", 0x12: "SR_Y_DIRECTION", 0x13: "SR_THREAD_KILL",
	0x14: "SM_SHADER_TYPE", 0x15: "SR_DIRECTCBEWRITEADDRESSLOW", 0x16: "SR_DIRECTCBEWRITEADDRESSHIGH",
	0x17: "SR_DIRECTCBEWRITEENABLED", 0x18: "SR_SW_SCRATCH", 0x19: "SR_MACHINE_ID_1", 0x1a: "SR_MACHINE_ID_2",
	0x1b: "SR_MACHINE_ID_3", 0x1c: "SR_AFFINITY", 0x1d: "SR_INVOCATION_INFO", 0x1e: "SR_WSCALEFACTOR_XY",
	0x1f: "SR_WSCALEFACTOR_Z", 0x20: "SR_TID", 0x21: "SR_TID.X", 0x22: "SR_TID.Y", 0x23: "SR_TID.Z",
	0x25: "SR_CTAID.X", 0x26: "SR_CTAID.Y", 0x27: "SR_CTAID.Z", 0x28: "SR_NTID", 0x29: "SR_C", 0x2a: "SR_NLATC",
	0x2c: "SR_SM_SPA_VERSION", 0x2d: "SR_MULTIPASSSHADERINFO", 0x2e: "SR_LWINHI", 0x2f: "SR_SWINHI",
	0x30: "SR_SWINLO", 0x31: "SR_SWINSZ", 0x32: "SR_SMEMSZ", 0x33: "SR_SMEMBANKS", 0x34: "SR_LWINLO",
	0x35: "SR_LWINSZ", 0x36: "SR_LMEMLOSZ", 0x37: "SR_LMEMHIOFF", 0x38: "SR_EQMASK", 0x39: "SR_LTMASK",
	0x3a: "SR_LEMASK", 0x3b: "SR_GTMASK", 0x3c: "SR_GEMASK", 0x3d: "SR_REGALLOC", 0x3e: "SR_BARRIERALLOC",
	0x40: "SR_GLOBALERRORSTATUS", 0x42: "SR_WARPERRORSTATUS", 0x43: "SR_VIRTUALSMID",
	0x44: "SR_VIRTUALENGINEID", 0x50: "SR_CLOCKLO", 0x51: "SR_CLOCKHI", 0x52: "SR_GLOBALTIMERLO",
	0x53: "SR_GLOBALTIMERHI", 0x54: "SR_ESR_PC", 0x55: "SR_ESR_PC_HI", 0x60: "SR_HWTASKID",
	0x61: "SR_CIRCULARQUEUEENTRYINDEX", 0x62: "SR_CIRCULARQUEUEENTRYADDRESSLOW",
	0x63: "SR_CIRCULARQUEUEENTRYADDRESSHIGH", 0x64: "SR_PM0", 0x65: "SR_PM_HI0", 0x66: "SR_PM1",
	0x67: "SR_PM_HI1", 0x68: "SR_PM2", 0x69: "SR_PM_HI2", 0x6a: "SR_PM3", 0x6b: "SR_PM_HI3", 0x6c: "SR_PM4",
	0x6d: "SR_PM_HI4", 0x6e: "SR_PM5", 0x6f: "SR_PM_HI5", 0x70: "SR_PM6", 0x71: "SR_PM_HI6", 0x72: "SR_PM7",
	0x73: "SR_PM_HI7", 0x74: "SR_SNAP_PM0", 0x75: "SR_SNAP_PM_HI0", 0x76: "SR_SNAP_PM1", 0x77: "SR_SNAP_PM_HI1",
	0x78: "SR_SNAP_PM2", 0x79: "SR_SNAP_PM_HI2", 0x7a: "SR_SNAP_PM3", 0x7b: "SR_SNAP_PM_HI3",
	0x7c: "SR_SNAP_PM4", 0x7d: "SR_SNAP_PM_HI4", 0x7e: "SR_SNAP_PM5", 0x7f: "SR_SNAP_PM_HI5",
	0x80: "SR_SNAP_PM6", 0x81: "SR_SNAP_PM_HI6", 0x82: "SR_SNAP_PM7", 0x83: "SR_SNAP_PM_HI7",
	0x84: "SR_VARIABLE_RATE", 0x85: "SR_TTU_TICKET_INFO", 0xff: "SRZ",
}

// String returns the nvdisasm name of the special register.
func (s SpecialReg) String() string {
	if n, ok := srNames[s]; ok {
		return n
	}
	return "SR" + strconv.Itoa(int(s))
}

// Kind is the type of an Operand.
type Kind uint8

// Operand kinds.
const (
	KNone    Kind = iota
	KReg          // general register (Operand.N; Neg, Abs, Not modifiers)
	KPred         // predicate (Operand.N; Not)
	KUReg         // uniform register
	KUPred        // uniform predicate
	KImm          // integer immediate (Operand.Imm)
	KFloat        // binary32 immediate: Operand.Imm holds its bits
	KCBank        // constant bank c[Bank][Imm]
	KMem          // memory address (see Operand fields Base, W64, Scale, Imm, Desc)
	KSpecial      // special register (Operand.N)
	KTarget       // branch target: Operand.Imm is the byte offset relative to the next instruction
	KSB           // scoreboard name SB<n> (DEPBAR)
	KBar          // convergence barrier B<n> (BSSY, BSYNC, BREAK, BMOV)
	KDouble       // binary64 immediate: Operand.Imm holds its high 32 bits (the low ones are zero)
)

var kindNames = [...]string{"none", "register", "predicate", "uniform register", "uniform predicate", "immediate",
	"float immediate", "constant", "memory", "special register", "branch target", "scoreboard", "convergence barrier", "double immediate",
	"predicate file", "half immediate", "scoreboard set", "bfloat16 immediate"}

// String names the kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Operand is one operand of an instruction, of any Kind. Build operands with
// R, P, NotP, UR, Imm, F32, CB, G64, Shared, SR and Target; the zero value is
// no operand. Operands are comparable with ==.
type Operand struct {
	Kind Kind
	// N is the register, predicate, uniform register or special register
	// number; for KMem it is the base register.
	N uint8
	// Neg (-x), Abs (|x|) and Not (!P, ~R) are source modifiers. Only the
	// forms that have the bits accept them.
	Neg, Abs, Not bool
	// Imm is the immediate value (the bits of a KFloat), the byte offset of a
	// KCBank or KMem, or the relative offset of a KTarget.
	Imm int64
	// Bank is the constant bank of a KCBank.
	Bank uint8
	// W64 marks a 64-bit address register pair in a KMem ([R2.64]).
	W64 bool
	// U32 marks a global KMem whose register is a 32-bit unsigned offset
	// from a uniform base ([R2.U32+UR4]).
	U32 bool
	// Scale is the index scale of a shared-memory KMem: 0 (none), 4, 8 or 16
	// ([R8.X4+0x10]: the register is multiplied by Scale).
	Scale uint8
	// Desc is the uniform register pair that holds the memory descriptor of
	// a global access (UR4 as ptxas writes it). CUDA 11.8's nvdisasm does not
	// print it (see the package documentation) unless DescShown.
	Desc uint8
	// DescShown marks a global access whose word sets bit 101 (an explicit
	// descriptor: ptxas's cache-hint loads and stores); nvdisasm then
	// prints desc[URn] before the address.
	DescShown bool
	// Indexed marks a KCBank indexed by register N: c[Bank][RN+Imm]
	// (LDC; with N = RZ it prints as c[Bank][Imm]).
	Indexed bool
	// UIndex marks the index register of an Indexed KCBank as a uniform
	// register (ULDC UR4, c[0x2][UR4+0x30]; N = 63 is URZ).
	UIndex bool
	// Sel is a half selector or swizzle printed after a register
	// (".H0_H0", ".H1_H1", ".F32", ...): empty for none.
	Sel string
}

// R returns register operand r.
func R(r Reg) Operand { return Operand{Kind: KReg, N: uint8(r)} }

// Neg returns o negated (-R, -c[..]).
func Neg(o Operand) Operand { o.Neg = true; return o }

// Abs returns |o|.
func Abs(o Operand) Operand { o.Abs = true; return o }

// Not returns o with its logical negation set (!P, ~R).
func Not(o Operand) Operand { o.Not = true; return o }

// P returns predicate operand p.
func P(p Pred) Operand { return Operand{Kind: KPred, N: uint8(p)} }

// NotP returns the negated predicate operand !p.
func NotP(p Pred) Operand { return Operand{Kind: KPred, N: uint8(p), Not: true} }

// UR returns uniform register operand u.
func UR(u UReg) Operand { return Operand{Kind: KUReg, N: uint8(u)} }

// UP returns uniform predicate operand p.
func UP(p UPred) Operand { return Operand{Kind: KUPred, N: uint8(p)} }

// Imm returns an integer immediate.
func Imm(v int64) Operand { return Operand{Kind: KImm, Imm: v} }

// F32 returns a binary32 immediate.
func F32(v float32) Operand { return Operand{Kind: KFloat, Imm: int64(math.Float32bits(v))} }

// F32Bits returns a binary32 immediate given by its bits.
func F32Bits(b uint32) Operand { return Operand{Kind: KFloat, Imm: int64(b)} }

// CB returns the constant-bank operand c[bank][offset] (offset in bytes, a
// multiple of 4).
func CB(bank uint8, offset int64) Operand { return Operand{Kind: KCBank, Bank: bank, Imm: offset} }

// G64 returns the global address [base.64+offset] with the descriptor UR4.
func G64(base Reg, offset int64) Operand {
	return Operand{Kind: KMem, N: uint8(base), W64: true, Imm: offset, Desc: 4}
}

// Shared returns the shared-memory address [base.X<scale>+offset]; scale is
// 0 (byte address in base), 4, 8 or 16 (base holds an index of that many
// bytes) -- the offset is always in bytes.
func Shared(base Reg, scale uint8, offset int64) Operand {
	return Operand{Kind: KMem, N: uint8(base), Scale: scale, Imm: offset}
}

// SR returns a special register operand.
func SR(s SpecialReg) Operand { return Operand{Kind: KSpecial, N: uint8(s)} }

// Target returns a branch target: offset bytes from the next instruction.
func Target(offset int64) Operand { return Operand{Kind: KTarget, Imm: offset} }

// SB returns the scoreboard operand SB<n> of DEPBAR.
func SB(n uint8) Operand { return Operand{Kind: KSB, N: n} }

// Bar returns the convergence barrier operand B<n> of BSSY, BSYNC, BREAK
// and BMOV.
func Bar(n uint8) Operand { return Operand{Kind: KBar, N: n} }

// regOrZero prints a register number (255 = RZ).
func regName(n uint8) string { return Reg(n).String() }

func hexs(v int64) string {
	if v < 0 {
		return "-0x" + strconv.FormatUint(uint64(-v), 16)
	}
	return "0x" + strconv.FormatUint(uint64(v), 16)
}

// format prints the operand as nvdisasm does. pc is the address of the
// instruction (for branch targets); reuse appends ".reuse".
func (o Operand) format(pc int64, reuse bool) string {
	return o.formatX(pc, reuse, false, false)
}

// formatX is format; in a listing a NaN immediate prints as its bits
// (0fXXXXXXXX, nvdisasm prints every NaN as QNAN) and, with desc, a global
// access shows a descriptor nvdisasm hides when it is not UR4, as
// hdesc[URn][...]. A descriptor the word shows (DescShown) prints as
// nvdisasm prints it, desc[URn][...].
func (o Operand) formatX(pc int64, reuse, listing, desc bool) string {
	var s string
	switch o.Kind {
	case KReg:
		// .reuse follows the register, or the bars of |R| (|R0|.reuse).
		s = regName(o.N)
		if reuse && !o.Abs {
			s += ".reuse"
			reuse = false
		}
		if !o.Abs {
			s += o.Sel
		}
	case KPred:
		s = Pred(o.N).String()
	case KUReg:
		s = UReg(o.N).String()
	case KUPred:
		s = UPred(o.N).String()
	case KImm:
		s = hexs(o.Imm)
	case KFloat:
		s = formatFloat32(uint32(o.Imm))
		if listing && math.IsNaN(float64(math.Float32frombits(uint32(o.Imm)))) {
			s = fmt.Sprintf("0f%08X", uint32(o.Imm))
		}
	case KDouble:
		b := uint64(uint32(o.Imm)) << 32
		s = formatFloat64(b)
		if listing && math.IsNaN(math.Float64frombits(b)) {
			s = fmt.Sprintf("0d%016X", b)
		}
	case KCBank:
		s = fmt.Sprintf("c[0x%x][%s]", o.Bank, hexs(o.Imm))
		if o.Indexed && o.UIndex && o.N != 63 || o.Indexed && !o.UIndex && o.N != 255 {
			x := regName(o.N)
			if o.UIndex {
				x = UReg(o.N).String()
			}
			if o.Imm != 0 {
				x += "+" + hexs(o.Imm)
			}
			s = fmt.Sprintf("c[0x%x][%s]", o.Bank, x)
		}
		// a half-precision swizzle, inside the bars (|c[0x0] [0x168].H1_H1|)
		s += o.Sel
	case KMem:
		if o.UIndex {
			s = formatMU(o, false)
			break
		}
		var b strings.Builder
		b.WriteByte('[')
		// nvdisasm prints a shared address on RZ with an offset as the bare
		// offset, hiding the scale; a listing keeps the register.
		if o.N == 255 && !o.W64 && !listing {
			if o.Imm == 0 {
				b.WriteString("RZ")
			} else {
				b.WriteString(hexs(o.Imm))
			}
		} else {
			b.WriteString(regName(o.N))
			if o.W64 {
				b.WriteString(".64")
			}
			if o.Scale != 0 {
				b.WriteString(".X" + strconv.Itoa(int(o.Scale)))
			}
			if o.Imm != 0 {
				b.WriteString("+" + hexs(o.Imm))
			}
		}
		b.WriteByte(']')
		s = b.String()
		switch {
		case o.DescShown:
			s = "desc[" + UReg(o.Desc).String() + "]" + s
		case desc && o.Desc != 4:
			// the listing's note of a descriptor nvdisasm does not show
			s = "hdesc[" + UReg(o.Desc).String() + "]" + s
		}
	case KSpecial:
		s = SpecialReg(o.N).String()
	case KTarget:
		s = hexs(pc + 16 + o.Imm)
	case KSB:
		s = "SB" + strconv.Itoa(int(o.N))
	case KBar:
		s = "B" + strconv.Itoa(int(o.N))
	case KPredFile:
		s = "PR"
	case KHalf:
		s = formatFloat16(uint16(o.Imm))
		if listing && math.IsNaN(float64(tile.F16ToF32(uint16(o.Imm)))) {
			s = fmt.Sprintf("0h%04X", uint16(o.Imm))
		}
	case KBF16:
		s = formatBF16(uint16(o.Imm))
		if listing && uint16(o.Imm)&0x7fff > 0x7f80 {
			s = fmt.Sprintf("0h%04X", uint16(o.Imm))
		}
	case KSBSet:
		s = formatSBSet(uint64(o.Imm))
	default:
		s = "?"
	}
	if o.Abs {
		s = "|" + s + "|"
	}
	if reuse {
		s += ".reuse"
	}
	if o.Abs && o.Kind == KReg {
		// the selector follows the bars (HFMA2 R16, ..., |R16|.H0_H0)
		s += o.Sel
	}
	if o.Neg {
		s = "-" + s
	}
	// A predicate is inverted with "!", anything else with "~"
	// (IADD3.X R8, R11, ~c[0x0][0x174], ...).
	if o.Not {
		if o.Kind == KPred || o.Kind == KUPred {
			s = "!" + s
		} else {
			s = "~" + s
		}
	}
	return s
}

// String prints the operand as nvdisasm does (a branch target as if at
// address 0).
func (o Operand) String() string { return o.format(0, false) }

// formatFloat32 prints a binary32 immediate the way nvdisasm does.
func formatFloat32(b uint32) string {
	f := math.Float32frombits(b)
	switch {
	case math.IsInf(float64(f), 1):
		return "+INF "
	case math.IsInf(float64(f), -1):
		return "-INF "
	case f != f:
		if b&0x80000000 != 0 {
			return "-QNAN "
		}
		return "+QNAN "
	}
	if b == 0x80000000 {
		return "-0.0 "
	}
	// Measured on nvdisasm 11.8: %.20g below 1e9 in magnitude, %.20e from
	// 1e9 on; infinities, NaNs (every NaN is printed QNAN) and -0 carry a
	// trailing blank.
	v := float64(f)
	if math.Abs(v) >= 1e9 {
		return strconv.FormatFloat(v, 'e', 20, 64)
	}
	return strconv.FormatFloat(v, 'g', 20, 64)
}

// formatFloat64 prints a binary64 immediate the way nvdisasm does: as
// binary32 ones (DMUL R14, R4, 8.11296384146066816958e+31; +INF ).
func formatFloat64(b uint64) string {
	v := math.Float64frombits(b)
	switch {
	case math.IsInf(v, 1):
		return "+INF "
	case math.IsInf(v, -1):
		return "-INF "
	case v != v:
		if b>>63 != 0 {
			return "-QNAN "
		}
		return "+QNAN "
	case b == 1<<63:
		return "-0.0 "
	case math.Abs(v) >= 1e9:
		return strconv.FormatFloat(v, 'e', 20, 64)
	}
	return strconv.FormatFloat(v, 'g', 20, 64)
}

// parseFloat64 reads a double immediate as formatFloat64 prints it and
// returns its high 32 bits; the low ones must be zero.
func parseFloat64(s string) (uint32, bool) {
	var b uint64
	switch t := strings.TrimSpace(s); {
	case strings.HasPrefix(t, "0d") && len(t) == 18:
		v, err := strconv.ParseUint(t[2:], 16, 64)
		if err != nil {
			return 0, false
		}
		b = v
	case t == "+INF":
		b = 0x7ff0000000000000
	case t == "-INF":
		b = 0xfff0000000000000
	case t == "+QNAN":
		b = 0x7fffffff00000000
	case t == "-QNAN":
		b = 0xffffffff00000000
	case t == "-0.0" || t == "-0":
		b = 1 << 63
	default:
		v, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return 0, false
		}
		b = math.Float64bits(v)
	}
	if uint32(b) != 0 {
		return 0, false
	}
	return uint32(b >> 32), true
}

// parseFloat32 reads a float immediate as formatFloat32 prints it.
func parseFloat32(s string) (uint32, bool) {
	if strings.HasPrefix(s, "0f") && len(s) == 10 {
		v, err := strconv.ParseUint(s[2:], 16, 32)
		return uint32(v), err == nil
	}
	switch strings.TrimSpace(s) {
	case "+INF":
		return 0x7f800000, true
	case "-INF":
		return 0xff800000, true
	case "+QNAN":
		return 0x7fffffff, true
	case "-QNAN":
		return 0xffffffff, true
	case "-0.0", "-0":
		return 0x80000000, true
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	f := float32(v)
	if float64(f) != v && !math.IsInf(v, 0) {
		// The text always holds the exact value of a binary32.
		return 0, false
	}
	return math.Float32bits(f), true
}
