package backend

import (
	"errors"
	"fmt"
	"math/rand/v2"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeDevice is a poolAllocator over an imaginary address space with a
// capacity; synchronize completes every fakeFence made from it.
type fakeDevice struct {
	mu       sync.Mutex
	capacity int64
	used     int64
	next     uint64
	segs     map[uint64]int64
	syncs    int
	fail     error // returned by allocSegment when set
	fences   []*fakeFence
}

func newFakeDevice(capacity int64) *fakeDevice {
	return &fakeDevice{capacity: capacity, next: 1 << 40, segs: map[uint64]int64{}}
}

func (d *fakeDevice) allocSegment(n int64) (uint64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail != nil {
		return 0, d.fail
	}
	if d.used+n > d.capacity {
		return 0, fmt.Errorf("fake device: %d bytes with %d of %d used: %w", n, d.used, d.capacity, ErrOutOfMemory)
	}
	base := d.next
	d.next += uint64(n) + 1<<20 // a gap: segments are never adjacent
	d.segs[base] = n
	d.used += n
	return base, nil
}

func (d *fakeDevice) freeSegment(base uint64, n int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.segs[base] != n {
		return fmt.Errorf("fake device: free of unknown segment %#x (%d bytes)", base, n)
	}
	delete(d.segs, base)
	d.used -= n
	return nil
}

func (d *fakeDevice) synchronize() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.syncs++
	for _, f := range d.fences {
		f.d.Store(true)
	}
	d.fences = nil
	return nil
}

type fakeFence struct{ d atomic.Bool }

func (f *fakeFence) done() bool { return f.d.Load() }

func (d *fakeDevice) fence() *fakeFence {
	f := &fakeFence{}
	d.mu.Lock()
	d.fences = append(d.fences, f)
	d.mu.Unlock()
	return f
}

// check verifies the pool's structure: blocks tile each segment, the free
// lists hold exactly the free blocks, sorted, no two ready free neighbours
// are left unmerged, and the numbers add up.
func (p *pool) check(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	inList := map[*poolBlock]bool{}
	for _, l := range [][]*poolBlock{p.small, p.large} {
		for i, b := range l {
			if inList[b] {
				t.Fatalf("block %#x listed twice", b.addr())
			}
			inList[b] = true
			if i > 0 && !lessBlock(l[i-1], b) {
				t.Fatalf("free list not sorted at %d", i)
			}
		}
	}
	var reserved, inUse int64
	live, free := 0, 0
	for base, seg := range p.segments {
		if seg.base != base || seg.first.prev != nil || seg.first.off != 0 {
			t.Fatalf("segment %#x malformed", base)
		}
		reserved += seg.size
		off := int64(0)
		for b := seg.first; b != nil; b = b.next {
			if b.seg != seg || b.off != off || b.size <= 0 {
				t.Fatalf("segment %#x: block at %d (want %d) size %d", base, b.off, off, b.size)
			}
			if b.next != nil && b.next.prev != b {
				t.Fatalf("segment %#x: broken links at %d", base, b.off)
			}
			if b.free != inList[b] {
				t.Fatalf("block %#x free=%v listed=%v", b.addr(), b.free, inList[b])
			}
			if b.free {
				free++
				if b.next != nil && b.next.free && b.fence == nil && b.next.fence == nil {
					t.Fatalf("ready free neighbours %#x and %#x not merged", b.addr(), b.next.addr())
				}
				if _, ok := p.pending[b]; ok != (b.fence != nil) {
					t.Fatalf("block %#x pending=%v fence=%v", b.addr(), ok, b.fence != nil)
				}
			} else {
				live++
				inUse += b.size
			}
			off += b.size
		}
		if off != seg.size {
			t.Fatalf("segment %#x: blocks cover %d of %d bytes", base, off, seg.size)
		}
	}
	if free != len(inList) {
		t.Fatalf("%d free blocks, %d listed", free, len(inList))
	}
	if reserved != p.st.ReservedBytes || inUse != p.st.InUseBytes || live != p.st.LiveBlocks || len(p.segments) != p.st.Segments {
		t.Fatalf("stats %+v; walked reserved %d in use %d live %d segments %d", p.st, reserved, inUse, live, len(p.segments))
	}
}

func TestPoolSizeClasses(t *testing.T) {
	d := newFakeDevice(1 << 40)
	p := newPool(d, poolOptions{})
	for _, c := range []struct {
		n, block, segment int64
	}{
		{0, 512, poolSmallSegment},
		{1, 512, poolSmallSegment},
		{512, 512, poolSmallSegment},
		{513, 1024, poolSmallSegment},
		{1 << 20, 1 << 20, poolSmallSegment},
		{1<<20 + 1, 1<<20 + 512, poolLargeSegment},
		{10 << 20, 10 << 20, poolLargeSegment},
		{10<<20 + 1, 10<<20 + 512, 12 << 20},
		{30 << 20, 30 << 20, 30 << 20},
	} {
		q := newPool(newFakeDevice(1<<40), poolOptions{})
		b, err := q.alloc(c.n, 0)
		if err != nil {
			t.Fatal(err)
		}
		if b.size != c.block || b.seg.size != c.segment {
			t.Errorf("alloc(%d): block %d in a %d-byte segment, want %d in %d", c.n, b.size, b.seg.size, c.block, c.segment)
		}
		q.check(t)
	}
	if _, err := p.alloc(-1, 0); !errors.Is(err, ErrArgument) {
		t.Errorf("alloc(-1) = %v, want ErrArgument", err)
	}
	if _, err := p.alloc(1<<62, 0); !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("alloc(2^62) = %v, want ErrOutOfMemory", err)
	}
}

func TestPoolSplitCoalesce(t *testing.T) {
	d := newFakeDevice(1 << 40)
	p := newPool(d, poolOptions{})
	var bs []*poolBlock
	for i := 0; i < 4; i++ {
		b, err := p.alloc(1000, 0)
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	for i := 1; i < 4; i++ {
		if bs[i].addr() != bs[i-1].addr()+1024 {
			t.Fatalf("block %d at %#x, want %#x (split off the same segment)", i, bs[i].addr(), bs[i-1].addr()+1024)
		}
	}
	if s := p.stats(); s.Segments != 1 || s.SegmentAllocs != 1 || s.Splits != 4 || s.InUseBytes != 4096 || s.RequestedBytes != 4000 {
		t.Fatalf("stats %+v", s)
	}
	p.check(t)
	// Free the middle two: they merge with each other only.
	p.free(bs[1], 0, nil)
	p.free(bs[2], 0, nil)
	p.check(t)
	if s := p.stats(); s.FreeBlocks != 2 {
		t.Fatalf("after freeing 1 and 2: %d free blocks, want 2 (merged middle, tail)", s.FreeBlocks)
	}
	// A 2000-byte request reuses the merged hole exactly.
	b, err := p.alloc(2000, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b.addr() != bs[1].addr() || b.size != 2048 {
		t.Fatalf("reuse at %#x size %d, want %#x 2048", b.addr(), b.size, bs[1].addr())
	}
	p.free(b, 0, nil)
	for _, i := range []int{3, 0} {
		p.free(bs[i], 0, nil)
		p.check(t)
	}
	s := p.stats()
	if s.FreeBlocks != 1 || s.LiveBlocks != 0 || s.InUseBytes != 0 || s.CachedBytes != poolSmallSegment || s.CacheHits != 4 {
		t.Fatalf("everything freed: %+v", s)
	}
	n, err := p.trim()
	if err != nil || n != poolSmallSegment {
		t.Fatalf("trim = %d, %v; want %d", n, err, poolSmallSegment)
	}
	if s := p.stats(); s.ReservedBytes != 0 || s.Segments != 0 || len(d.segs) != 0 {
		t.Fatalf("after trim: %+v, device holds %d segments", s, len(d.segs))
	}
	// Large blocks are not split for small remainders.
	b, err = p.alloc(10<<20-1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	p.free(b, 0, nil)
	b2, err := p.alloc(10<<20-300000, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b2.addr() != b.addr() {
		t.Fatalf("large reuse at %#x, want %#x", b2.addr(), b.addr())
	}
	p.check(t)
}

func TestPoolStreamOrdered(t *testing.T) {
	d := newFakeDevice(1 << 40)
	p := newPool(d, poolOptions{})
	const s1, s2 = 1, 2
	a, err := p.alloc(4096, s1)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeFence{}
	p.free(a, s1, f) // work on s1 still uses it
	p.check(t)
	// The same stream takes it at once.
	c, err := p.alloc(4096, s1)
	if err != nil {
		t.Fatal(err)
	}
	if c.addr() != a.addr() {
		t.Fatalf("stream 1 reuse at %#x, want %#x", c.addr(), a.addr())
	}
	p.free(c, s1, f)
	// Another stream cannot take it (nor the rest of its segment, merged
	// with it under the fence): a new segment.
	b, err := p.alloc(4096, s2)
	if err != nil {
		t.Fatal(err)
	}
	if b.seg == a.seg {
		t.Fatalf("stream 2 got memory stream 1 may still use")
	}
	p.free(b, s2, nil)
	p.check(t)
	// Once the fence is done, stream 2 may use it.
	f.d.Store(true)
	e, err := p.alloc(4096, s2)
	if err != nil {
		t.Fatal(err)
	}
	if e.seg != a.seg && e.seg != b.seg {
		t.Fatalf("stream 2 after the fence: new segment")
	}
	p.free(e, s2, nil)
	p.check(t)
	// Two fences on one stream merge (the later covers the earlier); fences
	// on different streams do not.
	x, _ := p.alloc(1024, s1)
	y, _ := p.alloc(1024, s1)
	z, _ := p.alloc(1024, s2)
	w, _ := p.alloc(1024, 0) // keeps z's right neighbour busy
	p.free(x, s1, &fakeFence{})
	p.free(y, s1, &fakeFence{})
	p.check(t)
	if x.next == y && x.free && y.free {
		t.Fatalf("same-stream fenced neighbours not merged")
	}
	p.free(z, s2, &fakeFence{})
	p.check(t)
	p.free(w, 0, nil)
	p.check(t)
	if err := p.syncLocked2(); err != nil {
		t.Fatal(err)
	}
	p.check(t)
	if s := p.stats(); s.FreeBlocks != s.Segments || s.LiveBlocks != 0 {
		t.Fatalf("after the fences completed: %+v; want one free block per segment", s)
	}
}

// syncLocked2 is syncLocked under the lock, for tests. The fences above are
// not the fake device's, so mark them done by hand first.
func (p *pool) syncLocked2() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for b := range p.pending {
		if f, ok := b.fence.(*fakeFence); ok {
			f.d.Store(true)
		}
	}
	return p.syncLocked()
}

func TestPoolOOMReleasesCache(t *testing.T) {
	d := newFakeDevice(23 << 20)
	p := newPool(d, poolOptions{})
	a, err := p.alloc(1000, 0) // a 2 MiB small segment
	if err != nil {
		t.Fatal(err)
	}
	p.free(a, 0, nil)
	// A 22 MiB segment and the cached 2 MiB do not fit in 23 MiB.
	b, err := p.alloc(22<<20, 0)
	if err != nil {
		t.Fatalf("alloc after releasing cache: %v", err)
	}
	s := p.stats()
	if s.OOMRetries != 1 || s.SegmentFrees != 1 || s.GCRuns != 0 || d.syncs != 0 {
		t.Fatalf("stats %+v, %d syncs; want one retry that released the cached segment", s, d.syncs)
	}
	p.free(b, 0, nil)
	p.check(t)
}

func TestPoolOOMSynchronizes(t *testing.T) {
	d := newFakeDevice(8 << 20)
	p := newPool(d, poolOptions{})
	a, err := p.alloc(6<<20, 1) // a 20 MiB segment does not fit: falls back to 6 MiB
	if err != nil {
		t.Fatal(err)
	}
	if a.seg.size != 6<<20 {
		t.Fatalf("segment %d, want 6 MiB (the exact fallback)", a.seg.size)
	}
	p.free(a, 1, d.fence()) // still in use on stream 1
	b, err := p.alloc(5<<20, 2)
	if err != nil {
		t.Fatalf("alloc on another stream: %v", err)
	}
	if d.syncs != 1 || p.stats().GCRuns != 0 {
		t.Fatalf("%d syncs, %d GC runs; want the sync rung only", d.syncs, p.stats().GCRuns)
	}
	p.free(b, 0, nil)
	p.check(t)
}

func TestPoolOOMCollectsLeaks(t *testing.T) {
	d := newFakeDevice(8 << 20)
	var gcs atomic.Int32
	var p *pool
	p = newPool(d, poolOptions{gc: func() {
		gcs.Add(1)
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			goruntime.GC()
			p.recMu.Lock()
			n := len(p.reclaimed)
			p.recMu.Unlock()
			if n > 0 {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}})
	func() {
		h, err := p.allocHandle(6<<20, 0)
		if err != nil {
			t.Fatal(err)
		}
		_ = h.addr() // leaked: never released
	}()
	b, err := p.alloc(6<<20, 0)
	if err != nil {
		t.Fatalf("alloc after a leak: %v", err)
	}
	s := p.stats()
	if gcs.Load() != 1 || s.GCRuns != 1 || s.Reclaimed != 1 || d.syncs == 0 {
		t.Fatalf("gc ran %d times, stats %+v, %d syncs", gcs.Load(), s, d.syncs)
	}
	p.free(b, 0, nil)
	// A released handle is not reclaimed again.
	h, err := p.allocHandle(1<<20, 0)
	if err != nil {
		t.Fatal(err)
	}
	h.release(0, nil)
	h.release(0, nil)
	h = nil
	goruntime.GC()
	if s := p.stats(); s.Reclaimed != 1 || s.LiveBlocks != 0 {
		t.Fatalf("after release: %+v", s)
	}
	p.check(t)
}

func TestPoolOOMError(t *testing.T) {
	d := newFakeDevice(8 << 20)
	p := newPool(d, poolOptions{gc: func() {}})
	a, err := p.alloc(6<<20, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.alloc(3<<20, 0)
	if !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("err = %v, want ErrOutOfMemory", err)
	}
	for _, want := range []string{"3145728 bytes", "reserved 6291456 B", "in use 6291456 B", "fake device"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if s := p.stats(); s.OOMRetries != 3 || s.GCRuns != 1 {
		t.Errorf("stats %+v: want the three rungs tried", s)
	}
	p.free(a, 0, nil)
	p.check(t)
	// A device failure that is not out-of-memory is not retried.
	d.fail = fmt.Errorf("fake device: lost: %w", ErrDevice)
	before := p.stats().OOMRetries
	if _, err := p.alloc(30<<20, 0); !errors.Is(err, ErrDevice) || p.stats().OOMRetries != before {
		t.Fatalf("err = %v, retries %d → %d", err, before, p.stats().OOMRetries)
	}
}

func TestPoolLimit(t *testing.T) {
	d := newFakeDevice(1 << 40)
	p := newPool(d, poolOptions{limit: 4 << 20, gc: func() {}})
	a, err := p.alloc(1<<20, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.alloc(1<<20, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s := p.stats(); s.Segments != 1 || s.LimitBytes != 4<<20 {
		t.Fatalf("stats %+v", s)
	}
	// 3 MiB: a 20 MiB segment and the exact 4 MiB one both exceed the limit
	// while 2 MiB is held.
	_, err = p.alloc(3<<20, 0)
	if !errors.Is(err, ErrOutOfMemory) || !strings.Contains(err.Error(), "memory limit") {
		t.Fatalf("err = %v, want the limit", err)
	}
	p.free(a, 0, nil)
	p.free(b, 0, nil)
	c, err := p.alloc(3<<20, 0) // the cached segment is released first
	if err != nil {
		t.Fatal(err)
	}
	if s := p.stats(); s.ReservedBytes != 4<<20 {
		t.Fatalf("reserved %d, want 4 MiB", s.ReservedBytes)
	}
	p.free(c, 0, nil)
	p.check(t)
}

func TestPoolConcurrent(t *testing.T) {
	d := newFakeDevice(1 << 34)
	p := newPool(d, poolOptions{})
	var mu sync.Mutex
	live := map[uint64]int64{} // address → size, to catch overlaps
	claim := func(b *poolBlock) error {
		mu.Lock()
		defer mu.Unlock()
		for a, n := range live {
			if b.addr() < a+uint64(n) && a < b.addr()+uint64(b.size) {
				return fmt.Errorf("block [%#x,+%d) overlaps live [%#x,+%d)", b.addr(), b.size, a, n)
			}
		}
		live[b.addr()] = b.size
		return nil
	}
	drop := func(b *poolBlock) { mu.Lock(); delete(live, b.addr()); mu.Unlock() }
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			stream := uint64(g%3 + 1)
			var held []*poolBlock
			for i := 0; i < 400; i++ {
				if len(held) > 0 && rng.IntN(2) == 0 {
					k := rng.IntN(len(held))
					b := held[k]
					held = append(held[:k], held[k+1:]...)
					drop(b)
					var f poolFence
					if rng.IntN(3) == 0 {
						f = d.fence()
					}
					p.free(b, stream, f)
					continue
				}
				n := int64(rng.IntN(3 << 20))
				if rng.IntN(8) == 0 {
					n = int64(rng.IntN(40 << 20))
				}
				b, err := p.alloc(n, stream)
				if err != nil {
					errs <- err
					return
				}
				if b.size < n {
					errs <- fmt.Errorf("block of %d for %d bytes", b.size, n)
					return
				}
				if err := claim(b); err != nil {
					errs <- err
					return
				}
				held = append(held, b)
			}
			for _, b := range held {
				drop(b)
				p.free(b, stream, nil)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	p.check(t)
	if _, err := p.trim(); err != nil {
		t.Fatal(err)
	}
	if s := p.stats(); s.ReservedBytes != 0 || s.LiveBlocks != 0 || s.InUseBytes != 0 || s.RequestedBytes != 0 || len(d.segs) != 0 {
		t.Fatalf("after freeing everything and trimming: %+v, device holds %d", s, len(d.segs))
	}
	if err := p.close(); err != nil {
		t.Fatal(err)
	}
}
