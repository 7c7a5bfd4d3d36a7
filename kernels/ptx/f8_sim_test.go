package ptx

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/sass/sim"
	"github.com/tcrt-go/tcrt/tile"
)

// f8Sim is simKernel for the F8 module; the f8 tests launch without the
// kernel's own constant banks, which these kernels do not read (a read
// would fault in the simulator).
func f8Sim(t *testing.T, name string, sm int) *sim.Simulator {
	t.Helper()
	sim, _ := simKernel(t, F8(), name, sm)
	return sim
}

// f8Params lays out (dst, src, scales, rows, cols, flags).
func f8Params(dst, src, scales, rows, cols uint64, flags uint32) []byte {
	var b []byte
	for _, v := range []uint64{dst, src, scales, rows, cols} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return binary.LittleEndian.AppendUint32(b, flags)
}

var f8SimShapes = [][2]int{{1, 1}, {1, 7}, {3, 129}, {7, 1000}, {40, 33}}

// TestF8SimQuantize runs ptxas's tcrt_f8_quantize (sm_86 and sm_89: divergent NaN
// and tail paths, the encoder as an out-of-line subroutine called with
// CALL.REL.NOINC) in the SASS simulator on random inputs, per tensor and
// per row, both formats, saturating and not, with the grid F8Grid picks
// for a 2-SM device (so threads loop), and compares every byte with the
// CPU encoder; bytes past the tensor must keep their poison.
func TestF8SimQuantize(t *testing.T) {
	for _, sm := range []int{86, 89} {
		t.Run(fmt.Sprint("sm_", sm), func(t *testing.T) { f8SimQuantize(t, f8Sim(t, F8Quantize, sm)) })
	}
}

func f8SimQuantize(t *testing.T, q *sim.Simulator) {
	r := rand.New(rand.NewPCG(30, 31))
	for _, sh := range f8SimShapes {
		rows, cols := sh[0], sh[1]
		n := rows * cols
		for flags := uint32(0); flags < 8; flags++ {
			src := make([]float32, n)
			for i := range src {
				switch r.IntN(16) {
				case 0:
					src[i] = math.Float32frombits(0x7fc00000 | r.Uint32()&0x803fffff) // NaN, either sign
				case 1:
					src[i] = float32(math.Inf(1 - 2*r.IntN(2)))
				case 2:
					src[i] = math.Float32frombits(r.Uint32() & 0x807fffff) // subnormal
				default:
					src[i] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(40)-20)))
				}
			}
			scales := make([]float32, rows)
			for i := range scales {
				scales[i] = float32(math.Pow(2, float64(r.IntN(9)-4)) * (0.5 + r.Float64()))
			}
			m := sim.NewMemory()
			ad, _ := m.Alloc("dst", n+16)
			as, _ := m.Alloc("src", 4*n)
			ak, _ := m.Alloc("scales", 4*rows)
			dst := m.Bytes("dst")
			for i := range dst {
				dst[i] = 0xa5
			}
			for i, v := range src {
				binary.LittleEndian.PutUint32(m.Bytes("src")[4*i:], math.Float32bits(v))
			}
			for i, v := range scales {
				binary.LittleEndian.PutUint32(m.Bytes("scales")[4*i:], math.Float32bits(v))
			}
			perRow := flags&F8PerRow != 0
			grid := F8Grid(int64(rows), int64(cols), perRow, 2)
			if _, err := q.Launch(sim.Config{Grid: [3]int{grid}, Block: [3]int{F8Block}, Memory: m,
				Params: f8Params(ad, as, ak, uint64(rows), uint64(cols), flags), Poison: true}); err != nil {
				t.Fatalf("%dx%d flags %d: %v", rows, cols, flags, err)
			}
			fmt_, nonsat := flags&F8E5M2, flags&F8NonSaturating
			for i, x := range src {
				s := scales[0]
				if perRow {
					s = scales[i/cols]
				}
				want := uint8(math.Float32bits(x)>>24&0x80 | 0x7f)
				if x == x {
					want = uint8(refEncode(x*s, fmt_, nonsat))
				}
				if dst[i] != want {
					t.Fatalf("%dx%d flags %d: dst[%d] = %#x, want %#x (x %v, scale %v)", rows, cols, flags, i, dst[i], want, x, s)
				}
			}
			for i := n; i < len(dst); i++ {
				if dst[i] != 0xa5 {
					t.Fatalf("%dx%d flags %d: dst[%d] written past the tensor", rows, cols, flags, i)
				}
			}
		}
	}
}

// TestF8SimDequantize runs ptxas's tcrt_f8_dequantize the same way on
// every byte value and compares with the CPU decoder times the scale (bit
// for bit; a NaN code must give a NaN).
func TestF8SimDequantize(t *testing.T) {
	for _, sm := range []int{86, 89} {
		t.Run(fmt.Sprint("sm_", sm), func(t *testing.T) { f8SimDequantize(t, f8Sim(t, F8Dequantize, sm)) })
	}
}

func f8SimDequantize(t *testing.T, dq *sim.Simulator) {
	r := rand.New(rand.NewPCG(32, 33))
	for _, sh := range f8SimShapes {
		rows, cols := sh[0], sh[1]
		n := rows * cols
		for _, flags := range []uint32{0, F8E5M2, F8PerRow, F8PerRow | F8E5M2} {
			src := make([]uint8, n)
			for i := range src {
				src[i] = uint8(r.Uint32())
			}
			scales := make([]float32, rows)
			for i := range scales {
				scales[i] = float32(math.Pow(2, float64(r.IntN(9)-4)) * (0.5 + r.Float64()))
			}
			m := sim.NewMemory()
			ad, _ := m.Alloc("dst", 4*n+64)
			as, _ := m.Alloc("src", n)
			ak, _ := m.Alloc("scales", 4*rows)
			dst := m.Bytes("dst")
			for i := range dst {
				dst[i] = 0xa5
			}
			copy(m.Bytes("src"), src)
			for i, v := range scales {
				binary.LittleEndian.PutUint32(m.Bytes("scales")[4*i:], math.Float32bits(v))
			}
			perRow := flags&F8PerRow != 0
			grid := F8Grid(int64(rows), int64(cols), perRow, 2)
			if _, err := dq.Launch(sim.Config{Grid: [3]int{grid}, Block: [3]int{F8Block}, Memory: m,
				Params: f8Params(ad, as, ak, uint64(rows), uint64(cols), flags), Poison: true}); err != nil {
				t.Fatalf("%dx%d flags %d: %v", rows, cols, flags, err)
			}
			d := tile.E4M3
			if flags&F8E5M2 != 0 {
				d = tile.E5M2
			}
			for i, b := range src {
				s := scales[0]
				if perRow {
					s = scales[i/cols]
				}
				want := tile.DecodeFloat8(d, b) * s
				got := math.Float32frombits(binary.LittleEndian.Uint32(dst[4*i:]))
				if want != want {
					if got == got {
						t.Fatalf("%dx%d flags %d: dst[%d] = %v, want NaN (code %#x)", rows, cols, flags, i, got, b)
					}
					continue
				}
				if math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("%dx%d flags %d: dst[%d] = %v, want %v (code %#x, scale %v)", rows, cols, flags, i, got, want, b, s)
				}
			}
			for i := 4 * n; i < len(dst); i++ {
				if dst[i] != 0xa5 {
					t.Fatalf("%dx%d flags %d: dst byte %d written past the tensor", rows, cols, flags, i)
				}
			}
		}
	}
}
