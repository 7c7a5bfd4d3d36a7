package cuda

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sync"
	"time"

	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/runtime/cuda/driver"
)

// Config says what Open opens.
type Config struct {
	// Driver is the driver layer; nil loads the build's default (purego's
	// libcuda.so.1, or gorgonia.org/cu with -tags cuda) from
	// Options.CUDALib.
	Driver driver.Driver
	// Kind is the backend kind the runtime reports (backend.CUDA when "").
	Kind backend.Kind
	// Vendor is Device.Vendor ("NVIDIA" when "").
	Vendor string
	// NoJIT marks a device that compiles no PTX (the simulator): modules
	// whose image for the device is PTX are refused before the driver sees
	// them.
	NoJIT bool
	// Simulated is Device.Simulated.
	Simulated bool
	// Options are the runtime's.
	Options backend.Options
}

// Counter is a driver that counts what a device executes (the simulator).
type Counter interface {
	Counters(d driver.Device) backend.Counters
}

// worker runs closures on one locked OS thread with a context current.
type worker struct {
	mu     sync.Mutex
	closed bool
	calls  chan func()
	exited chan struct{}
}

func newWorker(drv driver.Driver, ctx driver.Context) (*worker, error) {
	w := &worker{calls: make(chan func()), exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// Never unlocked: the thread ends with the goroutine, taking the
		// context binding with it.
		goruntime.LockOSThread()
		defer close(w.exited)
		if err := drv.CtxSetCurrent(ctx); err != nil {
			started <- cudaErr("set current context", err)
			return
		}
		started <- nil
		for fn := range w.calls {
			fn()
		}
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return w, nil
}

// do runs fn on the worker thread and returns its error. A panic in fn is
// returned as an error wrapping ErrDevice.
func (w *worker) do(fn func() error) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return fmt.Errorf("tcrt: cuda: device worker is closed: %w", backend.ErrClosed)
	}
	errc := make(chan error, 1)
	w.calls <- func() { errc <- backend.RunTask(fn) }
	w.mu.Unlock()
	return <-errc
}

// post runs fn on the worker without waiting (for cleanups, which must not
// block); it is dropped when the worker has closed.
func (w *worker) post(fn func()) {
	go func() { _ = w.do(func() error { fn(); return nil }) }()
}

func (w *worker) close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.calls)
	}
	w.mu.Unlock()
	<-w.exited
}

// device is one GPU as the process uses it: primary context, worker,
// description. Runtimes share it; the last release lets the context go.
type device struct {
	key  deviceKey
	drv  driver.Driver
	dev  driver.Device
	w    *worker
	info backend.Device
	refs int
}

type deviceKey struct {
	drv     driver.Driver
	ordinal int
}

var devices struct {
	mu sync.Mutex
	m  map[deviceKey]*device
}

func acquireDevice(cfg Config) (*device, error) {
	devices.mu.Lock()
	defer devices.mu.Unlock()
	key := deviceKey{cfg.Driver, cfg.Options.Device}
	if d := devices.m[key]; d != nil {
		d.refs++
		return d, nil
	}
	drv, ordinal := cfg.Driver, cfg.Options.Device
	n, err := drv.DeviceCount()
	if err != nil {
		return nil, cudaErr("device count", err)
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("tcrt: open: argument Device: %d, but the driver reports %d GPUs: %w", ordinal, n, backend.ErrNoDevice)
	}
	info, err := deviceInfo(cfg, ordinal)
	if err != nil {
		return nil, err
	}
	dev, err := drv.DeviceGet(ordinal)
	if err != nil {
		return nil, cudaErr("get device", err)
	}
	ctx, err := drv.PrimaryCtxRetain(dev)
	if err != nil {
		return nil, cudaErr("retain primary context", err)
	}
	w, err := newWorker(drv, ctx)
	if err != nil {
		_ = drv.PrimaryCtxRelease(dev)
		return nil, err
	}
	d := &device{key: key, drv: drv, dev: dev, w: w, info: info, refs: 1}
	if devices.m == nil {
		devices.m = map[deviceKey]*device{}
	}
	devices.m[key] = d
	return d, nil
}

func (d *device) release() error {
	devices.mu.Lock()
	defer devices.mu.Unlock()
	if d.refs--; d.refs > 0 {
		return nil
	}
	delete(devices.m, d.key)
	err := d.w.do(func() error { return cudaErr("synchronize", d.drv.CtxSynchronize()) })
	d.w.close()
	if e := d.drv.PrimaryCtxRelease(d.dev); e != nil && err == nil {
		err = cudaErr("release primary context", e)
	}
	return err
}

// deviceAttrs are the attributes a Device holds.
var deviceAttrs = []struct {
	attr driver.Attribute
	dst  func(*backend.Device) *int
}{
	{driver.AttrComputeCapabilityMajor, func(d *backend.Device) *int { return &d.Major }},
	{driver.AttrComputeCapabilityMinor, func(d *backend.Device) *int { return &d.Minor }},
	{driver.AttrMultiprocessorCount, func(d *backend.Device) *int { return &d.SMs }},
	{driver.AttrMaxSharedPerBlock, func(d *backend.Device) *int { return &d.SharedPerBlock }},
	{driver.AttrMaxSharedPerBlockOptin, func(d *backend.Device) *int { return &d.SharedPerBlockOptin }},
	{driver.AttrMaxSharedPerMultiprocessor, func(d *backend.Device) *int { return &d.SharedPerSM }},
	{driver.AttrMaxRegistersPerSM, func(d *backend.Device) *int { return &d.RegistersPerSM }},
	{driver.AttrMaxRegistersPerBlock, func(d *backend.Device) *int { return &d.RegistersPerBlock }},
	{driver.AttrMaxThreadsPerBlock, func(d *backend.Device) *int { return &d.MaxThreadsPerBlock }},
	{driver.AttrL2CacheSize, func(d *backend.Device) *int { return &d.L2CacheBytes }},
	{driver.AttrClockRate, func(d *backend.Device) *int { return &d.ClockKHz }},
	{driver.AttrMemoryClockRate, func(d *backend.Device) *int { return &d.MemClockKHz }},
	{driver.AttrGlobalMemoryBusWidth, func(d *backend.Device) *int { return &d.MemBusWidth }},
}

// deviceInfo reads a device's name and attributes (no context needed).
func deviceInfo(cfg Config, ordinal int) (backend.Device, error) {
	drv := cfg.Driver
	dev, err := drv.DeviceGet(ordinal)
	if err != nil {
		return backend.Device{}, cudaErr("get device", err)
	}
	d := backend.Device{Backend: cfg.Kind, Vendor: cfg.Vendor, JIT: !cfg.NoJIT, Simulated: cfg.Simulated}
	if d.Name, err = drv.DeviceName(dev); err != nil {
		return backend.Device{}, cudaErr("device name", err)
	}
	if d.MemoryBytes, err = drv.DeviceTotalMem(dev); err != nil {
		return backend.Device{}, cudaErr("device memory", err)
	}
	for _, a := range deviceAttrs {
		if *a.dst(&d), err = drv.DeviceAttribute(dev, a.attr); err != nil {
			return backend.Device{}, cudaErr(fmt.Sprintf("device attribute %d", a.attr), err)
		}
	}
	return d, nil
}

// Devices lists the devices cfg's driver sees.
func Devices(cfg Config) ([]backend.Device, error) {
	cfg = cfg.defaults()
	n, err := cfg.Driver.DeviceCount()
	if err != nil {
		return nil, cudaErr("device count", err)
	}
	out := make([]backend.Device, 0, n)
	for i := range n {
		d, err := deviceInfo(cfg, i)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func (cfg Config) defaults() Config {
	if cfg.Kind == "" {
		cfg.Kind = backend.CUDA
	}
	if cfg.Vendor == "" {
		cfg.Vendor = "NVIDIA"
	}
	return cfg
}

// cudaBackend is one runtime's use of a device: its pool, copy stream,
// pinned staging buffers and loaded modules.
type cudaBackend struct {
	cfg  Config
	d    *device
	pool *backend.Pool

	copyStream driver.Stream

	stageMu sync.Mutex
	stage   [2]pinnedChunk

	modMu sync.Mutex
	mods  map[string]*module
}

// countingBackend is a backend whose driver counts what it executes.
type countingBackend struct {
	*cudaBackend
	c    Counter
	base backend.Counters
}

// Counters returns what the device executed since this backend opened
// (device-wide: launches of other runtimes on the device meanwhile count).
func (b *countingBackend) Counters() backend.Counters {
	c := b.c.Counters(b.d.dev)
	return backend.Counters{Launches: c.Launches - b.base.Launches,
		WarpInstructions:   c.WarpInstructions - b.base.WarpInstructions,
		ThreadInstructions: c.ThreadInstructions - b.base.ThreadInstructions}
}

// Open opens the CUDA backend over cfg.Driver on device
// cfg.Options.Device.
func Open(cfg Config) (backend.Backend, error) {
	cfg = cfg.defaults()
	if cfg.Driver == nil {
		drv, err := defaultDriver(cfg.Options.CUDALib)
		if err != nil {
			return nil, fmt.Errorf("tcrt: open: backend cuda: %w", err)
		}
		cfg.Driver = drv
	}
	d, err := acquireDevice(cfg)
	if err != nil {
		return nil, err
	}
	b := &cudaBackend{cfg: cfg, d: d, mods: map[string]*module{}}
	b.pool = backend.NewPool(allocator{d}, cfg.Options.MemoryLimit)
	err = d.w.do(func() error {
		s, err := d.drv.StreamCreate()
		b.copyStream = s
		return cudaErr("create copy stream", err)
	})
	if err != nil {
		_ = b.pool.Close()
		_ = d.release()
		return nil, err
	}
	if c, ok := d.drv.(Counter); ok {
		return &countingBackend{cudaBackend: b, c: c, base: c.Counters(d.dev)}, nil
	}
	return b, nil
}

func (b *cudaBackend) Kind() backend.Kind     { return b.cfg.Kind }
func (b *cudaBackend) Device() backend.Device { return b.d.info }

// DriverName says which driver implementation the backend runs over.
func (b *cudaBackend) DriverName() string { return b.d.drv.Name() }

func (b *cudaBackend) PoolStats() backend.PoolStats { return b.pool.Stats() }
func (b *cudaBackend) TrimPool() (int64, error)     { return b.pool.Trim() }

func (b *cudaBackend) Close() error {
	var errs []error
	b.modMu.Lock()
	mods := b.mods
	b.mods = map[string]*module{}
	b.modMu.Unlock()
	drv := b.d.drv
	errs = append(errs, b.d.w.do(func() error {
		var es []error
		es = append(es, cudaErr("synchronize", drv.CtxSynchronize()))
		for _, m := range mods {
			if m.err == nil {
				es = append(es, cudaErr("module unload", drv.ModuleUnload(m.mod)))
			}
		}
		for i := range b.stage {
			if b.stage[i].p != nil {
				es = append(es, cudaErr("pinned host free", drv.MemFreeHost(b.stage[i].p)))
				es = append(es, cudaErr("destroy event", drv.EventDestroy(b.stage[i].ev)))
				b.stage[i] = pinnedChunk{}
			}
		}
		es = append(es, cudaErr("destroy copy stream", drv.StreamDestroy(b.copyStream)))
		return joinErrs(es)
	}))
	errs = append(errs, b.pool.Close(), b.d.release())
	return joinErrs(errs)
}

// allocator gives the pool device memory through the worker.
type allocator struct{ d *device }

func (a allocator) AllocSegment(n int64) (uint64, error) {
	var p driver.DevicePtr
	err := a.d.w.do(func() error {
		var err error
		p, err = a.d.drv.MemAlloc(n)
		return cudaErr(fmt.Sprintf("allocate %d bytes", n), err)
	})
	return uint64(p), err
}

func (a allocator) FreeSegment(base uint64, n int64) error {
	return a.d.w.do(func() error { return cudaErr("free", a.d.drv.MemFree(driver.DevicePtr(base))) })
}

func (a allocator) Synchronize() error {
	return a.d.w.do(func() error { return cudaErr("synchronize", a.d.drv.CtxSynchronize()) })
}

// spinPolls is how many times waitEvent polls, yielding in between,
// before it sleeps: short device work (a small kernel, a copy) completes
// within them, without a timer's wake-up latency.
const spinPolls = 16

// waitEvent polls ev until it has completed, ctx ends (nil: never) or the
// device reports an error. Polling — spinPolls yields, then sleeps backing
// off from 5 µs to 1 ms — keeps the worker free for other callers and
// makes the wait cancellable.
func (d *device) waitEvent(ctx context.Context, ev driver.Event) error {
	back := 5 * time.Microsecond
	var t *time.Timer
	for polls := 0; ; polls++ {
		var q error
		if err := d.w.do(func() error { q = d.drv.EventQuery(ev); return nil }); err != nil {
			return err
		}
		if q == nil {
			return nil
		}
		if !driver.IsCode(q, driver.ErrorNotReady) {
			return cudaErr("event", q)
		}
		if polls < spinPolls {
			if ctx != nil && ctx.Err() != nil {
				return ctx.Err()
			}
			goruntime.Gosched()
			continue
		}
		if t == nil {
			t = time.NewTimer(back)
			defer t.Stop()
		} else {
			t.Reset(back)
		}
		if ctx == nil {
			<-t.C
		} else {
			select {
			case <-t.C:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		back = min(2*back, time.Millisecond)
	}
}
