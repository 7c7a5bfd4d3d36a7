package sass

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// explain describes, for a word the decoder refuses, how each candidate
// form fails (a debugging aid for the tables).
func explain(b []byte) string {
	w := word{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])}
	var out []string
	ensureTables()
	fs := formsByCode[w.get(0, 12)]
	if len(fs) == 0 {
		return "no form has this opcode"
	}
	for k, f := range fs {
		if d := [2]uint64{(w[0] & f.mask[0]) ^ f.val[0], (w[1] & f.mask[1]) ^ f.val[1]}; d != [2]uint64{} {
			out = append(out, fmt.Sprintf("form %d: fixed bits differ %s", k, bitList(d)))
			continue
		}
		bad := ""
		for _, s := range f.mods {
			if _, ok := s.vals[s.get(w)]; !ok {
				bad = fmt.Sprintf("slot %v value %d", s.segs, s.get(w))
			}
		}
		if bad != "" {
			out = append(out, fmt.Sprintf("form %d: %s", k, bad))
			continue
		}
		i := Inst{Op: f.op, Ctrl: controlFrom(w.get(105, 23))}
		vals := make([]uint64, len(f.mods))
		for k, s := range f.mods {
			vals[k] = s.get(w)
		}
		i.Mods = f.modTokens(vals)
		for _, o := range f.ops {
			i.Args = append(i.Args, decodeOperand(w, o))
		}
		g := w.get(12, 4)
		if g != 7 {
			i.Guard = Cond{Set: true, P: Pred(g & 7), Not: g&8 != 0}
		}
		back, err := i.encode()
		if err != nil {
			out = append(out, fmt.Sprintf("form %d: %v", k, err))
			continue
		}
		out = append(out, fmt.Sprintf("form %d: re-encode differs %s", k, bitList([2]uint64{back[0] ^ w[0], back[1] ^ w[1]})))
	}
	return strings.Join(out, "; ")
}

func bitList(d [2]uint64) string {
	var s []string
	for b := 0; b < 128; b++ {
		if d[b/64]>>(b%64)&1 != 0 {
			s = append(s, fmt.Sprint(b))
		}
	}
	return "[" + strings.Join(s, " ") + "]"
}
