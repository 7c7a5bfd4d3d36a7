package ops

import (
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// The sentinel errors ops returns (the tile package's values).
var (
	ErrShape        = tile.ErrShape
	ErrDType        = tile.ErrDType
	ErrClosed       = tile.ErrClosed
	ErrUnsupported  = tile.ErrUnsupported
	ErrArgument     = tile.ErrArgument
	ErrAlias        = tile.ErrAlias
	ErrBounds       = tile.ErrBounds
	ErrTileLegality = tile.ErrTileLegality
	ErrOutOfMemory  = tile.ErrOutOfMemory
	ErrNoDevice     = tile.ErrNoDevice
	// ErrDevice is what a fault inside a kernel (a device error, or a
	// panic in a CPU kernel) comes back as.
	ErrDevice = tile.ErrDevice
)

// checkRuntime checks that rt is set and that the optional stream s belongs
// to it; op names the operation in the error.
func checkRuntime(rt *runtime.Runtime, s *runtime.Stream, op string) error {
	if rt == nil {
		return tile.Errorf(ErrArgument, op, "rt", "runtime is nil")
	}
	if s != nil && s.Runtime() != rt {
		return tile.Errorf(ErrArgument, op, "Stream", "stream belongs to another runtime")
	}
	return nil
}

// explain is the runtime's explanation of a validated call, or the error
// of the runtime's operand checks (engine.CheckArgs: buffers, spans,
// aliasing), which Run and every Plan apply once before launching.
func explain(rt *runtime.Runtime, op string, args any) (Explanation, error) {
	e := ert(rt)
	if err := e.CheckArgs(op, args); err != nil {
		return Explanation{}, err
	}
	return publicExplanation(e.Explain(op, args)), nil
}
