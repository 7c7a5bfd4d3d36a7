package engine

import "github.com/tcrt-go/tcrt/tile"

// HostMemory returns the bytes of memory this process may use: the least of
// the host's physical memory, its control group's limit, the address-space
// and data rlimits (ulimit -v, -d) and Go's memory limit (GOMEMLIMIT); 0 when
// the platform does not say (then the CPU backend has no default limit).
func HostMemory() int64 { return hostMemoryBytes() }

// memoryHeadroom is what a default memory limit leaves to the rest of the
// process (Go's heap, goroutine stacks, the program around the library): an
// eighth of the memory, at least 256 MiB, and never more than half.
func memoryHeadroom(total int64) int64 {
	return min(max(total/8, 256<<20), total/2)
}

// DefaultMemoryLimit is the memory limit Open uses when Options.MemoryLimit
// is 0 for a device with total bytes of memory (HostMemory on the CPU):
// total less headroom; 0 (no limit) when total is unknown.
func DefaultMemoryLimit(total int64) int64 {
	if total <= 0 {
		return 0
	}
	return total - memoryHeadroom(total)
}

// CheckHostAlloc returns an error wrapping ErrOutOfMemory, naming op and
// arg, when a host allocation of n elements of size bytes each (an
// ops-side table, history or scratch space outside any runtime's buffers)
// overflows or exceeds DefaultMemoryLimit(HostMemory()).
func CheckHostAlloc(op, arg string, n, size int) error {
	b, ok := tile.MulSize(n, size)
	if !ok {
		return tile.Errorf(ErrOutOfMemory, op, arg, "%d elements of %d bytes overflow", n, size)
	}
	if lim := DefaultMemoryLimit(HostMemory()); lim > 0 && int64(b) > lim {
		return tile.Errorf(ErrOutOfMemory, op, arg, "%d bytes exceed the host memory limit of %d", b, lim)
	}
	return nil
}
