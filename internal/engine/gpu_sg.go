package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/kernels/ptx"
	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/tile"
)

// GPU kernels of the scatter–gather family (kernels/ptx, module SG), under
// the tile contract:
//
//  1. Legality has been checked by ops (the argument structs are valid).
//  2. Preflight: when an index can fault (gathers and scatters under
//     OOBError, every gather-CAS), a check kernel records the first faulting
//     lane in a zeroed 8-byte slot of device memory.
//  3. Effects: the pad fill and the effect kernel read the slot first and do
//     nothing after a fault, so memory and destination stay unchanged.
//  4. Publication is stream order. A host task after the effect kernel reads
//     the slot and, on a fault, returns the CPU kernels' own error for that
//     lane (its index read back from the device), which the stream's next
//     Synchronize reports.
//
// The host task waits for the stream's device work, so a call that can
// fault costs one round trip to the host; policies that cannot fault
// (OOBClamp, OOBWrap, OOBZero, OOBSkip) launch only the effect kernel (and
// the pad fill). Supports rejects what these kernels do not cover, so the
// host fallback (host.cpu.*) runs it, and Explain says why:
// deterministic plain scatters and deterministic float scatter-adds (lane
// order on the GPU would need a sort).

func init() {
	arch := Arch{ISA: ISAPTX, MinSM: 80, Module: ptx.SG()}
	RegisterKernel(OpGather, TypedKernel[GatherArgs]{
		Name: "ptx.mgather", Arch: arch, Preference: 100,
		Doc:    "PTX: preflight kernel (OOBError), pad fill, rows copied in 16-byte units where alignment allows",
		Launch: ptxGatherLaunch,
	})
	RegisterKernel(OpScatter, TypedKernel[ScatterArgs]{
		Name: "ptx.mscatter", Arch: arch, Preference: 100,
		Doc:      "PTX: preflight kernel (OOBError), one atomic per element (red, or an exact CAS loop for f32/f16/bf16 add and f32 max/min)",
		Supports: ptxScatterSupports,
		Launch:   ptxScatterLaunch,
	})
	RegisterKernel(OpGatherCAS, TypedKernel[GatherCASArgs]{
		Name: "ptx.mgather_cas", Arch: arch, Preference: 100,
		Doc:    "PTX: preflight kernel, atom.cas.b32/b64 per lane (8/16-bit via the containing word), pad fill",
		Launch: ptxGatherCASLaunch,
	})
}

func ptxScatterSupports(a *ScatterArgs) error {
	d := a.Src.Desc.DType
	code, ok := sgScatterCode(a.Op, d)
	if !ok {
		return fmt.Errorf("no GPU kernel for scatter-%v on %v", a.Op, d)
	}
	if a.Deterministic {
		switch code {
		case ptx.SGStore:
			return fmt.Errorf("deterministic plain scatter (largest lane wins) is not done on the GPU")
		case ptx.SGAddF32, ptx.SGAddF16, ptx.SGAddBF16, ptx.SGAddF64:
			return fmt.Errorf("deterministic float scatter-add (lane order) is not done on the GPU")
		}
	}
	return nil
}

// sgScatterCode is tcrt_sg_scatter's code for op on elements of type d.
func sgScatterCode(op ScatterOp, d tile.DType) (uint32, bool) {
	switch op {
	case fallback.ScatterStore:
		return ptx.SGStore, d.Size() > 0
	case fallback.ScatterAdd:
		switch d {
		case tile.F32:
			return ptx.SGAddF32, true
		case tile.F16:
			return ptx.SGAddF16, true
		case tile.BF16:
			return ptx.SGAddBF16, true
		case tile.S32, tile.U32:
			return ptx.SGAddI32, true
		case tile.F64:
			return ptx.SGAddF64, true
		}
	case fallback.ScatterMax:
		switch d {
		case tile.S32:
			return ptx.SGMaxS32, true
		case tile.U32:
			return ptx.SGMaxU32, true
		case tile.F32:
			return ptx.SGMaxF32, true
		}
	case fallback.ScatterMin:
		switch d {
		case tile.S32:
			return ptx.SGMinS32, true
		case tile.U32:
			return ptx.SGMinU32, true
		case tile.F32:
			return ptx.SGMinF32, true
		}
	}
	return 0, false
}

// sgStrides are a tile's row and column strides in bytes.
func sgStrides(t tile.Tile) (sr, sc uint64) {
	sz := uint64(t.DType.Size())
	if t.Layout == tile.ColMajor {
		return sz, uint64(t.Rows) * sz
	}
	return uint64(t.Cols) * sz, sz
}

// sgIndexType is the SG kernels' code of an index type.
func sgIndexType(d tile.DType) uint32 {
	switch d {
	case tile.S32:
		return 0
	case tile.U32:
		return 1
	case tile.S64:
		return 2
	}
	return 3
}

func sgLog(size int) uint32 { return uint32(bits.TrailingZeros(uint(size))) }

// sgUnit is the largest power of two up to 16 dividing every value.
func sgUnit(vals ...uint64) uint64 {
	w := uint64(16)
	for _, v := range vals {
		for v%w != 0 {
			w >>= 1
		}
	}
	return w
}

// sgLaunch is a launch of an SG kernel over rows × units; params builds the
// parameter slots given lg, the threads-a-row exponent it chose.
func sgLaunch(rt *Runtime, fn string, rows, units int64, params func(lg uint64) []uint64) *GPULaunch {
	lg := ptx.SGLog2Threads(units)
	gx, gy := ptx.SGGrid(rows, units, lg, rt.Device().SMs)
	return &GPULaunch{Module: ptx.SG(), Func: fn, Grid: [3]int{gx, gy}, Block: [3]int{ptx.SGBlock}, Params: params(ptx.U32(lg))}
}

// sgPadLaunch returns the pad fill of t, or nil when nothing is padded.
func sgPadLaunch(rt *Runtime, t tile.Tile, dst, slot uint64) *GPULaunch {
	pat, ok := t.Pad.PadPattern(t.DType)
	if !ok || (t.ValidRows == t.Rows && t.ValidCols == t.Cols) {
		return nil
	}
	sr, sc := sgStrides(t)
	g := sgLaunch(rt, ptx.SGFillPad, int64(t.Rows), int64(t.Cols), func(lg uint64) []uint64 {
		return []uint64{ptx.Ptr(slot), ptx.Ptr(dst), ptx.U64(uint64(t.Rows)), ptx.U64(uint64(t.Cols)),
			ptx.U64(uint64(t.ValidRows)), ptx.U64(uint64(t.ValidCols)), lg, ptx.U32(sgLog(t.DType.Size())),
			ptx.U64(sr), ptx.U64(sc), ptx.U64(pat)}
	})
	return g
}

// sgSlotCount is the number of preflight slots a runtime has: calls in
// flight at once that can fault.
const sgSlotCount = 4096

// sgSlots are a runtime's preflight slots: 8 zeroed bytes each, taken by a
// call and returned, zero again, by its host check.
type sgSlots struct {
	mem  backend.Memory
	base uint64
	free chan int
}

var sgSlotTable struct {
	mu sync.Mutex
	m  map[*Runtime]*sgSlots
}

// sgSlotsFor returns rt's slots, allocating them on first use. Slots of
// closed runtimes are dropped then (their memory went with the pool).
func sgSlotsFor(rt *Runtime) (*sgSlots, error) {
	t := &sgSlotTable
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.m[rt]; s != nil {
		return s, nil
	}
	for r := range t.m {
		if r.closed.Load() {
			delete(t.m, r)
		}
	}
	m, err := rt.be.Alloc(8 * sgSlotCount) // zeroed
	if err != nil {
		return nil, err
	}
	dm, ok := m.(backend.DeviceMemory)
	if !ok {
		return nil, fmt.Errorf("tcrt: scatter-gather: preflight slots need device memory: %w", ErrUnsupported)
	}
	s := &sgSlots{mem: m, base: dm.DevicePtr(), free: make(chan int, sgSlotCount)}
	for i := range sgSlotCount {
		s.free <- i
	}
	if t.m == nil {
		t.m = map[*Runtime]*sgSlots{}
	}
	t.m[rt] = s
	return s, nil
}

// sgCall is one call's use of the preflight: its slot and how to report
// the faulting lane.
type sgCall struct {
	slots *sgSlots
	i     int
	fault func(lane uint64) error
}

// addr is the slot's device address (0 without a preflight).
func (c *sgCall) addr() uint64 {
	if c == nil {
		return 0
	}
	return c.slots.base + 8*uint64(c.i)
}

// check reads the slot and returns the fault it records; it runs as a host
// task after the call's kernels. The slot is returned zeroed (or, if it
// cannot be zeroed, not returned).
func (c *sgCall) check() error {
	ctx := context.Background()
	var b [8]byte
	if err := c.slots.mem.Read(ctx, 8*c.i, b[:]); err != nil {
		return fmt.Errorf("tcrt: scatter-gather: reading the preflight slot: %w", err)
	}
	key := binary.LittleEndian.Uint64(b[:])
	if key == 0 {
		c.slots.free <- c.i
		return nil
	}
	var zero [8]byte
	if err := c.slots.mem.Write(ctx, 8*c.i, zero[:]); err != nil {
		return fmt.Errorf("tcrt: scatter-gather: clearing the preflight slot: %w", err)
	}
	c.slots.free <- c.i
	return c.fault(^key)
}

// run launches gs in order on s, then (with a preflight) the host check.
func (c *sgCall) run(s *Stream, gs ...*GPULaunch) error {
	var err error
	for _, g := range gs {
		if g == nil {
			continue
		}
		if err = LaunchGPU(s, g); err != nil {
			break
		}
	}
	if c != nil {
		if e := s.Enqueue(c.check); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// newSGCall takes a slot of rt's.
func newSGCall(rt *Runtime, fault func(lane uint64) error) (*sgCall, error) {
	s, err := sgSlotsFor(rt)
	if err != nil {
		return nil, err
	}
	return &sgCall{slots: s, i: <-s.free, fault: fault}, nil
}

// sgReadIndex reads the raw index at valid coordinate (r, c) of an index
// tile from the device.
func sgReadIndex(t Tile, r, c int) (uint64, error) {
	sr, sc := sgStrides(t.Desc)
	sz := t.Desc.DType.Size()
	b := make([]byte, 8)
	m := t.Buf.memory()
	if m == nil {
		return 0, fmt.Errorf("tcrt: scatter-gather: index buffer closed: %w", ErrClosed)
	}
	if err := m.Read(context.Background(), int(uint64(r)*sr+uint64(c)*sc), b[:sz]); err != nil {
		return 0, err
	}
	return tile.LoadIndex(t.Desc.DType, b, 0), nil
}

// sgIndexFault reports the faulting lane of a gather or scatter preflight.
func sgIndexFault(op string, mode IndexMode, idx Tile, cols, n int) func(uint64) error {
	return func(lane uint64) error {
		r, c := int(lane/uint64(cols)), int(lane%uint64(cols))
		raw, err := sgReadIndex(idx, r, c)
		if err != nil {
			return fmt.Errorf("tcrt: %s: the preflight found an index out of bounds at (%d, %d), and reading it failed: %v: %w", op, r, c, err, ErrBounds)
		}
		return fallback.IndexFault(op, mode, raw, idx.Desc.DType, r, c, n)
	}
}

func sgPtrs(bufs ...*Buffer) ([]uint64, error) {
	out := make([]uint64, len(bufs))
	for i, b := range bufs {
		p, err := DevicePtr(b)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

// sgIndexPreflight prepares the tile contract's index preflight for a
// gather or scatter whose out-of-bounds policy is Error: a fault slot and
// the check kernel that records the first faulting lane. Other policies
// cannot fault and get neither (nil, nil).
func sgIndexPreflight(rt *Runtime, op string, mode IndexMode, oob tile.OOB, idx Tile, pi uint64, it uint32, isr, isc uint64, rows, laneCols int64, memRows int) (*sgCall, *GPULaunch, error) {
	if oob != tile.OOBError {
		return nil, nil, nil
	}
	call, err := newSGCall(rt, sgIndexFault(op, mode, idx, int(laneCols), memRows))
	if err != nil {
		return nil, nil, err
	}
	check := sgLaunch(rt, ptx.SGCheckIndex, rows, laneCols, func(lg uint64) []uint64 {
		return []uint64{ptx.Ptr(call.addr()), ptx.Ptr(pi), ptx.U32(it),
			ptx.U64(isr), ptx.U64(isc), ptx.U64(uint64(rows)), ptx.U64(uint64(laneCols)), lg, ptx.U64(uint64(memRows))}
	})
	return call, check, nil
}

func ptxGatherLaunch(_ context.Context, l *Launch, a *GatherArgs) error {
	p, err := sgPtrs(a.Dst.Buf, a.Mem, a.Idx.Buf)
	if err != nil {
		return err
	}
	pd, pm, pi := p[0], p[1], p[2]
	rt, dst, idx := l.Runtime, a.Dst.Desc, a.Idx.Desc
	esz := dst.DType.Size()
	it := sgIndexType(idx.DType)
	isr, isc := sgStrides(idx)
	dsr, dsc := sgStrides(dst)
	rows, cols := int64(dst.ValidRows), int64(dst.ValidCols)
	laneCols := cols
	if a.Mode == fallback.IndexRows {
		laneCols = 1
	}
	call, check, err := sgIndexPreflight(rt, OpGather.name, a.Mode, a.OOB, a.Idx, pi, it, isr, isc, rows, laneCols, a.MemRows)
	if err != nil {
		return err
	}
	slot := call.addr()
	var eff *GPULaunch
	if a.Mode == fallback.IndexRows {
		rowBytes := uint64(cols) * uint64(esz)
		w, dpu := uint64(esz), dsc
		if dst.Layout == tile.RowMajor {
			w = sgUnit(rowBytes, dsr, pd, pm)
			dpu = w
		}
		units := int64(rowBytes / w)
		eff = sgLaunch(rt, ptx.SGGatherRows, rows, units, func(lg uint64) []uint64 {
			return []uint64{ptx.Ptr(slot), ptx.Ptr(pd), ptx.Ptr(pm), ptx.Ptr(pi), ptx.U32(it),
				ptx.U64(isr), ptx.U32(uint32(a.OOB)), ptx.U64(uint64(a.MemRows)), ptx.U64(uint64(rows)), ptx.U64(uint64(units)),
				lg, ptx.U32(sgLog(int(w))), ptx.U64(dsr), ptx.U64(dpu), ptx.U64(rowBytes)}
		})
	} else {
		eff = sgLaunch(rt, ptx.SGGatherElems, rows, cols, func(lg uint64) []uint64 {
			return []uint64{ptx.Ptr(slot), ptx.Ptr(pd), ptx.Ptr(pm), ptx.Ptr(pi), ptx.U32(it),
				ptx.U64(isr), ptx.U64(isc), ptx.U32(uint32(a.OOB)), ptx.U64(uint64(a.MemRows)), ptx.U64(uint64(rows)), ptx.U64(uint64(cols)),
				lg, ptx.U32(sgLog(esz)), ptx.U64(dsr), ptx.U64(dsc)}
		})
	}
	return call.run(l.Stream, check, sgPadLaunch(rt, dst, pd, slot), eff)
}

func ptxScatterLaunch(_ context.Context, l *Launch, a *ScatterArgs) error {
	p, err := sgPtrs(a.Mem, a.Src.Buf, a.Idx.Buf)
	if err != nil {
		return err
	}
	pm, ps, pi := p[0], p[1], p[2]
	rt, src, idx := l.Runtime, a.Src.Desc, a.Idx.Desc
	esz := src.DType.Size()
	code, _ := sgScatterCode(a.Op, src.DType)
	it := sgIndexType(idx.DType)
	isr, isc := sgStrides(idx)
	ssr, ssc := sgStrides(src)
	rows, cols := int64(src.ValidRows), int64(src.ValidCols)
	laneCols := cols
	if a.Mode == fallback.IndexRows {
		laneCols = 1
	}
	call, check, err := sgIndexPreflight(rt, OpScatter.name, a.Mode, a.OOB, a.Idx, pi, it, isr, isc, rows, laneCols, a.MemRows)
	if err != nil {
		return err
	}
	mode, wlog, ssu, units, rowBytes := ptx.SGModeElements, sgLog(esz), ssc, cols, uint64(0)
	if a.Mode == fallback.IndexRows {
		mode, rowBytes = ptx.SGModeRows, uint64(cols)*uint64(esz)
		if code == ptx.SGStore && src.Layout == tile.RowMajor {
			w := sgUnit(rowBytes, ssr, ps, pm)
			ssu, units, wlog = w, int64(rowBytes/w), sgLog(int(w))
			if w == 16 && esz == 8 {
				wlog = ptx.SGStore16x8
			}
		}
	}
	eff := sgLaunch(rt, ptx.SGScatter, rows, units, func(lg uint64) []uint64 {
		return []uint64{ptx.Ptr(call.addr()), ptx.Ptr(pm), ptx.Ptr(ps), ptx.Ptr(pi), ptx.U32(it),
			ptx.U64(isr), ptx.U64(isc), ptx.U32(uint32(a.OOB)), ptx.U64(uint64(a.MemRows)), ptx.U64(uint64(rows)), ptx.U64(uint64(units)),
			lg, ptx.U32(wlog), ptx.U64(ssr), ptx.U64(ssu), ptx.U64(rowBytes), ptx.U32(code), ptx.U32(mode)}
	})
	return call.run(l.Stream, check, eff)
}

func ptxGatherCASLaunch(_ context.Context, l *Launch, a *GatherCASArgs) error {
	p, err := sgPtrs(a.Dst.Buf, a.Mem, a.Idx.Buf, a.Expected.Buf, a.Replacement.Buf)
	if err != nil {
		return err
	}
	pd, pm, pi, pe, pr := p[0], p[1], p[2], p[3], p[4]
	rt, dst, idx := l.Runtime, a.Dst.Desc, a.Idx.Desc
	esz := dst.DType.Size()
	el := sgLog(esz)
	it := sgIndexType(idx.DType)
	isr, isc := sgStrides(idx)
	esr, esc := sgStrides(a.Expected.Desc)
	rsr, rsc := sgStrides(a.Replacement.Desc)
	dsr, dsc := sgStrides(dst)
	rows, cols := int64(dst.ValidRows), int64(dst.ValidCols)
	memBytes := a.Mem.Bytes()
	call, err := newSGCall(rt, func(lane uint64) error {
		r, c := int(lane/uint64(cols)), int(lane%uint64(cols))
		raw, err := sgReadIndex(a.Idx, r, c)
		if err != nil {
			return fmt.Errorf("tcrt: %s: the preflight found a bad displacement at (%d, %d), and reading it failed: %v: %w", OpGatherCAS, r, c, err, ErrBounds)
		}
		if _, err := fallback.CASAddress(a.Base, raw, idx.DType, r, c, memBytes, esz); err != nil {
			return err
		}
		return fmt.Errorf("tcrt: %s: the device preflight faulted lane (%d, %d), whose displacement %#x the host finds valid: %w", OpGatherCAS, r, c, raw, ErrDevice)
	})
	if err != nil {
		return err
	}
	slot := call.addr()
	check := sgLaunch(rt, ptx.SGCheckDisp, rows, cols, func(lg uint64) []uint64 {
		return []uint64{ptx.Ptr(slot), ptx.Ptr(pi), ptx.U32(it), ptx.U64(isr), ptx.U64(isc),
			ptx.U64(uint64(rows)), ptx.U64(uint64(cols)), lg, ptx.U64(uint64(a.Base)), ptx.U64(uint64(memBytes)), ptx.U32(el)}
	})
	eff := sgLaunch(rt, ptx.SGGatherCAS, rows, cols, func(lg uint64) []uint64 {
		return []uint64{ptx.Ptr(slot), ptx.Ptr(pd), ptx.Ptr(pm), ptx.Ptr(pi), ptx.U32(it),
			ptx.U64(isr), ptx.U64(isc), ptx.Ptr(pe), ptx.U64(esr), ptx.U64(esc), ptx.Ptr(pr), ptx.U64(rsr), ptx.U64(rsc),
			ptx.U64(uint64(rows)), ptx.U64(uint64(cols)), lg, ptx.U32(el), ptx.U64(dsr), ptx.U64(dsc), ptx.U64(uint64(a.Base))}
	})
	return call.run(l.Stream, check, sgPadLaunch(rt, dst, pd, slot), eff)
}
