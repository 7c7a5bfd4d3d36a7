package fallback

import (
	"math"
	goruntime "runtime"
	"sync/atomic"
	"unsafe"

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
// goroutine.
func forRows(n, cols, threads, scratch int, fn func(lo, hi int, buf []float32)) {
	if n <= 0 {
		return
	}
	if threads <= 0 {
		threads = goruntime.GOMAXPROCS(0)
	}
	grain := max(1, lightGrain/max(1, cols))
	tasks := (n + grain - 1) / grain
	workers := min(threads, tasks)
	if workers <= 1 {
		fn(0, n, make([]float32, scratch))
		return
	}
	var next atomic.Int64
	run(workers-1, func() {
		buf := make([]float32, scratch)
		for {
			t := int(next.Add(1) - 1)
			if t >= tasks {
				return
			}
			fn(t*grain, min(n, (t+1)*grain), buf)
		}
	})
}

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

// f32Bits views a float32 slice as its bits.
func f32Bits(x []float32) []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
}
