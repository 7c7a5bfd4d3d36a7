package sim

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/tile"

	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// The floating-point corpus kernels (fp64.ptx's dcvt, attn.ptx's
// softmax_row and transcendental, gemm.ptx's mma_bf16) run in the
// simulator against Go references: conversions and exact arithmetic bit
// for bit, MUFU results within the documented approximation.

// bigRound is x rounded to prec bits in mode (no exponent limits: the
// callers keep to values binary32 and binary64 hold as normals).
func bigRound(x *big.Float, prec uint, mode big.RoundingMode) *big.Float {
	return new(big.Float).SetPrec(prec).SetMode(mode).Set(x)
}

// f32RZ is x rounded toward zero to binary32 (subnormals included: RN,
// stepped toward zero when it rounded away).
func f32RZ(x float64) float32 {
	r := float32(x)
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return r
	}
	if math.IsInf(float64(r), 0) {
		return float32(math.Copysign(math.MaxFloat32, x))
	}
	if math.Abs(float64(r)) > math.Abs(x) {
		r = math.Nextafter32(r, 0)
	}
	return r
}

// addRZ32 is binary32 a+b rounded toward zero.
func addRZ32(a, b float32) float32 {
	fa, fb := float64(a), float64(b)
	if math.IsInf(fa, 0) || math.IsInf(fb, 0) || math.IsNaN(fa) || math.IsNaN(fb) {
		return a + b
	}
	s := new(big.Float).SetPrec(0).SetFloat64(fa)
	s.Add(s, new(big.Float).SetFloat64(fb)) // exact: precision 0 grows to fit
	if s.Sign() == 0 {
		return a + b // the sign of an exact zero sum is RN's (both RZ and RN give +0 unless both are -0)
	}
	r, _ := bigRound(s, 24, big.ToZero).Float32()
	if math.IsInf(float64(r), 0) {
		return float32(math.Copysign(math.MaxFloat32, fa+fb))
	}
	return r
}

// satInt rounds f with round (math.Trunc, math.Floor, ...) and converts
// it to an integer in [lo, hi] saturating, NaN to 0, as cvt.*i.{s,u}{32,64}.
func satInt(f float64, round func(float64) float64, lo, hi float64) float64 {
	if math.IsNaN(f) {
		return 0
	}
	return max(lo, min(hi, round(f)))
}

// TestSimPtxasDcvt runs ptxas's dcvt kernel: binary64 to binary32 (RN, RZ)
// and binary16, back to binary64, to s32/u32/s64/u64 (TRUNC, nearest,
// FLOOR, CEIL, saturating), integers back to binary64 (RN, and RZ from
// u64), FRND (nearest, TRUNC), binary32 to s64 and s64/u64 to binary32;
// summed in the kernel's order. Random values of every magnitude, halves
// (ties), infinities and binary32 subnormals. Bit for bit against Go.
func TestSimPtxasDcvt(t *testing.T) { corpus.ForSMs(t, simPtxasDcvt) }

func simPtxasDcvt(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(80, 81))
	const n = 256
	x := make([]uint64, n)
	for i := range x {
		var f float64
		switch r.IntN(6) {
		case 0:
			f = float64(r.IntN(1<<20)-1<<19) / 2 // halves: ties
		case 1:
			f = math.Ldexp(1+r.Float64(), 60+r.IntN(80)) // past s64/u64 and binary32 range
		case 2:
			f = math.Ldexp(1+r.Float64(), -150+r.IntN(30)) // binary32 subnormals
		case 3:
			f = math.Inf(1)
		default:
			f = math.Ldexp(1+r.Float64(), r.IntN(70)-20)
		}
		if r.IntN(2) == 0 {
			f = -f
		}
		x[i] = math.Float64bits(f)
	}
	m := NewMemory()
	ax, ao := alloc(t, m, "x", words64(x), 0), alloc(t, m, "out", poisonWords(4*n), 0)
	launchCorpus(t, "fp64", "dcvt", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ax, ao), Poison: true})
	out := simWords(m.Bytes("out"))
	for i, b := range x {
		fd1 := math.Float64frombits(b)
		f1 := float32(fd1)
		f2 := f32RZ(fd1)
		fd2 := float64(f1)
		fd3 := float64(tile.F16ToF32(f16RN(fd1)))
		r2 := satInt(fd1, math.Trunc, math.MinInt32, math.MaxInt32)
		r3 := satInt(fd1, math.RoundToEven, 0, math.MaxUint32)
		rd6 := int64(math.MaxInt64)
		if v := satInt(fd1, math.Floor, math.MinInt64, math.MaxInt64); v < math.MaxInt64 { // 2^63 does not fit
			rd6 = int64(v)
		}
		rd7 := uint64(math.MaxUint64)
		if v := satInt(fd1, math.Ceil, 0, math.MaxUint64); v < math.MaxUint64 {
			rd7 = uint64(v)
		}
		fd6 := float64(rd6)
		fd7, _ := bigRound(new(big.Float).SetUint64(rd7), 53, big.ToZero).Float64()
		fd8, fd9 := math.RoundToEven(fd1), math.Trunc(fd1)
		fd10 := fd2 + fd3
		for _, v := range []float64{r2, r3, fd6, fd7, fd8, fd9} {
			fd10 += v
		}
		f3 := f1 + f2
		rd8 := int64(math.MaxInt64)
		if v := satInt(float64(f3), math.Trunc, math.MinInt64, math.MaxInt64); v < math.MaxInt64 {
			rd8 = int64(v)
		}
		f4, _ := bigRound(new(big.Float).SetInt64(rd8), 24, big.ToNearestEven).Float32()
		f5, _ := bigRound(new(big.Float).SetUint64(rd7), 24, big.ToNearestEven).Float32()
		w := math.Float64bits(fd10)
		want := [4]uint32{uint32(w), uint32(w >> 32), math.Float32bits(f4 + f5), 0x7fc0dead}
		if got := [4]uint32(out[4*i:]); got != want {
			t.Fatalf("dcvt(%g = %#x) = %#x, want %#x", fd1, b, got, want)
		}
	}
}

// TestSimPtxasSoftmaxRow runs ptxas's softmax_row kernel: one warp per
// row, an online max and sum with ex2 (MUFU.EX2 behind ptxas's range
// scaling), a butterfly merge of (max, sum) pairs, MUFU.RCP, and a
// grid-stride write with a ragged tail; rows of 33, 129 and 1000. The
// result is compared with Go's binary64 softmax within 1e-5 relative
// (MUFU's few-ulp error and the binary32 sums); nothing past the rows is
// written. Rows shorter than the warp (1, 7) leave lanes with the pair
// (-inf, 0); the kernel merges two of them with a scale of 0 (not
// ex2(-inf - -inf) = NaN), so their rows are compared like the others.
func TestSimPtxasSoftmaxRow(t *testing.T) { corpus.ForSMs(t, simPtxasSoftmaxRow) }

func simPtxasSoftmaxRow(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(82, 83))
	const rows = 3
	for _, n := range []int{1, 7, 33, 129, 1000} {
		x := make([]uint32, rows*n)
		for i := range x {
			x[i] = math.Float32bits(float32(r.NormFloat64() * 3))
		}
		m := NewMemory()
		ax, ay := alloc(t, m, "x", x, 0), alloc(t, m, "y", poisonWords(rows*n+8), 0)
		launchCorpus(t, "attn", "softmax_row", sm, Config{Grid: [3]int{rows}, Block: [3]int{32}, Memory: m,
			Params: params(ax, ay, uint32(n)), Poison: true})
		out := simWords(m.Bytes("y"))
		for b := 0; b < rows; b++ {
			row := x[b*n : b*n+n]
			mx := math.Inf(-1)
			for _, v := range row {
				mx = max(mx, float64(math.Float32frombits(v)))
			}
			s := 0.0
			for _, v := range row {
				s += math.Exp(float64(math.Float32frombits(v)) - mx)
			}
			for j, v := range row {
				want := math.Exp(float64(math.Float32frombits(v))-mx) / s
				got := float64(math.Float32frombits(out[b*n+j]))
				if !(math.Abs(got-want) <= 1e-5*want) {
					t.Fatalf("n=%d row %d: y[%d] = %g, want %g (rel. error %.2g)", n, b, j, got, want, math.Abs(got-want)/want)
				}
			}
		}
		checkPoison(t, fmt.Sprint("softmax_row n=", n), out, rows*n)
	}
}

// TestSimPtxasTranscendental runs ptxas's transcendental kernel: sin, cos,
// lg2, rsqrt, tanh, approximate and IEEE sqrt, IEEE rcp and ex2, each
// stored (checkTranscendentals) and summed into s, then min(s, -|x|) with
// x's sign, the four integer roundings of that (FRND), an RZ add and a
// finiteness test. For every x the sum s is NaN or above -|x| by a wide
// margin (checked here in binary64), so the minimum is -|x| and that
// output is an exact function of x, compared bit for bit.
func TestSimPtxasTranscendental(t *testing.T) { corpus.ForSMs(t, simPtxasTranscendental) }

func simPtxasTranscendental(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(84, 85))
	const n = 256
	x := make([]uint32, n)
	for i := range x {
		switch r.IntN(4) {
		case 0:
			x[i] = r.Uint32()
		case 1:
			x[i] = math.Float32bits(float32(r.IntN(2001)-1000) / 4) // integers and halves
		default:
			x[i] = math.Float32bits(float32(r.NormFloat64() * 50))
		}
	}
	x[0], x[1], x[2], x[3] = 0, 0x80000000, 0x7f800000, 0xff800000
	m := NewMemory()
	ax, ay, az := alloc(t, m, "x", x, 0), alloc(t, m, "y", poisonWords(n), 0), alloc(t, m, "z", poisonWords(9*n+4), 0)
	launchCorpus(t, "attn", "transcendental", sm, Config{Block: [3]int{n}, Memory: m, Params: params(ax, ay, az), Poison: true})
	out := simWords(m.Bytes("y"))
	checkTranscendentals(t, x, simWords(m.Bytes("z")))
	for i, b := range x {
		f := math.Float32frombits(b)
		v := float64(f)
		s := math.Sin(v) + math.Cos(v) + math.Log2(v) + 1/math.Sqrt(v) + math.Tanh(v) + 2*math.Sqrt(v) + 1/v + math.Exp2(v)
		if !math.IsNaN(s) && !(s > -math.Abs(v)+0.01*(1+math.Abs(v))) && b != 0x80000000 {
			t.Fatalf("test data: x = %g: the sum %g is not clearly above -|x|", v, s)
		}
		want := uint32(0)
		if b != 0x80000000 && !math.IsNaN(v) && !math.IsInf(v, 0) {
			// f15 = copysign(x, -|x|) = x
			g := float64(f)
			f16 := float32(math.Trunc(g)) + float32(math.Floor(g))
			f16 += float32(math.Ceil(g))
			f16 = addRZ32(f16, float32(math.RoundToEven(g)))
			if !math.IsInf(float64(f16), 0) {
				want = math.Float32bits(f16)
			}
		}
		if out[i] != want {
			t.Fatalf("transcendental(%g = %#x) = %#x (%g), want %#x (%g)", f, b, out[i], math.Float32frombits(out[i]), want, math.Float32frombits(want))
		}
	}
}

// mmaFragA places the 16x16 row-major matrix a (16-bit elements) into
// the PTX m16n8k16 A fragments: four registers per lane.
func mmaFragA(a []uint16) []uint32 {
	out := make([]uint32, 4*32)
	for l := 0; l < 32; l++ {
		g, q := l/4, l%4
		for j := 0; j < 4; j++ {
			row, col := g+8*(j%2), 2*q+8*(j/2)
			out[4*l+j] = uint32(a[row*16+col]) | uint32(a[row*16+col+1])<<16
		}
	}
	return out
}

// mmaFragB places the 16x8 row-major (k by n) matrix b into the B
// fragments: two registers per lane.
func mmaFragB(b []uint16) []uint32 {
	out := make([]uint32, 2*32)
	for l := 0; l < 32; l++ {
		g, q := l/4, l%4
		for j := 0; j < 2; j++ {
			k := 2*q + 8*j
			out[2*l+j] = uint32(b[k*8+g]) | uint32(b[(k+1)*8+g])<<16
		}
	}
	return out
}

// mmaFragD is the (row, col) of lane l's accumulator register j (m16n8).
func mmaFragD(l, j int) (int, int) { return l/4 + 8*(j/2), 2*(l%4) + j%2 }

// TestSimPtxasMMABF16 runs ptxas's mma_bf16 kernel (HMMA.16816.F32.BF16,
// C = 1) on random bf16 values k/8, |k| <= 8, whose products and sums are
// exact in binary32, so the result does not depend on the tensor core's
// order of additions. Bit for bit against Go.
func TestSimPtxasMMABF16(t *testing.T) { corpus.ForSMs(t, simPtxasMMABF16) }

func simPtxasMMABF16(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(86, 87))
	a, b := make([]uint16, 16*16), make([]uint16, 16*8)
	val := func() uint16 { return tile.F32ToBF16(float32(r.IntN(17)-8) / 8) }
	for i := range a {
		a[i] = val()
	}
	for i := range b {
		b[i] = val()
	}
	m := NewMemory()
	aa, ab, ad := alloc(t, m, "a", mmaFragA(a), 0), alloc(t, m, "b", mmaFragB(b), 0), alloc(t, m, "d", poisonWords(4*32), 0)
	launchCorpus(t, "gemm", "mma_bf16", sm, Config{Block: [3]int{32}, Memory: m, Params: params(aa, ab, ad), Poison: true})
	out := simWords(m.Bytes("d"))
	for l := 0; l < 32; l++ {
		for j := 0; j < 4; j++ {
			i, c := mmaFragD(l, j)
			s := float32(1)
			for k := 0; k < 16; k++ {
				s += tile.BF16ToF32(a[i*16+k]) * tile.BF16ToF32(b[k*8+c])
			}
			if got := math.Float32frombits(out[4*l+j]); got != s {
				t.Fatalf("D[%d][%d] = %v, want %v", i, c, got, s)
			}
		}
	}
}

// checkTranscendentals compares the transcendental kernel's nine results
// per input (z: sin, cos, lg2, rsqrt, tanh, sqrt.approx, sqrt.rn, rcp.rn,
// ex2) with Go's binary64 functions: sqrt.rn and rcp.rn bit for bit (a
// binary64 result rounded to binary32 is correctly rounded for both), the
// approximations within 2^-20 relative (the simulator's MUFU is binary64
// math rounded once, and ptxas's range scaling around it must not lose
// more; sin and cos within 2^-20 + |x| 2^-22 absolute for |x| < 1000:
// ptxas's FMUL.RZ x * (1/2pi) truncates the argument in revolutions by up
// to one binary32 ulp (|x| 2^-23 radians) and the binary32 constant moves
// it by up to |x| 2^-24 more; beyond, only their range [-1, 1]). Specials follow IEEE: NaN for NaN,
// infinities and zeros signed as the functions give them.
func checkTranscendentals(t *testing.T, x, z []uint32) {
	t.Helper()
	const rel = 0x1p-20
	names := []string{"sin", "cos", "lg2", "rsqrt", "tanh", "sqrt.approx", "sqrt.rn", "rcp.rn", "ex2"}
	for i, b := range x {
		v := float64(math.Float32frombits(b))
		ref := []float64{math.Sin(v), math.Cos(v), math.Log2(v), 1 / math.Sqrt(v), math.Tanh(v), math.Sqrt(v), math.Sqrt(v), 1 / v, math.Exp2(v)}
		for k, w := range ref {
			gb := z[9*i+k]
			got := float64(math.Float32frombits(gb))
			bad := false
			switch {
			case k == 6 || k == 7: // IEEE: correctly rounded
				want := math.Float32bits(float32(w))
				if math.IsNaN(w) {
					bad = !math.IsNaN(got)
				} else {
					bad = gb != want
				}
			case math.IsNaN(w) || math.IsInf(w, 0) || w == 0:
				// NaN, infinities and zeros: the same class (a zero or an
				// infinity with w's sign)
				bad = math.IsNaN(w) != math.IsNaN(got) ||
					!math.IsNaN(w) && (got != float64(float32(w)) || math.Signbit(got) != math.Signbit(w))
			case k <= 1 && math.Abs(v) >= 1000:
				bad = !(got >= -1 && got <= 1)
			case k <= 1:
				bad = !(math.Abs(got-w) <= rel+math.Abs(v)*0x1p-22)
			case math.Abs(w) > math.MaxFloat32 || math.Abs(w) < 0x1p-126:
				// outside the normal binary32 range: overflow to Inf or
				// flush/underflow to a tiny value of w's sign
				bad = math.Signbit(got) != math.Signbit(w) ||
					math.Abs(w) > math.MaxFloat32 && !math.IsInf(got, 0) && got < math.MaxFloat32*(1-rel) ||
					math.Abs(w) < 0x1p-126 && math.Abs(got) > 0x1p-126
			default:
				bad = !(math.Abs(got-w) <= rel*math.Abs(w))
			}
			if bad {
				t.Fatalf("%s(%g = %#x) = %g (%#x), want %g", names[k], v, b, got, gb, w)
			}
		}
	}
	checkPoison(t, "transcendental z", z, 9*len(x))
}
