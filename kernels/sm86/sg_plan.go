package sm86

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/tile"
)

// The device-level operators of the scatter-gather family: each Plan
// function turns a call over device memory, given as plain values (device
// addresses, tile descriptors, codes), into the launches of this module's
// kernels, in order, on one stream. A caller registers them through its
// device seam: Supports first (nil means the plan covers the call), then
// zero the fault slot, run the launches, read the slot back and report
// SGFault's lane as the CPU's access fault.

// ErrSGUnsupported marks a call a plan does not cover (the caller runs it
// elsewhere, e.g. on the host).
var ErrSGUnsupported = errors.New("sm86: not covered by the SASS scatter-gather kernels")

// Launch is one kernel launch of a plan: the device seam's launch
// description, with the kernel's name in the module as Func, blocks and
// threads along x only (SGBlock, QuantBlock), and the parameter slots in
// the kernel's order (pointers and u32 words each as a uint64). Plans
// leave Module nil; the caller launches in this package's module.
type Launch = backend.Launch

// SGOp is a scatter update; the values are fallback.ScatterOp's.
type SGOp uint8

// Scatter updates.
const (
	SGStore SGOp = iota
	SGAdd
	SGMax
	SGMin
)

// SGGather is one gather over device memory (fallback.GatherArgs' meaning).
// Rows selects row mode: Mem holds MemRows rows of DstTile.ValidCols
// elements and IdxTile is ValidRows × 1; else element mode: Mem holds
// MemRows elements and IdxTile has DstTile's valid shape. Slot is an
// 8-byte fault slot the caller zeroes before the launches; Pos is scratch
// of 4 bytes per index lane.
type SGGather struct {
	Rows                     bool
	Slot, Pos, Mem, Idx, Dst uint64
	MemRows                  int
	IdxTile, DstTile         tile.Tile
	OOB                      tile.OOB
}

// SGScatter is one scatter over device memory (fallback.ScatterArgs'
// meaning), with Slot and Pos as in SGGather. Win is scratch of 4 bytes per
// memory row (element mode: per memory element) for a Deterministic store
// (ScatterWinBytes), unused otherwise.
type SGScatter struct {
	Rows                          bool
	Op                            SGOp
	Deterministic                 bool
	Slot, Pos, Win, Mem, Idx, Src uint64
	MemRows                       int
	IdxTile, SrcTile              tile.Tile
	OOB                           tile.OOB
}

// SGFault returns the first faulting index lane recorded in a fault slot
// (the slot's 8 bytes as a little-endian uint64) and whether there is one.
func SGFault(slot uint64) (lane int, faulted bool) {
	if slot == 0 {
		return 0, false
	}
	return int(^slot), true
}

// strides returns the byte strides of element (r, c) of t (resolved).
func strides(t tile.Tile) (sr, sc int) {
	sz := t.DType.Size()
	if t.Layout == tile.ColMajor {
		return sz, t.Rows * sz
	}
	return t.Cols * sz, sz
}

// SGLimit is the bound on lane counts, table rows, positions and tile
// bytes: lanes and positions are u32 below SGDropped and the lane division
// (DivMagic) is exact below 2^31.
const SGLimit = 1 << 31

func unsupported(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrSGUnsupported, fmt.Sprintf(format, a...))
}

// checkIndex is what every plan requires of the index tile and memory.
func checkIndex(idx tile.Tile, lanes, memRows int, oob tile.OOB) error {
	if !tile.IsIndexType(idx.DType) {
		return unsupported("index type %v", idx.DType)
	}
	if !oob.Valid() {
		return unsupported("policy %v", oob)
	}
	if lanes < 1 || lanes >= SGLimit {
		return unsupported("%d index lanes (1 to 2^31-1)", lanes)
	}
	if memRows < 1 || memRows >= SGLimit {
		return unsupported("memory of %d rows (1 to 2^31-1)", memRows)
	}
	if idx.Bytes() > math.MaxUint32 {
		return unsupported("index tile of %d bytes (at most 2^32-1)", idx.Bytes())
	}
	return nil
}

// resolveLaunch is the first launch of every plan.
func resolveLaunch(slot, pos, idx uint64, it tile.Tile, memRows int, oob tile.OOB) Launch {
	it = it.Resolved()
	rows, cols := it.ValidRows, it.ValidCols
	lanes := rows * cols
	isr, isc := strides(it)
	n := uint64(memRows)
	m := math.MaxUint64 / n
	c64 := bits.Rem64(1, 0, n) // 2^64 mod n
	magic, shift := DivMagic(uint32(cols))
	return Launch{
		Func: "tcrt_sass_sg_resolve_" + it.DType.String(),
		Grid: [3]int{laneGrid(lanes), 1, 1}, Block: [3]int{SGBlock, 1, 1},
		Params: []uint64{slot, pos, idx, uint64(lanes), uint64(cols), uint64(magic), uint64(shift),
			uint64(uint32(-cols)), uint64(isr), uint64(isc), n, uint64(uint32(-memRows)), n - 1, uint64(oob),
			n - c64, m & math.MaxUint32, m >> 32},
	}
}

func laneGrid(n int) int { return max(1, (n+SGBlock-1)/SGBlock) }

// GatherSupports reports whether PlanGather covers g: nil, or an error
// wrapping ErrSGUnsupported naming the rule. Covered: both modes; index
// types s32, u32, s64, u64 at any strides; every policy; elements of 1, 2,
// 4 or 8 bytes; any valid region inside the physical one, either layout,
// every pad kind; fewer than 2^31 index lanes, destination elements and
// memory rows; index and destination tiles under 4 GiB.
func GatherSupports(g SGGather) error {
	it, dt := g.IdxTile.Resolved(), g.DstTile.Resolved()
	sz := dt.DType.Size()
	if sz != 1 && sz != 2 && sz != 4 && sz != 8 {
		return unsupported("element type %v", dt.DType)
	}
	if g.OOB == tile.OOBSkip {
		return unsupported("policy %v for a gather", g.OOB)
	}
	if dt.Elements() >= SGLimit || dt.Bytes() > math.MaxUint32 {
		return unsupported("destination of %d elements", dt.Elements())
	}
	return checkIndex(it, it.ValidRows*it.ValidCols, g.MemRows, g.OOB)
}

// PlanGather returns the launches of gather g: resolve, the copy, and the
// pad fill when the destination has a pad and a non-valid region. Row mode
// copies each row in the widest units (16, 8, 4, 2 or 1 bytes) that divide
// the row's bytes and align every row of the table and the destination.
func PlanGather(g SGGather) ([]Launch, error) {
	if err := GatherSupports(g); err != nil {
		return nil, err
	}
	it, dt := g.IdxTile.Resolved(), g.DstTile.Resolved()
	sz := dt.DType.Size()
	out := []Launch{resolveLaunch(g.Slot, g.Pos, g.Idx, it, g.MemRows, g.OOB)}
	sr, sc := strides(dt)
	var lanes, cols, pr, pc, mr, mc, w int
	if g.Rows {
		rowBytes := dt.ValidCols * sz
		w = sz
		if sc == sz || dt.ValidCols == 1 {
			w = 16
			for w > sz && (rowBytes%w != 0 || sr%w != 0 || g.Mem%uint64(w) != 0 || g.Dst%uint64(w) != 0) {
				w /= 2
			}
			sc = w
		}
		cols = rowBytes / w
		lanes, pr, pc, mr, mc = dt.ValidRows*cols, 1, 0, rowBytes, w
	} else {
		w, cols = sz, dt.ValidCols
		lanes, pr, pc, mr, mc = dt.ValidRows*cols, cols, 1, sz, 0
	}
	magic, shift := DivMagic(uint32(cols))
	out = append(out, Launch{
		Func: fmt.Sprintf("tcrt_sass_sg_gather_%d", w), Grid: [3]int{laneGrid((lanes + GatherLanesPerThread(w) - 1) / GatherLanesPerThread(w)), 1, 1}, Block: [3]int{SGBlock, 1, 1},
		Params: []uint64{g.Slot, g.Pos, g.Dst, g.Mem, uint64(lanes), uint64(cols), uint64(magic), uint64(shift),
			uint64(uint32(-cols)), uint64(pr), uint64(pc), uint64(mr), uint64(mc), uint64(sr), uint64(sc)},
	})
	if l, ok := padLaunch(g.Slot, g.Dst, dt); ok {
		out = append(out, l)
	}
	return out, nil
}

// padLaunch is the pad fill of a destination tile, if it needs one.
func padLaunch(slot, dst uint64, dt tile.Tile) (Launch, bool) {
	pat, ok := dt.Pad.PadPattern(dt.DType)
	if !ok || dt.ValidElements() == dt.Elements() {
		return Launch{}, false
	}
	sr, sc := strides(dt)
	magic, shift := DivMagic(uint32(dt.Cols))
	n := dt.Elements()
	return Launch{
		Func: fmt.Sprintf("tcrt_sass_sg_pad_%d", dt.DType.Size()), Grid: [3]int{laneGrid(n), 1, 1}, Block: [3]int{SGBlock, 1, 1},
		Params: []uint64{slot, dst, uint64(n), uint64(dt.Cols), uint64(magic), uint64(shift), uint64(uint32(-dt.Cols)),
			uint64(dt.ValidRows), uint64(dt.ValidCols), uint64(sr), uint64(sc), pat & math.MaxUint32, pat >> 32},
	}, true
}

// scatterKernelFor names the kernel of an update on type d, "" for none.
func scatterKernelFor(op SGOp, d tile.DType) string {
	if op == SGStore {
		return fmt.Sprintf("tcrt_sass_sg_store%d", 8*d.Size())
	}
	k := map[[2]int]string{
		{int(SGAdd), int(tile.S32)}: "add_i32", {int(SGAdd), int(tile.U32)}: "add_i32",
		{int(SGMax), int(tile.S32)}: "max_s32", {int(SGMin), int(tile.S32)}: "min_s32",
		{int(SGMax), int(tile.U32)}: "max_u32", {int(SGMin), int(tile.U32)}: "min_u32",
		{int(SGAdd), int(tile.F64)}: "add_f64",
		{int(SGMax), int(tile.F32)}: "max_f32", {int(SGMin), int(tile.F32)}: "min_f32",
		{int(SGAdd), int(tile.F32)}: "add_f32", {int(SGAdd), int(tile.F16)}: "add_f16",
		{int(SGAdd), int(tile.BF16)}: "add_bf16",
	}[[2]int{int(op), int(d)}]
	if k == "" {
		return ""
	}
	return "tcrt_sass_sg_" + k
}

// ScatterSupports reports whether PlanScatter covers s: nil, or an error
// wrapping ErrSGUnsupported naming the rule. Covered: both modes; index
// types and strides as in GatherSupports; policies error, clamp, wrap and
// skip; store of 1-, 2-, 4- and 8-byte elements (any order among
// duplicates; Deterministic: the largest lane's value, by a claim pass,
// see scatter_det.go); add, max and min on s32 and u32
// (exact, so Deterministic too); max and min on f32 with the CPU's NaN
// and −0 rules (compare-and-swap loops; exact, so Deterministic too); add
// on f64 (not Deterministic); add on f32, f16 and bf16 with the CPU's
// rounding, subnormals and NaN bits (compare-and-swap loops on the
// element's 32-bit word, see faddKernel; the order among duplicates is
// free, so not Deterministic). A 16-bit add reads and swaps the aligned
// word holding the element, which must lie in the same device allocation
// (the runtime's are 512-byte aligned and sized).
func ScatterSupports(s SGScatter) error {
	it, st := s.IdxTile.Resolved(), s.SrcTile.Resolved()
	sz := st.DType.Size()
	if sz != 1 && sz != 2 && sz != 4 && sz != 8 {
		return unsupported("element type %v", st.DType)
	}
	k := scatterKernelFor(s.Op, st.DType)
	if k == "" {
		return unsupported("scatter op %d on %v", s.Op, st.DType)
	}
	if s.Deterministic && s.Op == SGAdd && st.DType.IsFloat() {
		return unsupported("deterministic %v add (the updates of an element in lane order need a sort by destination)", st.DType)
	}
	if s.OOB == tile.OOBZero {
		return unsupported("policy %v for a scatter", s.OOB)
	}
	if st.Elements() >= SGLimit || st.Bytes() > math.MaxUint32 {
		return unsupported("source of %d elements", st.Elements())
	}
	return checkIndex(it, it.ValidRows*it.ValidCols, s.MemRows, s.OOB)
}

// ScatterWinBytes is the scratch PlanScatter needs at SGScatter.Win: 4
// bytes per destination of a Deterministic store, else 0.
func ScatterWinBytes(s SGScatter) int {
	if !s.Deterministic || s.Op != SGStore {
		return 0
	}
	return 4 * s.MemRows // rows, or elements in element mode
}

// PlanScatter returns the launches of scatter s: resolve, then the update
// (a Deterministic store: zero Win, claim, then the winners' stores).
func PlanScatter(s SGScatter) ([]Launch, error) {
	if err := ScatterSupports(s); err != nil {
		return nil, err
	}
	it, st := s.IdxTile.Resolved(), s.SrcTile.Resolved()
	sz := st.DType.Size()
	sr, sc := strides(st)
	cols := st.ValidCols
	lanes := st.ValidRows * cols
	pr, pc, mr, mc := cols, 1, sz, 0
	if s.Rows {
		pr, pc, mr, mc = 1, 0, cols*sz, sz
	}
	magic, shift := DivMagic(uint32(cols))
	effect := Launch{
		Func: scatterKernelFor(s.Op, st.DType), Grid: [3]int{laneGrid(lanes), 1, 1}, Block: [3]int{SGBlock, 1, 1},
		Params: []uint64{s.Slot, s.Pos, s.Mem, s.Src, uint64(lanes), uint64(cols), uint64(magic), uint64(shift),
			uint64(uint32(-cols)), uint64(pr), uint64(pc), uint64(mr), uint64(mc), uint64(sr), uint64(sc)},
	}
	out := []Launch{resolveLaunch(s.Slot, s.Pos, s.Idx, it, s.MemRows, s.OOB)}
	if !s.Deterministic || s.Op != SGStore {
		return append(out, effect), nil
	}
	// the winners: win[d] = 1 + the largest index lane aimed at d
	dests := s.MemRows
	zm, zs := DivMagic(uint32(dests))
	zero := Launch{Func: "tcrt_sass_sg_pad_4", Grid: [3]int{laneGrid(dests), 1, 1}, Block: [3]int{SGBlock, 1, 1},
		Params: []uint64{s.Slot, s.Win, uint64(dests), uint64(dests), uint64(zm), uint64(zs), uint64(uint32(-dests)),
			0, 0, uint64(4 * dests), 4, 0, 0}}
	idxLanes := it.ValidRows * it.ValidCols
	claim := Launch{Func: "tcrt_sass_sg_claim", Grid: [3]int{laneGrid(idxLanes), 1, 1}, Block: [3]int{SGBlock, 1, 1},
		Params: []uint64{s.Slot, s.Pos, s.Win, uint64(idxLanes), 1, 0, 0, uint64(math.MaxUint32)}}
	effect.Func = fmt.Sprintf("tcrt_sass_sg_detstore%d", 8*sz)
	effect.Params = append(effect.Params, s.Win)
	return append(out, zero, claim, effect), nil
}

// SGGatherCAS is one gather-compare-and-swap over device memory
// (fallback.GatherCASArgs' meaning): the element of DstTile's type at byte
// Base + idx[r, c] of the MemBytes-byte memory at Mem is compared with
// exp[r, c] and replaced by rep[r, c] when equal, atomically; dst[r, c]
// gets the value observed. IdxTile, ExpTile and RepTile have DstTile's
// valid shape. Slot is zeroed by the caller before the launches; Pos is
// scratch of 8 bytes per lane.
type SGGatherCAS struct {
	Slot, Pos, Mem, Idx, Exp, Rep, Dst uint64
	MemBytes, Base                     int
	IdxTile, ExpTile, RepTile, DstTile tile.Tile
}

// GatherCASSupports reports whether PlanGatherCAS covers g: nil, or an
// error wrapping ErrSGUnsupported naming the rule. Covered: elements of 1,
// 2, 4 and 8 bytes; index types s32, u32, s64, u64; any strides, layouts,
// valid regions and pads; Mem 8-byte aligned and at least one element
// long (a multiple of 4 bytes for 8- and 16-bit elements); Base in [0, MemBytes]; fewer than 2^31 lanes; tiles under 4 GiB.
func GatherCASSupports(g SGGatherCAS) error {
	dt := g.DstTile.Resolved()
	sz := dt.DType.Size()
	if sz != 1 && sz != 2 && sz != 4 && sz != 8 {
		return unsupported("element type %v", dt.DType)
	}
	if g.Mem%8 != 0 || g.MemBytes < sz || g.Base < 0 || g.Base > g.MemBytes {
		return unsupported("memory at %#x of %d bytes with base %d", g.Mem, g.MemBytes, g.Base)
	}
	if sz < 4 && g.MemBytes%4 != 0 {
		// 8- and 16-bit lanes CAS their containing 32-bit word, which must
		// lie inside the memory.
		return unsupported("%d-bit elements in a memory of %d bytes (a multiple of 4 needed)", 8*sz, g.MemBytes)
	}
	for _, t := range []tile.Tile{dt, g.ExpTile.Resolved(), g.RepTile.Resolved()} {
		if t.Elements() >= SGLimit || t.Bytes() > math.MaxUint32 {
			return unsupported("tile of %d elements", t.Elements())
		}
	}
	it := g.IdxTile.Resolved()
	if !tile.IsIndexType(it.DType) {
		return unsupported("index type %v", it.DType)
	}
	if n := dt.ValidRows * dt.ValidCols; n < 1 || n >= SGLimit || it.Bytes() > math.MaxUint32 {
		return unsupported("%d lanes", n)
	}
	return nil
}

// PlanGatherCAS returns the launches of gather-CAS g: the displacement
// preflight, the compare-and-swaps, and the pad fill when the destination
// has a pad and a non-valid region.
func PlanGatherCAS(g SGGatherCAS) ([]Launch, error) {
	if err := GatherCASSupports(g); err != nil {
		return nil, err
	}
	it, dt := g.IdxTile.Resolved(), g.DstTile.Resolved()
	sz := dt.DType.Size()
	rows, cols := dt.ValidRows, dt.ValidCols
	lanes := rows * cols
	magic, shift := DivMagic(uint32(cols))
	lw := []uint64{uint64(lanes), uint64(cols), uint64(magic), uint64(shift), uint64(uint32(-cols))}
	isr, isc := strides(it)
	last := uint64(g.MemBytes - sz)
	check := Launch{Func: "tcrt_sass_sg_checkdisp_" + it.DType.String(), Grid: [3]int{laneGrid(lanes), 1, 1}, Block: [3]int{SGBlock, 1, 1},
		Params: append(append([]uint64{g.Slot, g.Pos, g.Idx}, lw...), uint64(isr), uint64(isc),
			uint64(g.Base), 0, last&math.MaxUint32, last>>32, uint64(sz-1))}
	dsr, dsc := strides(dt)
	esr, esc := strides(g.ExpTile.Resolved())
	rsr, rsc := strides(g.RepTile.Resolved())
	cas := Launch{Func: fmt.Sprintf("tcrt_sass_sg_cas_%d", sz), Grid: [3]int{laneGrid(lanes), 1, 1}, Block: [3]int{SGBlock, 1, 1},
		Params: append(append([]uint64{g.Slot, g.Pos, g.Dst, g.Mem, g.Exp, g.Rep}, lw...),
			uint64(dsr), uint64(dsc), uint64(esr), uint64(esc), uint64(rsr), uint64(rsc))}
	out := []Launch{check, cas}
	if l, ok := padLaunch(g.Slot, g.Dst, dt); ok {
		out = append(out, l)
	}
	return out, nil
}

// GatherPerThread is how many lanes a thread of the 1- and 2-byte element
// gathers copies: their position loads, then their data loads, are issued
// together, so a thread keeps twice the bytes in flight of a one-lane
// thread (see MemoryEstimates); wider elements keep one lane a thread.
const GatherPerThread = 2

// GatherLanesPerThread is GatherPerThread for elements of b bytes.
func GatherLanesPerThread(b int) int {
	if b <= 2 {
		return GatherPerThread
	}
	return 1
}

// SGBlock is the thread-block size of every scatter-gather kernel.
const SGBlock = 256
