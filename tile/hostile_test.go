package tile

import (
	"math"
	"testing"
)

// TestHostileHelpers: the contract's helpers and the descriptors' methods
// outside their preconditions (no positions, a zero transfer size, a base
// outside memory, strides of another rank, a pad over storage shorter than
// the tile or with a valid region outside it, empty scale grids, a nil
// *ArgError) return the documented zero answers instead of panicking or
// writing.
func TestHostileHelpers(t *testing.T) {
	for _, n := range []int{0, -1, math.MinInt} {
		for p := range numOOB {
			if pos, ok := ResolveIndex(3, true, n, p); ok || pos != 0 {
				t.Errorf("ResolveIndex(3, n %d, %v) = %d, %v; want 0, false", n, p, pos, ok)
			}
			if pos, ok := ResolveIndex(3, false, n, p); ok || pos != 0 {
				t.Errorf("ResolveIndex(3 unsigned, n %d, %v) = %d, %v; want 0, false", n, p, pos, ok)
			}
		}
	}
	for _, c := range []struct{ base, limit, size int }{
		{0, 64, 0}, {0, 64, -4}, {-8, 64, 4}, {72, 64, 4}, {math.MinInt, math.MaxInt, 1},
	} {
		for _, signed := range []bool{false, true} {
			if addr, f := ResolveDisplacement(c.base, 8, signed, c.limit, c.size); f != DispOutside || addr != 0 {
				t.Errorf("ResolveDisplacement(base %d, limit %d, size %d, signed %v) = %d, %v; want 0, DispOutside", c.base, c.limit, c.size, signed, addr, f)
			}
		}
	}
	for _, tt := range []Tensor{
		{DType: F32, Shape: []int{2, 3}, Strides: []int{3}},
		{DType: F32, Shape: []int{2}, Strides: []int{1, 1, 1}},
		{DType: F32, Shape: nil, Strides: []int{4}},
	} {
		for _, i := range []int{-1, 0, 1, 2, 3, 64} {
			want := 0
			if i >= 0 && i < len(tt.Strides) {
				want = tt.Strides[i]
			}
			if got := tt.Stride(i); got != want {
				t.Errorf("%+v.Stride(%d) = %d; want %d", tt, i, got, want)
			}
		}
		if tt.Contiguous() {
			t.Errorf("%+v.Contiguous() = true for strides of another rank", tt)
		}
		_ = tt.Span()
		if err := tt.Validate("probe", "t"); err == nil && len(tt.Shape) != len(tt.Strides) {
			t.Errorf("%+v.Validate: nil for strides of another rank", tt)
		}
	}
	if got := NewTensor(F32, 2, 3).Stride(2); got != 0 {
		t.Errorf("row-major Stride(2) of a rank-2 tensor = %d; want 0", got)
	}
	for g := range numGranularities + 1 {
		for _, d := range [][2]int{{0, 32}, {32, 0}, {0, 0}, {-1, 8}, {8, math.MinInt}, {math.MaxInt, 1}} {
			sr, sc := g.ScaleGrid(d[0], d[1])
			if d[0] == 0 && sr != 0 || d[1] == 0 && sc != 0 {
				t.Errorf("%v.ScaleGrid(%d, %d) = %d × %d; want 0 for the empty dimension", g, d[0], d[1], sr, sc)
			}
		}
	}
	pad := Pad{Kind: PadZero}
	for _, tl := range []Tile{
		{DType: U8, ValidRows: 1, ValidCols: 2, Rows: 4, Cols: 4},                                // 16 bytes over 8
		{DType: U8, ValidRows: 3, ValidCols: 9, Rows: 2, Cols: 4},                                // valid outside physical
		{DType: U8, ValidRows: -1, ValidCols: 2, Rows: 2, Cols: 4},                               // negative
		{DType: U8, ValidRows: 0, ValidCols: -1, Rows: math.MaxInt, Cols: math.MinInt},           // overflow
		{DType: F32, ValidRows: 1, ValidCols: 1, Rows: 1 << 62, Cols: 1 << 62, Layout: ColMajor}, // huge
	} {
		tl.Pad = pad
		data := []byte{1, 2, 3, 4, 5, 6, 7, 8}
		FillPad(tl, data)
		if string(data) != "\x01\x02\x03\x04\x05\x06\x07\x08" {
			t.Errorf("FillPad(%+v) wrote %v into 8 bytes it does not describe", tl, data)
		}
	}
	var e *ArgError
	if e.Error() != "<nil>" || e.Unwrap() != nil {
		t.Errorf("nil *ArgError: %q, %v", e.Error(), e.Unwrap())
	}
}
