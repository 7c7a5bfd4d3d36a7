package cubin

import "errors"

// Sentinel errors: every error the package returns wraps one of them, so
// callers test with errors.Is.
var (
	// ErrFormat: bytes Read (or ParseInfo) cannot take as a cubin: not an
	// ELF64 file, truncated, or inconsistent (a record past its section, a
	// symbol index out of range, a kernel without its sections).
	ErrFormat = errors.New("cubin: malformed cubin")
	// ErrInvalid: a kernel or parameter description Write refuses (an
	// architecture other than sm_86/sm_89, a bad size or alignment, a
	// duplicate kernel, more than the format holds).
	ErrInvalid = errors.New("cubin: invalid kernel description")
)
