package sass

// The dependence model (which registers an instruction reads and writes, and
// its latency class) is DepsOf in deps.go, driven by its table; these methods
// are the Inst-side view of it.

// Class returns the instruction's latency class, ClassNone when the
// dependence table does not cover it.
func (i Inst) Class() Class {
	d, err := DepsOf(i)
	if err != nil {
		return ClassNone
	}
	return d.Class
}

// VariableLatency reports whether the instruction's results (or, for
// stores, reductions and barriers, its reading of its sources) complete
// after a variable delay, so that dependants must wait on a scoreboard
// (Ctrl.WriteSB / ReadSB) rather than on stall counts.
func (i Inst) VariableLatency() bool { return i.Class().Variable() }

// Writes returns the registers and predicates the instruction writes
// (register pairs and quads expanded; RZ and PT omitted).
func (i Inst) Writes() []Loc {
	d, _ := DepsOf(i)
	return d.Writes
}

// Reads returns the registers and predicates the instruction reads: its
// source operands (pairs and quads expanded), address registers, the
// descriptor pair of a global access, and the guard predicate.
func (i Inst) Reads() []Loc {
	d, _ := DepsOf(i)
	r := append([]Loc(nil), d.Reads...)
	if d.HasGuard {
		r = append(r, d.Guard)
	}
	return r
}
