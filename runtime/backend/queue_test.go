package backend

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestCPUStreamInline checks the synchronous fast path: a task run inline
// holds the stream, so work enqueued meanwhile runs after it; a busy
// stream refuses to run inline; the inline call reports an earlier
// asynchronous error as sync would.
func TestCPUStreamInline(t *testing.T) {
	s := NewQueue()
	defer s.Close()
	ctx := context.Background()

	var mu sync.Mutex
	var order []int
	add := func(v int) { mu.Lock(); order = append(order, v); mu.Unlock() }
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan bool)
	go func() {
		ran, err := s.RunInline(func() error { close(started); <-release; add(1); return nil })
		done <- ran && err == nil
	}()
	<-started
	if err := s.Enqueue(func() error { add(2); return nil }); err != nil {
		t.Fatal(err)
	}
	if ran, _ := s.RunInline(func() error { add(99); return nil }); ran {
		t.Fatal("runInline ran a task while another held the stream")
	}
	time.Sleep(5 * time.Millisecond) // give a wrongly unblocked worker time to run task 2
	close(release)
	if !<-done {
		t.Fatal("the first runInline did not run or failed")
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if len(order) != 2 || order[0] != 1 || order[1] != 2 {
		t.Fatalf("order %v; want [1 2]", order)
	}

	// An asynchronous failure is reported by the next synchronous call,
	// even one that runs inline and succeeds.
	boom := errors.New("boom")
	if err := s.Enqueue(func() error { return boom }); err != nil {
		t.Fatal(err)
	}
	for {
		s.mu.Lock()
		idle := len(s.queue) == 0 && !s.running
		s.mu.Unlock()
		if idle {
			break
		}
		time.Sleep(time.Millisecond)
	}
	ran, err := s.RunInline(func() error { return nil })
	if !ran || err != nil {
		t.Fatalf("runInline after a failed task: ran %v, err %v; want its own (nil) error", ran, err)
	}
	if err := s.Sync(ctx); !errors.Is(err, boom) {
		t.Fatalf("the earlier task's error is not Sync's: %v", err)
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatalf("the error was reported twice: %v", err)
	}
	// A panic inline becomes an error, and the stream goes on.
	if ran, err := s.RunInline(func() error { panic("kernel bug") }); !ran || err == nil {
		t.Fatalf("panicking inline task: ran %v, err %v", ran, err)
	}
	if err := s.Enqueue(func() error { add(3); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(ctx); err != nil || order[len(order)-1] != 3 {
		t.Fatalf("stream after an inline panic: err %v, order %v", err, order)
	}
}
