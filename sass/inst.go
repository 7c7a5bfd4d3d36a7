package sass

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Op is an opcode mnemonic as nvdisasm prints it (the text before the first
// '.'), e.g. "FFMA".
type Op string

// Cond is an instruction's guard predicate: the zero value (Set false) is
// "always"; otherwise the instruction executes in threads where P (or, with
// Not, !P) is true. Uniform marks a uniform predicate UP0..UP6 (UPT for
// P = PT): the uniform datapath's instructions (UIADD3, ULOP3, ...) are
// guarded by those, in the same bits (ptxas's @!UP2 ULOP3.LUT).
type Cond struct {
	Set     bool
	P       Pred
	Not     bool
	Uniform bool
}

// If returns the guard @p.
func If(p Pred) Cond { return Cond{Set: true, P: p} }

// IfNot returns the guard @!p.
func IfNot(p Pred) Cond { return Cond{Set: true, P: p, Not: true} }

// String prints "@P0 ", "@!P1 " or "" for always.
func (c Cond) String() string {
	if !c.Set {
		return ""
	}
	p := c.P.String()
	if c.Uniform {
		p = "U" + p
	}
	if c.Not {
		return "@!" + p + " "
	}
	return "@" + p + " "
}

// Inst is one SASS instruction: guard, opcode, modifiers (the dotted tokens
// after the opcode, in nvdisasm's order: "WIDE", "U32"), operands (in
// nvdisasm's order, destinations first) and the control word.
type Inst struct {
	Guard Cond
	Op    Op
	Mods  []string
	Args  []Operand
	Ctrl  Control
}

// Program is a sequence of instructions at consecutive 16-byte addresses
// from 0.
type Program []Inst

// New returns the instruction op.mods args with no guard and a zero control
// word.
func New(op Op, mods string, args ...Operand) Inst {
	i := Inst{Op: op, Args: args}
	if mods != "" {
		i.Mods = strings.Split(mods, ".")
	}
	return i
}

// With returns i with the modifiers (dotted tokens, e.g. "FTZ.RM") appended.
func (i Inst) With(mods string) Inst {
	i.Mods = append(append([]string(nil), i.Mods...), strings.Split(mods, ".")...)
	return i
}

// When returns i guarded by c.
func (i Inst) When(c Cond) Inst { i.Guard = c; return i }

// C returns i with control word c.
func (i Inst) C(c Control) Inst { i.Ctrl = c; return i }

// Stall returns i with the stall count n.
func (i Inst) Stall(n uint8) Inst { i.Ctrl.Stall = n; return i }

// Yield returns i with the yield flag set.
func (i Inst) Yield() Inst { i.Ctrl.Yield = true; return i }

// WriteSB returns i releasing scoreboard s when its results are written.
func (i Inst) WriteSB(s Scoreboard) Inst { i.Ctrl.WriteSB = s; return i }

// ReadSB returns i releasing scoreboard s when its sources have been read.
func (i Inst) ReadSB(s Scoreboard) Inst { i.Ctrl.ReadSB = s; return i }

// Wait returns i waiting on the scoreboards of mask (bit n = SBn).
func (i Inst) Wait(mask uint8) Inst { i.Ctrl.Wait = mask; return i }

// Reuse returns i with the operand reuse flags (bit 0 A, 1 B, 2 C).
func (i Inst) Reuse(mask uint8) Inst { i.Ctrl.Reuse = mask; return i }

func (i Inst) guardBits() (uint64, error) {
	if !i.Guard.Set {
		return 7, nil
	}
	if i.Guard.P > PT {
		return 0, fmt.Errorf("%w: guard predicate %d", ErrInvalid, i.Guard.P)
	}
	v := uint64(i.Guard.P)
	if i.Guard.Not {
		v |= 8
	}
	return v, nil
}

// findForm returns the form and slot values that encode i.
func (i Inst) findForm() (*form, []uint64, error) {
	ensureTables()
	fs, ok := formsByOp[i.Op]
	if !ok {
		return nil, nil, fmt.Errorf("%w: %s", ErrUnknownOp, i.Op)
	}
	var firstErr error
	for _, f := range fs {
		if len(f.ops) != len(i.Args) || i.Guard.Set && i.Guard.Uniform != f.uniformGuard {
			continue
		}
		match := true
		for k, o := range f.ops {
			if o.operandKind() != i.Args[k].Kind {
				match = false
				break
			}
			if !o.fixOK(i.Args[k]) {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		vals, ok := f.matchMods(i.Mods)
		if !ok {
			continue
		}
		// a form whose register slots cannot carry the reuse flags is
		// not a match (HADD2.F32 with and without B's reuse slot)
		if err := f.reuseOK(i); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		var w word
		for k, o := range f.ops {
			if err := encodeOperand(&w, o, i.Args[k]); err != nil {
				if firstErr == nil {
					firstErr = err
				}
				match = false
				break
			}
		}
		if match {
			return f, vals, nil
		}
	}
	if firstErr != nil {
		return nil, nil, firstErr
	}
	return nil, nil, fmt.Errorf("%w: %s", ErrNoForm, i.render(nil, 0, true))
}

// Word encodes the instruction as its 16 bytes (low 64 bits first).
func (i Inst) Word() ([16]byte, error) {
	var out [16]byte
	w, err := i.encode()
	if err != nil {
		return out, err
	}
	binary.LittleEndian.PutUint64(out[:8], w[0])
	binary.LittleEndian.PutUint64(out[8:], w[1])
	return out, nil
}

func (i Inst) encode() (word, error) {
	var w word
	if err := i.Ctrl.check(); err != nil {
		return w, err
	}
	g, err := i.guardBits()
	if err != nil {
		return w, err
	}
	f, vals, err := i.findForm()
	if err != nil {
		return w, err
	}
	if err := f.reuseOK(i); err != nil {
		return w, err
	}
	// Two more rules nvdisasm 11.8 enforces (measured): no reuse of both B
	// and C on a yielding instruction, and no reuse of HMMA's C without yield.
	if i.Ctrl.Yield && i.Ctrl.Reuse&6 == 6 {
		return w, fmt.Errorf("%w: reuse of B and C on a yielding instruction", ErrControl)
	}
	if i.Op == "HMMA" && !i.Ctrl.Yield && i.Ctrl.Reuse&4 != 0 {
		return w, fmt.Errorf("%w: HMMA reuse of C", ErrControl)
	}
	w[0], w[1] = f.val[0], f.val[1]
	for k, s := range f.mods {
		s.set(&w, vals[k])
	}
	for k, o := range f.ops {
		if err := encodeOperand(&w, o, i.Args[k]); err != nil {
			return w, err
		}
	}
	w.set(12, 4, g)
	w.set(105, 23, i.Ctrl.bits())
	return w, nil
}

// Encode encodes a program as consecutive 16-byte words.
func Encode(p Program) ([]byte, error) {
	out := make([]byte, 0, 16*len(p))
	for k, i := range p {
		b, err := i.Word()
		if err != nil {
			return nil, fmt.Errorf("instruction %d: %w", k, err)
		}
		out = append(out, b[:]...)
	}
	return out, nil
}

// DecodeWord decodes one 16-byte instruction word. A word is accepted only
// if the model explains every one of its bits (re-encoding it gives the same
// 16 bytes); otherwise the error wraps ErrUnmodeled.
func DecodeWord(b []byte) (Inst, error) {
	if len(b) != 16 {
		return Inst{}, ErrLength
	}
	w := word{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])}
	return decodeWord(w)
}

func decodeWord(w word) (Inst, error) {
	ensureTables()
	fs := formsByCode[w.get(0, 12)]
	for _, f := range fs {
		if w[0]&f.mask[0] != f.val[0] || w[1]&f.mask[1] != f.val[1] {
			continue
		}
		i := Inst{Op: f.op, Ctrl: controlFrom(w.get(105, 23))}
		g := w.get(12, 4)
		if g != 7 {
			i.Guard = Cond{Set: true, P: Pred(g & 7), Not: g&8 != 0, Uniform: f.uniformGuard}
		}
		vals := make([]uint64, len(f.mods))
		ok := true
		for k, s := range f.mods {
			v := s.get(w)
			if _, known := s.vals[v]; !known {
				ok = false
				break
			}
			vals[k] = v
		}
		if !ok {
			continue
		}
		i.Mods = f.modTokens(vals)
		for _, o := range f.ops {
			i.Args = append(i.Args, decodeOperand(w, o))
		}
		back, err := i.encode()
		if err != nil || back != w {
			continue
		}
		return i, nil
	}
	if name, ok := unsupportedOps[w.get(0, 12)]; ok && len(fs) == 0 {
		return Inst{}, fmt.Errorf("%w: %w: %s (the texture and surface units are outside the model): %016x %016x", ErrUnmodeled, ErrUnsupported, name, w[0], w[1])
	}
	return Inst{}, fmt.Errorf("%w: %016x %016x", ErrUnmodeled, w[0], w[1])
}

// unsupportedOps names, by 12-bit opcode, the instructions the model
// refuses by name: nvcc's texture and surface objects (tex1Dfetch, tex2D,
// tex2Dgather, surf2Dread/Write through cudaTextureObject_t and
// cudaSurfaceObject_t; the bound forms and the .B forms that take the
// descriptor in a register, as nvdisasm names them). They need a texture
// unit (filtering, addressing modes, formats) and a descriptor heap that
// neither the simulator nor the runtime has.
var unsupportedOps = map[uint64]string{
	0xb60: "TEX", 0x361: "TEX",
	0xb66: "TLD", 0x367: "TLD",
	0xb63: "TLD4", 0x364: "TLD4",
	0x99a: "SULD", 0x99e: "SUST",
}

// Decode decodes consecutive 16-byte words.
func Decode(b []byte) (Program, error) {
	if len(b)%16 != 0 {
		return nil, ErrLength
	}
	p := make(Program, 0, len(b)/16)
	for k := 0; k < len(b); k += 16 {
		i, err := DecodeWord(b[k : k+16])
		if err != nil {
			return nil, fmt.Errorf("word %d: %w", k/16, err)
		}
		p = append(p, i)
	}
	return p, nil
}

// reuseShown reports whether nvdisasm prints .reuse flags for this control
// word: only when the yield flag is clear (measured, nvdisasm 11.8).
func (c Control) reuseShown() bool { return !c.Yield }

// text prints the instruction at address pc; listing prints every reuse
// flag (nvdisasm hides them on yielding instructions).
func (i Inst) text(pc int64, listing bool) string {
	f, _, err := i.findForm()
	if err != nil {
		f = nil
	}
	return i.render(f, pc, listing)
}

func (i Inst) render(f *form, pc int64, listing bool) string {
	var b strings.Builder
	b.WriteString(i.Guard.String())
	b.WriteString(string(i.Op))
	for _, m := range i.Mods {
		if !listing && strings.HasPrefix(m, "_") {
			continue // a hidden modifier: nvdisasm does not print it
		}
		b.WriteString("." + m)
	}
	showReuse := listing || i.Ctrl.reuseShown()
	for k, a := range i.Args {
		if k == 0 || (f != nil && f.ops[k].blank) {
			b.WriteByte(' ')
		} else {
			b.WriteString(", ")
		}
		reuse := false
		if f != nil && showReuse && f.ops[k].reuse >= 0 && i.Ctrl.Reuse>>f.ops[k].reuse&1 != 0 {
			reuse = true
		}
		if f != nil && f.ops[k].showRZ && a.Kind == KMem && a.UIndex {
			b.WriteString(formatMU(a, true))
			continue
		}
		s := a.formatX(pc, reuse, listing, listing && f != nil && f.ops[k].desc != 0)
		if f != nil && f.ops[k].cspace {
			s = strings.Replace(s, "][", "] [", 1)
		}
		b.WriteString(s)
	}
	// nvdisasm 11.8 writes "X;" instead of "X ;" when the stall count, the
	// wait mask are zero and the yield flag is set (measured).
	if i.Ctrl.Stall == 0 && i.Ctrl.Yield && i.Ctrl.Wait == 0 {
		b.WriteString(";")
	} else {
		b.WriteString(" ;")
	}
	return b.String()
}

// Text returns the instruction text nvdisasm -b SM86 -hex prints for the
// word at address pc (without the address and hex columns).
func (i Inst) Text(pc int64) string { return i.text(pc, false) }

// sm89Mods are the modifier spellings nvdisasm -b SM89 uses instead of
// -b SM86's for the same word (measured, nvdisasm 11.8, on ptxas's sm_89
// cubins in testdata/ptxas): op, SM86 tokens, SM89 tokens.
var sm89Mods = []struct {
	op       Op
	from, to string
}{
	{"F2FP", "BF16.PACK_AB", "BF16.F32.PACK_AB"},
	{"F2FP", "PACK_AB", "F16.F32.PACK_AB"},
	{"F2FP", "BF16.PACK_AB.RZ", "BF16.F32.PACK_AB.RZ"},
	{"F2FP", "PACK_AB.RZ", "F16.F32.PACK_AB.RZ"},
	{"F2FP", "BF16.MERGE_C", "BF16.F32.MERGE_C"},
	{"F2FP", "MERGE_C", "F16.F32.MERGE_C"},
	{"F2FP", "BF16.MERGE_C.RZ", "BF16.F32.MERGE_C.RZ"},
	{"F2FP", "MERGE_C.RZ", "F16.F32.MERGE_C.RZ"},
}

// TextArch is Text as nvdisasm -b SM<arch> prints it: for arch 89 a few
// modifiers are spelled differently (sm89Mods); other arches print as SM86.
func (i Inst) TextArch(arch int, pc int64) string {
	t := i.Text(pc)
	if arch != 89 {
		return t
	}
	m := strings.Join(i.Mods, ".")
	for _, r := range sm89Mods {
		if i.Op == r.op && (m == r.from || strings.HasSuffix(m, "."+r.from)) {
			mn := string(i.Op) + "." + m + " "
			return strings.Replace(t, mn, string(i.Op)+"."+strings.TrimSuffix(m, r.from)+r.to+" ", 1)
		}
	}
	return t
}

// String returns Text(0): exactly nvdisasm's text for the word at address 0.
// The control word is not in it except as nvdisasm shows it (".reuse" on
// non-yielding instructions, the ";" spacing); Listing includes it.
func (i Inst) String() string { return i.text(0, false) }

// Listing returns the control word followed by the text at address pc,
// e.g. "[B0-----:R-:W2:-:S04] FFMA R4, R4, R5, R6 ;". Parse reads it back
// exactly.
func (i Inst) Listing(pc int64) string {
	shown := uint8(0)
	if f, _, err := i.findForm(); err == nil {
		for k, o := range f.ops {
			if o.reuse >= 0 && i.Args[k].Kind == KReg {
				shown |= 1 << o.reuse
			}
		}
	}
	return i.Ctrl.format(i.Ctrl.Reuse&^shown) + " " + i.text(pc, true)
}

// Listing prints the program one instruction per line in Inst.Listing form.
func (p Program) Listing() string {
	var b strings.Builder
	for k, i := range p {
		b.WriteString(i.Listing(int64(16 * k)))
		b.WriteByte('\n')
	}
	return b.String()
}

// HasMod reports whether tok is one of i's modifier tokens.
func (i Inst) HasMod(tok string) bool {
	for _, m := range i.Mods {
		if m == tok {
			return true
		}
	}
	return false
}

// reuseOK checks the instruction's reuse flags against the form's operand
// slots: nvdisasm refuses reuse flags on operand slots that hold no register
// (measured): the model refuses them too.
func (f *form) reuseOK(i Inst) error {
	allowed := uint8(8)
	for k, o := range f.ops {
		if o.reuse >= 0 && i.Args[k].Kind == KReg {
			allowed |= 1 << o.reuse
		}
	}
	if i.Ctrl.Reuse&^allowed != 0 {
		return fmt.Errorf("%w: reuse flags %#x on operand slots without a register", ErrControl, i.Ctrl.Reuse)
	}
	return nil
}
