package cuda

import (
	"context"
	"fmt"
	"math"
	goruntime "runtime"
	"time"

	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/runtime/cuda/driver"
)

// cudaStream is a device stream plus an issuer: a host queue
// (backend.Queue) through which every operation is issued in order. Device
// operations (launches, event records and waits) are issued asynchronously
// and return at once; a host task (Enqueue, used by CPU kernels and the
// host fallback) first waits for the device stream to drain, so it sees the
// results of earlier device work, and later device work is only issued
// after it.
type cudaStream struct {
	be *cudaBackend
	s  driver.Stream
	q  *backend.Queue
}

func (b *cudaBackend) NewStream() (backend.Stream, error) {
	st := &cudaStream{be: b}
	err := b.d.w.do(func() error {
		s, err := b.d.drv.StreamCreate()
		st.s = s
		return cudaErr("create stream", err)
	})
	if err != nil {
		return nil, err
	}
	st.q = backend.NewQueue()
	return st, nil
}

// drainDevice waits until the device stream has finished its work.
func (s *cudaStream) drainDevice() error {
	ev, err := s.recordNow()
	if err != nil {
		return err
	}
	return ev.Wait(context.Background())
}

func (s *cudaStream) Enqueue(fn func() error) error {
	return s.q.Enqueue(func() error {
		if err := s.drainDevice(); err != nil {
			return err
		}
		return fn()
	})
}

// cudaEvent is a recorded device event. issued closes once the record has
// been issued to the device stream (events are issued in stream order).
type cudaEvent struct {
	be     *cudaBackend
	ev     driver.Event
	issued chan struct{}
	err    error // of creating or recording it
}

func (b *cudaBackend) newEvent() *cudaEvent {
	return &cudaEvent{be: b, issued: make(chan struct{})}
}

// record creates the driver event and records it on stream st; it runs on
// the worker. The event is destroyed when the Go value becomes unreachable.
func (e *cudaEvent) record(st driver.Stream) error {
	drv := e.be.d.drv
	ev, err := drv.EventCreate(driver.EventDefault)
	if err != nil {
		return cudaErr("create event", err)
	}
	e.ev = ev
	w := e.be.d.w
	goruntime.AddCleanup(e, func(ev driver.Event) { w.post(func() { _ = drv.EventDestroy(ev) }) }, ev)
	return cudaErr("record event", drv.EventRecord(ev, st))
}

// recordNow records an event on the device stream from the issuer itself
// (no queueing).
func (s *cudaStream) recordNow() (*cudaEvent, error) {
	e := s.be.newEvent()
	e.err = s.be.d.w.do(func() error { return e.record(s.s) })
	close(e.issued)
	return e, e.err
}

func (s *cudaStream) Record() (backend.Event, error) {
	e := s.be.newEvent()
	err := s.q.Enqueue(func() error {
		e.err = s.be.d.w.do(func() error { return e.record(s.s) })
		close(e.issued)
		return e.err
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

func (s *cudaStream) Wait(ev backend.Event) error {
	e, ok := ev.(*cudaEvent)
	if !ok || e.be.d != s.be.d {
		return fmt.Errorf("tcrt: wait event: an event of another backend or device: %w", backend.ErrArgument)
	}
	return s.q.Enqueue(func() error {
		<-e.issued
		if e.err != nil {
			return e.err
		}
		return s.be.d.w.do(func() error { return cudaErr("stream wait event", s.be.d.drv.StreamWaitEvent(s.s, e.ev)) })
	})
}

// Sync waits, honouring ctx, for everything issued so far to finish on the
// device, and returns the first error since the last Sync.
func (s *cudaStream) Sync(ctx context.Context) error {
	ev, err := s.Record()
	if err != nil {
		return err
	}
	werr := ev.Wait(ctx)
	if werr != nil && ctx.Err() != nil {
		return werr // cancelled: the work goes on; its errors stay queued
	}
	qerr := s.q.TakeErr()
	if qerr != nil {
		return qerr
	}
	return werr
}

func (s *cudaStream) Close() error {
	err := s.q.Close() // issues everything queued
	drv := s.be.d.drv
	e := s.be.d.w.do(func() error {
		if err := cudaErr("synchronize stream", drv.StreamSynchronize(s.s)); err != nil {
			return err
		}
		return cudaErr("destroy stream", drv.StreamDestroy(s.s))
	})
	return joinErrs([]error{err, e})
}

func (e *cudaEvent) Wait(ctx context.Context) error {
	select {
	case <-e.issued:
	case <-ctx.Done():
		return ctx.Err()
	}
	if e.err != nil {
		return e.err
	}
	err := e.be.d.waitEvent(ctx, e.ev)
	// e owns the driver event (a cleanup destroys it): alive until here
	goruntime.KeepAlive(e)
	return err
}

func (e *cudaEvent) Done() bool {
	select {
	case <-e.issued:
	default:
		return false
	}
	if e.err != nil {
		return true
	}
	var q error
	err := e.be.d.w.do(func() error { q = e.be.d.drv.EventQuery(e.ev); return nil })
	goruntime.KeepAlive(e)
	if err != nil {
		return false
	}
	return !driver.IsCode(q, driver.ErrorNotReady)
}

func (e *cudaEvent) Elapsed(start backend.Event) (time.Duration, error) {
	s, ok := start.(*cudaEvent)
	if !ok || s.be.d != e.be.d {
		return 0, fmt.Errorf("tcrt: elapsed: events of different backends or devices: %w", backend.ErrArgument)
	}
	if s.err != nil || e.err != nil {
		return 0, fmt.Errorf("tcrt: elapsed: an event failed to record: %w", backend.ErrArgument)
	}
	var ms float32
	err := e.be.d.w.do(func() error {
		var err error
		ms, err = e.be.d.drv.EventElapsedTime(s.ev, e.ev)
		return cudaErr("event elapsed time", err)
	})
	goruntime.KeepAlive(s)
	goruntime.KeepAlive(e)
	return time.Duration(float64(ms) * float64(time.Millisecond)), err
}

// module is a loaded module and its functions.
type module struct {
	mod   driver.Module
	image backend.Image
	log   driver.JITLog
	err   error // of loading: kept, so a failed module is not retried per launch
	fns   map[string]*function
}

type function struct {
	f         driver.Function
	smemOptIn int // the dynamic shared memory the function is opted in to
}

// CanLoad reports whether the device runs m: the image the driver's rule
// selects, and that the driver loads it (the module stays loaded for the
// launches).
func (b *cudaBackend) CanLoad(m *backend.Module) error {
	if m == nil {
		return fmt.Errorf("tcrt: cuda: a nil module: %w", backend.ErrArgument)
	}
	// kernel selection asks for every call: a module seen before answers
	// without a hop to the worker
	b.modMu.Lock()
	cm := b.mods[m.Name]
	var err error
	if cm != nil {
		err = cm.err
	}
	b.modMu.Unlock()
	if cm != nil {
		return err
	}
	return b.d.w.do(func() error {
		b.modMu.Lock()
		defer b.modMu.Unlock()
		_, err := b.load(m)
		return err
	})
}

// load returns m loaded, loading it on first use; it runs on the worker
// with modMu held.
func (b *cudaBackend) load(m *backend.Module) (*module, error) {
	cm := b.mods[m.Name]
	if cm != nil {
		return cm, cm.err
	}
	cm = &module{fns: map[string]*function{}}
	b.mods[m.Name] = cm
	sm := b.d.info.SM()
	cm.image, cm.err = m.Select(sm)
	switch {
	case cm.err != nil:
	case cm.image.Kind == backend.KindPTX && b.cfg.NoJIT:
		cm.err = fmt.Errorf("module %s: %s; the %s device compiles no PTX and needs an sm_%d cubin: %w",
			m.Name, cm.image.Reason, b.cfg.Kind, sm, backend.ErrUnsupported)
	default:
		var err error
		cm.mod, cm.log, err = b.d.drv.ModuleLoadData(cm.image.Data)
		if err != nil {
			cm.err = fmt.Errorf("module %s (%s: %s): %w", m.Name, cm.image.Kind, cm.image.Reason, cudaErr("module load", err))
		}
	}
	return cm, cm.err
}

// function returns m's function name, loading m on first use; it runs on
// the worker.
func (b *cudaBackend) function(m *backend.Module, name string) (*function, error) {
	b.modMu.Lock()
	defer b.modMu.Unlock()
	cm, err := b.load(m)
	if err != nil {
		return nil, err
	}
	f := cm.fns[name]
	if f == nil {
		fn, err := b.d.drv.ModuleGetFunction(cm.mod, name)
		if err != nil {
			return nil, fmt.Errorf("module %s: %w", m.Name, cudaErr("get function "+name, err))
		}
		f = &function{f: fn}
		cm.fns[name] = f
	}
	return f, nil
}

// defaultSharedLimit is the dynamic shared memory a kernel may use without
// opting in.
const defaultSharedLimit = 48 << 10

func (s *cudaStream) LaunchGPU(g backend.Launch) error {
	if err := checkShape(g); err != nil {
		return err
	}
	return s.q.Enqueue(func() error { return s.IssueGPU(g) })
}

// checkShape refuses what cannot be passed to the driver at all.
func checkShape(g backend.Launch) error {
	if g.Module == nil {
		return fmt.Errorf("tcrt: cuda: launch %s: no module: %w", g.Func, backend.ErrArgument)
	}
	for i := range 3 {
		if g.Grid[i] < 0 || g.Block[i] < 0 || g.Grid[i] > math.MaxUint32 || g.Block[i] > math.MaxUint32 {
			return fmt.Errorf("tcrt: cuda: launch %s: grid %v block %v out of range: %w", g.Func, g.Grid, g.Block, backend.ErrArgument)
		}
	}
	if g.SharedBytes < 0 || g.SharedBytes > math.MaxInt32 {
		return fmt.Errorf("tcrt: cuda: launch %s: %d bytes of shared memory: %w", g.Func, g.SharedBytes, backend.ErrArgument)
	}
	return nil
}

// IssueGPU issues g on the device stream at once. It must run on the
// stream's issuer (inside work enqueued on s.q), so stream order holds.
func (s *cudaStream) IssueGPU(g backend.Launch) error {
	if err := checkShape(g); err != nil {
		return err
	}
	var grid, block [3]uint32
	for i := range 3 {
		grid[i], block[i] = uint32(max(g.Grid[i], 1)), uint32(max(g.Block[i], 1))
	}
	drv := s.be.d.drv
	return s.be.d.w.do(func() error {
		f, err := s.be.function(g.Module, g.Func)
		if err != nil {
			return fmt.Errorf("tcrt: cuda: launch %s: %w", g.Func, err)
		}
		if g.SharedBytes > defaultSharedLimit && g.SharedBytes > f.smemOptIn {
			if err := drv.FuncSetAttribute(f.f, driver.FuncMaxDynamicSharedMem, g.SharedBytes); err != nil {
				return cudaErr("kernel "+g.Func+": opt in to dynamic shared memory", err)
			}
			f.smemOptIn = g.SharedBytes
		}
		return cudaErr("launch "+g.Func, drv.LaunchKernel(f.f, grid, block, uint32(g.SharedBytes), s.s, g.Params))
	})
}
