// Package fallback holds the pure-Go implementations of every tcrt op, over
// plain host memory. Each op has two: a plainly written reference (float64
// accumulation, no blocking, no parallelism) that is the oracle every other
// implementation in tcrt is tested against, and a fast path (packed panels,
// cache blocking, parallel over cores, SIMD micro-kernels selected at run time
// with klauspost/cpuid, and a plain-Go kernel for other CPUs).
//
// The package knows nothing of devices or streams: the runtime's CPU backend
// wraps these functions as kernels.
package fallback
