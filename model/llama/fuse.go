package llama

import (
	"context"

	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// FusedLayer is one decoder layer's projections as Load fuses them (unless
// LoadOptions.KeepSeparate): the forward pass runs each as one matmul.
type FusedLayer struct {
	// QKV is [heads·headDim + 2·kvHeads·headDim, hidden]: the rows of
	// q_proj, then k_proj, then v_proj.
	QKV *runtime.Buffer
	// QKVBias is their biases, concatenated likewise (nil without QKVBias).
	QKVBias *runtime.Buffer
	// GateUp is [2·intermediate, hidden]: the rows of gate_proj, then
	// up_proj, so x·GateUpᵀ is GatedActivate's [gate | up] input.
	GateUp *runtime.Buffer
	// GateUpBias is their biases, concatenated likewise (nil without
	// MLPBias).
	GateUpBias *runtime.Buffer
}

func (f *FusedLayer) slots() []**runtime.Buffer {
	return []**runtime.Buffer{&f.QKV, &f.QKVBias, &f.GateUp, &f.GateUpBias}
}

// fusePart says where a separate weight goes in a fused layer: which of
// its buffers (FusedLayer.slots order) and from which row.
type fusePart struct{ layer, buf, row int }

// fuseParts maps the addresses of m.weights' fused fields (Layers must be
// allocated) to their places.
func (m *Model) fuseParts() map[**runtime.Buffer]fusePart {
	c := m.cfg
	qd, kvd, I := qDim(c), kvDim(c), c.IntermediateSize
	parts := map[**runtime.Buffer]fusePart{}
	for l := range m.weights.Layers {
		ls := &m.weights.Layers[l]
		parts[&ls.Q], parts[&ls.K], parts[&ls.V] = fusePart{l, 0, 0}, fusePart{l, 0, qd}, fusePart{l, 0, qd + kvd}
		if c.QKVBias {
			parts[&ls.QBias], parts[&ls.KBias], parts[&ls.VBias] = fusePart{l, 1, 0}, fusePart{l, 1, qd}, fusePart{l, 1, qd + kvd}
		}
		parts[&ls.Gate], parts[&ls.Up] = fusePart{l, 2, 0}, fusePart{l, 2, I}
		if c.MLPBias {
			parts[&ls.GateBias], parts[&ls.UpBias] = fusePart{l, 3, 0}, fusePart{l, 3, I}
		}
	}
	return parts
}

// fusedShape is the shape of buffer buf of a fused layer.
func (c Config) fusedShape(buf int) []int {
	qkv := qDim(c) + 2*kvDim(c)
	switch buf {
	case 0:
		return []int{qkv, c.HiddenSize}
	case 1:
		return []int{qkv}
	case 2:
		return []int{2 * c.IntermediateSize, c.HiddenSize}
	}
	return []int{2 * c.IntermediateSize}
}

// uploadFused writes tensor t into its place p of m.fused, allocating the
// fused buffer on its first part (of element type dt, or t's own).
func (m *Model) uploadFused(ctx context.Context, rt *runtime.Runtime, p fusePart, t Tensor, dt tile.DType) error {
	dst := m.fused[p.layer].slots()[p.buf]
	if *dst == nil {
		if dt == tile.Invalid {
			dt = t.DType
		}
		b, err := rt.Alloc(dt, m.cfg.fusedShape(p.buf)...)
		if err != nil {
			return err
		}
		*dst = b
	}
	b := *dst
	off := p.row
	if len(b.Shape()) == 2 { // a matrix, not a bias
		off *= m.cfg.HiddenSize
	}
	if b.DType() == t.DType {
		return b.Write(ctx, off, t.Data)
	}
	return convertInto(ctx, b, off, t)
}

// FusedLayers returns the fused projections of each layer (nil when the
// model was loaded with KeepSeparate, or is nil). The buffers belong to
// the model.
func (m *Model) FusedLayers() []FusedLayer {
	if m == nil {
		return nil
	}
	return m.fused
}
