// Package backend is the device seam of tcrt's runtime: the interfaces a
// device implementation provides (memory with device addresses, streams,
// events, GPU launches, module loading), the registry through which
// runtime.Open finds an implementation by name, and the pieces every
// implementation shares (the host work queue, the caching device-memory
// pool).
//
// The CPU backend is built into package runtime. The CUDA backend
// (runtime/cuda, over the driver layer runtime/cuda/driver) and the
// simulated SM86/SM89 device (runtime/sim: the same CUDA backend over a
// simulator driver) are packages that call Register from an init
// function; runtime.Open knows them only by the name they register.
// Package ops imports both, so every program using ops can open them.
package backend

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tcrt-go/tcrt/tile"
)

// Kind names a backend.
type Kind string

// The backends tcrt ships.
const (
	Auto Kind = "auto" // the best registered GPU backend that opens, else the CPU
	CPU  Kind = "cpu"
	CUDA Kind = "cuda"
	Sim  Kind = "sim"
)

// Sentinel errors, the tile package's values, so errors.Is works with any.
var (
	ErrNoDevice    = tile.ErrNoDevice
	ErrOutOfMemory = tile.ErrOutOfMemory
	ErrClosed      = tile.ErrClosed
	ErrUnsupported = tile.ErrUnsupported
	ErrArgument    = tile.ErrArgument
	ErrBounds      = tile.ErrBounds
	ErrDevice      = tile.ErrDevice
)

// Device describes the device a backend drives. CPU fields are set on the
// CPU backend, GPU fields on GPU backends (real or simulated).
type Device struct {
	Backend Kind
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
	SharedPerSM           int   // shared memory per multiprocessor
	RegistersPerSM        int   // 32-bit registers per multiprocessor
	RegistersPerBlock     int   // 32-bit registers one block may use
	MaxThreadsPerBlock    int   // threads per block
	L2CacheBytes          int
	ClockKHz, MemClockKHz int
	MemBusWidth           int
	// JIT reports whether the device compiles PTX (a real driver does; the
	// simulated device runs only cubins).
	JIT bool
	// Simulated marks the simulated device: no timing, results only.
	Simulated bool
}

// SM returns the compute capability as one number (86 for 8.6), 0 on CPUs.
func (d Device) SM() int { return d.Major*10 + d.Minor }

// GPU reports whether the device is a GPU (real or simulated).
func (d Device) GPU() bool { return d.Major > 0 }

// String is a one-line description.
func (d Device) String() string {
	if d.GPU() {
		return fmt.Sprintf("%s: %s (sm_%d, %d SMs, %.1f GiB, %d KiB shared/block opt-in, %d MiB L2)",
			d.Backend, d.Name, d.SM(), d.SMs, float64(d.MemoryBytes)/(1<<30), d.SharedPerBlockOptin>>10, d.L2CacheBytes>>20)
	}
	return fmt.Sprintf("%s: %s (%s, %d cores, %d threads, %s; L1d %d KiB, L2 %d KiB, L3 %d MiB)",
		d.Backend, d.Name, d.Vendor, d.Cores, d.Threads, strings.Join(d.Features, " "), d.L1DBytes>>10, d.L2Bytes>>10, d.L3Bytes>>20)
}

// Options are what runtime.Open passes to a backend's opener.
type Options struct {
	// Device is the GPU ordinal.
	Device int
	// Threads bounds the CPU goroutines host work may use.
	Threads int
	// MemoryLimit bounds the bytes the backend's pool reserves; 0: none.
	MemoryLimit int64
	// Arch is the compute capability a simulated device models (86 or 89);
	// 0 is the backend's default. Real devices ignore it.
	Arch int
	// CUDALib is the path of the CUDA driver library the CUDA backend
	// loads ("": libcuda.so.1, found by the dynamic loader).
	CUDALib string
}

// Backend is an opened device.
type Backend interface {
	Kind() Kind
	Device() Device
	// Alloc returns zeroed device memory of n > 0 bytes.
	Alloc(n int) (Memory, error)
	NewStream() (Stream, error)
	Close() error
}

// Memory is one allocation.
type Memory interface {
	// Host returns the bytes when the memory is host-addressable (CPU
	// backend, or a device buffer while the host fallback lends it a
	// shadow), else nil.
	Host() []byte
	// Write copies src to offset off; Read copies from offset off to dst.
	// Both are synchronous with respect to the host.
	Write(ctx context.Context, off int, src []byte) error
	Read(ctx context.Context, off int, dst []byte) error
	Free() error
}

// DeviceMemory is memory with a device address.
type DeviceMemory interface {
	Memory
	DevicePtr() uint64
}

// Stageable is device memory that can lend a host shadow of itself: Host
// returns the shadow while it is set (the host fallback uses it).
type Stageable interface {
	Memory
	SetStaged(b []byte)
}

// Stream is a backend's ordered queue of work.
type Stream interface {
	// Enqueue appends a host task; it runs after everything enqueued before
	// it (device work included) has finished.
	Enqueue(fn func() error) error
	// Record enqueues an event marker.
	Record() (Event, error)
	// Wait makes later work wait for ev.
	Wait(ev Event) error
	// Sync waits until all enqueued work has finished (or ctx ends) and
	// returns the first error that work reported since the last Sync.
	Sync(ctx context.Context) error
	Close() error
}

// Event is a point in a stream's work.
type Event interface {
	// Wait blocks until the event has completed or ctx ends.
	Wait(ctx context.Context) error
	Done() bool
	// Elapsed is the time from start (an event of the same backend) to
	// this event; both have completed.
	Elapsed(start Event) (time.Duration, error)
}

// Launch is one launch of a kernel from an embedded GPU module.
type Launch struct {
	// Module is the kernel's module; the backend loads it once per device,
	// choosing its image with Module.Select.
	Module *Module
	// Func is the kernel's entry name in the module.
	Func string
	// Grid and Block are the launch shape; 0 counts as 1.
	Grid, Block [3]int
	// SharedBytes is the dynamic shared memory; above 48 KiB the backend
	// opts the function in first.
	SharedBytes int
	// Params holds one 8-byte slot per kernel parameter (see package ptx).
	Params []uint64
}

// GPUStream is a stream that can launch GPU kernels.
type GPUStream interface {
	Stream
	// LaunchGPU enqueues g in stream order.
	LaunchGPU(g Launch) error
	// IssueGPU issues g at once; only a task running on the stream may
	// call it, so that stream order holds.
	IssueGPU(g Launch) error
}

// ModuleLoader is a GPU backend that can say, before any launch, whether a
// module has an image this device can run, and why not.
type ModuleLoader interface {
	CanLoad(m *Module) error
}

// Pooled is a backend that allocates from a Pool.
type Pooled interface {
	PoolStats() PoolStats
	TrimPool() (int64, error)
}

// Counters are what a device has executed, for backends that count it
// (the simulated device).
type Counters struct {
	Launches                             int64
	WarpInstructions, ThreadInstructions int64
}

// Counting is a backend that counts what it executes.
type Counting interface {
	Counters() Counters
}

// Opener opens a backend.
type Opener func(Options) (Backend, error)

// Registration is one backend implementation.
type Registration struct {
	Kind Kind
	// Open opens it.
	Open Opener
	// Devices lists the devices it can open (nil: not enumerable).
	Devices func() ([]Device, error)
	// Auto lets Options{Backend: auto} try it, in decreasing Priority
	// order, before settling for the CPU. The simulated device does not
	// take part.
	Auto     bool
	Priority int
}

var registry struct {
	mu sync.RWMutex
	m  map[Kind]Registration
}

// Register adds a backend implementation. It panics on a malformed or
// duplicate registration (registration happens in init functions).
func Register(r Registration) {
	if r.Kind == "" || r.Open == nil || r.Kind == Auto || r.Kind == CPU {
		panic(fmt.Sprintf("tcrt: backend.Register: bad registration %q", r.Kind))
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if registry.m == nil {
		registry.m = map[Kind]Registration{}
	}
	if _, dup := registry.m[r.Kind]; dup {
		panic("tcrt: backend.Register: duplicate backend " + string(r.Kind))
	}
	registry.m[r.Kind] = r
}

// Lookup returns the registration of kind.
func Lookup(kind Kind) (Registration, bool) {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	r, ok := registry.m[kind]
	return r, ok
}

// Registered lists the registered backends, Auto ones first by priority,
// then by name.
func Registered() []Registration {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	out := make([]Registration, 0, len(registry.m))
	for _, r := range registry.m {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Auto != out[j].Auto {
			return out[i].Auto
		}
		if out[i].Priority != out[j].Priority {
			return out[i].Priority > out[j].Priority
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}
