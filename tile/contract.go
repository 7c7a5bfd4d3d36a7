package tile

import "fmt"

// Contract is the rule set every gather, scatter and atomic tile op obeys,
// on every backend. An op runs in four phases and never goes back:
//
//  1. Legality. The descriptors alone are checked: element types, tile
//     shapes (valid region inside the physical region, powers of two where
//     Pow2 says so), pad and layout, the option values. A failure is a
//     legality fault: an error wrapping ErrTileLegality and a more specific
//     sentinel (ErrShape, ErrDType, ErrArgument), naming the argument and the
//     rule. Nothing has been read from or written to memory.
//  2. Preflight. Every address the op will touch is computed from the index
//     tile and checked against its memory's bounds (and, for atomics, the
//     transfer type's alignment). A failure is an access fault wrapping
//     ErrBounds; still nothing has been written.
//  3. Effects. The reads, writes and atomic read-modify-writes happen. Past
//     the preflight nothing can fail.
//  4. Publication. The destination tile (gathers) becomes visible complete:
//     its valid region holds the results and the rest of its physical region
//     the pad value. A reader ordered after the op (same stream, or after a
//     Synchronize) sees all of it; after a fault it sees the destination as
//     it was.
//
// Op names the operation in errors; Pow2 requires power-of-two physical
// dimensions of the destination; Packed allows packed 4-bit element types.
type Contract struct {
	Op     string
	Pow2   bool
	Packed bool
}

// legalityFault is the error a legality check wraps: ErrTileLegality and a
// more specific sentinel.
type legalityFault struct{ kind error }

func (f legalityFault) Error() string {
	if f.kind == nil {
		return ErrTileLegality.Error()
	}
	return ErrTileLegality.Error() + ": " + f.kind.Error()
}

func (f legalityFault) Unwrap() []error {
	if f.kind == nil {
		return []error{ErrTileLegality}
	}
	return []error{ErrTileLegality, f.kind}
}

// LegalityErrorf returns an *ArgError for op and arg that wraps both
// ErrTileLegality and kind (ErrShape, ErrDType, ErrArgument, or nil for
// none), so errors.Is matches either.
func LegalityErrorf(kind error, op, arg, format string, args ...any) error {
	return &ArgError{Op: op, Arg: arg, Rule: fmt.Sprintf(format, args...), Err: legalityFault{kind}}
}

// Legality returns a legality fault of the contract's op.
func (c Contract) Legality(kind error, arg, format string, args ...any) error {
	return LegalityErrorf(kind, c.Op, arg, format, args...)
}

// Access returns an access fault (ErrBounds) of the contract's op, found by
// the preflight.
func (c Contract) Access(arg, format string, args ...any) error {
	return Errorf(ErrBounds, c.Op, arg, format, args...)
}

// Stage returns a private copy of a destination tile's storage: an op
// computes into it, and Publish makes it visible in one copy, so a reader
// never sees a partly written destination. A Null pad keeps the bytes the
// destination had.
func Stage(dst []byte) []byte { return append([]byte(nil), dst...) }

// Publish copies a staged tile into its destination.
func Publish(dst, staged []byte) { copy(dst, staged) }
