package backend

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Queue is a FIFO of host tasks run in order by one worker goroutine: the
// CPU backend's stream, and the issuer behind every GPU backend's stream
// (GPU work is issued from its tasks, so it keeps stream order). It
// implements Stream.
type Queue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	queue   []func() error
	running bool // the worker is executing a task
	inline  bool // a synchronous launch is running a task on its own goroutine
	closed  bool
	err     error // first error since the last sync
	exited  chan struct{}
}

// NewQueue starts a queue's worker.
func NewQueue() *Queue {
	s := &Queue{exited: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	go s.worker()
	return s
}

func (s *Queue) worker() {
	defer close(s.exited)
	s.mu.Lock()
	for {
		// Queued work waits for an inline task, and a close for both.
		for s.inline || (len(s.queue) == 0 && !s.closed) {
			s.cond.Wait()
		}
		if len(s.queue) == 0 {
			s.mu.Unlock()
			return
		}
		fn := s.queue[0]
		s.queue[0] = nil
		s.queue = s.queue[1:]
		s.running = true
		s.mu.Unlock()
		err := RunTask(fn)
		s.mu.Lock()
		s.running = false
		if err != nil && s.err == nil {
			s.err = err
		}
		s.cond.Broadcast()
	}
}

// Idle reports whether nothing is queued or running on s: the work
// enqueued before the call has finished.
func (s *Queue) Idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.running && !s.inline && len(s.queue) == 0
}

// RunTask runs fn, turning a panic inside a kernel into an error wrapping
// ErrDevice, so one bad kernel cannot take the process down through a
// worker goroutine.
func RunTask(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("tcrt: kernel panicked: %v: %w", r, ErrDevice)
		}
	}()
	return fn()
}

// RunInline is the fast path of a synchronous launch: when the queue is
// idle (nothing queued or running) it runs fn on the calling goroutine,
// saving the two goroutine hand-offs (to the worker and back) of Enqueue
// and Sync. Work enqueued meanwhile waits for fn, so the order holds. ok
// is false when it did not run fn; err is fn's own error (a panic wrapped
// in ErrDevice). An error earlier work reported stays queued for the next
// Sync: a synchronous call reports its own error, never another's.
func (s *Queue) RunInline(fn func() error) (ok bool, err error) {
	s.mu.Lock()
	if s.closed || s.inline || s.running || len(s.queue) > 0 {
		s.mu.Unlock()
		return false, nil
	}
	s.inline = true
	s.mu.Unlock()
	err = RunTask(fn)
	s.mu.Lock()
	s.inline = false
	s.cond.Broadcast()
	s.mu.Unlock()
	return true, err
}

// Enqueue appends fn.
func (s *Queue) Enqueue(fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("tcrt: enqueue on a closed stream: %w", ErrClosed)
	}
	s.queue = append(s.queue, fn)
	s.cond.Broadcast()
	return nil
}

// HostEvent is a Queue's event: a channel closed when the queue reaches
// it, and the time it did.
type HostEvent struct {
	ch   chan struct{}
	when time.Time
}

// NewHostEvent returns an event that completes when Complete is called.
func NewHostEvent() *HostEvent { return &HostEvent{ch: make(chan struct{})} }

// Complete marks the event done now; call it once.
func (e *HostEvent) Complete() {
	e.when = time.Now()
	close(e.ch)
}

// Wait blocks until the event has completed or ctx ends.
func (e *HostEvent) Wait(ctx context.Context) error {
	select {
	case <-e.ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Done reports whether the event has completed.
func (e *HostEvent) Done() bool {
	select {
	case <-e.ch:
		return true
	default:
		return false
	}
}

// Elapsed is the time from start, another HostEvent, to e.
func (e *HostEvent) Elapsed(start Event) (time.Duration, error) {
	s, ok := start.(*HostEvent)
	if !ok {
		return 0, fmt.Errorf("tcrt: elapsed: events of different backends: %w", ErrArgument)
	}
	return e.when.Sub(s.when), nil
}

// Record enqueues an event.
func (s *Queue) Record() (Event, error) {
	e := NewHostEvent()
	if err := s.Enqueue(func() error { e.Complete(); return nil }); err != nil {
		return nil, err
	}
	return e, nil
}

// Wait makes later tasks wait for ev.
func (s *Queue) Wait(ev Event) error {
	return s.Enqueue(func() error { return ev.Wait(context.Background()) })
}

// Sync waits for every task enqueued so far and returns the first error
// since the last Sync.
func (s *Queue) Sync(ctx context.Context) error {
	ev, err := s.Record()
	if err != nil {
		return err
	}
	if err := ev.Wait(ctx); err != nil {
		return err
	}
	return s.TakeErr()
}

// TakeErr returns and clears the first error since the last Sync.
func (s *Queue) TakeErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.err
	s.err = nil
	return err
}

// Close drains the queue, then stops its worker.
func (s *Queue) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.cond.Broadcast()
	s.mu.Unlock()
	<-s.exited // the queue drains first
	return nil
}
