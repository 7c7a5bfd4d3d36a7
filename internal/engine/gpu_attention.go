package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/tcrt-go/tcrt/kernels/sm86attn"
	"github.com/tcrt-go/tcrt/tile"
)

// The hand-scheduled SM86/SM89 flash attention (kernels/sm86attn),
// registered for every SM86/SM89 device, real or simulated: prefill,
// varlen, and decode over contiguous or paged KV caches (ops.Attention and
// ops.AttentionKVCache both arrive here as OpAttention). Unverified on a
// GPU: only the simulator has run these cubins.
//
// Supports is sm86attn.PlanPrefill's rule (the kernel package documents
// it): head dimension 64, 128 or 256; Q, K and V all f16 or all bf16; O
// f32, f16 or bf16; Q, K, V 16-byte aligned with strides multiples of 8
// elements; the LSE, if any, f32. Anything else (other head dimensions,
// f32 inputs, odd strides) gives way to the host fallback, and Explain
// shows the plan's reason.
//
// Launch: the host-side arrays (cu_seqlens, cache lengths, the block table)
// are copied to device memory for the call; split-KV (flash-decoding) is
// chosen when the query blocks fill fewer than half the device's SMs and
// there are at least 512 keys (or forced by AttentionArgs.Splits), with an
// f32 workspace for the partials and the combine kernel after the main
// one. Temporaries are freed by a stream task after the kernels.

// sm86AttnSplitMinKeys is the shortest key range split-KV is chosen for.
const sm86AttnSplitMinKeys = 512

// sm86AttnArgs is a's call in the plan's terms; aux gives the device
// addresses of the host arrays (placeholders for Supports).
func sm86AttnArgs(a *AttentionArgs, aux sm86AttnAux) (sm86attn.PrefillArgs, error) {
	p := sm86attn.PrefillArgs{Batch: a.Batch, HeadsQ: a.HeadsQ, HeadsKV: a.HeadsKV, HeadDim: a.HeadDim,
		SeqQ: a.SeqQ, SeqKV: a.SeqKV, LSEBatchStride: a.LSEBatchStride, LSEHeadStride: a.LSEHeadStride,
		Scale: a.Scale, SoftCap: a.SoftCap, Causal: a.Causal, WindowLeft: a.WindowLeft, WindowRight: a.WindowRight,
		CuSeqQ: aux.cuQ, CuSeqKV: aux.cuKV, SeqLensKV: aux.lens, BlockTable: aux.table,
		PageSize: a.PageSize, BlocksPerSeq: a.BlocksPerSeq}
	in := a.Q.Buf.DType()
	if a.K.Buf.DType() != in || a.V.Buf.DType() != in {
		return p, fmt.Errorf("q, k and v must share one element type, have %v, %v, %v", in, a.K.Buf.DType(), a.V.Buf.DType())
	}
	p.In, p.Out = in, a.O.Buf.DType()
	if !slices.Contains(sm86attn.Inputs(), p.In) {
		return p, fmt.Errorf("input element type %v (covered: %v)", p.In, sm86attn.Inputs())
	}
	if !slices.Contains(sm86attn.Outputs(), p.Out) {
		return p, fmt.Errorf("output element type %v (covered: %v)", p.Out, sm86attn.Outputs())
	}
	if a.LSE != nil && a.LSE.DType() != tile.F32 {
		return p, fmt.Errorf("LSE must be f32, is %v", a.LSE.DType())
	}
	for _, v := range []struct {
		view AttnView
		addr *uint64
		st   *[3]int
	}{{a.Q, &p.Q, &p.QStrides}, {a.K, &p.K, &p.KStrides}, {a.V, &p.V, &p.VStrides}, {a.O, &p.O, &p.OStrides}} {
		base, err := DevicePtr(v.view.Buf)
		if err != nil {
			return p, err
		}
		*v.addr = base + uint64(v.view.Offset*v.view.Buf.DType().Size())
		*v.st = [3]int{v.view.BatchStride, v.view.SeqStride, v.view.HeadStride}
	}
	if a.LSE != nil {
		base, err := DevicePtr(a.LSE)
		if err != nil {
			return p, err
		}
		p.LSE = base
	}
	// varlen and cache calls bound the lengths by their longest sequence
	if a.CuSeqQ != nil {
		p.SeqQ = 0
		for b := range a.Batch {
			p.SeqQ = max(p.SeqQ, a.CuSeqQ[b+1]-a.CuSeqQ[b])
		}
		p.TotalQ = a.CuSeqQ[a.Batch] // the split workspace's rows
	}
	switch {
	case a.CuSeqKV != nil:
		p.SeqKV = 0
		for b := range a.Batch {
			p.SeqKV = max(p.SeqKV, a.CuSeqKV[b+1]-a.CuSeqKV[b])
		}
	case a.SeqLensKV != nil:
		for _, n := range a.SeqLensKV {
			p.SeqKV = max(p.SeqKV, n)
		}
	}
	return p, nil
}

// sm86AttnAux holds the device addresses of the call's host arrays.
type sm86AttnAux struct{ cuQ, cuKV, lens, table uint64 }

// placeholderAux stands in for the arrays' addresses when only the rule is
// checked: aligned, non-zero where the call has the array.
func placeholderAux(a *AttentionArgs) sm86AttnAux {
	var x sm86AttnAux
	if a.CuSeqQ != nil {
		x.cuQ = 0x1000
	}
	if a.CuSeqKV != nil {
		x.cuKV = 0x2000
	}
	if a.SeqLensKV != nil {
		x.lens = 0x3000
	}
	if a.BlockTable != nil {
		x.table = 0x4000
	}
	return x
}

func sm86AttnSupports(a *AttentionArgs) error {
	p, err := sm86AttnArgs(a, placeholderAux(a))
	if err != nil {
		return err
	}
	if _, err := sm86attn.PlanPrefill(p); err != nil {
		return planReason(err, sm86attn.ErrUnsupported)
	}
	return nil
}

// sm86AttnSplits is the split-KV count for p on a device with sms
// multiprocessors: forced (a positive AttentionArgs.Splits), else enough
// splits to fill the device when the query blocks leave most SMs idle.
// Varlen queries count their longest sequence for every batch entry.
func sm86AttnSplits(a *AttentionArgs, p sm86attn.PrefillArgs, sms int) int {
	if a.Splits > 0 {
		return a.Splits
	}
	group := max(1, p.HeadsQ/max(p.HeadsKV, 1))
	rows, heads := p.SeqQ, p.HeadsQ
	if group > 1 {
		rows, heads = p.SeqQ*group, p.HeadsKV
	}
	cfg := sm86attn.Select(p) // the variant: its rows a CTA, keys a block
	ctas := max(1, (rows+cfg.Rows()-1)/cfg.Rows()) * heads * p.Batch
	if p.SeqKV < sm86AttnSplitMinKeys || 2*ctas >= sms {
		return 1
	}
	kb := cfg.KeyBlock()
	blocks := (p.SeqKV + kb - 1) / kb
	return max(1, min((sms+ctas-1)/ctas, blocks/2, 64))
}

// int32Bytes packs vs as little-endian int32s.
func int32Bytes[T int | int32](vs []T) []byte {
	out := make([]byte, 0, 4*len(vs))
	for _, v := range vs {
		out = binary.LittleEndian.AppendUint32(out, uint32(int32(v)))
	}
	return out
}

func sm86AttnLaunch(ctx context.Context, l *Launch, a *AttentionArgs) error {
	rt := l.Runtime
	tmp := &scratch{rt: rt}
	launched := false
	fail := func(err error) error {
		if launched { // a kernel already enqueued may use the temporaries
			return errors.Join(err, l.Stream.Enqueue(tmp.release))
		}
		return errors.Join(err, tmp.release())
	}
	var aux sm86AttnAux
	var err error
	for _, x := range []struct {
		has  bool
		data []byte
		addr *uint64
	}{{a.CuSeqQ != nil, int32Bytes(a.CuSeqQ), &aux.cuQ}, {a.CuSeqKV != nil, int32Bytes(a.CuSeqKV), &aux.cuKV},
		{a.SeqLensKV != nil, int32Bytes(a.SeqLensKV), &aux.lens}, {a.BlockTable != nil, int32Bytes(a.BlockTable), &aux.table}} {
		if x.has {
			if *x.addr, err = tmp.upload(ctx, x.data); err != nil {
				return fail(err)
			}
		}
	}
	p, err := sm86AttnArgs(a, aux)
	if err != nil {
		return fail(err)
	}
	mod := sm86attn.Module()
	var launches []sm86attn.Launch
	if s := sm86AttnSplits(a, p, rt.Device().SMs); s > 1 {
		p.Splits = s
		if p.Workspace, err = tmp.alloc(sm86attn.SplitWorkspaceBytes(p)); err != nil {
			return fail(err)
		}
		ls, err := sm86attn.PlanSplitKV(p)
		if err != nil {
			return fail(planReason(err, sm86attn.ErrUnsupported))
		}
		launches = ls[:]
	} else {
		ls, err := sm86attn.PlanPrefill(p)
		if err != nil {
			return fail(planReason(err, sm86attn.ErrUnsupported))
		}
		launches = []sm86attn.Launch{ls}
	}
	for i := range launches {
		g := &launches[i]
		if g.Grid[0] == 0 {
			continue // nothing to combine
		}
		g.Module = mod
		if err := LaunchGPU(l.Stream, g); err != nil {
			return fail(err)
		}
		launched = true
	}
	if len(tmp.mems) == 0 {
		return nil
	}
	// after the kernels (host tasks wait for the stream's device work)
	return l.Stream.Enqueue(tmp.release)
}

func init() {
	RegisterKernel(OpAttention, TypedKernel[AttentionArgs]{
		Name:       "sass.attention.sm86attn",
		Arch:       Arch{ISA: ISASASS, MinSM: 86, MaxSM: 89, Module: sm86attn.Module()},
		Preference: 200,
		Doc:        "hand-scheduled SASS flash attention (kernels/sm86attn): LDGSTS, LDSM/LDSM.T, HMMA.16816.F32, online softmax in registers; prefill, varlen, contiguous and paged KV caches, split-KV + combine (unverified on a GPU)",
		Supports:   sm86AttnSupports,
		Launch:     sm86AttnLaunch,
	})
}
