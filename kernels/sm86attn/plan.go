package sm86attn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrUnsupported is wrapped by every PlanPrefill error: the call is outside
// what the kernels cover (the caller falls back to another kernel and can
// show the reason).
var ErrUnsupported = errors.New("sm86attn: not covered")

// PrefillArgs is one prefill call in plain values: device addresses,
// shapes and element strides, as fallback.AttentionArgs lays them out
// ([batch, seq, heads, headDim], head dimension contiguous).
type PrefillArgs struct {
	// Q, K, V, O: device addresses. LSE (f32) may be 0 (not stored).
	// CuSeqQ and CuSeqKV (int32, Batch+1 offsets) may be 0; with one,
	// that side is varlen (sequence b's rows CuSeq[b]..CuSeq[b+1]-1 of
	// batch 0) and SeqQ (SeqKV) is the longest sequence.
	Q, K, V, O, LSE, CuSeqQ, CuSeqKV uint64

	Batch, HeadsQ, HeadsKV, HeadDim int
	SeqQ, SeqKV                     int
	// Strides in elements: batch, seq, head.
	QStrides, KStrides, VStrides, OStrides [3]int
	// LSE strides in elements (varlen queries: the batch stride is unused,
	// rows being CuSeqQ[b] + i).
	LSEBatchStride, LSEHeadStride int

	In  Input
	Out Output

	Scale, SoftCap float32
	Causal         bool
	// WindowLeft and WindowRight: -1 for unbounded (fallback.Unbounded).
	WindowLeft, WindowRight int
}

// Launch is a planned kernel launch.
type Launch struct {
	Config      Config
	Kernel      string // symbol name in Module
	Grid        [3]int
	Block       [3]int
	SharedBytes int
	Params      []byte
}

// PlanPrefill checks that a call is within what the prefill kernels cover
// and returns the launch. The selection rule: head dimension 64 or 128;
// f16 or bf16 Q, K and V (one type); O f32, f16 or bf16; Q, K, V 16-byte
// aligned with batch, seq and head strides multiples of 8 elements; O
// aligned to two elements with even strides; every byte stride and
// offset below 2^32 (the kernels form them in 32 bits per factor); HeadsQ
// a multiple of HeadsKV, both below 2^16; a positive Scale. Causal,
// windows, soft-cap and varlen are all covered. Anything else returns an
// error wrapping ErrUnsupported that names the rule.
func PlanPrefill(a PrefillArgs) (Launch, error) {
	bad := func(f string, x ...any) (Launch, error) {
		return Launch{}, fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(f, x...))
	}
	if a.HeadDim != 64 && a.HeadDim != 128 {
		return bad("head dimension %d (covered: 64, 128)", a.HeadDim)
	}
	if a.In != F16 && a.In != BF16 {
		return bad("input type %v", a.In)
	}
	if a.Out != OutF32 && a.Out != OutF16 && a.Out != OutBF16 {
		return bad("output type %v", a.Out)
	}
	if a.Batch < 1 || a.HeadsQ < 1 || a.HeadsKV < 1 || a.HeadsQ%a.HeadsKV != 0 || a.HeadsQ >= 1<<16 {
		return bad("heads %d / %d", a.HeadsQ, a.HeadsKV)
	}
	if a.SeqQ < 0 || a.SeqKV < 0 || a.SeqQ >= 1<<24 || a.SeqKV >= 1<<24 || a.Batch >= 1<<16 {
		return bad("sequence lengths %d, %d", a.SeqQ, a.SeqKV)
	}
	if !(a.Scale > 0) || math.IsInf(float64(a.Scale), 0) || a.SoftCap < 0 || math.IsNaN(float64(a.SoftCap)) {
		return bad("scale %g, soft-cap %g", a.Scale, a.SoftCap)
	}
	if a.WindowLeft < -1 || a.WindowRight < -1 {
		return bad("window %d, %d", a.WindowLeft, a.WindowRight)
	}
	for _, p := range []struct {
		n string
		v uint64
	}{{"Q", a.Q}, {"K", a.K}, {"V", a.V}} {
		if p.v%16 != 0 {
			return bad("%s not 16-byte aligned", p.n)
		}
	}
	esz := uint64(a.Out.Size())
	if a.O%(2*esz) != 0 || a.LSE%4 != 0 || a.CuSeqQ%4 != 0 || a.CuSeqKV%4 != 0 {
		return bad("O, LSE or cu_seqlens misaligned")
	}
	var strides []uint32
	for _, s := range []struct {
		n    string
		st   [3]int
		mult int
		size int
	}{{"Q", a.QStrides, 8, 2}, {"K", a.KStrides, 8, 2}, {"V", a.VStrides, 8, 2}, {"O", a.OStrides, 2, a.Out.Size()}} {
		var b [3]uint32
		for k, v := range s.st {
			if v < 0 || v%s.mult != 0 || uint64(v)*uint64(s.size) >= 1<<32 {
				return bad("%s stride %d: a multiple of %d elements, below 2^32 bytes", s.n, v, s.mult)
			}
			b[k] = uint32(v * s.size)
		}
		strides = append(strides, b[1], b[2], b[0]) // seq, head, batch
	}
	if a.LSEBatchStride < 0 || a.LSEHeadStride < 0 || uint64(a.LSEBatchStride)*4 >= 1<<32 || uint64(a.LSEHeadStride)*4 >= 1<<32 {
		return bad("LSE strides %d, %d", a.LSEBatchStride, a.LSEHeadStride)
	}
	strides = append(strides, uint32(4*a.LSEHeadStride), uint32(4*a.LSEBatchStride))
	group := a.HeadsQ / a.HeadsKV
	var magic uint32
	if group > 1 {
		magic = uint32((uint64(1)<<32 + uint64(group) - 1) / uint64(group))
	}
	c, capIn := a.Scale*float32(math.Log2E), float32(0)
	if a.SoftCap > 0 {
		c, capIn = a.SoftCap*float32(math.Log2E), a.Scale/a.SoftCap
	}
	winR := a.WindowRight
	if a.Causal {
		winR = 0
	}
	cfg := Config{In: a.In, Out: a.Out, HeadDim: a.HeadDim, SoftCap: a.SoftCap > 0}
	var par []byte
	for _, v := range []uint64{a.Q, a.K, a.V, a.O, a.LSE, a.CuSeqQ, a.CuSeqKV} {
		par = binary.LittleEndian.AppendUint64(par, v)
	}
	for _, v := range strides {
		par = binary.LittleEndian.AppendUint32(par, v)
	}
	for _, v := range []uint32{uint32(a.SeqQ), uint32(a.SeqKV), uint32(group), magic,
		math.Float32bits(c), math.Float32bits(capIn), uint32(int32(a.WindowLeft)), uint32(int32(winR))} {
		par = binary.LittleEndian.AppendUint32(par, v)
	}
	return Launch{
		Config:      cfg,
		Kernel:      cfg.Name(),
		Grid:        [3]int{max(1, (a.SeqQ+BlockQ-1)/BlockQ), a.HeadsQ, a.Batch},
		Block:       [3]int{Threads, 1, 1},
		SharedBytes: cfg.SharedBytes(),
		Params:      par,
	}, nil
}
