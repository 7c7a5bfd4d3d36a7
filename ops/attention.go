package ops

import (
	"context"
	"fmt"
	"math"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// Window limits which keys a query sees to a band around its position p:
// keys p−Left … p+Right. −1 on a side means unbounded on that side.
type Window struct {
	Left, Right int
}

// AttentionOptions are the optional parts of an attention call. The zero
// value (or nil options) is plain non-causal attention with scale 1/√headDim.
type AttentionOptions struct {
	// Scale multiplies the logits; 0 means 1/√headDim.
	Scale float32
	// Causal hides keys after the query's position. With seqQ ≠ seqKV the
	// mask is aligned bottom-right: query i sits at position i + seqKV − seqQ.
	// A row that sees no key outputs zeros.
	Causal bool
	// Window, if set, is a sliding window around each query's position
	// (combined with Causal, which makes the right side 0).
	Window *Window
	// SoftCap, if positive, replaces each scaled logit x by
	// SoftCap·tanh(x/SoftCap).
	SoftCap float32
	// LSE, if set, is an f32 buffer receiving each row's natural
	// log-sum-exp of the (scaled, capped) logits, −Inf for rows that see no
	// key: batch·headsQ·seqQ values laid out [batch, headsQ, seqQ], or for
	// varlen calls headsQ·totalQ values laid out [headsQ, totalQ].
	LSE *runtime.Buffer
	// CuSeqQ and CuSeqKV, if set (both or neither), pack variable-length
	// sequences as FlashAttention's varlen interface does: batch+1
	// non-decreasing offsets starting at 0; sequence b's queries are rows
	// CuSeqQ[b] … CuSeqQ[b+1]−1 of Q (and O), its keys rows
	// CuSeqKV[b] … CuSeqKV[b+1]−1 of K and V, which then have a batch of 1.
	// Not allowed with a KV cache.
	CuSeqQ, CuSeqKV []int
	// KVSplits forces the number of key ranges each (sequence, head, row
	// block) is split into (flash-decoding); 0 lets the kernel choose.
	KVSplits int
	// Stream, if set, makes the call asynchronous on that stream; nil runs
	// it on the default stream and waits.
	Stream *runtime.Stream
}

const (
	opAttention  = "attention"
	maxHeadDim   = 512
	attnMaxSplit = 1024
)

// Attention computes O = softmax(Scale·Q·Kᵀ + mask)·V for every sequence and
// query head, with f32 accumulation. Q and O are [batch, seqQ, headsQ,
// headDim], K and V [batch, seqKV, headsKV, headDim], headsQ a multiple of
// headsKV (query head h uses key/value head h/(headsQ/headsKV): MHA, GQA and
// MQA); each may be f32, f16 or bf16 and strided (the headDim stride must be
// 1). Every argument is checked before any memory is touched; an error names
// the argument and wraps ErrShape, ErrDType, ErrBounds, ErrAlias, ErrClosed
// or ErrArgument, and nothing is written.
func Attention(ctx context.Context, rt *runtime.Runtime, o, q, k, v AttnTensor, opt *AttentionOptions) error {
	args, s, err := attentionArgs(rt, o, q, k, v, opt)
	if err != nil {
		return err
	}
	return runPooled(ctx, rt, s, engine.OpAttention.Name(), args, &attentionPool)
}

// ExplainAttention says which kernel Attention would select for these
// arguments and why each candidate was taken or rejected.
func ExplainAttention(rt *runtime.Runtime, o, q, k, v AttnTensor, opt *AttentionOptions) (Explanation, error) {
	args, _, err := attentionArgs(rt, o, q, k, v, opt)
	if err != nil {
		return Explanation{}, err
	}
	return explain(rt, engine.OpAttention.Name(), args)
}

// attentionArgs validates an attention call and returns the runtime's
// argument struct and the stream, without launching.
func attentionArgs(rt *runtime.Runtime, o, q, k, v AttnTensor, opt *AttentionOptions) (*engine.AttentionArgs, *runtime.Stream, error) {
	var op AttentionOptions
	if opt != nil {
		op = *opt
	}
	if err := checkRuntime(rt, op.Stream, opAttention); err != nil {
		return nil, nil, err
	}
	qv, err := checkAttnView(rt, opAttention, "q", q)
	if err != nil {
		return nil, nil, err
	}
	kv, err := checkAttnView(rt, opAttention, "k", k)
	if err != nil {
		return nil, nil, err
	}
	vv, err := checkAttnView(rt, opAttention, "v", v)
	if err != nil {
		return nil, nil, err
	}
	ov, err := checkAttnView(rt, opAttention, "o", o)
	if err != nil {
		return nil, nil, err
	}
	if err := checkHeads(opAttention, qv, kv.Heads, kv.HeadDim, "k"); err != nil {
		return nil, nil, err
	}
	if vv.Heads != kv.Heads || vv.HeadDim != kv.HeadDim || vv.Seq != kv.Seq || vv.Batch != kv.Batch {
		return nil, nil, tile.Errorf(ErrShape, opAttention, "v", "v is %s, k is %s; they must agree", dims(vv), dims(kv))
	}
	if ov.Heads != qv.Heads || ov.HeadDim != qv.HeadDim || ov.Seq != qv.Seq || ov.Batch != qv.Batch {
		return nil, nil, tile.Errorf(ErrShape, opAttention, "o", "o is %s, q is %s; they must agree", dims(ov), dims(qv))
	}
	args, _ := attentionPool.get()
	*args = engine.AttentionArgs{
		HeadsQ: qv.Heads, HeadsKV: kv.Heads, HeadDim: qv.HeadDim,
		Q: qv, K: kv, V: vv, O: ov,
	}
	switch {
	case op.CuSeqQ == nil && op.CuSeqKV == nil:
		if kv.Batch != qv.Batch {
			return nil, nil, tile.Errorf(ErrShape, opAttention, "k", "batch %d, q has batch %d", kv.Batch, qv.Batch)
		}
		args.Batch, args.SeqQ, args.SeqKV = qv.Batch, qv.Seq, kv.Seq
	case op.CuSeqQ == nil:
		return nil, nil, tile.Errorf(ErrArgument, opAttention, "CuSeqQ", "CuSeqKV is set but CuSeqQ is nil; varlen needs both")
	case op.CuSeqKV == nil:
		return nil, nil, tile.Errorf(ErrArgument, opAttention, "CuSeqKV", "CuSeqQ is set but CuSeqKV is nil; varlen needs both")
	default:
		if err := checkCuSeq("CuSeqQ", op.CuSeqQ, qv, "q"); err != nil {
			return nil, nil, err
		}
		if err := checkCuSeq("CuSeqKV", op.CuSeqKV, kv, "k"); err != nil {
			return nil, nil, err
		}
		if len(op.CuSeqKV) != len(op.CuSeqQ) {
			return nil, nil, tile.Errorf(ErrShape, opAttention, "CuSeqKV", "%d offsets, CuSeqQ has %d", len(op.CuSeqKV), len(op.CuSeqQ))
		}
		args.Batch = len(op.CuSeqQ) - 1
		args.CuSeqQ = append([]int(nil), op.CuSeqQ...)
		args.CuSeqKV = append([]int(nil), op.CuSeqKV...)
	}
	for _, in := range []struct {
		name string
		b    *engine.Buffer
	}{{"q", qv.Buf}, {"k", kv.Buf}, {"v", vv.Buf}} {
		if engine.Overlaps(ov.Buf, in.b) {
			return nil, nil, tile.Errorf(ErrAlias, opAttention, "o", "output shares its buffer with input %s", in.name)
		}
	}
	if err := attnOptions(rt, args, &op, []*engine.Buffer{qv.Buf, kv.Buf, vv.Buf, ov.Buf}); err != nil {
		return nil, nil, err
	}
	return args, op.Stream, nil
}

// checkHeads checks q against keys with headsKV heads of headDim.
// dimArg names the argument blamed for a head-dim mismatch.
func checkHeads(op string, q engine.AttnView, headsKV, headDim int, dimArg string) error {
	if q.HeadDim != headDim {
		return tile.Errorf(ErrShape, op, dimArg, "q has head dim %d, the keys %d", q.HeadDim, headDim)
	}
	if q.Heads%headsKV != 0 {
		return tile.Errorf(ErrShape, op, "q", "%d query heads are not a multiple of the %d key/value heads", q.Heads, headsKV)
	}
	return nil
}

func dims(v engine.AttnView) string {
	return fmt.Sprintf("[%d, %d, %d, %d]", v.Batch, v.Seq, v.Heads, v.HeadDim)
}

// checkCuSeq checks cumulative sequence lengths against the packed tensor t.
func checkCuSeq(name string, cu []int, t engine.AttnView, tname string) error {
	if len(cu) < 2 {
		return tile.Errorf(ErrShape, opAttention, name, "%d offsets; want batch+1 ≥ 2", len(cu))
	}
	if cu[0] != 0 {
		return tile.Errorf(ErrArgument, opAttention, name, "first offset is %d, want 0", cu[0])
	}
	for i := 1; i < len(cu); i++ {
		if cu[i] < cu[i-1] {
			return tile.Errorf(ErrArgument, opAttention, name, "offsets are not increasing: [%d] = %d after %d", i, cu[i], cu[i-1])
		}
	}
	if t.Batch != 1 {
		return tile.Errorf(ErrShape, opAttention, tname, "varlen %s must have a batch of 1 (or rank 3), has %d", tname, t.Batch)
	}
	if last := cu[len(cu)-1]; last > t.Seq {
		return tile.Errorf(ErrBounds, opAttention, name, "last offset %d exceeds the %d rows of %s", last, t.Seq, tname)
	}
	return nil
}

// attnOptions validates the options common to every attention call and
// fills args. bufs are the call's other buffers (for LSE aliasing).
func attnOptions(rt *runtime.Runtime, args *engine.AttentionArgs, op *AttentionOptions, bufs []*engine.Buffer) error {
	scale := op.Scale
	if scale == 0 {
		scale = float32(1 / math.Sqrt(float64(args.HeadDim)))
	}
	if isNonFinite(scale) {
		return tile.Errorf(ErrArgument, opAttention, "Scale", "%v is not finite", op.Scale)
	}
	if isNonFinite(op.SoftCap) || op.SoftCap < 0 {
		return tile.Errorf(ErrArgument, opAttention, "SoftCap", "%v; want a finite value ≥ 0 (0 is off)", op.SoftCap)
	}
	args.Scale, args.SoftCap, args.Causal = scale, op.SoftCap, op.Causal
	args.WindowLeft, args.WindowRight = -1, -1
	if w := op.Window; w != nil {
		if w.Left < -1 || w.Right < -1 {
			return tile.Errorf(ErrArgument, opAttention, "Window", "(%d, %d); each side must be ≥ 0, or −1 for unbounded", w.Left, w.Right)
		}
		args.WindowLeft, args.WindowRight = w.Left, w.Right
	}
	if op.KVSplits < 0 || op.KVSplits > attnMaxSplit {
		return tile.Errorf(ErrArgument, opAttention, "KVSplits", "%d; want 0 … %d", op.KVSplits, attnMaxSplit)
	}
	args.Splits = op.KVSplits
	if op.LSE != nil {
		if err := checkBuf(op.LSE, rt, opAttention, "LSE"); err != nil {
			return err
		}
		if op.LSE.DType() != tile.F32 {
			return tile.Errorf(ErrDType, opAttention, "LSE", "element type %v; want f32", op.LSE.DType())
		}
		rows := args.Batch * args.SeqQ
		if args.CuSeqQ != nil {
			rows = args.CuSeqQ[len(args.CuSeqQ)-1]
			args.LSEHeadStride = rows
		} else {
			args.LSEBatchStride, args.LSEHeadStride = args.HeadsQ*args.SeqQ, args.SeqQ
		}
		if want := rows * args.HeadsQ; op.LSE.Len() != want {
			return tile.Errorf(ErrShape, opAttention, "LSE", "%d elements; want %d (rows × query heads)", op.LSE.Len(), want)
		}
		for _, b := range bufs {
			if engine.Overlaps(ebuf(op.LSE), b) {
				return tile.Errorf(ErrAlias, opAttention, "LSE", "LSE shares a buffer with another argument")
			}
		}
		args.LSE = ebuf(op.LSE)
	}
	return nil
}

// checkAttnView validates a 3-D or 4-D view and resolves it.
func checkAttnView(rt *runtime.Runtime, op, name string, t AttnTensor) (engine.AttnView, error) {
	var v engine.AttnView
	if err := checkBuf(t.Buf, rt, op, name); err != nil {
		return v, err
	}
	dt := t.Buf.DType()
	if dt != tile.F32 && dt != tile.F16 && dt != tile.BF16 {
		return v, tile.Errorf(ErrDType, op, name, "element type %v; want f32, f16 or bf16", dt)
	}
	rank := len(t.Shape)
	if rank != 3 && rank != 4 {
		return v, tile.Errorf(ErrShape, op, name, "rank %d; want [batch, seq, heads, headDim] or [seq, heads, headDim]", rank)
	}
	desc := tile.Tensor{DType: dt, Shape: t.Shape, Strides: t.Strides}
	if err := desc.Validate(op, name); err != nil {
		return v, err
	}
	if desc.Stride(rank-1) != 1 && t.Shape[rank-1] > 1 {
		return v, tile.Errorf(ErrShape, op, name, "headDim stride is %d; it must be 1", desc.Stride(rank-1))
	}
	if t.Offset < 0 {
		return v, tile.Errorf(ErrBounds, op, name, "negative offset %d", t.Offset)
	}
	span, ok := desc.CheckedSpan()
	if ok {
		span, ok = tile.AddSize(span, t.Offset)
	}
	if !ok || span > t.Buf.Len() {
		return v, tile.Errorf(ErrBounds, op, name, "view (offset %d, shape %v, strides %v) reaches past the %d elements of its buffer", t.Offset, t.Shape, t.Strides, t.Buf.Len())
	}
	s := t.Shape
	v = engine.AttnView{Buf: ebuf(t.Buf), Offset: t.Offset, Batch: 1}
	if rank == 4 {
		v.Batch, v.BatchStride = s[0], desc.Stride(0)
	}
	v.Seq, v.Heads, v.HeadDim = s[rank-3], s[rank-2], s[rank-1]
	v.SeqStride, v.HeadStride = desc.Stride(rank-3), desc.Stride(rank-2)
	if v.HeadDim > maxHeadDim {
		return v, tile.Errorf(ErrShape, op, name, "head dim %d exceeds %d", v.HeadDim, maxHeadDim)
	}
	return v, nil
}

// AttentionPlan validates an Attention call and selects its kernel once,
// without launching it: the returned Call runs it (Call.Run) and explains
// the choice (Call.Explain).
func AttentionPlan(rt *runtime.Runtime, o, q, k, v AttnTensor, opt *AttentionOptions) (*Call, error) {
	args, s, err := attentionArgs(rt, o, q, k, v, opt)
	return newCall(rt, s, engine.OpAttention.Name(), args, err)
}
