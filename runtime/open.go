package runtime

import (
	"context"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/tile"
)

// Options configures Open. The zero value selects the best backend. A
// field set here wins over the environment: the TCRT_* variables (package
// doc) only supply the value of a field left zero.
type Options struct {
	// Backend forces a backend: "cpu", "cuda" or "sim" (the simulated
	// SM86/SM89 GPU); BackendAuto picks CUDA when the driver loads and a
	// device is usable, else the CPU (BackendReason says why). "" means
	// TCRT_BACKEND when it is set, else BackendAuto.
	Backend BackendKind
	// Device is the GPU ordinal on the CUDA backend.
	Device int
	// Threads bounds the CPU goroutines a kernel uses; 0 means TCRT_THREADS
	// when it is set, else GOMAXPROCS.
	Threads int
	// MemoryLimit bounds the bytes of live buffers: an Alloc that would pass
	// it fails with ErrOutOfMemory. 0 means the default, DefaultMemoryLimit
	// of the device's memory (on the CPU, HostMemory: the physical memory or
	// the cgroup limit, whichever is lower), so that an absurd request is an
	// error rather than the end of the process. math.MaxInt64 disables the
	// check. Whatever the limit, an allocation the host cannot back (the
	// CPU's buffers, the simulated device's memory: above HostMemory, or a
	// mapping the system refuses, as under ulimit -v) is ErrOutOfMemory
	// too, never a fatal error of the process.
	MemoryLimit int64
	// SimArch is the compute capability the simulated device models: 86
	// or 89; 0 means TCRT_SIM_ARCH when it is set, else 86.
	SimArch int
	// CUDALib is the path of the CUDA driver library ("": libcuda.so.1,
	// found by the dynamic loader), or TCRT_CUDA_LIB when it is set. The
	// -tags cuda build links the driver at build time and ignores it.
	CUDALib string
	// Kernel forces kernels by name: "name" forces that kernel for its op,
	// "op=name" for the named op; several are separated by commas. ""
	// takes TCRT_KERNEL's value when it is set. The tcrt command's kernels
	// subcommand and every Explain list the names.
	Kernel string
}

// Runtime is an opened backend with its streams, buffers and kernel
// selection. It is safe for concurrent use. Close releases it.
type Runtime struct{ r *engine.Runtime }

// Open returns a runtime on the backend that Options ask for; the
// environment supplies the fields left zero (see Options). With the auto
// backend it tries the registered GPU backends that take part in auto
// selection (CUDA when linked in) and falls back to the CPU when none
// opens, keeping each failure's reason (BackendReason); asking for a
// backend explicitly that is not registered or does not open returns an
// error wrapping ErrNoDevice (for CUDA, a *driver.LoadError of package
// runtime/cuda/driver naming the step that failed). The simulated device
// ("sim", package runtime/sim) opens only when asked for.
func Open(opts Options) (*Runtime, error) {
	r, err := engine.Open(engine.Options(opts))
	if err != nil {
		return nil, err
	}
	return wrapRuntime(r), nil
}

// e is the engine runtime behind r (nil for a nil r).
func (r *Runtime) e() *engine.Runtime {
	if r == nil {
		return nil
	}
	return r.r
}

// Alloc returns a zeroed buffer for a dense tensor of element type d and
// the given shape (a scalar when shape is empty). A buffer that would take
// the runtime's live bytes past its memory limit (Options.MemoryLimit) is
// refused with an error wrapping ErrOutOfMemory, before anything is
// allocated.
func (r *Runtime) Alloc(d DType, shape ...int) (*Buffer, error) {
	return wrapBuffer(r.e().Alloc(d, shape...))
}

// FromFloat32 allocates a buffer of element type d and the given shape (one
// dimension of len(values) when shape is empty) and writes values into it,
// converted as Buffer.WriteFloat32 converts them. len(values) must be the
// shape's element count.
func (r *Runtime) FromFloat32(ctx context.Context, d DType, values []float32, shape ...int) (*Buffer, error) {
	return wrapBuffer(r.e().FromFloat32(ctx, d, values, shape...))
}

// NewStream creates a stream. Close it when done.
func (r *Runtime) NewStream() (*Stream, error) {
	s, err := r.e().NewStream()
	if err != nil {
		return nil, err
	}
	return wrapStream(s), nil
}

// DefaultStream is the runtime's own stream, used by calls given no
// stream (nil for a nil runtime).
func (r *Runtime) DefaultStream() *Stream { return wrapStream(r.e().DefaultStream()) }

// Synchronize waits for the work on every stream of the runtime and
// returns the errors that work reported since each stream's previous
// Synchronize (each stream's first, joined); see Stream.Synchronize.
func (r *Runtime) Synchronize(ctx context.Context) error { return r.e().Synchronize(ctx) }

// Close waits for all queued work, closes every stream, waits for host
// transfers still copying, and releases the backend. Afterwards the
// runtime, its streams and its buffers return errors wrapping ErrClosed (a
// buffer's data is gone); Close on those buffers stays safe. Close is
// idempotent; it must not be called from work running on one of the
// runtime's streams (that returns an error wrapping ErrArgument), and on a
// nil runtime it returns an error wrapping ErrArgument.
func (r *Runtime) Close() error { return r.e().Close() }

// Backend reports the backend in use ("" for a nil runtime).
func (r *Runtime) Backend() BackendKind { return r.e().Backend() }

// BackendReason says in one line which backend the runtime opened and
// why: "cpu (auto: GPU not used: cuda: ...)" names what stopped each GPU
// backend that auto selection tried.
func (r *Runtime) BackendReason() string { return r.e().BackendReason() }

// Device describes the device.
func (r *Runtime) Device() Device { return r.e().Device() }

// Threads is the number of CPU goroutines kernels may use.
func (r *Runtime) Threads() int { return r.e().Threads() }

// MemoryLimit is the bound on the bytes of live buffers
// (Options.MemoryLimit after defaults); 0 when there is none.
func (r *Runtime) MemoryLimit() int64 { return r.e().MemoryLimit() }

// Stats returns the runtime's buffer statistics (zero for a nil runtime).
func (r *Runtime) Stats() MemStats { return MemStats(r.e().Stats()) }

// PoolStats returns the device-memory pool's numbers; zero on a backend
// without a pool (the CPU).
func (r *Runtime) PoolStats() PoolStats { return r.e().PoolStats() }

// TrimPool waits for the device, then returns the pool's cached free
// segments to it, and reports the bytes released (0 without a pool).
func (r *Runtime) TrimPool() (int64, error) { return r.e().TrimPool() }

// DeviceCounters returns what the device has executed, when the backend
// counts it (the simulated device: GPU launches and simulated
// instructions); ok is false elsewhere.
func (r *Runtime) DeviceCounters() (c backend.Counters, ok bool) { return r.e().DeviceCounters() }

// MemStats are a runtime's buffer statistics. A closed buffer still held
// by queued or running work counts as live until that work finishes and
// its memory is freed.
type MemStats struct {
	LiveBuffers int64 // buffers allocated and not freed
	LiveBytes   int64 // their bytes
	PeakBytes   int64 // largest LiveBytes seen
	Allocs      int64 // buffers ever allocated
	Frees       int64 // buffers freed
	AllocBytes  int64 // bytes ever allocated
}

// PoolStats are the device-memory pool's numbers (GPU backends; zero on
// the CPU backend, which has no pool).
type PoolStats = backend.PoolStats

// BackendKind names a backend (see package runtime/backend).
type BackendKind = backend.Kind

// Backends.
const (
	BackendAuto BackendKind = backend.Auto // the best GPU backend that opens, else CPU
	BackendCPU  BackendKind = backend.CPU
	BackendCUDA BackendKind = backend.CUDA
	BackendSim  BackendKind = backend.Sim // the simulated SM86/SM89 GPU (runtime/sim)
)

// Device describes the device a runtime runs on (see backend.Device).
type Device = backend.Device

// CUDADevices lists the GPUs the driver reports, with their attributes;
// the error wraps ErrNoDevice when the driver does not load.
func CUDADevices() ([]Device, error) { return engine.CUDADevices() }

// CUDABuilt reports whether this binary contains the CUDA backend
// (package runtime/cuda linked in: package ops imports it). Whether a GPU
// is usable is only known at Open.
func CUDABuilt() bool { return engine.CUDABuilt() }

// HostMemory returns the bytes of memory this process may use: the least
// of the host's physical memory, its control group's limit, the
// address-space and data rlimits (ulimit -v, -d) and Go's memory limit
// (GOMEMLIMIT); 0 when the platform does not say (then the CPU backend has
// no default limit).
func HostMemory() int64 { return engine.HostMemory() }

// DefaultMemoryLimit is the memory limit Open uses when
// Options.MemoryLimit is 0 for a device with total bytes of memory
// (HostMemory on the CPU): total less headroom; 0 (no limit) when total is
// unknown.
func DefaultMemoryLimit(total int64) int64 { return engine.DefaultMemoryLimit(total) }

// DType is an element type (tile.DType).
type DType = tile.DType

// Element types; see package tile for their formats.
const (
	F32  = tile.F32
	F16  = tile.F16
	BF16 = tile.BF16
	E4M3 = tile.E4M3
	E5M2 = tile.E5M2
	F64  = tile.F64
	S8   = tile.S8
	U8   = tile.U8
	S16  = tile.S16
	U16  = tile.U16
	S32  = tile.S32
	U32  = tile.U32
	S64  = tile.S64
	U64  = tile.U64
)
