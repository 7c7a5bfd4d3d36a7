package sasskit

import (
	"fmt"

	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/sched"
)

// Builder accumulates a program: its instructions, the loops stall fixing
// must see around ([first, backward BRA]), the EXITs, and labels with the
// branches to them (resolved by Resolve). A family's builder embeds it
// and adds its register map and scheduling policy.
type Builder struct {
	Prog   sass.Program
	Loops  [][2]int
	exits  []int
	labels map[string]int
	fixups []fixup
}

type fixup struct {
	at    int
	label string
}

// Add appends instructions, giving stall 1 to those given none.
func (b *Builder) Add(is ...sass.Inst) {
	for _, i := range is {
		if i.Ctrl.Stall == 0 {
			i.Ctrl.Stall = 1
		}
		b.Prog = append(b.Prog, i)
	}
}

// At appends instructions exactly as given (their control words
// included, stall 0 too).
func (b *Builder) At(is ...sass.Inst) { b.Prog = append(b.Prog, is...) }

// Label names the position of the next instruction.
func (b *Builder) Label(name string) { b.LabelAt(name, len(b.Prog)) }

// LabelAt names instruction k.
func (b *Builder) LabelAt(name string, k int) {
	if b.labels == nil {
		b.labels = map[string]int{}
	}
	b.labels[name] = k
}

// BranchTo says that the next instruction appended is a branch whose
// target is label; Resolve sets it.
func (b *Builder) BranchTo(label string) { b.fixups = append(b.fixups, fixup{len(b.Prog), label}) }

// Exit records that the next instruction appended is an EXIT.
func (b *Builder) Exit() { b.exits = append(b.exits, len(b.Prog)) }

// ExitOffsets are the byte offsets of the recorded EXITs.
func (b *Builder) ExitOffsets() []int {
	var out []int
	for _, e := range b.exits {
		out = append(out, 16*e)
	}
	return out
}

// Resolve sets every branch's target to its label.
func (b *Builder) Resolve() error {
	for _, f := range b.fixups {
		to, ok := b.labels[f.label]
		if !ok {
			return fmt.Errorf("no label %q", f.label)
		}
		b.Prog[f.at].Args[0] = sass.Target(int64(16 * (to - (f.at + 1))))
	}
	return nil
}

// FixStalls raises the stall counts of b.Prog so that every fixed-latency
// result is read (or its guard tested) only after the latency table's
// cycles, along the straight line and around each loop's back edge
// (b.Loops). It never lowers a hand-given stall. Stalls above 11 get the
// yield flag (and lose their reuse flags).
func (b *Builder) FixStalls(lat *sched.LatencyTable) error {
	p := b.Prog
	deps := make([]sass.Deps, len(p))
	for k, i := range p {
		d, err := sass.DepsOf(i)
		if err != nil {
			return fmt.Errorf("instruction %d %s: %w", k, i, err)
		}
		deps[k] = d
	}
	// the sequence analysed: the program, with each loop body repeated
	// once more so that back-edge dependences are seen
	var seq []int
	for k := range p {
		seq = append(seq, k)
		for _, l := range b.Loops {
			if k == l[1] {
				for q := l[0]; q <= l[1]; q++ {
					seq = append(seq, q)
				}
			}
		}
	}
	for pass := 0; pass < 3; pass++ {
		for j := 1; j < len(seq); j++ {
			dj := deps[seq[j]]
			// walk back over producers
			cum := 0
			for q := j - 1; q >= 0 && cum < 16; q-- {
				cq := seq[q]
				cum += int(p[cq].Ctrl.Stall)
				dq := deps[cq]
				if dq.Class.Variable() || dq.Class == sass.ClassBranch || dq.Class == sass.ClassNone {
					continue
				}
				need := 0
				for _, w := range dq.Writes {
					for _, rd := range dj.Reads {
						if rd == w {
							need = max(need, lat.Need(dq.Class, dj.Class))
						}
					}
					if dj.HasGuard && dj.Guard == w {
						need = max(need, lat.Need(dq.Class, sass.ClassGuard))
					}
				}
				if need > cum {
					p[seq[j-1]].Ctrl.Stall += uint8(need - cum)
					cum = need
				}
			}
		}
	}
	for k := range p {
		if p[k].Ctrl.Stall > 15 {
			return fmt.Errorf("instruction %d %s: stall %d", k, p[k], p[k].Ctrl.Stall)
		}
		if p[k].Ctrl.Stall > 11 {
			p[k].Ctrl.Yield = true
			p[k].Ctrl.Reuse = 0
		}
	}
	return nil
}
