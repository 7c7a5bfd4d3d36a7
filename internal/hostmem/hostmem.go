// Package hostmem allocates large host byte slices without letting the Go
// runtime end the process: a make([]byte, n) that the host cannot back
// (an address-space rlimit, ulimit -v, or simply too little memory) is a
// fatal "out of memory" that no recover catches. Bytes first asks the
// operating system whether it can map n bytes (plus the Go allocator's
// slack), and only then makes the slice, so a request the host cannot back
// is an error wrapping tile.ErrOutOfMemory.
//
// The slice is ordinary Go memory, freed by the garbage collector, so a
// reference kept after a buffer is released stays valid (it is never
// unmapped under a reader). The probe and the make are two steps: another
// allocation between them can still exhaust memory, so the check is a
// guard against requests the host cannot back at all, not a reservation.
package hostmem

import (
	"fmt"

	"github.com/tcrt-go/tcrt/tile"
)

// probeMin is the size below which Bytes does not probe: the Go heap
// serves such requests from memory it mostly holds already.
const probeMin = 16 << 20

// slack is what the Go allocator may need beyond n to serve a large
// object (arena rounding, metadata).
const slack = 64 << 20

// Bytes returns n zeroed bytes with capacity c (≥ n), or an error wrapping
// tile.ErrOutOfMemory when n is negative, c overflows, the host's memory
// limit (limit > 0: physical memory, cgroup or rlimit, as the caller
// measured it) is below c, or the operating system refuses to map c bytes.
func Bytes(n, c int, limit int64) (b []byte, err error) {
	if n < 0 || c < n {
		return nil, fmt.Errorf("tcrt: host allocation of %d bytes (capacity %d): %w", n, c, tile.ErrOutOfMemory)
	}
	if limit > 0 && int64(c) > limit {
		return nil, fmt.Errorf("tcrt: host allocation of %d bytes exceeds the host's %d bytes of memory: %w", c, limit, tile.ErrOutOfMemory)
	}
	if c >= probeMin {
		if err := probe(c + slack); err != nil {
			return nil, fmt.Errorf("tcrt: host allocation of %d bytes: the system cannot map them (%v): %w", c, err, tile.ErrOutOfMemory)
		}
	}
	defer func() {
		if r := recover(); r != nil { // makeslice: len out of range
			b, err = nil, fmt.Errorf("tcrt: host allocation of %d bytes: %v: %w", c, r, tile.ErrOutOfMemory)
		}
	}()
	return make([]byte, n, c), nil
}
