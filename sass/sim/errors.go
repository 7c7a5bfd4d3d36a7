package sim

import (
	"errors"
	"fmt"
)

// Simulator faults. Every error Launch returns for a running program is a
// *Fault whose Kind is one of these, so callers test with errors.Is.
var (
	// ErrOutOfBounds: a global access outside every mapped region, a
	// shared access outside the CTA's shared memory, or a constant read
	// outside the bank.
	ErrOutOfBounds = errors.New("sass sim: access out of bounds")
	// ErrMisaligned: an access whose address is not a multiple of its
	// width (LDSM rows: 16 bytes).
	ErrMisaligned = errors.New("sass sim: misaligned access")
	// ErrUninitialized: in poison mode, a read of a register, predicate
	// or uniform register no instruction has written in that lane (or a
	// value a SHFL took from a lane that did not take part).
	ErrUninitialized = errors.New("sass sim: read of a never-written register")
	// ErrDeadlock: every live warp waits at a barrier that can never
	// complete.
	ErrDeadlock = errors.New("sass sim: barrier deadlock")
	// ErrScoreboard: an instruction waits (wait mask or DEPBAR) on a
	// scoreboard that no instruction in flight has set; reported only
	// under Config.StrictScoreboards.
	ErrScoreboard = errors.New("sass sim: wait on a scoreboard nothing set")
	// ErrInFlight: shared bytes an LDGSTS copy still has in flight read
	// or written before the DEPBAR (and, for other threads, the BAR.SYNC)
	// that makes them visible.
	ErrInFlight = errors.New("sass sim: access to in-flight LDGSTS bytes")
	// ErrDivergent: a branch, barrier or warp-wide instruction whose
	// guard differs across the warp's active lanes; the simulator does not
	// reconverge divergent warps.
	ErrDivergent = errors.New("sass sim: divergent warp")
	// ErrUnsupported: an instruction (or a form of it) the simulator
	// does not model, or a malformed one (operands of the wrong kind, a
	// register tuple past R254, a branch outside the program).
	ErrUnsupported = errors.New("sass sim: instruction not modelled")
	// ErrStepLimit: a CTA ran more warp instructions than
	// Config.MaxSteps allows (a program that never ends).
	ErrStepLimit = errors.New("sass sim: step limit exceeded")
	// ErrConfig: a launch configuration the simulator refuses (no
	// program, bad dimensions, no memory).
	ErrConfig = errors.New("sass sim: bad launch configuration")
	// ErrTrap: the program executed BPT.TRAP or BPT.INT (PTX trap, brkpt):
	// on hardware the launch ends with an error.
	ErrTrap = errors.New("sass sim: trap")
)

// Fault is a fault of a simulated program: what went wrong (Kind, one
// of the Err* sentinels), where (the CTA, the warp within it, the lane,
// the instruction's index in the program and its nvdisasm text) and a
// detail such as the address.
type Fault struct {
	Kind   error
	CTA    [3]int
	Warp   int
	Lane   int
	Index  int
	Text   string
	Detail string
}

// Error describes the fault.
func (f *Fault) Error() string {
	if f == nil {
		return "sass sim: <nil fault>"
	}
	s := fmt.Sprintf("%v: CTA (%d,%d,%d) warp %d lane %d: instruction %d `%s`", f.Kind, f.CTA[0], f.CTA[1], f.CTA[2],
		f.Warp, f.Lane, f.Index, f.Text)
	if f.Detail != "" {
		s += ": " + f.Detail
	}
	return s
}

// Unwrap returns the Kind, for errors.Is.
func (f *Fault) Unwrap() error {
	if f == nil {
		return nil
	}
	return f.Kind
}
