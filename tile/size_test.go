package tile

import (
	"errors"
	"math"
	"testing"
)

func TestSizeHelpers(t *testing.T) {
	const big = math.MaxInt
	for _, c := range []struct {
		name   string
		got    int
		ok     bool
		want   int
		wantOK bool
	}{
		{"mul", val(MulSize(3, 7)), okOf(MulSize(3, 7)), 21, true},
		{"mul 0", val(MulSize(0, big)), okOf(MulSize(0, big)), 0, true},
		{"mul overflow", val(MulSize(1<<32, 1<<31)), okOf(MulSize(1<<32, 1<<31)), 0, false},
		{"mul wraps to small", val(MulSize(4, 1<<62+1)), okOf(MulSize(4, 1<<62+1)), 0, false},
		{"mul negative", val(MulSize(-1, 5)), okOf(MulSize(-1, 5)), 0, false},
		{"add", val(AddSize(big-1, 1)), okOf(AddSize(big-1, 1)), big, true},
		{"add overflow", val(AddSize(big, 1)), okOf(AddSize(big, 1)), 0, false},
		{"add negative", val(AddSize(5, -1)), okOf(AddSize(5, -1)), 0, false},
		{"muladd", val(MulAddSize(6, 7, 8)), okOf(MulAddSize(6, 7, 8)), 50, true},
		{"muladd overflow", val(MulAddSize(big/2, 2, 2)), okOf(MulAddSize(big/2, 2, 2)), 0, false},
		{"product", val(ProductSize(2, 3, 4)), okOf(ProductSize(2, 3, 4)), 24, true},
		{"product empty", val(ProductSize()), okOf(ProductSize()), 1, true},
		{"product overflow", val(ProductSize(1<<20, 1<<20, 1<<20, 1<<20)), okOf(ProductSize(1<<20, 1<<20, 1<<20, 1<<20)), 0, false},
		{"bytes f32", val(ByteSize(F32, 5)), okOf(ByteSize(F32, 5)), 20, true},
		{"bytes packed odd", val(ByteSize(S4, 3)), okOf(ByteSize(S4, 3)), 2, true},
		{"bytes 2^59 f32", val(ByteSize(F32, 1<<59)), okOf(ByteSize(F32, 1<<59)), 0, false},
		{"offset f16", val(ByteOffset(F16, 9)), okOf(ByteOffset(F16, 9)), 18, true},
		{"offset packed odd", val(ByteOffset(S4, 3)), okOf(ByteOffset(S4, 3)), 0, false},
		{"offset huge", val(ByteOffset(F64, big)), okOf(ByteOffset(F64, big)), 0, false},
	} {
		if c.ok != c.wantOK || (c.ok && c.got != c.want) {
			t.Errorf("%s: got (%d, %v), want (%d, %v)", c.name, c.got, c.ok, c.want, c.wantOK)
		}
	}
}

func val(n int, _ bool) int    { return n }
func okOf(_ int, ok bool) bool { return ok }

// TestBlockCountOverflow: a block count times a block length that wraps
// around to the element count must be rejected, not indexed.
func TestBlockCountOverflow(t *testing.T) {
	src := []float32{1, 2, 3, 4}
	dst := []uint8{7, 7, 7, 7}
	scales := []float32{1, 1, 1, 1}
	bl := 1<<62 + 1 // 4·bl wraps to 4
	if err := EncodeF32ToFloat8Blocks(E4M3, dst, src, scales, bl, Saturate); !errors.Is(err, ErrShape) {
		t.Errorf("encode: got %v, want ErrShape", err)
	}
	if dst[0] != 7 {
		t.Error("encode wrote dst")
	}
	if err := DecodeFloat8ToF32Blocks(E4M3, make([]float32, 4), dst, scales, bl); !errors.Is(err, ErrShape) {
		t.Errorf("decode: got %v, want ErrShape", err)
	}
	if err := AbsMaxBlocks(make([]float32, 4), src, bl); !errors.Is(err, ErrShape) {
		t.Errorf("absmax: got %v, want ErrShape", err)
	}
}

// TestTensorValidateOverflow: strides and shapes whose span overflows are
// rejected by Validate.
func TestTensorValidateOverflow(t *testing.T) {
	for _, tt := range []Tensor{
		{DType: F32, Shape: []int{3, 3}, Strides: []int{math.MaxInt / 2, 1}},
		{DType: F32, Shape: []int{3, 1 << 40}, Strides: []int{1 << 62, 1}},
		{DType: F32, Shape: []int{1 << 30, 1 << 30}, Strides: []int{-1, 1}},
	} {
		if err := tt.Validate("test", "x"); !errors.Is(err, ErrShape) {
			t.Errorf("%+v: got %v, want ErrShape", tt, err)
		}
	}
	ok := Tensor{DType: F32, Shape: []int{4, 5}, Strides: []int{8, 1}}
	if s, good := ok.CheckedSpan(); !good || s != ok.Span() || s != 29 {
		t.Errorf("CheckedSpan = %d, %v; Span %d; want 29", s, good, ok.Span())
	}
	if s, good := NewTensor(F32, 3, 4, 5).CheckedSpan(); !good || s != 60 {
		t.Errorf("dense CheckedSpan = %d, %v; want 60", s, good)
	}
}
