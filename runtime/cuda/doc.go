// Package cuda is tcrt's CUDA backend: the driver binding (gorgonia.org/cu
// and a small cgo shim) behind the device seam of package runtime/backend.
// It is built only with -tags cuda; without the tag the package is empty
// and registers nothing. Package ops imports it, so a program built with
// -tags cuda opens CUDA with runtime.Open (Backend "cuda", or "auto" when a
// GPU is usable).
//
// Importing cu runs its init, which calls cuInit and exits the process when
// that fails: binaries built with -tags cuda only start on hosts with a
// working NVIDIA driver (see docs/cuda.md).
package cuda
