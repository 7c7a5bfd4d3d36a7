package engine

import (
	"context"
	"fmt"
	"math"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/kernels/sm86"
	"github.com/tcrt-go/tcrt/tile"
)

// The hand-scheduled SASS kernels of package kernels/sm86, registered for
// the CUDA backend on sm_86..sm_89 and launched with LaunchGPU. They are
// registered in every build (this file has no build tag) so that Explain
// on the CPU backend lists them and says why they are not chosen; on a
// runtime without GPU streams they can never run.
//
// NOT VERIFIED on a GPU: the cubins are checked with nvdisasm, cuobjdump,
// the schedule checker and the functional simulator only.

// Registry names of the SASS kernels.
const (
	sassQuantizeSM89 = "sass.quantize.f8.sm89"
	sassQuantizeSM86 = "sass.quantize.f8.sm86"
	sassScatterAdd   = "sass.mscatter.add.f32"
)

// sassQuantizeSupports accepts what the kernels compute: an f32 tensor
// encoded as E4M3 or E5M2 with one given scale (QuantizeArgs.Scale),
// saturating, without ScaleInv or Amax outputs, at most 2^31−4 elements,
// the source 16-byte and the destination 4-byte aligned. The rest (scales
// from the amax, per-row or block scales, a Scales buffer, non-saturating
// overflow, f16/bf16 sources) goes to other kernels or the host fallback.
func sassQuantizeSupports(a *QuantizeArgs) error {
	switch {
	case a.X == nil || a.Q == nil:
		return fmt.Errorf("needs X and Q")
	case a.X.DType() != tile.F32:
		return fmt.Errorf("source is %v; the SASS kernel reads f32 only", a.X.DType())
	case sm86.QuantizeKernel(a.Q.DType()) == "":
		return fmt.Errorf("destination is %v, not a float8 format", a.Q.DType())
	case a.Gran != fallback.PerTensor:
		return fmt.Errorf("%v scaling; the SASS kernel has one scale per tensor", a.Gran)
	case !a.Given || a.Scales != nil:
		return fmt.Errorf("the SASS kernel takes a given scalar scale, not a computed or buffered one")
	case a.Mode != tile.Saturate:
		return fmt.Errorf("%v overflow; the SASS kernel saturates", a.Mode)
	case a.ScaleInv != nil || a.Amax != nil:
		return fmt.Errorf("ScaleInv/Amax outputs are not written by the SASS kernel")
	case !(a.Scale > 0) || math.IsInf(float64(a.Scale), 0):
		return fmt.Errorf("scale %v; it must be positive and finite", a.Scale)
	case int64(a.Rows)*int64(a.Cols) > math.MaxInt32-3:
		return fmt.Errorf("%d elements; the SASS kernel indexes with 32 bits", int64(a.Rows)*int64(a.Cols))
	}
	src, err1 := DevicePtr(a.X)
	dst, err2 := DevicePtr(a.Q)
	switch {
	case err1 != nil || err2 != nil:
		return fmt.Errorf("operands without device addresses")
	case src%16 != 0 || dst%4 != 0:
		return fmt.Errorf("source at %#x or destination at %#x not 16- and 4-byte aligned", src, dst)
	}
	return nil
}

func sassQuantizeLaunch(arch int) func(context.Context, *Launch, *QuantizeArgs) error {
	return func(ctx context.Context, l *Launch, a *QuantizeArgs) error {
		m := sm86.ModuleFor(arch)
		if m == nil {
			return fmt.Errorf("tcrt: %s: no sm_%d cubin is embedded: %w", OpQuantize, arch, ErrUnsupported)
		}
		src, err := DevicePtr(a.X)
		if err != nil {
			return err
		}
		dst, err := DevicePtr(a.Q)
		if err != nil {
			return err
		}
		n := a.Rows * a.Cols
		return LaunchGPU(l.Stream, &GPULaunch{Module: m, Func: sm86.QuantizeKernel(a.Q.DType()),
			Grid: [3]int{sm86.QuantGrid(n)}, Block: [3]int{sm86.QuantBlock},
			Params: []uint64{dst, src, uint64(n), uint64(math.Float32bits(a.Scale))}})
	}
}

// denseRowMajor reports whether a tile's valid region is contiguous from
// the buffer's start: row-major with no padded columns.
func denseRowMajor(t tile.Tile) bool {
	r := t.Resolved()
	return r.Layout == tile.RowMajor && r.Cols == r.ValidCols
}

// sassScatterSupports accepts the subset the kernel covers: an unordered
// f32 add (Op ScatterAdd, Deterministic false), s32 or u32 indices,
// out-of-bounds lanes dropped (OOBSkip) or clamped (OOBClamp), source and
// index tiles row-major without padded columns, under 2^31 lanes and 2^32
// memory elements. OOBError (which needs a preflight of every index before
// any write), OOBWrap, deterministic order, other types and reductions go
// to the host fallback.
func sassScatterSupports(a *ScatterArgs) error {
	src, idx := a.Src.Desc.Resolved(), a.Idx.Desc.Resolved()
	switch {
	case a.Op != fallback.ScatterAdd:
		return fmt.Errorf("%v; the SASS kernel adds", a.Op)
	case a.Deterministic:
		return fmt.Errorf("deterministic order; the SASS kernel's RED updates are unordered")
	case src.DType != tile.F32 || a.Mem == nil || a.Mem.DType() != tile.F32:
		return fmt.Errorf("%v values; the SASS kernel adds f32", src.DType)
	case idx.DType != tile.S32 && idx.DType != tile.U32:
		return fmt.Errorf("%v indices; the SASS kernel reads s32 or u32", idx.DType)
	case a.OOB != tile.OOBSkip && a.OOB != tile.OOBClamp:
		return fmt.Errorf("out-of-bounds policy %v; the SASS kernel skips or clamps (OOBError needs a preflight of all indices before any write)", a.OOB)
	case !denseRowMajor(src) || !denseRowMajor(idx):
		return fmt.Errorf("padded or column-major tiles")
	case a.MemRows < 1 || a.MemRows > math.MaxInt32:
		return fmt.Errorf("%d memory rows", a.MemRows)
	}
	lanes := int64(src.ValidRows) * int64(src.ValidCols)
	cols := int64(1)
	if a.Mode == fallback.IndexRows {
		cols = int64(src.ValidCols)
	}
	if lanes >= math.MaxInt32 || int64(a.MemRows)*cols > math.MaxUint32 {
		return fmt.Errorf("%d lanes into %d elements; the SASS kernel indexes with 32 bits", lanes, int64(a.MemRows)*cols)
	}
	return nil
}

func sassScatterLaunch(ctx context.Context, l *Launch, a *ScatterArgs) error {
	m := sm86.ModuleFor(86)
	if m == nil {
		return fmt.Errorf("tcrt: %s: no sm_86 cubin is embedded: %w", OpScatter, ErrUnsupported)
	}
	var ptrs [3]uint64
	for k, b := range []*Buffer{a.Mem, a.Idx.Buf, a.Src.Buf} {
		p, err := DevicePtr(b)
		if err != nil {
			return err
		}
		ptrs[k] = p
	}
	src := a.Src.Desc.Resolved()
	lanes := src.ValidRows * src.ValidCols
	cols := 1
	if a.Mode == fallback.IndexRows {
		cols = src.ValidCols
	}
	return LaunchGPU(l.Stream, &GPULaunch{Module: m, Func: sm86.ScatterAddF32,
		Grid: [3]int{sm86.ScatterGrid(lanes)}, Block: [3]int{sm86.ScatterBlock},
		Params: sm86.ScatterParams(ptrs[0], ptrs[1], ptrs[2], uint32(lanes), uint32(cols), uint32(a.MemRows),
			a.Idx.Desc.DType == tile.S32, a.OOB == tile.OOBSkip)})
}

func init() {
	RegisterKernel(OpQuantize, TypedKernel[QuantizeArgs]{
		Name: sassQuantizeSM89, Arch: Arch{ISA: ISASASS, MinSM: 89, MaxSM: 89, Module: sm86.ModuleFor(89)}, Preference: 210,
		Doc:      "hand-scheduled SASS (kernels/sm86, sm_89 cubin): F2FP.SATFINITE float8 converts, four elements a thread; unverified on a GPU",
		Supports: func(a *QuantizeArgs) error { return sassQuantizeSupportsArch(89, a) },
		Launch:   sassQuantizeLaunch(89),
	})
	RegisterKernel(OpQuantize, TypedKernel[QuantizeArgs]{
		Name: sassQuantizeSM86, Arch: Arch{ISA: ISASASS, MinSM: 86, MaxSM: 89, Module: sm86.ModuleFor(86)}, Preference: 200,
		Doc:      "hand-scheduled SASS (kernels/sm86, sm_86 cubin): integer float8 encoder, four elements a thread; unverified on a GPU",
		Supports: func(a *QuantizeArgs) error { return sassQuantizeSupportsArch(86, a) },
		Launch:   sassQuantizeLaunch(86),
	})
	RegisterKernel(OpScatter, TypedKernel[ScatterArgs]{
		Name: sassScatterAdd, Arch: Arch{ISA: ISASASS, MinSM: 86, MaxSM: 89, Module: sm86.ModuleFor(86)}, Preference: 200,
		Doc:      "hand-scheduled SASS (kernels/sm86): one RED.E.ADD.F32.FTZ.RN per lane, unordered, subnormals flushed; unverified on a GPU",
		Supports: sassScatterSupports,
		Launch:   sassScatterLaunch,
	})
}

// sassQuantizeSupportsArch is sassQuantizeSupports, after checking that
// the sm_<arch> cubin is embedded.
func sassQuantizeSupportsArch(arch int, a *QuantizeArgs) error {
	if sm86.ModuleFor(arch) == nil {
		return fmt.Errorf("no sm_%d cubin is embedded (%v)", arch, sm86.ErrNotEncodable)
	}
	return sassQuantizeSupports(a)
}
