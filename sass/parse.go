package sass

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseInst reads one instruction as Inst.Text or Inst.Listing prints it
// (the control prefix "[B...]" optional, the trailing ";" optional); pc is
// its address, needed for branch targets. Without a control prefix the
// control word is zero apart from the reuse flags the text shows, and the
// yield flag the ";" spacing implies (see Inst.String).
func ParseInst(s string, pc int64) (Inst, error) {
	var i Inst
	src := s
	bad := func(why string) (Inst, error) {
		return Inst{}, fmt.Errorf("%w: %s: %q", ErrSyntax, why, src)
	}
	s = strings.TrimSpace(s)
	hasCtrl := false
	if strings.HasPrefix(s, "[") {
		j := strings.IndexByte(s, ']')
		if j < 0 {
			return bad("unterminated control")
		}
		c, err := ParseControl(s[:j+1])
		if err != nil {
			return Inst{}, err
		}
		i.Ctrl = c
		hasCtrl = true
		s = strings.TrimSpace(s[j+1:])
	}
	tight := false
	if strings.HasSuffix(s, ";") {
		s = s[:len(s)-1]
		tight = !strings.HasSuffix(s, " ")
		s = strings.TrimSpace(s)
	}
	if strings.HasPrefix(s, "@") {
		j := strings.IndexByte(s, ' ')
		if j < 0 {
			return bad("guard without instruction")
		}
		g := s[1:j]
		not := strings.HasPrefix(g, "!")
		g = strings.TrimPrefix(g, "!")
		uni := strings.HasPrefix(g, "UP")
		p, ok := parsePred(strings.TrimPrefix(g, "U"))
		if !ok {
			return bad("guard")
		}
		i.Guard = Cond{Set: true, P: p, Not: not, Uniform: uni}
		s = strings.TrimSpace(s[j+1:])
	}
	mn, rest, _ := strings.Cut(s, " ")
	parts := strings.Split(mn, ".")
	i.Op = Op(parts[0])
	if len(parts) > 1 {
		i.Mods = sm86Spelling(i.Op, parts[1:])
	}
	var toks []string
	if rest = strings.TrimSpace(rest); rest != "" {
		for _, t := range strings.Split(rest, ",") {
			toks = append(toks, strings.TrimSpace(t))
		}
		toks = joinBraces(toks)
	}
	if !hasCtrl && tight {
		i.Ctrl.Yield = true
	}
	ensureTables()
	fs, ok := formsByOp[i.Op]
	if !ok {
		return Inst{}, fmt.Errorf("%w: %s", ErrUnknownOp, i.Op)
	}
	var firstErr error
	// a form whose last operand follows a blank (RET.REL.NODEC R12 0x0)
	// reads the last token as two
	var blankToks []string
	if n := len(toks); n > 0 {
		if j := strings.LastIndexByte(toks[n-1], ' '); j > 0 {
			blankToks = append(append(blankToks, toks[:n-1]...), strings.TrimSpace(toks[n-1][:j]), toks[n-1][j+1:])
		}
	}
	allToks := toks
	for _, f := range fs {
		toks := allToks
		if len(f.ops) > 0 && f.ops[len(f.ops)-1].blank {
			toks = blankToks
		}
		if len(f.ops) != len(toks) {
			continue
		}
		if _, ok := f.matchMods(i.Mods); !ok {
			continue
		}
		try := i
		try.Args = nil
		if len(toks) > 0 {
			try.Args = make([]Operand, len(toks))
		}
		reuse := uint8(0)
		good := true
		for k, t := range toks {
			a, ru, err := parseOperand(t, f.ops[k], pc)
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				good = false
				break
			}
			if ru {
				if f.ops[k].reuse < 0 {
					good = false
					break
				}
				reuse |= 1 << f.ops[k].reuse
			}
			try.Args[k] = a
		}
		if !good {
			continue
		}
		try.Ctrl.Reuse |= reuse
		if _, err := try.encode(); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		return try, nil
	}
	if firstErr != nil {
		return Inst{}, fmt.Errorf("%w: %q: %v", ErrSyntax, src, firstErr)
	}
	return bad("no form of " + string(i.Op) + " matches")
}

// Parse reads a program, one instruction per line, as Program.Listing or a
// sequence of Inst.Text lines prints it. Blank lines and lines starting with
// "//" or "#" are skipped; an address column "/*0040*/" is skipped.
func Parse(text string) (Program, error) {
	var p Program
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "//") || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "/*") {
			if j := strings.Index(line, "*/"); j >= 0 {
				line = strings.TrimSpace(line[j+2:])
			}
		}
		i, err := ParseInst(line, int64(16*len(p)))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		p = append(p, i)
	}
	return p, nil
}

func parsePred(s string) (Pred, bool) {
	if s == "PT" {
		return PT, true
	}
	if len(s) == 2 && s[0] == 'P' && s[1] >= '0' && s[1] <= '6' {
		return Pred(s[1] - '0'), true
	}
	return 0, false
}

func parseRegName(s string) (uint8, bool) {
	if s == "RZ" {
		return 255, true
	}
	if len(s) < 2 || s[0] != 'R' {
		return 0, false
	}
	n, err := strconv.Atoi(s[1:])
	if err != nil || n < 0 || n > 254 || strconv.Itoa(n) != s[1:] {
		return 0, false
	}
	return uint8(n), true
}

// parseURegName reads URn or URZ (63).
func parseURegName(s string) (uint8, bool) {
	if s == "URZ" {
		return 63, true
	}
	if len(s) < 3 || s[:2] != "UR" {
		return 0, false
	}
	n, err := strconv.Atoi(s[2:])
	if err != nil || n < 0 || n > 62 || strconv.Itoa(n) != s[2:] {
		return 0, false
	}
	return uint8(n), true
}

func parseInt(s string) (int64, bool) {
	neg := false
	if strings.HasPrefix(s, "-") {
		neg = true
		s = s[1:]
	}
	if !strings.HasPrefix(s, "0x") {
		return 0, false
	}
	v, err := strconv.ParseUint(s[2:], 16, 63)
	if err != nil {
		return 0, false
	}
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

// parseOperand reads token t as operand spec o wants it; it reports whether
// the token carried ".reuse".
func parseOperand(t string, o ospec, pc int64) (Operand, bool, error) {
	a := Operand{Kind: o.operandKind()}
	bad := func() (Operand, bool, error) {
		return Operand{}, false, fmt.Errorf("%w: operand %q", ErrSyntax, t)
	}
	orig := t
	_ = orig
	switch o.kind {
	case fI, fU:
		v, ok := parseInt(t)
		if !ok {
			return bad()
		}
		a.Imm = v
		return a, false, nil
	case fD:
		b, ok := parseFloat64(t)
		if !ok {
			return bad()
		}
		a.Imm = int64(b)
		return a, false, nil
	case fF:
		b, ok := parseFloat32(t)
		if !ok {
			return bad()
		}
		a.Imm = int64(b)
		return a, false, nil
	case fH:
		b, ok := parseFloat16(t)
		if !ok {
			return bad()
		}
		a.Imm = int64(b)
		return a, false, nil
	case fHB:
		b, ok := parseBF16(t)
		if !ok {
			return bad()
		}
		a.Imm = int64(b)
		return a, false, nil
	case fSBS:
		m, ok := parseSBSet(t)
		if !ok {
			return bad()
		}
		a.Imm = int64(m)
		return a, false, nil
	case fPR:
		if t != "PR" {
			return bad()
		}
		return a, false, nil
	case fT:
		v, ok := parseInt(t)
		if !ok {
			return bad()
		}
		a.Imm = v - pc - 16
		return a, false, nil
	case fSR:
		for n, name := range srNames {
			if name == t {
				a.N = uint8(n)
				return a, false, nil
			}
		}
		return bad()
	case fSB:
		if len(t) == 3 && strings.HasPrefix(t, "SB") && t[2] >= '0' && t[2] <= '7' {
			a.N = t[2] - '0'
			return a, false, nil
		}
		return bad()
	case fB:
		n, err := strconv.Atoi(strings.TrimPrefix(t, "B"))
		if !strings.HasPrefix(t, "B") || err != nil || n < 0 || n > 15 || strconv.Itoa(n) != t[1:] {
			return bad()
		}
		a.N = uint8(n)
		return a, false, nil
	case fMU, fMGU, fMGU32:
		m, ok := parseMU(t)
		if !ok {
			return bad()
		}
		if o.kind == fMGU && m.N == 255 && !m.U32 {
			// nvdisasm leaves out RZ: [UR4+0x10] is the .64 form's
			m.W64 = true
		}
		return m, false, nil
	case fMG, fMA, fMS, fMX:
		desc, shown := -1, false
		if strings.HasPrefix(t, "desc[UR") || strings.HasPrefix(t, "hdesc[UR") {
			shown = t[0] == 'd'
			if !shown {
				t = t[1:]
			}
			j := strings.IndexByte(t, ']')
			if j < 0 {
				return bad()
			}
			if t[7:j] == "Z" {
				desc = 63
			} else {
				n, err := strconv.Atoi(t[7:j])
				if err != nil || n < 0 || n > 62 {
					return bad()
				}
				desc = n
			}
			t = t[j+1:]
		}
		if len(t) < 2 || t[0] != '[' || t[len(t)-1] != ']' {
			return bad()
		}
		in := t[1 : len(t)-1]
		base, off, hasOff := strings.Cut(in, "+")
		if (o.kind == fMA || o.kind == fMG) && o.desc != 0 {
			a.Desc, a.DescShown = 4, shown
			if desc >= 0 {
				a.Desc = uint8(desc)
			}
		} else if desc >= 0 {
			return bad()
		}
		if v, ok := parseInt(base); ok && !hasOff && (o.kind == fMS || o.kind == fMX) {
			a.N = 255
			a.Imm = v
			return a, false, nil
		}
		if hasOff {
			v, ok := parseInt(off)
			if !ok {
				return bad()
			}
			a.Imm = v
		}
		if strings.HasSuffix(base, ".64") {
			a.W64 = true
			base = strings.TrimSuffix(base, ".64")
		}
		for _, sc := range []uint8{16, 8, 4} {
			suf := ".X" + strconv.Itoa(int(sc))
			if strings.HasSuffix(base, suf) {
				a.Scale = sc
				base = strings.TrimSuffix(base, suf)
				break
			}
		}
		n, ok := parseRegName(base)
		if !ok {
			return bad()
		}
		a.N = n
		return a, false, nil
	}
	// registers, predicates, constants, with modifiers
	if strings.HasPrefix(t, "!") {
		a.Not = true
		t = t[1:]
	} else if strings.HasPrefix(t, "~") {
		a.Not = true
		t = t[1:]
	}
	if strings.HasPrefix(t, "-") {
		a.Neg = true
		t = t[1:]
	}
	reuse := false
	if strings.HasPrefix(t, "|") {
		// |R16|.H0_H0: a selector follows the bars; read it as |R16.H0_H0|
		if j := strings.LastIndexByte(t, '|'); j > 0 && j < len(t)-1 && t[j+1:] != ".reuse" {
			t = t[:j] + t[j+1:] + "|"
		}
	}
	if strings.HasPrefix(t, "|") && strings.HasSuffix(t, "|.reuse") {
		// |R0|.reuse: the flag follows the bars
		reuse = true
		t = strings.TrimSuffix(t, ".reuse")
	}
	if strings.HasPrefix(t, "|") {
		if !strings.HasSuffix(t, "|") || len(t) < 2 {
			return bad()
		}
		a.Abs = true
		t = t[1 : len(t)-1]
	}
	if strings.HasSuffix(t, ".reuse") {
		reuse = true
		t = strings.TrimSuffix(t, ".reuse")
	}
	switch o.kind {
	case fR:
		for _, sel := range o.selTab {
			if sel != "" && strings.HasSuffix(t, sel) {
				t = strings.TrimSuffix(t, sel)
				if strings.HasSuffix(t, ".reuse") {
					reuse = true
					t = strings.TrimSuffix(t, ".reuse")
				}
				a.Sel = sel
				break
			}
		}
		if o.sel != "" && strings.HasSuffix(t, ".reuse"+o.sel) {
			reuse = true
			t = strings.TrimSuffix(t, ".reuse"+o.sel) + o.sel
		}
		if o.sel != "" {
			if !strings.HasSuffix(t, o.sel) {
				return bad()
			}
			t = strings.TrimSuffix(t, o.sel)
			a.Sel = o.sel
		}
		n, ok := parseRegName(t)
		if !ok {
			return bad()
		}
		a.N = n
	case fP:
		p, ok := parsePred(t)
		if !ok {
			return bad()
		}
		a.N = uint8(p)
	case fUR:
		if t == "URZ" {
			a.N = 63
		} else {
			n, err := strconv.Atoi(strings.TrimPrefix(t, "UR"))
			if err != nil || !strings.HasPrefix(t, "UR") || n < 0 || n > 62 {
				return bad()
			}
			a.N = uint8(n)
		}
	case fUP:
		if t == "UPT" {
			a.N = 7
		} else if len(t) == 3 && strings.HasPrefix(t, "UP") && t[2] >= '0' && t[2] <= '6' {
			a.N = t[2] - '0'
		} else {
			return bad()
		}
	case fC:
		var bank, off string
		for _, sel := range o.selTab {
			if sel != "" && strings.HasSuffix(t, sel) {
				t, a.Sel = strings.TrimSuffix(t, sel), sel
				break
			}
		}
		if !strings.HasPrefix(t, "c[") {
			return bad()
		}
		if o.cspace {
			// the half-precision opcodes print c[0x0] [0x168]
			t = strings.Replace(t, "] [", "][", 1)
		}
		rest := t[2:]
		j := strings.Index(rest, "][")
		if j < 0 || !strings.HasSuffix(rest, "]") {
			return bad()
		}
		bank, off = rest[:j], rest[j+2:len(rest)-1]
		b, ok1 := parseInt(bank)
		v, ok2 := parseInt(off)
		if !ok1 || !ok2 || b < 0 || b > 31 {
			return bad()
		}
		a.Bank = uint8(b)
		a.Imm = v
	case fCX, fCXU:
		if !strings.HasPrefix(t, "c[") || !strings.HasSuffix(t, "]") {
			return bad()
		}
		rest := t[2 : len(t)-1]
		j := strings.Index(rest, "][")
		if j < 0 {
			return bad()
		}
		b, ok := parseInt(rest[:j])
		if !ok || b < 0 || b > 31 {
			return bad()
		}
		x := rest[j+2:]
		a.Indexed, a.Bank, a.N = true, uint8(b), 255
		if o.kind == fCXU {
			a.UIndex, a.N = true, 63
		}
		if v, ok := parseInt(x); ok {
			a.Imm = v
			break
		}
		reg, off, hasOff := strings.Cut(x, "+")
		n, ok := parseRegName(reg)
		if o.kind == fCXU {
			n, ok = parseURegName(reg)
		}
		if !ok {
			return bad()
		}
		a.N = n
		if hasOff {
			v, ok := parseInt(off)
			if !ok {
				return bad()
			}
			a.Imm = v
		}
	default:
		return bad()
	}
	return a, reuse, nil
}

// sm86Spelling returns mods with nvdisasm -b SM89's spellings of sm89Mods
// (F2FP.F16.F32.PACK_AB) turned into the model's (-b SM86's: PACK_AB), so
// that ParseInst reads either disassembler's text.
func sm86Spelling(op Op, mods []string) []string {
	m := strings.Join(mods, ".")
	for _, r := range sm89Mods {
		if op == r.op && (m == r.to || strings.HasSuffix(m, "."+r.to)) {
			return strings.Split(strings.TrimSuffix(m, r.to)+r.from, ".")
		}
	}
	return mods
}
