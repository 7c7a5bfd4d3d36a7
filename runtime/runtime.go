package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Options configures Open. The zero value selects the best backend.
type Options struct {
	// Backend forces a backend; "" or BackendAuto picks CUDA when it is built
	// in and a device is usable, else the CPU. TCRT_BACKEND overrides it.
	Backend BackendKind
	// Device is the GPU ordinal on the CUDA backend.
	Device int
	// Threads bounds the CPU goroutines a kernel uses; 0 means GOMAXPROCS.
	// TCRT_THREADS overrides it.
	Threads int
	// MemoryLimit bounds the bytes of live buffers: an Alloc that would pass
	// it fails with ErrOutOfMemory. 0 means the default, DefaultMemoryLimit
	// of the device's memory (on the CPU, HostMemory: the physical memory or
	// the cgroup limit, whichever is lower), so that an absurd request is an
	// error rather than the end of the process. math.MaxInt64 disables the
	// check.
	MemoryLimit int64
	// Kernel forces kernels by name, as TCRT_KERNEL does (which overrides it):
	// "name" forces that kernel for its op, "op=name" for the named op.
	Kernel string
}

// Runtime is an opened backend with its streams, buffers and kernel
// selection. It is safe for concurrent use. Close releases it.
type Runtime struct {
	be      backend
	opts    Options
	forced  map[string]string // op -> kernel name
	def     *Stream
	closed  atomic.Bool
	mu      sync.Mutex
	streams map[*Stream]struct{}
	stats   memStats
	tasks   atomic.Int32 // Enqueue functions running (see Stream.inTask)
}

// cudaOpen is set by the CUDA backend's init when it is built in
// (-tags cuda); nil otherwise.
var cudaOpen func(opts Options) (backend, error)

// CUDABuilt reports whether this binary contains the CUDA backend.
func CUDABuilt() bool { return cudaOpen != nil }

// Open returns a runtime on the backend that Options and the environment ask
// for. With the auto backend it falls back to the CPU when CUDA is not built
// in or no GPU is usable; asking for CUDA explicitly when it is unavailable
// returns an error wrapping ErrNoDevice.
func Open(opts Options) (*Runtime, error) {
	if v := os.Getenv("TCRT_BACKEND"); v != "" {
		opts.Backend = BackendKind(strings.ToLower(v))
	}
	if v := os.Getenv("TCRT_THREADS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("tcrt: open: TCRT_THREADS=%q: want a non-negative integer: %w", v, ErrArgument)
		}
		opts.Threads = n
	}
	if v := os.Getenv("TCRT_KERNEL"); v != "" {
		opts.Kernel = v
	}
	if opts.Threads < 0 {
		return nil, fmt.Errorf("tcrt: open: argument Threads: %d is negative: %w", opts.Threads, ErrArgument)
	}
	if opts.MemoryLimit < 0 {
		return nil, fmt.Errorf("tcrt: open: argument MemoryLimit: %d is negative: %w", opts.MemoryLimit, ErrArgument)
	}
	if opts.Threads == 0 {
		opts.Threads = goruntime.GOMAXPROCS(0)
	}
	forced, err := parseForced(opts.Kernel)
	if err != nil {
		return nil, err
	}
	var be backend
	switch opts.Backend {
	case "", BackendAuto:
		if cudaOpen != nil {
			if b, err := cudaOpen(opts); err == nil {
				be = b
			}
		}
		if be == nil {
			be = newCPUBackend(opts.Threads)
		}
	case BackendCPU:
		be = newCPUBackend(opts.Threads)
	case BackendCUDA:
		if cudaOpen == nil {
			return nil, fmt.Errorf("tcrt: open: backend cuda: this binary was built without -tags cuda: %w", ErrNoDevice)
		}
		b, err := cudaOpen(opts)
		if err != nil {
			return nil, err
		}
		be = b
	default:
		return nil, fmt.Errorf("tcrt: open: argument Backend: unknown backend %q (want auto, cpu or cuda): %w", opts.Backend, ErrArgument)
	}
	if opts.MemoryLimit == 0 {
		total := be.device().MemoryBytes
		if be.kind() == BackendCPU {
			total = HostMemory()
		}
		opts.MemoryLimit = DefaultMemoryLimit(total)
	}
	r := &Runtime{be: be, opts: opts, forced: forced, streams: map[*Stream]struct{}{}}
	def, err := r.NewStream()
	if err != nil {
		be.close()
		return nil, err
	}
	r.def = def
	return r, nil
}

// parseForced reads "name" or "op=name" items separated by commas.
func parseForced(s string) (map[string]string, error) {
	m := map[string]string{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		op, name, ok := strings.Cut(item, "=")
		if !ok {
			k := lookupKernel(item)
			if k == nil {
				return nil, fmt.Errorf("tcrt: open: TCRT_KERNEL: no kernel named %q: %w", item, ErrArgument)
			}
			op, name = k.Op, item
		} else if k := lookupKernel(name); k == nil || k.Op != op {
			return nil, fmt.Errorf("tcrt: open: TCRT_KERNEL: no kernel %q for op %q: %w", name, op, ErrArgument)
		}
		m[op] = name
	}
	return m, nil
}

// The getters return zero values on a nil runtime.

// Backend reports the backend in use.
func (r *Runtime) Backend() BackendKind {
	if r == nil || r.be == nil {
		return ""
	}
	return r.be.kind()
}

// Device describes the device.
func (r *Runtime) Device() Device {
	if r == nil || r.be == nil {
		return Device{}
	}
	return r.be.device()
}

// Threads is the number of CPU goroutines kernels may use.
func (r *Runtime) Threads() int {
	if r == nil {
		return 0
	}
	return r.opts.Threads
}

// MemoryLimit is the bound on the bytes of live buffers (Options.MemoryLimit
// after defaults); 0 when there is none.
func (r *Runtime) MemoryLimit() int64 {
	if r == nil {
		return 0
	}
	return r.opts.MemoryLimit
}

// DefaultStream is the runtime's own stream, used by calls given no stream.
func (r *Runtime) DefaultStream() *Stream {
	if r == nil {
		return nil
	}
	return r.def
}

func (r *Runtime) checkOpen(op string) error {
	if r == nil {
		return fmt.Errorf("tcrt: %s: argument runtime: nil: %w", op, ErrArgument)
	}
	if r.be == nil {
		return fmt.Errorf("tcrt: %s: argument runtime: not made by Open: %w", op, ErrArgument)
	}
	if r.closed.Load() {
		return fmt.Errorf("tcrt: %s: runtime is closed: %w", op, ErrClosed)
	}
	return nil
}

// Synchronize waits for the work on every stream of the runtime.
func (r *Runtime) Synchronize(ctx context.Context) error {
	if err := r.checkOpen("synchronize"); err != nil {
		return err
	}
	if ctx == nil {
		return fmt.Errorf("tcrt: synchronize: argument ctx: nil: %w", ErrArgument)
	}
	if r.taskStream() != nil {
		return selfWait("synchronize")
	}
	var errs []error
	for _, s := range r.liveStreams() {
		if err := s.Synchronize(ctx); err != nil && !errors.Is(err, ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (r *Runtime) liveStreams() []*Stream {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*Stream, 0, len(r.streams))
	for s := range r.streams {
		out = append(out, s)
	}
	return out
}

// Close waits for all queued work, closes every stream and releases the
// backend. Afterwards the runtime, its streams and its buffers return errors
// wrapping ErrClosed (a buffer's data is gone); Close on those buffers stays
// safe. Close is idempotent; it must not be called from work running on one
// of the runtime's streams (that returns an error wrapping ErrArgument), and
// on a nil runtime it returns an error wrapping ErrArgument.
func (r *Runtime) Close() error {
	if r == nil || r.be == nil {
		return fmt.Errorf("tcrt: close: argument runtime: nil or not made by Open: %w", ErrArgument)
	}
	if r.taskStream() != nil {
		return selfWait("close")
	}
	if !r.closed.CompareAndSwap(false, true) {
		return nil
	}
	var errs []error
	for _, s := range r.liveStreams() {
		if err := s.close(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := r.be.close(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
