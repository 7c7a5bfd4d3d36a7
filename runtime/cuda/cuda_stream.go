//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"github.com/tcrt-go/tcrt/runtime/backend"
	goruntime "runtime"
	"time"

	cu "gorgonia.org/cu"

	"github.com/tcrt-go/tcrt/kernels/ptx"
)

// cudaStream is a device stream plus an issuer: a CPU stream (the same
// FIFO-and-goroutine the CPU backend uses) through which every operation is
// issued in order. Device operations (launches, event records and waits)
// are issued asynchronously and return at once; a host task (enqueue, used
// by CPU kernels and the host fallback) first waits for the device stream
// to drain, so it sees the results of earlier device work, and later device
// work is only issued after it.
type cudaStream struct {
	be *cudaBackend
	s  cu.Stream
	q  *backend.Queue
}

func (b *cudaBackend) NewStream() (backend.Stream, error) {
	st := &cudaStream{be: b}
	err := b.d.w.do(func() error {
		s, err := cu.MakeStream(cu.DefaultStream)
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
	ev     cu.Event
	issued chan struct{}
	err    error // of creating or recording it
}

func (b *cudaBackend) newEvent() *cudaEvent {
	e := &cudaEvent{be: b, issued: make(chan struct{})}
	return e
}

// create makes the driver event, on the worker.
func (e *cudaEvent) create() error {
	ev, err := cu.MakeEvent(cu.DefaultEvent)
	if err != nil {
		return cudaErr("create event", err)
	}
	e.ev = ev
	w := e.be.d.w
	goruntime.AddCleanup(e, func(ev cu.Event) { w.post(func() { _ = cu.DestroyEvent(&ev) }) }, ev)
	return nil
}

// recordNow records an event on the device stream from the issuer itself
// (no queueing).
func (s *cudaStream) recordNow() (*cudaEvent, error) {
	e := s.be.newEvent()
	e.err = s.be.d.w.do(func() error {
		if err := e.create(); err != nil {
			return err
		}
		return cudaErr("record event", e.ev.Record(s.s))
	})
	close(e.issued)
	return e, e.err
}

func (s *cudaStream) Record() (backend.Event, error) {
	e := s.be.newEvent()
	err := s.q.Enqueue(func() error {
		e.err = s.be.d.w.do(func() error {
			if err := e.create(); err != nil {
				return err
			}
			return cudaErr("record event", e.ev.Record(s.s))
		})
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
	if !ok {
		return fmt.Errorf("tcrt: wait event: an event of another backend: %w", ErrArgument)
	}
	return s.q.Enqueue(func() error {
		<-e.issued
		if e.err != nil {
			return e.err
		}
		return s.be.d.w.do(func() error { return cudaErr("stream wait event", s.s.Wait(e.ev, 0)) })
	})
}

// sync waits, honouring ctx, for everything issued so far to finish on the
// device, and returns the first error since the last sync.
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
	e := s.be.d.w.do(func() error {
		if err := cudaErr("synchronize stream", s.s.Synchronize()); err != nil {
			return err
		}
		return cudaErr("destroy stream", s.s.Destroy())
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
	return e.be.d.w.waitEvent(ctx, e.ev)
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
	if err := e.be.d.w.do(func() error { q = e.ev.Query(); return nil }); err != nil {
		return false
	}
	return q != cu.NotReady
}

func (e *cudaEvent) Elapsed(start backend.Event) (time.Duration, error) {
	s, ok := start.(*cudaEvent)
	if !ok {
		return 0, fmt.Errorf("tcrt: elapsed: events of different backends: %w", ErrArgument)
	}
	if s.err != nil || e.err != nil {
		return 0, fmt.Errorf("tcrt: elapsed: an event failed to record: %w", ErrArgument)
	}
	var ms float64
	err := e.be.d.w.do(func() error {
		var err error
		ms, err = s.ev.Elapsed(e.ev)
		return cudaErr("event elapsed time", err)
	})
	return time.Duration(ms * float64(time.Millisecond)), err
}

// cudaModule is a loaded module and its functions.
type cudaModule struct {
	mod   cuModule
	image ptx.Image
	err   error // of loading: kept, so a failed module is not retried per launch
	fns   map[string]*cudaFunction
}

type cudaFunction struct {
	f         cuFunction
	smemOptIn int // the dynamic shared memory the function is opted in to
}

// function returns m's function name, loading m on first use; it runs on
// the worker.
func (b *cudaBackend) function(m *ptx.Module, name string) (*cudaFunction, error) {
	b.modMu.Lock()
	defer b.modMu.Unlock()
	cm := b.mods[m.Name]
	if cm == nil {
		cm = &cudaModule{fns: map[string]*cudaFunction{}}
		b.mods[m.Name] = cm
		cm.image, cm.err = m.Select(b.d.info.SM())
		if cm.err == nil {
			var info string
			cm.mod, info, cm.err = moduleLoad(cm.image.Data)
			_ = info
			if cm.err != nil {
				cm.err = fmt.Errorf("tcrt: cuda: module %s (%s: %s): %w", m.Name, cm.image.Kind, cm.image.Reason, cm.err)
			}
		}
	}
	if cm.err != nil {
		return nil, cm.err
	}
	f := cm.fns[name]
	if f == nil {
		fn, err := moduleFunction(cm.mod, name)
		if err != nil {
			return nil, fmt.Errorf("tcrt: cuda: module %s: %w", m.Name, err)
		}
		f = &cudaFunction{f: fn}
		cm.fns[name] = f
	}
	return f, nil
}

// defaultSharedLimit is the dynamic shared memory a kernel may use without
// opting in.
const defaultSharedLimit = 48 << 10

func (s *cudaStream) LaunchGPU(g GPULaunch) error {
	return s.q.Enqueue(func() error { return s.IssueGPU(g) })
}

// issueGPU issues g on the device stream at once. It must run on the
// stream's issuer (inside work enqueued on s.q), so stream order holds.
func (s *cudaStream) IssueGPU(g GPULaunch) error {
	return s.be.d.w.do(func() error {
		f, err := s.be.function(g.Module, g.Func)
		if err != nil {
			return err
		}
		if g.SharedBytes > defaultSharedLimit && g.SharedBytes > f.smemOptIn {
			if err := funcSetSharedBytes(f.f, g.SharedBytes); err != nil {
				return fmt.Errorf("kernel %s: %w", g.Func, err)
			}
			f.smemOptIn = g.SharedBytes
		}
		return launch(f.f, g, s.s)
	})
}
