//go:build !linux

package engine

// hostMemory is unknown outside Linux: no default limit on the CPU.
func hostMemoryBytes() int64 { return 0 }
