package fallback

import (
	"encoding/binary"
	"math"

	"github.com/tcrt-go/tcrt/tile"
)

// ScatterOp is what a scatter does with each value it sends (defined in
// package tile).
type ScatterOp = tile.ScatterOp

// Scatter operations.
const (
	ScatterStore = tile.ScatterStore
	ScatterAdd   = tile.ScatterAdd
	ScatterMax   = tile.ScatterMax
	ScatterMin   = tile.ScatterMin
)

// ScatterArgs is one scatter on host memory.
//
// Row mode: Mem is a row-major table of MemRows rows of Src.Tile.ValidCols
// elements; Idx has the valid shape ValidRows × 1 and src[r, :] goes to row
// idx[r]. Element mode: Mem is MemRows elements; Idx has Src's valid shape
// and src[r, c] goes to element idx[r, c]. Lanes are numbered in row-major
// order of the valid region (row mode: by row). Mem's element type is
// Src's.
//
// With Deterministic set, the updates of each destination element are
// applied in increasing lane order, so a plain scatter leaves the value of
// the largest lane and every reduction gives the same bits on every run —
// the reference's result. Otherwise lanes run in any order: a plain scatter
// leaves one of the values (per element), integer and max/min reductions are
// still exact, float adds may round differently from run to run.
type ScatterArgs struct {
	Mode          IndexMode
	Op            ScatterOp
	Deterministic bool
	Mem           []byte
	MemRows       int
	Idx           TileData
	Src           TileData
	OOB           tile.OOB
	// Threads bounds the goroutines used; 0 means GOMAXPROCS.
	Threads int
}

const opScatter = "mscatter"

// refCombine is the reference's reduction, written out by type: the new
// value of an element holding old when v arrives (see Combine for the
// rules, which the fast path implements separately).
func refCombine(op ScatterOp, d tile.DType, old, v uint64) uint64 {
	if op == ScatterStore {
		return v
	}
	switch d {
	case tile.S32:
		a, b := int32(old), int32(v)
		switch op {
		case ScatterAdd:
			return uint64(uint32(a + b))
		case ScatterMax:
			return uint64(uint32(max(a, b)))
		case ScatterMin:
			return uint64(uint32(min(a, b)))
		}
	case tile.U32:
		a, b := uint32(old), uint32(v)
		switch op {
		case ScatterAdd:
			return uint64(a + b)
		case ScatterMax:
			return uint64(max(a, b))
		case ScatterMin:
			return uint64(min(a, b))
		}
	case tile.F64:
		return math.Float64bits(math.Float64frombits(old) + math.Float64frombits(v))
	case tile.F16:
		return uint64(tile.F32ToF16(tile.F16ToF32(uint16(old)) + tile.F16ToF32(uint16(v))))
	case tile.BF16:
		return uint64(tile.F32ToBF16(tile.BF16ToF32(uint16(old)) + tile.BF16ToF32(uint16(v))))
	case tile.F32:
		a, b := math.Float32frombits(uint32(old)), math.Float32frombits(uint32(v))
		switch op {
		case ScatterAdd:
			return uint64(math.Float32bits(a + b))
		case ScatterMax, ScatterMin:
			if a != a || b != b { // NaN held stays, NaN arriving is dropped
				return old
			}
			if a == 0 && b == 0 { // order −0 below +0
				negA, negB := math.Signbit(float64(a)), math.Signbit(float64(b))
				if (op == ScatterMax && negA && !negB) || (op == ScatterMin && !negA && negB) {
					return v
				}
				return old
			}
			if (op == ScatterMax && b > a) || (op == ScatterMin && b < a) {
				return v
			}
			return old
		}
	}
	return old
}

// ScatterRef is the reference scatter: a preflight of every index, then the
// lanes one after another in increasing order with plain reads and writes.
// It returns an access fault (ErrBounds) with Mem unchanged when an index is
// out of bounds under OOBError.
func ScatterRef(a *ScatterArgs) error {
	idx, src := &a.Idx, a.Src.Tile
	rows, cols := gatherLanes(a.Mode, idx.Tile)
	signed := idx.Tile.DType.IsSigned()
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			raw := idx.index(r, c)
			if _, ok := tile.ResolveIndex(raw, signed, a.MemRows, a.OOB); !ok && a.OOB == tile.OOBError {
				return oobFault(opScatter, a.Mode, raw, idx.Tile.DType, r, c, a.MemRows)
			}
		}
	}
	sz := src.DType.Size()
	for r := 0; r < src.ValidRows; r++ {
		for c := 0; c < src.ValidCols; c++ {
			var raw uint64
			if a.Mode == IndexRows {
				raw = idx.index(r, 0)
			} else {
				raw = idx.index(r, c)
			}
			pos, ok := tile.ResolveIndex(raw, signed, a.MemRows, a.OOB)
			if !ok { // OOBSkip
				continue
			}
			elem := pos
			if a.Mode == IndexRows {
				elem = pos*src.ValidCols + c
			}
			off := elem * sz
			storePlain(a.Mem, off, sz, refCombine(a.Op, src.DType, loadPlain(a.Mem, off, sz), a.Src.elem(r, c)))
		}
	}
	return nil
}

// ScatterFast is the parallel scatter: a parallel preflight, then the lanes
// applied with atomic operations by Threads goroutines (unordered: lanes
// split into chunks; deterministic: lanes partitioned by destination, each
// partition applied in lane order by one goroutine). Every element update
// is one atomic read-modify-write, so other scatters running on the same
// memory at the same time stay atomic too.
func ScatterFast(a *ScatterArgs) error {
	p := threads(a.Threads)
	src := a.Src.Tile
	rows, cols := gatherLanes(a.Mode, a.Idx.Tile)
	pos, err := resolveLanes(opScatter, a.Mode, &a.Idx, rows, cols, a.MemRows, a.OOB, p)
	defer putLanes(pos)
	if err != nil {
		return err
	}
	d, sz, vc := src.DType, src.DType.Size(), src.ValidCols
	// apply sends lane l (a row in row mode) to its destination.
	apply := func(l int) {
		q := pos[l]
		if q < 0 {
			return
		}
		if a.Mode == IndexRows {
			base := q * vc * sz
			if src.Layout == tile.RowMajor {
				row := a.Src.Data[l*src.Cols*sz:]
				for c := 0; c < vc; c++ {
					AtomicRMW(a.Mem, base+c*sz, d, a.Op, loadLE(row, c*sz, sz))
				}
				return
			}
			for c := 0; c < vc; c++ {
				AtomicRMW(a.Mem, base+c*sz, d, a.Op, a.Src.elem(l, c))
			}
			return
		}
		AtomicRMW(a.Mem, q*sz, d, a.Op, a.Src.elem(l/vc, l%vc))
	}
	n := len(pos)
	if !a.Deterministic {
		grain := 4096
		if a.Mode == IndexRows {
			grain = max(1, 4096/vc)
		}
		parallelFor(n, p, grain, func(lo, hi int) {
			for l := lo; l < hi; l++ {
				apply(l)
			}
		})
		return nil
	}
	// Deterministic: worker w owns the destinations hashing to w and walks
	// all lanes in order, applying its own. Every update of one destination
	// is made by one goroutine in increasing lane order.
	work := n
	if a.Mode == IndexRows {
		work = n * vc
	}
	if work < 8192 {
		p = 1
	}
	parallelFor(p, p, 1, func(lo, hi int) {
		for w := lo; w < hi; w++ {
			for l := 0; l < n; l++ {
				if q := pos[l]; q >= 0 && owner(q, p) == w {
					apply(l)
				}
			}
		}
	})
	return nil
}

// owner spreads destinations over p workers.
func owner(q, p int) int {
	if p == 1 {
		return 0
	}
	h := uint64(q) * 0x9e3779b97f4a7c15
	return int((h >> 32) % uint64(p))
}

// loadLE reads a little-endian element of 1, 2, 4 or 8 bytes.
func loadLE(b []byte, off, size int) uint64 {
	switch size {
	case 4:
		return uint64(binary.LittleEndian.Uint32(b[off:]))
	case 8:
		return binary.LittleEndian.Uint64(b[off:])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b[off:]))
	}
	return uint64(b[off])
}
