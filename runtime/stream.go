package runtime

import (
	"github.com/tcrt-go/tcrt/runtime/backend"

	"bytes"
	"context"
	"fmt"
	goruntime "runtime"
	"strconv"
	"sync/atomic"
	"time"
)

// Stream is an ordered, asynchronous queue of work on the runtime's device.
// Work enqueued on one stream runs in order; different streams may run
// concurrently, ordered against each other only through events. On the CPU
// backend a worker goroutine executes each stream's queue.
//
// Work running on a stream (a function given to Enqueue) must not wait for
// that stream: synchronizing it or its runtime, closing it or a buffer,
// reading or writing a buffer, or waiting for an event recorded on it after
// the work, would wait for the work itself. Those calls detect it and
// return an error wrapping ErrArgument instead of deadlocking.
type Stream struct {
	rt     *Runtime
	impl   backend.Stream
	closed atomic.Bool
	// active counts the stream's Enqueue functions running now (0 or 1).
	active atomic.Int32
	// runner is the id of the goroutine that runs the stream's work, taken
	// by the first Enqueue function to run (0 before). Both backends run a
	// stream's queue on one worker goroutine of its own, which runs nothing
	// else, so "the caller is runner and active > 0" means "the caller is
	// the stream's running work".
	runner atomic.Uint64
}

// NewStream creates a stream. Close it when done.
func (r *Runtime) NewStream() (*Stream, error) {
	if err := r.checkOpen("new stream"); err != nil {
		return nil, err
	}
	impl, err := r.be.NewStream()
	if err != nil {
		return nil, err
	}
	s := &Stream{rt: r, impl: impl}
	r.mu.Lock()
	r.streams[s] = struct{}{}
	r.mu.Unlock()
	return s, nil
}

// Runtime is the stream's runtime (nil for a nil stream).
func (s *Stream) Runtime() *Runtime {
	if s == nil {
		return nil
	}
	return s.rt
}

func (s *Stream) check(op string) error {
	if s == nil || s.rt == nil {
		return fmt.Errorf("tcrt: %s: argument stream: nil or not made by NewStream: %w", op, ErrArgument)
	}
	if s.closed.Load() || s.rt.closed.Load() {
		return fmt.Errorf("tcrt: %s: stream is closed: %w", op, ErrClosed)
	}
	return nil
}

// goid returns the calling goroutine's id, parsed from the header of its
// stack trace ("goroutine 123 [running]:"). It costs microseconds, so it is
// called once per stream on the worker side, and on the waiting side only
// while some Enqueue function of the runtime is running.
func goid() uint64 {
	var buf [64]byte
	b := buf[:goruntime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}

// inTask reports whether the caller is an Enqueue function running on s.
func (s *Stream) inTask() bool {
	return s.active.Load() > 0 && s.runner.Load() == goid()
}

// taskStream returns the stream of r whose Enqueue function the caller is,
// or nil.
func (r *Runtime) taskStream() *Stream {
	if r.tasks.Load() == 0 {
		return nil
	}
	id := goid()
	for _, s := range r.liveStreams() {
		if s.active.Load() > 0 && s.runner.Load() == id {
			return s
		}
	}
	return nil
}

func selfWait(op string) error {
	return fmt.Errorf("tcrt: %s: called from work running on the stream it would wait for, which cannot finish first: %w", op, ErrArgument)
}

// Enqueue appends fn to the stream: it runs after all work enqueued before
// it. An error fn returns is reported by the next Synchronize; a panic in fn
// is reported the same way, wrapping ErrDevice. fn must not wait for its own
// stream (see Stream). Kernels use it; applications rarely need it.
func (s *Stream) Enqueue(fn func() error) error {
	if err := s.check("enqueue"); err != nil {
		return err
	}
	if fn == nil {
		return fmt.Errorf("tcrt: enqueue: argument fn: nil function: %w", ErrArgument)
	}
	return s.impl.Enqueue(func() error {
		s.rt.tasks.Add(1)
		s.active.Add(1)
		defer func() {
			s.active.Add(-1)
			s.rt.tasks.Add(-1)
		}()
		if s.runner.Load() == 0 {
			s.runner.Store(goid())
		}
		return fn()
	})
}

// Synchronize waits until all work enqueued so far has finished, or ctx is
// done (the work itself is not cancelled). It returns the first error the
// work reported since the previous Synchronize.
func (s *Stream) Synchronize(ctx context.Context) error {
	if err := s.check("synchronize"); err != nil {
		return err
	}
	if ctx == nil {
		return fmt.Errorf("tcrt: synchronize: argument ctx: nil: %w", ErrArgument)
	}
	if s.inTask() {
		return selfWait("synchronize")
	}
	return s.impl.Sync(ctx)
}

// Record enqueues an event that completes when all work enqueued before it
// has finished.
func (s *Stream) Record() (*Event, error) {
	if err := s.check("record event"); err != nil {
		return nil, err
	}
	e, err := s.impl.Record()
	if err != nil {
		return nil, err
	}
	return &Event{impl: e, s: s}, nil
}

// WaitEvent makes work enqueued on s after this call wait until ev has
// completed; ev must come from a stream of the same runtime.
func (s *Stream) WaitEvent(ev *Event) error {
	if err := s.check("wait event"); err != nil {
		return err
	}
	if ev == nil || ev.impl == nil {
		return fmt.Errorf("tcrt: wait event: argument event: nil: %w", ErrArgument)
	}
	if ev.s.rt != s.rt {
		return fmt.Errorf("tcrt: wait event: argument event: recorded on another runtime's stream: %w", ErrArgument)
	}
	return s.impl.Wait(ev.impl)
}

// Close waits for the queued work, then releases the stream. The default
// stream is closed with the runtime, not by Close. Close on a nil stream
// returns an error wrapping ErrArgument.
func (s *Stream) Close() error {
	if s == nil || s.rt == nil {
		return fmt.Errorf("tcrt: close stream: argument stream: nil or not made by NewStream: %w", ErrArgument)
	}
	if s == s.rt.def {
		return nil
	}
	if s.inTask() {
		return selfWait("close stream")
	}
	return s.close()
}

func (s *Stream) close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	s.rt.mu.Lock()
	delete(s.rt.streams, s)
	s.rt.mu.Unlock()
	return s.impl.Close()
}

// Event marks a point in a stream's work.
type Event struct {
	impl backend.Event
	s    *Stream // the stream it was recorded on
}

// Wait blocks until the event has completed or ctx is done. Work running on
// the event's stream cannot wait for an event recorded after it there: that
// returns an error wrapping ErrArgument.
func (e *Event) Wait(ctx context.Context) error {
	if e == nil || e.impl == nil {
		return fmt.Errorf("tcrt: wait: argument event: nil: %w", ErrArgument)
	}
	if ctx == nil {
		return fmt.Errorf("tcrt: wait: argument ctx: nil: %w", ErrArgument)
	}
	if !e.impl.Done() && e.s.inTask() {
		return selfWait("wait")
	}
	return e.impl.Wait(ctx)
}

// Done reports whether the event has completed (false for a nil event).
func (e *Event) Done() bool { return e != nil && e.impl != nil && e.impl.Done() }

// Elapsed returns the time from start to end; both must have completed, on
// streams of one runtime, and end must not have completed before start.
func Elapsed(start, end *Event) (time.Duration, error) {
	if start == nil || start.impl == nil {
		return 0, fmt.Errorf("tcrt: elapsed: argument start: nil: %w", ErrArgument)
	}
	if end == nil || end.impl == nil {
		return 0, fmt.Errorf("tcrt: elapsed: argument end: nil: %w", ErrArgument)
	}
	if start.s.rt != end.s.rt {
		return 0, fmt.Errorf("tcrt: elapsed: the events belong to different runtimes: %w", ErrArgument)
	}
	if !start.Done() || !end.Done() {
		return 0, fmt.Errorf("tcrt: elapsed: an event has not completed yet: %w", ErrArgument)
	}
	d, err := end.impl.Elapsed(start.impl)
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, fmt.Errorf("tcrt: elapsed: end completed %v before start; pass the earlier event first: %w", -d, ErrArgument)
	}
	return d, nil
}
