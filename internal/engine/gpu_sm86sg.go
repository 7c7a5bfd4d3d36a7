package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/kernels/sm86"
	"github.com/tcrt-go/tcrt/runtime/backend"
)

// The hand-scheduled SM86/SM89 scatter-gather kernels of kernels/sm86
// (gather, scatter, gather-CAS), registered for every SM86/SM89 device,
// real or simulated, under the tile contract:
//
//  1. A resolve (or displacement) kernel checks every index lane under the
//     call's policy and records the first faulting lane in a zeroed fault
//     slot (the runtime's preflight slots, shared with the PTX kernels).
//  2. The effect kernels (copy or update, pad fill) exit when the slot is
//     set, so a fault leaves memory and the destination unchanged.
//  3. A host task after the kernels reads the slot and returns the CPU
//     kernels' own error for that lane.
//
// Supports is each plan's rule (sm86.GatherSupports, ScatterSupports,
// GatherCASSupports); what they leave out (a deterministic float add,
// which needs the updates of each element in lane order) goes to the host
// fallback. The older RED-based f32
// scatter-add (sass.mscatter.add.f32, subnormals flushed) ranks below.
// Scratch (positions, 4 or 8 bytes a lane) is device memory of the call,
// freed by a stream task after the kernels. Unverified on a GPU.

// sm86SGModule is the module holding the kernels (sm_86 and sm_89 cubins).
func sm86SGModule() *backend.Module { return sm86.ModuleFor(86) }

// sgPlaceholder stands in for device addresses when only the rule is
// checked: aligned and non-zero.
const sgPlaceholder = 1 << 20

func sm86GatherArgs(a *GatherArgs, slot, pos uint64, addrs bool) (sm86.SGGather, error) {
	g := sm86.SGGather{Rows: a.Mode == fallback.IndexRows, Slot: slot, Pos: pos, MemRows: a.MemRows,
		IdxTile: a.Idx.Desc, DstTile: a.Dst.Desc, OOB: a.OOB,
		Mem: sgPlaceholder, Idx: sgPlaceholder, Dst: sgPlaceholder}
	if addrs {
		p, err := sgPtrs(a.Mem, a.Idx.Buf, a.Dst.Buf)
		if err != nil {
			return g, err
		}
		g.Mem, g.Idx, g.Dst = p[0], p[1], p[2]
	}
	return g, nil
}

func sm86ScatterArgs(a *ScatterArgs, slot, pos uint64, addrs bool) (sm86.SGScatter, error) {
	s := sm86.SGScatter{Rows: a.Mode == fallback.IndexRows, Op: sm86.SGOp(a.Op), Deterministic: a.Deterministic,
		Slot: slot, Pos: pos, MemRows: a.MemRows, IdxTile: a.Idx.Desc, SrcTile: a.Src.Desc, OOB: a.OOB,
		Mem: sgPlaceholder, Idx: sgPlaceholder, Src: sgPlaceholder}
	if addrs {
		p, err := sgPtrs(a.Mem, a.Idx.Buf, a.Src.Buf)
		if err != nil {
			return s, err
		}
		s.Mem, s.Idx, s.Src = p[0], p[1], p[2]
	}
	return s, nil
}

func sm86GatherCASArgs(a *GatherCASArgs, slot, pos uint64, addrs bool) (sm86.SGGatherCAS, error) {
	g := sm86.SGGatherCAS{Slot: slot, Pos: pos, MemBytes: a.Mem.Bytes(), Base: a.Base,
		IdxTile: a.Idx.Desc, ExpTile: a.Expected.Desc, RepTile: a.Replacement.Desc, DstTile: a.Dst.Desc,
		Mem: sgPlaceholder, Idx: sgPlaceholder, Exp: sgPlaceholder, Rep: sgPlaceholder, Dst: sgPlaceholder}
	if addrs {
		p, err := sgPtrs(a.Mem, a.Idx.Buf, a.Expected.Buf, a.Replacement.Buf, a.Dst.Buf)
		if err != nil {
			return g, err
		}
		g.Mem, g.Idx, g.Exp, g.Rep, g.Dst = p[0], p[1], p[2], p[3], p[4]
	}
	return g, nil
}

func sm86GatherSupports(a *GatherArgs) error {
	g, _ := sm86GatherArgs(a, sgPlaceholder, sgPlaceholder, false)
	return planReason(sm86.GatherSupports(g), sm86.ErrSGUnsupported)
}

func sm86ScatterSupports(a *ScatterArgs) error {
	s, _ := sm86ScatterArgs(a, sgPlaceholder, sgPlaceholder, false)
	return planReason(sm86.ScatterSupports(s), sm86.ErrSGUnsupported)
}

func sm86GatherCASSupports(a *GatherCASArgs) error {
	g, _ := sm86GatherCASArgs(a, sgPlaceholder, sgPlaceholder, false)
	// the memory's own address decides its alignment
	if p, err := DevicePtr(a.Mem); err == nil {
		g.Mem = p
	}
	return planReason(sm86.GatherCASSupports(g), sm86.ErrSGUnsupported)
}

// sm86SGRun runs one call: a fault slot, position scratch of posBytes,
// the plan's launches, then the slot check and the scratch's release.
func sm86SGRun(l *Launch, posBytes int, fault func(lane uint64) error,
	plan func(slot, pos uint64) ([]sm86.Launch, error)) error {
	call, err := newSGCall(l.Runtime, fault)
	if err != nil {
		return err
	}
	tmp := &scratch{rt: l.Runtime}
	fail := func(err error) error {
		call.slots.free <- call.i
		return errors.Join(planReason(err, sm86.ErrSGUnsupported), tmp.release())
	}
	pos, err := tmp.alloc(posBytes)
	if err != nil {
		return fail(err)
	}
	ls, err := plan(call.addr(), pos)
	if err != nil {
		return fail(err)
	}
	// call.run enqueues the slot check after the kernels; the scratch goes
	// after it
	err = call.run(l.Stream, sgGPULaunches(sm86SGModule(), ls)...)
	return errors.Join(err, l.Stream.Enqueue(tmp.release))
}

// sgGPULaunches sets module m on a kernels/sm86 plan's launches and
// returns them.
func sgGPULaunches(m *backend.Module, ls []sm86.Launch) []*GPULaunch {
	gs := make([]*GPULaunch, len(ls))
	for i := range ls {
		ls[i].Module = m
		gs[i] = &ls[i]
	}
	return gs
}

func sm86GatherLaunch(_ context.Context, l *Launch, a *GatherArgs) error {
	it := a.Idx.Desc.Resolved()
	lanes := it.ValidRows * it.ValidCols
	fault := sgIndexFault(OpGather.name, a.Mode, a.Idx, it.ValidCols, a.MemRows)
	return sm86SGRun(l, 4*lanes, fault, func(slot, pos uint64) ([]sm86.Launch, error) {
		g, err := sm86GatherArgs(a, slot, pos, true)
		if err != nil {
			return nil, err
		}
		return sm86.PlanGather(g)
	})
}

func sm86ScatterLaunch(_ context.Context, l *Launch, a *ScatterArgs) error {
	it := a.Idx.Desc.Resolved()
	lanes := it.ValidRows * it.ValidCols
	fault := sgIndexFault(OpScatter.name, a.Mode, a.Idx, it.ValidCols, a.MemRows)
	// positions, then a deterministic store's winners (sm86.ScatterWinBytes)
	shape, _ := sm86ScatterArgs(a, 0, 0, false)
	return sm86SGRun(l, 4*lanes+sm86.ScatterWinBytes(shape), fault, func(slot, pos uint64) ([]sm86.Launch, error) {
		s, err := sm86ScatterArgs(a, slot, pos, true)
		if err != nil {
			return nil, err
		}
		s.Win = pos + uint64(4*lanes)
		return sm86.PlanScatter(s)
	})
}

func sm86GatherCASLaunch(_ context.Context, l *Launch, a *GatherCASArgs) error {
	dt := a.Dst.Desc.Resolved()
	cols, esz, memBytes := dt.ValidCols, dt.DType.Size(), a.Mem.Bytes()
	fault := func(lane uint64) error {
		r, c := int(lane/uint64(cols)), int(lane%uint64(cols))
		raw, err := sgReadIndex(a.Idx, r, c)
		if err != nil {
			return fmt.Errorf("tcrt: %s: the preflight found a bad displacement at (%d, %d), and reading it failed: %v: %w", OpGatherCAS, r, c, err, ErrBounds)
		}
		if _, err := fallback.CASAddress(a.Base, raw, a.Idx.Desc.DType, r, c, memBytes, esz); err != nil {
			return err
		}
		return fmt.Errorf("tcrt: %s: the device preflight faulted lane (%d, %d), whose displacement %#x the host finds valid: %w", OpGatherCAS, r, c, raw, ErrDevice)
	}
	return sm86SGRun(l, 8*dt.ValidRows*dt.ValidCols, fault, func(slot, pos uint64) ([]sm86.Launch, error) {
		g, err := sm86GatherCASArgs(a, slot, pos, true)
		if err != nil {
			return nil, err
		}
		return sm86.PlanGatherCAS(g)
	})
}

func init() {
	arch := Arch{ISA: ISASASS, MinSM: 86, MaxSM: 89, Module: sm86SGModule()}
	RegisterKernel(OpGather, TypedKernel[GatherArgs]{
		Name: "sass.mgather", Arch: arch, Preference: 200,
		Doc:      "hand-scheduled SASS (kernels/sm86): resolve/preflight kernel (every index type and policy), row copies in the widest aligned units or element copies, pad fill; unverified on a GPU",
		Supports: sm86GatherSupports,
		Launch:   sm86GatherLaunch,
	})
	RegisterKernel(OpScatter, TypedKernel[ScatterArgs]{
		Name: "sass.mscatter", Arch: arch, Preference: 205,
		Doc:      "hand-scheduled SASS (kernels/sm86): resolve/preflight kernel, then stores or atomics (s32/u32 add/max/min, f64 add, f32 max/min by CAS with the CPU's NaN and -0 rules, f32/f16/bf16 add by CAS loops with the CPU's rounding, subnormals and NaN bits; a deterministic store by a claim pass, the largest lane wins); unverified on a GPU",
		Supports: sm86ScatterSupports,
		Launch:   sm86ScatterLaunch,
	})
	RegisterKernel(OpGatherCAS, TypedKernel[GatherCASArgs]{
		Name: "sass.mgather_cas", Arch: arch, Preference: 200,
		Doc:      "hand-scheduled SASS (kernels/sm86): displacement preflight, ATOMG.CAS per lane (8/16-bit lanes on their containing word, converged retry loops), pad fill; unverified on a GPU",
		Supports: sm86GatherCASSupports,
		Launch:   sm86GatherCASLaunch,
	})
}
