package runtime

import (
	"github.com/tcrt-go/tcrt/runtime/backend"

	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// Stream is an ordered, asynchronous queue of work on the runtime's device.
// Work enqueued on one stream runs in order; different streams may run
// concurrently, ordered against each other only through events. On the CPU
// backend a worker goroutine executes each stream's queue.
type Stream struct {
	rt     *Runtime
	impl   backend.Stream
	closed atomic.Bool
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

// Runtime is the stream's runtime.
func (s *Stream) Runtime() *Runtime { return s.rt }

func (s *Stream) check(op string) error {
	if s == nil {
		return fmt.Errorf("tcrt: %s: argument stream: nil: %w", op, ErrArgument)
	}
	if s.closed.Load() || s.rt.closed.Load() {
		return fmt.Errorf("tcrt: %s: stream is closed: %w", op, ErrClosed)
	}
	return nil
}

// Enqueue appends fn to the stream: it runs after all work enqueued before
// it. An error fn returns is reported by the next Synchronize. Kernels use
// it; applications rarely need it.
func (s *Stream) Enqueue(fn func() error) error {
	if err := s.check("enqueue"); err != nil {
		return err
	}
	return s.impl.Enqueue(fn)
}

// Synchronize waits until all work enqueued so far has finished, or ctx is
// done (the work itself is not cancelled). It returns the first error the
// work reported since the previous Synchronize.
func (s *Stream) Synchronize(ctx context.Context) error {
	if err := s.check("synchronize"); err != nil {
		return err
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
	return &Event{impl: e}, nil
}

// WaitEvent makes work enqueued on s after this call wait until ev has
// completed; ev may come from another stream of the same runtime.
func (s *Stream) WaitEvent(ev *Event) error {
	if err := s.check("wait event"); err != nil {
		return err
	}
	if ev == nil {
		return fmt.Errorf("tcrt: wait event: argument event: nil: %w", ErrArgument)
	}
	return s.impl.Wait(ev.impl)
}

// Close waits for the queued work, then releases the stream. The default
// stream is closed with the runtime, not by Close.
func (s *Stream) Close() error {
	if s == nil || s == s.rt.def {
		return nil
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
}

// Wait blocks until the event has completed or ctx is done.
func (e *Event) Wait(ctx context.Context) error { return e.impl.Wait(ctx) }

// Done reports whether the event has completed.
func (e *Event) Done() bool { return e.impl.Done() }

// Elapsed returns the time from start to end; both must have completed.
func Elapsed(start, end *Event) (time.Duration, error) {
	if start == nil || end == nil {
		return 0, fmt.Errorf("tcrt: elapsed: argument event: nil: %w", ErrArgument)
	}
	if !start.Done() || !end.Done() {
		return 0, fmt.Errorf("tcrt: elapsed: an event has not completed yet: %w", ErrArgument)
	}
	return end.impl.Elapsed(start.impl)
}
