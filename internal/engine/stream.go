package engine

import (
	"github.com/tcrt-go/tcrt/runtime/backend"
	"slices"

	"bytes"
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Stream is an ordered, asynchronous queue of work: the object behind a
// runtime.Stream, whose doc states the ordering and self-wait rules.
type Stream struct {
	handle // the public handle (see Handles)
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
	// pending is an error earlier work reported that a synchronous call
	// waited past (it reports only its own): the next Synchronize's.
	pendMu  sync.Mutex
	pending error
	// drained is closed once Close has drained the stream's queue.
	drained chan struct{}
}

// keepPending sets err aside for the stream's next Synchronize (the first
// such error wins, as the backend keeps the first).
func (s *Stream) keepPending(err error) {
	if err == nil {
		return
	}
	s.pendMu.Lock()
	if s.pending == nil {
		s.pending = err
	}
	s.pendMu.Unlock()
}

func (s *Stream) takePending() error {
	s.pendMu.Lock()
	defer s.pendMu.Unlock()
	err := s.pending
	s.pending = nil
	return err
}

// releaseAfter drops rs once the work enqueued on s so far has finished:
// a task after it on the stream, or, when the stream is closing, once its
// Close has drained it.
func (s *Stream) releaseAfter(rs refs) {
	if len(rs) == 0 {
		return
	}
	if err := s.impl.Enqueue(func() error { rs.release(); return nil }); err != nil {
		go func() {
			<-s.drained
			rs.release()
		}()
	}
}

// Use makes the work enqueued on s so far hold bufs (PyTorch's
// record_stream): a Close of one of them leaves its memory until that work
// has finished. Ops do this for every buffer they name; call it after
// enqueueing work by hand (Enqueue, LaunchGPU) that touches a buffer. It
// returns an error wrapping ErrClosed, and holds nothing, if a buffer is
// already closed.
func (s *Stream) Use(bufs ...*Buffer) error {
	if err := s.check("use"); err != nil {
		return err
	}
	var rs refs
	for _, b := range bufs {
		if b != nil && !slices.Contains(rs, b) {
			rs = append(rs, b)
		}
	}
	if err := hold("use", rs); err != nil {
		return err
	}
	s.releaseAfter(rs)
	return nil
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
	s := &Stream{rt: r, impl: impl, drained: make(chan struct{})}
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

// Synchronize waits for the work enqueued so far and returns the first
// error it reported since the previous Synchronize (see
// runtime.Stream.Synchronize for which calls report which errors).
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
	err := s.impl.Sync(ctx)
	if p := s.takePending(); p != nil {
		if err != nil && ctx.Err() != nil {
			return errors.Join(p, err)
		}
		return p
	}
	return err
}

// syncOwn waits for the work enqueued on s so far and returns its error,
// for a synchronous call whose own work was the last enqueued: the errors
// earlier work reported were set aside (keepPending) before it launched.
func (s *Stream) syncOwn(ctx context.Context) error {
	return s.impl.Sync(ctx)
}

// setAsideErrors waits for the work enqueued on s so far and keeps what it
// reported for s's next Synchronize, so that a synchronous call launched
// next reports its own error only. It returns ctx's error if ctx ends first.
func (s *Stream) setAsideErrors(ctx context.Context) error {
	err := s.impl.Sync(ctx)
	if cerr := ctx.Err(); cerr != nil {
		s.keepPending(err)
		return cerr
	}
	s.keepPending(err)
	return nil
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
	err := s.impl.Close() // drains the queue
	close(s.drained)
	return err
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
