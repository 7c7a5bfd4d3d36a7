//go:build !linux

package bench_test

// threadCPU is unknown here (see threadcpu_linux_test.go).
func threadCPU() float64 { return -1 }
