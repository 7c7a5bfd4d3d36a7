package gen

import (
	"fmt"

	"github.com/tcrt-go/tcrt/sass"
)

// The scoreboard bookkeeping of the generator. The code is emitted in
// program order; for every variable-latency instruction the emitter names
// the scoreboard it sets (builder.addSB), and the tracker adds to each instruction
// the wait mask its register dependences need: a read (or guard) of a
// register a pending instruction writes, or a write of a register a
// pending instruction writes or reads late. A wait on scoreboard n retires
// everything that set n (the hardware counts; a wait ends at zero), so the
// tracker clears n's pending set.
//
// Labels: every branch and every branch target is a point where nothing is
// pending (drain before a BRA; the branch waits on every set scoreboard),
// so the state is the same on every path into a label and no wait is ever
// on an idle scoreboard (the simulator faults on one).
//
// SB0 is reserved for the asynchronous copies (LDGDEPBAR / DEPBAR.LE),
// which the emitter handles by hand; BAR and DEPBAR set nothing.
type tracker struct {
	writes [6]map[sass.Loc]bool
	late   [6]map[sass.Loc]bool
}

func newTracker() *tracker {
	t := &tracker{}
	for i := range t.writes {
		t.writes[i] = map[sass.Loc]bool{}
		t.late[i] = map[sass.Loc]bool{}
	}
	return t
}

// pendingMask is the set of scoreboards with something in flight.
func (t *tracker) pendingMask() uint8 {
	var m uint8
	for i := 1; i < 6; i++ {
		if len(t.writes[i]) > 0 || len(t.late[i]) > 0 {
			m |= 1 << i
		}
	}
	return m
}

func (t *tracker) clear(mask uint8) {
	for i := 1; i < 6; i++ {
		if mask>>i&1 == 1 {
			clear(t.writes[i])
			clear(t.late[i])
		}
	}
}

// place returns i with the waits it needs and the scoreboard sb set
// (sb ignored for fixed-latency instructions), and records what it leaves
// pending.
func (t *tracker) place(i sass.Inst, sb sass.Scoreboard) (sass.Inst, error) {
	d, err := sass.DepsOf(i)
	if err != nil {
		return i, fmt.Errorf("sm86attn: %s: %w", i, err)
	}
	var need uint8
	reads := d.Reads
	if d.HasGuard {
		reads = append(append([]sass.Loc{}, reads...), d.Guard)
	}
	for n := 1; n < 6; n++ {
		for _, l := range reads {
			if t.writes[n][l] {
				need |= 1 << n
			}
		}
		for _, l := range d.Writes {
			if t.writes[n][l] || t.late[n][l] {
				need |= 1 << n
			}
		}
	}
	t.clear(need)
	i = i.Wait(i.Ctrl.Wait | need)
	if !d.Class.Variable() {
		return i, nil
	}
	switch i.Op {
	case "BAR", "DEPBAR", "LDGDEPBAR":
		return i, nil
	}
	if sb == sass.NoSB || sb == sass.SB0 {
		return i, fmt.Errorf("sm86attn: %s: variable-latency instruction without a scoreboard", i)
	}
	n := sb.Index()
	if len(d.Writes) > 0 {
		i = i.WriteSB(sb)
		for _, l := range d.Writes {
			t.writes[n][l] = true
		}
	} else {
		i = i.ReadSB(sb)
	}
	for _, l := range d.Late {
		t.late[n][l] = true
	}
	return i, nil
}
