package gen

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/kernels/sm86"
	"github.com/tcrt-go/tcrt/tile"
)

// TestSimWiden runs sm86.PlanWiden in the simulator against tile.F16ToF32 and
// tile.BF16ToF32, bit for bit: random bits (NaNs with payloads, ±Inf,
// subnormals, ±0) and every f16 pattern, output poisoned.
func TestSimWiden(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 13))
	for _, d := range []tile.DType{tile.F16, tile.BF16} {
		for _, n := range append(sgSizes(), 1<<16) {
			t.Run(fmt.Sprintf("%v/%d", d, n), func(t *testing.T) {
				x := make([]byte, 2*n)
				for i := range n {
					v := uint16(rng.Uint32())
					if n == 1<<16 {
						v = uint16(i) // every pattern
					}
					binary.LittleEndian.PutUint16(x[2*i:], v)
				}
				dev := newSGDev(t)
				xa, _ := dev.put(x)
				oa, got := dev.put(bytes.Repeat([]byte{0xA5}, 4*n))
				ls, err := sm86.PlanWiden(sm86.SGWiden{Out: oa, X: xa, XType: d, N: n})
				if err != nil {
					t.Fatal(err)
				}
				dev.run(ls)
				for i := range n {
					h := binary.LittleEndian.Uint16(x[2*i:])
					want := math.Float32bits(tile.BF16ToF32(h))
					if d == tile.F16 {
						want = math.Float32bits(tile.F16ToF32(h))
					}
					if g := binary.LittleEndian.Uint32(got[4*i:]); g != want {
						t.Fatalf("element %d (%#04x): got %#08x, want %#08x", i, h, g, want)
					}
				}
			})
		}
	}
}

// TestWidenSupports: what the plan refuses, with sm86.ErrSGUnsupported.
func TestWidenSupports(t *testing.T) {
	for _, a := range []sm86.SGWiden{{XType: tile.F32, N: 4}, {XType: tile.F16}, {XType: tile.BF16, N: sm86.SGLimit}} {
		if _, err := sm86.PlanWiden(a); !errors.Is(err, sm86.ErrSGUnsupported) {
			t.Errorf("%+v: %v", a, err)
		}
	}
}
