package fallback

import (
	"sync"
	"sync/atomic"
)

// Shared B panels. When split cuts only M (every worker would take all the
// columns, so each would pack the whole of op(B) for itself), the workers
// instead pack op(B) once, together, before any product: each K block of
// each column block is one packing task, taken in turn. The items then cut
// M finer, four per thread, and are taken in turn as well: on an idle
// machine the work is shared out as evenly as before, and on a busy one a
// worker that the OS holds up leaves the remaining items to the others
// instead of making them wait for its half. A is still packed by each item
// for its rows, once per column block, as before.

// maxSharedB bounds the shared packed B, in bytes; a larger op(B) takes
// the per-item packing.
const maxSharedB = 64 << 20

// minSharedB is the smallest packed op(B), in bytes, that the workers
// share: a packed B that fits in one core's L2 (512³ f32: 1 MiB) is
// cheaper packed by each worker for itself, in its own L2, than packed
// once into lines the other cores then pull over, behind a barrier and a
// second hand-off to the workers. Measured by process CPU time on 2 Zen 5
// cores (BenchmarkMatMulCPUTime, of-peak-cpu, 2 runs each): 512³ 0.79–0.88
// shared against 0.98–1.03 not; 1024³ (4 MiB) 0.86–0.87 against 0.86–0.91,
// even; 2048³ keeps sharing.
var minSharedB = func() int { _, l2, _ := cacheSizes(); return l2 }()

// testShareSmallB, set by tests, lets products whose packed B is under
// minSharedB share it too, so that small shapes run through the shared
// path.
var testShareSmallB bool

// sharedBRuns counts the products that shared B, for the tests.
var sharedBRuns atomic.Int64

// sharedBPool recycles the shared buffers (*[]float32), which are too big
// to allocate (and fault in) on every call.
var sharedBPool sync.Pool

// shareB packs op(B) into j.sharedB when the split lets the workers share
// it, with threads workers, and reports whether it did.
func (j *job) shareB(threads int) bool {
	a, v := j.a, j.v
	if threads < 2 || a.Batch != 1 || j.skinny != nil || j.nItems != 1 || j.mItems < 2 || a.K == 0 {
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
	sharedBRuns.Add(1)

	var next atomic.Int64
	pack := func() {
		w := getWorkspace()
		defer putWorkspace(w)
		w.buf = grow(w.buf, max(j.kc, nc0, max(v.MR, v.NR, 2)*j.kc))
		if v.BF16Pairs {
			w.h = grow16(w.h, max(3*nc0, max(v.MR, v.NR)*(j.kc+1)))
		}
		for {
			t := int(next.Add(1) - 1)
			if t >= tasks {
				return
			}
			jc, pc := t/j.numKBlk*nc0, t%j.numKBlk*j.kc
			nc, kc := min(nc0, a.N-jc), min(j.kc, a.K-pc)
			dst := j.sharedB[t*j.bSlot : (t+1)*j.bSlot]
			if v.BF16Pairs {
				v.packPairsB(dst, &a.B, 0, pc, kc, jc, nc, w.h)
			} else {
				v.packB(dst, &a.B, 0, pc, kc, jc, nc, w.buf)
			}
		}
	}
	var wg sync.WaitGroup
	for range min(threads, tasks) - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pack()
		}()
	}
	pack()
	wg.Wait()

	// Four items per thread, a multiple of the threads when M allows.
	maxM := ceilDiv(a.M, v.MR)
	m := min(maxM, 4*threads)
	if m >= threads {
		m -= m % threads
	}
	j.mItems = max(j.mItems, m)
	j.items = j.mItems
	return true
}

// releaseB returns the shared buffer to the pool.
func (j *job) releaseB() {
	buf := j.sharedB
	j.sharedB = nil
	sharedBPool.Put(&buf)
}
