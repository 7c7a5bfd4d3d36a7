package fallback

import (
	"math"
	goruntime "runtime"
	"sync"
	"sync/atomic"

	"github.com/tcrt-go/tcrt/tile"
)

// The fast quantisation path: the tile package's vector codecs on
// contiguous runs, split across cores. Granularities whose blocks lie inside
// a row (row, 1×128, MX) and 128×128 (inside a band of 128 rows) compute
// each block's amax and encode it while it is in cache; per-tensor scales
// computed from the amax and per-column scales need a first pass over the
// whole input. Work is split into tasks of whole rows (whole 128-row bands
// for 128×128), or of flat ranges for per-tensor scales, so a tensor of
// fewer rows than cores runs on fewer cores (except per tensor).

// quantGrain is the smallest number of elements worth a task.
const quantGrain = 1 << 15

// streamBytes is the size of output from which the dequantiser writes with
// non-temporal stores: about the two cores' L2 (the threshold Go's memmove
// takes for the same choice).
const streamBytes = 1 << 20

// quantParallel runs fn(lo, hi, w) over [0, n) in tasks of grain units,
// on at most threads goroutines; w is the worker index (< threads).
func quantParallel(n, grain, threads int, fn func(lo, hi, w int)) {
	if threads <= 0 {
		threads = goruntime.GOMAXPROCS(0)
	}
	grain = max(grain, 1)
	tasks := (n + grain - 1) / grain
	workers := min(threads, tasks)
	if workers <= 1 {
		if n > 0 {
			fn(0, n, 0)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var gp goPanic
	defer gp.rethrow()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer gp.catch()
			for {
				t := int(next.Add(1) - 1)
				if t >= tasks {
					return
				}
				fn(t*grain, min(n, (t+1)*grain), w)
			}
		}()
	}
	wg.Wait()
}

func quantWorkers(threads int) int {
	if threads <= 0 {
		return goruntime.GOMAXPROCS(0)
	}
	return threads
}

// rowsGrain is the number of rows of cols elements worth a task.
func rowsGrain(cols, unit int) int {
	return max(1, quantGrain/max(1, cols*unit)) * unit
}

// f32Run returns elements [lo, hi) of x (type t) as float32, converting
// into buf when x is not f32.
func f32Run(t tile.DType, x []byte, lo, hi int, buf *[]float32) []float32 {
	if t == tile.F32 {
		return F32s(x)[lo:hi]
	}
	if cap(*buf) < hi-lo {
		*buf = make([]float32, hi-lo)
	}
	out := (*buf)[:hi-lo]
	h := u16s(x)[lo:hi]
	if t == tile.BF16 {
		for i, v := range h {
			out[i] = math.Float32frombits(uint32(v) << 16)
		}
	} else {
		for i, v := range h {
			out[i] = tile.F16ToF32(v)
		}
	}
	return out
}

func amaxBits(x []float32) uint32 {
	return math.Float32bits(tile.AbsMax(x))
}

// bitsToAmax turns a max of |x| bit patterns into the amax value.
func bitsToAmax(b uint32) float32 {
	if b > 0x7f800000 {
		return math.Float32frombits(0x7fc00000)
	}
	return math.Float32frombits(b)
}

// QuantizeFast is the fast quantiser; it writes the same bytes as
// QuantizeRef.
func QuantizeFast(a *QuantizeArgs) error {
	if a.Scales != nil {
		if err := CheckScales("quantize", "Scales", a.Scales); err != nil {
			return err
		}
	}
	q := &quantizer{a: a, emax: tile.Float8EMax(a.QType), fmax: tile.Float8Max(a.QType)}
	sr, sc := a.Gran.ScaleGrid(a.Rows, a.Cols)
	q.sc = sc
	q.scale = make([]float32, sr*sc)
	if a.Gran == MX {
		q.e8 = make([]uint8, sr*sc)
	}
	q.bufs = make([][]float32, quantWorkers(a.Threads))
	q.wantTotal = a.Amax != nil
	switch a.Gran {
	case PerTensor:
		q.perTensor()
	case PerColumn:
		q.perColumn()
	case Block128x128:
		q.blocks128()
	default:
		q.rowBlocks()
	}
	if a.ScaleInv != nil {
		if a.Gran == MX {
			copy(a.ScaleInv, q.e8)
		} else {
			inv := F32s(a.ScaleInv)
			for b, s := range q.scale {
				inv[b] = 1 / s
			}
		}
	}
	if a.Amax != nil {
		F32s(a.Amax)[0] = bitsToAmax(q.total.Load())
	}
	return nil
}

type quantizer struct {
	a         *QuantizeArgs
	emax      int
	fmax      float32
	sc        int
	scale     []float32
	e8        []uint8
	bufs      [][]float32 // per worker conversion buffers
	total     atomic.Uint32
	wantTotal bool
}

func (q *quantizer) addTotal(b uint32) {
	for {
		old := q.total.Load()
		if b <= old || q.total.CompareAndSwap(old, b) {
			return
		}
	}
}

// blockScale sets the scale of block b from its amax bits (computed
// scales) and returns it.
func (q *quantizer) blockScale(b int, am uint32) float32 {
	a := q.a
	switch {
	case a.Gran == MX:
		q.e8[b], q.scale[b] = MXScale(bitsToAmax(am), q.emax)
	case a.Scales != nil:
		q.scale[b] = a.Scales[b]
	default:
		q.scale[b] = ScaleFromAmax(bitsToAmax(am), q.fmax, a.Margin, a.PowerOfTwo)
	}
	return q.scale[b]
}

func (q *quantizer) encode(dst []uint8, src []float32, s float32) {
	_ = tile.EncodeF32ToFloat8(q.a.QType, dst, src, s, q.a.Mode)
}

func (q *quantizer) perTensor() {
	a := q.a
	n := a.Rows * a.Cols
	if a.Scales == nil {
		quantParallel(n, quantGrain, a.Threads, func(lo, hi, w int) {
			q.addTotal(amaxBits(f32Run(a.XType, a.X, lo, hi, &q.bufs[w])))
		})
		q.blockScale(0, q.total.Load())
	} else {
		q.scale[0] = a.Scales[0]
	}
	s := q.scale[0]
	fused := a.Scales != nil && q.wantTotal
	quantParallel(n, quantGrain, a.Threads, func(lo, hi, w int) {
		x := f32Run(a.XType, a.X, lo, hi, &q.bufs[w])
		if fused {
			q.addTotal(amaxBits(x))
		}
		q.encode(a.Q[lo:hi], x, s)
	})
}

// rowBlocks handles PerRow, Block1x128 and MX: blocks are runs of one row.
// The full blocks of a row go through the tile package's block codecs in
// one call; a partial last block separately.
func (q *quantizer) rowBlocks() {
	a := q.a
	_, bc := a.Gran.Block(a.Rows, a.Cols)
	full := a.Cols / bc
	needAmax := a.Scales == nil || q.wantTotal
	quantParallel(a.Rows, rowsGrain(a.Cols, 1), a.Threads, func(r0, r1, w int) {
		var local uint32
		am := make([]float32, q.sc)
		for r := r0; r < r1; r++ {
			x := f32Run(a.XType, a.X, r*a.Cols, (r+1)*a.Cols, &q.bufs[w])
			base := r * q.sc
			if needAmax {
				_ = tile.AbsMaxBlocks(am[:full], x[:full*bc], bc)
				if full < q.sc {
					am[full] = tile.AbsMax(x[full*bc:])
				}
			}
			for b := range q.sc {
				bits := math.Float32bits(am[b])
				local = max(local, bits)
				q.blockScale(base+b, bits)
			}
			q.encodeRow(a.Q[r*a.Cols:(r+1)*a.Cols], x, q.scale[base:base+q.sc], bc, full)
		}
		q.addTotal(local)
	})
}

// encodeRow encodes one row of len(scales) blocks of bc values (the last
// may be partial; full is the number of whole blocks).
func (q *quantizer) encodeRow(dst []uint8, x, scales []float32, bc, full int) {
	a := q.a
	if full > 0 {
		_ = tile.EncodeF32ToFloat8Blocks(a.QType, dst[:full*bc], x[:full*bc], scales[:full], bc, a.Mode)
	}
	if full < len(scales) {
		q.encode(dst[full*bc:], x[full*bc:], scales[full])
	}
}

// blocks128 handles 128×128 tiles, one band of 128 rows per task.
func (q *quantizer) blocks128() {
	a := q.a
	const bs = 128
	bands := (a.Rows + bs - 1) / bs
	full := a.Cols / bs
	colMax := make([][]uint32, len(q.bufs))
	quantParallel(bands, 1, a.Threads, func(b0, b1, w int) {
		if colMax[w] == nil {
			colMax[w] = make([]uint32, q.sc)
		}
		cm := colMax[w]
		am := make([]float32, q.sc)
		for band := b0; band < b1; band++ {
			rlo, rhi := band*bs, min(a.Rows, (band+1)*bs)
			clear(cm)
			if a.Scales == nil || q.wantTotal {
				for r := rlo; r < rhi; r++ {
					x := f32Run(a.XType, a.X, r*a.Cols, (r+1)*a.Cols, &q.bufs[w])
					_ = tile.AbsMaxBlocks(am[:full], x[:full*bs], bs)
					if full < q.sc {
						am[full] = tile.AbsMax(x[full*bs:])
					}
					for j, v := range am {
						cm[j] = max(cm[j], math.Float32bits(v))
					}
				}
			}
			for j, v := range cm {
				q.blockScale(band*q.sc+j, v)
				q.addTotal(v)
			}
			for r := rlo; r < rhi; r++ {
				x := f32Run(a.XType, a.X, r*a.Cols, (r+1)*a.Cols, &q.bufs[w])
				q.encodeRow(a.Q[r*a.Cols:(r+1)*a.Cols], x, q.scale[band*q.sc:(band+1)*q.sc], bs, full)
			}
		}
	})
}

// perColumn: a first pass takes every column's amax (per-worker partial
// maxima, merged), then rows are encoded with the vector of column scales.
func (q *quantizer) perColumn() {
	a := q.a
	grain := rowsGrain(a.Cols, 1)
	if a.Scales == nil || q.wantTotal {
		part := make([][]uint32, len(q.bufs))
		quantParallel(a.Rows, grain, a.Threads, func(r0, r1, w int) {
			if part[w] == nil {
				part[w] = make([]uint32, a.Cols)
			}
			cm := part[w]
			for r := r0; r < r1; r++ {
				x := f32Run(a.XType, a.X, r*a.Cols, (r+1)*a.Cols, &q.bufs[w])
				for j, v := range x {
					cm[j] = max(cm[j], math.Float32bits(v)&0x7fffffff)
				}
			}
		})
		for j := range a.Cols {
			var am uint32
			for _, p := range part {
				if p != nil {
					am = max(am, p[j])
				}
			}
			q.blockScale(j, am)
			q.addTotal(am)
		}
	} else {
		copy(q.scale, a.Scales)
	}
	quantParallel(a.Rows, grain, a.Threads, func(r0, r1, w int) {
		for r := r0; r < r1; r++ {
			x := f32Run(a.XType, a.X, r*a.Cols, (r+1)*a.Cols, &q.bufs[w])
			_ = tile.EncodeF32ToFloat8Scales(a.QType, a.Q[r*a.Cols:(r+1)*a.Cols], x, q.scale, a.Mode)
		}
	})
}

// DequantizeFast is the fast dequantiser; it writes the same bytes as
// DequantizeRef.
func DequantizeFast(a *DequantizeArgs) error {
	sr, sc := a.Gran.ScaleGrid(a.Rows, a.Cols)
	br, bc := a.Gran.Block(a.Rows, a.Cols)
	inv := make([]float32, sr*sc)
	switch {
	case a.ScaleInv == nil:
		inv[0] = 1
	case a.Gran == MX:
		for b := range inv {
			inv[b] = E8M0ToF32(a.ScaleInv[b])
		}
	default:
		s := F32s(a.ScaleInv)[:len(inv)]
		if err := CheckScales("dequantize", "ScaleInv", s); err != nil {
			return err
		}
		copy(inv, s)
	}
	bufs := make([][]float32, quantWorkers(a.Threads))
	// A large f32 output is written past the caches (tile's Stream codecs).
	stream := a.Rows*a.Cols*4 >= streamBytes
	// run decodes q into y's elements [off, off+len(q)) with scale s (or
	// the per-element scales sv).
	run := func(off int, q []uint8, s float32, sv []float32, w int) {
		if s != s { // MX NaN scale
			for i := range q {
				storeF32(a.YType, a.Y, off+i, math.Float32frombits(0x7fc00000))
			}
			return
		}
		if a.YType == tile.F32 {
			y := F32s(a.Y)[off : off+len(q)]
			switch {
			case sv != nil:
				_ = tile.DecodeFloat8ToF32Scales(a.QType, y, q, sv)
			case stream:
				_ = tile.DecodeFloat8ToF32Stream(a.QType, y, q, s)
			default:
				_ = tile.DecodeFloat8ToF32(a.QType, y, q, s)
			}
			return
		}
		y := u16s(a.Y)[off : off+len(q)]
		if sv == nil && s == 1 { // exact tables
			if a.YType == tile.F16 {
				_ = tile.DecodeFloat8ToF16(a.QType, y, q)
			} else {
				_ = tile.DecodeFloat8ToBF16(a.QType, y, q)
			}
			return
		}
		if cap(bufs[w]) < len(q) {
			bufs[w] = make([]float32, len(q))
		}
		f := bufs[w][:len(q)]
		if sv != nil {
			_ = tile.DecodeFloat8ToF32Scales(a.QType, f, q, sv)
		} else {
			_ = tile.DecodeFloat8ToF32(a.QType, f, q, s)
		}
		if a.YType == tile.F16 {
			for i, v := range f {
				y[i] = tile.F32ToF16(v)
			}
		} else {
			for i, v := range f {
				y[i] = tile.F32ToBF16(v)
			}
		}
	}
	if a.Gran == PerTensor {
		quantParallel(a.Rows*a.Cols, quantGrain, a.Threads, func(lo, hi, w int) {
			run(lo, a.Q[lo:hi], inv[0], nil, w)
		})
		return nil
	}
	anyNaN := false
	for _, v := range inv {
		anyNaN = anyNaN || v != v
	}
	full := a.Cols / bc
	quantParallel(a.Rows, rowsGrain(a.Cols, 1), a.Threads, func(r0, r1, w int) {
		for r := r0; r < r1; r++ {
			off := r * a.Cols
			if a.Gran == PerColumn {
				run(off, a.Q[off:off+a.Cols], 0, inv, w)
				continue
			}
			c := 0
			if a.YType == tile.F32 && !anyNaN && full > 0 { // whole blocks in one call
				base := (r / br) * sc
				y, q, sv := F32s(a.Y)[off:off+full*bc], a.Q[off:off+full*bc], inv[base:base+full]
				if stream {
					_ = tile.DecodeFloat8ToF32BlocksStream(a.QType, y, q, sv, bc)
				} else {
					_ = tile.DecodeFloat8ToF32Blocks(a.QType, y, q, sv, bc)
				}
				c = full * bc
			}
			for ; c < a.Cols; c += bc {
				e := min(a.Cols, c+bc)
				run(off+c, a.Q[off+c:off+e], inv[(r/br)*sc+c/bc], nil, w)
			}
		}
	})
	return nil
}

// AmaxFast is the fast amax reduction; it writes the same bytes as AmaxRef.
func AmaxFast(a *AmaxArgs) {
	br, bc := a.Gran.Block(a.Rows, a.Cols)
	sr, sc := a.Gran.ScaleGrid(a.Rows, a.Cols)
	out := F32s(a.Out)[:sr*sc]
	bits := make([]atomic.Uint32, sr*sc)
	bufs := make([][]float32, quantWorkers(a.Threads))
	if a.Gran == PerTensor {
		quantParallel(a.Rows*a.Cols, quantGrain, a.Threads, func(lo, hi, w int) {
			am := amaxBits(f32Run(a.XType, a.X, lo, hi, &bufs[w]))
			for {
				old := bits[0].Load()
				if am <= old || bits[0].CompareAndSwap(old, am) {
					break
				}
			}
		})
	} else if a.Gran == PerColumn {
		part := make([][]uint32, len(bufs))
		quantParallel(a.Rows, rowsGrain(a.Cols, 1), a.Threads, func(r0, r1, w int) {
			if part[w] == nil {
				part[w] = make([]uint32, a.Cols)
			}
			cm := part[w]
			for r := r0; r < r1; r++ {
				for j, v := range f32Run(a.XType, a.X, r*a.Cols, (r+1)*a.Cols, &bufs[w]) {
					cm[j] = max(cm[j], math.Float32bits(v)&0x7fffffff)
				}
			}
		})
		for _, p := range part {
			for j, v := range p {
				bits[j].Store(max(bits[j].Load(), v))
			}
		}
	} else {
		quantParallel(a.Rows, rowsGrain(a.Cols, 1), a.Threads, func(r0, r1, w int) {
			for r := r0; r < r1; r++ {
				x := f32Run(a.XType, a.X, r*a.Cols, (r+1)*a.Cols, &bufs[w])
				for c := 0; c < a.Cols; c += bc {
					am := amaxBits(x[c:min(a.Cols, c+bc)])
					b := &bits[(r/br)*sc+c/bc]
					for {
						old := b.Load()
						if am <= old || b.CompareAndSwap(old, am) {
							break
						}
					}
				}
			}
		})
	}
	for i := range out {
		out[i] = bitsToAmax(bits[i].Load())
	}
}
