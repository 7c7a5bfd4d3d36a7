package fallback

import (
	"fmt"
	"math"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tcrt-go/tcrt/internal/cpufeat"
	"github.com/tcrt-go/tcrt/tile"
)

// Block sizes of the fast path: a work item owns up to attnBM rows (query
// positions × the query heads of one key/value head) and streams the keys in
// blocks of attnBN.
const (
	attnBM = 64
	attnBN = 64
	// attnMinSplitKeys is the fewest keys a KV split is given.
	attnMinSplitKeys = 256
	// attnDecodeBN is the key block of the decode kernels (at most
	// attnBN·attnBM/4 keys fit the logits scratch), attnDecodePF how many
	// keys ahead they prefetch in a contiguous cache.
	attnDecodeBN = 256
	attnDecodePF = 64
)

// attnItem is one unit of parallel work: a row block of one key/value head
// of one sequence, and one split of its key range.
type attnItem struct {
	b, g, rb   int
	r0, rows   int // first row and row count (rows are position·group + head)
	k0, k1     int // key range of this split
	split      int
	nsplit     int
	part       int // index of the first partial slot of the item, -1 if unsplit
	nq, nk     int
	qrow0, qbt int // first query row and batch index in Q and O
}

// attnScratch is one worker's memory.
type attnScratch struct {
	qt, qr, st, kbuf, vbuf, o []float32
	m, l, mnew, corr, use     []float32
	pp                        []uint32 // the bf16 pairs of P (bf16 path)
	d                         int      // the head dimension it is sized for
}

// attnScratchPools keep the workers' scratch between calls, one pool per
// head dimension (d/8; the API allows multiples of 8 up to maxAttnDim): a
// fresh 170 KiB per worker and call was a fifth of a short decode step's
// time, in clearing and in the collections it caused.
var attnScratchPools [maxAttnDim/8 + 1]sync.Pool

// maxAttnDim is the largest head dimension whose scratch is pooled (the ops
// API's limit).
const maxAttnDim = 512

// getAttnScratch returns a worker's scratch for head dimension d; the
// worker hands it back with putAttnScratch.
func getAttnScratch(d int) *attnScratch {
	if d%8 == 0 && d <= maxAttnDim {
		if sc, ok := attnScratchPools[d/8].Get().(*attnScratch); ok {
			return sc
		}
	}
	return newAttnScratch(d)
}

// putAttnScratch returns sc to its pool.
func putAttnScratch(sc *attnScratch) {
	if d := sc.d; d%8 == 0 && d <= maxAttnDim {
		attnScratchPools[d/8].Put(sc)
	}
}

func newAttnScratch(d int) *attnScratch {
	return &attnScratch{
		qt:   make([]float32, d*attnBM),
		qr:   make([]float32, d*attnBM),
		st:   make([]float32, attnBN*attnBM),
		kbuf: make([]float32, attnBN*d),
		vbuf: make([]float32, attnBN*d),
		o:    make([]float32, attnBM*d),
		m:    make([]float32, attnBM), l: make([]float32, attnBM),
		mnew: make([]float32, attnBM), corr: make([]float32, attnBM), use: make([]float32, attnBM),
		pp: make([]uint32, attnBN/2*attnBM),
		d:  d,
	}
}

// AttentionFast runs the blocked, streaming-softmax attention with the named
// kernel variant (see AttentionVariants): work is split over sequences ×
// key/value heads × row blocks (and over key ranges when there are too few
// of those for the cores), each item keeps a running max and sum per row
// and never holds more than attnBM × attnBN logits.
func AttentionFast(variant string, a *AttentionArgs) error {
	kern := findAttnVariant(variant)
	if kern == nil {
		return fmt.Errorf("fallback: unknown attention variant %q", variant)
	}
	if why := cpufeat.Missing(kern.features...); why != "" {
		return fmt.Errorf("fallback: attention variant %q: %s", variant, why)
	}
	threads := a.Threads
	if threads <= 0 {
		threads = goruntime.GOMAXPROCS(0)
	}
	group := a.HeadsQ / a.HeadsKV
	bn := attnBN
	if a.PageSize > 0 && a.PageSize < bn {
		bn = a.PageSize
	}
	c := attnCalls.Get().(*attnCall)
	defer c.release()
	// Enumerate the unsplit items, heaviest row blocks first.
	bases := c.bases[:0]
	maxKeys := 0
	for b := 0; b < a.Batch; b++ {
		qrow0, nq, qbt := a.seqQ(b)
		nk := a.seqKV(b)
		nrows := nq * group
		for rb := (nrows+attnBM-1)/attnBM - 1; rb >= 0; rb-- {
			r0 := rb * attnBM
			rows := min(attnBM, nrows-r0)
			lo, _ := a.visible(r0/group, nq, nk)
			_, hi := a.visible((r0+rows-1)/group, nq, nk)
			lo, hi = max(lo, 0), min(hi, nk)
			lo = lo / bn * bn // keep key blocks aligned to pages
			if hi > lo {
				maxKeys = max(maxKeys, hi-lo)
			}
			for g := 0; g < a.HeadsKV; g++ {
				bases = append(bases, attnBase{b, g, rb, r0, rows, lo, hi, nq, nk, qrow0, qbt})
			}
		}
	}
	c.bases = bases
	nsplit := a.Splits
	if nsplit <= 0 {
		nsplit = 1
		if len(bases) < 4*threads {
			nsplit = min((4*threads+len(bases)-1)/max(len(bases), 1), max(1, maxKeys/attnMinSplitKeys))
		}
	}
	items := c.items[:0]
	nparts := 0
	for _, bs := range bases {
		span := bs.hi - bs.lo
		ns := 1
		if nsplit > 1 && span > 0 {
			ns = min(nsplit, (span+bn-1)/bn)
		}
		part := -1
		if ns > 1 {
			part = nparts
			nparts += ns
		}
		blocks := (span + bn - 1) / bn
		for s := 0; s < ns; s++ {
			k0 := bs.lo + s*blocks/ns*bn
			k1 := min(bs.hi, bs.lo+(s+1)*blocks/ns*bn)
			if span <= 0 {
				k0, k1 = 0, 0
			}
			items = append(items, attnItem{b: bs.b, g: bs.g, rb: bs.rb, r0: bs.r0, rows: bs.rows,
				k0: k0, k1: k1, split: s, nsplit: ns, part: part, nq: bs.nq, nk: bs.nk, qrow0: bs.qrow0, qbt: bs.qbt})
		}
	}
	c.items = items
	d := a.HeadDim
	c.d = d
	var parts *attnParts
	if nparts > 0 {
		parts = &c.parts
		parts.o = zeroed(parts.o, nparts*attnBM*d)
		parts.m = zeroed(parts.m, nparts*attnBM)
		parts.l = zeroed(parts.l, nparts*attnBM)
	}
	run := &c.run
	*run = attnRun{a: a, k: kern, group: group, bn: bn, parts: parts}
	c.par.run(len(items), threads, false)
	if run.nonFinite.Load() {
		// A NaN or +Inf logit: the reference rewrites every output.
		AttentionRef(a)
		return nil
	}
	if parts == nil {
		return nil
	}
	// Combine the splits of each split item.
	heads := c.heads[:0]
	for i := range items {
		if items[i].part >= 0 && items[i].split == 0 {
			heads = append(heads, i)
		}
	}
	c.heads = heads
	c.par.run(len(heads), threads, true)
	return nil
}

// attnBase is an unsplit work item of AttentionFast.
type attnBase struct{ b, g, rb, r0, rows, lo, hi, nq, nk, qrow0, qbt int }

// attnCall is one AttentionFast call's memory, pooled (attnCalls): its
// work lists, split partials and run state, and its workers.
type attnCall struct {
	bases []attnBase
	items []attnItem
	heads []int // the items whose splits are combined
	parts attnParts
	run   attnRun
	d     int
	par   attnPar
}

var attnCalls = sync.Pool{New: func() any {
	c := new(attnCall)
	c.par.c = c
	c.par.goFn = c.par.worker
	return c
}}

// release clears c's references to the call's tensors and keeps it.
func (c *attnCall) release() {
	c.run = attnRun{}
	attnCalls.Put(c)
}

// zeroed returns s resized to n zeros, reusing its memory where it has
// room.
func zeroed(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// attnPar runs the items (or, with combine, the split combinations) of
// its call on up to threads goroutines, each with its own scratch.
type attnPar struct {
	c       *attnCall
	n       int
	combine bool
	next    atomic.Int64
	wg      sync.WaitGroup
	gp      goPanic
	goFn    func() // p.worker, made once per pooled call
}

// run runs n items on up to threads goroutines. Every worker is a new
// goroutine: with the calling goroutine taking a share instead, 4096-token
// decode steps ran 10–20% slower.
func (p *attnPar) run(n, threads int, combine bool) {
	threads = min(threads, n)
	if n <= 0 {
		return
	}
	p.n, p.combine = n, combine
	p.next.Store(0)
	if threads <= 1 {
		p.work()
		return
	}
	p.gp.p.Store(nil)
	p.wg.Add(threads)
	for range threads {
		go p.goFn()
	}
	p.wg.Wait()
	p.gp.rethrow()
}

// worker is work on a goroutine of its own.
func (p *attnPar) worker() {
	defer p.wg.Done()
	defer p.gp.catch()
	p.work()
}

// work takes items until none are left.
func (p *attnPar) work() {
	c := p.c
	if p.combine {
		buf := getFloats(c.d)
		defer putFloats(buf)
		for {
			i := int(p.next.Add(1) - 1)
			if i >= p.n {
				return
			}
			clear(*buf)
			c.run.combine(*buf, &c.items[c.heads[i]])
		}
	}
	sc := getAttnScratch(c.d)
	for {
		i := int(p.next.Add(1) - 1)
		if i >= p.n {
			break
		}
		c.run.item(sc, &c.items[i])
	}
	putAttnScratch(sc)
}

type attnParts struct {
	o, m, l []float32
}

type attnRun struct {
	a     *AttentionArgs
	k     *attnKernels
	group int
	bn    int
	parts *attnParts
	// nonFinite is set when a logit is NaN or +Inf: the kernels' max and
	// exp drop NaNs, so the call is redone by AttentionRef, which follows
	// the non-finite policy (docs/nonfinite.md).
	nonFinite atomic.Bool
}

// hasNaNOrPosInf reports whether s holds a NaN or +Inf (−Inf is a masked
// logit, weight 0).
func hasNaNOrPosInf(s []float32) bool {
	bad := false
	for _, v := range s {
		b := math.Float32bits(v)
		bad = bad || b&0x7fffffff > 0x7f800000 || b == 0x7f800000
	}
	return bad
}

// loadRowF32 converts n elements of t at element offset off to float32,
// times scale.
func loadRowF32(dst []float32, t *AttnTensor, off int, scale float32) {
	switch t.DType {
	case tile.F32:
		src := unsafe.Slice((*float32)(unsafe.Pointer(&t.Data[4*off])), len(dst))
		for i, v := range src {
			dst[i] = v * scale
		}
	case tile.BF16:
		src := unsafe.Slice((*uint16)(unsafe.Pointer(&t.Data[2*off])), len(dst))
		for i, v := range src {
			dst[i] = math.Float32frombits(uint32(v)<<16) * scale
		}
	default:
		src := unsafe.Slice((*uint16)(unsafe.Pointer(&t.Data[2*off])), len(dst))
		for i, v := range src {
			dst[i] = tile.F16ToF32(v) * scale
		}
	}
}

// kvRows returns a pointer to nb consecutive key (or value) rows starting at
// key k0 of head g of sequence b and the row stride, converting them into buf
// (zero-padding to a multiple of 8 rows) when they are not f32 or pad is set
// and nb is not a multiple of 8. Blocks never cross a page.
//
// f32 blocks are read in place even though a head's rows are often a
// multiple of 4 KiB apart (a few L1 sets): measured, copying them to a dense
// buffer first was slower for both prefill (−30%) and decode (−10%).
func (r *attnRun) kvRows(t *AttnTensor, buf []float32, b, k0, nb, g int, pad bool) (*float32, int) {
	a := r.a
	d := a.HeadDim
	off := a.kvOffset(t, b, k0, g)
	direct := !(pad && nb%8 != 0)
	if t.DType == tile.F32 && direct {
		return (*float32)(unsafe.Pointer(&t.Data[4*off])), t.SeqStride
	}
	cvt := r.k.cvtF16
	if t.DType == tile.BF16 {
		cvt = r.k.cvtBF16
	}
	n16 := d &^ 15
	for j := 0; j < nb; j++ {
		row := buf[j*d : (j+1)*d]
		o := off + j*t.SeqStride
		if t.DType == tile.F32 {
			copy(row, unsafe.Slice((*float32)(unsafe.Pointer(&t.Data[4*o])), d))
			continue
		}
		if cvt == nil || n16 == 0 {
			loadRowF32(row, t, o, 1)
			continue
		}
		cvt(&row[0], (*uint16)(unsafe.Pointer(&t.Data[2*o])), n16)
		if n16 < d {
			loadRowF32(row[n16:], t, o+n16, 1)
		}
	}
	if pad {
		clear(buf[nb*d : (nb+7)/8*8*d])
	}
	return &buf[0], d
}

var negInf = float32(math.Inf(-1))

// bf16 reports whether the prefill takes the bf16 pair kernels: the
// variant has them, Q, K and V are bf16 and the head dimension is a
// multiple of 16.
//
// Numerics, against the f32 path (which widens bf16 to f32 exactly): Q·Kᵀ
// is the same sum of exact products (a bf16 product is exact in f32) in
// another order, VDPBF16PS adding two products at a time, and the scale
// is applied to the sum, not to Q. P is rounded to bf16 (relative error
// ≤ 2⁻⁹ per weight) before P·V, whose products are again exact; the
// softmax sum l adds the unrounded P, so an output row's weights sum to 1
// within that rounding. VDPBF16PS and VCVTNE2PS2BF16 flush subnormal
// inputs and outputs to zero (bf16 subnormals are below 1.2e-38; the
// attention's P is 0 there at f32's precision anyway) and round to
// nearest even. The output error is then about 2⁻⁹ relative to the
// largest |V| of a row, against the float64 reference.
func (r *attnRun) bf16() bool {
	a := r.a
	return r.k.gemmBF16 != nil && a.Q.DType == tile.BF16 && a.K.DType == tile.BF16 && a.V.DType == tile.BF16 && a.HeadDim%16 == 0
}

// u32s views the first n elements' bytes of p as uint32.
func u32s(p []float32, n int) []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(&p[0])), n)[:n:n]
}

// attnZeroBF16 is a row of bf16 zeros, the partner of an odd block's last
// value row.
var attnZeroBF16 [maxAttnDim]uint16

// kvRowsBF16 returns the bf16 key rows k0 … k0+nb−1 of head g of sequence
// b and their stride in bytes: in place when nb is a multiple of 8 (the
// gemm reads 8 rows at a time), else copied into buf and zero-padded to
// one.
func (r *attnRun) kvRowsBF16(t *AttnTensor, buf []float32, b, k0, nb, g int) (*byte, int) {
	a := r.a
	d := a.HeadDim
	off := a.kvOffset(t, b, k0, g)
	if nb%8 == 0 {
		return &t.Data[2*off], 2 * t.SeqStride
	}
	n8 := (nb + 7) &^ 7
	dst := unsafe.Slice((*uint16)(unsafe.Pointer(&buf[0])), n8*d)
	for j := 0; j < nb; j++ {
		copy(dst[j*d:(j+1)*d], unsafe.Slice((*uint16)(unsafe.Pointer(&t.Data[2*(off+j*t.SeqStride)])), d))
	}
	clear(dst[nb*d:])
	return (*byte)(unsafe.Pointer(&dst[0])), 2 * d
}

// pvBF16 adds P·V of the key block k0 … k0+nb−1 to the bmp×d accumulator
// o (already scaled by corr): P (sc.st, transposed, rows of keys) and V
// are packed into bf16 pairs of consecutive keys, an odd block's last key
// paired with zeros.
func (r *attnRun) pvBF16(sc *attnScratch, it *attnItem, k0, nb, bmp int, o []float32) {
	a, k := r.a, r.k
	d := a.HeadDim
	st := sc.st
	np := (nb + 1) / 2
	if nb%2 == 1 {
		clear(st[nb*bmp : (nb+1)*bmp])
	}
	pp := sc.pp
	for jp := 0; jp < np; jp++ {
		k.pairsF32BF16(&pp[jp*bmp], &st[2*jp*bmp], &st[(2*jp+1)*bmp], bmp)
	}
	v := &a.V
	off := a.kvOffset(v, it.b, k0, it.g)
	vrow := func(j int) *uint16 {
		if j >= nb {
			return &attnZeroBF16[0]
		}
		return (*uint16)(unsafe.Pointer(&v.Data[2*(off+j*v.SeqStride)]))
	}
	vpk := u32s(sc.vbuf, np*d)
	for jp := 0; jp < np; jp++ {
		k.pairsBF16(&vpk[jp*d], vrow(2*jp), vrow(2*jp+1), d)
	}
	for q0 := 0; q0 < it.rows; q0 += 8 {
		for c0 := 0; c0 < d; c0 += 32 {
			k.gemmBF16(&o[q0*d+c0], d, (*byte)(unsafe.Pointer(&pp[q0])), 4, 4*bmp, &vpk[c0], d, np, min(32, d-c0), &sc.corr[q0], 1)
		}
	}
}

// item computes one work item.
func (r *attnRun) item(sc *attnScratch, it *attnItem) {
	a, k := r.a, r.k
	d, G := a.HeadDim, r.group
	rows := it.rows
	if x, y := kvIndex(a.K.DType), kvIndex(a.V.DType); rows <= 4 && d%64 == 0 && x >= 0 && y >= 0 && k.qk4[x] != nil && k.pv4[y] != nil {
		r.itemDecode(sc, it, k.qk4[x], k.pv4[y])
		return
	}
	bmp := (rows + 15) / 16 * 16 // columns of qt and st
	// Q block, scaled and transposed: qt[c·bmp + row].
	qt := sc.qt[:d*bmp]
	clear(qt)
	bf := r.bf16()
	// Few rows (decode) take the dot-product form on row-major Q instead.
	dot := k.dot4x4 != nil && d%16 == 0 && rows <= 16 && !bf
	// The bf16 path: Q unscaled in bf16 pairs, transposed: qp[c/2·bmp + row].
	var qp []uint32
	if bf {
		qp = u32s(sc.qt, d/2*bmp)
		for rr := 0; rr < rows; rr++ {
			row := it.r0 + rr
			i, h := row/G, it.g*G+row%G
			off := a.Q.offset(it.qbt, it.qrow0+i, h)
			for c, v := range unsafe.Slice((*uint32)(unsafe.Pointer(&a.Q.Data[2*off])), d/2) {
				qp[c*bmp+rr] = v
			}
		}
	}
	for rr := 0; rr < rows && !bf; rr++ {
		row := it.r0 + rr
		i, h := row/G, it.g*G+row%G
		qrow := sc.qr[rr*d : (rr+1)*d]
		loadRowF32(qrow, &a.Q, a.Q.offset(it.qbt, it.qrow0+i, h), a.Scale)
		for c, v := range qrow {
			qt[c*bmp+rr] = v
		}
	}
	clear(sc.qr[rows*d : (rows+3)/4*4*d])
	m, l := sc.m[:bmp], sc.l[:bmp]
	mnew, corr, use := sc.mnew[:bmp], sc.corr[:bmp], sc.use[:bmp]
	for c := range m {
		m[c], l[c] = negInf, 0
	}
	o := sc.o[:bmp*d]
	clear(o)
	// Visible key range of each row's position, for masking.
	iFirst := it.r0 / G
	iLast := (it.r0 + rows - 1) / G
	loFirst, hiFirst := a.visible(iFirst, it.nq, it.nk)
	loLast, hiLast := a.visible(iLast, it.nq, it.nk)
	st := sc.st
	for k0 := it.k0; k0 < it.k1; k0 += r.bn {
		nb := min(r.bn, it.k1-k0)
		// Skip blocks no row sees.
		if k0+nb <= loFirst || k0 >= hiLast {
			continue
		}
		if next := k0 + r.bn; k.prefetch != nil && next < it.k1 {
			nn := min(r.bn, it.k1-next)
			for _, t := range []*AttnTensor{&a.K, &a.V} {
				sz := t.DType.Size()
				off := a.kvOffset(t, it.b, next, it.g) * sz
				k.prefetch(&t.Data[off], nn, t.SeqStride*sz, d*sz)
			}
		}
		// S^T[j·bmp + row] = K_j · q_row.
		if bf {
			kb, kld := r.kvRowsBF16(&a.K, sc.kbuf, it.b, k0, nb, it.g)
			for j0 := 0; j0 < nb; j0 += 8 {
				for c0 := 0; c0 < bmp; c0 += 32 {
					k.gemmBF16(&st[j0*bmp+c0], bmp, (*byte)(unsafe.Add(unsafe.Pointer(kb), j0*kld)), kld, 4, &qp[c0], bmp, d/2, min(32, bmp-c0), nil, a.Scale)
				}
			}
		}
		var kp *float32
		var kld int
		if !bf {
			kp, kld = r.kvRows(&a.K, sc.kbuf, it.b, k0, nb, it.g, true)
		}
		for j0 := 0; j0 < nb && dot; j0 += 4 {
			for i0 := 0; i0 < rows; i0 += 4 {
				k.dot4x4(&st[j0*bmp+i0], bmp, at(kp, j0*kld), kld, &sc.qr[i0*d], d, d)
			}
		}
		for j0 := 0; j0 < nb && !dot && !bf; j0 += 8 {
			for c0 := 0; c0 < bmp; c0 += 32 {
				k.gemm(&st[j0*bmp+c0], bmp, at(kp, j0*kld), kld, 1, &qt[c0], bmp, d, min(32, bmp-c0), nil)
			}
		}
		if a.SoftCap > 0 {
			capv, inv := float64(a.SoftCap), 1/float64(a.SoftCap)
			for j := 0; j < nb; j++ {
				row := st[j*bmp : j*bmp+rows]
				for c, v := range row {
					row[c] = float32(capv * math.Tanh(float64(v)*inv))
				}
			}
		}
		// Mask when some row does not see the whole block.
		if k0 < loLast || k0+nb > hiFirst {
			for rr := 0; rr < rows; rr++ {
				lo, hi := a.visible((it.r0+rr)/G, it.nq, it.nk)
				for j := 0; j < nb; j++ {
					if kj := k0 + j; kj < lo || kj >= hi {
						st[j*bmp+rr] = negInf
					}
				}
			}
		}
		if hasNaNOrPosInf(st[:nb*bmp]) {
			r.nonFinite.Store(true)
			return
		}
		copy(mnew, m)
		k.colMax(&st[0], bmp, nb, bmp, &mnew[0])
		for c := range mnew {
			if mnew[c] == negInf {
				use[c], corr[c] = 0, 1
			} else {
				use[c] = mnew[c]
				corr[c] = float32(math.Exp(float64(m[c] - mnew[c])))
				l[c] *= corr[c]
			}
			m[c] = mnew[c]
		}
		k.expRows(&st[0], bmp, nb, bmp, &use[0], &l[0])
		if bf {
			r.pvBF16(sc, it, k0, nb, bmp, o)
			continue
		}
		vp, vld := r.kvRows(&a.V, sc.vbuf, it.b, k0, nb, it.g, false)
		for q0 := 0; q0 < rows; q0 += 8 {
			for c0 := 0; c0 < d; c0 += 32 {
				k.gemm(&o[q0*d+c0], d, &st[q0], 1, bmp, at(vp, c0), vld, nb, min(32, d-c0), &corr[q0])
			}
		}
	}
	if it.part >= 0 {
		p := r.parts
		slot := it.part + it.split
		copy(p.o[slot*attnBM*d:], o[:rows*d])
		copy(p.m[slot*attnBM:], m[:rows])
		copy(p.l[slot*attnBM:], l[:rows])
		return
	}
	for rr := 0; rr < rows; rr++ {
		r.store(it, rr, o[rr*d:(rr+1)*d], m[rr], l[rr])
	}
}

// store writes one finished row: O = acc / l and LSE = m + log l (zeros and
// −Inf when l is 0).
func (r *attnRun) store(it *attnItem, rr int, acc []float32, m, l float32) {
	a := r.a
	G := r.group
	row := it.r0 + rr
	i, h := row/G, it.g*G+row%G
	oo := a.O.offset(it.qbt, it.qrow0+i, h)
	inv := float32(0)
	if l > 0 {
		inv = 1 / l
	}
	switch a.O.DType {
	case tile.F32:
		dst := unsafe.Slice((*float32)(unsafe.Pointer(&a.O.Data[4*oo])), len(acc))
		for c, v := range acc {
			dst[c] = v * inv
		}
	case tile.BF16:
		dst := unsafe.Slice((*uint16)(unsafe.Pointer(&a.O.Data[2*oo])), len(acc))
		for c, v := range acc {
			dst[c] = tile.F32ToBF16(v * inv)
		}
	default:
		for c, v := range acc {
			storeF32(a.O.DType, a.O.Data, oo+c, v*inv)
		}
	}
	if a.LSE != nil {
		lse := negInf
		if l > 0 {
			lse = m + float32(math.Log(float64(l)))
		}
		storeF32(tile.F32, a.LSE, a.lseOffset(it.b, h, i), lse)
	}
}

// combine merges the partial results of the splits of the item that starts
// at it (its split 0) and stores the rows.
func (r *attnRun) combine(acc []float32, it *attnItem) {
	p := r.parts
	d := r.a.HeadDim
	for rr := 0; rr < it.rows; rr++ {
		mx := negInf
		for s := 0; s < it.nsplit; s++ {
			mx = max(mx, p.m[(it.part+s)*attnBM+rr])
		}
		clear(acc)
		var l float32
		if mx != negInf {
			for s := 0; s < it.nsplit; s++ {
				slot := it.part + s
				ms, ls := p.m[slot*attnBM+rr], p.l[slot*attnBM+rr]
				if ms == negInf {
					continue
				}
				w := float32(math.Exp(float64(ms - mx)))
				l += w * ls
				src := p.o[(slot*attnBM+rr)*d : (slot*attnBM+rr+1)*d]
				for c, v := range src {
					acc[c] += w * v
				}
			}
		}
		r.store(it, rr, acc, mx, l)
	}
}

// itemDecode computes a work item of at most 4 rows (decode) with the qk4
// and pv4 kernels, which read each key and value row once, in place and in
// its own dtype. Logits are kept as S[j·4+row]; rows past it.rows are zero
// queries whose results are dropped.
func (r *attnRun) itemDecode(sc *attnScratch, it *attnItem, qk qk4Func, pv pv4Func) {
	a, k := r.a, r.k
	d, G := a.HeadDim, r.group
	rows := it.rows
	q := sc.qr[:4*d]
	for rr := 0; rr < rows; rr++ {
		row := it.r0 + rr
		i, h := row/G, it.g*G+row%G
		loadRowF32(q[rr*d:(rr+1)*d], &a.Q, a.Q.offset(it.qbt, it.qrow0+i, h), a.Scale)
	}
	clear(q[rows*d:])
	// Q·Kᵀ on bf16 pairs when Q and K are bf16: the unscaled queries.
	var q16 []uint16
	if k.qk4BF16 != nil && a.Q.DType == tile.BF16 && a.K.DType == tile.BF16 && d%32 == 0 {
		q16 = unsafe.Slice((*uint16)(unsafe.Pointer(&sc.qt[0])), 4*d)
		for rr := 0; rr < rows; rr++ {
			row := it.r0 + rr
			i, h := row/G, it.g*G+row%G
			off := a.Q.offset(it.qbt, it.qrow0+i, h)
			copy(q16[rr*d:(rr+1)*d], unsafe.Slice((*uint16)(unsafe.Pointer(&a.Q.Data[2*off])), d))
		}
		clear(q16[rows*d:])
	}
	var m, l, corr, use [4]float32
	var m16, use16, sum16 [16]float32
	for c := range m {
		m[c] = negInf
	}
	o := sc.o[:4*d]
	clear(o)
	iFirst := it.r0 / G
	iLast := (it.r0 + rows - 1) / G
	loFirst, hiFirst := a.visible(iFirst, it.nq, it.nk)
	loLast, hiLast := a.visible(iLast, it.nq, it.nk)
	st := sc.st
	ksz, vsz := a.K.DType.Size(), a.V.DType.Size()
	ldk, ldv := a.K.SeqStride*ksz, a.V.SeqStride*vsz
	for k0, nb := it.k0, 0; k0 < it.k1; k0 += nb {
		// Blocks of attnDecodeBN keys, cut at page ends.
		nb = min(attnDecodeBN, it.k1-k0)
		if a.PageSize > 0 {
			nb = min(nb, a.PageSize-k0%a.PageSize)
		}
		if k0+nb <= loFirst || k0 >= hiLast {
			continue
		}
		// Contiguous caches: the kernels prefetch attnDecodePF keys ahead
		// as they go. Paged ones: the next block's rows are elsewhere, so
		// ask for them here.
		pfk, pfv := 0, 0
		kp := &a.K.Data[a.kvOffset(&a.K, it.b, k0, it.g)*ksz]
		vp := &a.V.Data[a.kvOffset(&a.V, it.b, k0, it.g)*vsz]
		if next := k0 + nb; k.pf4 && a.PageSize == 0 && next < it.k1 {
			pfk, pfv = attnDecodePF*ldk, attnDecodePF*ldv
		} else if k.prefetch != nil && next < it.k1 {
			nn := min(attnDecodeBN, it.k1-next)
			if a.PageSize > 0 {
				nn = min(nn, a.PageSize-next%a.PageSize)
			}
			for _, t := range []*AttnTensor{&a.K, &a.V} {
				sz := t.DType.Size()
				off := a.kvOffset(t, it.b, next, it.g) * sz
				k.prefetch(&t.Data[off], nn, t.SeqStride*sz, d*sz)
			}
		}
		n4 := nb &^ 3
		nb4 := (nb + 3) &^ 3
		if n4 > 0 && q16 != nil {
			k.qk4BF16(&st[0], kp, ldk, &q16[0], d, d, n4, pfk, a.Scale)
		} else if n4 > 0 {
			qk(&st[0], kp, ldk, &q[0], d, d, n4, pfk)
		}
		if n4 < nb {
			// The last few keys: one at a time, the rest of the group −Inf.
			qk4Go(a.K.DType)(&st[n4*4], (*byte)(unsafe.Add(unsafe.Pointer(kp), n4*ldk)), ldk, &q[0], d, d, nb-n4, 0)
			for j := nb * 4; j < nb4*4; j++ {
				st[j] = negInf
			}
		}
		if a.SoftCap > 0 {
			capv, inv := float64(a.SoftCap), 1/float64(a.SoftCap)
			for j, v := range st[:nb*4] {
				st[j] = float32(capv * math.Tanh(float64(v)*inv))
			}
		}
		if k0 < loLast || k0+nb > hiFirst {
			for rr := 0; rr < rows; rr++ {
				lo, hi := a.visible((it.r0+rr)/G, it.nq, it.nk)
				for j := 0; j < nb; j++ {
					if kj := k0 + j; kj < lo || kj >= hi {
						st[j*4+rr] = negInf
					}
				}
			}
		}
		if hasNaNOrPosInf(st[:nb4*4]) {
			r.nonFinite.Store(true)
			return
		}
		for c := range m16 {
			m16[c] = m[c&3]
		}
		k.colMax(&st[0], 16, nb4/4, 16, &m16[0])
		for c := range m {
			mn := max(m16[c], m16[c+4], m16[c+8], m16[c+12])
			if mn == negInf {
				use[c], corr[c] = 0, 1
			} else {
				use[c] = mn
				corr[c] = float32(math.Exp(float64(m[c] - mn)))
				l[c] *= corr[c]
			}
			m[c] = mn
		}
		for c := range use16 {
			use16[c], sum16[c] = use[c&3], 0
		}
		k.expRows(&st[0], 16, nb4/4, 16, &use16[0], &sum16[0])
		for c := range l {
			l[c] += sum16[c] + sum16[c+4] + sum16[c+8] + sum16[c+12]
		}
		pv(&o[0], d, &st[0], vp, ldv, nb, d, &corr[0], pfv)
	}
	if it.part >= 0 {
		p := r.parts
		slot := it.part + it.split
		copy(p.o[slot*attnBM*d:], o[:rows*d])
		copy(p.m[slot*attnBM:], m[:rows])
		copy(p.l[slot*attnBM:], l[:rows])
		return
	}
	for rr := 0; rr < rows; rr++ {
		r.store(it, rr, o[rr*d:(rr+1)*d], m[rr], l[rr])
	}
}
