package fallback

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

var quantShapes = [][2]int{{1, 1}, {1, 1000}, {7, 129}, {129, 300}, {257, 33}, {300, 257}}

// randX returns rows×cols random values of type t (as raw bytes): normal
// values over many binades, with a few zeros, subnormals, huge values and,
// when special, NaN and ±Inf.
func randX(rng *rand.Rand, t tile.DType, n int, special bool) []byte {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * math.Ldexp(1, rng.IntN(24)-12))
		switch r := rng.IntN(200); {
		case r == 0:
			v[i] = 0
		case r == 1:
			v[i] = math.Float32frombits(rng.Uint32N(1 << 23))
		case r == 2:
			v[i] *= 1e30
		case special && r == 3:
			v[i] = float32(math.NaN())
		case special && r == 4:
			v[i] = float32(math.Inf(1 - 2*rng.IntN(2)))
		}
	}
	out := make([]byte, n*t.Size())
	for i, x := range v {
		bits := tile.FromFloat32(t, x)
		for k := range t.Size() {
			out[i*t.Size()+k] = byte(bits >> (8 * k))
		}
	}
	return out
}

func poisoned(n int) []byte { return bytes.Repeat([]byte{0xA5}, n) }

func TestQuantizeFastMatchesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := quantShapes
	if testing.Short() {
		shapes = shapes[:len(shapes)-1] // 300×257 only in the long run
	}
	for _, sh := range shapes {
		for g := PerTensor; g.Valid(); g++ {
			for _, xt := range []tile.DType{tile.F32, tile.F16, tile.BF16} {
				for _, qt := range []tile.DType{tile.E4M3, tile.E5M2} {
					for _, variant := range []string{"amax", "margin2pow2", "given", "special", "nonsat"} {
						if testing.Short() && xt != tile.F32 && variant != "amax" {
							continue
						}
						rows, cols := sh[0], sh[1]
						sr, sc := g.ScaleGrid(rows, cols)
						a := QuantizeArgs{Rows: rows, Cols: cols, XType: xt, QType: qt, Gran: g, Threads: 3}
						a.X = randX(rng, xt, rows*cols, variant == "special")
						switch variant {
						case "margin2pow2":
							a.Margin, a.PowerOfTwo = 2, true
						case "given":
							if g == MX {
								continue
							}
							a.Scales = make([]float32, sr*sc)
							for i := range a.Scales {
								a.Scales[i] = float32(math.Ldexp(rng.Float64()+0.5, rng.IntN(20)-10))
							}
						case "nonsat":
							a.Mode = tile.NonSaturating
						}
						invLen := 4 * sr * sc
						if g == MX {
							invLen = sr * sc
						}
						r := a
						r.Q, r.ScaleInv, r.Amax = poisoned(rows*cols), poisoned(invLen), poisoned(4)
						a.Q, a.ScaleInv, a.Amax = poisoned(rows*cols), poisoned(invLen), poisoned(4)
						if err := QuantizeRef(&r); err != nil {
							t.Fatal(err)
						}
						if err := QuantizeFast(&a); err != nil {
							t.Fatal(err)
						}
						name := fmt.Sprintf("%dx%d %v %v->%v %s", rows, cols, g, xt, qt, variant)
						if i := firstDiff(a.Q, r.Q); i >= 0 {
							t.Fatalf("%s: q[%d] = %#02x, reference %#02x", name, i, a.Q[i], r.Q[i])
						}
						if i := firstDiff(a.ScaleInv, r.ScaleInv); i >= 0 {
							t.Fatalf("%s: scale_inv byte %d differs", name, i)
						}
						if i := firstDiff(a.Amax, r.Amax); i >= 0 {
							t.Fatalf("%s: amax %v, reference %v", name, F32s(a.Amax)[0], F32s(r.Amax)[0])
						}
					}
				}
			}
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

func TestDequantizeAndAmaxFastMatchRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	// 513×520 f32 is over streamBytes: the non-temporal decoders.
	for _, sh := range append(quantShapes, [2]int{513, 520}) {
		rows, cols := sh[0], sh[1]
		for g := PerTensor; g.Valid(); g++ {
			sr, sc := g.ScaleGrid(rows, cols)
			for _, qt := range []tile.DType{tile.E4M3, tile.E5M2} {
				q := make([]byte, rows*cols)
				for i := range q {
					q[i] = uint8(rng.Uint32())
				}
				var inv []byte
				if g == MX {
					inv = make([]byte, sr*sc)
					for i := range inv {
						inv[i] = uint8(rng.Uint32())
					}
				} else {
					inv = make([]byte, 4*sr*sc)
					for i, s := 0, F32s(inv); i < len(s); i++ {
						s[i] = float32(math.Ldexp(rng.Float64()+0.5, rng.IntN(40)-20))
					}
				}
				for _, yt := range []tile.DType{tile.F32, tile.F16, tile.BF16} {
					for _, nilInv := range []bool{false, true} {
						if nilInv && g != PerTensor {
							continue
						}
						a := DequantizeArgs{Rows: rows, Cols: cols, QType: qt, Q: q, YType: yt, Gran: g, ScaleInv: inv, Threads: 2}
						if nilInv {
							a.ScaleInv = nil
						}
						r := a
						a.Y, r.Y = poisoned(rows*cols*yt.Size()), poisoned(rows*cols*yt.Size())
						if err := DequantizeRef(&r); err != nil {
							t.Fatal(err)
						}
						if err := DequantizeFast(&a); err != nil {
							t.Fatal(err)
						}
						if i := firstDiff(a.Y, r.Y); i >= 0 {
							t.Fatalf("%dx%d %v %v->%v nil=%v: byte %d differs", rows, cols, g, qt, yt, nilInv, i)
						}
					}
				}
			}
			for _, xt := range []tile.DType{tile.F32, tile.BF16} {
				a := AmaxArgs{Rows: rows, Cols: cols, XType: xt, X: randX(rng, xt, rows*cols, true), Gran: g, Threads: 2}
				r := a
				a.Out, r.Out = poisoned(4*sr*sc), poisoned(4*sr*sc)
				AmaxRef(&r)
				AmaxFast(&a)
				if i := firstDiff(a.Out, r.Out); i >= 0 {
					t.Fatalf("amax %dx%d %v %v: byte %d differs", rows, cols, g, xt, i)
				}
			}
		}
	}
}

func TestQuantizeBadScalesWriteNothing(t *testing.T) {
	for _, bad := range []float32{0, -1, float32(math.NaN()), float32(math.Inf(1))} {
		for _, fn := range []func(*QuantizeArgs) error{QuantizeRef, QuantizeFast} {
			a := QuantizeArgs{Rows: 2, Cols: 3, XType: tile.F32, X: make([]byte, 24), QType: tile.E4M3, Gran: PerRow,
				Scales: []float32{1, bad}, Q: poisoned(6), ScaleInv: poisoned(8), Amax: poisoned(4)}
			err := fn(&a)
			var ae *tile.ArgError
			if !errors.Is(err, tile.ErrArgument) || !errors.As(err, &ae) || ae.Arg != "Scales" {
				t.Fatalf("scale %v: %v", bad, err)
			}
			if !bytes.Equal(a.Q, poisoned(6)) || !bytes.Equal(a.ScaleInv, poisoned(8)) || !bytes.Equal(a.Amax, poisoned(4)) {
				t.Fatalf("scale %v: output written", bad)
			}
		}
		for _, fn := range []func(*DequantizeArgs) error{DequantizeRef, DequantizeFast} {
			inv := make([]byte, 8)
			F32s(inv)[0], F32s(inv)[1] = 1, bad
			a := DequantizeArgs{Rows: 2, Cols: 3, QType: tile.E4M3, Q: make([]byte, 6), YType: tile.F32, Y: poisoned(24), Gran: PerRow, ScaleInv: inv}
			if err := fn(&a); !errors.Is(err, tile.ErrArgument) || !bytes.Equal(a.Y, poisoned(24)) {
				t.Fatalf("scale_inv %v: %v, or output written", bad, err)
			}
		}
	}
}

func TestScaleRules(t *testing.T) {
	if s := ScaleFromAmax(2, 448, 0, false); s != 224 {
		t.Errorf("448/2 = %v", s)
	}
	if s := ScaleFromAmax(3, 448, 1, false); s != float32(448.0/3)/2 {
		t.Errorf("margin 1: %v", s)
	}
	if s := ScaleFromAmax(3, 448, 0, true); s != 128 {
		t.Errorf("pow2: %v", s)
	}
	for _, am := range []float32{0, float32(math.NaN()), float32(math.Inf(1))} {
		if s := ScaleFromAmax(am, 448, 0, false); s != 1 {
			t.Errorf("amax %v: %v", am, s)
		}
	}
	if s := ScaleFromAmax(1e-45, 57344, 0, false); s != tile.MaxScale {
		t.Errorf("overflow: %v", s)
	}
	// Every computed scale round-trips: it and its inverse are valid scales
	// (normal and finite), at the edges of float32 and on random amaxes.
	rng := rand.New(rand.NewPCG(3, 31))
	edges := []float32{1e-45, 1e-44, 1e-40, 1.1754942e-38, 0x1p-126, 0x1p-118, 1e-30, 1, 448, 3e38, math.MaxFloat32}
	for i := range 20000 {
		am := math.Float32frombits(rng.Uint32() & 0x7f7fffff)
		if i < len(edges) {
			am = edges[i]
		}
		for _, fmax := range []float32{448, 57344} {
			for _, margin := range []int{0, 3, 64} {
				for _, pow2 := range []bool{false, true} {
					s := ScaleFromAmax(am, fmax, margin, pow2)
					if !tile.ValidScale(s) || !tile.ValidScale(1/s) {
						t.Fatalf("ScaleFromAmax(%v, %v, %d, %v) = %v, inverse %v: not both valid scales", am, fmax, margin, pow2, s, 1/s)
					}
				}
			}
		}
	}
	// OCP MX: X = 2^(floor(log2 amax) - emax).
	cases := []struct {
		amax float32
		emax int
		b    uint8
	}{{448, 8, 127}, {1, 8, 119}, {1.99, 8, 119}, {2, 8, 120}, {0, 8, 0}, {1e-40, 8, 0}, {57344, 15, 127}, {3e38, 8, 246}}
	for _, c := range cases {
		b, mul := MXScale(c.amax, c.emax)
		if b != c.b || mul != 1/E8M0ToF32(b) {
			t.Errorf("MXScale(%v, %d) = %d, %v; want %d", c.amax, c.emax, b, mul, c.b)
		}
	}
	if b, _ := MXScale(float32(math.Inf(-1)), 8); b != 0xFF {
		t.Errorf("MX Inf: %d", b)
	}
}
