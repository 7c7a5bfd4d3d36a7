package sass

import (
	"errors"
	"fmt"
)

// Simulator faults. Every error Launch returns for a running program is a
// *SimFault whose Kind is one of these, so callers test with errors.Is.
var (
	// ErrSimOutOfBounds: a global access outside every mapped region, a
	// shared access outside the CTA's shared memory, or a constant read
	// outside the bank.
	ErrSimOutOfBounds = errors.New("sass sim: access out of bounds")
	// ErrSimMisaligned: an access whose address is not a multiple of its
	// width (LDSM rows: 16 bytes).
	ErrSimMisaligned = errors.New("sass sim: misaligned access")
	// ErrSimUninitialized: in poison mode, a read of a register, predicate
	// or uniform register no instruction has written in that lane (or a
	// value a SHFL took from a lane that did not take part).
	ErrSimUninitialized = errors.New("sass sim: read of a never-written register")
	// ErrSimDeadlock: every live warp waits at a barrier that can never
	// complete.
	ErrSimDeadlock = errors.New("sass sim: barrier deadlock")
	// ErrSimScoreboard: an instruction waits (wait mask or DEPBAR) on a
	// scoreboard that no instruction in flight has set; reported only
	// under SimConfig.StrictScoreboards.
	ErrSimScoreboard = errors.New("sass sim: wait on a scoreboard nothing set")
	// ErrSimInFlight: shared bytes an LDGSTS copy still has in flight read
	// or written before the DEPBAR (and, for other threads, the BAR.SYNC)
	// that makes them visible.
	ErrSimInFlight = errors.New("sass sim: access to in-flight LDGSTS bytes")
	// ErrSimDivergent: a branch, barrier or warp-wide instruction whose
	// guard differs across the warp's active lanes; the simulator does not
	// reconverge divergent warps.
	ErrSimDivergent = errors.New("sass sim: divergent warp")
	// ErrSimUnsupported: an instruction (or a form of it) the simulator
	// does not model, or a malformed one (operands of the wrong kind, a
	// register tuple past R254, a branch outside the program).
	ErrSimUnsupported = errors.New("sass sim: instruction not modelled")
	// ErrSimStepLimit: a CTA ran more warp instructions than
	// SimConfig.MaxSteps allows (a program that never ends).
	ErrSimStepLimit = errors.New("sass sim: step limit exceeded")
	// ErrSimConfig: a launch configuration the simulator refuses (no
	// program, bad dimensions, no memory).
	ErrSimConfig = errors.New("sass sim: bad launch configuration")
)

// SimFault is a fault of a simulated program: what went wrong (Kind, one
// of the ErrSim sentinels), where (the CTA, the warp within it, the lane,
// the instruction's index in the program and its nvdisasm text) and a
// detail such as the address.
type SimFault struct {
	Kind   error
	CTA    [3]int
	Warp   int
	Lane   int
	Index  int
	Text   string
	Detail string
}

// Error describes the fault.
func (f *SimFault) Error() string {
	s := fmt.Sprintf("%v: CTA (%d,%d,%d) warp %d lane %d: instruction %d `%s`", f.Kind, f.CTA[0], f.CTA[1], f.CTA[2],
		f.Warp, f.Lane, f.Index, f.Text)
	if f.Detail != "" {
		s += ": " + f.Detail
	}
	return s
}

// Unwrap returns the Kind, for errors.Is.
func (f *SimFault) Unwrap() error { return f.Kind }
