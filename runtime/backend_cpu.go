package runtime

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/klauspost/cpuid/v2"
)

// cpuBackend runs everything on the host: memory is Go memory, streams are
// worker goroutines executing their queues in order.
type cpuBackend struct {
	dev Device
}

// cpuFeatureNames lists the cpuid features reported in Device.Features, in
// order.
var cpuFeatureNames = []struct {
	id   cpuid.FeatureID
	name string
}{
	{cpuid.SSE4, "SSE4.1"}, {cpuid.AVX, "AVX"}, {cpuid.AVX2, "AVX2"}, {cpuid.FMA3, "FMA3"},
	{cpuid.F16C, "F16C"}, {cpuid.AVX512F, "AVX512F"}, {cpuid.AVX512BW, "AVX512BW"},
	{cpuid.AVX512DQ, "AVX512DQ"}, {cpuid.AVX512VL, "AVX512VL"}, {cpuid.AVX512BF16, "AVX512BF16"},
	{cpuid.AVX512FP16, "AVX512FP16"}, {cpuid.AVX512VNNI, "AVX512VNNI"}, {cpuid.AMXBF16, "AMXBF16"},
	{cpuid.ASIMD, "ASIMD"}, {cpuid.SVE, "SVE"},
}

func newCPUBackend(threads int) *cpuBackend {
	c := cpuid.CPU
	d := Device{
		Backend:   BackendCPU,
		Name:      c.BrandName,
		Vendor:    c.VendorString,
		Cores:     goruntime.NumCPU(), // usable by this process; cpuid's count is the host's
		Threads:   threads,
		L1DBytes:  c.Cache.L1D,
		L2Bytes:   c.Cache.L2,
		L3Bytes:   c.Cache.L3,
		CacheLine: c.CacheLine,
	}
	if d.Name == "" {
		d.Name = goruntime.GOARCH
	}
	if d.Vendor == "" {
		d.Vendor = "unknown"
	}
	d.L1DBytes, d.L2Bytes, d.L3Bytes = max(d.L1DBytes, 0), max(d.L2Bytes, 0), max(d.L3Bytes, 0)
	for _, f := range cpuFeatureNames {
		if c.Supports(f.id) {
			d.Features = append(d.Features, f.name)
		}
	}
	return &cpuBackend{dev: d}
}

func (b *cpuBackend) kind() BackendKind { return BackendCPU }
func (b *cpuBackend) device() Device    { return b.dev }
func (b *cpuBackend) close() error      { return nil }

// hostAlign is the alignment of CPU buffers: a cache line, and enough for
// 64-byte vector loads.
const hostAlign = 64

type hostMemory struct{ b []byte }

func (b *cpuBackend) alloc(n int) (m memory, err error) {
	defer func() {
		if r := recover(); r != nil { // make panics on absurd sizes "out of memory"
			m, err = nil, fmt.Errorf("allocating %d bytes: %v: %w", n, r, ErrOutOfMemory)
		}
	}()
	raw := make([]byte, n+hostAlign)
	off := 0
	if mis := int(uintptr(unsafe.Pointer(unsafe.SliceData(raw))) % hostAlign); mis != 0 {
		off = hostAlign - mis
	}
	return &hostMemory{b: raw[off : off+n : off+n]}, nil
}

func (m *hostMemory) host() []byte { return m.b }
func (m *hostMemory) write(_ context.Context, off int, src []byte) error {
	copy(m.b[off:], src)
	return nil
}
func (m *hostMemory) read(_ context.Context, off int, dst []byte) error {
	copy(dst, m.b[off:])
	return nil
}
func (m *hostMemory) free() error { m.b = nil; return nil }

// cpuStream is a FIFO of closures run by one worker goroutine.
type cpuStream struct {
	mu      sync.Mutex
	cond    *sync.Cond
	queue   []func() error
	running bool // the worker is executing a task
	inline  bool // a synchronous launch is running a task on its own goroutine
	closed  bool
	err     error // first error since the last sync
	exited  chan struct{}
}

func (b *cpuBackend) newStream() (streamImpl, error) {
	s := &cpuStream{exited: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	go s.worker()
	return s, nil
}

func (s *cpuStream) worker() {
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
		err := runTask(fn)
		s.mu.Lock()
		s.running = false
		if err != nil && s.err == nil {
			s.err = err
		}
		s.cond.Broadcast()
	}
}

// runTask runs fn, turning a panic inside a kernel into an error so one bad
// kernel cannot take the process down through a worker goroutine.
func runTask(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("tcrt: kernel panicked: %v: %w", r, ErrDevice)
		}
	}()
	return fn()
}

// runInline is the fast path of a synchronous launch: when the stream is
// idle (nothing queued or running) it runs fn on the calling goroutine,
// saving the two goroutine hand-offs (to the worker and back) of enqueue
// and sync — tens of microseconds each on a virtual machine's idle cores.
// Work enqueued meanwhile waits for fn, so the stream's order holds. ok is
// false when it did not run fn; err is what sync would then have
// returned: the first error since the last sync, fn's included.
func (s *cpuStream) runInline(fn func() error) (ok bool, err error) {
	s.mu.Lock()
	if s.closed || s.inline || s.running || len(s.queue) > 0 {
		s.mu.Unlock()
		return false, nil
	}
	s.inline = true
	s.mu.Unlock()
	err = runTask(fn)
	s.mu.Lock()
	s.inline = false
	if s.err != nil {
		err = s.err
	}
	s.err = nil
	s.cond.Broadcast()
	s.mu.Unlock()
	return true, err
}

func (s *cpuStream) enqueue(fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("tcrt: enqueue on a closed stream: %w", ErrClosed)
	}
	s.queue = append(s.queue, fn)
	s.cond.Broadcast()
	return nil
}

type cpuEvent struct {
	ch   chan struct{}
	when time.Time
}

func (e *cpuEvent) wait(ctx context.Context) error {
	select {
	case <-e.ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *cpuEvent) done() bool {
	select {
	case <-e.ch:
		return true
	default:
		return false
	}
}

func (e *cpuEvent) elapsed(start eventImpl) (time.Duration, error) {
	s, ok := start.(*cpuEvent)
	if !ok {
		return 0, fmt.Errorf("tcrt: elapsed: events of different backends: %w", ErrArgument)
	}
	return e.when.Sub(s.when), nil
}

func (s *cpuStream) record() (eventImpl, error) {
	e := &cpuEvent{ch: make(chan struct{})}
	err := s.enqueue(func() error {
		e.when = time.Now()
		close(e.ch)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

func (s *cpuStream) wait(ev eventImpl) error {
	return s.enqueue(func() error { return ev.wait(context.Background()) })
}

func (s *cpuStream) sync(ctx context.Context) error {
	ev, err := s.record()
	if err != nil {
		return err
	}
	if err := ev.wait(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err, s.err = s.err, nil
	return err
}

func (s *cpuStream) close() error {
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
