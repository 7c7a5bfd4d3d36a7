// Package cuda is tcrt's CUDA backend, written once over the driver layer
// of package runtime/cuda/driver and registered as backend "cuda" in every
// build.
//
// Drivers. The default build loads libcuda.so.1 at run time with purego
// (driver.Load; no cgo): the binary starts on every host, and
// runtime.Open with the auto backend falls back to the CPU, with the
// reason (runtime.Runtime.BackendReason), when the library, a symbol,
// cuInit, the driver version or a device is missing. Options.CUDALib (or
// TCRT_CUDA_LIB) names another library path.
//
// With -tags cuda the backend runs over gorgonia.org/cu instead (plus a
// small cgo shim for the calls cu lacks), for programs that already use cu
// and want its context shared. That build links libcuda at build time, so
// the binary does not start without the NVIDIA driver, and cu's package
// init calls cuInit and exits the process (os.Exit(1)) when it fails:
// there is no CPU fallback in that build on a host without a working GPU.
// Choose it only for GPU-only deployments that need cu.
//
// The simulated SM86/SM89 device (package runtime/sim) is this same
// backend over a simulator driver (Open with Config.Driver), so
// everything above the driver — the device worker, streams and events,
// the staged host copies, the pool, module selection and refusal, launches
// and the mapping of result codes to the tile sentinels — runs in plain
// go test.
//
// Threads. The driver's current context is per OS thread, so each device
// has one worker goroutine locked to its OS thread with the device's
// primary context current, and every driver call runs on it (worker.do);
// callers batch the calls of one step into one hop. Runtimes opened on the
// same device share its worker and primary context.
package cuda
