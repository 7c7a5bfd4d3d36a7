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

func encodeMU(w *word, o ospec, a Operand) error {
	sc := map[uint8]uint64{0: 0, 4: 1, 8: 2, 16: 3}
	v, ok := sc[a.Scale]
	if !a.UIndex || a.W64 || a.Desc > 63 || !ok || a.Imm < -(1<<23) || a.Imm >= 1<<23 {
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

func formatMU(o Operand) string {
	var parts []string
	if o.N != 255 || o.Scale != 0 {
		r := regName(o.N)
		if o.Scale != 0 {
			r += ".X" + strconv.Itoa(int(o.Scale))
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
