package engine

import (
	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/tile"
)

// The float8 quantisation ops.
var (
	OpQuantize   = Op[QuantizeArgs]{"quantize"}
	OpDequantize = Op[DequantizeArgs]{"dequantize"}
	OpAmax       = Op[AmaxArgs]{"amax"}
)

// Granularity is how a quantisation shares scales; see fallback.Granularity.
type Granularity = tile.Granularity

// QuantizeArgs is a validated quantisation: X (f32, f16 or bf16) viewed as
// Rows×Cols is encoded into Q (E4M3 or E5M2, same element count). Scales
// (f32, one per block) or, when Scales is nil and Given is set, the single
// Scale is the given scale; otherwise scales are computed from the amax with
// Margin and PowerOfTwo (the OCP rule for MX). ScaleInv and Amax are
// optional outputs. Kernels receive it typed
// (RegisterKernel).
type QuantizeArgs struct {
	X, Q       *Buffer
	Rows, Cols int
	Gran       Granularity
	Mode       tile.OverflowMode
	Given      bool
	Scale      float32
	Scales     *Buffer
	Margin     int
	PowerOfTwo bool
	ScaleInv   *Buffer
	Amax       *Buffer
}

// DequantizeArgs is a validated dequantisation of Q (E4M3 or E5M2) into Y
// (f32, f16 or bf16) with ScaleInv (nil: 1, per tensor only).
type DequantizeArgs struct {
	Q, Y       *Buffer
	Rows, Cols int
	Gran       Granularity
	ScaleInv   *Buffer
}

// AmaxArgs is a validated amax reduction of X into Out (f32, one value per
// block of Gran).
type AmaxArgs struct {
	X, Out     *Buffer
	Rows, Cols int
	Gran       Granularity
}

// HostQuantizeArgs converts a CPU-backend call into the fallback's form.
func HostQuantizeArgs(a *QuantizeArgs, threads int) *fallback.QuantizeArgs {
	h := &fallback.QuantizeArgs{
		Rows: a.Rows, Cols: a.Cols,
		XType: a.X.DType(), X: a.X.Host(), QType: a.Q.DType(), Q: a.Q.Host(),
		Gran: a.Gran, Mode: a.Mode, Margin: a.Margin, PowerOfTwo: a.PowerOfTwo, Threads: threads,
	}
	switch {
	case a.Scales != nil:
		h.Scales = fallback.F32s(a.Scales.Host())
	case a.Given:
		h.Scales = []float32{a.Scale}
	}
	if a.ScaleInv != nil {
		h.ScaleInv = a.ScaleInv.Host()
	}
	if a.Amax != nil {
		h.Amax = a.Amax.Host()
	}
	return h
}

// HostDequantizeArgs converts a CPU-backend call into the fallback's form.
func HostDequantizeArgs(a *DequantizeArgs, threads int) *fallback.DequantizeArgs {
	h := &fallback.DequantizeArgs{
		Rows: a.Rows, Cols: a.Cols, QType: a.Q.DType(), Q: a.Q.Host(),
		YType: a.Y.DType(), Y: a.Y.Host(), Gran: a.Gran, Threads: threads,
	}
	if a.ScaleInv != nil {
		h.ScaleInv = a.ScaleInv.Host()
	}
	return h
}

// HostAmaxArgs converts a CPU-backend call into the fallback's form.
func HostAmaxArgs(a *AmaxArgs, threads int) *fallback.AmaxArgs {
	return &fallback.AmaxArgs{Rows: a.Rows, Cols: a.Cols, XType: a.X.DType(), X: a.X.Host(), Gran: a.Gran, Out: a.Out.Host(), Threads: threads}
}

func simdDoc() string {
	if s := tile.Float8SIMD(); s != "" {
		return s + " codecs (chosen with cpuid)"
	}
	return "branch-free scalar codecs (no vector unit found by cpuid, or the CPU feature mask hides it)"
}

func init() {
	RegisterKernel(OpQuantize, TypedKernel[QuantizeArgs]{
		Name: "cpu.quantize.fast", Arch: Arch{ISA: ISACPU}, Preference: 100,
		Doc: "parallel, fused amax and encode, " + simdDoc(),
		Launch: CPUKernel(func(l *Launch, a *QuantizeArgs) error {
			return fallback.QuantizeFast(HostQuantizeArgs(a, l.Threads))
		}),
	})
	RegisterKernel(OpQuantize, TypedKernel[QuantizeArgs]{
		Name: "cpu.quantize.reference", Arch: Arch{ISA: ISACPU}, Preference: 0,
		Doc: "plain loops over the reference codec (the oracle); force it with TCRT_KERNEL=cpu.quantize.reference",
		Launch: CPUKernel(func(l *Launch, a *QuantizeArgs) error {
			return fallback.QuantizeRef(HostQuantizeArgs(a, l.Threads))
		}),
	})
	RegisterKernel(OpDequantize, TypedKernel[DequantizeArgs]{
		Name: "cpu.dequantize.fast", Arch: Arch{ISA: ISACPU}, Preference: 100,
		Doc: "parallel, " + simdDoc(),
		Launch: CPUKernel(func(l *Launch, a *DequantizeArgs) error {
			return fallback.DequantizeFast(HostDequantizeArgs(a, l.Threads))
		}),
	})
	RegisterKernel(OpDequantize, TypedKernel[DequantizeArgs]{
		Name: "cpu.dequantize.reference", Arch: Arch{ISA: ISACPU}, Preference: 0,
		Doc: "plain loops over the reference codec (the oracle)",
		Launch: CPUKernel(func(l *Launch, a *DequantizeArgs) error {
			return fallback.DequantizeRef(HostDequantizeArgs(a, l.Threads))
		}),
	})
	RegisterKernel(OpAmax, TypedKernel[AmaxArgs]{
		Name: "cpu.amax.fast", Arch: Arch{ISA: ISACPU}, Preference: 100,
		Doc: "parallel, " + simdDoc(),
		Launch: CPUKernel(func(l *Launch, a *AmaxArgs) error {
			fallback.AmaxFast(HostAmaxArgs(a, l.Threads))
			return nil
		}),
	})
	RegisterKernel(OpAmax, TypedKernel[AmaxArgs]{
		Name: "cpu.amax.reference", Arch: Arch{ISA: ISACPU}, Preference: 0,
		Doc: "plain loops (the oracle)",
		Launch: CPUKernel(func(l *Launch, a *AmaxArgs) error {
			fallback.AmaxRef(HostAmaxArgs(a, l.Threads))
			return nil
		}),
	})
}
