//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"github.com/tcrt-go/tcrt/runtime/backend"
	goruntime "runtime"
	"sync"
	"time"

	cu "gorgonia.org/cu"
)

// The CUDA backend (build tag cuda), on gorgonia.org/cu v0.9.6 plus the
// cgo shim in cuda_shim.go. Importing cu runs its init, which calls cuInit
// and exits the process when that fails: binaries built with -tags cuda
// only start on hosts with a working NVIDIA driver (see docs/cuda.md).
//
// Threads. The driver's current context is per OS thread, so each device
// has one worker goroutine locked to its OS thread with the device's
// primary context current, and every driver call of the backend runs on it
// (cudaWorker.do); callers batch the calls of one step into one hop.
// Runtimes opened on the same device share its worker and primary context.

// cudaWorker runs closures on one locked OS thread with a context current.
type cudaWorker struct {
	mu     sync.Mutex
	closed bool
	calls  chan func()
	exited chan struct{}
}

func newCUDAWorker(ctx cu.CUContext) (*cudaWorker, error) {
	w := &cudaWorker{calls: make(chan func()), exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// Never unlocked: the thread ends with the goroutine, taking the
		// context binding with it.
		goruntime.LockOSThread()
		defer close(w.exited)
		if err := cu.SetCurrentContext(ctx); err != nil {
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
func (w *cudaWorker) do(fn func() error) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return fmt.Errorf("tcrt: cuda: device worker is closed: %w", ErrClosed)
	}
	errc := make(chan error, 1)
	w.calls <- func() { errc <- backend.RunTask(fn) }
	w.mu.Unlock()
	return <-errc
}

// post runs fn on the worker without waiting (for cleanups, which must not
// block); it is dropped when the worker has closed.
func (w *cudaWorker) post(fn func()) {
	go func() { _ = w.do(func() error { fn(); return nil }) }()
}

func (w *cudaWorker) close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.calls)
	}
	w.mu.Unlock()
	<-w.exited
}

// cudaDevice is one GPU as the process uses it: primary context, worker,
// description. Runtimes share it; the last release lets the context go.
type cudaDevice struct {
	ordinal int
	dev     cu.Device
	ctx     cu.CUContext
	w       *cudaWorker
	info    Device
	refs    int
}

var cudaDevs struct {
	mu sync.Mutex
	m  map[int]*cudaDevice
}

func acquireCUDADevice(ordinal int) (*cudaDevice, error) {
	cudaDevs.mu.Lock()
	defer cudaDevs.mu.Unlock()
	if d := cudaDevs.m[ordinal]; d != nil {
		d.refs++
		return d, nil
	}
	n, err := cu.NumDevices()
	if err != nil {
		return nil, cudaErr("device count", err)
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("tcrt: open: argument Device: %d, but the driver reports %d GPUs: %w", ordinal, n, ErrNoDevice)
	}
	info, err := cudaDeviceInfo(ordinal)
	if err != nil {
		return nil, err
	}
	dev, err := cu.GetDevice(ordinal)
	if err != nil {
		return nil, cudaErr("get device", err)
	}
	ctx, err := dev.RetainPrimaryCtx()
	if err != nil {
		return nil, cudaErr("retain primary context", err)
	}
	w, err := newCUDAWorker(ctx)
	if err != nil {
		_ = dev.ReleasePrimaryCtx()
		return nil, err
	}
	d := &cudaDevice{ordinal: ordinal, dev: dev, ctx: ctx, w: w, info: info, refs: 1}
	if cudaDevs.m == nil {
		cudaDevs.m = map[int]*cudaDevice{}
	}
	cudaDevs.m[ordinal] = d
	return d, nil
}

func (d *cudaDevice) release() error {
	cudaDevs.mu.Lock()
	defer cudaDevs.mu.Unlock()
	if d.refs--; d.refs > 0 {
		return nil
	}
	delete(cudaDevs.m, d.ordinal)
	err := d.w.do(func() error { return cudaErr("synchronize", cu.Synchronize()) })
	d.w.close()
	if e := d.dev.ReleasePrimaryCtx(); e != nil && err == nil {
		err = cudaErr("release primary context", e)
	}
	return err
}

// cudaDeviceInfo reads a device's name and attributes (no context needed).
func cudaDeviceInfo(ordinal int) (Device, error) {
	dev, err := cu.GetDevice(ordinal)
	if err != nil {
		return Device{}, cudaErr("get device", err)
	}
	d := Device{Backend: BackendCUDA, Vendor: "NVIDIA"}
	if d.Name, err = dev.Name(); err != nil {
		return Device{}, cudaErr("device name", err)
	}
	if d.MemoryBytes, err = dev.TotalMem(); err != nil {
		return Device{}, cudaErr("device memory", err)
	}
	for _, a := range []struct {
		attr cu.DeviceAttribute
		dst  *int
	}{
		{cu.ComputeCapabilityMajor, &d.Major}, {cu.ComputeCapabilityMinor, &d.Minor},
		{cu.MultiprocessorCount, &d.SMs}, {cu.MaxSharedMemoryPerBlock, &d.SharedPerBlock},
		{cu.L2CacheSize, &d.L2CacheBytes}, {cu.ClockRate, &d.ClockKHz},
		{cu.MemoryClockRate, &d.MemClockKHz}, {cu.GlobalMemoryBusWidth, &d.MemBusWidth},
	} {
		if *a.dst, err = dev.Attribute(a.attr); err != nil {
			return Device{}, cudaErr("device attribute", err)
		}
	}
	if d.SharedPerBlockOptin, err = shimDeviceAttr(ordinal, attrMaxSharedPerBlockOptin); err != nil {
		return Device{}, err
	}
	return d, nil
}

func listCUDADevices() ([]Device, error) {
	n, err := cu.NumDevices()
	if err != nil {
		return nil, cudaErr("device count", err)
	}
	out := make([]Device, 0, n)
	for i := range n {
		d, err := cudaDeviceInfo(i)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// cudaBackend is one runtime's use of a device: its pool, copy stream,
// pinned staging buffers and loaded modules.
type cudaBackend struct {
	d    *cudaDevice
	pool *backend.Pool

	copyStream cu.Stream

	stageMu sync.Mutex
	stage   [2]pinnedChunk

	modMu sync.Mutex
	mods  map[string]*cudaModule
}

func openCUDA(opts Options) (backend.Backend, error) {
	d, err := acquireCUDADevice(opts.Device)
	if err != nil {
		return nil, err
	}
	b := &cudaBackend{d: d, mods: map[string]*cudaModule{}}
	b.pool = backend.NewPool(cudaAllocator{d.w}, opts.MemoryLimit)
	err = d.w.do(func() error {
		s, err := cu.MakeStream(cu.DefaultStream)
		b.copyStream = s
		return cudaErr("create copy stream", err)
	})
	if err != nil {
		_ = d.release()
		return nil, err
	}
	return b, nil
}

func (b *cudaBackend) Kind() BackendKind { return BackendCUDA }
func (b *cudaBackend) Device() Device    { return b.d.info }

func (b *cudaBackend) PoolStats() backend.PoolStats { return b.pool.Stats() }
func (b *cudaBackend) TrimPool() (int64, error)     { return b.pool.Trim() }

func (b *cudaBackend) Close() error {
	var errs []error
	b.modMu.Lock()
	mods := b.mods
	b.mods = map[string]*cudaModule{}
	b.modMu.Unlock()
	errs = append(errs, b.d.w.do(func() error {
		var es []error
		es = append(es, cudaErr("synchronize", cu.Synchronize()))
		for _, m := range mods {
			if m.mod != nil {
				es = append(es, moduleUnload(m.mod))
			}
		}
		for i := range b.stage {
			if b.stage[i].p != nil {
				es = append(es, pinnedFree(b.stage[i].p))
				es = append(es, cudaErr("destroy event", cu.DestroyEvent(&b.stage[i].ev)))
				b.stage[i] = pinnedChunk{}
			}
		}
		es = append(es, cudaErr("destroy copy stream", b.copyStream.Destroy()))
		return joinErrs(es)
	}))
	errs = append(errs, b.pool.Close(), b.d.release())
	return joinErrs(errs)
}

func joinErrs(errs []error) error {
	var out []error
	for _, e := range errs {
		if e != nil {
			out = append(out, e)
		}
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	return fmt.Errorf("%w (and %d more errors: %v)", out[0], len(out)-1, out[1:])
}

// cudaAllocator gives the pool device memory through the worker.
type cudaAllocator struct{ w *cudaWorker }

func (a cudaAllocator) AllocSegment(n int64) (uint64, error) {
	var p cu.DevicePtr
	err := a.w.do(func() error {
		var err error
		p, err = cu.MemAlloc(n)
		return cudaErr(fmt.Sprintf("allocate %d bytes", n), err)
	})
	return uint64(p), err
}

func (a cudaAllocator) FreeSegment(base uint64, n int64) error {
	return a.w.do(func() error { return cudaErr("free", cu.MemFree(cu.DevicePtr(base))) })
}

func (a cudaAllocator) Synchronize() error {
	return a.w.do(func() error { return cudaErr("synchronize", cu.Synchronize()) })
}

// waitEvent polls ev until it has completed, ctx ends (nil: never) or the
// device reports an error. Polling, with a back-off from 5 µs to 1 ms,
// keeps the worker free for other callers and makes the wait cancellable.
func (w *cudaWorker) waitEvent(ctx context.Context, ev cu.Event) error {
	back := 5 * time.Microsecond
	var t *time.Timer
	for {
		var q error
		if err := w.do(func() error { q = ev.Query(); return nil }); err != nil {
			return err
		}
		if q == nil {
			return nil
		}
		if q != cu.NotReady {
			return cudaErr("event", q)
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
