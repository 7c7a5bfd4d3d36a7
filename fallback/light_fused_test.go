package fallback

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/tcrt-go/tcrt/tile"
)

// fusedMatrix is a rows × cols matrix of type d with row stride cols+pad,
// random normal values (scaled) and NaN bytes in the gaps.
func fusedMatrix(rng *rand.Rand, d tile.DType, rows, cols, pad int, scale float64) Matrix {
	ld := cols + pad
	m := Matrix{DType: d, Data: make([]byte, max(1, rows*ld)*d.Size()), Rows: rows, Cols: cols, LD: ld}
	for i := range m.Data {
		m.Data[i] = 0xff
	}
	for r := range rows {
		for j := range cols {
			storeF32(d, m.Data, r*ld+j, float32(rng.NormFloat64()*scale))
		}
	}
	return m
}

func cloneMatrix(m Matrix) Matrix {
	m.Data = bytes.Clone(m.Data)
	return m
}

// withNT runs f with the non-temporal stores on from any size (nt) or
// off.
func withNT(nt bool, f func()) {
	old := lightNTBytes
	lightNTBytes = math.Inf(1)
	if nt {
		lightNTBytes = 0
	}
	defer func() { lightNTBytes = old }()
	f()
}

var fusedTypesAll = []tile.DType{tile.F32, tile.F16, tile.BF16}

// TestLightFusedMatchesReference runs the fused norm, residual norm,
// LayerNorm, SiLU and tanh-GELU gates, softmax and NeoX RoPE for every
// input and output type pair, odd widths and padded rows, with ordinary
// and with non-temporal stores: the two store kinds write the same bytes
// (gaps included), and the result is within the ops' bounds of the
// reference (exactly the scalar functions' bits for the gates).
func TestLightFusedMatchesReference(t *testing.T) {
	if lightFusedK() == nil {
		t.Skip("no fused kernels on this CPU or build")
	}
	rng := rand.New(rand.NewPCG(29, 1))
	for _, ti := range fusedTypesAll {
		for _, to := range fusedTypesAll {
			for _, cols := range []int{1, 7, 8, 129, 1000, 4099} {
				rows := 3
				name := fmt.Sprintf("%v->%v/%d", ti, to, cols)
				x := fusedMatrix(rng, ti, rows, cols, 5, 2)
				res := fusedMatrix(rng, to, rows, cols, 3, 1)
				w := make([]float32, cols)
				bias := make([]float32, cols)
				for j := range w {
					w[j], bias[j] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
				}
				bound := 4 * math.Max(typeUnit(to), 0x1p-20)
				// Norms: each with and without the residual, NT on and off.
				for _, kind := range []NormKind{NormRMS, NormLayer} {
					for _, withRes := range []bool{false, true} {
						run := func(f func(*NormArgs), nt bool) (Matrix, *Matrix) {
							y := fusedMatrix(rng, to, rows, cols, 2, 0)
							xr := cloneMatrix(x)
							a := &NormArgs{Kind: kind, X: xr, Y: y, Weight: w, Bias: bias, Eps: 1e-5, Gemma: kind == NormRMS}
							if withRes {
								r := cloneMatrix(res)
								a.Residual = &r
							}
							withNT(nt, func() { f(a) })
							return a.Y, a.Residual
						}
						yr, rr := run(NormRef, false)
						y0, r0 := run(NormFast, false)
						y1, r1 := run(NormFast, true)
						what := fmt.Sprintf("%s/norm%d/res=%v", name, kind, withRes)
						sameBytes(t, what+" nt", y0.Data, y1.Data)
						// The gaps keep their NaN bytes on y's padded rows.
						closeRows(t, what, y0, yr, bound)
						if withRes {
							sameBytes(t, what+" residual nt", r0.Data, r1.Data)
							closeRows(t, what+" residual", *r0, *rr, 2*typeUnit(to))
						}
					}
				}
				// Gates: silu32 and geluTanh32's bits times b.
				for _, fn := range []ActFunc{FnSiLU, FnGELU, FnGELUTanh} {
					bm := fusedMatrix(rng, ti, rows, cols, 1, 1)
					var ys [2]Matrix
					for i, nt := range []bool{false, true} {
						y := fusedMatrix(rng, to, rows, cols, 4, 0)
						withNT(nt, func() { ActFast(&ActArgs{Func: fn, A: x, B: &bm, Y: y}) })
						ys[i] = y
					}
					what := fmt.Sprintf("%s/%v", name, fn)
					sameBytes(t, what+" nt", ys[0].Data, ys[1].Data)
					want := fusedMatrix(rng, to, rows, cols, 4, 0)
					for r := range rows {
						for j := range cols {
							v := actFast[fn](loadF32(ti, x.Data, r*x.LD+j)) * loadF32(ti, bm.Data, r*bm.LD+j)
							storeF32(to, want.Data, r*want.LD+j, v)
						}
					}
					sameBytes(t, what, ys[0].Data, want.Data)
				}
				// Softmax, into y.
				var ys [2]Matrix
				for i, nt := range []bool{false, true} {
					y := fusedMatrix(rng, to, rows, cols, 4, 0)
					withNT(nt, func() { SoftmaxFast(&SoftmaxArgs{X: x, Y: y, Temperature: 0.7}) })
					ys[i] = y
				}
				sameBytes(t, name+"/softmax nt", ys[0].Data, ys[1].Data)
				yr := fusedMatrix(rng, to, rows, cols, 4, 0)
				SoftmaxRef(&SoftmaxArgs{X: x, Y: yr, Temperature: 0.7})
				closeRows(t, name+"/softmax", ys[0], yr, 8*math.Max(typeUnit(to), 0x1p-20))
			}
			// RoPE, NeoX, out of place ti -> to, and in place.
			for _, hd := range []int{2, 18, 64, 130} {
				for _, rot := range []int{hd, hd / 2 &^ 1} {
					if rot == 0 {
						continue
					}
					heads, tokens := 3, 4
					inv, ms := RoPEFreqs(10000, rot, RoPEScaling{})
					q := fusedMatrix(rng, ti, tokens, heads*hd, 3, 1)
					pos := []int32{0, 7, 100, 3}
					run := func(f func(*RoPEArgs) error, inPlace bool) Matrix {
						qi := cloneMatrix(q)
						qo := fusedMatrix(rng, to, tokens, heads*hd, 1, 0)
						if inPlace {
							qo = qi
						}
						a := &RoPEArgs{Q: qi, QOut: qo, HeadsQ: heads, HeadDim: hd, RotaryDim: rot, Pos: pos, MaxPosition: 1000, InvFreq: inv, MScale: ms}
						if err := f(a); err != nil {
							t.Fatal(err)
						}
						return qo
					}
					what := fmt.Sprintf("%v->%v/rope hd %d rot %d", ti, to, hd, rot)
					if ti == to {
						sameBytes(t, what+" in place", run(RoPEFast, true).Data, run(RoPERef, true).Data)
					}
					closeRows(t, what, run(RoPEFast, false), run(RoPERef, false), 2*typeUnit(to))
				}
			}
		}
	}
}

// typeUnit is the unit roundoff of d.
func typeUnit(d tile.DType) float64 {
	switch d {
	case tile.F16:
		return 0x1p-11
	case tile.BF16:
		return 0x1p-8
	}
	return 0x1p-24
}

func sameBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if i := firstDiff(got, want); i >= 0 {
		t.Fatalf("%s: byte %d is %#02x, want %#02x", what, i, got[i], want[i])
	}
}

// closeRows compares the elements of got and want within rel·(1+|want|)
// and the gaps byte for byte.
func closeRows(t *testing.T, what string, got, want Matrix, rel float64) {
	t.Helper()
	s := got.DType.Size()
	for r := range got.Rows {
		for j := range got.LD {
			i := r*got.LD + j
			if i*s >= len(got.Data) {
				break
			}
			if j >= got.Cols {
				if !bytes.Equal(got.Data[i*s:(i+1)*s], want.Data[i*s:(i+1)*s]) {
					t.Fatalf("%s: gap (%d, %d) written", what, r, j)
				}
				continue
			}
			g, w := float64(loadF32(got.DType, got.Data, i)), float64(loadF32(want.DType, want.Data, i))
			if !(math.Abs(g-w) <= rel*(1+math.Abs(w))) {
				t.Fatalf("%s: (%d, %d) is %v, want %v", what, r, j, g, w)
			}
		}
	}
}

// TestLightFusedNarrow: the kernels' narrowing to each output type (16
// and 8 elements a trip, NaN fix-up, ordinary and non-temporal stores) is
// storeF32's, bit for bit, on specials: quiet NaN with payloads (the
// kernels multiply, which quiets a signalling NaN), ±Inf, ±0,
// subnormals, the largest floats, rounding ties, at random places; and
// without NaN with the nt argument's lightNoNaN bit.
func TestLightFusedNarrow(t *testing.T) {
	fk := lightFusedK()
	if fk == nil {
		t.Skip("no fused kernels on this CPU or build")
	}
	rng := rand.New(rand.NewPCG(29, 2))
	specials := []uint32{0x7fc00000, 0x7fc00001, 0xffe12345, 0x7fffffff, 0x7fd0ffff, 0x7f800000, 0xff800000, 0, 0x80000000,
		1, 0x807fffff, 0x7f7fffff, 0xff7fffff, 0x3f808000, 0x3f818000, 0x3f808001, 0x477ff000, 0x33000000}
	const n = 1000
	for _, to := range fusedTypesAll {
		for trial := range 20 {
			x := make([]float32, n+8)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
				if rng.IntN(4) == 0 || trial == 0 {
					x[i] = math.Float32frombits(specials[rng.IntN(len(specials))])
				}
			}
			ones := make([]float32, n)
			for i := range ones {
				ones[i] = 1
			}
			// Odd trials hold no NaN and also run with lightNoNaN.
			nts := []int{0, 1}
			if trial%2 == 1 {
				for i, v := range x {
					if v != v {
						x[i] = 1
					}
				}
				nts = append(nts, lightNoNaN, 1|lightNoNaN)
			}
			want := make([]byte, (n+8)*to.Size())
			for i := range n {
				storeF32(to, want, i, x[i])
			}
			for _, nt := range nts {
				got := make([]byte, (n+8)*to.Size()+32)
				off := (32 - int(uintptr(unsafe.Pointer(&got[0]))%32)) % 32
				got = got[off : off+(n+8)*to.Size()]
				m := Matrix{DType: tile.F32, Data: unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 4*len(x)), Rows: 1, Cols: n, LD: n}
				k := lightTypeIndex(to)
				fk.scaleW[0][k](unsafe.Pointer(&got[0]), elem(&m, 0, 0), &ones[0], 1, elem(&m, 0, 0), n&^7, nt)
				sameBytes(t, fmt.Sprintf("scaleW f32->%v nt %d trial %d", to, nt, trial), got[:(n&^7)*to.Size()], want[:(n&^7)*to.Size()])
				clear(got)
				fk.scale[k](unsafe.Pointer(&got[0]), &x[0], 1, unsafe.Pointer(&x[0]), n&^7, nt)
				sameBytes(t, fmt.Sprintf("scale ->%v nt %d trial %d", to, nt, trial), got[:(n&^7)*to.Size()], want[:(n&^7)*to.Size()])
			}
		}
	}
}

// TestLightFusedSoftmaxSpecials: the fused softmax on rows with masked
// (−Inf) logits, a spread past the exponential's range, a NaN, a +Inf and
// only −Inf: exactly 0 where the reference has 0, NaN where it has NaN,
// else within the softmax bound.
func TestLightFusedSoftmaxSpecials(t *testing.T) {
	if lightFusedK() == nil {
		t.Skip("no fused kernels on this CPU or build")
	}
	const cols = 133
	inf := float32(math.Inf(1))
	rows := [][]float32{make([]float32, cols), make([]float32, cols), make([]float32, cols), make([]float32, cols), make([]float32, cols)}
	rng := rand.New(rand.NewPCG(29, 4))
	for j := range cols {
		rows[0][j] = float32(rng.NormFloat64())
		if j%3 == 1 {
			rows[0][j] = -inf
		}
		rows[1][j] = -200 * float32(j) / cols
		rows[2][j], rows[3][j], rows[4][j] = float32(rng.NormFloat64()), float32(rng.NormFloat64()), -inf
	}
	rows[2][17] = float32(math.NaN())
	rows[3][40] = inf
	for _, to := range fusedTypesAll {
		x := Matrix{DType: tile.F32, Data: make([]byte, 4*cols*len(rows)), Rows: len(rows), Cols: cols, LD: cols}
		for r, v := range rows {
			copy(F32s(x.Data)[r*cols:], v)
		}
		y := fusedMatrix(rng, to, len(rows), cols, 0, 0)
		yr := fusedMatrix(rng, to, len(rows), cols, 0, 0)
		SoftmaxFast(&SoftmaxArgs{X: x, Y: y, Temperature: 0.9})
		SoftmaxRef(&SoftmaxArgs{X: x, Y: yr, Temperature: 0.9})
		for i := range len(rows) * cols {
			g, w := loadF32(to, y.Data, i), loadF32(to, yr.Data, i)
			switch {
			case w != w || g != g:
				if (w != w) != (g != g) {
					t.Fatalf("%v: element %d is %v, want %v", to, i, g, w)
				}
			case w == 0:
				if math.Float32bits(g) != math.Float32bits(w) {
					t.Fatalf("%v: element %d is %v, want exactly %v", to, i, g, w)
				}
			case math.Abs(float64(g-w)) > 8*math.Max(typeUnit(to), 0x1p-20)*(1+math.Abs(float64(w))):
				t.Fatalf("%v: element %d is %v, want %v", to, i, g, w)
			}
		}
	}
}
