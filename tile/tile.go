package tile

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// Layout is the order in which a tile's physical elements are stored.
type Layout uint8

// Layouts.
const (
	// RowMajor stores element (r, c) at r·Cols + c (the default, "NORM").
	RowMajor Layout = iota
	// ColMajor stores element (r, c) at c·Rows + r.
	ColMajor
	numLayouts
)

// String names the layout.
func (l Layout) String() string {
	switch l {
	case RowMajor:
		return "row-major"
	case ColMajor:
		return "col-major"
	}
	return "layout(?)"
}

// Valid reports whether l is a defined layout.
func (l Layout) Valid() bool { return l < numLayouts }

// PadKind says how a tile's non-valid physical elements are defined.
type PadKind uint8

// Pad kinds.
const (
	// PadNull leaves the non-valid region undefined; tcrt's backends leave
	// those bytes as they were.
	PadNull PadKind = iota
	// PadZero fills with all-zero bits (+0 for floats).
	PadZero
	// PadMax fills with the element type's largest value: +Inf for the
	// floats that have one (f64, f32, f16, bf16, e5m2), the largest finite
	// value for e4m3 (448), the largest integer for integers.
	PadMax
	// PadMin fills with the smallest value: −Inf, −448 for e4m3, the
	// smallest integer (0 for unsigned types).
	PadMin
	// PadBits fills with an explicit bit pattern (Pad.Bits), which must fit
	// the element width.
	PadBits
	numPadKinds
)

// String names the pad kind.
func (k PadKind) String() string {
	switch k {
	case PadNull:
		return "null"
	case PadZero:
		return "zero"
	case PadMax:
		return "max"
	case PadMin:
		return "min"
	case PadBits:
		return "bits"
	}
	return "pad(?)"
}

// Pad is a tile's pad value. The zero value is PadNull.
type Pad struct {
	Kind PadKind
	// Bits is the raw element pattern when Kind is PadBits.
	Bits uint64
}

// Predefined pad values.
var (
	PadNullValue = Pad{Kind: PadNull}
	PadZeroValue = Pad{Kind: PadZero}
	PadMaxValue  = Pad{Kind: PadMax}
	PadMinValue  = Pad{Kind: PadMin}
)

// PadValue returns an explicit bit-pattern pad.
func PadValue(bits uint64) Pad { return Pad{Kind: PadBits, Bits: bits} }

// Tile describes a two-dimensional tile: its element type, the valid region
// (ValidRows × ValidCols, the elements an op reads or writes) inside the
// physical region (Rows × Cols, the elements stored), the pad value of the
// rest, and the layout.
//
// Rows and Cols may be left 0, meaning ValidRows and ValidCols; ValidRows may
// be left 0, meaning 1 (the contract's defaults). ValidCols is required.
type Tile struct {
	DType                DType
	ValidRows, ValidCols int
	Rows, Cols           int
	Pad                  Pad
	Layout               Layout
}

// Dense returns a row-major tile whose valid region is the whole physical
// region of rows × cols elements, with a Null pad.
func Dense(d DType, rows, cols int) Tile {
	return Tile{DType: d, ValidRows: rows, ValidCols: cols, Rows: rows, Cols: cols}
}

// Resolved returns t with its defaults filled in: ValidRows 0 becomes 1, Rows
// 0 becomes ValidRows and Cols 0 becomes ValidCols. Negative values are kept
// so the legality check can report them.
func (t Tile) Resolved() Tile {
	if t.ValidRows == 0 {
		t.ValidRows = 1
	}
	if t.Rows == 0 {
		t.Rows = t.ValidRows
	}
	if t.Cols == 0 {
		t.Cols = t.ValidCols
	}
	return t
}

// Elements is the number of physical elements, Rows·Cols (after defaults).
func (t Tile) Elements() int {
	r := t.Resolved()
	return r.Rows * r.Cols
}

// ValidElements is ValidRows·ValidCols (after defaults).
func (t Tile) ValidElements() int {
	r := t.Resolved()
	return r.ValidRows * r.ValidCols
}

// Bytes is the storage size of the physical tile.
func (t Tile) Bytes() int { return t.Elements() * t.DType.Size() }

// At returns the physical element number of (r, c) in t's layout. t must be
// resolved.
func (t Tile) At(r, c int) int {
	if t.Layout == ColMajor {
		return c*t.Rows + r
	}
	return r*t.Cols + c
}

// IsValid reports whether physical element (r, c) is in the valid region.
func (t Tile) IsValid(r, c int) bool { return r < t.ValidRows && c < t.ValidCols }

// PadPattern returns the raw bits the pad value gives elements of type d,
// and false for PadNull (nothing is written). It does not check that
// explicit bits fit the width; the legality check does.
func (p Pad) PadPattern(d DType) (uint64, bool) {
	switch p.Kind {
	case PadZero:
		return 0, true
	case PadBits:
		return p.Bits, true
	case PadMax:
		return extremeBits(d, true), true
	case PadMin:
		return extremeBits(d, false), true
	}
	return 0, false
}

// extremeBits is the raw pattern of d's largest (max) or smallest value.
func extremeBits(d DType, max bool) uint64 {
	var b uint64
	switch d {
	case F64:
		b = math.Float64bits(math.Inf(1))
	case F32:
		b = uint64(math.Float32bits(float32(math.Inf(1))))
	case F16:
		b = 0x7c00
	case BF16:
		b = 0x7f80
	case E5M2:
		b = 0x7c
	case E4M3:
		b = 0x7e // 448, the largest finite value
	default:
		if !d.IsInteger() || d.IsPacked() {
			return 0
		}
		w := uint(d.Bits())
		mask := uint64(math.MaxUint64) >> (64 - w)
		switch {
		case d.IsSigned() && max:
			return mask >> 1
		case d.IsSigned():
			return (mask >> 1) + 1 // the sign bit alone
		case max:
			return mask
		default:
			return 0
		}
	}
	if !max { // floats: set the sign bit
		b |= 1 << (d.Bits() - 1)
	}
	return b
}

// FillPad writes the pad value into every physical element of data (the
// tile's storage, t.Bytes() long) outside the valid region. A Null pad
// writes nothing. t must be resolved and of a byte-sized element type; a
// tile that is not (a valid region outside the physical one, negative
// dimensions, data shorter than t.Bytes()) writes nothing either.
func FillPad(t Tile, data []byte) {
	pat, ok := t.Pad.PadPattern(t.DType)
	if !ok || (t.ValidRows == t.Rows && t.ValidCols == t.Cols) {
		return
	}
	n, okN := MulSize(t.Rows, t.Cols)
	if okN {
		n, okN = ByteSize(t.DType, n)
	}
	if !okN || t.DType.Size() == 0 || n > len(data) || t.ValidRows < 0 || t.ValidCols < 0 || t.ValidRows > t.Rows || t.ValidCols > t.Cols {
		return
	}
	sz := t.DType.Size()
	var one [8]byte
	binary.LittleEndian.PutUint64(one[:], pat)
	run := func(start, n int) { // n consecutive physical elements from start
		b := data[start*sz : (start+n)*sz]
		for i := 0; i < len(b); i += sz {
			copy(b[i:i+sz], one[:sz])
		}
	}
	if t.Layout == ColMajor {
		for c := 0; c < t.Cols; c++ {
			if c >= t.ValidCols {
				run(c*t.Rows, t.Rows)
			} else if t.ValidRows < t.Rows {
				run(c*t.Rows+t.ValidRows, t.Rows-t.ValidRows)
			}
		}
		return
	}
	for r := 0; r < t.Rows; r++ {
		if r >= t.ValidRows {
			run(r*t.Cols, t.Cols)
		} else if t.ValidCols < t.Cols {
			run(r*t.Cols+t.ValidCols, t.Cols-t.ValidCols)
		}
	}
}

// isPow2 reports whether n is a positive power of two.
func isPow2(n int) bool { return n > 0 && bits.OnesCount(uint(n)) == 1 }
