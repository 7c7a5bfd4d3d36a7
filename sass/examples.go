package sass

import "sort"

// Arch returns the first architecture (86 or 89) whose nvdisasm accepts the
// instruction's form; 0 if it matches no form.
func (i Inst) Arch() int {
	f, _, err := i.findForm()
	if err != nil {
		return 0
	}
	return f.arch
}

// exampleOperand returns a valid operand for spec o; k varies registers.
func exampleOperand(o ospec, k int) Operand {
	a := Operand{Kind: o.operandKind(), Sel: o.sel}
	switch o.kind {
	case fR:
		a.N = uint8(4 + 4*k)
	case fP:
		a.N = uint8(1 + k%5)
	case fUR:
		a.N = 4
	case fUP:
		a.N = 1
	case fI, fU:
		a.Imm = 3
		if o.width > 6 {
			a.Imm = 0x24
		}
		if o.pow2 {
			a.Imm = 8
		}
	case fF, fD:
		a.Imm = 0x40000000 // 2.0
	case fC:
		a.Imm = 0x164
	case fCX:
		a.Indexed, a.N, a.Imm, a.Bank = true, 8, 0x13, 2
	case fCXU:
		a.Indexed, a.UIndex, a.N, a.Imm, a.Bank = true, true, 4, 0x30, 2
	case fSR:
		a.N = uint8(SRTidX)
	case fT:
		a.Imm = 0x20
	case fSB:
		a.N = 0
	case fH:
		a.Imm = 0x3c00 + int64(k) // 1.0, 1.0009765625, ...
	case fHB:
		a.Imm = 0x3f80 + int64(k) // 1.0, 1.0078125, ...
	case fSBS:
		a.Imm = 0xc // {3,2}
	case fMU:
		a.N, a.UIndex, a.Desc, a.Imm = 2, true, 4, 0x10
	case fMGU, fMGU32:
		a.N, a.UIndex, a.Desc, a.Imm = 2, true, 4, 0x10
		a.W64, a.U32 = o.kind == fMGU, o.kind == fMGU32
	case fMG, fMA, fMS, fMX:
		a.N = 2
		a.Imm = 0x10
		a.W64 = o.kind == fMG
		if o.desc != 0 {
			a.Desc = 4
		}
		if o.kind == fMS {
			a.Scale = 4
		}
	}
	if o.fixReg >= 0 {
		if o.kind == fI || o.kind == fU {
			a.Imm = int64(o.fixReg)
		} else {
			a.N = uint8(o.fixReg)
		}
	}
	return a
}

// Examples returns instructions that exercise every form of the model: for
// each form one instruction with every modifier at its default, and one more
// for each other value of each modifier. The golden corpus generator encodes
// them (for forms ptxas does not emit) and the tests check that every form is
// covered.
func Examples() Program {
	var p Program
	var ops []string
	ensureTables()
	for op := range formsByOp {
		ops = append(ops, string(op))
	}
	sort.Strings(ops)
	for _, op := range ops {
		for _, f := range formsByOp[Op(op)] {
			base := make([]uint64, len(f.mods))
			keys := make([][]uint64, len(f.mods))
			for k, s := range f.mods {
				for v := range s.vals {
					keys[k] = append(keys[k], v)
				}
				sort.Slice(keys[k], func(a, b int) bool { return keys[k][a] < keys[k][b] })
				base[k] = keys[k][0]
				for _, v := range keys[k] {
					if s.vals[v] == "" {
						base[k] = v
						break
					}
				}
			}
			mk := func(vals []uint64) {
				i := Inst{Op: f.op, Mods: f.modTokens(vals)}
				for k, o := range f.ops {
					i.Args = append(i.Args, exampleOperand(o, k))
				}
				if g, _, err := i.findForm(); err != nil || g != f {
					return
				}
				p = append(p, i)
			}
			mk(base)
			for k := range f.mods {
				for _, v := range keys[k] {
					if v == base[k] {
						continue
					}
					vals := append([]uint64(nil), base...)
					vals[k] = v
					mk(vals)
				}
			}
		}
	}
	return p
}
