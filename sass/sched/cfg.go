package sched

import "github.com/tcrt-go/tcrt/sass"

// The control-flow graph Check's wait-unset rule runs on.

// cfgTarget returns the index the branch or call at k transfers to: the
// KTarget operand of BRA (also BRA Px, target) and CALL.REL.
func cfgTarget(p sass.Program, k int) (int, bool) {
	i := p[k]
	if i.Op != "BRA" && i.Op != "CALL" {
		return 0, false
	}
	for _, a := range i.Args {
		if a.Kind != sass.KTarget {
			continue
		}
		if a.Imm%16 != 0 {
			return 0, false
		}
		t := k + 1 + int(a.Imm/16)
		if t < 0 || t > len(p) {
			return 0, false
		}
		return t, true
	}
	return 0, false
}

// conditional reports whether a branch at k may fall through: a guard
// other than PT, or a predicate operand (BRA P0, target).
func conditional(i sass.Inst) bool {
	if i.Guard.Set && i.Guard.P != sass.PT {
		return true
	}
	for _, a := range i.Args {
		if a.Kind == sass.KPred && sass.Pred(a.N) != sass.PT {
			return true
		}
	}
	return false
}

// successors returns the control-flow successors of every instruction.
// A call continues into its callee and, after the callee returns, at the
// next instruction: a RET goes to the instruction after each CALL whose
// callee reaches it (ptxas's subroutines follow the kernel's EXIT, one
// RET each or several). BRX (a jump table) may go to any orphan after it
// in its subroutine.
func successors(p sass.Program) [][]int {
	n := len(p)
	out := make([][]int, n)
	var calls []int
	for k, i := range p {
		next := func(t int) {
			if t < n {
				out[k] = append(out[k], t)
			}
		}
		switch i.Op {
		case "EXIT", "BRX", "BRXU", "RET":
			if conditional(i) {
				next(k + 1)
			}
		case "BRA":
			t, ok := cfgTarget(p, k)
			if !ok || conditional(i) {
				next(k + 1)
			}
			if ok {
				next(t)
			}
		case "CALL":
			calls = append(calls, k)
			next(k + 1)
		default:
			next(k + 1)
		}
	}
	// BRX jumps through a table in constant memory: its targets are
	// taken to be the orphans after it in its subroutine, the
	// instructions nothing else reaches (no branch targets them and the
	// one before does not fall through), which is where ptxas puts a
	// switch's cases (control.ptx switch8, kernels/ptx sg.ptx's
	// element-width switches).
	targeted := make([]bool, n)
	for k := range p {
		for _, t := range out[k] {
			targeted[t] = true
		}
		if p[k].Op == "CALL" {
			if t, ok := cfgTarget(p, k); ok && t < n {
				targeted[t] = true
			}
		}
	}
	var orphans []int
	for k := 1; k < n; k++ {
		if !targeted[k] {
			orphans = append(orphans, k)
		}
	}
	for k, i := range p {
		if i.Op != "BRX" && i.Op != "BRXU" {
			continue
		}
		// the cases follow the BRX within its subroutine: up to the
		// next call target
		end := n
		for c := range p {
			if p[c].Op == "CALL" {
				if t, ok := cfgTarget(p, c); ok && t > k && t < end {
					end = t
				}
			}
		}
		for _, o := range orphans {
			if o > k && o < end {
				out[k] = append(out[k], o)
			}
		}
	}
	// Within a procedure a CALL falls through; now add the call and
	// return edges.
	for _, c := range calls {
		t, ok := cfgTarget(p, c)
		if !ok || t >= n {
			continue
		}
		seen := make([]bool, n)
		stack := []int{t}
		seen[t] = true
		for len(stack) > 0 {
			k := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if p[k].Op == "RET" && c+1 < n && !containsInt(out[k], c+1) {
				out[k] = append(out[k], c+1)
			}
			for _, s := range out[k] {
				if p[k].Op == "RET" && s != k+1 {
					continue // return edges lead out of the callee
				}
				if !seen[s] {
					seen[s] = true
					stack = append(stack, s)
				}
			}
		}
	}
	for _, c := range calls {
		if t, ok := cfgTarget(p, c); ok && t < n {
			out[c] = append(out[c], t)
		}
	}
	return out
}

// everSet returns, per instruction, the scoreboards some instruction on
// some path from the entry to it has set, and whether the instruction is
// reachable. A wait does not clear them: ptxas waits again on a
// scoreboard an earlier wait already drained (kernels/mma
// tcrt_mma_64x128_e5m2_nt: SHF.R.U32.HI R4 waits on SB1 at the loop's
// head and IMAD.MOV.U32 R22 five instructions on waits on it again with
// nothing set between), a no-op on hardware, so only a wait on a
// scoreboard nothing before it ever set is reported.
func everSet(p sass.Program, succ [][]int) (in []uint8, reached []bool) {
	in = make([]uint8, len(p))
	reached = make([]bool, len(p))
	if len(p) == 0 {
		return
	}
	reached[0] = true
	work := []int{0}
	queued := make([]bool, len(p))
	queued[0] = true
	for len(work) > 0 {
		k := work[len(work)-1]
		work = work[:len(work)-1]
		queued[k] = false
		i := p[k]
		s := in[k]
		for _, sb := range []sass.Scoreboard{i.Ctrl.WriteSB, i.Ctrl.ReadSB} {
			if n := sb.Index(); n >= 0 && n < 6 {
				s |= 1 << n
			}
		}
		for _, t := range succ[k] {
			if !reached[t] || in[t]|s != in[t] {
				reached[t] = true
				in[t] |= s
				if !queued[t] {
					queued[t] = true
					work = append(work, t)
				}
			}
		}
	}
	return in, reached
}
