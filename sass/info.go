package sass

// Class is a coarse opcode class, for schedulers and simulators.
type Class uint8

// Opcode classes.
const (
	ClassOther   Class = iota
	ClassInt           // integer ALU (IADD3, LOP3, SHF, IMAD, ...)
	ClassFloat         // binary32 / half ALU (FFMA, FADD, HFMA2, ...)
	ClassMUFU          // multi-function unit
	ClassConvert       // I2F, F2I, F2F, I2FP, F2FP
	ClassTensor        // HMMA
	ClassMemory        // loads, stores, atomics, async copies
	ClassBarrier       // BAR, DEPBAR, LDGDEPBAR
	ClassControl       // BRA, EXIT, NOP
	ClassMove          // MOV, S2R, CS2R, ULDC, SHFL
)

type opInfo struct {
	class Class
	// variable-latency: consumers must wait on a scoreboard (sm86.md, ptxas
	// practice); the others are fixed latency, covered by stalls.
	variable bool
}

var opInfos = map[Op]opInfo{
	"MOV": {ClassMove, false}, "S2R": {ClassMove, true}, "CS2R": {ClassMove, false}, "S2UR": {ClassMove, true},
	"ULDC": {ClassMove, false}, "SHFL": {ClassMove, true},
	"IMAD": {ClassInt, false}, "IADD3": {ClassInt, false}, "LOP3": {ClassInt, false}, "SHF": {ClassInt, false},
	"LEA": {ClassInt, false}, "IMNMX": {ClassInt, false}, "PRMT": {ClassInt, false}, "SEL": {ClassInt, false},
	"ISETP": {ClassInt, false},
	"FADD":  {ClassFloat, false}, "FMUL": {ClassFloat, false}, "FFMA": {ClassFloat, false}, "FMNMX": {ClassFloat, false},
	"FSEL": {ClassFloat, false}, "FSETP": {ClassFloat, false}, "HADD2": {ClassFloat, false}, "HMUL2": {ClassFloat, false},
	"HFMA2": {ClassFloat, false},
	"MUFU":  {ClassMUFU, true},
	"I2F":   {ClassConvert, true}, "F2I": {ClassConvert, true}, "F2F": {ClassConvert, true}, "I2FP": {ClassConvert, false},
	"F2FP": {ClassConvert, false},
	"HMMA": {ClassTensor, true},
	"LDG":  {ClassMemory, true}, "STG": {ClassMemory, true}, "LDS": {ClassMemory, true}, "STS": {ClassMemory, true},
	"LDSM": {ClassMemory, true}, "LDGSTS": {ClassMemory, true}, "RED": {ClassMemory, true}, "ATOMG": {ClassMemory, true},
	"BAR": {ClassBarrier, true}, "DEPBAR": {ClassBarrier, false}, "LDGDEPBAR": {ClassBarrier, true},
	"BRA": {ClassControl, false}, "EXIT": {ClassControl, false}, "NOP": {ClassControl, false},
}

// Class returns the opcode class.
func (i Inst) Class() Class { return opInfos[i.Op].class }

// VariableLatency reports whether the instruction's results (or, for
// stores, reductions and barriers, its reading of its sources) complete
// after a variable delay, so that dependants must wait on a scoreboard
// (Ctrl.WriteSB / ReadSB) rather than on stall counts.
func (i Inst) VariableLatency() bool { return opInfos[i.Op].variable }

// Loc is a register location an instruction reads or writes.
type Loc struct {
	Kind Kind // KReg, KPred, KUReg or KUPred
	N    uint8
}

func (i Inst) hasMod(m string) bool {
	for _, x := range i.Mods {
		if x == m {
			return true
		}
	}
	return false
}

// memWidth returns the number of 32-bit registers a load or store moves.
func (i Inst) memWidth() int {
	switch {
	case i.hasMod("128"):
		return 4
	case i.hasMod("64"):
		return 2
	}
	return 1
}

// width returns how many consecutive registers operand k spans.
func (i Inst) width(k int, dst bool) int {
	switch i.Op {
	case "LDG", "LDS", "STG", "STS":
		if (dst && i.Op[0] == 'L') || (!dst && i.Args[k].Kind == KReg && i.Op[0] == 'S') {
			return i.memWidth()
		}
	case "LDSM":
		if dst {
			switch {
			case i.hasMod("4"):
				return 4
			case i.hasMod("2"):
				return 2
			}
		}
	case "HMMA":
		n := []int{4, 4, 2, 4}
		if i.hasMod("1688") {
			n = []int{4, 2, 1, 4}
		}
		if k < 4 {
			return n[k]
		}
	case "IMAD":
		if i.hasMod("WIDE") && (k == 0 || k == 3) {
			return 2
		}
	case "RED", "ATOMG":
		if i.hasMod("64") || i.hasMod("F64") {
			if i.Args[k].Kind == KReg {
				return 2
			}
		}
	case "F2F":
		if len(i.Mods) >= 2 && (k == 0 && i.Mods[0] == "F64" || k == 1 && i.Mods[1] == "F64") {
			return 2
		}
	case "I2F":
		if k == 0 && i.hasMod("F64") || k == 1 && (i.hasMod("S64") || i.hasMod("U64")) {
			return 2
		}
	case "F2I":
		if k == 0 && (i.hasMod("S64") || i.hasMod("U64")) || k == 1 && i.hasMod("F64") {
			return 2
		}
	case "SHF":
		return 1
	}
	return 1
}

func (i Inst) locs(dst bool) []Loc {
	f, _, err := i.findForm()
	if err != nil {
		return nil
	}
	var out []Loc
	add := func(kind Kind, n uint8, w int) {
		for j := 0; j < w; j++ {
			m := int(n) + j
			if kind == KReg && m >= 255 || kind == KPred && m >= 7 || kind == KUReg && m >= 63 || kind == KUPred && m >= 7 {
				return
			}
			out = append(out, Loc{kind, uint8(m)})
		}
	}
	for k, o := range f.ops {
		a := i.Args[k]
		if a.Kind == KMem {
			if !dst {
				w := 1
				if a.W64 {
					w = 2
				}
				add(KReg, a.N, w)
				if o.desc != 0 {
					add(KUReg, a.Desc, 2)
				}
			}
			continue
		}
		if o.dst != dst {
			continue
		}
		switch a.Kind {
		case KReg, KPred, KUReg, KUPred:
			add(a.Kind, a.N, i.width(k, dst))
		}
	}
	if !dst && i.Guard.Set {
		add(KPred, uint8(i.Guard.P), 1)
	}
	return out
}

// Writes returns the registers and predicates the instruction writes
// (register pairs and quads expanded; RZ and PT omitted).
func (i Inst) Writes() []Loc { return i.locs(true) }

// Reads returns the registers and predicates the instruction reads: its
// source operands (pairs and quads expanded), address registers, the
// descriptor pair of a global access, and the guard predicate.
func (i Inst) Reads() []Loc { return i.locs(false) }
