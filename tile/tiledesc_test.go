package tile

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestCheckTileRules(t *testing.T) {
	c := Contract{Op: "op", Pow2: true}
	good := Tile{DType: F32, ValidRows: 3, ValidCols: 5, Rows: 4, Cols: 8, Pad: PadValue(7)}
	if r, err := c.CheckTile("dst", good); err != nil || r.Rows != 4 {
		t.Fatalf("good tile: %v %+v", err, r)
	}
	cases := []struct {
		name string
		mut  func(*Tile)
		kind error
	}{
		{"invalid dtype", func(t *Tile) { t.DType = Invalid }, ErrDType},
		{"packed", func(t *Tile) { t.DType = S4 }, ErrDType},
		{"zero cols", func(t *Tile) { t.ValidCols = 0 }, ErrShape},
		{"zero rows", func(t *Tile) { t.ValidRows = 0 }, ErrShape},
		{"negative phys", func(t *Tile) { t.Rows = -4 }, ErrShape},
		{"too small", func(t *Tile) { t.Cols = 4 }, ErrShape},
		{"not pow2", func(t *Tile) { t.Rows = 3 }, ErrShape},
		{"layout", func(t *Tile) { t.Layout = 9 }, ErrArgument},
		{"pad kind", func(t *Tile) { t.Pad.Kind = 42 }, ErrArgument},
		{"pad bits", func(t *Tile) { t.DType = U8; t.Pad = PadValue(0x100) }, ErrArgument},
	}
	for _, tc := range cases {
		bad := good
		tc.mut(&bad)
		_, err := c.CheckTile("dst", bad)
		if !errors.Is(err, ErrTileLegality) || !errors.Is(err, tc.kind) {
			t.Errorf("%s: got %v, want legality + %v", tc.name, err, tc.kind)
			continue
		}
		var ae *ArgError
		if !errors.As(err, &ae) || ae.Arg != "dst" || ae.Op != "op" || !strings.Contains(err.Error(), "argument dst") {
			t.Errorf("%s: error %v does not name the argument", tc.name, err)
		}
	}
	// Defaults: physical = valid; without Pow2 any size is fine.
	r, err := Contract{Op: "op"}.CheckTile("x", Tile{DType: U8, ValidRows: 3, ValidCols: 7})
	if err != nil || r.Rows != 3 || r.Cols != 7 {
		t.Fatalf("defaults: %v %+v", err, r)
	}
}

func TestResolveIndex(t *testing.T) {
	neg := func(v int64) uint64 { return uint64(v) }
	cases := []struct {
		raw    uint64
		signed bool
		p      OOB
		pos    int
		ok     bool
	}{
		{3, true, OOBError, 3, true},
		{neg(-1), true, OOBError, 0, false},
		{neg(-1), true, OOBClamp, 0, true},
		{neg(-1), true, OOBWrap, 9, true},
		{neg(-21), true, OOBWrap, 9, true},
		{10, true, OOBWrap, 0, true},
		{10, true, OOBClamp, 9, true},
		{10, true, OOBZero, 0, false},
		{math.MaxUint64, false, OOBClamp, 9, true},
		{math.MaxUint64, false, OOBWrap, int(uint64(math.MaxUint64) % 10), true},
		{math.MaxUint64, false, OOBSkip, 0, false},
		{9, false, OOBError, 9, true},
	}
	for _, c := range cases {
		pos, ok := ResolveIndex(c.raw, c.signed, 10, c.p)
		if ok != c.ok || (ok && pos != c.pos) {
			t.Errorf("ResolveIndex(%#x, %v, 10, %v) = %d, %v; want %d, %v", c.raw, c.signed, c.p, pos, ok, c.pos, c.ok)
		}
	}
}

func TestResolveDisplacement(t *testing.T) {
	neg := func(v int64) uint64 { return uint64(v) }
	cases := []struct {
		base   int
		raw    uint64
		signed bool
		addr   int
		f      DisplacementFault
	}{
		{16, neg(-16), true, 0, DispOK},
		{16, neg(-20), true, 0, DispOutside},
		{16, neg(-12), true, 4, DispOK},
		{16, 44, true, 60, DispOK},
		{16, 45, true, 0, DispOutside},
		{16, 2, true, 0, DispMisaligned},
		{0, 60, false, 60, DispOK},
		{0, 64, false, 0, DispOutside},
		{8, math.MaxUint64, false, 0, DispOutside},
		{8, neg(math.MinInt64), true, 0, DispOutside},
		{64, 0, false, 0, DispOutside},
	}
	for _, c := range cases {
		addr, f := ResolveDisplacement(c.base, c.raw, c.signed, 64, 4)
		if f != c.f || (f == DispOK && addr != c.addr) {
			t.Errorf("ResolveDisplacement(%d, %#x, %v) = %d, %v; want %d, %v", c.base, c.raw, c.signed, addr, f, c.addr, c.f)
		}
	}
}

func TestPadPattern(t *testing.T) {
	cases := []struct {
		d        DType
		max, min uint64
	}{
		{F32, 0x7f800000, 0xff800000},
		{F16, 0x7c00, 0xfc00},
		{BF16, 0x7f80, 0xff80},
		{E4M3, 0x7e, 0xfe},
		{E5M2, 0x7c, 0xfc},
		{F64, 0x7ff0000000000000, 0xfff0000000000000},
		{S8, 0x7f, 0x80},
		{U8, 0xff, 0},
		{S32, 0x7fffffff, 0x80000000},
		{U64, math.MaxUint64, 0},
		{S64, math.MaxInt64, 1 << 63},
	}
	for _, c := range cases {
		mx, _ := PadMaxValue.PadPattern(c.d)
		mn, _ := PadMinValue.PadPattern(c.d)
		if mx != c.max || mn != c.min {
			t.Errorf("%v: max %#x min %#x, want %#x %#x", c.d, mx, mn, c.max, c.min)
		}
	}
	if _, ok := PadNullValue.PadPattern(F32); ok {
		t.Error("null pad writes")
	}
	if ToFloat32(E4M3, 0x7e) != 448 {
		t.Error("e4m3 max is not 448")
	}
}

func TestFillPad(t *testing.T) {
	for _, lay := range []Layout{RowMajor, ColMajor} {
		tl := Tile{DType: U16, ValidRows: 2, ValidCols: 3, Rows: 4, Cols: 5, Layout: lay, Pad: PadValue(0xbeef)}
		data := make([]byte, tl.Bytes())
		FillPad(tl, data)
		for r := 0; r < 4; r++ {
			for c := 0; c < 5; c++ {
				i := tl.At(r, c)
				v := uint16(data[2*i]) | uint16(data[2*i+1])<<8
				want := uint16(0xbeef)
				if tl.IsValid(r, c) {
					want = 0
				}
				if v != want {
					t.Errorf("%v (%d,%d) = %#x, want %#x", lay, r, c, v, want)
				}
			}
		}
	}
}
