package runtime

import (
	"context"
	"time"

	"github.com/tcrt-go/tcrt/internal/engine"
)

// Stream is an ordered, asynchronous queue of work on the runtime's
// device. Work enqueued on one stream runs in order; different streams may
// run concurrently, ordered against each other only through events. On
// the CPU backend a worker goroutine executes each stream's queue.
//
// Work running on a stream (a function given to Enqueue) must not wait for
// that stream: synchronizing it or its runtime, closing it or a buffer,
// reading or writing a buffer, or waiting for an event recorded on it
// after the work, would wait for the work itself. Those calls detect it
// and return an error wrapping ErrArgument instead of deadlocking.
type Stream struct{ s *engine.Stream }

// e is the engine stream behind s (nil for a nil s).
func (s *Stream) e() *engine.Stream {
	if s == nil {
		return nil
	}
	return s.s
}

// Runtime is the stream's runtime (nil for a nil stream).
func (s *Stream) Runtime() *Runtime { return wrapRuntime(s.e().Runtime()) }

// Enqueue appends fn to the stream: it runs after all work enqueued before
// it. An error fn returns is reported by the next Synchronize; a panic in
// fn is reported the same way, wrapping ErrDevice. fn must not wait for
// its own stream (see Stream).
func (s *Stream) Enqueue(fn func() error) error { return s.e().Enqueue(fn) }

// Record enqueues an event that completes when all work enqueued before it
// has finished.
func (s *Stream) Record() (*Event, error) {
	ev, err := s.e().Record()
	if err != nil {
		return nil, err
	}
	return &Event{ev}, nil
}

// WaitEvent makes work enqueued on s after this call wait until ev has
// completed; ev must come from a stream of the same runtime.
func (s *Stream) WaitEvent(ev *Event) error { return s.e().WaitEvent(ev.e()) }

// Synchronize waits until all work enqueued so far has finished, or ctx is
// done (the work itself is not cancelled). It returns the first error the
// work reported since the previous Synchronize.
//
// Errors belong to streams. The error of work enqueued on s (an async op:
// its options name s) is reported by s's Synchronize and by
// Runtime.Synchronize, once, and by nothing else: not by host transfers
// (Buffer.Write, Read), not by other streams, not by a synchronous call
// (no stream), which reports its own error only. An op that fails on a
// stream writes nothing (its checks come first); the work queued after it
// still runs in order, and the next Synchronize reports the first failure
// (later ones of the same interval are dropped, as the first usually
// causes them).
func (s *Stream) Synchronize(ctx context.Context) error { return s.e().Synchronize(ctx) }

// Close waits for the queued work, then releases the stream. The default
// stream is closed with the runtime, not by Close. Close on a nil stream
// returns an error wrapping ErrArgument.
func (s *Stream) Close() error { return s.e().Close() }

// Event marks a point in a stream's work.
type Event struct{ ev *engine.Event }

// e is the engine event behind e (nil for a nil e).
func (e *Event) e() *engine.Event {
	if e == nil {
		return nil
	}
	return e.ev
}

// Wait blocks until the event has completed or ctx is done. Work running
// on the event's stream cannot wait for an event recorded after it there:
// that returns an error wrapping ErrArgument.
func (e *Event) Wait(ctx context.Context) error { return e.e().Wait(ctx) }

// Done reports whether the event has completed (false for a nil event).
func (e *Event) Done() bool { return e.e().Done() }

// Elapsed returns the time from start to end; both must have completed,
// on streams of one runtime, and end must not have completed before start.
func Elapsed(start, end *Event) (time.Duration, error) { return engine.Elapsed(start.e(), end.e()) }
