package tile

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestDTypeTable(t *testing.T) {
	want := map[DType]struct {
		name string
		size int
	}{F32: {"f32", 4}, F16: {"f16", 2}, BF16: {"bf16", 2}, E4M3: {"e4m3", 1}, E5M2: {"e5m2", 1},
		F64: {"f64", 8}, S8: {"s8", 1}, U8: {"u8", 1}, S32: {"s32", 4}, U32: {"u32", 4}, S64: {"s64", 8}, U64: {"u64", 8}}
	for d, w := range want {
		if d.String() != w.name || d.Size() != w.size {
			t.Errorf("%v: name %q size %d, want %q %d", uint8(d), d.String(), d.Size(), w.name, w.size)
		}
		p, err := ParseDType(w.name)
		if err != nil || p != d {
			t.Errorf("ParseDType(%q) = %v, %v", w.name, p, err)
		}
	}
	if !S4.IsPacked() || S4.Bits() != 4 || F32.IsPacked() {
		t.Error("packed types")
	}
	if _, err := ParseDType("f8"); !errors.Is(err, ErrDType) {
		t.Errorf("ParseDType(f8): %v", err)
	}
	if Invalid.Valid() || DType(200).Valid() || DType(200).String() != "dtype(200)" {
		t.Error("invalid dtypes")
	}
}

// bf16Ref rounds to nearest even through float64 arithmetic.
func bf16Ref(f float32) uint16 {
	if f != f {
		return uint16(math.Float32bits(f)>>16) | 0x40
	}
	u := math.Float32bits(f)
	lo := u &^ 0xffff
	hi := lo + 0x10000
	a, b := float64(math.Float32frombits(lo)), float64(math.Float32frombits(hi))
	if math.IsInf(b, 0) { // the next bf16 step past the largest finite value is 2^128
		b = math.Copysign(math.Ldexp(1, 128), b)
	}
	x := float64(f)
	if math.IsInf(x, 0) {
		return uint16(u >> 16)
	}
	switch {
	case math.Abs(x-a) < math.Abs(b-x):
		return uint16(lo >> 16)
	case math.Abs(x-a) > math.Abs(b-x):
		return uint16(hi >> 16)
	}
	if (lo>>16)&1 == 0 {
		return uint16(lo >> 16)
	}
	return uint16(hi >> 16)
}

func TestBF16RoundToNearestEven(t *testing.T) {
	step := uint32(1)
	if testing.Short() {
		step = 251
	}
	for u := uint64(0); u < 1<<32; u += uint64(step) * 97 {
		f := math.Float32frombits(uint32(u))
		if math.Float32bits(f)&0x7f800000 == 0x7f800000 && math.Float32bits(f)&0x7fffff == 0 {
			continue // ±Inf handled below
		}
		if got, want := F32ToBF16(f), bf16Ref(f); got != want && !(f != f) {
			t.Fatalf("F32ToBF16(%#08x) = %#04x, want %#04x", uint32(u), got, want)
		}
	}
	for _, c := range []struct {
		in   uint32
		want uint16
	}{{0x3f808000, 0x3f80}, {0x3f818000, 0x3f82}, {0x3f808001, 0x3f81}, {0x7f7fffff, 0x7f80}, {0xff800000, 0xff80}, {0x7fc00001, 0x7fc0}, {0x7f800001, 0x7fc0}} {
		if got := F32ToBF16(math.Float32frombits(c.in)); got != c.want {
			t.Errorf("F32ToBF16(%#08x) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
	for b := 0; b < 1<<16; b++ {
		f := BF16ToF32(uint16(b))
		if f == f && F32ToBF16(f) != uint16(b) {
			t.Fatalf("bf16 %#04x does not round-trip", b)
		}
	}
}

func TestF16RoundTrip(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := F16ToF32(uint16(h))
		if f == f && F32ToF16(f) != uint16(h) {
			t.Fatalf("f16 %#04x does not round-trip", h)
		}
	}
	if F32ToF16(65520) != 0x7c00 || F32ToF16(65519) != 0x7bff {
		t.Error("f16 overflow rounding")
	}
}

func TestIntegerConversions(t *testing.T) {
	cases := []struct {
		d    DType
		in   float32
		want uint64
	}{{S8, 200, 127}, {S8, -200, 0x80}, {U8, -3, 0}, {U8, 2.5, 2}, {S32, -1, 0xffffffff}, {U32, 3.5, 4}, {S64, -2, math.MaxUint64 - 1}, {U64, 1e30, math.MaxUint64}, {S16, float32(math.NaN()), 0}}
	for _, c := range cases {
		if got := FromFloat32(c.d, c.in); got != c.want {
			t.Errorf("FromFloat32(%v, %v) = %#x, want %#x", c.d, c.in, got, c.want)
		}
	}
	if ToFloat32(S8, 0x80) != -128 || ToFloat32(U32, 0xffffffff) != 4294967296 {
		t.Error("ToFloat32 integers")
	}
}

func TestTensorValidate(t *testing.T) {
	ok := Tensor{DType: F32, Shape: []int{2, 3, 4}, Strides: []int{40, 10, 1}}
	if err := ok.Validate("op", "x"); err != nil {
		t.Fatal(err)
	}
	if ok.Span() != 1*40+2*10+3+1 || ok.Contiguous() || ok.NumElements() != 24 {
		t.Fatalf("span %d", ok.Span())
	}
	if !NewTensor(F16, 2, 3).Contiguous() || NewTensor(F16, 2, 3).Span() != 6 {
		t.Fatal("row-major")
	}
	bad := []struct {
		t    Tensor
		want error
		rule string
	}{
		{Tensor{DType: Invalid, Shape: []int{1}}, ErrDType, "element type"},
		{Tensor{DType: F32, Shape: []int{2, 0}}, ErrShape, "dimension 1 is 0"},
		{Tensor{DType: F32, Shape: []int{2, 3}, Strides: []int{2, 1}}, ErrShape, "stride 0 is 2"},
		{Tensor{DType: F32, Shape: []int{2, 3}, Strides: []int{3}}, ErrShape, "1 strides"},
		{Tensor{DType: F32, Shape: []int{2, 3}, Strides: []int{3, -1}}, ErrShape, "positive"},
	}
	for _, b := range bad {
		err := b.t.Validate("op", "x")
		if !errors.Is(err, b.want) || !strings.Contains(err.Error(), b.rule) || !strings.Contains(err.Error(), "argument x") {
			t.Errorf("%+v: %v", b.t, err)
		}
	}
}
