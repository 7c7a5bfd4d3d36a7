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

// TestSimQuantizeMX runs sm86.PlanQuantizeMX for both modules against
// fallback.QuantizeRef (MX, f32 input, tile.Saturate) bit for bit, codes
// and E8M0 scales: random values over the whole binary32 range with
// specials (NaN of both signs, ±Inf, ±0, subnormals), blocks of zeros, a
// partial last block, Cols not a multiple of 4 (1 × 1, 7 × 3, 129 × 7,
// 1000 × 13, 5 × 1001), outputs poisoned.
func TestSimQuantizeMX(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 10))
	for _, arch := range sm86.Archs {
		for _, q := range []tile.DType{tile.E4M3, tile.E5M2} {
			// random shapes (sgSizes), then fixed ones with Cols not a
			// multiple of 4 (the per-element encoder)
			shapes := [][2]int{{1, 1}, {7, 3}, {129, 7}, {1000, 13}, {5, 1001}}
			for _, n := range sgSizes() {
				shapes = append(shapes, [2]int{-n, 0})
			}
			for _, sh := range shapes {
				t.Run(fmt.Sprintf("sm_%d/%v/%dx%d", arch, q, sh[0], sh[1]), func(t *testing.T) {
					rows, cols := sh[0], sh[1]
					if rows < 0 {
						rows, cols = shapeOf(rng, -rows)
					}
					x := f8Inputs(rng, rows*cols)
					for i := range x {
						switch rng.IntN(40) {
						case 0:
							x[i] = float32(math.NaN())
						case 1:
							x[i] = math.Float32frombits(0xffc00001)
						case 2:
							x[i] = 0
						}
					}
					if rows*cols > 64 { // a zero block
						for i := 0; i < 32 && i < cols; i++ {
							x[i] = 0
						}
					}
					xb := make([]byte, 4*len(x))
					for i, v := range x {
						binary.LittleEndian.PutUint32(xb[4*i:], math.Float32bits(v))
					}
					sc := (cols + 31) / 32
					mode := []tile.OverflowMode{tile.Saturate, tile.NonSaturating}[rng.IntN(2)]
					wantQ := bytes.Repeat([]byte{0xA5}, rows*cols)
					wantS := bytes.Repeat([]byte{0xA5}, rows*sc)
					if err := fallback.QuantizeRef(&fallback.QuantizeArgs{Rows: rows, Cols: cols, XType: tile.F32, X: xb,
						QType: q, Q: wantQ, Gran: fallback.MX, Mode: mode, ScaleInv: wantS}); err != nil {
						t.Fatal(err)
					}
					progs, err := Programs(arch)
					if err != nil {
						t.Fatal(err)
					}
					d := newSGDev(t)
					qa, gotQ := d.put(bytes.Repeat([]byte{0xA5}, rows*cols))
					xa, _ := d.put(xb)
					ea, gotS := d.put(bytes.Repeat([]byte{0xA5}, rows*sc))
					wa, _ := d.put(bytes.Repeat([]byte{0xA5}, 4*rows*sc))
					ls, err := sm86.PlanQuantizeMX(sm86.SGQuantizeMX{Q: qa, X: xa, E8M0: ea, Work: wa, QType: q, Rows: rows, Cols: cols,
						NonSaturating: mode == tile.NonSaturating})
					if err != nil {
						t.Fatal(err)
					}
					d.runArch(ls, progs, arch)
					if k := firstDiff(gotS, wantS); k >= 0 {
						t.Fatalf("%d × %d: scale %d: got %#02x, want %#02x", rows, cols, k, gotS[k], wantS[k])
					}
					if k := firstDiff(gotQ, wantQ); k >= 0 {
						t.Fatalf("%d × %d: element %d (x %#08x, scale %#02x): got %#02x, want %#02x", rows, cols, k,
							math.Float32bits(x[k]), gotS[(k/cols)*sc+(k%cols)/32], gotQ[k], wantQ[k])
					}
				})
			}
		}
	}
	if err := sm86.QuantizeMXSupports(sm86.SGQuantizeMX{QType: tile.E4M3, Rows: 2, Cols: 6}); err != nil {
		t.Errorf("cols 6: %v", err)
	}
	if err := sm86.QuantizeMXSupports(sm86.SGQuantizeMX{QType: tile.E4M3, Rows: 0, Cols: 6}); !errors.Is(err, sm86.ErrSGUnsupported) {
		t.Errorf("no rows: %v", err)
	}
}
