package sm86

import (
	"fmt"
	"math"

	"github.com/tcrt-go/tcrt/tile"
)

// SGDequant is one dequantisation (fallback.DequantizeArgs' meaning) over
// device memory: Q (QType E4M3 or E5M2) and Y (YType F32, F16 or BF16) are
// dense row-major Rows × Cols; Inv holds one scale per block of BlockRows ×
// BlockCols (float32, or E8M0 bytes with MX), block-row-major; Inv 0 means
// scale 1 (one block only). Slot is an 8-byte fault slot the caller zeroes
// first: after the launches it holds ^block of the first float scale that
// is not positive and finite (SGFault), Y untouched.
type SGDequant struct {
	Slot, Q, Y, Inv                  uint64
	QType, YType                     tile.DType
	Rows, Cols, BlockRows, BlockCols int
	MX                               bool
}

// DequantSupports reports whether PlanDequant covers a: nil, or an error
// wrapping ErrSGUnsupported naming the rule. Covered: E4M3 and E5M2 to F32,
// F16 and BF16; any block shape (per tensor, row, column, 1×128, 128×128,
// MX with E8M0 scales); fewer than 2^31 elements.
func DequantSupports(a SGDequant) error {
	if a.QType != tile.E4M3 && a.QType != tile.E5M2 {
		return unsupported("dequantise from %v", a.QType)
	}
	if a.YType != tile.F32 && a.YType != tile.F16 && a.YType != tile.BF16 {
		return unsupported("dequantise to %v", a.YType)
	}
	if a.Rows < 1 || a.Cols < 1 || a.BlockRows < 1 || a.BlockCols < 1 || a.Rows*a.Cols >= SGLimit {
		return unsupported("dequantise %d × %d in blocks of %d × %d", a.Rows, a.Cols, a.BlockRows, a.BlockCols)
	}
	if a.Inv == 0 && (a.MX || a.BlockRows < a.Rows || a.BlockCols < a.Cols) {
		return unsupported("no scales for more than one block")
	}
	return nil
}

// PlanDequant returns the launches of dequantisation a: the float scale
// check (when there are float scales), then the conversion.
func PlanDequant(a SGDequant) ([]Launch, error) {
	if err := DequantSupports(a); err != nil {
		return nil, err
	}
	sr, sc := (a.Rows+a.BlockRows-1)/a.BlockRows, (a.Cols+a.BlockCols-1)/a.BlockCols
	var out []Launch
	if a.Inv != 0 && !a.MX {
		out = append(out, Launch{Func: "tcrt_sass_f8_checkscale", Grid: [3]int{laneGrid(sr * sc), 1, 1}, Block: [3]int{SGBlock, 1, 1},
			Params: []uint64{a.Slot, a.Inv, uint64(sr * sc), 1, 0, 0, math.MaxUint32}})
	}
	nan := func(bits uint32) uint64 {
		f := math.Float32frombits(bits)
		switch a.YType {
		case tile.F16:
			return uint64(tile.F32ToF16(f))
		case tile.BF16:
			return uint64(tile.F32ToBF16(f))
		}
		return uint64(bits)
	}
	n := a.Rows * a.Cols
	magic, shift := DivMagic(uint32(a.Cols))
	brm, brs := DivMagic(uint32(a.BlockRows))
	bcm, bcs := DivMagic(uint32(a.BlockCols))
	out = append(out, Launch{Func: DequantName(a.QType, a.YType, a.MX), Grid: [3]int{laneGrid((n + DequantPerThread - 1) / DequantPerThread), 1, 1}, Block: [3]int{SGBlock, 1, 1},
		Params: []uint64{a.Slot, a.Y, a.Q, a.Inv, uint64(n), uint64(a.Cols), uint64(magic), uint64(shift),
			uint64(uint32(-a.Cols)), uint64(brm), uint64(brs), uint64(bcm), uint64(bcs), uint64(sc),
			uint64(math.Float32bits(1)), nan(0x7fc00000), nan(0xffc00000)}})
	return out, nil
}

// DequantPerThread is how many elements a dequantiser thread converts:
// its code loads are issued together, so each thread keeps that many bytes
// in flight (see MemoryEstimates).
const DequantPerThread = 4

func DequantName(q, y tile.DType, mx bool) string {
	n := fmt.Sprintf("tcrt_sass_dequant_%v_%v", q, y)
	if mx {
		n += "_mx"
	}
	return n
}
