package fallback

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/klauspost/cpuid/v2"
	"github.com/tcrt-go/tcrt/internal/cpufeat"
	"github.com/tcrt-go/tcrt/tile"
)

// MatMulVariant describes one fast-path micro-kernel family.
type MatMulVariant struct {
	Name     string            // "avx512", "avx2", "generic"
	Features []cpuid.FeatureID // CPU features it needs
	MR, NR   int               // register tile: MR rows of op(A) by NR columns of op(B)
	// BF16Pairs marks a kernel that multiplies bf16 values two k steps at
	// a time (see matmul_pairs.go): its operands must be bf16 or float8,
	// which it uses exactly, and it rounds nothing but the f32 sums.
	BF16Pairs bool
	// Skinny marks a variant with the skinny path (matmul_fast_skinny.go):
	// products of at most 16 rows with B by rows read B in place, once.
	Skinny bool
}

// Accepts reports whether the variant takes operands of types a and b: any
// float type the fallback loads, or for a BF16Pairs variant only bf16 and
// float8.
func (v MatMulVariant) Accepts(a, b tile.DType) bool {
	return !v.BF16Pairs || pairInput(a) && pairInput(b)
}

// Available reports whether the host CPU has every feature the variant
// needs, none of them hidden by the CPU feature mask (internal/cpufeat).
func (v MatMulVariant) Available() bool { return cpufeat.Supports(v.Features...) }

// MatMulVariants lists the compiled-in fast-path variants, best first. The
// purego build tag, and CPU architectures without assembly kernels, leave
// only "generic", which runs anywhere.
func MatMulVariants() []MatMulVariant {
	vs := make([]MatMulVariant, len(variants))
	for i, v := range variants {
		vs[i] = v.MatMulVariant
		vs[i].Skinny = v.skinny != nil
		vs[i].Features = append([]cpuid.FeatureID(nil), v.Features...)
	}
	return vs
}

// MatMulFast computes the same result as MatMulRef with the named variant's
// micro-kernel: packed panels, cache blocking, goroutines over a.Threads
// cores. Accumulation is in float32, so results differ from the reference by
// float32 rounding. C may be the same memory as D (an in-place update);
// other overlaps of the outputs with the inputs are not supported. It
// returns an error only when the variant is unknown or the CPU lacks its
// features.
func MatMulFast(variant string, a *MatMulArgs) error {
	for _, v := range variants {
		if v.Name != variant {
			continue
		}
		if why := cpufeat.Missing(v.Features...); why != "" {
			return fmt.Errorf("fallback: matmul variant %q: %s", variant, why)
		}
		if !v.Accepts(a.A.DType, a.B.DType) {
			return fmt.Errorf("fallback: matmul variant %q does not take %v·%v operands", variant, a.A.DType, a.B.DType)
		}
		v.matMul(a)
		return nil
	}
	return fmt.Errorf("fallback: unknown matmul variant %q", variant)
}

// kernelFunc computes the MR×NR tile op(A)·op(B) of one packed A panel (kc
// steps of MR values) and one packed B panel (kc steps of NR values) and
// stores it to c (row stride ldc elements), or adds it to c when accum is
// not zero. kc may be zero.
type kernelFunc func(kc int, a, b, c *float32, ldc, accum int)

// converters turn runs of 16-bit floats to float32 and back; dst and src have
// the same length.
type converters struct {
	f16ToF32  func(dst []float32, src []uint16)
	bf16ToF32 func(dst []float32, src []uint16)
	f32ToF16  func(dst []uint16, src []float32)
	f32ToBF16 func(dst []uint16, src []float32)
}

// variant is a MatMulVariant with its implementation.
type variant struct {
	MatMulVariant
	kernel kernelFunc
	// edge, when not nil, holds at edge[mr] (0 < mr < MR) the kernel for
	// the first mr rows of the A panels: the last rows of a block cost
	// FMAs in proportion to their number, and are stored straight to D.
	edge []kernelFunc
	// kernelPackB, when not nil, is kernel reading each k step of B from
	// f32 rows lds bytes apart (from src on) and storing it to the
	// panel b as it multiplies it: the first tile of each panel packs it
	// so, when the panels are not shared (see item).
	kernelPackB func(kc int, a, b, c *float32, ldc, accum int, src unsafe.Pointer, lds int)
	cvt         converters
	// transPack, when not nil, transposes w rows of kc floats (row i at
	// src + i·ld, kc a multiple of 16) into kc panel steps of w floats; it
	// reports false for a w it does not handle. It may write up to
	// panelSlack floats past the last step.
	transPack func(dst, src *float32, ld, kc, w int) bool
	// pairRows, when not nil, writes step s of the pair panels (dst at
	// step s of the first panel, panels kp steps long) from the bf16 rows
	// lo and hi for as many whole panels of width W as it handles, and
	// returns the columns written.
	pairRows func(dst []float32, lo, hi []uint16, W, kp int) int
	// skinny, when not nil, holds the kernels of the skinny path
	// (matmul_fast_skinny.go).
	skinny *skinnyKernels

	blkOnce sync.Once
	blk     blocking
}

// variants holds the compiled-in variants, best first; generic is last.
var variants = append(asmVariants(), &variant{
	MatMulVariant: MatMulVariant{Name: "generic", MR: genericMR, NR: genericNR},
	kernel:        kernelGeneric,
	cvt:           genericConverters,
})

// testBlocking, when set by a test, replaces the cache-derived block sizes so
// that small shapes run through every blocking loop.
var testBlocking *blocking

func (v *variant) blocking() blocking {
	if testBlocking != nil {
		return *testBlocking
	}
	v.blkOnce.Do(func() {
		v.blk = cacheBlocking(v.MR, v.NR)
		if v.BF16Pairs {
			// The same panel bytes hold twice the K values.
			v.blk.kc *= 2
		}
	})
	return v.blk
}

// destination modes: where the kernels put the float32 sums.
const (
	destD       = iota // straight into D (f32), epilogue in place if any
	destScratch        // per-worker scratch holding partial sums across K blocks
	destTile           // a single temporary tile (one K block only)
)

// job is one matmul as the workers see it.
type job struct {
	a       *MatMulArgs
	v       *variant
	blk     blocking
	mode    int
	epi     bool // an epilogue pass is needed after the last K block
	beta    bool // beta·C is added
	mItems  int  // work items per batch along M (see itemRange)
	nItems  int  // and along N
	mUnit   int  // the unit of rows of the M split (see rowUnit)
	items   int
	next    atomic.Int64
	numKBlk int // K blocks
	kc      int // K block (the last may be shorter)
	// scaled: the epilogue multiplies the sums by alpha (when packA did
	// not) and the scales.
	scaled bool
	alpha  float32
	// skinny, when not nil, are the kernels of the skinny path, which the
	// items take instead of the blocked one.
	skinny, skinnyStore []skinnyFunc
	// skinnyOn marks a product on the skinny path: with the kernels
	// above, or with a strip kernel only (the AVX2 variant).
	skinnyOn bool
	sb       int // column blocks of a run (skinnyRun); columns of a row-streaming walk
	// rowsK, when not nil, is the row-streaming skinny kernel the items
	// take (skinnyRows).
	rowsK skinnyRowFunc
	// stripK, when not nil, is the strip skinny kernel the items take
	// (skinnyStrips).
	stripK skinnyStripFunc
	// dotK, when not nil, are the dot skinny kernels for transposed B
	// the items take (skinnyDots), [mr-1][nr-1].
	dotK [][]skinnyDotFunc
	// sharedB, when not nil, holds the whole of op(B) packed (see
	// shareB), in slots of bSlot floats: slot jb·numKBlk+kb is column
	// block jb and K block kb, bPanels panels of NR columns. bState holds
	// the state of each panel (panelEmpty, ...), slot by slot: the items
	// pack the panels on first use (sharedPanel).
	sharedB []float32
	bSlot   int
	bPanels int
	bState  []atomic.Int32
	// workFn is j.work, made once per pooled job.
	workFn func()
}

// jobs recycles jobs: a product allocates neither its job nor the
// closure its workers run.
var jobs = sync.Pool{New: func() any {
	j := new(job)
	j.workFn = j.work
	return j
}}

func (v *variant) matMul(a *MatMulArgs) {
	if a.M <= 0 || a.N <= 0 || a.Batch <= 0 {
		return
	}
	j := jobs.Get().(*job)
	fn := j.workFn
	*j = job{a: a, v: v, blk: v.blocking(), mUnit: v.rowUnit(), workFn: fn}
	defer func() { // after the workers, who all return before run does
		*j = job{workFn: fn}
		jobs.Put(j)
	}()
	j.beta = a.Beta != 0 && a.C != nil
	j.alpha = 1
	if v.BF16Pairs {
		j.alpha = a.Alpha
	}
	j.scaled = j.alpha != 1 || a.ScaleA != nil || a.ScaleB != nil
	j.epi = j.beta || a.Bias != nil || a.Act != ActNone || a.D.DType != tile.F32 || j.scaled
	j.numKBlk = max(1, ceilDiv(a.K, j.blk.kc))
	j.kc = ceilDiv(a.K, j.numKBlk)
	if v.BF16Pairs {
		// Pairs must not straddle K blocks.
		j.kc = roundUp(j.kc, 2)
		j.numKBlk = max(1, ceilDiv(a.K, j.kc))
	}
	switch {
	case a.D.DType == tile.F32 && !(j.beta && overlaps(a.C.Data, a.D.Data)):
		j.mode = destD
	case j.numKBlk > 1:
		j.mode = destScratch
	default:
		j.mode = destTile
	}

	threads := a.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	// Below about a megaflop per goroutine the start-up costs more than the
	// parallelism gains.
	flops := 2 * float64(a.M) * float64(a.N) * float64(max(a.K, 1)) * float64(a.Batch)
	threads = max(1, min(threads, int(flops/(1<<20))))
	if j.skinnyOn = j.skinnyPath(); j.skinnyOn {
		j.skinnySplit(threads)
	} else {
		j.split(threads)
	}
	if j.shareB(threads) {
		defer j.releaseB()
	}
	threads = min(threads, j.items)

	run(threads-1, j.workFn)
}

// maxScratch bounds a worker's scratch buffer of partial sums, in bytes.
const maxScratch = 16 << 20

// split cuts each batch's M×N output into a grid of work items, enough for
// every thread to get the same number, choosing the grid that packs the
// least: a worker packs its rows of A once per NC columns and its columns
// of B once, and a transposing pack (packCols) costs about 2.5 times a
// copying one (packRows).
func (j *job) split(threads int) {
	a, mr, nr := j.a, j.v.MR, j.v.NR
	per := 1 // items wanted per batch
	if a.Batch%threads != 0 && a.Batch < 8*threads {
		per = threads / gcd(a.Batch, threads)
	}
	maxM, maxN := ceilDiv(a.M, mr), ceilDiv(a.N, nr)
	wA, wB := 1.0, 1.0
	if !a.A.Trans {
		wA = 2.5
	}
	if a.B.Trans {
		wB = 2.5
	}
	best, bestTM, bestTN := math.Inf(1), 1, 1
	for p := min(per, maxM*maxN); p >= 1; p-- {
		for tm := 1; tm <= p; tm++ {
			if p%tm != 0 || tm > maxM || p/tm > maxN {
				continue
			}
			tn := p / tm
			rows, cols := ceilDiv(a.M, tm), ceilDiv(a.N, tn)
			cost := wA*float64(rows)*float64(ceilDiv(cols, j.blk.nc)) + wB*float64(cols)
			if cost < best {
				best, bestTM, bestTN = cost, tm, tn
			}
		}
		if bestTM*bestTN == p {
			break
		}
	}
	if j.mode == destScratch {
		// Keep the scratch rows × NC block bounded: cut M finer, by a
		// whole factor so that the items stay evenly spread.
		cols := min(roundUp(ceilDiv(a.N, bestTN), nr), roundUp(j.blk.nc, nr))
		rowsCap := max(mr, maxScratch/4/cols/mr*mr) - mr
		bestTM *= ceilDiv(ceilDiv(a.M, rowsCap), bestTM)
	}
	j.mItems = min(bestTM, maxM)
	j.nItems = bestTN
	j.items = a.Batch * j.mItems * j.nItems
}

// edgeRows is the unit of the M split of a variant with edge kernels:
// rows cut finer than MR let the workers' shares differ by a few rows
// rather than by a tile of MR (512 rows in two: 256 each, rather than 252
// and 260 computed as 266), and from 4 rows up an edge kernel keeps both
// FMA pipes busy (4·2 accumulators cover the FMA latency), so the edge
// tile each share then has costs about its rows' share of a full tile.
const edgeRows = 4

// rowUnit returns the unit of the M split: MR, or edgeRows for a variant
// with edge kernels.
func (v *variant) rowUnit() int {
	if v.edge != nil && v.MR > edgeRows {
		return edgeRows
	}
	return v.MR
}

// itemRange returns the range [lo, hi) of item i of parts covering n in
// steps of unit: the units are shared out as evenly as they go.
func itemRange(i, parts, n, unit int) (lo, hi int) {
	units := ceilDiv(n, unit)
	return i * units / parts * unit, min(n, (i+1)*units/parts*unit)
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// work runs items until none are left.
func (j *job) work() {
	w := getWorkspace()
	defer putWorkspace(w)
	if j.skinnyOn {
		j.skinnyWork(w)
		return
	}
	per := j.mItems * j.nItems
	for {
		t := int(j.next.Add(1) - 1)
		if t >= j.items {
			return
		}
		b, r := t/per, t%per
		m0, m1 := itemRange(r/j.nItems, j.mItems, j.a.M, j.mUnit)
		n0, n1 := itemRange(r%j.nItems, j.nItems, j.a.N, j.v.NR)
		j.item(w, b, m0, m1, n0, n1)
	}
}

// item computes rows [m0, m1) and columns [n0, n1) of batch b.
func (j *job) item(w *workspace, b, m0, m1, n0, n1 int) {
	a, v := j.a, j.v
	MR, NR := v.MR, v.NR
	K := a.K
	rows, cols := m1-m0, n1-n0
	nBlk := ceilDiv(cols, j.blk.nc)
	nc0 := roundUp(ceilDiv(cols, nBlk), NR)
	mBlk := ceilDiv(rows, j.blk.mc)
	mc0 := roundUp(ceilDiv(rows, mBlk), MR)
	kc0 := j.kc

	w.a = growAligned(w.a, mc0*max(kc0, 1)+panelSlack)
	w.b = growAligned(w.b, nc0*max(kc0, 1)+panelSlack)
	w.buf = grow(w.buf, max(kc0, mc0, nc0, max(MR, NR, 2)*kc0))
	if v.BF16Pairs {
		w.h = grow16(w.h, max(3*max(mc0, nc0), max(MR, NR)*(kc0+1)))
	}
	w.tile = growAligned(w.tile, MR*NR)
	if j.epi {
		w.row = grow(w.row, NR)
	}
	var ldS int
	if j.mode == destScratch {
		ldS = nc0
		w.scratch = growAligned(w.scratch, roundUp(rows, MR)*ldS)
	}
	tileP := &w.tile[0]
	dBase := b * a.D.BatchStride

	for jc := n0; jc < n1; jc += nc0 {
		nc := min(nc0, n1-jc)
		for pc, kb := 0, 0; kb < j.numKBlk; pc, kb = pc+kc0, kb+1 {
			kc := min(kc0, K-pc)
			first, last := kb == 0, kb == j.numKBlk-1
			accum := 0
			if !first {
				accum = 1
			}
			ks := kc // kernel steps
			if v.BF16Pairs {
				ks = ceilDiv(kc, 2)
			}
			bBuf := w.b
			// fuse: the first tile of each full panel packs it (see
			// kernelPackB), from f32 rows of B at bSrc, bLD bytes apart.
			fuse := false
			var bSrc unsafe.Pointer
			bLD := 4 * a.B.LD
			bOff := b*a.B.BatchStride + pc*a.B.LD + jc // B's element at (pc, jc)
			switch {
			case j.sharedB != nil:
				// Each panel is taken in the jr loop (sharedPanel).
			case v.BF16Pairs:
				v.packPairsB(w.b, &a.B, b, pc, kc, jc, nc, w.h)
			case v.kernelPackB != nil && a.B.DType == tile.F32 && !a.B.Trans && kc > 0:
				fuse = true
				bSrc = unsafe.Pointer(f32At(a.B.Data, bOff))
				if full := nc / NR * NR; full < nc {
					// The last panel is not full: packed here.
					v.packRows(w.b[full*kc:], &a.B, bOff+full, a.B.LD, kc, nc-full, NR, 1, w.buf)
				}
			default:
				v.packB(w.b, &a.B, b, pc, kc, jc, nc, w.buf)
			}
			for ic := m0; ic < m1; ic += mc0 {
				mc := min(mc0, m1-ic)
				if v.BF16Pairs {
					v.packPairsA(w.a, &a.A, b, ic, mc, pc, kc, w.h)
				} else {
					v.packA(w.a, &a.A, b, ic, mc, pc, kc, a.Alpha, w.buf)
				}
				for jr := 0; jr < nc; jr += NR {
					nr := min(NR, nc-jr)
					var bp *float32
					var srcB unsafe.Pointer // B's rows, when the first tile packs the panel
					var publish *atomic.Int32
					switch {
					case j.sharedB != nil:
						bp, srcB, publish = j.sharedPanel(w, jc, jr, kb, pc, kc, ks, nr, bOff)
					default:
						bp = &bBuf[jr*ks]
						if fuse && ic == m0 && nr == NR {
							srcB = unsafe.Add(bSrc, 4*jr)
						}
					}
					for ir := 0; ir < mc; ir += MR {
						mr := min(MR, mc-ir)
						ap := &w.a[ir*ks]
						i, jj := ic+ir, jc+jr
						var src unsafe.Pointer // B's rows, when this tile packs the panel
						if ir == 0 {
							src = srcB
						}
						switch j.mode {
						case destD:
							d := f32At(a.D.Data, dBase+i*a.D.LD+jj)
							if nr == NR && (mr == MR || v.edge != nil && src == nil) {
								v.runKernel(ks, mr, ap, bp, d, a.D.LD, accum, src, bLD)
							} else {
								v.runKernel(ks, mr, ap, bp, tileP, NR, 0, src, bLD)
								mergeTile(d, a.D.LD, w.tile, NR, mr, nr, first)
							}
							if last && j.epi {
								j.epilogue(w, b, i, jj, mr, nr, d, a.D.LD)
							}
						case destScratch:
							s := &w.scratch[(i-m0)*ldS+jr]
							v.runKernel(ks, mr, ap, bp, s, ldS, accum, src, bLD)
							if last {
								j.epilogue(w, b, i, jj, mr, nr, s, ldS)
							}
						default:
							v.runKernel(ks, mr, ap, bp, tileP, NR, 0, src, bLD)
							j.epilogue(w, b, i, jj, mr, nr, tileP, NR)
						}
						if publish != nil {
							publish.Store(panelReady) // packed by the first tile
							publish = nil
						}
					}
				}
			}
		}
	}
}

// runKernel runs the micro-kernel on the tile, of which only the first mr
// rows are wanted: an edge kernel when there is one for mr, which then
// stores mr rows only. When src is not nil it runs kernelPackB instead,
// which also packs the B panel bp from the f32 rows at src, lds bytes
// apart, and stores all MR rows.
func (v *variant) runKernel(ks, mr int, ap, bp, c *float32, ldc, accum int, src unsafe.Pointer, lds int) {
	switch {
	case src != nil:
		v.kernelPackB(ks, ap, bp, c, ldc, accum, src, lds)
	case mr < v.MR && v.edge != nil:
		v.edge[mr](ks, ap, bp, c, ldc, accum)
	default:
		v.kernel(ks, ap, bp, c, ldc, accum)
	}
}

// mergeTile stores (first) or adds the mr×nr corner of an NR-wide tile to d.
func mergeTile(d *float32, ldd int, t []float32, ldt, mr, nr int, first bool) {
	for r := range mr {
		dst := unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(d), 4*r*ldd)), nr)
		src := t[r*ldt : r*ldt+nr]
		if first {
			copy(dst, src)
			continue
		}
		for c, x := range src {
			dst[c] += x
		}
	}
}

// scaleRowFast, when set, is scaleRow's vector code: s nil for one factor
// f, else the columns' scales; it reports whether it ran.
var scaleRowFast func(out []float32, f float32, s []float32) bool

// scaleRow multiplies the sums of a row, out, whose first column is j0, by
// f and the column scales sB (none, one for all, or one per column):
// out[k] *= f·sB[j0+k], the product rounded to f32 first.
func scaleRow(out []float32, f float32, sB []float32, j0 int) {
	var s []float32 // nil: the one factor f·sB[0] (or f)
	switch len(sB) {
	case 0:
	case 1:
		f *= sB[0]
	default:
		s = sB[j0 : j0+len(out)]
	}
	if scaleRowFast != nil && scaleRowFast(out, f, s) {
		return
	}
	if s == nil {
		for k := range out {
			out[k] *= f
		}
		return
	}
	for k, x := range s {
		out[k] *= f * x
	}
}

// epilogue finishes the mr×nr tile of sums at src (row stride lds) whose
// top-left element is (i0, j0) of D[b]: beta·C, bias, activation, and the
// conversion to D's element type. Alpha was applied when A was packed.
func (j *job) epilogue(w *workspace, b, i0, j0, mr, nr int, src *float32, lds int) {
	a := j.a
	D := &a.D
	inPlace := j.mode == destD
	for r := range mr {
		i := i0 + r
		s := unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(src), 4*r*lds)), nr)
		doff := b*D.BatchStride + i*D.LD + j0
		out := w.row[:nr]
		if inPlace {
			out = s
		} else {
			copy(out, s)
		}
		if j.scaled {
			scaleRow(out, j.alpha*float32(scaleAt(a.ScaleA, i)), a.ScaleB, j0)
		}
		if j.beta {
			C := a.C
			c := j.v.loadRun(C, b*C.BatchStride+i*C.LD+j0, nr, w.buf)
			beta := a.Beta
			for k, x := range c[:len(out)] {
				out[k] += beta * x
			}
		}
		if a.Bias != nil {
			for k, x := range a.Bias[j0 : j0+len(out)] {
				out[k] += x
			}
		}
		activate(a.Act, out)
		if inPlace {
			continue
		}
		switch D.DType {
		case tile.F32:
			copy(unsafe.Slice(f32At(D.Data, doff), nr), out)
		case tile.BF16:
			d := unsafe.Slice((*uint16)(unsafe.Pointer(&D.Data[2*doff])), nr)
			j.v.cvt.f32ToBF16(d, out)
		case tile.F16:
			d := unsafe.Slice((*uint16)(unsafe.Pointer(&D.Data[2*doff])), nr)
			j.v.cvt.f32ToF16(d, out)
		default:
			for k, x := range out {
				storeF32(D.DType, D.Data, doff+k, x)
			}
		}
	}
}

// activate applies act to every element of x, computing in float64 as the
// reference does.
func activate(act Activation, x []float32) {
	switch act {
	case ActReLU:
		for i, v := range x {
			x[i] = max(v, 0)
		}
	case ActGELU:
		for i, v := range x {
			f := float64(v)
			x[i] = float32(0.5 * f * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(f+0.044715*f*f*f))))
		}
	case ActSiLU:
		for i, v := range x {
			f := float64(v)
			x[i] = float32(f / (1 + math.Exp(-f)))
		}
	}
}

// loadRun returns elements [off, off+n) of m's data as float32: a view of
// the data when it is f32, else converted into buf.
func (v *variant) loadRun(m *Matrix, off, n int, buf []float32) []float32 {
	if n == 0 {
		return nil
	}
	switch m.DType {
	case tile.F32:
		return unsafe.Slice(f32At(m.Data, off), n)
	case tile.F16:
		v.cvt.f16ToF32(buf[:n], unsafe.Slice((*uint16)(unsafe.Pointer(&m.Data[2*off])), n))
	case tile.BF16:
		v.cvt.bf16ToF32(buf[:n], unsafe.Slice((*uint16)(unsafe.Pointer(&m.Data[2*off])), n))
	case tile.E4M3:
		for k, x := range m.Data[off : off+n] {
			buf[k] = e4m3Table[x]
		}
	case tile.E5M2:
		for k, x := range m.Data[off : off+n] {
			buf[k] = e5m2Table[x]
		}
	default:
		for k := range n {
			buf[k] = loadF32(m.DType, m.Data, off+k)
		}
	}
	return buf[:n]
}

// fp8 decoding tables.
var e4m3Table, e5m2Table [256]float32

func init() {
	for i := range 256 {
		e4m3Table[i] = tile.E4M3ToF32(uint8(i))
		e5m2Table[i] = tile.E5M2ToF32(uint8(i))
	}
}

// packA packs rows [i0, i0+mc) by columns [k0, k0+kc) of op(A[b]), scaled by
// alpha, into panels of MR rows: panel p holds, for each k, the MR values
// op(A)(i0+p·MR+r, k0+k), rows past mc zero. buf holds max(mc, kc) values.
func (v *variant) packA(dst []float32, m *Matrix, b, i0, mc, k0, kc int, alpha float32, buf []float32) {
	if kc == 0 {
		return
	}
	base := b * m.BatchStride
	if m.Trans {
		v.packRows(dst, m, base+k0*m.LD+i0, m.LD, kc, mc, v.MR, alpha, buf)
	} else {
		v.packCols(dst, m, base+i0*m.LD+k0, m.LD, kc, mc, v.MR, alpha, buf)
	}
}

// packB packs rows [k0, k0+kc) by columns [j0, j0+nc) of op(B[b]) into
// panels of NR columns. buf holds max(nc, kc) values.
func (v *variant) packB(dst []float32, m *Matrix, b, k0, kc, j0, nc int, buf []float32) {
	if kc == 0 {
		return
	}
	base := b * m.BatchStride
	if m.Trans {
		v.packCols(dst, m, base+j0*m.LD+k0, m.LD, kc, nc, v.NR, 1, buf)
	} else {
		v.packRows(dst, m, base+k0*m.LD+j0, m.LD, kc, nc, v.NR, 1, buf)
	}
}

// packRows fills panels of width W, kc steps each, from kc stored rows of w
// contiguous elements, the first at element off, row stride ld: lane c of
// step k of panel p is element p·W+c of row k. Lanes past w are zero.
func (v *variant) packRows(dst []float32, m *Matrix, off, ld, kc, w, W int, scale float32, buf []float32) {
	for k := range kc {
		src := v.loadRun(m, off+k*ld, w, buf)
		for p := 0; p < w; p += W {
			d := dst[p*kc+k*W : p*kc+k*W+W]
			s := src[p:min(p+W, w)]
			switch {
			case scale != 1:
				for i, x := range s {
					d[i] = scale * x
				}
				clear(d[len(s):])
			case len(s) == W:
				copyLanes(d, s)
			default:
				copy(d, s)
				clear(d[len(s):])
			}
		}
	}
}

// copyLanes copies one panel step, with fixed-size moves for the usual
// panel widths.
func copyLanes(d, s []float32) {
	switch len(d) {
	case 32:
		*(*[32]float32)(d) = [32]float32(s)
	case 16:
		*(*[16]float32)(d) = [16]float32(s)
	case 14:
		*(*[14]float32)(d) = [14]float32(s)
	case 6:
		*(*[6]float32)(d) = [6]float32(s)
	case 4:
		*(*[4]float32)(d) = [4]float32(s)
	default:
		copy(d, s)
	}
}

// packCols fills panels of width W, kc steps each, from w stored rows of kc
// contiguous elements, the first at element off, row stride ld: lane c of
// step k of panel p is element k of row p·W+c. Lanes past w are zero. buf
// holds W·kc values.
func (v *variant) packCols(dst []float32, m *Matrix, off, ld, kc, w, W int, scale float32, buf []float32) {
	for p := 0; p < w; p += W {
		panel := dst[p*kc : (p+W)*kc]
		n := min(W, w-p)
		k0 := 0 // columns [0, k0) are packed by transPack
		if n == W && kc >= 16 && v.transPack != nil && len(dst) >= (p+W)*kc+panelSlack {
			// Full panel: transpose 16 columns at a time in registers,
			// from the data when it is f32, else from rows converted
			// into buf.
			var rows []float32
			ldr := kc
			if m.DType == tile.F32 {
				rows = unsafe.Slice(f32At(m.Data, off+p*ld), (W-1)*ld+kc)
				ldr = ld
			} else {
				rows = buf[:W*kc]
				for r := range W {
					v.loadRun(m, off+(p+r)*ld, kc, rows[r*kc:])
				}
			}
			if v.transPack(&panel[0], &rows[0], ldr, kc&^15, W) {
				k0 = kc &^ 15
				for r := range W {
					gatherLane(panel[r:], W, rows[r*ldr+k0:r*ldr+kc], k0)
				}
				if scale != 1 {
					for i := range panel {
						panel[i] *= scale
					}
				}
				continue
			}
		}
		for r := range n {
			src := v.loadRun(m, off+(p+r)*ld, kc, buf)
			if scale != 1 {
				// src may be A itself: scale a copy.
				src = scaleInto(buf[kc:2*kc], src, scale)
			}
			gatherLane(panel[r:], W, src, 0)
		}
		for r := n; r < W; r++ {
			for k := range kc {
				panel[k*W+r] = 0
			}
		}
	}
}

// scaleInto sets d to scale·s and returns it.
func scaleInto(d, s []float32, scale float32) []float32 {
	for i, x := range s[:len(d)] {
		d[i] = scale * x
	}
	return d
}

// gatherLane stores src[i] as lane 0 of step k0+i of d, steps W apart.
func gatherLane(d []float32, W int, src []float32, k0 int) {
	if len(src) == 0 {
		return
	}
	_ = d[(k0+len(src)-1)*W] // bounds the stores below
	// Offsets from the first element, not a pointer stepped past the
	// last store, which may leave the allocation (checkptr rejects it).
	p := unsafe.Pointer(&d[k0*W])
	step := uintptr(4 * W)
	for i, x := range src {
		*(*float32)(unsafe.Add(p, uintptr(i)*step)) = x
	}
}

// panelSlack is the room left after the packed panels for transPack's
// overhanging stores.
const panelSlack = 16

// workspace holds one worker's buffers; they are recycled through wsPool.
type workspace struct {
	a, b, scratch, tile []float32 // 64-byte aligned
	sk                  []float32 // 64-byte aligned: a block of B (skinny path)
	buf, row            []float32
	h                   []uint16 // bf16 rows for the pair panels
}

var wsPool = sync.Pool{New: func() any { return new(workspace) }}

func getWorkspace() *workspace  { return wsPool.Get().(*workspace) }
func putWorkspace(w *workspace) { wsPool.Put(w) }

// grow returns s resized to n elements, reallocating when it is too small.
func grow(s []float32, n int) []float32 {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]float32, n)
}

// grow16 is grow for uint16.
func grow16(s []uint16, n int) []uint16 {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]uint16, n)
}

// growAligned is grow for buffers the kernels read with vector loads: the
// first element is 64-byte aligned.
func growAligned(s []float32, n int) []float32 {
	if cap(s) >= n {
		return s[:n]
	}
	s = make([]float32, n+15)
	off := int((64 - uintptr(unsafe.Pointer(&s[0]))%64) % 64 / 4)
	return s[off : off+n : off+n]
}

// f32At points at float32 element i of data.
func f32At(data []byte, i int) *float32 {
	return (*float32)(unsafe.Pointer(&data[4*i]))
}

// overlaps reports whether two byte slices share memory.
func overlaps(x, y []byte) bool {
	if len(x) == 0 || len(y) == 0 {
		return false
	}
	x0, y0 := uintptr(unsafe.Pointer(&x[0])), uintptr(unsafe.Pointer(&y[0]))
	return x0 < y0+uintptr(len(y)) && y0 < x0+uintptr(len(x))
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
func roundUp(a, m int) int { return ceilDiv(a, m) * m }
