package fallback

import (
	"math"
	goruntime "runtime"
	"sync"
	"sync/atomic"

	"github.com/tcrt-go/tcrt/tile"
)

// Shared pieces of the light ops (normalisation, rotary embeddings,
// activations, element-wise, softmax, sampling, pooling): every one works
// on rows of a Matrix (BatchStride and Trans unused), element (r, j) at
// element r·LD + j of Data, of element type f32, f16 or bf16.
//
// The references load and store one element at a time (loadF32, storeF32)
// and accumulate in float64. The fast paths convert a whole row at a time
// with the matmul fast path's converters (AVX-512 or AVX2 assembly where the
// CPU has it, plain Go otherwise), do the arithmetic on float32 rows in
// loops the Go compiler keeps in registers, and split the rows among the
// helper pool (pool.go) in tasks of at least lightGrain elements.

// lightGrain is the smallest number of elements worth a task of its own.
const lightGrain = 1 << 15

// lightCvt returns the converters of the best fast-path variant the CPU
// (and the CPU feature mask) allows.
func lightCvt() *converters {
	for _, v := range variants {
		if v.Available() {
			return &v.cvt
		}
	}
	return &genericConverters
}

// DecodeRow converts len(dst) elements of type d (f32, f16 or bf16) from
// src to float32 with the fast converters.
func DecodeRow(d tile.DType, dst []float32, src []byte) {
	m := Matrix{DType: d, Data: src, Rows: 1, Cols: len(dst), LD: len(dst)}
	if v := loadRow(lightCvt(), &m, 0, 0, len(dst), dst); d == tile.F32 {
		copy(dst, v)
	}
}

// zeroRow returns n zeros, shared and read-only.
func zeroRow(n int) []float32 {
	zeros.mu.Lock()
	defer zeros.mu.Unlock()
	if len(zeros.v) < n {
		zeros.v = make([]float32, max(n, 2*len(zeros.v)))
	}
	return zeros.v[:n:n]
}

var zeros struct {
	mu sync.Mutex
	v  []float32
}

// rowSlice returns the bytes of row r's elements [lo, hi).
func rowSlice(m *Matrix, r, lo, hi int) []byte {
	s := m.DType.Size()
	return m.Data[(r*m.LD+lo)*s : (r*m.LD+hi)*s]
}

// loadRow returns elements [lo, hi) of row r as float32: the row itself
// for f32 (no copy), else converted into buf.
func loadRow(cv *converters, m *Matrix, r, lo, hi int, buf []float32) []float32 {
	b := rowSlice(m, r, lo, hi)
	n := hi - lo
	switch m.DType {
	case tile.F32:
		return F32s(b)[:n:n]
	case tile.F16:
		cv.f16ToF32(buf[:n], u16s(b)[:n])
	default:
		cv.bf16ToF32(buf[:n], u16s(b)[:n])
	}
	return buf[:n]
}

// storeRow writes v to elements [lo, lo+len(v)) of row r, rounding to
// nearest even; it copies nothing when v is already the row.
func storeRow(cv *converters, m *Matrix, r, lo int, v []float32) {
	if len(v) == 0 {
		return
	}
	b := rowSlice(m, r, lo, lo+len(v))
	switch m.DType {
	case tile.F32:
		d := F32s(b)[:len(v)]
		if &d[0] != &v[0] {
			copy(d, v)
		}
	case tile.F16:
		cv.f32ToF16(u16s(b)[:len(v)], v)
	default:
		cv.f32ToBF16(u16s(b)[:len(v)], v)
	}
}

// refRow loads row r's elements [lo, hi) with the reference's element
// loads.
func refRow(m *Matrix, r, lo, hi int) []float32 {
	out := make([]float32, hi-lo)
	for j := range out {
		out[j] = loadF32(m.DType, m.Data, r*m.LD+lo+j)
	}
	return out
}

// refStore stores v into row r from element lo with the reference's
// element stores.
func refStore(m *Matrix, r, lo int, v []float32) {
	for j, x := range v {
		storeF32(m.DType, m.Data, r*m.LD+lo+j, x)
	}
}

// forRows runs fn over [0, n) rows of cols elements in tasks of whole rows
// on the calling goroutine and up to threads−1 helpers (threads ≤ 0: all
// cores). fn gets a scratch slice of scratch float32s private to its
// goroutine. fn escapes to the helpers, so a closure costs an allocation
// per call: the kernels of a decode step use forRowsOf.
func forRows(n, cols, threads, scratch int, fn func(lo, hi int, buf []float32)) {
	forRowsOf(&closureRows, n, cols, threads, scratch, fn, callRows)
}

var closureRows rowTasks[func(lo, hi int, buf []float32)]

func callRows(f *func(lo, hi int, buf []float32), lo, hi int, buf []float32) { (*f)(lo, hi, buf) }

// forRowsOf is forRows for a function of state s, which fn (a function
// literal that captures nothing, so no allocation) reads through its
// first argument: s is copied into a task taken from tp, the call
// allocates nothing in steady state.
func forRowsOf[S any](tp *rowTasks[S], n, cols, threads, scratch int, s S, fn func(s *S, lo, hi int, buf []float32)) {
	if n <= 0 {
		return
	}
	if threads <= 0 {
		threads = goruntime.GOMAXPROCS(0)
	}
	t := tp.get()
	t.s, t.fn, t.n, t.scratch = s, fn, n, scratch
	t.grain = max(1, lightGrain/max(1, cols))
	t.tasks = (n + t.grain - 1) / t.grain
	t.next.Store(0)
	run(min(threads, t.tasks)-1, t.workFn)
	tp.put(t)
}

// rowTask is one forRowsOf call, shared by the goroutines that run it.
type rowTask[S any] struct {
	s                        S
	fn                       func(s *S, lo, hi int, buf []float32)
	n, grain, tasks, scratch int
	next                     atomic.Int64
	workFn                   func() // t.work, made once per pooled task
}

// rowTasks recycles the rowTasks of one kind of state.
type rowTasks[S any] struct{ p sync.Pool }

func (tp *rowTasks[S]) get() *rowTask[S] {
	if t, ok := tp.p.Get().(*rowTask[S]); ok {
		return t
	}
	t := new(rowTask[S])
	t.workFn = t.work
	return t
}

// put clears t's references and keeps it; every goroutine that ran t has
// returned.
func (tp *rowTasks[S]) put(t *rowTask[S]) {
	var zero S
	t.s, t.fn = zero, nil
	tp.p.Put(t)
}

// work takes t's tasks until none are left, with a scratch row of its own.
func (t *rowTask[S]) work() {
	var buf *[]float32
	var b []float32
	if t.scratch > 0 {
		buf = getFloats(t.scratch)
		b = (*buf)[:t.scratch]
		clear(b) // as fresh as before the pool: no caller reads stale rows
		defer putFloats(buf)
	}
	for {
		i := int(t.next.Add(1) - 1)
		if i >= t.tasks {
			return
		}
		t.fn(&t.s, i*t.grain, min(t.n, (i+1)*t.grain), b)
	}
}

// floatsPool keeps float32 scratch slices between calls (getFloats).
var floatsPool sync.Pool

// getFloats returns a scratch slice of at least n float32s, of
// unspecified contents; putFloats gives it back.
func getFloats(n int) *[]float32 {
	p, ok := floatsPool.Get().(*[]float32)
	if !ok {
		p = new([]float32)
	}
	if cap(*p) < n {
		*p = make([]float32, n)
	}
	*p = (*p)[:n]
	return p
}

func putFloats(p *[]float32) { floatsPool.Put(p) }

// sumSquares returns Σ x² with eight partial sums.
func sumSquares(x []float32) float32 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(x); i += 8 {
		v := x[i : i+8 : i+8]
		s0 += v[0] * v[0]
		s1 += v[1] * v[1]
		s2 += v[2] * v[2]
		s3 += v[3] * v[3]
		s4 += v[4] * v[4]
		s5 += v[5] * v[5]
		s6 += v[6] * v[6]
		s7 += v[7] * v[7]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * x[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// sum returns Σ x with eight partial sums.
func sum(x []float32) float32 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(x); i += 8 {
		v := x[i : i+8 : i+8]
		s0 += v[0]
		s1 += v[1]
		s2 += v[2]
		s3 += v[3]
		s4 += v[4]
		s5 += v[5]
		s6 += v[6]
		s7 += v[7]
	}
	for ; i < len(x); i++ {
		s0 += x[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// ExpF32 is the float32 exponential the fast paths and the sampling spec
// use: e^x = 2^n · e^r with n = round(x·log2 e), r = x − n·ln 2 (ln 2 in
// two parts) and a degree-7 polynomial for e^r on [−ln2/2, ln2/2] (the
// Cephes expf coefficients). Its error is within 2 ulp of e^x for normal
// results; it is exactly 1 at 0, 0 below −87.3 (no subnormals), +Inf above
// 88.7, and NaN for NaN.
func ExpF32(x float32) float32 {
	switch {
	case x != x:
		return x
	case x < -87.33654:
		return 0
	case x > 88.72283:
		return float32(math.Inf(1))
	}
	// Every product is rounded on its own (the explicit conversions stop
	// the compiler from fusing multiply-adds), so the function gives the
	// same bits on every machine: the sampling weights depend on it.
	// n = round(x·log2 e) by the 1.5·2^23 trick: adding it leaves the
	// rounded integer in the low mantissa bits (|x·log2 e| < 2^22).
	t := float32(x*1.442695041) + 12582912
	e := int32(math.Float32bits(t)) - 0x4B400000
	n := t - 12582912
	r := x - float32(n*0.693359375)
	r -= float32(n * -2.12194440e-4)
	p := float32(1.9875691500e-4)
	p = float32(p*r) + 1.3981999507e-3
	p = float32(p*r) + 8.3334519073e-3
	p = float32(p*r) + 4.1665795894e-2
	p = float32(p*r) + 1.6666665459e-1
	p = float32(p*r) + 5.0000001201e-1
	p = float32(float32(p*r)*r) + r + 1
	// p is in [0.7, 1.42]; scale by 2^n in two steps so that n = −126 or
	// 128 stays exact.
	h := e >> 1
	return p * math.Float32frombits(uint32(h+127)<<23) * math.Float32frombits(uint32(e-h+127)<<23)
}

// pow2K are pow2F32's polynomial coefficients, 2^f ≈ 1 + f·(q1 + f·(q2 +
// … + f·q5)) on [−1/2, 1/2] (a minimax fit of the relative error, 1.7e-7
// at most in float32 with fused multiply-adds; light_gen.go's q1…q5, the
// same values).
var pow2K = [5]float32{0.693147004, 0.240222424, 0.0555073358, 0.00967151299, 0.00132647273}

// pow2F32 is 2^t for t in [−127, 128] with the fused kernels' operations
// (light_gen.go's pow2; the same bits): n = round(t), f = t − n, the
// polynomial by fused multiply-adds and n added to its exponent field.
// Within 1.7e-7 relative of 2^t for t in [−126, 128); 128 gives +Inf,
// −127 gives 0 and t in (−127, −126) a value below 2^−126; NaN gives NaN.
func pow2F32(t float32) float32 {
	if t != t {
		return t
	}
	n := float32(math.RoundToEven(float64(t)))
	f := t - n
	q := &pow2K
	p := fma32(fma32(fma32(fma32(fma32(q[4], f, q[3]), f, q[2]), f, q[1]), f, q[0]), f, 1)
	return math.Float32frombits(math.Float32bits(p) + uint32(int32(n))<<23)
}

// fma32 is x·y + z rounded once to float32, as the kernels' fused
// multiply-adds: the product is exact in float64, the sum is rounded to
// odd there (its last bit set when inexact), and rounding that to float32
// gives the correctly rounded result (53 ≥ 24 + 2 bits).
func fma32(x, y, z float32) float32 {
	p, c := float64(x)*float64(y), float64(z)
	s := p + c
	if s == 0 || math.IsInf(s, 0) || s != s {
		return float32(s)
	}
	b := s - p
	e := (p - (s - b)) + (c - b) // s + e = p + c exactly
	if bits := math.Float64bits(s); e != 0 && bits&1 == 0 {
		if (e > 0) == (s > 0) {
			bits++
		} else {
			bits--
		}
		s = math.Float64frombits(bits)
	}
	return float32(s)
}
