package llama

import (
	"context"
	"encoding/binary"
	"math"
	"sync"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// LoadOptions configures Load. The zero value keeps every weight in the
// element type the checkpoint stores it in.
type LoadOptions struct {
	// DType converts every weight to this element type (F32, F16 or BF16)
	// as it is uploaded; tile.Invalid (the zero value) keeps each weight's
	// own type.
	DType tile.DType
	// KeepSeparate keeps every projection in its own buffer, as in the
	// checkpoint. By default each layer's q, k and v projections (and
	// biases) are uploaded into one matrix, and gate and up (and biases)
	// into another (FusedLayers), which the forward pass runs as one matmul each; the
	// fused weights' fields of Weights() are then nil.
	KeepSeparate bool
	// Float8 quantises every projection matrix (q, k, v, o, gate, up and
	// down, fused or not) to e4m3 after it is uploaded, with one scale per
	// output channel (ops.Quantize, PerRow over the [out, in] weight, scales
	// from each row's amax), which the forward pass hands to ops.MatMul as
	// ScaleB. The embeddings, the LM head, the norms and the biases keep
	// their type. It roughly halves a bf16 model's bytes at a logit error
	// of a few percent of the largest logit (TestLoadFloat8 states the
	// bound). Each weight's unquantised buffer is released once its
	// quantised copy is made, so the load's peak is the unquantised model
	// plus one quantised matrix.
	Float8 bool
}

// Model is a Llama-family model whose weights live in runtime buffers.
// Close releases them.
type Model struct {
	rt      *runtime.Runtime
	cfg     Config
	weights WeightSet[*runtime.Buffer]
	fused   []FusedLayer                        // nil with KeepSeparate
	scales  map[*runtime.Buffer]*runtime.Buffer // e4m3 weight → its f32 scales (Float8)
	mu      sync.Mutex
	closed  bool
}

const loadOp = "llama load"

// stagingBytes bounds the host buffer a converting upload goes through.
const stagingBytes = 4 << 20

// Load opens the model directory dir (see OpenCheckpoint), allocates one
// runtime buffer per weight in rt, shaped as in the checkpoint, and
// uploads the weights into them, converting to opts.DType if it is set.
// The checkpoint's mappings are released before Load returns.
//
// A weight of the type asked for is written straight from the file's
// mapping into its buffer (Buffer.Write); a converted one goes through a
// bounded staging buffer (4 MiB), so Load never holds a second full copy
// of the weights on the host. After each weight is uploaded its mapped
// pages are dropped from the resident set (Linux), so the load's peak
// resident memory is about the buffers plus one weight (measured on a
// 496 MB bf16 checkpoint: peak RSS 1.06× the weight bytes, against 1.97×
// without dropping the pages). (The runtime has no
// buffer that adopts host memory, so on the CPU backend the buffers are
// one copy of the file; a zero-copy CPU load needs such a buffer.)
//
// ctx is checked before each weight. On any error every buffer made so
// far is closed.
func Load(ctx context.Context, rt *runtime.Runtime, dir string, opts *LoadOptions) (*Model, error) {
	if ctx == nil {
		return nil, tile.Errorf(tile.ErrArgument, loadOp, "ctx", "context is nil")
	}
	if rt == nil {
		return nil, tile.Errorf(tile.ErrArgument, loadOp, "rt", "runtime is nil")
	}
	var o LoadOptions
	if opts != nil {
		o = *opts
	}
	if o.DType != tile.Invalid && !weightDTypes[o.DType] {
		return nil, tile.Errorf(tile.ErrDType, loadOp, "opts.DType", "%v: weights load as f32, f16 or bf16", o.DType)
	}
	ck, err := OpenCheckpoint(dir)
	if err != nil {
		return nil, err
	}
	defer ck.Close()
	m := &Model{rt: rt, cfg: ck.Config()}
	m.weights.Layers = make([]LayerSet[*runtime.Buffer], m.cfg.NumLayers)
	var parts map[**runtime.Buffer]fusePart
	if !o.KeepSeparate {
		m.fused = make([]FusedLayer, m.cfg.NumLayers)
		parts = m.fuseParts()
	}
	err = EachWeight(m.cfg, &m.weights, func(name string, _ []int, dst **runtime.Buffer) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		src, _ := ck.Tensor(name) // OpenCheckpoint checked every weight is there
		if p, ok := parts[dst]; ok {
			err := m.uploadFused(ctx, rt, p, src, o.DType)
			ck.release(src.Data)
			return err
		}
		b, err := upload(ctx, rt, src, o.DType)
		ck.release(src.Data)
		*dst = b
		return err
	})
	if err != nil {
		_ = m.Close()
		return nil, err
	}
	if m.cfg.TieWordEmbeddings {
		m.weights.LMHead = m.weights.Embed
	}
	if o.Float8 {
		if err := m.quantize(ctx); err != nil {
			_ = m.Close()
			return nil, err
		}
	}
	return m, nil
}

// projections are the addresses of the model's projection matrices, fused
// or separate, in layer order.
func (m *Model) projections() []**runtime.Buffer {
	var ps []**runtime.Buffer
	for l := range m.weights.Layers {
		ls := &m.weights.Layers[l]
		if m.fused != nil {
			ps = append(ps, &m.fused[l].QKV, &m.fused[l].GateUp)
		} else {
			ps = append(ps, &ls.Q, &ls.K, &ls.V, &ls.Gate, &ls.Up)
		}
		ps = append(ps, &ls.O, &ls.Down)
	}
	return ps
}

// quantize replaces every projection matrix by an e4m3 copy with per-row
// scales (LoadOptions.Float8), releasing the original.
func (m *Model) quantize(ctx context.Context) error {
	m.scales = map[*runtime.Buffer]*runtime.Buffer{}
	for _, p := range m.projections() {
		x := *p
		shape := x.Shape()
		q, err := m.rt.Alloc(tile.E4M3, shape...)
		if err != nil {
			return err
		}
		s, err := m.rt.Alloc(tile.F32, shape[0])
		if err == nil {
			err = ops.Quantize(ctx, m.rt, q, x, &ops.QuantizeOptions{Granularity: ops.PerRow, ScaleInv: s})
		}
		if err != nil {
			_ = q.Close()
			if s != nil {
				_ = s.Close()
			}
			return err
		}
		*p = q
		m.scales[q] = s
		if err := x.Close(); err != nil {
			return err
		}
	}
	return nil
}

// upload copies one tensor into a new buffer of element type dt (the
// tensor's own when Invalid).
func upload(ctx context.Context, rt *runtime.Runtime, t Tensor, dt tile.DType) (*runtime.Buffer, error) {
	if dt == tile.Invalid {
		dt = t.DType
	}
	b, err := rt.Alloc(dt, t.Shape...)
	if err != nil {
		return nil, err
	}
	if dt == t.DType {
		err = b.Write(ctx, 0, t.Data)
	} else {
		err = convertInto(ctx, b, 0, t)
	}
	if err != nil {
		_ = b.Close()
		return nil, err
	}
	return b, nil
}

// convertInto writes t's elements into b from element base, converted to
// b's element type, a staging buffer's worth at a time.
func convertInto(ctx context.Context, b *runtime.Buffer, base int, t Tensor) error {
	in, out := t.DType.Size(), b.DType().Size()
	per := stagingBytes / max(in, out)
	stage := make([]byte, min(per, t.Len())*out)
	vals := make([]float32, min(per, t.Len()))
	for off := 0; off < t.Len(); off += per {
		n := min(per, t.Len()-off)
		decodeF32(vals[:n], t.DType, t.Data[off*in:(off+n)*in])
		encodeF32(stage[:n*out], b.DType(), vals[:n])
		if err := b.Write(ctx, base+off, stage[:n*out]); err != nil {
			return err
		}
	}
	return nil
}

// decodeF32 converts the little-endian elements of src (f32, f16 or bf16)
// to float32 into dst.
func decodeF32(dst []float32, dt tile.DType, src []byte) {
	switch dt {
	case tile.F32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	case tile.F16:
		for i := range dst {
			dst[i] = tile.F16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case tile.BF16:
		for i := range dst {
			dst[i] = tile.BF16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	}
}

// encodeF32 converts src to little-endian elements of dt (f32, f16 or
// bf16, rounding to nearest even) into dst.
func encodeF32(dst []byte, dt tile.DType, src []float32) {
	switch dt {
	case tile.F32:
		for i, v := range src {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
		}
	case tile.F16:
		for i, v := range src {
			binary.LittleEndian.PutUint16(dst[2*i:], tile.F32ToF16(v))
		}
	case tile.BF16:
		for i, v := range src {
			binary.LittleEndian.PutUint16(dst[2*i:], tile.F32ToBF16(v))
		}
	}
}

// Float32s decodes the tensor's elements (f32, f16 or bf16) to float32.
// Other element types give an error wrapping tile.ErrDType, and a Shape
// that does not match the length of Data one wrapping tile.ErrShape.
func (t Tensor) Float32s() ([]float32, error) {
	if !weightDTypes[t.DType] {
		return nil, tile.Errorf(tile.ErrDType, "decode", t.Name, "element type %s: only F32, F16 and BF16 decode to float32", t.Format)
	}
	n, ok := tile.ProductSize(t.Shape...)
	if size, okSize := tile.ByteSize(t.DType, n); !ok || !okSize || size != len(t.Data) {
		return nil, tile.Errorf(tile.ErrShape, "decode", t.Name, "shape %v of %s does not match its %d data bytes", t.Shape, t.DType, len(t.Data))
	}
	out := make([]float32, n)
	decodeF32(out, t.DType, t.Data)
	return out, nil
}

// Config is the model's configuration (zero for a nil Model).
func (m *Model) Config() Config {
	if m == nil {
		return Config{}
	}
	return m.cfg
}

// Weights returns the model's weight buffers (the zero WeightSet for a nil
// Model). The buffers belong to the model: do not close them.
func (m *Model) Weights() WeightSet[*runtime.Buffer] {
	if m == nil {
		return WeightSet[*runtime.Buffer]{}
	}
	return m.weights
}

// WeightBytes is the bytes of the model's weight buffers (a tied LM head
// counted once): what a decode step reads, the numerator of a
// bandwidth-efficiency figure. 0 for a nil Model.
func (m *Model) WeightBytes() int {
	if m == nil {
		return 0
	}
	n := 0
	m.eachBuffer(func(b *runtime.Buffer) { n += b.Bytes() })
	return n
}

// Close releases every weight buffer. It is idempotent and returns the
// first error; on a nil Model it returns an error wrapping
// tile.ErrArgument.
func (m *Model) Close() error {
	if m == nil {
		return tile.Errorf(tile.ErrArgument, "close", "model", "model is nil")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	var first error
	m.eachBuffer(func(b *runtime.Buffer) {
		if err := b.Close(); err != nil && first == nil {
			first = err
		}
	})
	return first
}

// eachBuffer calls fn for every weight buffer the model holds, separate or
// fused (a tied LM head once).
func (m *Model) eachBuffer(fn func(*runtime.Buffer)) {
	_ = EachWeight(m.cfg, &m.weights, func(_ string, _ []int, b **runtime.Buffer) error {
		if *b != nil {
			fn(*b)
		}
		return nil
	})
	for i := range m.fused {
		for _, b := range m.fused[i].slots() {
			if *b != nil {
				fn(*b)
			}
		}
	}
	for _, s := range m.scales {
		fn(s)
	}
}
