package runtime

import (
	"fmt"
	"strings"
)

// BackendKind names a backend.
type BackendKind string

// Backends.
const (
	BackendAuto BackendKind = "auto" // CUDA if built in and usable, else CPU
	BackendCPU  BackendKind = "cpu"
	BackendCUDA BackendKind = "cuda"
)

// Device describes the device a runtime runs on. CPU fields are set on the
// CPU backend, GPU fields on the CUDA backend.
type Device struct {
	Backend BackendKind
	Name    string // CPU brand string or GPU name
	Vendor  string

	// CPU.
	Cores     int      // physical cores reported by cpuid
	Threads   int      // worker goroutines the runtime uses
	Features  []string // SIMD features relevant to tcrt's kernels (AVX2, FMA3, AVX512F, …)
	L1DBytes  int      // per core
	L2Bytes   int      // per core
	L3Bytes   int      // total
	CacheLine int

	// GPU.
	Major, Minor          int   // compute capability
	SMs                   int   // multiprocessors
	MemoryBytes           int64 // global memory
	SharedPerBlock        int   // default shared-memory limit per block
	SharedPerBlockOptin   int   // opt-in maximum (cuFuncSetAttribute)
	L2CacheBytes          int
	ClockKHz, MemClockKHz int
	MemBusWidth           int
}

// SM returns the compute capability as one number (86 for 8.6), 0 on CPUs.
func (d Device) SM() int { return d.Major*10 + d.Minor }

// String is a one-line description.
func (d Device) String() string {
	switch d.Backend {
	case BackendCUDA:
		return fmt.Sprintf("cuda: %s (sm_%d, %d SMs, %.1f GiB, %d KiB shared/block opt-in, %d MiB L2)",
			d.Name, d.SM(), d.SMs, float64(d.MemoryBytes)/(1<<30), d.SharedPerBlockOptin>>10, d.L2CacheBytes>>20)
	default:
		return fmt.Sprintf("cpu: %s (%s, %d cores, %d threads, %s; L1d %d KiB, L2 %d KiB, L3 %d MiB)",
			d.Name, d.Vendor, d.Cores, d.Threads, strings.Join(d.Features, " "), d.L1DBytes>>10, d.L2Bytes>>10, d.L3Bytes>>20)
	}
}
