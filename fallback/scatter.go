package fallback

import (
	"encoding/binary"
	"math"
	"unsafe"

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
// applied by Threads goroutines. Integer reductions (s32, u32, s64, u64
// add, max, min) are single hardware atomic instructions per element (LOCK
// XADD, CAS loops); everything else (float reductions, stores, sub-word
// elements) runs under the stripe locks (see stripes.go) with plain loads
// and stores: a row is updated a page segment at a time with vector adds,
// element-mode lanes are sorted by destination page and applied in address
// order, a lock taken once per page. Either way every element update is atomic with respect to every
// other tcrt op on the same memory.
//
// Unordered, lanes are split into chunks between the goroutines.
// Deterministic, each destination is owned by one goroutine (row mode: by
// its row; element mode: by its lock), which applies its lanes in lane
// order.
func ScatterFast(a *ScatterArgs) error {
	p := threads(a.Threads)
	rows, cols := gatherLanes(a.Mode, a.Idx.Tile)
	pp, err := resolveLanes(opScatter, a.Mode, &a.Idx, rows, cols, a.MemRows, a.OOB, p)
	defer putLanes(pp)
	if err != nil {
		return err
	}
	pos := *pp
	work := len(pos)
	if a.Mode == IndexRows {
		work *= a.Src.Tile.ValidCols
	}
	if a.Deterministic && work < 8192 {
		p = 1
	}
	switch {
	case lockFree(a.Src.Tile.DType, a.Op):
		scatterAtomic(a, pos, p)
	case a.Mode == IndexRows:
		scatterRowsLocked(a, pos, p)
	default:
		scatterElemsLocked(a, pos, p)
	}
	return nil
}

// lockFree reports whether op on elements of type d is one hardware atomic
// instruction per element (see stripes.go).
func lockFree(d tile.DType, op ScatterOp) bool {
	switch d {
	case tile.S32, tile.U32, tile.S64, tile.U64:
		return op != ScatterStore
	}
	return false
}

// scatterAtomic applies the lanes with one atomic read-modify-write per
// element.
func scatterAtomic(a *ScatterArgs, pos []int, p int) {
	src := a.Src.Tile
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
		return
	}
	// Deterministic: worker w owns the destinations hashing to w and walks
	// all lanes in order, applying its own.
	parallelFor(p, p, 1, func(lo, hi int) {
		for w := lo; w < hi; w++ {
			for l := 0; l < n; l++ {
				if q := pos[l]; q >= 0 && owner(q, p) == w {
					apply(l)
				}
			}
		}
	})
}

// scatterRowsLocked is row mode under the stripe locks: each lane's
// destination row is combined with its source row one page segment at a
// time, holding that page's lock.
func scatterRowsLocked(a *ScatterArgs, pos []int, p int) {
	src := a.Src.Tile
	d, sz, vc := src.DType, src.DType.Size(), src.ValidCols
	rb := vc * sz
	if rb == 0 {
		return
	}
	memBase := uintptr(unsafe.Pointer(unsafe.SliceData(a.Mem)))
	// update applies lane l; tmp holds a row when Src is not row-major.
	update := func(l int, tmp []byte) {
		q := pos[l]
		if q < 0 {
			return
		}
		dst := a.Mem[q*rb : (q+1)*rb]
		var row []byte
		if src.Layout == tile.RowMajor {
			row = a.Src.Data[l*src.Cols*sz:][:rb]
		} else {
			row = tmp[:rb]
			for c := range vc {
				storeLE(row, c*sz, sz, a.Src.elem(l, c))
			}
		}
		addr := memBase + uintptr(q*rb)
		for o := 0; o < rb; {
			// Elements whose first byte is in this page.
			next := (addr+uintptr(o))&^(1<<stripeShift-1) + 1<<stripeShift
			end := min(rb, o+roundUp(int(next-addr)-o, sz))
			lk := &stripes[stripeOf(addr+uintptr(o))]
			lk.Lock()
			combineRun(d, a.Op, dst[o:end], row[o:end])
			lk.Unlock()
			o = end
		}
	}
	n := len(pos)
	if !a.Deterministic {
		parallelFor(n, p, max(1, 16384/rb), func(lo, hi int) {
			tmp := make([]byte, rb)
			for l := lo; l < hi; l++ {
				// Random rows defeat the hardware prefetcher: ask for
				// the destination row prefetchAhead lanes on.
				if havePrefetch && l+prefetchAhead < hi {
					if q := pos[l+prefetchAhead]; q >= 0 {
						prefetchRange(unsafe.Pointer(&a.Mem[q*rb]), rb)
					}
				}
				update(l, tmp)
			}
		})
		return
	}
	parallelFor(p, p, 1, func(lo, hi int) {
		tmp := make([]byte, rb)
		for w := lo; w < hi; w++ {
			for l := 0; l < n; l++ {
				if q := pos[l]; q >= 0 && owner(q, p) == w {
					update(l, tmp)
				}
			}
		}
	})
}

// elemBatch bounds the lanes an element-mode worker sorts at once, and
// maxPageKeys the buckets it sorts them into.
const (
	elemBatch   = 1 << 18
	maxPageKeys = 1 << 16
)

// scatterElemsLocked is element mode under the stripe locks. Each worker
// takes its lanes a batch at a time and sorts the batch by destination page
// (stably: a counting sort, moving each lane's offset and value into
// place), then applies the lanes page after page, taking a page's lock when
// it changes: the destinations are visited in address order, a few lanes
// per page and lock, and the source is read in order. Unordered, the
// workers share out the lanes; deterministic, worker w takes every lane
// whose lock is w modulo p, so all lanes of one element are applied by one
// worker, batch after batch, in lane order.
func scatterElemsLocked(a *ScatterArgs, pos []int, p int) {
	src := a.Src.Tile
	d, sz, vc := src.DType, src.DType.Size(), src.ValidCols
	n := len(pos)
	dense := src.Layout == tile.RowMajor
	memBase := uintptr(unsafe.Pointer(unsafe.SliceData(a.Mem)))
	page0 := memBase >> stripeShift
	pages := int((memBase+uintptr(len(a.Mem)))>>stripeShift-page0) + 1
	shift := 0 // pages per bucket: 1<<shift
	for pages>>shift > maxPageKeys {
		shift++
	}
	buckets := pages>>shift + 1
	run := func(lo, hi, w, p int) {
		size := min(elemBatch, hi-lo)
		keys := make([]int32, size)
		offs := make([]int, size)
		vals := make([]uint64, size)
		count := make([]int32, buckets+1)
		for b0 := lo; b0 < hi; b0 += elemBatch {
			b1 := min(hi, b0+elemBatch)
			clear(count)
			for l := b0; l < b1; l++ {
				k := buckets // skipped
				if q := pos[l]; q >= 0 {
					addr := memBase + uintptr(q*sz)
					if p == 1 || stripeOf(addr)%p == w {
						k = int((addr>>stripeShift - page0) >> shift)
					}
				}
				keys[l-b0] = int32(k)
				count[k]++
			}
			start := int32(0)
			for k := range count {
				start, count[k] = start+count[k], start
			}
			for l := b0; l < b1; l++ {
				k := keys[l-b0]
				i := count[k]
				count[k]++
				if k == int32(buckets) {
					continue
				}
				offs[i] = pos[l] * sz
				if dense {
					vals[i] = loadLE(a.Src.Data, (l/vc*src.Cols+l%vc)*sz, sz)
				} else {
					vals[i] = a.Src.elem(l/vc, l%vc)
				}
			}
			// count[buckets-1] is now the end of the lanes to apply.
			held := -1
			for i := range int(count[buckets-1]) {
				off := offs[i]
				if k := stripeOf(memBase + uintptr(off)); k != held {
					if held >= 0 {
						stripes[held].Unlock()
					}
					held = k
					stripes[held].Lock()
				}
				combineElem(d, a.Op, a.Mem, off, vals[i])
			}
			if held >= 0 {
				stripes[held].Unlock()
			}
		}
	}
	if !a.Deterministic {
		parallelFor(n, p, 4096, func(lo, hi int) { run(lo, hi, 0, 1) })
		return
	}
	parallelFor(p, p, 1, func(lo, hi int) {
		for w := lo; w < hi; w++ {
			run(0, n, w, p)
		}
	})
}

// combineElem replaces the element at off of mem with Combine(op, d, e, v),
// with plain loads and stores (the caller holds its lock).
func combineElem(d tile.DType, op ScatterOp, mem []byte, off int, v uint64) {
	if d == tile.F32 && op == ScatterAdd {
		p := (*float32)(unsafe.Pointer(&mem[off]))
		*p += math.Float32frombits(uint32(v))
		return
	}
	sz := d.Size()
	storeLE(mem, off, sz, Combine(op, d, loadLE(mem, off, sz), v))
}

// combineRun combines a run of source elements into the destination
// elements of the same length, element by element (see combineElem): f32
// adds with vector adds, stores as a copy.
func combineRun(d tile.DType, op ScatterOp, dst, src []byte) {
	switch {
	case op == ScatterStore:
		copy(dst, src)
	case d == tile.F32 && op == ScatterAdd:
		n := len(dst) / 4
		addF32(unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(dst))), n),
			unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(src))), n))
	default:
		sz := d.Size()
		for o := 0; o < len(dst); o += sz {
			storeLE(dst, o, sz, Combine(op, d, loadLE(dst, o, sz), loadLE(src, o, sz)))
		}
	}
}

// owner spreads destinations over p workers.
func owner(q, p int) int {
	if p == 1 {
		return 0
	}
	h := uint64(q) * 0x9e3779b97f4a7c15
	return int((h >> 32) % uint64(p))
}

// storeLE writes a little-endian element of 1, 2, 4 or 8 bytes.
func storeLE(b []byte, off, size int, v uint64) {
	switch size {
	case 4:
		binary.LittleEndian.PutUint32(b[off:], uint32(v))
	case 8:
		binary.LittleEndian.PutUint64(b[off:], v)
	case 2:
		binary.LittleEndian.PutUint16(b[off:], uint16(v))
	default:
		b[off] = byte(v)
	}
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
