package fallback

import (
	"fmt"
	goruntime "runtime"
	"sync"
	"unsafe"

	"github.com/klauspost/cpuid/v2"

	"github.com/tcrt-go/tcrt/tile"
)

// IndexMode says what an index of a gather or scatter selects (defined in
// package tile).
type IndexMode = tile.IndexMode

// Index modes.
const (
	IndexRows     = tile.IndexRows
	IndexElements = tile.IndexElements
)

// TileData is a resolved tile descriptor with its storage (Tile.Bytes()
// bytes, elements little-endian).
type TileData struct {
	Tile tile.Tile
	Data []byte
}

// index reads the index at valid coordinate (r, c) as raw bits.
func (t *TileData) index(r, c int) uint64 {
	return tile.LoadIndex(t.Tile.DType, t.Data, t.Tile.At(r, c))
}

// elem reads the raw bits of element (r, c).
func (t *TileData) elem(r, c int) uint64 {
	sz := t.Tile.DType.Size()
	return loadPlain(t.Data, t.Tile.At(r, c)*sz, sz)
}

// GatherArgs is one gather on host memory.
//
// Row mode: Mem is a row-major table of MemRows rows of Dst.Tile.ValidCols
// elements; Idx has the valid shape ValidRows × 1 and dst[r, :] gets row
// idx[r]. Element mode: Mem is MemRows elements; Idx has Dst's valid shape
// and dst[r, c] gets element idx[r, c]. Elements are copied as raw bits
// (Dst's element type gives their size); the non-valid region of Dst gets
// its pad. OOB is the policy for indices outside [0, MemRows).
type GatherArgs struct {
	Mode    IndexMode
	Mem     []byte
	MemRows int
	Idx     TileData
	Dst     TileData
	OOB     tile.OOB
	// Threads bounds the goroutines used; 0 means GOMAXPROCS.
	Threads int
}

// opGather is the op name in errors.
const opGather = "mgather"

// gatherLanes is the number of index lanes: rows (row mode) or valid
// elements (element mode), and the valid columns per lane row.
func gatherLanes(mode IndexMode, idx tile.Tile) (rows, cols int) {
	if mode == IndexRows {
		return idx.ValidRows, 1
	}
	return idx.ValidRows, idx.ValidCols
}

// oobFault is the access fault of an index outside its memory.
func oobFault(op string, mode IndexMode, raw uint64, d tile.DType, r, c, n int) error {
	what := "elements"
	if mode == IndexRows {
		what = "rows"
	}
	return tile.Errorf(tile.ErrBounds, op, "idx", "index %s at (%d, %d) is outside the memory of %d %s", fmtIndex(raw, d), r, c, n, what)
}

func fmtIndex(raw uint64, d tile.DType) string {
	if d.IsSigned() {
		return fmt.Sprint(int64(raw))
	}
	return fmt.Sprint(raw)
}

// GatherRef is the reference gather: a preflight of every index, then one
// lane after another into a staged copy of the destination, padded and
// published at the end. It returns an access fault (ErrBounds) and leaves
// Dst unchanged when an index is out of bounds under OOBError.
func GatherRef(a *GatherArgs) error {
	idx, dst := &a.Idx, a.Dst.Tile
	rows, cols := gatherLanes(a.Mode, idx.Tile)
	signed := idx.Tile.DType.IsSigned()
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			raw := idx.index(r, c)
			if _, ok := tile.ResolveIndex(raw, signed, a.MemRows, a.OOB); !ok && a.OOB == tile.OOBError {
				return oobFault(opGather, a.Mode, raw, idx.Tile.DType, r, c, a.MemRows)
			}
		}
	}
	staged := tile.Stage(a.Dst.Data)
	tile.FillPad(dst, staged)
	sz := dst.DType.Size()
	for r := 0; r < dst.ValidRows; r++ {
		for c := 0; c < dst.ValidCols; c++ {
			var raw uint64
			var elem int
			if a.Mode == IndexRows {
				raw = idx.index(r, 0)
			} else {
				raw = idx.index(r, c)
			}
			pos, ok := tile.ResolveIndex(raw, signed, a.MemRows, a.OOB)
			var v uint64 // zero for an OOBZero lane
			if ok {
				if a.Mode == IndexRows {
					elem = pos*dst.ValidCols + c
				} else {
					elem = pos
				}
				v = loadPlain(a.Mem, elem*sz, sz)
			}
			storePlain(staged, dst.At(r, c)*sz, sz, v)
		}
	}
	tile.Publish(a.Dst.Data, staged)
	return nil
}

// threads resolves a Threads field.
func threads(n int) int {
	if n <= 0 {
		return goruntime.GOMAXPROCS(0)
	}
	return n
}

// parallelFor splits [0, n) into at most p contiguous chunks of at least
// grain items and runs fn on each, in parallel.
func parallelFor(n, p, grain int, fn func(lo, hi int)) {
	if grain < 1 {
		grain = 1
	}
	chunks := min(p, (n+grain-1)/grain)
	if chunks <= 1 {
		if n > 0 {
			fn(0, n)
		}
		return
	}
	var wg sync.WaitGroup
	var gp goPanic
	step := (n + chunks - 1) / chunks
	for lo := 0; lo < n; lo += step {
		hi := min(n, lo+step)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer gp.catch()
			fn(lo, hi)
		}()
	}
	wg.Wait()
	gp.rethrow()
}

// resolveLanes is the parallel preflight of a gather or scatter: it
// resolves every lane's index (lane = r·cols + c) to a position, −1 for a
// lane dropped by OOBZero or OOBSkip, and returns the fault of the first
// out-of-bounds lane under OOBError.
//
// The positions come from a pool (a fresh half-megabyte slice for every
// 64 Ki-lane gather cost a fifth of its time in page faults and clearing):
// the caller hands them back with putLanes when done.
func resolveLanes(op string, mode IndexMode, idx *TileData, rows, cols, n int, oob tile.OOB, p int) (*[]int, error) {
	pp := getLanes(rows * cols)
	lr := laneResolve{op: op, mode: mode, idx: idx, pos: *pp, cols: cols, n: n, oob: oob,
		signed: idx.Tile.DType.IsSigned(), firstBad: -1}
	if serialFor(rows*cols, p, 4096) {
		lr.run(0, rows*cols)
	} else {
		// The goroutines share a copy on the heap, with a lock.
		h := new(laneResolve)
		*h = lr
		h.mu = new(sync.Mutex)
		parallelFor(rows*cols, p, 4096, h.run)
		lr = *h
	}
	return pp, lr.firstErr
}

// laneResolve is one resolveLanes call; mu, when set, guards firstBad and
// firstErr between goroutines.
type laneResolve struct {
	op       string
	mode     IndexMode
	idx      *TileData
	pos      []int
	cols, n  int
	oob      tile.OOB
	signed   bool
	mu       *sync.Mutex
	firstBad int
	firstErr error
}

// run resolves lanes [lo, hi).
func (lr *laneResolve) run(lo, hi int) {
	cols, n, pos := lr.cols, lr.n, lr.pos
	r, c := lo/cols, lo%cols
	for l := lo; l < hi; l, c = l+1, c+1 {
		if c == cols {
			r, c = r+1, 0
		}
		raw := lr.idx.index(r, c)
		if raw < uint64(n) { // in bounds, signed or not: the common case
			pos[l] = int(raw)
			continue
		}
		v, ok := tile.ResolveIndex(raw, lr.signed, n, lr.oob)
		if !ok {
			if lr.oob == tile.OOBError {
				if lr.mu != nil {
					lr.mu.Lock()
					defer lr.mu.Unlock()
				}
				if lr.firstBad < 0 || l < lr.firstBad {
					lr.firstBad, lr.firstErr = l, oobFault(lr.op, lr.mode, raw, lr.idx.Tile.DType, r, c, n)
				}
				return
			}
			v = -1
		}
		pos[l] = v
	}
}

// serialFor reports whether parallelFor(n, p, grain, ...) would run on
// the calling goroutine alone: callers then call their function directly
// and allocate no closure.
func serialFor(n, p, grain int) bool { return min(p, (n+max(grain, 1)-1)/max(grain, 1)) <= 1 }

// lanePool holds the position slices of resolveLanes.
var lanePool sync.Pool

// getLanes returns a slice of n positions (contents undefined); putLanes
// gives it back.
func getLanes(n int) *[]int {
	p, ok := lanePool.Get().(*[]int)
	if !ok {
		p = new([]int)
	}
	if cap(*p) < n {
		*p = make([]int, n)
	}
	*p = (*p)[:n]
	return p
}

// putLanes returns a slice from getLanes to the pool.
func putLanes(p *[]int) { lanePool.Put(p) }

// GatherFast is the parallel gather: a parallel preflight resolving every
// index, then rows (or elements) copied by Threads goroutines straight into
// Dst. Dst is written only after the preflight has passed, and nothing can
// fail after that point, so Dst is either unchanged (fault) or complete —
// the publication rule without a staging copy. Dst must not overlap Mem.
func GatherFast(a *GatherArgs) error {
	p := threads(a.Threads)
	dst := a.Dst.Tile
	rows, cols := gatherLanes(a.Mode, a.Idx.Tile)
	pp, err := resolveLanes(opGather, a.Mode, &a.Idx, rows, cols, a.MemRows, a.OOB, p)
	defer putLanes(pp)
	if err != nil {
		return err
	}
	pos := *pp
	tile.FillPad(dst, a.Dst.Data)
	sz := dst.DType.Size()
	vc := dst.ValidCols
	if a.Mode == IndexRows && dst.Layout == tile.RowMajor {
		rb := vc * sz
		stride := dst.Cols * sz
		if ntRows(a, rows, rb, stride) {
			ahead := max(1, min(16, ntPrefetchBytes/rb))
			mem := unsafe.Pointer(unsafe.SliceData(a.Mem))
			parallelFor(rows, p, max(1, 16384/rb), func(lo, hi int) {
				copyRowsNT(unsafe.Pointer(&a.Dst.Data[lo*stride]), stride, mem, rb, &pos[lo], hi-lo, ahead)
			})
			return nil
		}
		if g := max(1, 16384/max(rb, 1)); serialFor(rows, p, g) {
			gatherRows(a, pos, rb, 0, rows) // no closure: nothing allocated
		} else {
			parallelFor(rows, p, g, func(lo, hi int) { gatherRows(a, pos, rb, lo, hi) })
		}
		return nil
	}
	if g := max(1, 4096/vc); serialFor(dst.ValidRows, p, g) {
		gatherElems(a, pos, 0, dst.ValidRows)
	} else {
		parallelFor(dst.ValidRows, p, g, func(lo, hi int) { gatherElems(a, pos, lo, hi) })
	}
	return nil
}

// prefetchAhead is how many rows ahead the row gather prefetches.
const prefetchAhead = 8

// ntMinBytes is the smallest destination (valid rows × row bytes) the row
// gather writes with non-temporal stores: the L3 size (16 MiB when cpuid
// does not tell). A destination that big does not stay in the caches for
// its consumer anyway, and streaming stores spare the read of every
// destination line a normal store makes first: on the 2-core Zen 5 machine
// a 64 MiB gather of random 1 KiB rows went from 35 to 67 GB/s (memcpy
// there: 78). Smaller gathers keep normal stores, which leave the rows in
// cache for whoever reads them next: gathering and then reading the result
// back, normal stores won by 20% at 4 MiB, tied at 8–12 MiB, and lost by
// 25% at 16 MiB. A variable so that tests can take either path.
var ntMinBytes = func() int {
	if l3 := cpuid.CPU.Cache.L3; l3 > 0 {
		return l3
	}
	return defaultL3
}()

// ntPrefetchBytes is how far ahead, in bytes of rows, the streaming row
// copy prefetches (16 rows of 1 KiB measured best; 2 and 4 rows lost 15%
// and 5%).
const ntPrefetchBytes = 16 << 10

// ntRows says whether a row gather takes the streaming copy: the assembly
// is there, the destination is big enough, every row is whole 64-byte
// lines on 64-byte boundaries, and the table and destination hold every
// row the copy can touch (the preflight has bounded the indices by
// MemRows).
func ntRows(a *GatherArgs, rows, rb, stride int) bool {
	if !haveNTRows() || rows == 0 || rb == 0 || rb%64 != 0 || stride%64 != 0 || rows*rb < ntMinBytes {
		return false
	}
	if uintptr(unsafe.Pointer(unsafe.SliceData(a.Dst.Data)))%64 != 0 {
		return false
	}
	return a.MemRows*rb <= len(a.Mem) && (rows-1)*stride+rb <= len(a.Dst.Data)
}

// copyElem copies one size-byte element from src[so:] to dst[do:], or
// writes zero bits when zero is set.
func copyElem(dst []byte, do int, src []byte, so, size int, zero bool) {
	switch size {
	case 4:
		var v uint32
		if !zero {
			v = *(*uint32)(unsafe.Pointer(&src[so]))
		}
		*(*uint32)(unsafe.Pointer(&dst[do])) = v
	case 8:
		var v uint64
		if !zero {
			v = *(*uint64)(unsafe.Pointer(&src[so]))
		}
		*(*uint64)(unsafe.Pointer(&dst[do])) = v
	default:
		if zero {
			clear(dst[do : do+size])
		} else {
			copy(dst[do:do+size], src[so:so+size])
		}
	}
}

// gatherRows copies the row-major gather's rows [lo, hi) of rb bytes.
func gatherRows(a *GatherArgs, pos []int, rb, lo, hi int) {
	dst := &a.Dst.Tile
	sz := dst.DType.Size()
	for r := lo; r < hi; r++ {
		// Random rows defeat the hardware prefetcher: ask for the row
		// prefetchAhead lanes on while copying this one.
		if havePrefetch && r+prefetchAhead < hi {
			if q := pos[r+prefetchAhead]; q >= 0 {
				prefetchRange(unsafe.Pointer(&a.Mem[q*rb]), rb)
			}
		}
		out := a.Dst.Data[r*dst.Cols*sz : r*dst.Cols*sz+rb]
		if q := pos[r]; q >= 0 {
			copy(out, a.Mem[q*rb:q*rb+rb])
		} else {
			clear(out)
		}
	}
}

// gatherElems copies the gather's destination rows [lo, hi) element by
// element (any layout, either mode).
func gatherElems(a *GatherArgs, pos []int, lo, hi int) {
	dst := &a.Dst.Tile
	sz, vc := dst.DType.Size(), dst.ValidCols
	for r := lo; r < hi; r++ {
		for c := 0; c < vc; c++ {
			var q int
			if a.Mode == IndexRows {
				q = pos[r]
				if q >= 0 {
					q = q*vc + c
				}
			} else {
				q = pos[r*vc+c]
			}
			copyElem(a.Dst.Data, dst.At(r, c)*sz, a.Mem, q*sz, sz, q < 0)
		}
	}
}
