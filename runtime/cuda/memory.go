package cuda

import (
	"context"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/runtime/cuda/driver"
)

// stageChunk is the size of each of the two pinned staging buffers host
// copies go through: the CPU fills (or drains) one while the DMA engine
// works on the other.
const stageChunk = 8 << 20

// pinnedChunk is one page-locked staging buffer and the event marking the
// end of the last copy that used it.
type pinnedChunk struct {
	p      unsafe.Pointer
	ev     driver.Event
	queued bool // a copy using it was issued and not yet waited for
}

func (c *pinnedChunk) bytes(n int) []byte { return unsafe.Slice((*byte)(c.p), n) }

// ensureStage allocates the staging buffers on first use; stageMu is held.
func (b *cudaBackend) ensureStage() error {
	if b.stage[0].p != nil {
		return nil
	}
	drv := b.d.drv
	return b.d.w.do(func() error {
		for i := range b.stage {
			p, err := drv.MemHostAlloc(stageChunk)
			if err != nil {
				return cudaErr("pinned host alloc", err)
			}
			ev, err := drv.EventCreate(driver.EventDisableTiming)
			if err != nil {
				_ = drv.MemFreeHost(p)
				return cudaErr("create event", err)
			}
			b.stage[i] = pinnedChunk{p: p, ev: ev}
		}
		return nil
	})
}

// drain waits for chunk c's last copy (uncancellable: the DMA engine may
// still be reading or writing the buffer).
func (b *cudaBackend) drain(c *pinnedChunk) error {
	if !c.queued {
		return nil
	}
	c.queued = false
	return b.d.waitEvent(context.Background(), c.ev)
}

// copyToDevice copies src to device address dst through the staging
// buffers and returns when the data is on the device. Cancelling ctx stops
// before the next chunk.
func (b *cudaBackend) copyToDevice(ctx context.Context, dst uint64, src []byte) error {
	b.stageMu.Lock()
	defer b.stageMu.Unlock()
	if err := b.ensureStage(); err != nil {
		return err
	}
	var err error
	for i, off := 0, 0; off < len(src) && err == nil; i, off = i+1, off+stageChunk {
		if err = ctx.Err(); err != nil {
			break
		}
		c := &b.stage[i%2]
		if err = b.drain(c); err != nil {
			break
		}
		n := copy(c.bytes(stageChunk), src[off:])
		c.queued = true
		err = b.d.w.do(func() error {
			if err := b.d.drv.MemcpyHtoDAsync(driver.DevicePtr(dst+uint64(off)), c.p, int64(n), b.copyStream); err != nil {
				return cudaErr("copy to device", err)
			}
			return cudaErr("record event", b.d.drv.EventRecord(c.ev, b.copyStream))
		})
	}
	for i := range b.stage {
		if e := b.drain(&b.stage[i]); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// copyFromDevice copies from device address src into dst through the
// staging buffers: chunk i+1 is in flight while chunk i is copied out.
func (b *cudaBackend) copyFromDevice(ctx context.Context, dst []byte, src uint64) error {
	b.stageMu.Lock()
	defer b.stageMu.Unlock()
	if err := b.ensureStage(); err != nil {
		return err
	}
	nchunks := (len(dst) + stageChunk - 1) / stageChunk
	issue := func(i int) error {
		c := &b.stage[i%2]
		off := i * stageChunk
		n := min(stageChunk, len(dst)-off)
		c.queued = true
		return b.d.w.do(func() error {
			if err := b.d.drv.MemcpyDtoHAsync(c.p, driver.DevicePtr(src+uint64(off)), int64(n), b.copyStream); err != nil {
				return cudaErr("copy from device", err)
			}
			return cudaErr("record event", b.d.drv.EventRecord(c.ev, b.copyStream))
		})
	}
	var err error
	if nchunks > 0 {
		err = issue(0)
	}
	for i := 0; i < nchunks && err == nil; i++ {
		if i+1 < nchunks {
			if err = ctx.Err(); err != nil {
				break
			}
			if err = issue(i + 1); err != nil {
				break
			}
		}
		c := &b.stage[i%2]
		if err = b.drain(c); err != nil {
			break
		}
		off := i * stageChunk
		copy(dst[off:], c.bytes(min(stageChunk, len(dst)-off)))
	}
	for i := range b.stage {
		if e := b.drain(&b.stage[i]); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// cudaMemory is a buffer's device memory: a pool block.
type cudaMemory struct {
	be     *cudaBackend
	h      *backend.PoolBlock
	n      int
	staged atomic.Pointer[[]byte] // host shadow lent by the host fallback
}

func (b *cudaBackend) Alloc(n int) (backend.Memory, error) {
	if n <= 0 {
		return nil, fmt.Errorf("tcrt: cuda: alloc of %d bytes: %w", n, backend.ErrArgument)
	}
	h, err := b.pool.Alloc(int64(n))
	if err != nil {
		return nil, err
	}
	err = b.d.w.do(func() error {
		return cudaErr("zero memory", b.d.drv.MemsetD8(driver.DevicePtr(h.Addr()), 0, int64(n)))
	})
	if err != nil {
		h.Release()
		return nil, err
	}
	return &cudaMemory{be: b, h: h, n: n}, nil
}

func (m *cudaMemory) Host() []byte {
	if p := m.staged.Load(); p != nil {
		return *p
	}
	return nil
}

func (m *cudaMemory) SetStaged(b []byte) {
	if b == nil {
		m.staged.Store(nil)
		return
	}
	m.staged.Store(&b)
}

func (m *cudaMemory) DevicePtr() uint64 { return m.h.Addr() }

func (m *cudaMemory) Write(ctx context.Context, off int, src []byte) error {
	if off < 0 || off > m.n || len(src) > m.n-off {
		return fmt.Errorf("tcrt: cuda: write of %d bytes at %d into %d: %w", len(src), off, m.n, backend.ErrBounds)
	}
	return m.be.copyToDevice(ctx, m.h.Addr()+uint64(off), src)
}

func (m *cudaMemory) Read(ctx context.Context, off int, dst []byte) error {
	if off < 0 || off > m.n || len(dst) > m.n-off {
		return fmt.Errorf("tcrt: cuda: read of %d bytes at %d from %d: %w", len(dst), off, m.n, backend.ErrBounds)
	}
	return m.be.copyFromDevice(ctx, dst, m.h.Addr()+uint64(off))
}

// free returns the block to the pool. Buffer.Close has synchronized the
// runtime first, so nothing queued can still use it.
func (m *cudaMemory) Free() error {
	m.h.Release()
	return nil
}
