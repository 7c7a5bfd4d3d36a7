package gen

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/kernels/sm86"
	"github.com/tcrt-go/tcrt/tile"
)

// TestSimScaleKernel runs tcrt_sass_f8_scale on many amax values (every
// exponent, subnormals, 0, NaN, Inf, values around the overflow of
// fmax/amax and of 1/s) for both formats, margins inside and outside
// [0, 126] and both power-of-two settings, against
// fallback.ScaleFromAmax and the reference's 1/s, bit for bit.
func TestSimScaleKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 11))
	special := []uint32{0, 1, 0x7fffff, 0x800000, 0x7f800000, 0x7fc00000, 0x7f7fffff, 0x3f800000, 0x3f800001,
		0x02000000, 0x03000000, 0x03ffffff, 0x043fffff, 0x7e800000, 0x7f000000, 0x00400000}
	for _, q := range []tile.DType{tile.E4M3, tile.E5M2} {
		for _, margin := range []int{0, 1, 7, 126, 127, 200, -1, -130, 1000} {
			for _, pow2 := range []bool{false, true} {
				const n = 3000
				amax := make([]byte, 4*n)
				for i := range n {
					v := rng.Uint32() & 0x7fffffff
					if i < len(special) {
						v = special[i]
					} else if rng.IntN(3) == 0 { // exponents where the quotients overflow or go subnormal
						v = uint32(rng.IntN(16)+[]int{0, 120, 240}[rng.IntN(3)])<<23 | rng.Uint32()&0x7fffff
					}
					binary.LittleEndian.PutUint32(amax[4*i:], v)
				}
				d := newSGDev(t)
				wa, gotS := d.put(amax)
				ia, gotInv := d.put(bytes.Repeat([]byte{0xA5}, 4*n))
				ls, err := sm86.PlanQuantizeBlocks(sm86.SGQuantizeBlocks{Q: 8, X: 8, Inv: ia, Work: wa, QType: q, Rows: n, Cols: 8,
					BlockRows: 1, BlockCols: 8, Margin: margin, PowerOfTwo: pow2})
				if err != nil {
					t.Fatal(err)
				}
				d.run(ls[len(ls)-2 : len(ls)-1]) // the scale kernel alone
				fmax := tile.Float8Max(q)
				for i := range n {
					a := math.Float32frombits(binary.LittleEndian.Uint32(amax[4*i:]))
					s := fallback.ScaleFromAmax(a, fmax, margin, pow2)
					inv := 1 / s
					if g := binary.LittleEndian.Uint32(gotS[4*i:]); g != math.Float32bits(s) {
						t.Fatalf("%v margin %d pow2 %v: amax %#08x: scale %#08x, want %#08x", q, margin, pow2, math.Float32bits(a), g, math.Float32bits(s))
					}
					if g := binary.LittleEndian.Uint32(gotInv[4*i:]); g != math.Float32bits(inv) {
						t.Fatalf("%v margin %d pow2 %v: amax %#08x: 1/s %#08x, want %#08x", q, margin, pow2, math.Float32bits(a), g, math.Float32bits(inv))
					}
				}
			}
		}
	}
}

// TestSimQuantizeBlocks runs sm86.PlanQuantizeBlocks for both modules against
// fallback.QuantizeRef (computed scales, f32 input, tile.Saturate) bit for
// bit, codes and 1/s: per tensor (computed or given), per row, per column, 1×128 and 128×128,
// any Cols (1 × 1, 7 × 3, 129 × 7, 1000 × 13, 5 × 1001 among them), random
// values with specials, outputs poisoned; with a given scales tensor the
// codes, and Inv left as it was.
func TestSimQuantizeBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 12))
	grans := []fallback.Granularity{fallback.PerTensor, fallback.PerRow, fallback.PerColumn, fallback.Block1x128, fallback.Block128x128}
	// rows × cols: the random shapes of sgSizes, then fixed ones whose
	// rows are not a multiple of 4 long (groups of four span rows and
	// blocks: the per-element encoder)
	type shape struct{ n, rows, cols int }
	var shapes []shape
	for _, n := range sgSizes() {
		shapes = append(shapes, shape{n: n})
	}
	for _, rc := range [][2]int{{1, 1}, {7, 3}, {129, 7}, {1000, 13}, {5, 1001}} {
		shapes = append(shapes, shape{rows: rc[0], cols: rc[1]})
	}
	for _, arch := range sm86.Archs {
		progs, err := Programs(arch)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []tile.DType{tile.E4M3, tile.E5M2} {
			for _, gran := range grans {
				for _, sh := range shapes {
					t.Run(fmt.Sprintf("sm_%d/%v/%v/%d/%dx%d", arch, q, gran, sh.n, sh.rows, sh.cols), func(t *testing.T) {
						rows, cols := sh.rows, sh.cols
						if sh.n > 0 {
							rows, cols = shapeOf(rng, sh.n)
						}
						x := f8Inputs(rng, rows*cols)
						xb := make([]byte, 4*len(x))
						for i, v := range x {
							binary.LittleEndian.PutUint32(xb[4*i:], math.Float32bits(v))
						}
						margin, pow2 := rng.IntN(4), rng.IntN(2) == 0
						mode := []tile.OverflowMode{tile.Saturate, tile.NonSaturating}[rng.IntN(2)]
						sr, sc := gran.ScaleGrid(rows, cols)
						br, bc := gran.Block(rows, cols)
						wantQ := bytes.Repeat([]byte{0xA5}, rows*cols)
						wantS := bytes.Repeat([]byte{0xA5}, 4*sr*sc)
						given := gran == fallback.PerTensor && rng.IntN(2) == 0
						// a given scales tensor: the encoding alone, 1/s not written
						givenBuf := !given && rng.IntN(2) == 0
						var scales []float32
						if given {
							scales = []float32{float32(math.Ldexp(1+rng.Float64(), rng.IntN(40)-20))}
						}
						refInv := wantS
						if givenBuf {
							scales, refInv = make([]float32, sr*sc), nil
							for i := range scales {
								scales[i] = float32(math.Ldexp(1+rng.Float64(), rng.IntN(40)-20))
							}
						}
						if err := fallback.QuantizeRef(&fallback.QuantizeArgs{Rows: rows, Cols: cols, XType: tile.F32, X: xb,
							QType: q, Q: wantQ, Gran: gran, Mode: mode, ScaleInv: refInv, Margin: margin, PowerOfTwo: pow2,
							Scales: scales}); err != nil {
							t.Fatal(err)
						}
						d := newSGDev(t)
						qa, gotQ := d.put(bytes.Repeat([]byte{0xA5}, rows*cols))
						xa, _ := d.put(xb)
						ia, gotS := d.put(bytes.Repeat([]byte{0xA5}, 4*sr*sc))
						wa, _ := d.put(bytes.Repeat([]byte{0xA5}, 4*sr*sc))
						a := sm86.SGQuantizeBlocks{Q: qa, X: xa, Inv: ia, Work: wa, QType: q, Rows: rows, Cols: cols,
							BlockRows: br, BlockCols: bc, Margin: margin, PowerOfTwo: pow2, Given: given,
							NonSaturating: mode == tile.NonSaturating}
						if given {
							a.Scale = scales[0]
						}
						if givenBuf {
							sb := make([]byte, 4*len(scales))
							for i, v := range scales {
								binary.LittleEndian.PutUint32(sb[4*i:], math.Float32bits(v))
							}
							a.Scales, _ = d.put(sb)
						}
						ls, err := sm86.PlanQuantizeBlocks(a)
						if err != nil {
							t.Fatal(err)
						}
						d.runArch(ls, progs, arch)
						if k := firstDiff(gotS, wantS); k >= 0 {
							t.Fatalf("%d × %d: 1/s byte %d: got %x, want %x", rows, cols, k, gotS[k&^3:k&^3+4], wantS[k&^3:k&^3+4])
						}
						if k := firstDiff(gotQ, wantQ); k >= 0 {
							t.Fatalf("%d × %d: element %d (x %#08x): got %#02x, want %#02x", rows, cols, k, math.Float32bits(x[k]), gotQ[k], wantQ[k])
						}
					})
				}
			}
		}
	}
}

// TestQuantizeBlocksSupports: what the plan refuses, with sm86.ErrSGUnsupported.
func TestQuantizeBlocksSupports(t *testing.T) {
	ok := sm86.SGQuantizeBlocks{QType: tile.E4M3, Rows: 4, Cols: 256, BlockRows: 1, BlockCols: 128}
	if err := sm86.QuantizeBlocksSupports(ok); err != nil {
		t.Fatal(err)
	}
	if err := sm86.QuantizeBlocksSupports(sm86.SGQuantizeBlocks{QType: tile.E4M3, Rows: 3, Cols: 7, BlockRows: 3, BlockCols: 7}); err != nil {
		t.Fatalf("one block of 3 × 7: %v", err) // any shape per tensor
	}
	if err := sm86.QuantizeBlocksSupports(sm86.SGQuantizeBlocks{QType: tile.E4M3, Rows: 5, Cols: 7, BlockRows: 5, BlockCols: 1}); err != nil {
		t.Fatalf("per column, 5 × 7: %v", err)
	}
	for name, mut := range map[string]func(a *sm86.SGQuantizeBlocks){
		"to f16":        func(a *sm86.SGQuantizeBlocks) { a.QType = tile.F16 },
		"blocks 4 wide": func(a *sm86.SGQuantizeBlocks) { a.BlockCols = 4 },
		"no rows":       func(a *sm86.SGQuantizeBlocks) { a.Rows = 0 },
		"given per row": func(a *sm86.SGQuantizeBlocks) { a.Given, a.Scale = true, 1 },
		"given zero":    func(a *sm86.SGQuantizeBlocks) { a.Given, a.BlockRows, a.BlockCols = true, 4, 256 },
	} {
		a := ok
		mut(&a)
		if _, err := sm86.PlanQuantizeBlocks(a); !errors.Is(err, sm86.ErrSGUnsupported) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
