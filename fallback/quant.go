package fallback

import (
	"math"
	"unsafe"

	"github.com/tcrt-go/tcrt/tile"
)

// Granularity is how a float8 quantisation shares scales (defined in
// package tile).
type Granularity = tile.Granularity

// Granularities.
const (
	PerTensor    = tile.PerTensor
	PerRow       = tile.PerRow
	PerColumn    = tile.PerColumn
	Block1x128   = tile.Block1x128
	Block128x128 = tile.Block128x128
	MX           = tile.MX
)

// MXBlock is the OCP MX block size.
const MXBlock = tile.MXBlock

// ScaleFromAmax is the current-scaling rule (Transformer Engine's): the
// scale multiplies values before encoding,
//
//	scale = (fmax / amax) / 2^margin         (float32 arithmetic)
//
// where fmax is the format's largest finite value. An amax that is 0, NaN or
// Inf gives scale 1; the result is clamped into [tile.MinScale,
// tile.MaxScale] = [2^-126, 2^126] (tile.ClampScale), so that it and its
// inverse are both normal and finite. With pow2 the scale is rounded down to
// a power of two (so that scaling is exact; the bounds are powers of two).
func ScaleFromAmax(amax, fmax float32, margin int, pow2 bool) float32 {
	if !(amax > 0) || amax > math.MaxFloat32 {
		return 1
	}
	s := fmax / amax
	if margin >= 0 && margin <= 126 {
		s /= math.Float32frombits(uint32(127+margin) << 23) // exact 2^margin
	} else {
		s = float32(float64(s) / math.Ldexp(1, margin))
	}
	if !(s <= tile.MaxScale) { // +Inf included
		s = tile.MaxScale
	}
	if s < tile.MinScale {
		s = tile.MinScale
	}
	if pow2 {
		s = math.Float32frombits(math.Float32bits(s) & 0xff800000)
	}
	return s
}

// MXScale is the OCP MX rule (OCP Microscaling Formats v1.0, §6.3): for a
// block whose largest magnitude is amax, the shared scale is
//
//	X = 2^(⌊log2 amax⌋ − emax)
//
// with emax the exponent of the element format's largest normal (8 for
// E4M3, 15 for E5M2), and the elements are encoded from x/X. The exponent
// is clamped to E8M0's range [−127, 127]; a zero block (amax 0, or amax
// below 2^-126) gets the smallest scale 2^-127. It returns the E8M0 byte
// (exponent + 127) and the multiplier 1/X, which is exact. A NaN or Inf amax
// gives the NaN scale 0xFF and a NaN multiplier.
func MXScale(amax float32, emax int) (e8m0 uint8, mul float32) {
	bits := math.Float32bits(amax) & 0x7fffffff
	if bits >= 0x7f800000 {
		return 0xFF, float32(math.NaN())
	}
	e := -127
	if bits>>23 != 0 {
		e = max(-127, int(bits>>23)-127-emax)
	}
	e = min(e, 127)
	if e > 126 { // only for emax < 1
		return uint8(e + 127), float32(math.Ldexp(1, -e))
	}
	return uint8(e + 127), math.Float32frombits(uint32(127-e) << 23) // 2^-e, normal
}

// E8M0ToF32 returns the value of an E8M0 scale byte, 2^(b−127) (0xFF: NaN).
func E8M0ToF32(b uint8) float32 {
	if b == 0xFF {
		return float32(math.NaN())
	}
	return float32(math.Ldexp(1, int(b)-127))
}

// QuantizeArgs is one quantisation on host memory. X is Rows×Cols elements
// of XType (f32, f16 or bf16), row-major; Q receives the same count of
// QType (E4M3 or E5M2) bytes.
//
// Each block b gets a scale s_b, either Scales[b] (given; block-row-major
// over the ScaleGrid) or computed from the block's amax (ScaleFromAmax with
// Margin and PowerOfTwo; MXScale for MX, where Scales must be nil), and
//
//	Q[i] = encode(float32(X[i]) · s_b, Mode)
//
// with the product rounded to float32. ScaleInv, if not nil, receives one
// value per block: the float32 1/s_b (4 bytes each), or for MX the E8M0
// byte. Amax, if not nil, receives the float32 max |X| over the whole input
// (4 bytes; NaN if any element is NaN).
type QuantizeArgs struct {
	Rows, Cols int
	XType      tile.DType
	X          []byte
	QType      tile.DType
	Q          []byte
	Gran       Granularity
	Mode       tile.OverflowMode
	Scales     []float32
	Margin     int
	PowerOfTwo bool
	ScaleInv   []byte
	Amax       []byte
	// Threads bounds the goroutines used; 0 means GOMAXPROCS.
	Threads int
}

// DequantizeArgs is one dequantisation on host memory:
//
//	Y[i] = store(decode(Q[i]) · inv_b)
//
// with the product in float32 and one rounding to YType (f32, f16 or
// bf16). An MX block whose scale is NaN (0xFF) decodes to the canonical
// quiet NaN throughout. ScaleInv holds one value per block (float32, or E8M0 bytes for MX);
// nil means 1 (per-tensor only).
type DequantizeArgs struct {
	Rows, Cols int
	QType      tile.DType
	Q          []byte
	YType      tile.DType
	Y          []byte
	Gran       Granularity
	ScaleInv   []byte
	Threads    int
}

// AmaxArgs is an amax reduction: Out (float32, 4 bytes per block of Gran's
// ScaleGrid) receives max |X| over each block, NaN if the block holds a NaN.
type AmaxArgs struct {
	Rows, Cols int
	XType      tile.DType
	X          []byte
	Gran       Granularity
	Out        []byte
	Threads    int
}

// CheckScales returns an error wrapping tile.ErrArgument naming arg if a
// scale fails tile.ValidScale: zero, negative, NaN, Inf, or outside
// [2^-126, 2^126] (where it or its inverse is not normal and finite). Kernels call it before writing
// anything, as scale values are data that only a kernel can see.
func CheckScales(op, arg string, s []float32) error {
	for i, v := range s {
		if !tile.ValidScale(v) {
			return tile.Errorf(tile.ErrArgument, op, arg, "scale %d is %v; scales must lie in [2^-126, 2^126] (positive, with a normal finite inverse)", i, v)
		}
	}
	return nil
}

// F32s views b as float32s (len(b)/4 of them).
func F32s(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func u16s(b []byte) []uint16 {
	if len(b) < 2 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), len(b)/2)
}

// QuantizeRef is the reference quantiser: plain loops over blocks and
// elements, tile.EncodeFloat8Ref for every value. It returns an error (and
// writes nothing) if a given scale is not positive and finite.
func QuantizeRef(a *QuantizeArgs) error {
	if a.Scales != nil {
		if err := CheckScales("quantize", "Scales", a.Scales); err != nil {
			return err
		}
	}
	br, bc := a.Gran.Block(a.Rows, a.Cols)
	sr, sc := a.Gran.ScaleGrid(a.Rows, a.Cols)
	emax := tile.Float8EMax(a.QType)
	fmax := tile.Float8Max(a.QType)
	scale := make([]float32, sr*sc)
	e8 := make([]uint8, sr*sc)
	total := float32(0)
	for bi := 0; bi < sr; bi++ {
		for bj := 0; bj < sc; bj++ {
			amax := float32(0)
			for i := bi * br; i < min(a.Rows, (bi+1)*br); i++ {
				for j := bj * bc; j < min(a.Cols, (bj+1)*bc); j++ {
					amax = nanMax(amax, loadF32(a.XType, a.X, i*a.Cols+j))
				}
			}
			total = nanMax(total, amax)
			b := bi*sc + bj
			switch {
			case a.Gran == MX:
				e8[b], scale[b] = MXScale(amax, emax)
			case a.Scales != nil:
				scale[b] = a.Scales[b]
			default:
				scale[b] = ScaleFromAmax(amax, fmax, a.Margin, a.PowerOfTwo)
			}
		}
	}
	for i := 0; i < a.Rows; i++ {
		for j := 0; j < a.Cols; j++ {
			s := scale[(i/br)*sc+j/bc]
			x := loadF32(a.XType, a.X, i*a.Cols+j)
			a.Q[i*a.Cols+j] = tile.EncodeFloat8Ref(a.QType, x*s, a.Mode)
		}
	}
	if a.ScaleInv != nil {
		if a.Gran == MX {
			copy(a.ScaleInv, e8)
		} else {
			inv := F32s(a.ScaleInv)
			for b, s := range scale {
				inv[b] = 1 / s
			}
		}
	}
	if a.Amax != nil {
		F32s(a.Amax)[0] = total
	}
	return nil
}

// DequantizeRef is the reference dequantiser. It returns an error (and
// writes nothing) if a float32 inverse scale is not positive and finite.
func DequantizeRef(a *DequantizeArgs) error {
	br, bc := a.Gran.Block(a.Rows, a.Cols)
	_, sc := a.Gran.ScaleGrid(a.Rows, a.Cols)
	inv := func(b int) float32 { return 1 }
	if a.ScaleInv != nil {
		if a.Gran == MX {
			inv = func(b int) float32 { return E8M0ToF32(a.ScaleInv[b]) }
		} else {
			s := F32s(a.ScaleInv)
			if err := CheckScales("dequantize", "ScaleInv", s); err != nil {
				return err
			}
			inv = func(b int) float32 { return s[b] }
		}
	}
	for i := 0; i < a.Rows; i++ {
		for j := 0; j < a.Cols; j++ {
			s := inv((i/br)*sc + j/bc)
			v := tile.DecodeFloat8Ref(a.QType, a.Q[i*a.Cols+j]) * s
			if s != s { // an MX NaN scale makes the block NaN
				v = math.Float32frombits(0x7fc00000)
			}
			storeF32(a.YType, a.Y, i*a.Cols+j, v)
		}
	}
	return nil
}

// AmaxRef is the reference amax reduction.
func AmaxRef(a *AmaxArgs) {
	br, bc := a.Gran.Block(a.Rows, a.Cols)
	sr, sc := a.Gran.ScaleGrid(a.Rows, a.Cols)
	out := F32s(a.Out)
	for bi := 0; bi < sr; bi++ {
		for bj := 0; bj < sc; bj++ {
			amax := float32(0)
			for i := bi * br; i < min(a.Rows, (bi+1)*br); i++ {
				for j := bj * bc; j < min(a.Cols, (bj+1)*bc); j++ {
					amax = nanMax(amax, loadF32(a.XType, a.X, i*a.Cols+j))
				}
			}
			out[bi*sc+bj] = amax
		}
	}
}

// nanMax returns max(acc, |v|), or the canonical quiet NaN once either is
// NaN.
func nanMax(acc, v float32) float32 {
	v = float32(math.Abs(float64(v)))
	if acc != acc || v != v {
		return math.Float32frombits(0x7fc00000)
	}
	return max(acc, v)
}
