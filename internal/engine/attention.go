package engine

import (
	"fmt"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/tile"
)

// The attention ops.
var (
	// OpAttention is scaled dot-product attention (prefill, varlen and
	// decode over a KV cache); its arguments are *AttentionArgs.
	OpAttention = Op[AttentionArgs]{"attention"}
	// OpKVAppend copies new keys and values into a KV cache; its arguments
	// are *KVAppendArgs.
	OpKVAppend = Op[KVAppendArgs]{"kvcache.append"}
)

// AttnTensor is a strided view of a buffer as [batch, seq, heads, headDim]
// (or [seq, heads, headDim], a batch of one), the layout of attention's
// queries, keys, values and outputs. Element (b, s, h, d) is element
// Offset + b·Strides[0] + s·Strides[1] + h·Strides[2] + d·Strides[3] of Buf;
// nil Strides means dense row-major. The headDim stride must be 1.
type AttnTensor struct {
	Buf     *Buffer
	Offset  int
	Shape   []int
	Strides []int
}

// AttnView is a validated AttnTensor with its four dimensions and strides
// resolved.
type AttnView struct {
	Buf                                *Buffer
	Offset                             int
	Batch, Seq, Heads, HeadDim         int
	BatchStride, SeqStride, HeadStride int
}

// host returns the fallback's view of v's host memory.
func (v AttnView) host() fallback.AttnTensor {
	d := v.Buf.DType()
	return fallback.AttnTensor{DType: d, Data: v.Buf.Host()[v.Offset*d.Size():],
		BatchStride: v.BatchStride, SeqStride: v.SeqStride, HeadStride: v.HeadStride}
}

// AttentionArgs is a validated attention call; see fallback.AttentionArgs
// for the meaning of every field. Kernels receive it typed (RegisterKernel).
type AttentionArgs struct {
	Batch, HeadsQ, HeadsKV, HeadDim int
	SeqQ, SeqKV                     int
	Q, K, V, O                      AttnView
	// LSE is nil or an f32 buffer receiving the per-row log-sum-exp, element
	// (b, h, i) at b·LSEBatchStride + h·LSEHeadStride + i (varlen: row
	// CuSeqQ[b]+i of head h at h·LSEHeadStride).
	LSE                           *Buffer
	LSEBatchStride, LSEHeadStride int
	CuSeqQ, CuSeqKV               []int
	SeqLensKV                     []int
	PageSize                      int
	BlockTable                    []int32
	BlocksPerSeq                  int
	Scale, SoftCap                float32
	Causal                        bool
	WindowLeft, WindowRight       int
	// Splits forces the number of KV splits (0 chooses).
	Splits int
}

// HostAttentionArgs converts a CPU-backend call into the fallback's form.
func HostAttentionArgs(a *AttentionArgs, threads int) *fallback.AttentionArgs {
	return hostAttentionInto(new(hostCall[fallback.AttentionArgs]), a, threads)
}

// hostAttentionInto is HostAttentionArgs into c.
func hostAttentionInto(c *hostCall[fallback.AttentionArgs], a *AttentionArgs, threads int) *fallback.AttentionArgs {
	h := &c.h
	*h = fallback.AttentionArgs{
		Batch: a.Batch, HeadsQ: a.HeadsQ, HeadsKV: a.HeadsKV, HeadDim: a.HeadDim,
		SeqQ: a.SeqQ, SeqKV: a.SeqKV, CuSeqQ: a.CuSeqQ, CuSeqKV: a.CuSeqKV, SeqLensKV: a.SeqLensKV,
		PageSize: a.PageSize, BlockTable: a.BlockTable, BlocksPerSeq: a.BlocksPerSeq,
		Q: a.Q.host(), K: a.K.host(), V: a.V.host(), O: a.O.host(),
		LSEBatchStride: a.LSEBatchStride, LSEHeadStride: a.LSEHeadStride,
		Scale: a.Scale, SoftCap: a.SoftCap, Causal: a.Causal,
		WindowLeft: a.WindowLeft, WindowRight: a.WindowRight,
		Threads: threads, Splits: a.Splits,
	}
	if a.LSE != nil {
		h.LSE = a.LSE.Host()
	}
	return h
}

// KVAppendArgs is a validated KV-cache append; see fallback.KVAppendArgs.
type KVAppendArgs struct {
	Batch, HeadsKV, HeadDim int
	NewK, NewV, K, V        AttnView
	Lens, Counts            []int
	PageSize                int
	BlockTable              []int32
	BlocksPerSeq            int
}

// HostKVAppendArgs converts a CPU-backend append into the fallback's form.
func HostKVAppendArgs(a *KVAppendArgs) *fallback.KVAppendArgs {
	return hostKVAppendInto(new(hostCall[fallback.KVAppendArgs]), a, 0)
}

// hostKVAppendInto is HostKVAppendArgs into c.
func hostKVAppendInto(c *hostCall[fallback.KVAppendArgs], a *KVAppendArgs, _ int) *fallback.KVAppendArgs {
	c.h = fallback.KVAppendArgs{
		Batch: a.Batch, HeadsKV: a.HeadsKV, HeadDim: a.HeadDim,
		NewK: a.NewK.host(), NewV: a.NewV.host(), K: a.K.host(), V: a.V.host(),
		Lens: a.Lens, Counts: a.Counts,
		PageSize: a.PageSize, BlockTable: a.BlockTable, BlocksPerSeq: a.BlocksPerSeq,
	}
	return &c.h
}

func attnFloat(t tile.DType) bool { return t == tile.F32 || t == tile.F16 || t == tile.BF16 }

func cpuAttentionSupports(a *AttentionArgs) error {
	for _, v := range []AttnView{a.Q, a.K, a.V, a.O} {
		if !attnFloat(v.Buf.DType()) {
			return fmt.Errorf("element type %v not supported", v.Buf.DType())
		}
	}
	return nil
}

func init() {
	for i, v := range fallback.AttentionVariants() {
		name := v.Name
		RegisterKernel(OpAttention, TypedKernel[AttentionArgs]{
			Name:       "cpu.attention." + name,
			Arch:       Arch{ISA: ISACPU, CPUFeatures: v.Features},
			Preference: 100 - i,
			Doc:        "blocked streaming softmax, parallel over heads, row blocks and KV splits; " + name + " inner loops",
			Supports:   cpuAttentionSupports,
			Launch: CPUKernel(func(l *Launch, a *AttentionArgs) error {
				return withHost(&hostAttentions, a, l.Threads, hostAttentionInto,
					func(h *fallback.AttentionArgs) error { return fallback.AttentionFast(name, h) })
			}),
		})
	}
	RegisterKernel(OpAttention, TypedKernel[AttentionArgs]{
		Name:       "cpu.attention.reference",
		Arch:       Arch{ISA: ISACPU},
		Preference: 0,
		Doc:        "plain float64 full-softmax reference (the oracle); force it with TCRT_KERNEL=cpu.attention.reference",
		Supports:   cpuAttentionSupports,
		Launch: CPUKernel(func(l *Launch, a *AttentionArgs) error {
			return withHost(&hostAttentions, a, l.Threads, hostAttentionInto,
				func(h *fallback.AttentionArgs) error { fallback.AttentionRef(h); return nil })
		}),
	})
	RegisterKernel(OpKVAppend, TypedKernel[KVAppendArgs]{
		Name:       "cpu.kvcache.append",
		Arch:       Arch{ISA: ISACPU},
		Preference: 100,
		Doc:        "row copies into a contiguous or paged KV cache",
		Launch: CPUKernel(func(l *Launch, a *KVAppendArgs) error {
			return withHost(&hostKVAppends, a, 0, hostKVAppendInto,
				func(h *fallback.KVAppendArgs) error { fallback.KVAppend(h); return nil })
		}),
	})
}
