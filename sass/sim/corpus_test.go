package sim

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/x448/float16"

	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// TestSimPtxasDivision runs ptxas's 32-bit division and modulo code
// (I2F.U32.RP, MUFU.RCP, F2I.FTZ.U32.TRUNC.NTZ, IMAD.HI and the correction
// steps) from the corpus on random operands, divisors from 1 to 2^32-1,
// and compares bit for bit with Go's integer division.
func TestSimPtxasDivision(t *testing.T) { corpus.ForSMs(t, simPtxasDivision) }

func simPtxasDivision(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(10, 11))
	const n = 256
	x, d := make([]uint32, n), make([]uint32, n)
	for i := range x {
		x[i] = r.Uint32() >> r.IntN(32)
		d[i] = r.Uint32() >> r.IntN(32)
		if d[i] == 0 || int32(d[i]) == -1 && int32(x[i]) == math.MinInt32 {
			d[i] = 3
		}
	}
	m := NewMemory()
	ax, ad, ao := alloc(t, m, "x", x, 0), alloc(t, m, "d", d, 0), alloc(t, m, "out", nil, 4*n)
	if _, err := Launch(corpusKernel(t, "intmath", "divmod32", sm), Config{Block: [3]int{n}, Memory: m,
		Params: params(ax, ad, ao), Poison: true}); err != nil {
		t.Fatal(err)
	}
	out := simWords(m.Bytes("out"))
	for i := 0; i < n; i++ {
		want := [4]uint32{x[i] / d[i], x[i] % d[i], uint32(int32(x[i]) / int32(d[i])), uint32(int32(x[i]) % int32(d[i]))}
		if got := [4]uint32(out[4*i:]); got != want {
			t.Fatalf("divmod32(%#x, %#x) = %#x, want %#x", x[i], d[i], got, want)
		}
	}

	// division by a parameter and by constants
	for _, dv := range []uint32{1, 2, 7, 1000, 0x7fffffff, 0x80000001, 0xffffffff} {
		m := NewMemory()
		ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", nil, n)
		if _, err := Launch(corpusKernel(t, "intmath", "div_uniform", sm), Config{Block: [3]int{n}, Memory: m,
			Params: params(ax, ao, dv), Poison: true}); err != nil {
			t.Fatal(err)
		}
		out := simWords(m.Bytes("out"))
		for i := 0; i < n; i++ {
			v := x[i]
			want := (v/dv + v%dv) ^ v/7
			want += uint32(int32(v) % -13)
			want ^= uint32(int32(v) / 1000)
			if out[i] != want {
				t.Fatalf("div_uniform(%#x, %#x) = %#x, want %#x", v, dv, out[i], want)
			}
		}
	}
}

// TestSimPtxasDaxpy runs ptxas's grid-stride DFMA loop on random binary64
// data (two trips per thread) and compares bit for bit with math.FMA.
func TestSimPtxasDaxpy(t *testing.T) { corpus.ForSMs(t, simPtxasDaxpy) }

func simPtxasDaxpy(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(12, 13))
	const n = 2048
	x, y := make([]uint32, 2*n), make([]uint32, 2*n)
	for i := 0; i < n; i++ {
		bx, by := randF64(r), randF64(r)
		x[2*i], x[2*i+1] = uint32(bx), uint32(bx>>32)
		y[2*i], y[2*i+1] = uint32(by), uint32(by>>32)
	}
	a := -1.0 / 3
	m := NewMemory()
	ax, ay := alloc(t, m, "x", x, 0), alloc(t, m, "y", y, 0)
	if _, err := Launch(corpusKernel(t, "fp64", "daxpy", sm), Config{Grid: [3]int{4}, Block: [3]int{256}, Memory: m,
		Params: params(ax, ay, math.Float64bits(a), uint32(n)), Poison: true}); err != nil {
		t.Fatal(err)
	}
	out := simWords(m.Bytes("y"))
	f := func(v []uint32, i int) float64 { return math.Float64frombits(uint64(v[2*i+1])<<32 | uint64(v[2*i])) }
	for i := 0; i < n; i++ {
		want := math.Float64bits(math.FMA(a, f(x, i), f(y, i)))
		if got := uint64(out[2*i+1])<<32 | uint64(out[2*i]); got != want {
			t.Fatalf("daxpy[%d] = %#x, want %#x", i, got, want)
		}
	}
}

// TestSimPtxasRedux runs ptxas's REDUX kernel (one warp) against Go.
func TestSimPtxasRedux(t *testing.T) { corpus.ForSMs(t, simPtxasRedux) }

func simPtxasRedux(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(14, 15))
	x := make([]uint32, 32)
	for i := range x {
		x[i] = r.Uint32() >> r.IntN(32)
	}
	m := NewMemory()
	ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", nil, 8*32)
	if _, err := Launch(corpusKernel(t, "reduce", "warp_redux", sm), Config{Block: [3]int{32}, Memory: m,
		Params: params(ax, ao), Poison: true}); err != nil {
		t.Fatal(err)
	}
	want := [8]uint32{0, x[0], 0, 0xffffffff, 0, 0, 0xffffffff, x[0]}
	mins, maxs := int32(x[0]), int32(x[0])
	for _, v := range x {
		want[0] += v
		want[2] = max(want[2], v)
		want[3] &= v
		want[4] |= v
		want[5] ^= v
		want[6] = min(want[6], v)
		mins, maxs = min(mins, int32(v)), max(maxs, int32(v))
	}
	want[1], want[7] = uint32(mins), uint32(maxs)
	out := simWords(m.Bytes("out"))
	for l := 0; l < 32; l++ {
		if got := [8]uint32(out[8*l:]); got != want {
			t.Fatalf("lane %d: %#x, want %#x", l, got, want)
		}
	}
}

// TestSimPtxasGEMM runs ptxas's three-stage cp.async / ldmatrix / mma.sync
// GEMM (one warp, D[16x8] = A[16xK] B[Kx8], K = 80: five K tiles through
// three shared-memory stages) on random f16 values of the form m/8, |m| <=
// 8, whose products and sums are exact in binary32, so the result does not
// depend on the order the tensor core adds in.
func TestSimPtxasGEMM(t *testing.T) { corpus.ForSMs(t, simPtxasGEMM) }

func simPtxasGEMM(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(16, 17))
	const K = 80
	af, bf := make([]float32, 16*K), make([]float32, K*8)
	h := func(v []float32) []uint32 {
		out := make([]uint32, (len(v)+1)/2)
		for i, x := range v {
			out[i/2] |= uint32(float16.Fromfloat32(x).Bits()) << (16 * (i % 2))
		}
		return out
	}
	for i := range af {
		af[i] = float32(r.IntN(17)-8) / 8
	}
	for i := range bf {
		bf[i] = float32(r.IntN(17)-8) / 8
	}
	m := NewMemory()
	aa, ab, ad := alloc(t, m, "a", h(af), 0), alloc(t, m, "b", h(bf), 0), alloc(t, m, "d", nil, 16*8)
	_, err := Launch(corpusKernel(t, "gemm", "gemm_mma_f16", sm), Config{Block: [3]int{32}, SharedBytes: 2304,
		Memory: m, Params: params(aa, ab, ad, uint32(K)), Poison: true})
	if err != nil {
		t.Fatal(err)
	}
	out := simWords(m.Bytes("d"))
	for i := 0; i < 16; i++ {
		for j := 0; j < 8; j++ {
			var s float32
			for k := 0; k < K; k++ {
				s += af[i*K+k] * bf[k*8+j]
			}
			if got := math.Float32frombits(out[i*8+j]); got != s {
				t.Fatalf("D[%d][%d] = %v, want %v", i, j, got, s)
			}
		}
	}
}
