package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/tcrt-go/tcrt/runtime/backend"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Options configures Open: the fields of runtime.Options (documented
// there), which converts to it.
type Options struct {
	Backend     BackendKind
	Device      int
	Threads     int
	MemoryLimit int64
	SimArch     int
	CUDALib     string
	Kernel      string
}

// envDefaults fills the zero fields of o that an environment variable
// names (TCRT_BACKEND, TCRT_THREADS, TCRT_KERNEL, TCRT_CUDA_LIB,
// TCRT_SIM_ARCH) from that variable: the environment supplies defaults,
// and a field the caller set wins. A variable is read only for a zero
// field, so a malformed one is an error only when it would be used.
func (o *Options) envDefaults() error {
	if v := os.Getenv("TCRT_BACKEND"); v != "" && o.Backend == "" {
		o.Backend = BackendKind(strings.ToLower(v))
	}
	if v := os.Getenv("TCRT_THREADS"); v != "" && o.Threads == 0 {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("tcrt: open: TCRT_THREADS=%q: want a non-negative integer: %w", v, ErrArgument)
		}
		o.Threads = n
	}
	if v := os.Getenv("TCRT_KERNEL"); v != "" && o.Kernel == "" {
		o.Kernel = v
	}
	if v := os.Getenv("TCRT_CUDA_LIB"); v != "" && o.CUDALib == "" {
		o.CUDALib = v
	}
	if v := os.Getenv("TCRT_SIM_ARCH"); v != "" && o.SimArch == 0 {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return fmt.Errorf("tcrt: open: TCRT_SIM_ARCH=%q: want a compute capability such as 86 or 89: %w", v, ErrArgument)
		}
		o.SimArch = n
	}
	return nil
}

// Runtime is an opened backend with its streams, buffers and kernel
// selection. It is safe for concurrent use. Close releases it.
type Runtime struct {
	handle  // the public handle (see Handles)
	be      backend.Backend
	opts    Options
	forced  map[string]string // op -> kernel name
	def     *Stream
	closed  atomic.Bool
	mu      sync.Mutex
	streams map[*Stream]struct{}
	stats   memStats
	tasks   atomic.Int32 // Enqueue functions running (see Stream.inTask)
	reason  string       // why this backend (see BackendReason)
	holds   holdCount    // references held on the runtime's buffers
}

// CUDABuilt reports whether this binary contains the CUDA backend
// (package runtime/cuda linked in: package ops imports it). Whether a GPU
// is usable is only known at Open.
func CUDABuilt() bool {
	_, ok := backend.Lookup(BackendCUDA)
	return ok
}

// Open opens a runtime: see runtime.Open.
func Open(opts Options) (*Runtime, error) {
	if err := opts.envDefaults(); err != nil {
		return nil, err
	}
	if opts.Threads < 0 {
		return nil, fmt.Errorf("tcrt: open: argument Threads: %d is negative: %w", opts.Threads, ErrArgument)
	}
	if opts.MemoryLimit < 0 {
		return nil, fmt.Errorf("tcrt: open: argument MemoryLimit: %d is negative: %w", opts.MemoryLimit, ErrArgument)
	}
	if opts.Device < 0 {
		return nil, fmt.Errorf("tcrt: open: argument Device: %d is negative: %w", opts.Device, ErrArgument)
	}
	if opts.Threads == 0 {
		opts.Threads = goruntime.GOMAXPROCS(0)
	}
	forced, err := parseForced(opts.Kernel)
	if err != nil {
		return nil, err
	}
	bopts := backend.Options{Device: opts.Device, Threads: opts.Threads, MemoryLimit: opts.MemoryLimit, Arch: opts.SimArch, CUDALib: opts.CUDALib}
	var be backend.Backend
	reason := "asked for"
	switch opts.Backend {
	case "", BackendAuto:
		var why []string
		for _, reg := range backend.Registered() {
			if !reg.Auto {
				continue
			}
			b, err := reg.Open(bopts)
			if err == nil {
				be = b
				reason = "auto: the first GPU backend that opened"
				break
			}
			why = append(why, string(reg.Kind)+": "+strings.TrimPrefix(oneLine(err), "tcrt: open: backend "+string(reg.Kind)+": "))
		}
		if be == nil {
			be = newCPUBackend(opts.Threads)
			reason = "auto: no GPU backend is registered"
			if len(why) > 0 {
				reason = "auto: GPU not used: " + strings.Join(why, "; ")
			}
		}
	case BackendCPU:
		be = newCPUBackend(opts.Threads)
	default:
		reg, ok := backend.Lookup(opts.Backend)
		if !ok {
			if opts.Backend == BackendCUDA {
				return nil, fmt.Errorf("tcrt: open: backend cuda: package runtime/cuda is not linked in (import package ops): %w", ErrNoDevice)
			}
			return nil, fmt.Errorf("tcrt: open: argument Backend: unknown backend %q (want auto, %s): %w", opts.Backend, strings.Join(backendNames(), ", "), ErrArgument)
		}
		b, err := reg.Open(bopts)
		if err != nil {
			return nil, err
		}
		be = b
	}
	if dn, ok := be.(interface{ DriverName() string }); ok {
		reason += "; driver " + dn.DriverName()
	}
	if be.Device().GPU() {
		ensureHostFallbacks()
	}
	if opts.MemoryLimit == 0 {
		dev := be.Device()
		total := dev.MemoryBytes
		switch {
		case !dev.GPU():
			total = HostMemory()
		case dev.Simulated: // its device memory is host memory
			total = min(total, HostMemory())
		}
		opts.MemoryLimit = DefaultMemoryLimit(total)
	}
	r := &Runtime{be: be, opts: opts, forced: forced, streams: map[*Stream]struct{}{}, reason: reason}
	def, err := r.NewStream()
	if err != nil {
		be.Close()
		return nil, err
	}
	r.def = def
	return r, nil
}

// BackendReason says in one line which backend the runtime opened and why:
// "cpu (auto: GPU not used: cuda: ...)" names what stopped each GPU
// backend that auto selection tried.
func (r *Runtime) BackendReason() string {
	if r == nil || r.be == nil {
		return ""
	}
	return string(r.be.Kind()) + " (" + r.reason + ")"
}

// oneLine is err's text on one line (driver logs span several).
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// DeviceCounters returns what the device has executed, when the backend
// counts it (the simulated device: GPU launches and simulated
// instructions); ok is false elsewhere.
func (r *Runtime) DeviceCounters() (c backend.Counters, ok bool) {
	if r == nil {
		return c, false
	}
	if cb, is := r.be.(backend.Counting); is {
		return cb.Counters(), true
	}
	return c, false
}

// backendNames lists the backends Open accepts.
func backendNames() []string {
	names := []string{string(BackendCPU)}
	for _, reg := range backend.Registered() {
		names = append(names, string(reg.Kind))
	}
	return names
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
				return nil, fmt.Errorf("tcrt: open: argument Kernel (or TCRT_KERNEL): no kernel named %q: %w", item, ErrArgument)
			}
			op, name = k.Op, item
		} else if k := lookupKernel(name); k == nil || k.Op != op {
			return nil, fmt.Errorf("tcrt: open: argument Kernel (or TCRT_KERNEL): no kernel %q for op %q: %w", name, op, ErrArgument)
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
	return r.be.Kind()
}

// Device describes the device.
func (r *Runtime) Device() Device {
	if r == nil || r.be == nil {
		return Device{}
	}
	return r.be.Device()
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

// waitAll waits for the work enqueued so far on every stream of the
// runtime without taking the errors it reported (they stay with their
// streams' Synchronize): what a host transfer waits for.
func (r *Runtime) waitAll(ctx context.Context, op string) error {
	if r.taskStream() != nil {
		return selfWait(op)
	}
	sp, _ := streamLists.Get().(*[]*Stream)
	if sp == nil {
		sp = new([]*Stream)
	}
	defer func() {
		clear(*sp)
		streamLists.Put(sp)
	}()
	*sp = r.liveStreamsInto((*sp)[:0])
	for _, s := range *sp {
		if q, ok := s.impl.(*backend.Queue); ok && q.Idle() {
			continue // a CPU stream with nothing to wait for: no event
		}
		ev, err := s.impl.Record()
		if err != nil {
			continue // a closed stream: its Close drains it
		}
		if err := ev.Wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

// streamLists recycles waitAll's lists of streams.
var streamLists sync.Pool

// Synchronize waits for the work on every stream of the runtime and returns
// the errors that work reported since each stream's previous Synchronize
// (each stream's first, joined); see Stream.Synchronize.
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

func (r *Runtime) liveStreams() []*Stream { return r.liveStreamsInto(nil) }

// liveStreamsInto appends the runtime's streams to out.
func (r *Runtime) liveStreamsInto(out []*Stream) []*Stream {
	r.mu.Lock()
	defer r.mu.Unlock()
	for s := range r.streams {
		out = append(out, s)
	}
	return out
}

// Close waits for the queued work and the host transfers, closes the
// streams and releases the backend (see runtime.Runtime.Close).
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
	// The streams have drained; a host transfer still copying holds its
	// buffer, and the backend's memory goes only after it.
	r.holds.wait()
	if err := r.be.Close(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
