package engine

import (
	"github.com/tcrt-go/tcrt/runtime/backend"

	"context"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tcrt-go/tcrt/tile"
)

// Buffer is device memory holding a dense row-major tensor: the object
// behind a runtime.Buffer, whose doc states the I/O and lifetime rules
// (the references taken by launches and host transfers, retain and
// release below). Hand-enqueued work that touches a buffer holds it with
// Stream.Use.
type Buffer struct {
	handle // the public handle (see Handles)
	rt     *Runtime
	dtype  tile.DType
	shape  []int
	n      int
	bytes  int
	mu     sync.RWMutex
	mem    backend.Memory
	// state is bufClosed once Close has been called, plus the number of
	// references held (retain, release).
	state atomic.Int64
}

// bufClosed marks a closed buffer in Buffer.state.
const bufClosed = 1 << 62

// retain takes a reference to b for work that will use its memory; false
// when b is closed (or its runtime is), when no reference is taken.
func (b *Buffer) retain() bool {
	if b.rt.closed.Load() {
		return false
	}
	b.rt.holds.add(1)
	if b.rt.closed.Load() { // Close waits for holds only after setting closed
		b.rt.holds.add(-1)
		return false
	}
	for {
		s := b.state.Load()
		if s&bufClosed != 0 {
			b.rt.holds.add(-1)
			return false
		}
		if b.state.CompareAndSwap(s, s+1) {
			return true
		}
	}
}

// release drops a reference retain took; the last one of a closed buffer
// frees its memory.
func (b *Buffer) release() {
	if b.state.Add(-1) == bufClosed {
		_ = b.free()
	}
	b.rt.holds.add(-1)
}

// free returns b's memory and counts the buffer as freed. It runs once: at
// Close when nothing holds b, else at the last release.
func (b *Buffer) free() error {
	b.mu.Lock()
	var err error
	if b.mem != nil {
		err = b.mem.Free()
	}
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

// holdCount counts the references held on a runtime's buffers, so that
// Runtime.Close releases the backend only when the last one is dropped.
type holdCount struct {
	mu   sync.Mutex
	n    int64
	zero *sync.Cond
}

func (h *holdCount) add(d int64) {
	h.mu.Lock()
	h.n += d
	if h.n == 0 && h.zero != nil {
		h.zero.Broadcast()
	}
	h.mu.Unlock()
}

// wait returns once no reference is held.
func (h *holdCount) wait() {
	h.mu.Lock()
	if h.zero == nil {
		h.zero = sync.NewCond(&h.mu)
	}
	for h.n > 0 {
		h.zero.Wait()
	}
	h.mu.Unlock()
}

// refs is the set of buffers one launch holds.
type refs []*Buffer

func (rs refs) release() {
	for _, b := range rs {
		b.release()
	}
}

// argBuffers appends to dst the distinct buffers args' operands name
// (Args; closed buffers included), in operand order.
func argBuffers(dst []*Buffer, args any) []*Buffer {
	a, ok := args.(Args)
	if !ok {
		return dst
	}
	ops := a.Operands()
	for _, o := range ops.All() {
		if o.Buf != nil && !slices.Contains(dst, o.Buf) {
			dst = append(dst, o.Buf)
		}
	}
	return dst
}

// hold retains every buffer of bs (distinct), or returns an error wrapping
// ErrClosed, naming op, and holds nothing, if one is closed: a buffer
// closed after an op's checks and before its launch is refused, not used.
func hold(op string, bs []*Buffer) error {
	for i, b := range bs {
		if b.rt == nil || !b.retain() {
			refs(bs[:i]).release()
			return tile.Errorf(ErrClosed, op, "args", "a buffer of the call was closed before it launched")
		}
	}
	return nil
}

// MemStats are a runtime's buffer statistics. A closed buffer still held by
// queued or running work counts as live until that work finishes and its
// memory is freed.
type MemStats struct {
	LiveBuffers int64 // buffers allocated and not freed
	LiveBytes   int64 // their bytes
	PeakBytes   int64 // largest LiveBytes seen
	Allocs      int64 // buffers ever allocated
	Frees       int64 // buffers freed
	AllocBytes  int64 // bytes ever allocated
}

type memStats struct {
	mu sync.Mutex
	s  MemStats
}

// Stats returns the runtime's buffer statistics (zero for a nil runtime).
func (r *Runtime) Stats() MemStats {
	if r == nil {
		return MemStats{}
	}
	r.stats.mu.Lock()
	defer r.stats.mu.Unlock()
	return r.stats.s
}

// Alloc returns a zeroed buffer for a dense tensor of element type d and the
// given shape (a scalar when shape is empty). A buffer that would take the
// runtime's live bytes past its memory limit (Options.MemoryLimit) is
// refused with an error wrapping ErrOutOfMemory, before anything is
// allocated.
func (r *Runtime) Alloc(d tile.DType, shape ...int) (*Buffer, error) {
	const op = "alloc"
	if err := r.checkOpen(op); err != nil {
		return nil, err
	}
	if !d.Valid() {
		return nil, tile.Errorf(ErrDType, op, "dtype", "element type %v is not defined", d)
	}
	for i, s := range shape {
		if s <= 0 {
			return nil, tile.Errorf(ErrShape, op, "shape", "dimension %d is %d; dimensions must be positive", i, s)
		}
	}
	n, ok := tile.ProductSize(shape...)
	if !ok {
		return nil, tile.Errorf(ErrShape, op, "shape", "%v: the element count overflows", shape)
	}
	nb, ok := tile.ByteSize(d, n)
	if !ok {
		return nil, tile.Errorf(ErrOutOfMemory, op, "shape", "%v elements of %v: the byte size overflows", shape, d)
	}
	if err := r.reserve(op, int64(nb)); err != nil {
		return nil, err
	}
	m, err := r.be.Alloc(nb)
	if err != nil {
		r.unreserve(int64(nb))
		return nil, err
	}
	r.stats.mu.Lock()
	st := &r.stats.s
	st.LiveBuffers++
	st.Allocs++
	st.AllocBytes += int64(nb)
	r.stats.mu.Unlock()
	return &Buffer{rt: r, dtype: d, shape: append([]int(nil), shape...), n: n, bytes: nb, mem: m}, nil
}

// reserve counts nb bytes as live if that keeps the runtime within its
// memory limit; the check and the count are one step, so concurrent
// allocations cannot overshoot together.
func (r *Runtime) reserve(op string, nb int64) error {
	r.stats.mu.Lock()
	defer r.stats.mu.Unlock()
	st := &r.stats.s
	if lim := r.opts.MemoryLimit; lim > 0 && nb > lim-st.LiveBytes {
		return tile.Errorf(ErrOutOfMemory, op, "shape", "%d bytes with %d live exceed the memory limit of %d", nb, st.LiveBytes, lim)
	}
	st.LiveBytes += nb
	st.PeakBytes = max(st.PeakBytes, st.LiveBytes)
	return nil
}

// unreserve returns bytes reserve counted.
func (r *Runtime) unreserve(nb int64) {
	r.stats.mu.Lock()
	r.stats.s.LiveBytes -= nb
	r.stats.mu.Unlock()
}

// The getters return zero values on a nil buffer.

// DType is the element type.
func (b *Buffer) DType() tile.DType {
	if b == nil {
		return tile.Invalid
	}
	return b.dtype
}

// Shape is the tensor shape (a copy).
func (b *Buffer) Shape() []int {
	if b == nil {
		return nil
	}
	return append([]int(nil), b.shape...)
}

// Rank is the number of dimensions of the shape.
func (b *Buffer) Rank() int {
	if b == nil {
		return 0
	}
	return len(b.shape)
}

// Dim is the size of dimension i of the shape, 0 when there is none: what
// Shape()[i] is, without the copy.
func (b *Buffer) Dim(i int) int {
	if b == nil || i < 0 || i >= len(b.shape) {
		return 0
	}
	return b.shape[i]
}

// Len is the number of elements.
func (b *Buffer) Len() int {
	if b == nil {
		return 0
	}
	return b.n
}

// Bytes is the size in bytes.
func (b *Buffer) Bytes() int {
	if b == nil {
		return 0
	}
	return b.bytes
}

// Runtime is the buffer's runtime.
func (b *Buffer) Runtime() *Runtime {
	if b == nil {
		return nil
	}
	return b.rt
}

// Tensor returns the buffer's dense row-major descriptor.
func (b *Buffer) Tensor() tile.Tensor {
	if b == nil {
		return tile.Tensor{}
	}
	return tile.NewTensor(b.dtype, b.shape...)
}

// Closed reports whether Close has been called (true for a nil buffer,
// which cannot be used either).
func (b *Buffer) Closed() bool { return b == nil || b.state.Load()&bufClosed != 0 }

// Check returns an error naming arg (for op) if b is nil, closed, or belongs
// to another runtime than r (r may be nil to skip that check).
func (b *Buffer) Check(r *Runtime, op, arg string) error {
	if b == nil {
		return tile.Errorf(ErrArgument, op, arg, "buffer is nil")
	}
	if b.rt == nil {
		return tile.Errorf(ErrArgument, op, arg, "buffer was not made by Alloc")
	}
	if b.Closed() {
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

// Close marks the buffer closed; the memory is freed when the last holder
// lets go (see runtime.Buffer.Close).
func (b *Buffer) Close() error {
	if b == nil || b.rt == nil {
		return tile.Errorf(ErrArgument, "close", "buffer", "buffer is nil or was not made by Alloc")
	}
	if b.Closed() {
		return nil
	}
	if !b.rt.closed.Load() {
		if s := b.rt.taskStream(); s != nil {
			return tile.Errorf(ErrArgument, "close", "buffer", "closing a buffer from work running on a stream would wait for that work itself")
		}
	}
	for {
		s := b.state.Load()
		if s&bufClosed != 0 {
			return nil
		}
		if b.state.CompareAndSwap(s, s|bufClosed) {
			if s == 0 {
				return b.free()
			}
			return nil // the last holder frees it
		}
	}
}

// Host returns the buffer's bytes when its memory is host memory (the CPU
// backend), for kernels; nil on device backends. Kernels must only touch
// these bytes from work running on a stream.
func (b *Buffer) Host() []byte {
	if b == nil {
		return nil
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.mem == nil {
		return nil
	}
	return b.mem.Host()
}

// Memory exposes the backend allocation to the backend's own kernels.
func (b *Buffer) memory() backend.Memory {
	if b == nil {
		return nil
	}
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
	if ctx == nil {
		return tile.Errorf(ErrArgument, op, "ctx", "context is nil")
	}
	if off < 0 || off > b.n {
		return tile.Errorf(ErrBounds, op, "offset", "element offset %d is outside a buffer of %d elements", off, b.n)
	}
	if b.dtype.IsPacked() && off%2 != 0 {
		return tile.Errorf(ErrArgument, op, "offset", "offset %d into a packed 4-bit buffer must be even", off)
	}
	if sz := b.dtype.Size(); sz > 0 && nbytes%sz != 0 {
		arg := "src"
		if op == "read" {
			arg = "dst"
		}
		return tile.Errorf(ErrArgument, op, arg, "%d bytes are not whole %d-byte elements of %v", nbytes, sz, b.dtype)
	}
	boff, ok := tile.ByteOffset(b.dtype, off)
	if !ok || nbytes > b.bytes-boff {
		return tile.Errorf(ErrBounds, op, "offset", "%d bytes at element %d do not fit a %d-byte buffer of %v", nbytes, off, b.bytes, b.dtype)
	}
	// Hold a reference through the wait and the copy: a concurrent Close
	// leaves the memory for the copy to finish.
	if !b.retain() {
		return tile.Errorf(ErrClosed, op, "buffer", "buffer is closed")
	}
	defer b.release()
	if err := b.rt.waitAll(ctx, op); err != nil {
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
// from element 0. len(src) must not exceed Len. It is WriteFloat32At(ctx,
// 0, src).
func (b *Buffer) WriteFloat32(ctx context.Context, src []float32) error {
	return b.WriteFloat32At(ctx, 0, src)
}

// WriteFloat32At converts src as WriteFloat32 does and writes it from
// element off. An f32 buffer is written straight from src; other types are
// converted through a reused 32 KiB scratch, so no call allocates in
// proportion to its size.
func (b *Buffer) WriteFloat32At(ctx context.Context, off int, src []float32) error {
	if err := b.checkFloat32IO("write", "src", off, len(src)); err != nil {
		return err
	}
	if b.dtype == tile.F32 {
		return b.Write(ctx, off, asBytes(src))
	}
	sz := b.dtype.Size()
	return b.transfer(ctx, "write", off, len(src)*sz, func(m backend.Memory, boff int) error {
		scratch := ioScratch.Get().(*[]byte)
		defer ioScratch.Put(scratch)
		chunk := len(*scratch) / sz
		for i := 0; i < len(src); i += chunk {
			part := src[i:min(len(src), i+chunk)]
			raw := (*scratch)[:len(part)*sz]
			EncodeFloat32(b.dtype, raw, part)
			if err := m.Write(ctx, boff+i*sz, raw); err != nil {
				return err
			}
		}
		return nil
	})
}

// ReadFloat32 reads len(dst) elements from element 0, converted exactly to
// float32 (f64 rounds). It is ReadFloat32At(ctx, 0, dst).
func (b *Buffer) ReadFloat32(ctx context.Context, dst []float32) error {
	return b.ReadFloat32At(ctx, 0, dst)
}

// ReadFloat32At reads len(dst) elements from element off, converted as
// ReadFloat32 does. An f32 buffer is read straight into dst; other types
// go through a reused scratch, as in WriteFloat32At.
func (b *Buffer) ReadFloat32At(ctx context.Context, off int, dst []float32) error {
	if err := b.checkFloat32IO("read", "dst", off, len(dst)); err != nil {
		return err
	}
	if b.dtype == tile.F32 {
		return b.Read(ctx, off, asBytes(dst))
	}
	sz := b.dtype.Size()
	return b.transfer(ctx, "read", off, len(dst)*sz, func(m backend.Memory, boff int) error {
		scratch := ioScratch.Get().(*[]byte)
		defer ioScratch.Put(scratch)
		chunk := len(*scratch) / sz
		for i := 0; i < len(dst); i += chunk {
			part := dst[i:min(len(dst), i+chunk)]
			raw := (*scratch)[:len(part)*sz]
			if err := m.Read(ctx, boff+i*sz, raw); err != nil {
				return err
			}
			DecodeFloat32(b.dtype, part, raw)
		}
		return nil
	})
}

// ioScratch holds the conversion buffers of the float32 reads and writes.
var ioScratch = sync.Pool{New: func() any { s := make([]byte, 32<<10); return &s }}

// checkFloat32IO checks a float32 read or write of n values at element off.
func (b *Buffer) checkFloat32IO(op, arg string, off, n int) error {
	if err := b.Check(nil, op, "buffer"); err != nil {
		return err
	}
	if !b.dtype.IsFloat() || b.dtype.IsPacked() {
		return tile.Errorf(ErrDType, op, "buffer", "float32 values for a %v buffer; use WriteRaw/ReadRaw for integers and packed types", b.dtype)
	}
	if off < 0 || off > b.n || n > b.n-off {
		return tile.Errorf(ErrBounds, op, arg, "%d values at element %d of a buffer of %d", n, off, b.n)
	}
	return nil
}

// EncodeFloat32 converts src to element type d into dst (len(src)·d.Size()
// bytes). It converts only as many elements as dst holds whole, and nothing
// for a type of less than a byte.
func EncodeFloat32(d tile.DType, dst []byte, src []float32) {
	sz := d.Size()
	if sz == 0 {
		return
	}
	src = src[:min(len(src), len(dst)/sz)]
	switch d {
	case tile.BF16, tile.F16:
		conv := tile.F32ToBF16
		if d == tile.F16 {
			conv = tile.F32ToF16
		}
		for i, v := range src {
			h := conv(v)
			dst[2*i], dst[2*i+1] = byte(h), byte(h>>8)
		}
		return
	}
	for i, v := range src {
		bits := tile.FromFloat32(d, v)
		for k := 0; k < sz; k++ {
			dst[i*sz+k] = byte(bits >> (8 * k))
		}
	}
}

// DecodeFloat32 converts len(dst) elements of type d from src to float32.
// It converts only as many elements as src holds whole, and nothing for a
// type of less than a byte.
func DecodeFloat32(d tile.DType, dst []float32, src []byte) {
	sz := d.Size()
	if sz == 0 {
		return
	}
	dst = dst[:min(len(dst), len(src)/sz)]
	switch d {
	case tile.BF16:
		for i := range dst {
			dst[i] = tile.BF16ToF32(uint16(src[2*i]) | uint16(src[2*i+1])<<8)
		}
		return
	case tile.F16:
		for i := range dst {
			dst[i] = tile.F16ToF32(uint16(src[2*i]) | uint16(src[2*i+1])<<8)
		}
		return
	}
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

// FromFloat32 allocates a buffer of element type d and the given shape (one
// dimension of len(values) when shape is empty) and writes values into it,
// converted as WriteFloat32 converts them. len(values) must be the shape's
// element count.
func (r *Runtime) FromFloat32(ctx context.Context, d tile.DType, values []float32, shape ...int) (*Buffer, error) {
	if err := r.checkOpen("alloc"); err != nil {
		return nil, err
	}
	if ctx == nil {
		return nil, tile.Errorf(ErrArgument, "alloc", "ctx", "context is nil")
	}
	if len(shape) == 0 {
		shape = []int{len(values)}
	}
	n := 1
	for _, s := range shape {
		if s <= 0 || n > len(values)/s { // also catches overflow
			n = -1
			break
		}
		n *= s
	}
	if n != len(values) {
		return nil, tile.Errorf(ErrShape, "alloc", "values", "%d values for a shape %v", len(values), shape)
	}
	b, err := r.Alloc(d, shape...)
	if err != nil {
		return nil, err
	}
	if err := b.WriteFloat32(ctx, values); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// Float32s reads the whole buffer into a new slice, converted as
// ReadFloat32 converts.
func (b *Buffer) Float32s(ctx context.Context) ([]float32, error) {
	if err := b.Check(nil, "read", "buffer"); err != nil {
		return nil, err
	}
	out := make([]float32, b.Len())
	if err := b.ReadFloat32(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}
