package backend

import (
	"errors"
	"fmt"
	goruntime "runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// This file is the caching device-memory pool the CUDA backend allocates
// buffers from. It knows nothing about CUDA: the device side is a
// poolAllocator (segments of raw device memory, a device-wide synchronize)
// and fences are anything with done(), so the whole logic is tested on the
// CPU with a fake allocator (pool_test.go).
//
// Layout. The pool asks the device for segments and carves them into blocks.
// Requests are rounded up to poolAlign bytes. Requests of up to
// poolSmallMax bytes are served from poolSmallSegment-byte segments (the
// small class); larger ones from segments of poolLargeSegment bytes when the
// request is at most poolLargeSegment/2, else from a segment of their own
// size rounded to poolSegmentAlign (the large class). A free block bigger
// than the request is split when the rest is at least poolAlign (small) or
// poolLargeSplitMin (large); a freed block merges with free neighbours in
// its segment.
//
// Stream-ordered reuse. A block freed with a nil fence is ready: nothing on
// the device uses it any more and any stream may reuse it. A block freed
// with a fence on stream s is still in use by work queued on s: s may reuse
// it at once (its later work runs after that work), other streams only once
// the fence is done.
//
// Out of memory. When the device (or the memory limit) refuses a new
// segment the pool climbs a ladder: release cached free segments and retry;
// synchronize the device (completing every fence), release and retry; run
// the garbage collector so blocks of leaked (unreachable, never closed)
// allocations are reclaimed through their cleanups, synchronize, release and
// retry; then fail with an error wrapping ErrOutOfMemory that carries the
// request and the pool's numbers.

// Pool geometry.
const (
	poolAlign         = 512
	poolSmallMax      = 1 << 20
	poolSmallSegment  = 2 << 20
	poolLargeSegment  = 20 << 20
	poolLargeSplitMin = 1 << 20
	poolSegmentAlign  = 2 << 20
)

// poolAllocator is the device side of a pool.
type poolAllocator interface {
	// allocSegment returns n bytes of device memory; a refusal for lack of
	// memory wraps ErrOutOfMemory.
	allocSegment(n int64) (base uint64, err error)
	// freeSegment returns a segment to the device.
	freeSegment(base uint64, n int64) error
	// synchronize waits until all work queued on the device has finished.
	synchronize() error
}

// poolFence marks queued device work; done reports whether it finished.
type poolFence interface{ done() bool }

// poolOptions configure a pool.
type poolOptions struct {
	// limit bounds the bytes of segments the pool reserves; 0: none.
	limit int64
	// gc runs the garbage collector and waits for the cleanups it triggers;
	// nil means collectGarbage.
	gc func()
}

// PoolStats are the device-memory pool's numbers (CUDA backend; zero on the
// CPU backend, which has no pool).
type PoolStats struct {
	ReservedBytes     int64 // device memory the pool holds, in segments
	InUseBytes        int64 // bytes of live blocks (rounded sizes)
	RequestedBytes    int64 // bytes the live allocations asked for
	CachedBytes       int64 // ReservedBytes − InUseBytes: held, free for reuse
	PeakReservedBytes int64 // largest ReservedBytes seen
	PeakInUseBytes    int64 // largest InUseBytes seen
	LimitBytes        int64 // the memory limit, 0 when none

	Segments   int // segments held
	LiveBlocks int // blocks handed out and not freed
	FreeBlocks int // cached free blocks

	Allocs        int64 // allocations served
	Frees         int64 // allocations returned (including reclaimed ones)
	CacheHits     int64 // allocations served from cached blocks
	SegmentAllocs int64 // segments obtained from the device
	SegmentFrees  int64 // segments returned to the device
	Splits        int64 // blocks split
	Merges        int64 // free blocks merged with a neighbour
	OOMRetries    int64 // times the out-of-memory ladder retried
	GCRuns        int64 // garbage collections the ladder ran
	Reclaimed     int64 // leaked allocations returned by their cleanups
}

// String formats the numbers on one line.
func (s PoolStats) String() string {
	return fmt.Sprintf("reserved %d B in %d segments (peak %d), in use %d B in %d blocks (requested %d, peak %d), cached %d B in %d blocks, limit %d",
		s.ReservedBytes, s.Segments, s.PeakReservedBytes, s.InUseBytes, s.LiveBlocks, s.RequestedBytes, s.PeakInUseBytes,
		s.CachedBytes, s.FreeBlocks, s.LimitBytes)
}

type poolSegment struct {
	base  uint64
	size  int64
	small bool
	first *poolBlock // lowest-addressed block
}

type poolBlock struct {
	seg        *poolSegment
	off, size  int64
	requested  int64
	prev, next *poolBlock // address-ordered neighbours in the segment
	free       bool
	stream     uint64    // stream whose queued work may still use the block
	fence      poolFence // nil: ready for every stream
	seq        uint64    // order of frees, to pick the later of two fences
}

// addr is the block's device address.
func (b *poolBlock) addr() uint64 { return b.seg.base + uint64(b.off) }

// epochFence is done once the pool has synchronized the device after the
// fence was made (reclaimed blocks, whose last use is unknown).
type epochFence struct {
	p     *pool
	epoch uint64
}

func (f epochFence) done() bool { return f.p.syncEpoch.Load() > f.epoch }

type pool struct {
	mu       sync.Mutex
	a        poolAllocator
	opt      poolOptions
	small    []*poolBlock // free blocks, sorted by (size, address)
	large    []*poolBlock
	segments map[uint64]*poolSegment
	pending  map[*poolBlock]struct{} // free blocks with a fence
	seq      uint64
	st       PoolStats

	syncEpoch atomic.Uint64
	recMu     sync.Mutex
	reclaimed []*poolBlock // blocks of leaked allocations, from cleanups
}

func newPool(a poolAllocator, opt poolOptions) *pool {
	if opt.gc == nil {
		opt.gc = collectGarbage
	}
	p := &pool{a: a, opt: opt, segments: map[uint64]*poolSegment{}, pending: map[*poolBlock]struct{}{}}
	p.st.LimitBytes = opt.limit
	return p
}

// collectGarbage runs the collector and gives the cleanups it queues a
// moment to run: it waits (at most 100 ms) for the cleanup of an object
// made unreachable just before the collection.
func collectGarbage() {
	done := make(chan struct{})
	sentinel := new([16]byte)
	goruntime.AddCleanup(sentinel, func(ch chan struct{}) { close(ch) }, done)
	sentinel = nil
	_ = sentinel
	goruntime.GC()
	select {
	case <-done:
	case <-time.After(100 * time.Millisecond):
	}
	for range 4 {
		goruntime.Gosched()
	}
}

func roundUp(n, a int64) int64 { return (n + a - 1) / a * a }

// poolRound is the block size for a request of n bytes.
func poolRound(n int64) int64 { return roundUp(max(n, 1), poolAlign) }

// poolSegmentSize is the segment size to obtain for a rounded request.
func poolSegmentSize(size int64) int64 {
	switch {
	case size <= poolSmallMax:
		return poolSmallSegment
	case size <= poolLargeSegment/2:
		return poolLargeSegment
	}
	return roundUp(size, poolSegmentAlign)
}

func (p *pool) list(small bool) *[]*poolBlock {
	if small {
		return &p.small
	}
	return &p.large
}

func lessBlock(a, b *poolBlock) bool {
	if a.size != b.size {
		return a.size < b.size
	}
	return a.addr() < b.addr()
}

func (p *pool) insertFree(b *poolBlock) {
	l := p.list(b.seg.small)
	i := sort.Search(len(*l), func(i int) bool { return !lessBlock((*l)[i], b) })
	*l = append(*l, nil)
	copy((*l)[i+1:], (*l)[i:])
	(*l)[i] = b
	if b.fence != nil {
		p.pending[b] = struct{}{}
	}
}

func (p *pool) removeFree(b *poolBlock) {
	l := p.list(b.seg.small)
	i := sort.Search(len(*l), func(i int) bool { return !lessBlock((*l)[i], b) })
	for ; i < len(*l); i++ {
		if (*l)[i] == b {
			*l = append((*l)[:i], (*l)[i+1:]...)
			break
		}
	}
	delete(p.pending, b)
}

// usable reports whether stream may take free block b now.
func usable(b *poolBlock, stream uint64) bool {
	return b.fence == nil || (stream != 0 && b.stream == stream)
}

// findLocked takes the smallest free block of the class that fits size and
// that stream may use, splitting it; nil if none.
func (p *pool) findLocked(size, requested int64, stream uint64) *poolBlock {
	small := size <= poolSmallMax
	l := *p.list(small)
	i := sort.Search(len(l), func(i int) bool { return l[i].size >= size })
	for ; i < len(l); i++ {
		b := l[i]
		if !usable(b, stream) {
			continue
		}
		p.removeFree(b)
		rest := b.size - size
		if (small && rest >= poolAlign) || (!small && rest >= poolLargeSplitMin) {
			nb := &poolBlock{seg: b.seg, off: b.off + size, size: rest, prev: b, next: b.next,
				free: true, stream: b.stream, fence: b.fence, seq: b.seq}
			if b.next != nil {
				b.next.prev = nb
			}
			b.next = nb
			b.size = size
			p.insertFree(nb)
			p.st.Splits++
		}
		b.free, b.fence, b.stream, b.requested = false, nil, stream, requested
		return b
	}
	return nil
}

// mergeable reports whether free neighbours a and b can become one block,
// and the fence, stream and sequence the merged block carries.
func mergeable(a, b *poolBlock) (ok bool, fence poolFence, stream, seq uint64) {
	switch {
	case !a.free || !b.free:
		return false, nil, 0, 0
	case a.fence == nil && b.fence == nil:
		return true, nil, 0, max(a.seq, b.seq)
	case a.fence == nil:
		return true, b.fence, b.stream, b.seq
	case b.fence == nil:
		return true, a.fence, a.stream, a.seq
	case a.stream == b.stream && a.stream != 0:
		// Both fences are on one stream: the later one implies the earlier.
		if a.seq > b.seq {
			return true, a.fence, a.stream, a.seq
		}
		return true, b.fence, b.stream, b.seq
	}
	return false, nil, 0, 0
}

// coalesceLocked merges free block b (not in a free list) with its free
// neighbours and returns the result (not in a free list either).
func (p *pool) coalesceLocked(b *poolBlock) *poolBlock {
	if n := b.next; n != nil {
		if ok, f, s, q := mergeable(b, n); ok {
			p.removeFree(n)
			b.size += n.size
			b.next = n.next
			if n.next != nil {
				n.next.prev = b
			}
			b.fence, b.stream, b.seq = f, s, q
			n.size = 0 // marks n as merged away
			p.st.Merges++
		}
	}
	if pr := b.prev; pr != nil {
		if ok, f, s, q := mergeable(pr, b); ok {
			p.removeFree(pr)
			pr.size += b.size
			pr.next = b.next
			if b.next != nil {
				b.next.prev = pr
			}
			pr.fence, pr.stream, pr.seq = f, s, q
			b.size = 0 // marks b as merged away
			b = pr
			p.st.Merges++
		}
	}
	return b
}

// freeLocked returns block b, used last by stream and fenced by fence (nil:
// ready), to the free lists.
func (p *pool) freeLocked(b *poolBlock, stream uint64, fence poolFence) {
	if fence != nil && fence.done() {
		fence = nil
	}
	p.seq++
	b.free, b.fence, b.stream, b.seq = true, fence, stream, p.seq
	if fence == nil {
		b.stream = 0
	}
	p.st.InUseBytes -= b.size
	p.st.RequestedBytes -= b.requested
	p.st.LiveBlocks--
	p.st.Frees++
	b.requested = 0
	p.insertFree(p.coalesceLocked(b))
}

// refreshLocked clears the fences that are done and merges what that
// frees; it returns how many fences were cleared.
func (p *pool) refreshLocked() int {
	var ready []*poolBlock
	for b := range p.pending {
		if b.fence.done() {
			ready = append(ready, b)
		}
	}
	for _, b := range ready {
		delete(p.pending, b)
		b.fence, b.stream = nil, 0
	}
	for _, b := range ready {
		if b.size == 0 { // merged into a neighbour already
			continue
		}
		p.removeFree(b)
		p.insertFree(p.coalesceLocked(b))
	}
	return len(ready)
}

// growLocked obtains a segment of n bytes for blocks of the class small.
func (p *pool) growLocked(n int64, small bool) error {
	if p.opt.limit > 0 && p.st.ReservedBytes+n > p.opt.limit {
		return fmt.Errorf("a %d-byte segment would exceed the memory limit: %w", n, ErrOutOfMemory)
	}
	base, err := p.a.allocSegment(n)
	if err != nil {
		return err
	}
	seg := &poolSegment{base: base, size: n, small: small}
	seg.first = &poolBlock{seg: seg, size: n, free: true}
	p.segments[base] = seg
	p.insertFree(seg.first)
	p.st.ReservedBytes += n
	p.st.PeakReservedBytes = max(p.st.PeakReservedBytes, p.st.ReservedBytes)
	p.st.Segments++
	p.st.SegmentAllocs++
	return nil
}

// releaseLocked returns every segment that is one ready free block to the
// device, and the bytes released.
func (p *pool) releaseLocked() (int64, error) {
	var n int64
	var errs []error
	for _, seg := range p.segments {
		b := seg.first
		if !b.free || b.fence != nil || b.next != nil {
			continue
		}
		p.removeFree(b)
		delete(p.segments, seg.base)
		if err := p.a.freeSegment(seg.base, seg.size); err != nil {
			errs = append(errs, err)
		}
		p.st.ReservedBytes -= seg.size
		p.st.Segments--
		p.st.SegmentFrees++
		n += seg.size
	}
	return n, errors.Join(errs...)
}

// syncLocked synchronizes the device: every fence is then done.
func (p *pool) syncLocked() error {
	if err := p.a.synchronize(); err != nil {
		return err
	}
	p.syncEpoch.Add(1)
	p.refreshLocked()
	return nil
}

// drainReclaimedLocked frees the blocks cleanups handed in; they stay
// fenced until the next device synchronize.
func (p *pool) drainReclaimedLocked() int {
	p.recMu.Lock()
	rec := p.reclaimed
	p.reclaimed = nil
	p.recMu.Unlock()
	f := epochFence{p: p, epoch: p.syncEpoch.Load()}
	for _, b := range rec {
		p.freeLocked(b, 0, f)
		p.st.Reclaimed++
	}
	return len(rec)
}

// alloc returns a block of at least n bytes that stream (0: none in
// particular) may use at once.
func (p *pool) alloc(n int64, stream uint64) (*poolBlock, error) {
	if n < 0 {
		return nil, fmt.Errorf("tcrt: alloc: %d bytes: %w", n, ErrArgument)
	}
	size := poolRound(n)
	if size < n { // overflow
		return nil, fmt.Errorf("tcrt: alloc: %d bytes: %w", n, ErrOutOfMemory)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drainReclaimedLocked()
	b, err := p.allocLocked(size, n, stream)
	if err != nil {
		return nil, err
	}
	p.st.Allocs++
	p.st.LiveBlocks++
	p.st.InUseBytes += b.size
	p.st.RequestedBytes += n
	p.st.PeakInUseBytes = max(p.st.PeakInUseBytes, p.st.InUseBytes)
	return b, nil
}

func (p *pool) allocLocked(size, n int64, stream uint64) (*poolBlock, error) {
	if b := p.findLocked(size, n, stream); b != nil {
		p.st.CacheHits++
		return b, nil
	}
	if len(p.pending) > 0 && p.refreshLocked() > 0 {
		if b := p.findLocked(size, n, stream); b != nil {
			p.st.CacheHits++
			return b, nil
		}
	}
	small := size <= poolSmallMax
	grow := func() (*poolBlock, error) {
		seg := poolSegmentSize(size)
		err := p.growLocked(seg, small)
		if err != nil && errors.Is(err, ErrOutOfMemory) && !small && seg > size {
			err = p.growLocked(roundUp(size, poolSegmentAlign), small) // no spare room
		}
		if err != nil {
			return nil, err
		}
		return p.findLocked(size, n, stream), nil
	}
	b, err := grow()
	if b != nil || !errors.Is(err, ErrOutOfMemory) {
		return b, err
	}
	first := err
	// The ladder.
	steps := []func() error{
		func() error { _, err := p.releaseLocked(); return err },
		func() error {
			if err := p.syncLocked(); err != nil {
				return err
			}
			_, err := p.releaseLocked()
			return err
		},
		func() error {
			p.st.GCRuns++
			p.mu.Unlock()
			p.opt.gc()
			p.mu.Lock()
			if p.drainReclaimedLocked() > 0 || len(p.pending) > 0 {
				if err := p.syncLocked(); err != nil {
					return err
				}
			}
			_, err := p.releaseLocked()
			return err
		},
	}
	for _, step := range steps {
		p.st.OOMRetries++
		if err := step(); err != nil {
			return nil, fmt.Errorf("tcrt: alloc: %d bytes: freeing cached memory: %w", n, err)
		}
		if b := p.findLocked(size, n, stream); b != nil {
			p.st.CacheHits++
			return b, nil
		}
		b, err := grow()
		if b != nil || !errors.Is(err, ErrOutOfMemory) {
			return b, err
		}
	}
	s := p.statsLocked()
	return nil, fmt.Errorf("tcrt: alloc: %d bytes (%d rounded) after freeing the cache, synchronizing and collecting garbage: pool %v: %w",
		n, size, s, first)
}

// free returns b, whose last use was queued on stream and is marked by fence
// (nil when nothing queued can still use it).
func (p *pool) free(b *poolBlock, stream uint64, fence poolFence) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.freeLocked(b, stream, fence)
}

// reclaim hands in the block of an allocation that became unreachable
// without being freed. It only queues the block: cleanups must not block.
func (p *pool) reclaim(b *poolBlock) {
	p.recMu.Lock()
	p.reclaimed = append(p.reclaimed, b)
	p.recMu.Unlock()
}

// trim synchronizes the device and returns every fully free segment to it;
// it reports the bytes released.
func (p *pool) trim() (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drainReclaimedLocked()
	if err := p.syncLocked(); err != nil {
		return 0, err
	}
	return p.releaseLocked()
}

// close releases every segment, in use or not; the pool is unusable after.
func (p *pool) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for base, seg := range p.segments {
		if err := p.a.freeSegment(base, seg.size); err != nil {
			errs = append(errs, err)
		}
		delete(p.segments, base)
	}
	p.small, p.large = nil, nil
	p.pending = map[*poolBlock]struct{}{}
	p.st.ReservedBytes, p.st.Segments = 0, 0
	return errors.Join(errs...)
}

func (p *pool) statsLocked() PoolStats {
	s := p.st
	s.CachedBytes = s.ReservedBytes - s.InUseBytes
	s.FreeBlocks = len(p.small) + len(p.large)
	return s
}

// stats returns the pool's numbers.
func (p *pool) stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drainReclaimedLocked()
	return p.statsLocked()
}

// poolHandle is one live allocation. If it becomes unreachable without
// release, its cleanup hands the block back to the pool (see reclaim).
type poolHandle struct {
	p       *pool
	b       *poolBlock
	cleanup goruntime.Cleanup
	freed   atomic.Bool
}

// allocHandle allocates like alloc and tracks the block with a cleanup.
func (p *pool) allocHandle(n int64, stream uint64) (*poolHandle, error) {
	b, err := p.alloc(n, stream)
	if err != nil {
		return nil, err
	}
	h := &poolHandle{p: p, b: b}
	h.cleanup = goruntime.AddCleanup(h, p.reclaim, b)
	return h, nil
}

// addr is the allocation's device address.
func (h *poolHandle) addr() uint64 { return h.b.addr() }

// release frees the allocation (see pool.free); it is idempotent.
func (h *poolHandle) release(stream uint64, fence poolFence) {
	if !h.freed.CompareAndSwap(false, true) {
		return
	}
	h.cleanup.Stop()
	h.p.free(h.b, stream, fence)
}

// PoolAllocator is the device side of a Pool: segments of raw device
// memory and a device-wide synchronize.
type PoolAllocator interface {
	// AllocSegment returns n bytes of device memory; a refusal for lack of
	// memory wraps ErrOutOfMemory.
	AllocSegment(n int64) (base uint64, err error)
	// FreeSegment returns a segment to the device.
	FreeSegment(base uint64, n int64) error
	// Synchronize waits until all work queued on the device has finished.
	Synchronize() error
}

type exportedAllocator struct{ a PoolAllocator }

func (e exportedAllocator) allocSegment(n int64) (uint64, error)   { return e.a.AllocSegment(n) }
func (e exportedAllocator) freeSegment(base uint64, n int64) error { return e.a.FreeSegment(base, n) }
func (e exportedAllocator) synchronize() error                     { return e.a.Synchronize() }

// Pool is the caching device-memory pool GPU backends allocate buffers
// from (the layout, stream-ordered reuse and out-of-memory ladder above).
type Pool struct{ p *pool }

// NewPool returns a pool over a whose segments total at most limit bytes
// (0: no limit).
func NewPool(a PoolAllocator, limit int64) *Pool {
	return &Pool{p: newPool(exportedAllocator{a}, poolOptions{limit: limit})}
}

// PoolBlock is one allocation from a Pool. An allocation that is never
// released is reclaimed when it becomes unreachable.
type PoolBlock struct{ h *poolHandle }

// Alloc returns a block of at least n bytes.
func (p *Pool) Alloc(n int64) (*PoolBlock, error) {
	h, err := p.p.allocHandle(n, 0)
	if err != nil {
		return nil, err
	}
	return &PoolBlock{h: h}, nil
}

// Addr is the block's device address.
func (b *PoolBlock) Addr() uint64 { return b.h.addr() }

// Release returns the block to the pool; nothing queued on the device may
// still use it. It is idempotent.
func (b *PoolBlock) Release() { b.h.release(0, nil) }

// Stats returns the pool's numbers.
func (p *Pool) Stats() PoolStats { return p.p.stats() }

// Trim synchronizes the device, then returns cached free segments to it.
func (p *Pool) Trim() (int64, error) { return p.p.trim() }

// Close returns every segment to the device.
func (p *Pool) Close() error { return p.p.close() }
