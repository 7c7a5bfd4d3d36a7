package fallback

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tcrt-go/tcrt/tile"
)

// Shared B panels. When split cuts only M (every worker would take all the
// columns, so each would pack the whole of op(B) for itself), the workers
// instead share one packed op(B), packed panel by panel on first use: the
// first worker to reach a panel claims it and packs it, and for f32 B by
// rows packs it with the kernel of its first tile (kernelPackB), so the
// loads from B overlap the FMAs rather than stall a copying pass; the
// others then read the packed panel. A worker that reaches a panel while
// another is still packing it does not wait: it packs a copy for itself
// and uses that (the same as without sharing). There is no packing phase
// and no barrier, so the items can be small: M is cut finer, itemsPerThread
// per thread, taken in turn, and a worker that starts late or that the OS
// holds up leaves the remaining items to the others instead of making them
// wait for its share. A is still packed by each item for its rows, once
// per column block and K block.

// itemsPerThread is how many items per thread the shared-B products cut M
// into.
const itemsPerThread = 4

// Panel states of the shared B (job.bState).
const (
	panelEmpty   = iota // nobody has claimed it
	panelPacking        // a worker is packing it
	panelReady          // packed: any worker may read it
)

// maxSharedB bounds the shared packed B, in bytes; a larger op(B) takes
// the per-item packing.
const maxSharedB = 64 << 20

// minSharedB is the smallest packed op(B), in bytes, that the workers
// share: a packed B that fits in one core's L2 (512³ f32: 1 MiB) is
// cheaper packed by each worker for itself, in its own L2, than packed
// once into lines the other cores then pull over. Measured by process CPU
// time on 2 Zen 5 cores, when a packing phase and a barrier came first
// (BenchmarkMatMulCPUTime, of-peak-cpu, 2 runs each): 512³ 0.79–0.88
// shared against 0.98–1.03 not; 1024³ (4 MiB) 0.86–0.87 against 0.86–0.91,
// even; 2048³ keeps sharing. With the panels packed on first use, 512³
// shared still took 4% more CPU time (two configurations alternated
// product by product in one process, 2×1500 products, load 6: median
// ratio of 150 blocks 1.04).
var minSharedB = func() int { _, l2, _ := cacheSizes(); return l2 }()

// testShareSmallB, set by tests, lets products whose packed B is under
// minSharedB share it too, so that small shapes run through the shared
// path.
var testShareSmallB bool

// testPanelsBusy, set by tests, starts every shared panel as being packed
// by some other worker, so that every item packs its own copies.
var testPanelsBusy bool

// sharedBRuns counts the products that shared B, for the tests.
var sharedBRuns atomic.Int64

// sharedBPool recycles the shared buffers (*[]float32), which are too big
// to allocate (and fault in) on every call.
var sharedBPool sync.Pool

// shareB sets up j.sharedB, the shared packed op(B), when the split lets
// the workers share it, with threads workers, and reports whether it did.
func (j *job) shareB(threads int) bool {
	a, v := j.a, j.v
	if threads < 2 || a.Batch != 1 || j.skinnyOn || j.nItems != 1 || j.mItems < 2 || a.K == 0 {
		return false
	}
	// The column blocks and steps of item, for all N columns.
	nBlk := ceilDiv(a.N, j.blk.nc)
	nc0 := roundUp(ceilDiv(a.N, nBlk), v.NR)
	ks0 := j.kc
	if v.BF16Pairs {
		ks0 = ceilDiv(j.kc, 2)
	}
	j.bSlot = nc0*ks0 + panelSlack
	tasks := nBlk * j.numKBlk
	if packed := 4 * tasks * (j.bSlot - panelSlack); packed > maxSharedB || packed <= minSharedB && !testShareSmallB {
		return false
	}
	var buf []float32
	if p, ok := sharedBPool.Get().(*[]float32); ok {
		buf = *p
	}
	j.sharedB = growAligned(buf, tasks*j.bSlot)
	j.bPanels = nc0 / v.NR
	j.bState = make([]atomic.Int32, tasks*j.bPanels)
	if testPanelsBusy {
		for i := range j.bState {
			j.bState[i].Store(panelPacking)
		}
	}
	sharedBRuns.Add(1)

	// itemsPerThread items per thread, a multiple of the threads when M
	// allows.
	maxM := ceilDiv(a.M, v.MR)
	m := min(maxM, itemsPerThread*threads)
	if m >= threads {
		m -= m % threads
	}
	j.mItems = max(j.mItems, m)
	j.items = j.mItems
	return true
}

// sharedPanel returns the packed B panel bp for the tiles at column jr of
// the column block at jc and K block kb (from row pc, kc rows) of an item
// that shares B: the shared panel when it is ready or this worker claims
// it, else a copy in w.b. src, when not nil, says that the panel is not
// packed yet: the caller's first tile must pack it as it runs
// (kernelPackB, from the f32 rows of B at src), and then, when done is
// not nil, publish it (done.Store(panelReady)). nr is the panel's width
// (NR but for the last), ks its steps, off B's element at (pc, jc).
func (j *job) sharedPanel(w *workspace, jc, jr, kb, pc, kc, ks, nr, off int) (bp *float32, src unsafe.Pointer, done *atomic.Int32) {
	a, v := j.a, j.v
	t := jc/(j.bPanels*v.NR)*j.numKBlk + kb
	st := &j.bState[t*j.bPanels+jr/v.NR]
	shared := j.sharedB[t*j.bSlot+jr*ks : t*j.bSlot+(jr+v.NR)*ks]
	if st.Load() == panelReady {
		return &shared[0], nil, nil
	}
	claimed := st.CompareAndSwap(panelEmpty, panelPacking)
	if nr == v.NR && v.kernelPackB != nil && !v.BF16Pairs && a.B.DType == tile.F32 && !a.B.Trans {
		src = unsafe.Pointer(f32At(a.B.Data, off+jr))
		if claimed {
			return &shared[0], src, st
		}
		return &w.b[0], src, nil
	}
	// Packed here, into w.b (the packers may write past the panel's
	// end, which in the shared buffer is the next panel), then copied
	// to the shared panel when this worker claimed it.
	if !v.BF16Pairs {
		v.packB(w.b, &a.B, 0, pc, kc, jc+jr, nr, w.buf)
		if !claimed {
			return &w.b[0], nil, nil
		}
		copy(shared, w.b)
		st.Store(panelReady)
		return &shared[0], nil, nil
	}
	// Pair panels are packed a group at a time: the claimed panel and
	// those after it, up to sharedGroup, that nobody has claimed yet. A
	// row of B is then read (and float8 decoded) in runs of up to
	// sharedGroup·NR columns rather than NR, whose strided 32- or
	// 64-byte pieces the memory system serves slowly.
	panels := 1
	if claimed {
		p0 := jr / v.NR
		for q := p0 + 1; q < min(p0+sharedGroup, j.bPanels) && jc+q*v.NR < a.N; q++ {
			if !j.bState[t*j.bPanels+q].CompareAndSwap(panelEmpty, panelPacking) {
				break
			}
			panels++
		}
	}
	width := min(panels*v.NR, a.N-jc-jr)
	v.packPairsB(w.b, &a.B, 0, pc, kc, jc+jr, width, w.h)
	if !claimed {
		return &w.b[0], nil, nil
	}
	first := t*j.bSlot + jr*ks
	copy(j.sharedB[first:first+panels*v.NR*ks], w.b)
	for q := range panels {
		j.bState[t*j.bPanels+jr/v.NR+q].Store(panelReady)
	}
	return &shared[0], nil, nil
}

// sharedGroup is the most pair panels of the shared B packed at once.
var sharedGroup = 8

// releaseB returns the shared buffer to the pool.
func (j *job) releaseB() {
	buf := j.sharedB
	j.sharedB, j.bState = nil, nil
	sharedBPool.Put(&buf)
}
