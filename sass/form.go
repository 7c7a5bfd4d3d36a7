package sass

import (
	"fmt"
	"strconv"
	"strings"
)

// A word is an instruction word as two little-endian halves.
type word [2]uint64

func (w word) get(pos, width uint) uint64 {
	var v uint64
	for i := uint(0); i < width; i++ {
		b := pos + i
		v |= (w[b/64] >> (b % 64) & 1) << i
	}
	return v
}

func (w *word) set(pos, width uint, v uint64) {
	for i := uint(0); i < width; i++ {
		b := pos + i
		w[b/64] = w[b/64]&^(1<<(b%64)) | (v>>i&1)<<(b%64)
	}
}

// fkind is the kind of an operand field in a form.
type fkind uint8

const (
	fR   fkind = iota // register, 8 bits
	fP                // predicate, 3 bits
	fUR               // uniform register, 6 bits (field 8 bits)
	fUP               // uniform predicate, 3 bits
	fI                // integer immediate, printed signed
	fU                // integer immediate, printed unsigned
	fF                // binary32 immediate
	fD                // binary64 immediate: the high 32 bits of the value (DFMA R2, -R4, R6, 1)
	fC                // constant bank: offset 14 bits at pos (x4), bank 5 bits at pos+14
	fCX               // indexed constant c[bank][Ra+off]: Ra at pos, byte offset 16 bits at 38, bank 5 bits at 54 (LDC)
	fCXU              // fCX indexed by a uniform register c[bank][URa+off] (ULDC UR4, c[0x2][UR4+0x30])
	fSR               // special register, 8 bits
	fT                // branch target, signed width bits
	fSB               // scoreboard number (DEPBAR), 3 bits
	fB                // convergence barrier B0..B15 (BSSY, BSYNC, BREAK, BMOV), 4 bits
	fMG               // global address [Ra.64+off24], desc UR at 32
	fMA               // global address [Ra+off24] printed without .64, desc UR at 32
	fMS               // shared address [Ra(.Xn)+off24], scale at 78:2
	fMX               // shared address without scale field [Ra+off24]
)

// ospec is one operand field.
type ospec struct {
	kind   fkind
	pos    uint
	width  uint // immediates: field width
	neg    uint // 0: none
	abs    uint
	not    uint
	reuse  int // operand slot 0..2 for .reuse, -1 none
	dst    bool
	sel    string // fixed selector suffix printed after a register
	fixReg int    // >= 0: the operand must have this register number or immediate value
	pow2   bool   // immediate must be a power of two
	nz     bool   // immediate must not be zero
	desc   uint   // memory: bit position of the descriptor register (0: none)
	offPos uint   // memory: position and width of the signed byte offset
	offW   uint
	blank  bool // printed after a blank instead of ", " (RET.REL.NODEC R12 0x0)
	// an immediate split over two fields: the bits above width sit at
	// splitPos (PLOP3's truth table: bits 0-2 at 64, 3-7 at 72)
	splitPos, splitW uint
	// descShown: a global address whose word sets bit 101, so that
	// nvdisasm prints its descriptor (MGD: LDG.E R11, desc[UR4][R6.64])
	descShown bool
	// upos: the uniform register's position in an address with one
	// (fMU, fMGU; 0 means 64)
	upos uint
	// showRZ: an address with a uniform register whose Ra is printed when
	// RZ and whose URb may not be URZ (LDGSTS; spec flag Z)
	showRZ bool
	// cspace: a constant printed c[0x0] [0x168], its selector inside the
	// bars (the half-precision opcodes; spec flag w)
	cspace bool
	// a selector read from the word (HFMA2's swizzles): selTab[v] for the
	// value v of the selPos:selW field ("" prints nothing); nil: the fixed
	// sel above
	selPos, selW uint
	selTab       []string
}

// selTables are the variable selectors of the half-precision forms (opcodes.go), by the
// letter after 'z' in an operand spec (zhPOS: halves at POS:2).
var selTables = map[byte][]string{
	// half-precision operand swizzle (HFMA2 A 74, B 60, C 81; HSETP2 ...)
	'h': {"", ".F32", ".H0_H0", ".H1_H1"},
}

// slot is a modifier field: value -> printed token ("" prints nothing).
// A slot may join several bit ranges (segs); its value is their
// concatenation, the first range lowest.
type slot struct {
	segs [][2]uint
	vals map[uint64]string
}

func (s slot) get(w word) uint64 {
	// A slot without bits ("0:0{E}") always has value 0: a token the form
	// always prints.
	var v uint64
	sh := uint(0)
	for _, g := range s.segs {
		v |= w.get(g[0], g[1]) << sh
		sh += g[1]
	}
	return v
}

func (s slot) set(w *word, v uint64) {
	for _, g := range s.segs {
		w.set(g[0], g[1], v)
		v >>= g[1]
	}
}

// form is one encoding of an opcode.
type form struct {
	arch int // the first architecture with the form: 86 or 89
	op   Op
	mask word // bits fixed by the form
	val  word
	mods []slot
	ops  []ospec
	// uniformGuard: the guard is a uniform predicate (the uniform
	// datapath's forms, see uniformize).
	uniformGuard bool
}

var (
	formsByOp   = map[Op][]*form{}
	formsByCode = map[uint64][]*form{}
)

// parseSlot reads "pos:width{a,b,...}" (list, "_" = empty) or
// "pos:width{k=v,...}" (sparse; "k=" = empty).
func parseSlot(s string) slot {
	i := strings.IndexByte(s, '{')
	if i < 0 || !strings.HasSuffix(s, "}") {
		panic("sass: bad slot " + s)
	}
	sl := slot{vals: map[uint64]string{}}
	for _, seg := range strings.Split(s[:i], "+") {
		var pos, width uint
		if _, err := fmt.Sscanf(seg, "%d:%d", &pos, &width); err != nil {
			panic("sass: bad slot " + s)
		}
		sl.segs = append(sl.segs, [2]uint{pos, width})
	}
	for k, item := range strings.Split(s[i+1:len(s)-1], ",") {
		if j := strings.IndexByte(item, '='); j >= 0 {
			n, err := strconv.ParseUint(item[:j], 0, 64)
			if err != nil {
				panic("sass: bad slot " + s)
			}
			sl.vals[n] = item[j+1:]
			continue
		}
		if item == "?" {
			continue
		}
		if item == "_" {
			item = ""
		}
		sl.vals[uint64(k)] = item
	}
	return sl
}

// parseOspec reads an operand field: KIND@POS[:WIDTH] then flags
// -N (neg bit), |N (abs bit), ~N (not bit), =V (fixed value), >SEL (selector
// suffix), ^ (no reuse slot), and a leading '>' marking a destination.
func parseOspec(s string) ospec {
	o := ospec{reuse: -1, fixReg: -1}
	if strings.HasPrefix(s, ">") {
		o.dst = true
		s = s[1:]
	}
	at := strings.IndexByte(s, '@')
	if at < 0 {
		panic("sass: bad operand spec " + s)
	}
	kinds := map[string]fkind{"R": fR, "P": fP, "UR": fUR, "UP": fUP, "I": fI, "U": fU, "F": fF, "D": fD, "C": fC, "CX": fCX, "CXU": fCXU, "SR": fSR,
		"T": fT, "SB": fSB, "B": fB, "MG": fMG, "MA": fMA, "MS": fMS, "MX": fMX}
	k, ok := kinds[s[:at]]
	if !ok {
		k, ok = kindsMMA[s[:at]]
	}
	if s[:at] == "MGD" {
		k, ok, o.descShown = fMG, true, true
	}
	if !ok {
		panic("sass: bad operand kind " + s)
	}
	o.kind = k
	rest := s[at+1:]
	num := func() uint {
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(rest[:j])
		if err != nil {
			panic("sass: bad operand spec " + s)
		}
		rest = rest[j:]
		return uint(n)
	}
	o.pos = num()
	if o.kind == fMG || o.kind == fMA {
		o.desc = 32
	}
	o.offPos, o.offW = 40, 24
	noReuse := false
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case ':':
			o.width = num()
		case '-':
			o.neg = num()
		case '|':
			o.abs = num()
		case '~':
			o.not = num()
		case '=':
			o.fixReg = int(num())
		case '^':
			noReuse = true
		case 'r':
			o.reuse = int(num())
			noReuse = true
		case '+':
			o.offPos = num()
			if len(rest) == 0 || rest[0] != ':' {
				panic("sass: bad operand spec " + s)
			}
			rest = rest[1:]
			o.offW = num()
		case 's':
			o.blank = true
		case 'Z':
			o.showRZ = true
		case 'w':
			o.cspace = true
		case 'u':
			o.upos = num()
		case 'h':
			o.splitPos = num()
			if len(rest) == 0 || rest[0] != ':' {
				panic("sass: bad operand spec " + s)
			}
			rest = rest[1:]
			o.splitW = num()
		case 'z':
			if len(rest) == 0 || selTables[rest[0]] == nil {
				panic("sass: bad operand spec " + s)
			}
			o.selTab = selTables[rest[0]]
			rest = rest[1:]
			o.selPos = num()
			o.selW = 2
		case 'p':
			o.pow2 = true
		case 'n':
			o.nz = true
		case '/':
			o.desc = num()
		case '.':
			o.sel = "." + rest
			rest = ""
		default:
			panic("sass: bad operand spec " + s)
		}
	}
	// A source pinned to one register (RZ in the IMAD.MOV alias) has no
	// reuse flag: nvdisasm prints a word with the flag set as the plain
	// opcode (IMAD R4, RZ, RZ, R16), so the alias form must not match it.
	if o.kind == fR && !noReuse && !o.dst && o.fixReg < 0 {
		switch o.pos {
		case 24:
			o.reuse = 0
		case 32:
			o.reuse = 1
		case 64:
			o.reuse = 2
		}
	}
	return o
}

// alu operand placements of the sources B and C for the form selector
// (word bits 9..11): ALU opcodes put B and C in the register file (1), an
// immediate (2, 4), a constant bank (3, 5) or a uniform register (6, 7).
var aluB = map[uint64][2]string{
	1: {"R@32", "R@64"},
	2: {"R@64", "IMM@32"},
	3: {"R@64", "C@40"},
	4: {"IMM@32", "R@64"},
	5: {"C@40", "R@64"},
	6: {"UR@32", "R@64"},
	7: {"R@64", "UR@32"},
}

// def declares the forms of one opcode table row. spec is
//
//	CODE [=POS:W:V ...] [SLOT ...] | OPERAND, OPERAND, ...
//
// CODE is the 12-bit opcode in hex; a leading 'x' expands the ALU forms:
// x223 with operands $B (and $C) gives the forms 1..7 of aluB that the
// operand list admits (a "$B/145" restricts to selectors 1, 4, 5). IMM in
// an expansion becomes the immediate kind given by the form's imm option
// (":F" float, ":U" unsigned, default signed). Slots are listed in print
// order.
func def(opc *opcode, spec string) {
	bar := strings.IndexByte(spec, '|')
	if bar < 0 {
		panic("sass: bad form " + spec)
	}
	head := append([]string{string(opc.op)}, strings.Fields(spec[:bar])...)
	var opnds []string
	if t := strings.TrimSpace(spec[bar+1:]); t != "" {
		for _, o := range strings.Split(t, ",") {
			opnds = append(opnds, strings.TrimSpace(o))
		}
	}
	name := head[0]
	code := head[1]

	immKind := "I"
	arch := 86
	uniform := false
	urSel := ""
	var fixed []string
	var slots []string
	for _, h := range head[2:] {
		switch {
		case h == ":F" || h == ":U" || h == ":I" || h == ":D":
			immKind = h[1:]
		case h == "sm89":
			arch = 89
		case h == "uniform":
			uniform = true
		case strings.HasPrefix(h, "ur="):
			urSel = h[3:]
		case strings.HasPrefix(h, "="):
			fixed = append(fixed, h[1:])
		default:
			slots = append(slots, h)
		}
	}
	if uniform {
		before := len(formsByOp[Op(name)])
		defer func() {
			for _, f := range formsByOp[Op(name)][before:] {
				f.uniformize()
			}
		}()
	}
	if code[0] != 'x' {
		c, err := strconv.ParseUint(code, 16, 12)
		if err != nil {
			panic("sass: bad code " + spec)
		}
		addForm(opc, arch, c, fixed, slots, opnds)
		return
	}
	c, err := strconv.ParseUint(code[1:], 16, 12)
	if err != nil {
		panic("sass: bad code " + spec)
	}
	hasC := false
	allowed := "1234567"
	fixedB := false
	for _, o := range opnds {
		if strings.HasPrefix(o, "$C") {
			hasC = true
		}
		if strings.HasPrefix(o, "$B/") {
			allowed = strings.SplitN(o[3:], "$", 2)[0]
			j := 0
			for j < len(allowed) && allowed[j] >= '1' && allowed[j] <= '7' {
				j++
			}
			fixedB = strings.Contains(allowed[j:], "=")
			allowed = allowed[:j]
		}
	}
	// A source that may sit in the register file may also come from a
	// uniform register (ptxas's LEA R20, P0, R4, UR10, 0x1 and FMUL R169,
	// R168, UR10), unless the form pins the source to one register (the
	// IMAD.MOV aliases) or is itself uniform: selector 6 where the
	// immediate or constant goes in the B field (4, 5), 7 where it goes in
	// the C field (2, 3: FADD's, DSETP's), both for a three-source opcode.
	// A form's "ur=DIGITS" option overrides the choice (nvdisasm refuses
	// LEA.HI with C from a uniform register, and ptxas emits LEA.HI.X R22,
	// R4, UR12, R5, 0x1, P0: ur=6).
	if !uniform && !fixedB && strings.ContainsRune(allowed, '1') && !strings.ContainsAny(allowed, "67") {
		switch {
		case urSel != "":
			allowed += urSel
		case hasC:
			allowed += "67"
		case strings.ContainsAny(allowed, "23"):
			allowed += "7"
		default:
			allowed += "6"
		}
	}
	for sel := uint64(1); sel <= 7; sel++ {
		if !strings.ContainsRune(allowed, rune('0'+sel)) {
			continue
		}
		pl := aluB[sel]
		if !hasC && allowed == "1234567" && sel != 1 && sel != 4 && sel != 5 && sel != 6 {
			continue
		}
		var ops []string
		for _, o := range opnds {
			if !strings.HasPrefix(o, "$") {
				ops = append(ops, o)
				continue
			}
			which := 0
			if o[1] == 'C' {
				which = 1
			}
			flags := o[2:]
			if strings.HasPrefix(flags, "/") {
				j := 1
				for j < len(flags) && flags[j] >= '1' && flags[j] <= '7' {
					j++
				}
				flags = flags[j:]
			}
			p := pl[which]
			if !hasC {
				// a two-source opcode: B takes whichever place is not
				// the register at 64 (FADD's immediate is form 2, FMUL's 4)
				p = pl[0]
				if p == "R@64" {
					p = pl[1]
				}
				if sel == 1 {
					p = "R@32"
				}
			}
			if strings.HasPrefix(p, "IMM") {
				keep := ""
				for k := 0; k < len(flags); k++ {
					switch c := flags[k]; {
					case c == 'p' || c == 'n':
						keep += string(c)
					case c == '=':
						keep += "="
						for k+1 < len(flags) && flags[k+1] >= '0' && flags[k+1] <= '9' {
							k++
							keep += string(flags[k])
						}
					case c == '-' || c == '|' || c == '~':
						for k+1 < len(flags) && flags[k+1] >= '0' && flags[k+1] <= '9' {
							k++
						}
					}
				}
				ops = append(ops, immKind+p[3:]+":32"+keep)
				continue
			}
			if strings.HasPrefix(p, "UR") {
				// a uniform register keeps the field's negate, absolute
				// and not bits (nvdisasm: IADD3 R16, R14, -UR4, -R5 for
				// bit 63), not its reuse flag
				keep := ""
				for k := 0; k < len(flags); k++ {
					c := flags[k]
					if c != '-' && c != '|' && c != '~' {
						continue
					}
					keep += string(c)
					for k+1 < len(flags) && flags[k+1] >= '0' && flags[k+1] <= '9' {
						k++
						keep += string(flags[k])
					}
				}
				if which == 1 {
					keep = strings.NewReplacer("-75", "-63", "|74", "|62", "~75", "~63").Replace(keep)
				}
				ops = append(ops, p+keep)
				continue
			}
			if which == 0 && p == "R@64" {
				// the reuse flag follows the operand's place in the text:
				// a second source held in the C field reuses through B;
				// its negate and absolute-value bits are the C field's
				// (ptxas's FFMA R3, R0, -R33, 1: bit 75, not 63)
				flags = strings.NewReplacer("-63", "-75", "|62", "|74").Replace(flags) + "r1"
			}
			if which == 1 && p != "R@64" {
				// and a third source held in the B field (a constant,
				// a uniform register) negates through the B field's
				// bits: nvdisasm prints FFMA R2, R3, -R2, c[0x0][0x184]
				// for bit 75 and FFMA R2, R3, R2, -c[0x0][0x184] for bit
				// 63 (likewise FFMA R2, R3, R0, -UR4, IMAD.X ~c[...])
				flags = strings.NewReplacer("-75", "-63", "|74", "|62", "~75", "~63").Replace(flags)
			}
			ops = append(ops, p+flags)
		}
		fx := fixed
		if sel >= 6 {
			// the uniform-register forms set opcode bit 91
			fx = append(append([]string(nil), fixed...), "91:1:1")
		}
		addForm(opc, arch, c&0x1ff|sel<<9, fx, slots, ops)
	}
}

// uniformize turns a form's general registers and predicates into
// uniform ones: the uniform datapath's ALU forms (UIADD3, USHF, ...) are the
// general forms with UR and UP in the same fields (form option "uniform").
func (f *form) uniformize() {
	f.uniformGuard = true
	for k := range f.ops {
		o := &f.ops[k]
		switch o.kind {
		case fR:
			o.kind, o.reuse = fUR, -1
		case fP:
			o.kind = fUP
		}
	}
}

func addForm(opc *opcode, arch int, code uint64, fixed, slots, opnds []string) {
	op := opc.op
	f := &form{op: op, arch: arch}
	f.mask.set(0, 12, 0xfff)
	f.val.set(0, 12, code)
	for _, fx := range fixed {
		var pos, width uint
		var v uint64
		if _, err := fmt.Sscanf(fx, "%d:%d:%v", &pos, &width, &v); err != nil {
			panic("sass: bad fixed field " + fx)
		}
		f.mask.set(pos, width, 1<<width-1)
		f.val.set(pos, width, v)
	}
	for _, s := range slots {
		f.mods = append(f.mods, parseSlot(s))
	}
	for _, o := range opnds {
		sp := parseOspec(o)
		if opc.noReuse {
			sp.reuse = -1
		}
		f.ops = append(f.ops, sp)
	}
	formsByOp[op] = append(formsByOp[op], f)
	formsByCode[code] = append(formsByCode[code], f)
}

// matchMods assigns the modifier tokens to the form's slots in order
// (backtracking); it returns the slot values or false.
func (f *form) matchMods(mods []string) ([]uint64, bool) {
	vals := make([]uint64, len(f.mods))
	var try func(si, mi int) bool
	try = func(si, mi int) bool {
		if si == len(f.mods) {
			return mi == len(mods)
		}
		for v, s := range f.mods[si].vals {
			if s == "" {
				continue
			}
			toks := strings.Split(s, ".")
			if mi+len(toks) > len(mods) {
				continue
			}
			ok := true
			for k, t := range toks {
				if mods[mi+k] != t {
					ok = false
					break
				}
			}
			if ok {
				vals[si] = v
				if try(si+1, mi+len(toks)) {
					return true
				}
			}
		}
		for v, s := range f.mods[si].vals {
			if s == "" {
				vals[si] = v
				if try(si+1, mi) {
					return true
				}
			}
		}
		return false
	}
	if !try(0, 0) {
		return nil, false
	}
	return vals, true
}

// modTokens returns the printed modifier tokens for slot values.
func (f *form) modTokens(vals []uint64) []string {
	var out []string
	for i, s := range f.mods {
		if t := s.vals[vals[i]]; t != "" {
			out = append(out, strings.Split(t, ".")...)
		}
	}
	return out
}

func signExtend(v uint64, width uint) int64 {
	sh := 64 - width
	return int64(v<<sh) >> sh
}

// encodeOperand writes operand a into w according to spec o.
func encodeOperand(w *word, o ospec, a Operand) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: operand %v: %s", ErrInvalid, a, why)
	}
	flag := func(set bool, pos uint, name string) error {
		if !set {
			return nil
		}
		if pos == 0 {
			return bad(name + " not allowed here")
		}
		w.set(pos, 1, 1)
		return nil
	}
	if err := flag(a.Neg, o.neg, "negation"); err != nil {
		return err
	}
	if err := flag(a.Abs, o.abs, "absolute value"); err != nil {
		return err
	}
	if err := flag(a.Not, o.not, "logical not"); err != nil {
		return err
	}
	if o.selTab != nil {
		v := -1
		for k, t := range o.selTab {
			if t == a.Sel {
				v = k
			}
		}
		if v < 0 {
			return bad("selector " + a.Sel)
		}
		w.set(o.selPos, o.selW, uint64(v))
	} else if a.Sel != o.sel {
		return bad("selector " + a.Sel)
	}
	if !o.fixOK(a) {
		return bad("operand value not allowed in this form")
	}
	switch o.kind {
	case fSR:
		if _, ok := srNames[SpecialReg(a.N)]; !ok {
			return bad("special register without a known name")
		}
		w.set(o.pos, 8, uint64(a.N))
	case fR:
		w.set(o.pos, 8, uint64(a.N))
	case fP, fUP:
		if a.N > 7 {
			return bad("predicate out of range")
		}
		w.set(o.pos, 3, uint64(a.N))
	case fUR:
		if a.N > 63 {
			return bad("uniform register out of range")
		}
		w.set(o.pos, o.regWidth(), uint64(a.N))
	case fSB:
		if a.N > 7 {
			return bad("scoreboard out of range")
		}
		w.set(o.pos, 3, uint64(a.N))
	case fB:
		if a.N > 15 {
			return bad("convergence barrier out of range")
		}
		w.set(o.pos, 4, uint64(a.N))
	case fPR:
	case fH, fHB, fSBS:
		if a.Imm < 0 || a.Imm >= 1<<o.width || (o.kind == fSBS && a.Imm == 0) {
			return bad("immediate out of range")
		}
		w.set(o.pos, o.width, uint64(a.Imm))
	case fI, fU, fF, fD, fT:
		width := o.width
		v := a.Imm
		if o.kind == fT {
			if v%4 != 0 {
				return bad("branch offset not a multiple of 4")
			}
			v /= 4
			width -= 2
			if v < -(1<<(width-1)) || v >= 1<<(width-1) {
				return bad("branch offset out of range")
			}
			w.set(o.pos+2, width, uint64(v))
			return nil
		}
		if o.splitW > 0 {
			if v < 0 || v >= 1<<(width+o.splitW) {
				return bad("immediate out of range")
			}
			w.set(o.pos, width, uint64(v))
			w.set(o.splitPos, o.splitW, uint64(v)>>width)
			return nil
		}
		if o.kind == fI {
			if v < -(1<<(width-1)) || v >= 1<<width {
				return bad("immediate out of range")
			}
		} else if v < 0 || v >= 1<<width {
			return bad("immediate out of range")
		}
		w.set(o.pos, width, uint64(v))
	case fC:
		if a.Imm < 0 || a.Imm >= 1<<16 || a.Imm%4 != 0 || a.Bank > 31 || a.Indexed {
			return bad("constant out of range")
		}
		w.set(o.pos, 14, uint64(a.Imm/4))
		w.set(o.pos+14, 5, uint64(a.Bank))
	case fCX, fCXU:
		if a.Imm < 0 || a.Imm >= 1<<16 || a.Bank > 31 || !a.Indexed || a.UIndex != (o.kind == fCXU) || a.UIndex && a.N > 63 {
			return bad("indexed constant out of range")
		}
		w.set(o.pos, 8, uint64(a.N))
		w.set(38, 16, uint64(a.Imm))
		w.set(54, 5, uint64(a.Bank))
	case fMU:
		return encodeMU(w, o, a)
	case fMGU, fMGU32:
		return encodeMGU(w, o, a)
	case fMG, fMA, fMS, fMX:
		if a.Imm < -(1<<(o.offW-1)) || a.Imm >= 1<<(o.offW-1) {
			return bad("memory offset out of range")
		}
		if a.UIndex {
			return bad("a uniform register in the address")
		}
		w.set(o.pos, 8, uint64(a.N))
		w.set(o.offPos, o.offW, uint64(a.Imm))
		if (o.kind == fMG) != a.W64 {
			return bad("address width")
		}
		switch o.kind {
		case fMG, fMA:
			if a.Desc > 63 || a.Scale != 0 || a.DescShown != o.descShown {
				return bad("descriptor")
			}
			if o.desc != 0 {
				w.set(o.desc, 6, uint64(a.Desc))
			} else if a.Desc != 0 {
				return bad("descriptor")
			}
		case fMS:
			sc := map[uint8]uint64{0: 0, 4: 1, 8: 2, 16: 3}
			v, ok := sc[a.Scale]
			if !ok {
				return bad("scale")
			}
			w.set(78, 2, v)
		case fMX:
			if a.Scale != 0 || a.Desc != 0 {
				return bad("scale")
			}
		}
	}
	return nil
}

func (o ospec) operandKind() Kind {
	switch o.kind {
	case fR:
		return KReg
	case fP:
		return KPred
	case fUR:
		return KUReg
	case fUP:
		return KUPred
	case fI, fU:
		return KImm
	case fF:
		return KFloat
	case fD:
		return KDouble
	case fC, fCX, fCXU:
		return KCBank
	case fSR:
		return KSpecial
	case fT:
		return KTarget
	case fSB:
		return KSB
	case fB:
		return KBar
	case fPR:
		return KPredFile
	case fH:
		return KHalf
	case fHB:
		return KBF16
	case fSBS:
		return KSBSet
	}
	return KMem
}

// regWidth is the width of a uniform register field: 8 bits, or the
// form's width (UR@24:6 where bit 30 is the register's not bit: BRA.DIV
// ~URZ).
func (o ospec) regWidth() uint {
	if o.width != 0 {
		return o.width
	}
	return 8
}

// decodeOperand reads operand o from w.
func decodeOperand(w word, o ospec) Operand {
	a := Operand{Kind: o.operandKind(), Sel: o.sel}
	if o.selTab != nil {
		a.Sel = o.selTab[w.get(o.selPos, o.selW)]
	}
	if o.neg != 0 {
		a.Neg = w.get(o.neg, 1) == 1
	}
	if o.abs != 0 {
		a.Abs = w.get(o.abs, 1) == 1
	}
	if o.not != 0 {
		a.Not = w.get(o.not, 1) == 1
	}
	switch o.kind {
	case fMU:
		return decodeMU(w, o)
	case fMGU, fMGU32:
		return decodeMGU(w, o)
	case fR, fSR:
		a.N = uint8(w.get(o.pos, 8))
	case fUR:
		a.N = uint8(w.get(o.pos, o.regWidth()))
	case fP, fUP, fSB:
		a.N = uint8(w.get(o.pos, 3))
	case fB:
		a.N = uint8(w.get(o.pos, 4))
	case fI:
		a.Imm = signExtend(w.get(o.pos, o.width), o.width)
		if o.width == 32 {
			// a 32-bit immediate field prints signed
			a.Imm = int64(int32(uint32(w.get(o.pos, 32))))
		}
	case fU, fF, fD:
		a.Imm = int64(w.get(o.pos, o.width) | w.get(o.splitPos, o.splitW)<<o.width)
	case fH, fHB, fSBS:
		a.Imm = int64(w.get(o.pos, o.width))
	case fT:
		a.Imm = signExtend(w.get(o.pos+2, o.width-2), o.width-2) * 4
	case fC:
		a.Imm = int64(w.get(o.pos, 14) * 4)
		a.Bank = uint8(w.get(o.pos+14, 5))
	case fCX, fCXU:
		a.Indexed, a.UIndex = true, o.kind == fCXU
		a.N = uint8(w.get(o.pos, 8))
		a.Imm = int64(w.get(38, 16))
		a.Bank = uint8(w.get(54, 5))
	case fMG, fMA, fMS, fMX:
		a.N = uint8(w.get(o.pos, 8))
		a.Imm = signExtend(w.get(o.offPos, o.offW), o.offW)
		switch o.kind {
		case fMG, fMA:
			a.W64 = o.kind == fMG
			a.DescShown = o.descShown
			if o.desc != 0 {
				a.Desc = uint8(w.get(o.desc, 6))
			}
		case fMS:
			a.Scale = [4]uint8{0, 4, 8, 16}[w.get(78, 2)]
		}
	}
	return a
}

// fixOK checks the value constraints of a form's operand.
func (o ospec) fixOK(a Operand) bool {
	switch o.kind {
	case fI, fU:
		if o.fixReg >= 0 && a.Imm != int64(o.fixReg) {
			return false
		}
		// nvdisasm 11.8 prints IMAD.U32 R0, R1, 0x10000, RZ rather than
		// IMAD.SHL.U32 for that one power of two (every other from 0x2 to
		// 0x40000000 prints .SHL; measured on raw words).
		if o.pow2 && (a.Imm <= 0 || a.Imm&(a.Imm-1) != 0 || a.Imm == 0x10000) {
			return false
		}
		if o.nz && a.Imm == 0 {
			return false
		}
		return true
	}
	return o.fixReg < 0 || int(a.N) == o.fixReg
}
