//go:build !linux

package runtime

// hostMemory is unknown outside Linux: no default limit on the CPU.
func hostMemoryBytes() int64 { return 0 }
