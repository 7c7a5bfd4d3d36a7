package runtime

import (
	"context"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/tile"
)

// Buffer is device memory holding a dense row-major tensor of one element
// type. Close releases it; a closed buffer cannot be used. One buffer has
// one *Buffer: Alloc's result is the value every accessor gives back.
//
// Reads and writes from the host (Write, Read, WriteFloat32, ReadFloat32
// and the generic WriteRaw and ReadRaw) are synchronous: they first wait
// for all work already enqueued on the runtime's streams, so they see, and
// are not overtaken by, earlier kernels. They report their own errors
// only: an error of that earlier work stays with its stream's Synchronize.
//
// # Lifetimes
//
// A buffer's memory lives as long as anything uses it, as with PyTorch's
// caching allocator (record_stream) and CUDA's stream-ordered free: every
// op (every ops call) holds a reference to each buffer its arguments name,
// taken when it is launched and dropped when it has finished on its
// stream; a host transfer holds one while it copies. Close marks the
// buffer closed at once (new ops and transfers get ErrClosed) and returns;
// the memory goes back to the device (or the pool) when the last holder
// lets go, so work already queued or running completes on valid memory and
// nothing ever reads or writes memory that was freed or reused.
type Buffer struct{ b *engine.Buffer }

// e is the engine buffer behind b (nil for a nil b).
func (b *Buffer) e() *engine.Buffer {
	if b == nil {
		return nil
	}
	return b.b
}

// DType is the element type (tile.Invalid for a nil buffer).
func (b *Buffer) DType() DType { return b.e().DType() }

// Shape is the tensor shape (a copy).
func (b *Buffer) Shape() []int { return b.e().Shape() }

// Rank is the number of dimensions of the shape.
func (b *Buffer) Rank() int { return b.e().Rank() }

// Dim is the size of dimension i of the shape, 0 when there is none: what
// Shape()[i] is, without the copy.
func (b *Buffer) Dim(i int) int { return b.e().Dim(i) }

// Len is the number of elements.
func (b *Buffer) Len() int { return b.e().Len() }

// Bytes is the size in bytes.
func (b *Buffer) Bytes() int { return b.e().Bytes() }

// Tensor returns the buffer's dense row-major descriptor.
func (b *Buffer) Tensor() tile.Tensor { return b.e().Tensor() }

// Runtime is the buffer's runtime (nil for a nil buffer).
func (b *Buffer) Runtime() *Runtime { return wrapRuntime(b.e().Runtime()) }

// Closed reports whether Close has been called (true for a nil buffer,
// which cannot be used either).
func (b *Buffer) Closed() bool { return b.e().Closed() }

// Close marks the buffer closed: from now on ops and transfers naming it
// return ErrClosed. It does not wait: the memory is freed when the work
// already launched with it (queued or running, on any stream) has
// finished, at once when there is none (see Buffer's Lifetimes). Close is
// refused (ErrArgument) from work running on a stream, as the calls that
// wait for streams are, and closes nothing then. Close is idempotent; on a
// nil buffer it returns an error wrapping ErrArgument. The error is the
// backend's, when the memory is freed at once.
func (b *Buffer) Close() error { return b.e().Close() }

// Write copies src, the raw bytes of elements, into the buffer from
// element offset off.
func (b *Buffer) Write(ctx context.Context, off int, src []byte) error {
	return b.e().Write(ctx, off, src)
}

// Read copies the raw bytes of elements from element offset off into dst.
func (b *Buffer) Read(ctx context.Context, off int, dst []byte) error {
	return b.e().Read(ctx, off, dst)
}

// WriteFloat32 converts src to the buffer's float element type (rounding
// to nearest even; float8 saturates to the largest finite value) and
// writes it from element 0. len(src) must not exceed Len. It is
// WriteFloat32At(ctx, 0, src).
func (b *Buffer) WriteFloat32(ctx context.Context, src []float32) error {
	return b.e().WriteFloat32(ctx, src)
}

// WriteFloat32At converts src as WriteFloat32 does and writes it from
// element off. An f32 buffer is written straight from src; other types are
// converted through a reused 32 KiB scratch, so no call allocates in
// proportion to its size.
func (b *Buffer) WriteFloat32At(ctx context.Context, off int, src []float32) error {
	return b.e().WriteFloat32At(ctx, off, src)
}

// ReadFloat32 reads len(dst) elements from element 0, converted exactly to
// float32 (f64 rounds). It is ReadFloat32At(ctx, 0, dst).
func (b *Buffer) ReadFloat32(ctx context.Context, dst []float32) error {
	return b.e().ReadFloat32(ctx, dst)
}

// ReadFloat32At reads len(dst) elements from element off, converted as
// ReadFloat32 does. An f32 buffer is read straight into dst; other types
// go through a reused scratch, as in WriteFloat32At.
func (b *Buffer) ReadFloat32At(ctx context.Context, off int, dst []float32) error {
	return b.e().ReadFloat32At(ctx, off, dst)
}

// Float32s reads the whole buffer into a new slice, converted as
// ReadFloat32 converts.
func (b *Buffer) Float32s(ctx context.Context) ([]float32, error) { return b.e().Float32s(ctx) }

// Element is a Go type whose values can be copied bit for bit into
// buffers. uint16 carries f16/bf16 bits, uint8 float8 bits.
type Element interface {
	~float32 | ~float64 | ~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64
}

// WriteRaw copies src into b from element 0 bit for bit; T's size must
// equal the element size (uint16 for f16 and bf16, uint8 for float8).
func WriteRaw[T Element](ctx context.Context, b *Buffer, src []T) error {
	return engine.WriteRaw(ctx, b.e(), src)
}

// ReadRaw copies len(dst) elements from element 0 of b bit for bit.
func ReadRaw[T Element](ctx context.Context, b *Buffer, dst []T) error {
	return engine.ReadRaw(ctx, b.e(), dst)
}
