package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/tcrt-go/tcrt/kernels/mma"
	"github.com/tcrt-go/tcrt/tile"
)

// The PTX tensor-core matmul of kernels/mma, for every CUDA device from
// sm_80 on. Its preference (150) is below the hand-scheduled SASS matmul's
// (200), so on sm_86..sm_89 it runs the calls that kernel does not support
// (K not a multiple of 8, unpadded rows), and on every other GPU from
// sm_80 on (A100, H100/H200, sm_100+ through the PTX) it runs matmul
// instead of the host fallback. The tile and split-K rule is
// mma.ChooseTile / mma.ChooseSplit (documented there and in
// docs/ptx-mma.md). Unverified on a GPU: no run has loaded this module.
//
// mmaMatMulSupports accepts a call when A and B are both f16, bf16, e4m3
// or e5m2 (float8 converted to f16 as it is copied), either transposed; D
// is f32, f16 or bf16 and C (read when Beta != 0) has D's type; the bias
// is nil or f32; float8 scales nil, 1 or M (A) / N (B) f32 values; lda and ldb,
// the A and B offsets and (Batch > 1) batch strides are multiples of 8
// elements (16-byte cp.async copies; allocations are 256-byte aligned);
// and the matrices fit the kernels' 32-bit element offsets (mma.Check).
// M, N and K are otherwise free: edges are zero-filled and guarded.
func mmaMatMulSupports(a *MatMulArgs) error {
	p, err := mmaMatMul(a, nil)
	if err != nil {
		return err
	}
	for _, m := range []Matrix{a.A, a.B} {
		if a.Batch > 1 && m.BatchStride%8 != 0 {
			return fmt.Errorf("batch strides %d, %d: need multiples of 8 elements (16-byte copies)", a.A.BatchStride, a.B.BatchStride)
		}
	}
	return mma.Check(&p)
}

// mmaMatMul converts batch b of a call into the plan's values; with
// addr nil the addresses are the operands' byte offsets (for Supports,
// which assumes 256-byte aligned allocations).
func mmaMatMul(a *MatMulArgs, addr func(Matrix) (uint64, error)) (mma.MatMul, error) {
	ta, tb, td := a.DTypes()
	var p mma.MatMul
	if ta != tb || !slices.Contains(mma.Inputs(), ta) {
		return p, fmt.Errorf("needs A and B both f16, bf16, e4m3 or e5m2, have %v and %v", ta, tb)
	}
	if mma.OutCode(td) < 0 {
		return p, fmt.Errorf("output element type %v not supported (f32, f16, bf16)", td)
	}
	if a.Beta != 0 && a.C.Buf != nil && a.C.Buf.DType() != td {
		return p, fmt.Errorf("c must have D's element type %v, has %v", td, a.C.Buf.DType())
	}
	if a.Bias != nil && a.Bias.DType() != tile.F32 {
		return p, fmt.Errorf("bias must be f32, is %v", a.Bias.DType())
	}
	fp8 := tile.IsFloat8(ta)
	modes := [2]mma.ScaleMode{}
	for i, sc := range []struct {
		b    *Buffer
		n    int
		what string
	}{{a.ScaleA, a.M, "M"}, {a.ScaleB, a.N, "N"}} {
		switch {
		case sc.b == nil:
		case !fp8:
			return p, fmt.Errorf("scales need float8 operands")
		case sc.b.DType() != tile.F32 || (sc.b.Len() != 1 && sc.b.Len() != sc.n):
			return p, fmt.Errorf("scale %c: needs 1 or %s f32 values, has %d %v", "AB"[i], sc.what, sc.b.Len(), sc.b.DType())
		case sc.b.Len() == 1:
			modes[i] = mma.ScaleTensor
		default:
			modes[i] = mma.ScaleVector
		}
	}
	if !a.Act.Valid() {
		return p, fmt.Errorf("activation %v not supported", a.Act)
	}
	p = mma.MatMul{M: a.M, N: a.N, K: a.K, In: ta, Out: td, TransA: a.A.Trans, TransB: a.B.Trans,
		LDA: a.A.LD, LDB: a.B.LD, LDC: a.C.LD, LDD: a.D.LD, Alpha: a.Alpha, Beta: a.Beta, Act: a.Act,
		ScaleAMode: modes[0], ScaleBMode: modes[1]}
	if addr == nil {
		addr = func(m Matrix) (uint64, error) {
			if m.Buf == nil {
				return 0, nil
			}
			return uint64(m.Offset * m.Buf.DType().Size()), nil
		}
	}
	var err error
	for _, x := range []struct {
		dst *uint64
		m   Matrix
	}{{&p.A, a.A}, {&p.B, a.B}, {&p.C, a.C}, {&p.D, a.D}} {
		if *x.dst, err = addr(x.m); err != nil {
			return p, err
		}
	}
	if a.C.Buf == nil {
		p.Beta, p.C, p.LDC = 0, 0, 0
	}
	for _, sc := range []struct {
		dst *uint64
		b   *Buffer
	}{{&p.ScaleA, a.ScaleA}, {&p.ScaleB, a.ScaleB}} {
		if sc.b != nil {
			if *sc.dst, err = addr(Matrix{Buf: sc.b}); err != nil {
				return p, err
			}
			if *sc.dst == 0 {
				*sc.dst = 4 // Supports' offsets: any aligned non-zero address
			}
		}
	}
	return p, nil
}

func mmaMatMulLaunch(l *Launch, a *MatMulArgs) error {
	d := l.Runtime.Device()
	dev := mma.Device{SM: d.SM(), SMs: d.SMs, SharedOptin: d.SharedPerBlockOptin}
	var bias uint64
	if a.Bias != nil {
		var err error
		if bias, err = DevicePtr(a.Bias); err != nil {
			return err
		}
	}
	m := mma.Module()
	var gs []*GPULaunch
	for b := 0; b < a.Batch; b++ {
		p, err := mmaMatMul(a, func(mx Matrix) (uint64, error) {
			if mx.Buf == nil {
				return 0, nil
			}
			base, err := DevicePtr(mx.Buf)
			return base + uint64((mx.Offset+b*mx.BatchStride)*mx.Buf.DType().Size()), err
		})
		if err != nil {
			return err
		}
		p.Bias = bias
		plan, err := mma.PlanMatMul(dev, p)
		if err != nil {
			return err
		}
		for _, g := range plan.Launches {
			gs = append(gs, &GPULaunch{Module: m, Func: g.Func, Grid: g.Grid, Block: g.Block,
				SharedBytes: g.SharedBytes, Params: g.Params})
		}
	}
	if a.ScaleA == nil && a.ScaleB == nil {
		for _, g := range gs {
			if err := LaunchGPU(l.Stream, g); err != nil {
				return err
			}
		}
		return nil
	}
	// Scale values are device data the PTX does not check: a host task
	// after the stream's earlier work reads them and checks them as the CPU
	// kernels do (fallback.CheckScales), and only then issues the launches,
	// so a bad scale is the CPU's ErrArgument with D untouched.
	return LaunchGPUAfter(l.Stream, gs, func() error {
		for _, sc := range []struct {
			b   *Buffer
			arg string
		}{{a.ScaleA, "ScaleA"}, {a.ScaleB, "ScaleB"}} {
			if sc.b != nil {
				if _, err := f8ReadScales(sc.b, OpMatMul.name, sc.arg); err != nil {
					return err
				}
			}
		}
		return nil
	}, nil)
}

func init() {
	RegisterKernel(OpMatMul, TypedKernel[MatMulArgs]{
		Name:       "ptx.matmul.mma",
		Arch:       Arch{ISA: ISAPTX, MinSM: 80, Module: mma.Module()},
		Preference: 150,
		Doc:        "PTX mma.sync m16n8k16 (kernels/mma): cp.async ring, ldmatrix, 256x128/128x128/128x64/64x128 tiles, NN/NT/TN/TT, split-K (unverified on a GPU)",
		Supports:   mmaMatMulSupports,
		Launch: func(_ context.Context, l *Launch, a *MatMulArgs) error {
			return mmaMatMulLaunch(l, a)
		},
	})
}

// mmaAttention converts a call into kernels/mma's plan values; with addr
// nil the addresses are byte offsets (for Supports). The error says why
// the kernels cannot run it: Q, K, V and O all f16 or all bf16, head
// dimension 64, 128 or 256, strides and offsets multiples
// of 8 elements, a paged cache's page size a power of two
// (mma.CheckAttention).
func mmaAttention(a *AttentionArgs, addr func(AttnView) (uint64, error)) (mma.Attention, error) {
	var p mma.Attention
	t := a.Q.Buf.DType()
	for _, v := range []AttnView{a.K, a.V, a.O} {
		if v.Buf.DType() != t {
			return p, fmt.Errorf("needs Q, K, V and O of one element type, have %v and %v", t, v.Buf.DType())
		}
	}
	if !slices.Contains(mma.AttnInputs(), t) {
		return p, fmt.Errorf("element type %v not supported (f16, bf16)", t)
	}
	p.In = t
	if addr == nil {
		addr = func(v AttnView) (uint64, error) { return uint64(v.Offset * v.Buf.DType().Size()), nil }
	}
	p.D, p.Batch, p.HeadsQ, p.HeadsKV, p.SeqQ, p.SeqKV = a.HeadDim, a.Batch, a.HeadsQ, a.HeadsKV, a.SeqQ, a.SeqKV
	st := func(v AttnView) [3]int { return [3]int{v.BatchStride, v.SeqStride, v.HeadStride} }
	p.QStrides, p.KStrides, p.VStrides, p.OStrides = st(a.Q), st(a.K), st(a.V), st(a.O)
	var err error
	for _, x := range []struct {
		dst *uint64
		v   AttnView
	}{{&p.Q, a.Q}, {&p.K, a.K}, {&p.V, a.V}, {&p.O, a.O}} {
		if *x.dst, err = addr(x.v); err != nil {
			return p, err
		}
	}
	p.LSEBatchStride, p.LSEHeadStride = a.LSEBatchStride, a.LSEHeadStride
	p.CuSeqQ, p.CuSeqKV, p.SeqLensKV = a.CuSeqQ, a.CuSeqKV, a.SeqLensKV
	p.Scale, p.SoftCap, p.Causal, p.WindowLeft, p.WindowRight = a.Scale, a.SoftCap, a.Causal, a.WindowLeft, a.WindowRight
	p.PageSize, p.BlocksPerSeq, p.Splits = a.PageSize, a.BlocksPerSeq, a.Splits
	return p, mma.CheckAttention(&p)
}

func mmaAttentionSupports(a *AttentionArgs) error {
	_, err := mmaAttention(a, nil)
	return err
}

// mmaAttentionLaunch launches the plan. A paged call first copies the
// block table and key counts into device buffers (and allocates the
// split-KV workspace); those are released by a stream task after the
// kernels.
func mmaAttentionLaunch(ctx context.Context, l *Launch, a *AttentionArgs) (err error) {
	p, err := mmaAttention(a, func(v AttnView) (uint64, error) {
		base, err := DevicePtr(v.Buf)
		return base + uint64(v.Offset*v.Buf.DType().Size()), err
	})
	if err != nil {
		return err
	}
	if a.LSE != nil {
		if p.LSE, err = DevicePtr(a.LSE); err != nil {
			return err
		}
	}
	d := l.Runtime.Device()
	dev := mma.Device{SM: d.SM(), SMs: d.SMs, SharedOptin: d.SharedPerBlockOptin}
	// the block table, key counts and split-KV workspace: scratch memory
	// released by a stream task after the kernels (the runtime's buffers
	// may not be closed from stream work)
	tmp := &scratch{rt: l.Runtime}
	launched := false
	fail := func(err error) error {
		if launched { // a kernel already enqueued may use the temporaries
			return errors.Join(err, l.Stream.Enqueue(tmp.release))
		}
		return errors.Join(err, tmp.release())
	}
	if a.PageSize > 0 {
		words := func(n int, at func(i int) uint32) (uint64, error) {
			raw := make([]byte, 4*max(n, 1))
			for i := 0; i < n; i++ {
				binary.LittleEndian.PutUint32(raw[4*i:], at(i))
			}
			return tmp.upload(ctx, raw)
		}
		if p.Table, err = words(len(a.BlockTable), func(i int) uint32 { return uint32(a.BlockTable[i]) }); err != nil {
			return fail(err)
		}
		if p.Lens, err = words(a.Batch, func(i int) uint32 { return uint32(a.SeqLensKV[i]) }); err != nil {
			return fail(err)
		}
		splits, _ := mma.AttnSplits(dev, &p, a.Splits)
		p.Splits = splits
		if splits > 1 {
			ob, lb := mma.AttnWorkspace(&p, splits)
			if p.WsO, err = tmp.alloc(ob); err != nil {
				return fail(err)
			}
			if p.WsL, err = tmp.alloc(lb); err != nil {
				return fail(err)
			}
		}
	}
	ls, err := mma.PlanAttention(dev, p)
	if err != nil {
		return fail(err)
	}
	m := mma.Module()
	for _, g := range ls {
		if err := LaunchGPU(l.Stream, &GPULaunch{Module: m, Func: g.Func, Grid: g.Grid, Block: g.Block,
			SharedBytes: g.SharedBytes, Params: g.Params}); err != nil {
			return fail(err)
		}
		launched = true
	}
	if len(tmp.mems) > 0 {
		return l.Stream.Enqueue(tmp.release) // after the kernels: host tasks wait for the device
	}
	return nil
}

func init() {
	RegisterKernel(OpAttention, TypedKernel[AttentionArgs]{
		Name:       "ptx.attention.mma",
		Arch:       Arch{ISA: ISAPTX, MinSM: 80, Module: mma.Module()},
		Preference: 150,
		Doc:        "PTX FlashAttention-2 (kernels/mma): mma.sync m16n8k16, cp.async K/V double buffer, D 64/128/256, causal/window/soft-cap/GQA/LSE/varlen, paged decode with split-KV + combine (unverified on a GPU)",
		Supports:   mmaAttentionSupports,
		Launch:     mmaAttentionLaunch,
	})
}
