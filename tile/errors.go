package tile

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error tcrt returns for bad input or a failed
// operation wraps exactly one of these, so callers can test with errors.Is.
// The runtime and ops packages re-export the same values.
var (
	// ErrNoDevice: no usable device for the requested backend.
	ErrNoDevice = errors.New("no usable device")
	// ErrShape: a shape, stride, leading dimension or length is inconsistent.
	ErrShape = errors.New("invalid shape")
	// ErrDType: an element type is not allowed where it was given.
	ErrDType = errors.New("invalid element type")
	// ErrOutOfMemory: an allocation could not be satisfied.
	ErrOutOfMemory = errors.New("out of memory")
	// ErrClosed: the runtime, stream, event or buffer has been closed.
	ErrClosed = errors.New("use of closed object")
	// ErrUnsupported: the operation or combination is valid but not implemented
	// by any available kernel or backend.
	ErrUnsupported = errors.New("unsupported")
	// ErrArgument: an argument is invalid for a reason not covered above
	// (a nil buffer, a NaN scale, an unknown enum value, aliasing).
	ErrArgument = errors.New("invalid argument")
	// ErrAlias: an output buffer overlaps an input buffer.
	ErrAlias = errors.New("output aliases input")
	// ErrBounds: an index or address falls outside its memory.
	ErrBounds = errors.New("out of bounds")
	// ErrTileLegality: a tile descriptor or tile op breaks a legality rule of
	// the tile contract (see Contract).
	ErrTileLegality = errors.New("tile legality fault")
	// ErrDevice: the device or its driver reported a failure.
	ErrDevice = errors.New("device error")
)

// ArgError describes a rejected argument: which operation, which argument,
// and which rule it broke. It wraps one of the package's sentinels.
type ArgError struct {
	Op   string // operation, e.g. "matmul"
	Arg  string // argument name, e.g. "lda"
	Rule string // human-readable rule that was broken
	Err  error  // sentinel, e.g. ErrShape
}

// Error implements error ("<nil>" for a nil *ArgError).
func (e *ArgError) Error() string {
	if e == nil {
		return "<nil>"
	}
	s := "tcrt"
	if e.Op != "" {
		s += ": " + e.Op
	}
	if e.Arg != "" {
		s += ": argument " + e.Arg
	}
	if e.Rule != "" {
		s += ": " + e.Rule
	}
	if e.Err != nil {
		s += " (" + e.Err.Error() + ")"
	}
	return s
}

// Unwrap returns the sentinel (nil for a nil *ArgError).
func (e *ArgError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// Errorf builds an *ArgError for op and arg wrapping sentinel, with the rule
// formatted from format and args.
func Errorf(sentinel error, op, arg, format string, args ...any) error {
	return &ArgError{Op: op, Arg: arg, Rule: fmt.Sprintf(format, args...), Err: sentinel}
}
