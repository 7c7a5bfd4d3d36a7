package runtime

import (
	"github.com/tcrt-go/tcrt/runtime/backend"

	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tcrt-go/tcrt/tile"
)

// Buffer is device memory holding a dense row-major tensor of one element
// type. Close releases it; a closed buffer cannot be used.
//
// Reads and writes from the host (Write, Read, WriteFloat32, ReadFloat32 and
// the generic WriteRaw and ReadRaw) are synchronous: they first wait for all
// work already enqueued on the runtime's streams, so they see, and are not
// overtaken by, earlier kernels.
type Buffer struct {
	rt     *Runtime
	dtype  tile.DType
	shape  []int
	n      int
	bytes  int
	mu     sync.RWMutex
	mem    backend.Memory
	closed atomic.Bool
}

// MemStats are a runtime's buffer statistics.
type MemStats struct {
	LiveBuffers int64 // buffers allocated and not closed
	LiveBytes   int64 // their bytes
	PeakBytes   int64 // largest LiveBytes seen
	Allocs      int64 // buffers ever allocated
	Frees       int64 // buffers closed
	AllocBytes  int64 // bytes ever allocated
}

type memStats struct {
	mu sync.Mutex
	s  MemStats
}

// Stats returns the runtime's buffer statistics.
func (r *Runtime) Stats() MemStats {
	r.stats.mu.Lock()
	defer r.stats.mu.Unlock()
	return r.stats.s
}

// Alloc returns a zeroed buffer for a dense tensor of element type d and the
// given shape (a scalar when shape is empty).
func (r *Runtime) Alloc(d tile.DType, shape ...int) (*Buffer, error) {
	const op = "alloc"
	if err := r.checkOpen(op); err != nil {
		return nil, err
	}
	if !d.Valid() {
		return nil, tile.Errorf(ErrDType, op, "dtype", "element type %v is not defined", d)
	}
	n := 1
	for i, s := range shape {
		if s <= 0 {
			return nil, tile.Errorf(ErrShape, op, "shape", "dimension %d is %d; dimensions must be positive", i, s)
		}
		if n > math.MaxInt/8/s {
			return nil, tile.Errorf(ErrShape, op, "shape", "%v elements overflow", shape)
		}
		n *= s
	}
	nb := (n*d.Bits() + 7) / 8
	r.stats.mu.Lock()
	if lim := r.opts.MemoryLimit; lim > 0 && r.stats.s.LiveBytes+int64(nb) > lim {
		live := r.stats.s.LiveBytes
		r.stats.mu.Unlock()
		return nil, fmt.Errorf("tcrt: alloc: %d bytes with %d live exceeds the memory limit of %d: %w", nb, live, lim, ErrOutOfMemory)
	}
	r.stats.mu.Unlock()
	m, err := r.be.Alloc(nb)
	if err != nil {
		return nil, err
	}
	r.stats.mu.Lock()
	st := &r.stats.s
	st.LiveBuffers++
	st.LiveBytes += int64(nb)
	st.Allocs++
	st.AllocBytes += int64(nb)
	st.PeakBytes = max(st.PeakBytes, st.LiveBytes)
	r.stats.mu.Unlock()
	return &Buffer{rt: r, dtype: d, shape: append([]int(nil), shape...), n: n, bytes: nb, mem: m}, nil
}

// DType is the element type.
func (b *Buffer) DType() tile.DType { return b.dtype }

// Shape is the tensor shape (a copy).
func (b *Buffer) Shape() []int { return append([]int(nil), b.shape...) }

// Len is the number of elements.
func (b *Buffer) Len() int { return b.n }

// Bytes is the size in bytes.
func (b *Buffer) Bytes() int { return b.bytes }

// Runtime is the buffer's runtime.
func (b *Buffer) Runtime() *Runtime { return b.rt }

// Tensor returns the buffer's dense row-major descriptor.
func (b *Buffer) Tensor() tile.Tensor { return tile.NewTensor(b.dtype, b.shape...) }

// Closed reports whether Close has been called.
func (b *Buffer) Closed() bool { return b.closed.Load() }

// Check returns an error naming arg (for op) if b is nil, closed, or belongs
// to another runtime than r (r may be nil to skip that check).
func (b *Buffer) Check(r *Runtime, op, arg string) error {
	if b == nil {
		return tile.Errorf(ErrArgument, op, arg, "buffer is nil")
	}
	if b.closed.Load() {
		return tile.Errorf(ErrClosed, op, arg, "buffer is closed")
	}
	if r != nil && b.rt != r {
		return tile.Errorf(ErrArgument, op, arg, "buffer belongs to another runtime")
	}
	if b.rt.closed.Load() {
		return tile.Errorf(ErrClosed, op, arg, "the buffer's runtime is closed")
	}
	return nil
}

// Close releases the buffer's memory. Work already enqueued that uses the
// buffer is waited for first. Close is idempotent.
func (b *Buffer) Close() error {
	if b == nil || !b.closed.CompareAndSwap(false, true) {
		return nil
	}
	if !b.rt.closed.Load() {
		_ = b.rt.Synchronize(context.Background())
	}
	b.mu.Lock()
	err := b.mem.Free()
	b.mem = nil
	b.mu.Unlock()
	r := b.rt
	r.stats.mu.Lock()
	r.stats.s.LiveBuffers--
	r.stats.s.LiveBytes -= int64(b.bytes)
	r.stats.s.Frees++
	r.stats.mu.Unlock()
	return err
}

// Host returns the buffer's bytes when its memory is host memory (the CPU
// backend), for kernels; nil on device backends. Kernels must only touch
// these bytes from work running on a stream.
func (b *Buffer) Host() []byte {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.mem == nil {
		return nil
	}
	return b.mem.Host()
}

// Memory exposes the backend allocation to the backend's own kernels.
func (b *Buffer) memory() backend.Memory {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.mem
}

// Write copies src, the raw bytes of elements, into the buffer from element
// offset off.
func (b *Buffer) Write(ctx context.Context, off int, src []byte) error {
	return b.transfer(ctx, "write", off, len(src), func(m backend.Memory, boff int) error { return m.Write(ctx, boff, src) })
}

// Read copies the raw bytes of elements from element offset off into dst.
func (b *Buffer) Read(ctx context.Context, off int, dst []byte) error {
	return b.transfer(ctx, "read", off, len(dst), func(m backend.Memory, boff int) error { return m.Read(ctx, boff, dst) })
}

func (b *Buffer) transfer(ctx context.Context, op string, off, nbytes int, fn func(backend.Memory, int) error) error {
	if err := b.Check(nil, op, "buffer"); err != nil {
		return err
	}
	if b.dtype.IsPacked() {
		if off%2 != 0 {
			return tile.Errorf(ErrArgument, op, "offset", "offset %d into a packed 4-bit buffer must be even", off)
		}
	}
	boff := off * b.dtype.Bits() / 8
	if off < 0 || boff+nbytes > b.bytes || (b.dtype.Size() > 0 && nbytes%b.dtype.Size() != 0) {
		return tile.Errorf(ErrBounds, op, "offset", "%d bytes at element %d do not fit a %d-byte buffer of %v (or are not whole elements)", nbytes, off, b.bytes, b.dtype)
	}
	if err := b.rt.Synchronize(ctx); err != nil {
		return err
	}
	m := b.memory()
	if m == nil {
		return tile.Errorf(ErrClosed, op, "buffer", "buffer is closed")
	}
	return fn(m, boff)
}

// WriteFloat32 converts src to the buffer's float element type (rounding to
// nearest even; float8 saturates to the largest finite value) and writes it
// from element 0. len(src) must not exceed Len.
func (b *Buffer) WriteFloat32(ctx context.Context, src []float32) error {
	if err := b.Check(nil, "write", "buffer"); err != nil {
		return err
	}
	if !b.dtype.IsFloat() {
		return tile.Errorf(ErrDType, "write", "buffer", "WriteFloat32 into a %v buffer; use WriteRaw for integers", b.dtype)
	}
	if len(src) > b.n {
		return tile.Errorf(ErrBounds, "write", "src", "%d values into a buffer of %d", len(src), b.n)
	}
	raw := make([]byte, len(src)*b.dtype.Size())
	EncodeFloat32(b.dtype, raw, src)
	return b.Write(ctx, 0, raw)
}

// ReadFloat32 reads len(dst) elements from element 0, converted exactly to
// float32 (f64 rounds).
func (b *Buffer) ReadFloat32(ctx context.Context, dst []float32) error {
	if err := b.Check(nil, "read", "buffer"); err != nil {
		return err
	}
	if !b.dtype.IsFloat() {
		return tile.Errorf(ErrDType, "read", "buffer", "ReadFloat32 from a %v buffer; use ReadRaw for integers", b.dtype)
	}
	if len(dst) > b.n {
		return tile.Errorf(ErrBounds, "read", "dst", "%d values from a buffer of %d", len(dst), b.n)
	}
	raw := make([]byte, len(dst)*b.dtype.Size())
	if err := b.Read(ctx, 0, raw); err != nil {
		return err
	}
	DecodeFloat32(b.dtype, dst, raw)
	return nil
}

// EncodeFloat32 converts src to element type d into dst (len(src)·d.Size()
// bytes).
func EncodeFloat32(d tile.DType, dst []byte, src []float32) {
	sz := d.Size()
	for i, v := range src {
		bits := tile.FromFloat32(d, v)
		for k := 0; k < sz; k++ {
			dst[i*sz+k] = byte(bits >> (8 * k))
		}
	}
}

// DecodeFloat32 converts len(dst) elements of type d from src to float32.
func DecodeFloat32(d tile.DType, dst []float32, src []byte) {
	sz := d.Size()
	for i := range dst {
		var bits uint64
		for k := 0; k < sz; k++ {
			bits |= uint64(src[i*sz+k]) << (8 * k)
		}
		dst[i] = tile.ToFloat32(d, bits)
	}
}

// Element is a Go type whose values can be copied bit for bit into buffers.
// uint16 carries f16/bf16 bits, uint8 float8 bits.
type Element interface {
	~float32 | ~float64 | ~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64
}

// WriteRaw copies src into b from element 0 bit for bit; T's size must equal
// the element size (uint16 for f16 and bf16, uint8 for float8).
func WriteRaw[T Element](ctx context.Context, b *Buffer, src []T) error {
	if err := rawCheck[T](b, "write", len(src)); err != nil {
		return err
	}
	return b.Write(ctx, 0, asBytes(src))
}

// ReadRaw copies len(dst) elements from element 0 of b bit for bit.
func ReadRaw[T Element](ctx context.Context, b *Buffer, dst []T) error {
	if err := rawCheck[T](b, "read", len(dst)); err != nil {
		return err
	}
	return b.Read(ctx, 0, asBytes(dst))
}

func rawCheck[T Element](b *Buffer, op string, n int) error {
	if err := b.Check(nil, op, "buffer"); err != nil {
		return err
	}
	var z T
	if int(unsafe.Sizeof(z)) != b.dtype.Size() {
		return tile.Errorf(ErrDType, op, "buffer", "%d-byte Go elements for a %v buffer of %d-byte elements", unsafe.Sizeof(z), b.dtype, b.dtype.Size())
	}
	if n > b.n {
		return tile.Errorf(ErrBounds, op, "slice", "%d elements for a buffer of %d", n, b.n)
	}
	return nil
}

func asBytes[T Element](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}

// Overlaps reports whether two buffers share memory. Buffers are distinct
// allocations, so that is identity.
func Overlaps(a, b *Buffer) bool { return a != nil && a == b }
