package gen

import (
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

// amaxInput returns n random elements of type d (bits), a fifth of them
// specials: ±0, ±Inf, NaNs of both signs, subnormals, the largest finite.
func amaxInput(rng *rand.Rand, d tile.DType, n int, nan bool) []byte {
	sz := d.Size()
	b := make([]byte, n*sz)
	var specials []uint32
	switch d {
	case tile.F32:
		specials = []uint32{0, 0x80000000, 0x7f800000, 0xff800000, 1, 0x807fffff, 0x7f7fffff, 0xff7fffff}
	default:
		specials = []uint32{0, 0x8000, 0x7c00, 0xfc00, 0x7f80, 0xff80, 1, 0x83ff, 0x7bff, 0x7f7f}
	}
	nans := map[tile.DType][]uint32{tile.F32: {0x7fc00000, 0xffc00001, 0x7f800001}, tile.BF16: {0x7fc0, 0xff81},
		tile.F16: {0x7e00, 0xfc01}}[d]
	for i := range n {
		v := rng.Uint32()
		switch k := rng.IntN(10); {
		case k == 0:
			v = specials[rng.IntN(len(specials))]
		case k == 1 && nan && rng.IntN(20) == 0:
			v = nans[rng.IntN(len(nans))]
		case k < 6 && d == tile.F32:
			v = math.Float32bits(float32(rng.NormFloat64() * 100))
		}
		if sz == 4 {
			binary.LittleEndian.PutUint32(b[4*i:], v)
		} else {
			if d == tile.F16 && v&0x7c00 == 0x7c00 && v&0x3ff != 0 && !nan {
				v &^= 0x3ff // no NaN in a NaN-free case
			}
			if d == tile.BF16 && v&0x7f80 == 0x7f80 && v&0x7f != 0 && !nan {
				v &^= 0x7f
			}
			binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
		}
	}
	if !nan && d == tile.F32 {
		for i := range n {
			if u := binary.LittleEndian.Uint32(b[4*i:]); u&0x7fffffff > 0x7f800000 {
				binary.LittleEndian.PutUint32(b[4*i:], u&0xff800000)
			}
		}
	}
	return b
}

// TestSimAmax runs sm86.PlanAmax against fallback.AmaxRef bit for bit: f32,
// bf16 and f16 inputs, per tensor, per row, 1×128, 128×128, MX blocks and
// per column,
// with and without NaNs, over shapes whose sides are not multiples of the
// blocks or the 8-element runs.
func TestSimAmax(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 7))
	grans := []fallback.Granularity{fallback.PerTensor, fallback.PerRow, fallback.Block1x128, fallback.Block128x128, fallback.MX, fallback.PerColumn}
	for _, d := range []tile.DType{tile.F32, tile.BF16, tile.F16} {
		for _, gran := range grans {
			for _, n := range sgSizes() {
				t.Run(fmt.Sprintf("%v/%v/%d", d, gran, n), func(t *testing.T) {
					rows, cols := shapeOf(rng, n)
					if rng.IntN(2) == 0 && n >= 1000 {
						rows, cols = n/333, 333
					}
					x := amaxInput(rng, d, rows*cols, rng.IntN(3) == 0)
					br, bc := gran.Block(rows, cols)
					sr, sc := gran.ScaleGrid(rows, cols)
					want := make([]byte, 4*sr*sc)
					fallback.AmaxRef(&fallback.AmaxArgs{Rows: rows, Cols: cols, XType: d, X: x, Gran: gran, Out: want})
					dev := newSGDev(t)
					out, got := dev.put(make([]byte, 4*sr*sc))
					for i := range got {
						got[i] = 0xFF // poisoned
					}
					xa, _ := dev.put(x)
					ls, err := sm86.PlanAmax(sm86.SGAmax{Out: out, X: xa, XType: d, Rows: rows, Cols: cols, BlockRows: br, BlockCols: bc})
					if err != nil {
						t.Fatal(err)
					}
					dev.run(ls)
					if k := firstDiff(got, want); k >= 0 {
						b := k / 4
						t.Fatalf("%d × %d: block %d: got %#08x, want %#08x", rows, cols, b,
							binary.LittleEndian.Uint32(got[4*b:]), binary.LittleEndian.Uint32(want[4*b:]))
					}
				})
			}
		}
	}
	if err := sm86.AmaxSupports(sm86.SGAmax{XType: tile.F32, Rows: 4, Cols: 4, BlockRows: 2, BlockCols: 1}); !errors.Is(err, sm86.ErrSGUnsupported) {
		t.Errorf("2 × 1 blocks: %v", err)
	}
	if err := sm86.AmaxSupports(sm86.SGAmax{XType: tile.E4M3, Rows: 4, Cols: 4, BlockRows: 4, BlockCols: 4}); !errors.Is(err, sm86.ErrSGUnsupported) {
		t.Errorf("e4m3 input: %v", err)
	}
}
