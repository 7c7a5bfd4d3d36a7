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

// TestSimDequant runs sm86.PlanDequant against fallback.DequantizeRef bit for
// bit: every float8 byte (NaN codes, subnormals, E5M2 infinities) at random
// places, both formats, f32/bf16 outputs (f16 is refused: sm86.DequantSupports), per tensor (with and without
// scales), per row, per column, 1×128, 128×128 and MX (E8M0 scales
// including 0, 255 and the extremes), scales that push products into
// subnormals and overflow, outputs poisoned.
func TestSimDequant(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 8))
	grans := []fallback.Granularity{fallback.PerTensor, fallback.PerRow, fallback.PerColumn, fallback.Block1x128,
		fallback.Block128x128, fallback.MX}
	for _, q := range []tile.DType{tile.E4M3, tile.E5M2} {
		for _, y := range []tile.DType{tile.F32, tile.F16, tile.BF16} {
			for _, gran := range grans {
				for _, n := range sgSizes() {
					t.Run(fmt.Sprintf("%v/%v/%v/%d", q, y, gran, n), func(t *testing.T) {
						rows, cols := shapeOf(rng, n)
						qb := randBytes(rng, n)
						sr, sc := gran.ScaleGrid(rows, cols)
						br, bc := gran.Block(rows, cols)
						var inv []byte
						if gran == fallback.MX {
							inv = randBytes(rng, sr*sc)
							for i := range inv {
								if rng.IntN(4) == 0 {
									inv[i] = []byte{0, 1, 127, 254, 255, 100, 150}[rng.IntN(7)]
								}
							}
						} else if gran != fallback.PerTensor || rng.IntN(2) == 0 {
							inv = make([]byte, 4*sr*sc)
							for i := 0; i < sr*sc; i++ {
								s := float32(math.Ldexp(1+rng.Float64(), rng.IntN(60)-30))
								if rng.IntN(5) == 0 {
									s = []float32{1, 0x1p-126, math.Float32frombits(tile.MinScaleBits), 3e37, tile.MaxScale, 0.75}[rng.IntN(6)]
								}
								binary.LittleEndian.PutUint32(inv[4*i:], math.Float32bits(s))
							}
						}
						want := bytes.Repeat([]byte{0xFF}, n*y.Size())
						if err := fallback.DequantizeRef(&fallback.DequantizeArgs{Rows: rows, Cols: cols, QType: q, Q: qb,
							YType: y, Y: want, Gran: gran, ScaleInv: inv}); err != nil {
							t.Fatal(err)
						}
						d := newSGDev(t)
						slot, slotB := d.put(make([]byte, 8))
						qa, _ := d.put(qb)
						var ia uint64
						if inv != nil {
							ia, _ = d.put(inv)
						}
						ya, got := d.put(bytes.Repeat([]byte{0xFF}, n*y.Size()))
						ls, err := sm86.PlanDequant(sm86.SGDequant{Slot: slot, Q: qa, Y: ya, Inv: ia, QType: q, YType: y, Rows: rows,
							Cols: cols, BlockRows: br, BlockCols: bc, MX: gran == fallback.MX})
						if err != nil {
							t.Fatal(err)
						}
						d.run(ls)
						if !bytes.Equal(slotB, make([]byte, 8)) {
							t.Fatalf("fault slot %x with valid scales", slotB)
						}
						if k := firstDiff(got, want); k >= 0 {
							e := k / y.Size()
							t.Fatalf("%d × %d: element %d (q %#02x): got %x, want %x", rows, cols, e, qb[e],
								got[e*y.Size():(e+1)*y.Size()], want[e*y.Size():(e+1)*y.Size()])
						}
					})
				}
			}
		}
	}
}

// TestSimDequantBadScale: a scale that is zero, negative, NaN, Inf or too small to invert
// faults its block (the first such block is recorded) and leaves the
// output untouched, as fallback.DequantizeRef refuses it.
func TestSimDequantBadScale(t *testing.T) {
	if err := sm86.DequantSupports(sm86.SGDequant{QType: tile.E4M3, YType: tile.S32, Rows: 1, Cols: 1, BlockRows: 1, BlockCols: 1}); !errors.Is(err, sm86.ErrSGUnsupported) {
		t.Errorf("s32 output: %v", err)
	}
	rng := rand.New(rand.NewPCG(19, 9))
	for _, bad := range []uint32{0, 0x80000000, 0xbf800000, 0x7f800000, 0xff800000, 0x7fc00000, 1, tile.MinScaleBits - 1, tile.MaxScaleBits + 1, 0x7f7fffff} { // then: a subnormal, just above 2^126, MaxFloat32 (inverses not normal)
		rows, cols := 5+rng.IntN(300), 1+rng.IntN(40)
		inv := make([]byte, 4*rows)
		for i := range rows {
			binary.LittleEndian.PutUint32(inv[4*i:], math.Float32bits(float32(1+rng.Float64())))
		}
		first := rng.IntN(rows)
		binary.LittleEndian.PutUint32(inv[4*first:], bad)
		binary.LittleEndian.PutUint32(inv[4*(rows-1):], bad)
		qb := randBytes(rng, rows*cols)
		if err := fallback.DequantizeRef(&fallback.DequantizeArgs{Rows: rows, Cols: cols, QType: tile.E4M3, Q: qb,
			YType: tile.F32, Y: make([]byte, 4*rows*cols), Gran: fallback.PerRow, ScaleInv: inv}); !errors.Is(err, tile.ErrArgument) {
			t.Fatalf("scale %#08x: the reference accepts it: %v", bad, err)
		}
		d := newSGDev(t)
		slot, slotB := d.put(make([]byte, 8))
		qa, _ := d.put(qb)
		ia, _ := d.put(inv)
		y0 := randBytes(rng, 4*rows*cols)
		ya, got := d.put(y0)
		ls, err := sm86.PlanDequant(sm86.SGDequant{Slot: slot, Q: qa, Y: ya, Inv: ia, QType: tile.E4M3, YType: tile.F32,
			Rows: rows, Cols: cols, BlockRows: 1, BlockCols: cols})
		if err != nil {
			t.Fatal(err)
		}
		d.run(ls)
		if b, ok := sm86.SGFault(binary.LittleEndian.Uint64(slotB)); !ok || b != first {
			t.Errorf("scale %#08x: slot says block %d (%v), want %d", bad, b, ok, first)
		}
		if !bytes.Equal(got, y0) {
			t.Errorf("scale %#08x: the output changed", bad)
		}
	}
}

// TestScaleBits: the device's scale check uses tile.ValidScale's bounds,
// and the bounds are each other's inverse.
func TestScaleBits(t *testing.T) {
	lo, hi := math.Float32frombits(tile.MinScaleBits), math.Float32frombits(tile.MaxScaleBits)
	if !tile.ValidScale(lo) || tile.ValidScale(math.Float32frombits(tile.MinScaleBits-1)) ||
		!tile.ValidScale(hi) || tile.ValidScale(math.Float32frombits(tile.MaxScaleBits+1)) {
		t.Fatalf("[%#x, %#x] are not ValidScale's bounds", tile.MinScaleBits, tile.MaxScaleBits)
	}
	if 1/lo != hi || 1/hi != lo {
		t.Fatalf("1/%v = %v, 1/%v = %v", lo, 1/lo, hi, 1/hi)
	}
}
