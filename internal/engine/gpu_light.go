package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/kernels/ptx"
	"github.com/tcrt-go/tcrt/tile"
)

// GPU kernels of the light ops (kernels/ptx, module Light): RMSNorm and
// AddRMSNorm (tcrt_rmsnorm, one block a row), SiLU and SiLU·mul
// (tcrt_silu_mul), and RoPE (tcrt_rope) with positions the host knows
// (Offset or per-sequence offsets: the host computes the cos/sin table as
// the CPU kernels do and uploads it). Supports takes every element type,
// stride and row count of these ops (grid.x bounds the rows of RMSNorm at
// 2^31−1); RoPE with a device position buffer, LayerNorm, GELU, softmax,
// sampling and pooling have no GPU kernel yet and run through the host
// fallback.

var lightTypeCode = map[tile.DType]uint32{tile.F32: ptx.LightF32, tile.F16: ptx.LightF16, tile.BF16: ptx.LightBF16}

func init() {
	arch := Arch{ISA: ISAPTX, MinSM: 80, Module: ptx.Light()}
	for _, op := range []Op[NormArgs]{OpRMSNorm, OpAddRMSNorm} {
		RegisterKernel(op, TypedKernel[NormArgs]{
			Name: "ptx." + op.name, Arch: arch, Preference: 100,
			Doc:      "PTX: one 256-thread block a row, two passes (residual added and stored in the first), warp-shuffle reduction, rsqrt.approx",
			Supports: gpuRMSNormSupports,
			Launch:   gpuRMSNormLaunch,
		})
	}
	RegisterKernel(OpRoPE, TypedKernel[RoPEArgs]{
		Name: "ptx.rope", Arch: arch, Preference: 100,
		Doc:      "PTX: one thread a rotated pair (or passed-through element), the host's cos/sin table uploaded per call",
		Supports: gpuRoPESupports,
		Launch:   gpuRoPELaunch,
	})
	RegisterKernel(OpActivation, TypedKernel[ActArgs]{
		Name: "ptx.silu_mul", Arch: arch, Preference: 100,
		Doc:      "PTX: grid-stride SiLU (times the gate), ex2.approx and div.approx",
		Supports: gpuSiluSupports,
		Launch:   gpuSiluLaunch,
	})
}

func gpuRMSNormSupports(a *NormArgs) error {
	if a.Kind != fallback.NormRMS {
		return fmt.Errorf("layer normalisation has no GPU kernel")
	}
	if a.X.Rows > 1<<31-1 {
		return fmt.Errorf("%d rows exceed the grid", a.X.Rows)
	}
	return nil
}

func gpuSiluSupports(a *ActArgs) error {
	if a.Func != fallback.FnSiLU {
		return fmt.Errorf("%v has no GPU kernel (SiLU only)", a.Func)
	}
	return nil
}

// rowPtr is the device address of a row view's first element (0 for no
// view or no rows).
func rowPtr(m *Matrix) (uint64, error) {
	if m == nil || m.Rows == 0 {
		return 0, nil
	}
	p, err := DevicePtr(m.Buf)
	if err != nil {
		return 0, err
	}
	return p + uint64(m.Offset*m.Buf.DType().Size()), nil
}

func gpuRMSNormLaunch(_ context.Context, l *Launch, a *NormArgs) error {
	if a.X.Rows == 0 {
		return nil
	}
	px, err := rowPtr(&a.X)
	if err != nil {
		return err
	}
	py, err := rowPtr(&a.Y)
	if err != nil {
		return err
	}
	pr, err := rowPtr(a.Residual)
	if err != nil {
		return err
	}
	var pw uint64
	var hasRes, gemma, hasW uint32
	tr, ldr := ptx.LightF32, 0
	if a.Residual != nil {
		hasRes, tr, ldr = 1, lightTypeCode[a.Residual.Buf.DType()], a.Residual.LD
	}
	if a.Gemma {
		gemma = 1
	}
	tw := ptx.LightF32
	if a.Weight != nil {
		if pw, err = DevicePtr(a.Weight); err != nil {
			return err
		}
		hasW, tw = 1, lightTypeCode[a.Weight.DType()]
	}
	return LaunchGPU(l.Stream, &GPULaunch{
		Module: ptx.Light(), Func: ptx.LightRMSNorm,
		Grid: [3]int{a.X.Rows, 1, 1}, Block: [3]int{ptx.LightNormBlock, 1, 1},
		Params: []uint64{ptx.Ptr(px), ptx.Ptr(pr), ptx.Ptr(py), ptx.Ptr(pw),
			ptx.U64(uint64(a.X.Rows)), ptx.U64(uint64(a.X.Cols)), ptx.U64(uint64(a.X.LD)), ptx.U64(uint64(ldr)), ptx.U64(uint64(a.Y.LD)),
			ptx.F32(a.Eps), ptx.U32(hasRes), ptx.U32(gemma), ptx.U32(hasW),
			ptx.U32(lightTypeCode[a.X.Buf.DType()]), ptx.U32(tr), ptx.U32(lightTypeCode[a.Y.Buf.DType()]), ptx.U32(tw)},
	})
}

// rowGrid is the grid of tcrt_silu_mul and tcrt_rope: 256 threads a block,
// x blocks over n work items of a row (a head's for RoPE; at most 64: the
// loop strides), one y block a row up to 65535 (the kernels stride over
// the rest).
func rowGrid(rows, n int) [3]int {
	return [3]int{max(1, min(64, (n+255)/256)), max(1, min(rows, 65535)), 1}
}

func gpuSiluLaunch(_ context.Context, l *Launch, a *ActArgs) error {
	if a.A.Rows == 0 {
		return nil
	}
	pa, err := rowPtr(&a.A)
	if err != nil {
		return err
	}
	py, err := rowPtr(&a.Y)
	if err != nil {
		return err
	}
	pb, err := rowPtr(a.B)
	if err != nil {
		return err
	}
	tb, ldb := ptx.LightF32, 0
	if a.B != nil {
		tb, ldb = lightTypeCode[a.B.Buf.DType()], a.B.LD
	}
	return LaunchGPU(l.Stream, &GPULaunch{
		Module: ptx.Light(), Func: ptx.LightSiluMul,
		Grid: rowGrid(a.A.Rows, a.A.Cols), Block: [3]int{256, 1, 1},
		Params: []uint64{ptx.Ptr(pa), ptx.Ptr(pb), ptx.Ptr(py),
			ptx.U64(uint64(a.A.Rows)), ptx.U64(uint64(a.A.Cols)), ptx.U64(uint64(a.A.LD)), ptx.U64(uint64(ldb)), ptx.U64(uint64(a.Y.LD)),
			ptx.U32(lightTypeCode[a.A.Buf.DType()]), ptx.U32(tb), ptx.U32(lightTypeCode[a.Y.Buf.DType()])},
	})
}

func gpuRoPESupports(a *RoPEArgs) error {
	if a.Positions != nil {
		return fmt.Errorf("positions in a device buffer: the kernel takes a host-computed cos/sin table (give Offset or SeqLens/SeqOffsets)")
	}
	return nil
}

func gpuRoPELaunch(ctx context.Context, l *Launch, a *RoPEArgs) error {
	if a.Q.Rows == 0 {
		return nil
	}
	h := ropeTable(a) // device buffers: no host views of q and k
	if err := fallback.CheckPositions(OpRoPE.name, h.Pos, h.MaxPosition); err != nil {
		return err
	}
	cs := fallback.RoPECosSin(h)
	tmp := &scratch{rt: l.Runtime}
	pcs, err := tmp.upload(ctx, asBytes(cs))
	if err != nil {
		return errors.Join(err, tmp.release())
	}
	launched := false
	do := func(x, y *Matrix, heads int) error {
		px, err := rowPtr(x)
		if err != nil {
			return err
		}
		py, err := rowPtr(y)
		if err != nil {
			return err
		}
		inter := uint32(0)
		if a.Interleaved {
			inter = 1
		}
		n := a.HeadDim - a.RotaryDim/2 // threads a head
		err = LaunchGPU(l.Stream, &GPULaunch{
			Module: ptx.Light(), Func: ptx.LightRoPE,
			Grid: rowGrid(x.Rows, n), Block: [3]int{256, 1, 1},
			Params: []uint64{ptx.Ptr(px), ptx.Ptr(py), ptx.Ptr(pcs), ptx.U64(uint64(x.Rows)), ptx.U64(uint64(heads)),
				ptx.U64(uint64(a.HeadDim)), ptx.U64(uint64(a.RotaryDim)), ptx.U64(uint64(x.LD)), ptx.U64(uint64(y.LD)),
				ptx.U32(lightTypeCode[x.Buf.DType()]), ptx.U32(lightTypeCode[y.Buf.DType()]), ptx.U32(inter)},
		})
		launched = launched || err == nil
		return err
	}
	err = do(&a.Q, &a.QOut, a.HeadsQ)
	if err == nil && a.K != nil {
		err = do(a.K, a.KOut, a.HeadsK)
	}
	if !launched {
		return errors.Join(err, tmp.release())
	}
	return errors.Join(err, l.Stream.Enqueue(tmp.release))
}
