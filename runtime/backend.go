package runtime

import (
	"context"
	"time"
)

// backend is what a runtime needs from a device: memory, streams and events.
// The CPU backend is always built; the CUDA backend only with -tags cuda.
type backend interface {
	kind() BackendKind
	device() Device
	// alloc returns zeroed device memory of n bytes.
	alloc(n int) (memory, error)
	newStream() (streamImpl, error)
	close() error
}

// memory is one allocation.
type memory interface {
	// host returns the bytes when the memory is host-addressable (CPU
	// backend), else nil.
	host() []byte
	// write copies src to offset off; read copies from offset off to dst.
	// Both are synchronous.
	write(ctx context.Context, off int, src []byte) error
	read(ctx context.Context, off int, dst []byte) error
	free() error
}

// streamImpl is a backend's ordered queue of work.
type streamImpl interface {
	// enqueue appends fn; fn runs after everything enqueued before it.
	enqueue(fn func() error) error
	// record enqueues an event marker.
	record() (eventImpl, error)
	// wait makes later work wait for ev.
	wait(ev eventImpl) error
	// sync waits until all enqueued work has finished (or ctx ends) and
	// returns the first error that work reported since the last sync.
	sync(ctx context.Context) error
	close() error
}

// eventImpl is a point in a stream's work.
type eventImpl interface {
	// wait blocks until the event has completed or ctx ends.
	wait(ctx context.Context) error
	done() bool
	// elapsed is the time from start (an event of the same backend) to
	// this event; both have completed.
	elapsed(start eventImpl) (time.Duration, error)
}
