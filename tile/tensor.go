package tile

import "math"

// Tensor describes a strided view of elements: its element type, its shape and
// the stride of each dimension in elements. A nil Strides means row-major
// (the last dimension contiguous). Leading dimensions larger than the row are
// expressed as strides.
type Tensor struct {
	DType   DType
	Shape   []int
	Strides []int
}

// NewTensor returns a row-major descriptor.
func NewTensor(d DType, shape ...int) Tensor {
	return Tensor{DType: d, Shape: append([]int(nil), shape...)}
}

// RowMajorStrides returns the strides of a dense row-major tensor of shape.
func RowMajorStrides(shape []int) []int {
	s := make([]int, len(shape))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
	return s
}

// Rank is the number of dimensions.
func (t Tensor) Rank() int { return len(t.Shape) }

// Stride returns the stride of dimension i in elements (0 for an i with no
// stride: outside the shape, or past the end of Strides).
func (t Tensor) Stride(i int) int {
	if t.Strides == nil {
		if i < 0 || i >= len(t.Shape) {
			return 0
		}
		return RowMajorStrides(t.Shape)[i]
	}
	if i < 0 || i >= len(t.Strides) {
		return 0
	}
	return t.Strides[i]
}

// NumElements is the product of the shape (1 for a scalar).
func (t Tensor) NumElements() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Span is the number of elements of storage the view reaches, from element 0
// to the furthest element plus one (0 for an empty tensor).
func (t Tensor) Span() int {
	if t.NumElements() == 0 {
		return 0
	}
	span := 1
	for i, d := range t.Shape {
		span += (d - 1) * t.Stride(i)
	}
	return span
}

// Contiguous reports whether the view is dense row-major (false when
// Strides and Shape differ in length).
func (t Tensor) Contiguous() bool {
	if t.Strides == nil {
		return true
	}
	if len(t.Strides) != len(t.Shape) {
		return false
	}
	rm := RowMajorStrides(t.Shape)
	for i := range rm {
		if t.Shape[i] > 1 && t.Strides[i] != rm[i] {
			return false
		}
	}
	return true
}

// Validate checks the descriptor: a valid element type, positive dimensions,
// strides (if given) of the same rank, positive, and no overlap between rows
// (each stride at least the extent of the dimensions inside it). op and arg
// name the operation and argument in the error.
func (t Tensor) Validate(op, arg string) error {
	if !t.DType.Valid() {
		return Errorf(ErrDType, op, arg, "element type %v is not defined", t.DType)
	}
	total := 1.0
	for i, d := range t.Shape {
		if d <= 0 {
			return Errorf(ErrShape, op, arg, "dimension %d is %d; dimensions must be positive", i, d)
		}
		total *= float64(d)
	}
	if total > math.MaxInt32*float64(1<<16) {
		return Errorf(ErrShape, op, arg, "tensor of %g elements is too large", total)
	}
	if t.Strides == nil {
		return nil
	}
	if len(t.Strides) != len(t.Shape) {
		return Errorf(ErrShape, op, arg, "%d strides for %d dimensions", len(t.Strides), len(t.Shape))
	}
	inner := 1
	for i := len(t.Shape) - 1; i >= 0; i-- {
		s := t.Strides[i]
		if s <= 0 {
			return Errorf(ErrShape, op, arg, "stride %d is %d; strides must be positive", i, s)
		}
		if t.Shape[i] > 1 && s < inner {
			return Errorf(ErrShape, op, arg, "stride %d is %d, smaller than the %d elements of the dimensions inside it", i, s, inner)
		}
		ext, ok := MulSize(s, t.Shape[i])
		if !ok {
			return Errorf(ErrShape, op, arg, "stride %d (%d) times dimension %d overflows", i, s, t.Shape[i])
		}
		inner = max(inner, ext)
	}
	if _, ok := t.CheckedSpan(); !ok {
		return Errorf(ErrShape, op, arg, "the view's span (strides %v over shape %v) overflows", t.Strides, t.Shape)
	}
	return nil
}

// CheckedSpan is Span with overflow checking: ok is false when a dimension
// or stride is negative or the span does not fit in an int.
func (t Tensor) CheckedSpan() (span int, ok bool) {
	n, ok := ProductSize(t.Shape...)
	if !ok {
		return 0, false
	}
	if n == 0 {
		return 0, true
	}
	if t.Strides != nil && len(t.Strides) != len(t.Shape) {
		return 0, false
	}
	span = 1
	stride := 1
	for i := len(t.Shape) - 1; i >= 0; i-- {
		if t.Strides != nil {
			stride = t.Strides[i]
		}
		if span, ok = MulAddSize(t.Shape[i]-1, stride, span); !ok {
			return 0, false
		}
		if t.Strides == nil {
			if stride, ok = MulSize(stride, t.Shape[i]); !ok {
				return 0, false
			}
		}
	}
	return span, true
}
