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

// planned ends every Plan: the runtime's aliasing rule (runtime.CheckAlias:
// no output shares a buffer with another argument, scale, amax and index
// buffers included) over the finished argument struct, so that each op's
// own checks cannot miss a pair.
func planned[T any](op string, args T, s *runtime.Stream) (T, *runtime.Stream, error) {
	if err := runtime.CheckAlias(op, args); err != nil {
		var zero T
		return zero, nil, err
	}
	return args, s, nil
}
