package sass

import (
	"fmt"
	"strconv"
	"strings"
)

// fMU is a shared address with a uniform register, [Ra(.Xn)+URb+off]
// (ATOMS.POPC.INC.32 RZ, [R0+URZ]; ATOMS.ARRIVE.64 R2, [URZ]; nvcc's
// LDS R8, [R0.X4+UR8+0x1000], STS [UR4], R3): Ra at the field's position,
// URb at 64:6 (LDS: at 32:6, the spec's u32), the byte offset at 40:24,
// the scale at 78:2. Its Operand is a KMem with UIndex set and URb in Desc; nvdisasm
// leaves out Ra when it is RZ without a scale, and a zero offset.
const fMU fkind = 96

// fMGU and fMGU32 are global addresses with a uniform register,
// [Ra.64+URb+off] and [Ra.U32+URb+off] (LDG, STG, LDGSTS with bit 76
// clear; LDG and STG: bit 90 clear for .U32): Ra at the field's position,
// URb at the spec's u position (LDG: 32, where the descriptor sits
// otherwise; STG, LDGSTS: 64), the byte offset at 40:24 (LDGSTS: the
// spec's +32:12). Derived from nvdisasm on ptxas words with one field
// varied (ptxas 11.8 was not seen to emit them). Their Operand is a KMem
// with UIndex set, URb in Desc and W64 or U32. nvdisasm leaves out Ra when
// it is RZ, so the .U32 form refuses RZ (its text is the .64 form's);
// LDGSTS prints RZ.64 and leaves out URZ (spec flag Z: RZ shown, URZ
// refused, since the text is then the form's without URb).
const (
	fMGU   fkind = 97
	fMGU32 fkind = 98
)

func encodeMGU(w *word, o ospec, a Operand) error {
	u32 := o.kind == fMGU32
	lim := int64(1) << (o.offW - 1)
	if !a.UIndex || a.W64 == u32 || a.U32 != u32 || a.Scale != 0 || a.DescShown || a.Desc > 63 ||
		a.Imm < -lim || a.Imm >= lim || u32 && a.N == 255 || o.showRZ && a.Desc == 63 {
		return fmt.Errorf("%w: operand %v: not a global address with a uniform register", ErrInvalid, a)
	}
	w.set(o.pos, 8, uint64(a.N))
	w.set(o.uPos(), 6, uint64(a.Desc))
	w.set(o.offPos, o.offW, uint64(a.Imm))
	return nil
}

func decodeMGU(w word, o ospec) Operand {
	return Operand{Kind: KMem, UIndex: true, N: uint8(w.get(o.pos, 8)), Desc: uint8(w.get(o.uPos(), 6)),
		Imm: signExtend(w.get(o.offPos, o.offW), o.offW), W64: o.kind == fMGU, U32: o.kind == fMGU32}
}

func encodeMU(w *word, o ospec, a Operand) error {
	sc := map[uint8]uint64{0: 0, 4: 1, 8: 2, 16: 3}
	v, ok := sc[a.Scale]
	if !a.UIndex || a.W64 || a.U32 || a.Desc > 63 || !ok || a.Imm < -(1<<23) || a.Imm >= 1<<23 {
		return fmt.Errorf("%w: operand %v: not a shared address with a uniform register", ErrInvalid, a)
	}
	w.set(o.pos, 8, uint64(a.N))
	w.set(o.uPos(), 6, uint64(a.Desc))
	w.set(40, 24, uint64(a.Imm))
	w.set(78, 2, v)
	return nil
}

func decodeMU(w word, o ospec) Operand {
	return Operand{Kind: KMem, UIndex: true, N: uint8(w.get(o.pos, 8)), Desc: uint8(w.get(o.uPos(), 6)),
		Imm: signExtend(w.get(40, 24), 24), Scale: [4]uint8{0, 4, 8, 16}[w.get(78, 2)]}
}

// uPos is the position of the address's uniform register.
func (o ospec) uPos() uint {
	if o.upos != 0 {
		return o.upos
	}
	return 64
}

// formatMU prints an address with a uniform register; showRZ prints Ra
// when it is RZ (LDGSTS).
func formatMU(o Operand, showRZ bool) string {
	var parts []string
	if o.N != 255 || o.Scale != 0 || showRZ {
		r := regName(o.N)
		switch {
		case o.Scale != 0:
			r += ".X" + strconv.Itoa(int(o.Scale))
		case o.W64:
			r += ".64"
		case o.U32:
			r += ".U32"
		}
		parts = append(parts, r)
	}
	parts = append(parts, UReg(o.Desc).String())
	if o.Imm != 0 {
		parts = append(parts, hexs(o.Imm))
	}
	return "[" + strings.Join(parts, "+") + "]"
}

// parseMU reads formatMU's text.
func parseMU(t string) (Operand, bool) {
	a := Operand{Kind: KMem, UIndex: true, N: 255}
	if len(t) < 2 || t[0] != '[' || t[len(t)-1] != ']' {
		return a, false
	}
	seenUR := false
	for _, p := range strings.Split(t[1:len(t)-1], "+") {
		switch {
		case strings.HasPrefix(p, "UR"):
			if p == "URZ" {
				a.Desc = 63
			} else {
				n, err := strconv.Atoi(p[2:])
				if err != nil || n < 0 || n > 62 {
					return a, false
				}
				a.Desc = uint8(n)
			}
			seenUR = true
		case strings.HasPrefix(p, "R"):
			if q, ok := strings.CutSuffix(p, ".64"); ok {
				a.W64, p = true, q
			} else if q, ok := strings.CutSuffix(p, ".U32"); ok {
				a.U32, p = true, q
			}
			for _, sc := range []uint8{16, 8, 4} {
				if s := ".X" + strconv.Itoa(int(sc)); strings.HasSuffix(p, s) {
					a.Scale, p = sc, strings.TrimSuffix(p, s)
					break
				}
			}
			n, ok := parseRegName(p)
			if !ok {
				return a, false
			}
			a.N = n
		default:
			v, ok := parseInt(p)
			if !ok {
				return a, false
			}
			a.Imm = v
		}
	}
	return a, seenUR
}
