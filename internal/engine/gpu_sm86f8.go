package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/kernels/sm86"
	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/tile"
)

// The hand-scheduled SM86/SM89 float8 kernels of kernels/sm86 beyond the
// per-tensor quantiser (sass_kernels.go): amax reductions, dequantisation
// and MX and block-scaled (per tensor, row, column, 1×128, 128×128)
// quantisation of any shape (an encoder loading a multiplier per element
// when a group of four spans blocks)
// with the scales computed on the device or given (a scales tensor checked
// on the host before launch, as on the PTX path), f16/bf16 input widened
// exactly on the device first, the Amax output recorded by the amax
// kernels, registered for every SM86/SM89 device, real or
// simulated. Supports is
// each plan's rule (sm86.AmaxSupports, DequantSupports,
// QuantizeMXSupports); the rest goes to the PTX kernels or the host
// fallback. Dequantisation checks its float scales on the device first
// (fallback.CheckScales' rule) and, on a bad one, returns the CPU's error
// with Y unchanged. Unverified on a GPU.

// sm86f8Launches issues ls from m on s.
func sm86f8Launches(s *Stream, m *backend.Module, ls []sm86.Launch) error {
	for _, g := range sgGPULaunches(m, ls) {
		if err := LaunchGPU(s, g); err != nil {
			return err
		}
	}
	return nil
}

func sm86AmaxArgs(a *AmaxArgs, addrs bool) (sm86.SGAmax, error) {
	br, bc := a.Gran.Block(a.Rows, a.Cols)
	x := sm86.SGAmax{Out: sgPlaceholder, X: sgPlaceholder, XType: a.X.DType(), Rows: a.Rows, Cols: a.Cols, BlockRows: br, BlockCols: bc}
	if addrs {
		p, err := sgPtrs(a.Out, a.X)
		if err != nil {
			return x, err
		}
		x.Out, x.X = p[0], p[1]
	}
	return x, nil
}

func sm86AmaxSupports(a *AmaxArgs) error {
	x, _ := sm86AmaxArgs(a, false)
	return planReason(sm86.AmaxSupports(x), sm86.ErrSGUnsupported)
}

func sm86AmaxLaunch(_ context.Context, l *Launch, a *AmaxArgs) error {
	x, err := sm86AmaxArgs(a, true)
	if err != nil {
		return err
	}
	ls, err := sm86.PlanAmax(x)
	if err != nil {
		return planReason(err, sm86.ErrSGUnsupported)
	}
	return sm86f8Launches(l.Stream, sm86SGModule(), ls)
}

func sm86DequantArgs(a *DequantizeArgs, slot uint64, addrs bool) (sm86.SGDequant, error) {
	br, bc := a.Gran.Block(a.Rows, a.Cols)
	d := sm86.SGDequant{Slot: slot, Q: sgPlaceholder, Y: sgPlaceholder, QType: a.Q.DType(), YType: a.Y.DType(),
		Rows: a.Rows, Cols: a.Cols, BlockRows: br, BlockCols: bc, MX: a.Gran == fallback.MX}
	if a.ScaleInv != nil {
		d.Inv = sgPlaceholder
	}
	if addrs {
		p, err := sgPtrs(a.Q, a.Y)
		if err != nil {
			return d, err
		}
		d.Q, d.Y = p[0], p[1]
		if a.ScaleInv != nil {
			if d.Inv, err = DevicePtr(a.ScaleInv); err != nil {
				return d, err
			}
		}
	}
	return d, nil
}

func sm86DequantSupports(a *DequantizeArgs) error {
	d, _ := sm86DequantArgs(a, sgPlaceholder, false)
	return planReason(sm86.DequantSupports(d), sm86.ErrSGUnsupported)
}

func sm86DequantLaunch(_ context.Context, l *Launch, a *DequantizeArgs) error {
	// a recorded block is a float scale fallback.CheckScales rejects: read
	// the scales back and let it name the first
	fault := func(uint64) error {
		b := make([]byte, a.ScaleInv.Bytes())
		if err := a.ScaleInv.memory().Read(context.Background(), 0, b); err != nil {
			return err
		}
		if err := fallback.CheckScales(OpDequantize.name, "ScaleInv", fallback.F32s(b)); err != nil {
			return err
		}
		return fmt.Errorf("tcrt: %s: the device rejected a scale the host accepts: %w", OpDequantize, ErrDevice)
	}
	call, err := newSGCall(l.Runtime, fault)
	if err != nil {
		return err
	}
	d, err := sm86DequantArgs(a, call.addr(), true)
	var ls []sm86.Launch
	if err == nil {
		ls, err = sm86.PlanDequant(d)
	}
	if err != nil {
		call.slots.free <- call.i
		return planReason(err, sm86.ErrSGUnsupported)
	}
	return call.run(l.Stream, sgGPULaunches(sm86SGModule(), ls)...)
}

// sm86MXSupports covers an MX quantisation from f32, f16 or bf16,
// saturating or not, with or without the Amax output; the plan's rule does
// the rest.
func sm86MXSupports(a *QuantizeArgs) error {
	switch {
	case a.Gran != fallback.MX:
		return fmt.Errorf("granularity %v (covered: mx)", a.Gran)
	case a.X.DType() != tile.F32 && a.X.DType() != tile.F16 && a.X.DType() != tile.BF16:
		return fmt.Errorf("input element type %v (covered: f32, f16 and bf16 widened first)", a.X.DType())
	case a.Mode != tile.Saturate && a.Mode != tile.NonSaturating:
		return fmt.Errorf("overflow mode %v (covered: saturate, non-saturating)", a.Mode)
	}
	if err := sm86QuantAmaxSupports(a); err != nil {
		return err
	}
	if err := sm86QuantAligned(a); err != nil {
		return err
	}
	return planReason(sm86.QuantizeMXSupports(sm86.SGQuantizeMX{Q: sgPlaceholder, X: sgPlaceholder, E8M0: sgPlaceholder,
		Work: sgPlaceholder, QType: a.Q.DType(), Rows: a.Rows, Cols: a.Cols}), sm86.ErrSGUnsupported)
}

func sm86MXLaunch(arch int) func(context.Context, *Launch, *QuantizeArgs) error {
	return func(ctx context.Context, l *Launch, a *QuantizeArgs) error {
		blocks := a.Rows * ((a.Cols + fallback.MXBlock - 1) / fallback.MXBlock)
		tmp := &scratch{rt: l.Runtime}
		q, err := DevicePtr(a.Q)
		if err != nil {
			return err
		}
		xp, wl, err := sm86Widened(a, tmp)
		if err != nil {
			return errors.Join(planReason(err, sm86.ErrSGUnsupported), tmp.release())
		}
		x := sm86.SGQuantizeMX{Q: q, X: xp, QType: a.Q.DType(), Rows: a.Rows, Cols: a.Cols,
			NonSaturating: a.Mode == tile.NonSaturating}
		if a.ScaleInv != nil {
			if x.E8M0, err = DevicePtr(a.ScaleInv); err != nil {
				return err
			}
		} else if x.E8M0, err = tmp.alloc(blocks); err != nil {
			return errors.Join(err, tmp.release())
		}
		if x.Work, err = tmp.alloc(4 * blocks); err != nil {
			return errors.Join(err, tmp.release())
		}
		ls, err := sm86.PlanQuantizeMX(x)
		if err == nil {
			ls, err = sm86QuantAmax(a, append(wl, ls...))
		}
		if err != nil {
			return errors.Join(planReason(err, sm86.ErrSGUnsupported), tmp.release())
		}
		// the scratch goes after the kernels, whether or not all were issued
		return errors.Join(sm86f8Launches(l.Stream, sm86.ModuleFor(arch), ls), l.Stream.Enqueue(tmp.release))
	}
}

// sm86BlocksSupports covers a quantisation from f32, f16 or bf16,
// saturating or not, the scales computed from each block's amax, one given
// per tensor or a given scales tensor, per tensor, per row, per column,
// 1×128 or 128×128, any Cols, with or without ScaleInv and Amax outputs; the plan's rule does
// the rest. It ranks below sass.quantize.f8 (one launch), which takes a
// given per-tensor scale when no ScaleInv or Amax is asked for.
func sm86BlocksSupports(a *QuantizeArgs) error {
	switch {
	case a.Gran != fallback.PerTensor && a.Gran != fallback.PerRow && a.Gran != fallback.PerColumn &&
		a.Gran != fallback.Block1x128 && a.Gran != fallback.Block128x128:
		return fmt.Errorf("granularity %v (covered: tensor, row, column, 1x128, 128x128)", a.Gran)
	case a.X.DType() != tile.F32 && a.X.DType() != tile.F16 && a.X.DType() != tile.BF16:
		return fmt.Errorf("input element type %v (covered: f32, f16 and bf16 widened first)", a.X.DType())
	case a.Mode != tile.Saturate && a.Mode != tile.NonSaturating:
		return fmt.Errorf("overflow mode %v (covered: saturate, non-saturating)", a.Mode)
	}
	if err := f8ScaleBuf(a.Scales, "Scales", a.Gran, a.Rows, a.Cols); err != nil {
		return err
	}
	if err := f8ScaleBuf(a.ScaleInv, "ScaleInv", a.Gran, a.Rows, a.Cols); err != nil {
		return err
	}
	if a.Given && a.Scales == nil && a.Gran != fallback.PerTensor {
		return fmt.Errorf("%v scales given without a Scales buffer", a.Gran)
	}
	if err := sm86QuantAmaxSupports(a); err != nil {
		return err
	}
	if err := sm86QuantAligned(a); err != nil {
		return err
	}
	x := sm86BlocksArgs(a)
	if x.Given && !tile.ValidScale(x.Scale) {
		x.Scale = 1 // the launch reports the CPU's error
	}
	return planReason(sm86.QuantizeBlocksSupports(x), sm86.ErrSGUnsupported)
}

// sm86QuantAligned checks the encoder's vector accesses are aligned: f32 X
// read 16 bytes (four elements) at a time, Q written 4 bytes at a time.
func sm86QuantAligned(a *QuantizeArgs) error {
	p, err := sgPtrs(a.X, a.Q)
	if err != nil {
		return err
	}
	if a.X.DType() != tile.F32 { // the encoder reads the widened scratch
		p[0] = 0
	}
	if p[0]%16 != 0 || p[1]%4 != 0 {
		return fmt.Errorf("x at %#x or q at %#x not 16- and 4-byte aligned, as the encoder's vector accesses need", p[0], p[1])
	}
	return nil
}

// sm86Widened returns the f32 input of a quantisation's encoder: X itself,
// or for f16/bf16 X a scratch buffer from tmp and the launch that widens X
// into it (exactly, tile.F16ToF32/BF16ToF32).
func sm86Widened(a *QuantizeArgs, tmp *scratch) (uint64, []sm86.Launch, error) {
	x, err := DevicePtr(a.X)
	if err != nil || a.X.DType() == tile.F32 {
		return x, nil, err
	}
	n := a.Rows * a.Cols
	w, err := tmp.alloc(4 * n)
	if err != nil {
		return 0, nil, err
	}
	ls, err := sm86.PlanWiden(sm86.SGWiden{Out: w, X: x, XType: a.X.DType(), N: n})
	return w, ls, err
}

// sm86QuantAmaxSupports checks a quantisation's Amax output (nil is fine)
// can be recorded by the amax kernels: max |x| over the whole input.
func sm86QuantAmaxSupports(a *QuantizeArgs) error {
	if a.Amax == nil {
		return nil
	}
	if d := a.Amax.DType(); d != tile.F32 || a.Amax.Len() != 1 {
		return fmt.Errorf("amax is %v of %d elements (covered: one f32)", d, a.Amax.Len())
	}
	return planReason(sm86.AmaxSupports(sm86.SGAmax{Out: sgPlaceholder, X: sgPlaceholder, XType: a.X.DType(),
		Rows: a.Rows, Cols: a.Cols, BlockRows: a.Rows, BlockCols: a.Cols}), sm86.ErrSGUnsupported)
}

// sm86QuantAmax appends to a quantisation's launches ls those recording
// its Amax output, if asked for: the amax kernels over the whole input,
// which give the CPU's value (fallback.QuantizeRef's max |x|, NaN as the
// CPU's) bit for bit.
func sm86QuantAmax(a *QuantizeArgs, ls []sm86.Launch) ([]sm86.Launch, error) {
	if a.Amax == nil {
		return ls, nil
	}
	p, err := sgPtrs(a.Amax, a.X)
	if err != nil {
		return nil, err
	}
	am, err := sm86.PlanAmax(sm86.SGAmax{Out: p[0], X: p[1], XType: a.X.DType(), Rows: a.Rows, Cols: a.Cols,
		BlockRows: a.Rows, BlockCols: a.Cols})
	if err != nil {
		return nil, err
	}
	return append(ls, am...), nil
}

func sm86BlocksArgs(a *QuantizeArgs) sm86.SGQuantizeBlocks {
	br, bc := a.Gran.Block(a.Rows, a.Cols)
	x := sm86.SGQuantizeBlocks{Q: sgPlaceholder, X: sgPlaceholder, Work: sgPlaceholder, QType: a.Q.DType(),
		Rows: a.Rows, Cols: a.Cols, BlockRows: br, BlockCols: bc, Margin: a.Margin, PowerOfTwo: a.PowerOfTwo,
		Given: a.Given, Scale: a.Scale, NonSaturating: a.Mode == tile.NonSaturating}
	if a.Scales != nil {
		x.Scales = sgPlaceholder
	}
	return x
}

// sm86GivenLaunch quantises with a given scales tensor: a host task reads
// and checks the scales (the CPU's error, nothing written, on a bad one),
// then issues the widening wl (if any) and the encoding, which reads them from device memory, and the
// Amax kernels, then writes ScaleInv (1/s in float32, the CPU's bits), as
// the PTX path does.
func sm86GivenLaunch(l *Launch, a *QuantizeArgs, arch int, x sm86.SGQuantizeBlocks, wl []sm86.Launch) error {
	var err error
	if x.Scales, err = DevicePtr(a.Scales); err != nil {
		return err
	}
	x.Inv, x.Work = 0, 0
	ls, err := sm86.PlanQuantizeBlocks(x)
	if err == nil {
		ls, err = sm86QuantAmax(a, append(wl, ls...))
	}
	if err != nil {
		return planReason(err, sm86.ErrSGUnsupported)
	}
	var scales []float32
	pre := func() error {
		var err error
		scales, err = f8ReadScales(a.Scales, OpQuantize.name, "Scales")
		return err
	}
	var post func() error
	if inv := a.ScaleInv; inv != nil {
		post = func() error { return f8WriteInv(inv, scales) }
	}
	return LaunchGPUAfter(l.Stream, sgGPULaunches(sm86.ModuleFor(arch), ls), pre, post)
}

func sm86BlocksLaunch(arch int) func(context.Context, *Launch, *QuantizeArgs) error {
	return func(ctx context.Context, l *Launch, a *QuantizeArgs) error {
		x := sm86BlocksArgs(a)
		sr, sc := a.Gran.ScaleGrid(a.Rows, a.Cols)
		var err error
		if x.Q, err = DevicePtr(a.Q); err != nil {
			return err
		}
		if x.Given && a.Scales == nil {
			if err := fallback.CheckScales(OpQuantize.name, "Scales", []float32{x.Scale}); err != nil {
				return l.Stream.Enqueue(func() error { return err }) // reported as the CPU kernel reports it
			}
		}
		tmp := &scratch{rt: l.Runtime}
		var wl []sm86.Launch
		if x.X, wl, err = sm86Widened(a, tmp); err != nil {
			return errors.Join(planReason(err, sm86.ErrSGUnsupported), tmp.release())
		}
		if a.Scales != nil {
			return errors.Join(sm86GivenLaunch(l, a, arch, x, wl), l.Stream.Enqueue(tmp.release))
		}
		if a.ScaleInv != nil {
			if x.Inv, err = DevicePtr(a.ScaleInv); err != nil {
				return errors.Join(err, tmp.release())
			}
		}
		if x.Work, err = tmp.alloc(4 * sr * sc); err != nil {
			return errors.Join(err, tmp.release())
		}
		ls, err := sm86.PlanQuantizeBlocks(x)
		if err == nil {
			ls, err = sm86QuantAmax(a, append(wl, ls...))
		}
		if err != nil {
			return errors.Join(planReason(err, sm86.ErrSGUnsupported), tmp.release())
		}
		return errors.Join(sm86f8Launches(l.Stream, sm86.ModuleFor(arch), ls), l.Stream.Enqueue(tmp.release))
	}
}

func init() {
	arch := Arch{ISA: ISASASS, MinSM: 86, MaxSM: 89, Module: sm86SGModule()}
	RegisterKernel(OpQuantize, TypedKernel[QuantizeArgs]{
		Name: "sass.quantize.blocks.sm89", Arch: Arch{ISA: ISASASS, MinSM: 89, MaxSM: 89, Module: sm86.ModuleFor(89)}, Preference: 205,
		Doc:      "hand-scheduled SASS (kernels/sm86, sm_89 cubin): per-block amax, scales by the current-scaling rule (binary64 division, the CPU's bits) or given (checked on the host first), F2FP.SATFINITE encode (the integer one when non-saturating), Amax by the amax kernels; unverified on a GPU",
		Supports: sm86BlocksSupports,
		Launch:   sm86BlocksLaunch(89),
	})
	RegisterKernel(OpQuantize, TypedKernel[QuantizeArgs]{
		Name: "sass.quantize.blocks.sm86", Arch: Arch{ISA: ISASASS, MinSM: 86, MaxSM: 89, Module: sm86.ModuleFor(86)}, Preference: 195,
		Doc:      "hand-scheduled SASS (kernels/sm86, sm_86 cubin): per-block amax, scales by the current-scaling rule (binary64 division, the CPU's bits) or given (checked on the host first), integer float8 encode, Amax by the amax kernels; unverified on a GPU",
		Supports: sm86BlocksSupports,
		Launch:   sm86BlocksLaunch(86),
	})
	RegisterKernel(OpAmax, TypedKernel[AmaxArgs]{
		Name: "sass.amax", Arch: arch, Preference: 200,
		Doc:      "hand-scheduled SASS (kernels/sm86): per-block max |x| by warp shuffles and ordered-integer atomics, then a finish pass (NaN as the CPU's); unverified on a GPU",
		Supports: sm86AmaxSupports,
		Launch:   sm86AmaxLaunch,
	})
	RegisterKernel(OpDequantize, TypedKernel[DequantizeArgs]{
		Name: "sass.dequantize", Arch: arch, Preference: 200,
		Doc:      "hand-scheduled SASS (kernels/sm86): device-side scale check, then exact integer float8 decode times the block's scale to f32 or bf16; unverified on a GPU",
		Supports: sm86DequantSupports,
		Launch:   sm86DequantLaunch,
	})
	RegisterKernel(OpQuantize, TypedKernel[QuantizeArgs]{
		Name: "sass.quantize.mx.sm89", Arch: Arch{ISA: ISASASS, MinSM: 89, MaxSM: 89, Module: sm86.ModuleFor(89)}, Preference: 210,
		Doc:      "hand-scheduled SASS (kernels/sm86, sm_89 cubin): per-block amax, E8M0 scales by the OCP rule, F2FP.SATFINITE encode (the integer one when non-saturating), Amax by the amax kernels; unverified on a GPU",
		Supports: sm86MXSupports,
		Launch:   sm86MXLaunch(89),
	})
	RegisterKernel(OpQuantize, TypedKernel[QuantizeArgs]{
		Name: "sass.quantize.mx.sm86", Arch: Arch{ISA: ISASASS, MinSM: 86, MaxSM: 89, Module: sm86.ModuleFor(86)}, Preference: 200,
		Doc:      "hand-scheduled SASS (kernels/sm86, sm_86 cubin): per-block amax, E8M0 scales by the OCP rule, integer float8 encode, Amax by the amax kernels; unverified on a GPU",
		Supports: sm86MXSupports,
		Launch:   sm86MXLaunch(86),
	})
}
