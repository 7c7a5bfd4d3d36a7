//go:build linux

package bench_test

import "syscall"

// threadCPU returns the CPU time, user and system, the calling OS thread
// has used (getrusage RUSAGE_THREAD), in seconds, or -1 where unknown. A
// single-threaded benchmark locked to its thread divides its work by it to
// get a rate that other processes on a busy machine do not take their
// share of (cache and memory contention remain).
func threadCPU() float64 {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return -1
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
