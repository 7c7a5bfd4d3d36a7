package tile

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tcrt-go/tcrt/internal/longtest"
)

var (
	formats = []DType{E4M3, E5M2}
	modes   = []OverflowMode{Saturate, NonSaturating}
)

func ref(d DType) *fp8Format {
	if d == E5M2 {
		return &fmtE5M2
	}
	return &fmtE4M3
}

// simdLevels returns the simdCap values whose kernels differ on this machine
// and under the CPU feature mask, best first, ending with 0 (portable).
func simdLevels() []int {
	saved := simdCap
	defer func() { simdCap = saved }()
	var caps []int
	seen := map[string]bool{}
	for c := saved; c >= 0; c-- {
		simdCap = c
		if name := Float8SIMD(); !seen[name] {
			seen[name] = true
			caps = append(caps, c)
		}
	}
	return caps
}

// withSIMD runs fn with each vector kernel set this CPU has (AVX-512, AVX2),
// then with the portable code.
func withSIMD(t *testing.T, fn func(t *testing.T)) {
	saved := simdCap
	defer func() { simdCap = saved }()
	for _, c := range simdLevels() {
		simdCap = c
		name := Float8SIMD()
		if name == "" {
			name = "portable"
		}
		t.Run(name, fn)
	}
}

// TestFloat8ExhaustiveF32 compares the single-value encoders and the vector
// slice kernel with the reference on every float32 bit
// pattern, for both formats and both modes. That takes minutes, so only
// with TCRT_LONG_TESTS=1 (internal/longtest); otherwise it takes every 31st
// chunk of 64K patterns, under -short every 509th.
func TestFloat8ExhaustiveF32(t *testing.T) {
	const chunk = 1 << 16
	nchunks := 1 << 16
	step := 31
	switch {
	case longtest.Enabled():
		step = 1
	case testing.Short():
		step = 509
	}
	levels := simdLevels()
	var failures atomic.Int64
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := make([]float32, chunk)
			want := make([]uint8, chunk)
			got := make([]uint8, chunk)
			for {
				c := int(next.Add(1)-1) * step
				if c >= nchunks || failures.Load() > 10 {
					return
				}
				for i := range src {
					src[i] = math.Float32frombits(uint32(c*chunk + i))
				}
				for _, d := range formats {
					f := ref(d)
					for _, mode := range modes {
						for i, x := range src {
							want[i] = f.encode(x, mode)
						}
						check := func(what string) {
							for i := range src {
								if got[i] != want[i] {
									if failures.Add(1) <= 10 {
										t.Errorf("%s %v %v: %#08x (%g) -> %#02x, reference %#02x", what, d, mode, math.Float32bits(src[i]), src[i], got[i], want[i])
									}
								}
							}
						}
						for i, x := range src {
							got[i] = EncodeFloat8(d, x, mode)
						}
						check("scalar")
						// The portable slice kernel is the scalar function in
						// a loop; simdCap is not changed while goroutines run.
						for _, c := range levels[:len(levels)-1] {
							encF32At(c, d, got, src, 1, mode)
							check(fmt.Sprintf("vector slice (cap %d)", c))
						}
					}
				}
			}
		}()
	}
	wg.Wait()
}

func TestFloat8All16Bit(t *testing.T) {
	withSIMD(t, func(t *testing.T) {
		src := make([]uint16, 1<<16)
		for i := range src {
			src[i] = uint16(i)
		}
		got := make([]uint8, len(src))
		for _, d := range formats {
			for _, mode := range modes {
				for _, bf := range []bool{false, true} {
					var err error
					if bf {
						err = EncodeBF16ToFloat8(d, got, src, mode)
					} else {
						err = EncodeF16ToFloat8(d, got, src, mode)
					}
					if err != nil {
						t.Fatal(err)
					}
					for i, h := range src {
						var x float32
						var one uint8
						switch {
						case bf:
							x = BF16ToF32(h)
							one = map[DType]func(uint16, OverflowMode) uint8{E4M3: BF16ToE4M3, E5M2: BF16ToE5M2}[d](h, mode)
						default:
							x = F16ToF32(h)
							one = map[DType]func(uint16, OverflowMode) uint8{E4M3: F16ToE4M3, E5M2: F16ToE5M2}[d](h, mode)
						}
						want := ref(d).encode(x, mode)
						if got[i] != want || one != want {
							t.Fatalf("%v %v bf16=%v %#04x: slice %#02x, single %#02x, reference %#02x", d, mode, bf, h, got[i], one, want)
						}
					}
				}
			}
		}
	})
}

func canonF16(v float32) uint16 {
	if v != v {
		return uint16(math.Float32bits(v)>>16)&0x8000 | 0x7e00
	}
	return F32ToF16(v)
}

func TestFloat8DecodeAll(t *testing.T) {
	withSIMD(t, func(t *testing.T) {
		src := make([]uint8, 256*3+5) // not a multiple of 16: exercises the tail
		for i := range src {
			src[i] = uint8(i)
		}
		for _, d := range formats {
			f := ref(d)
			for _, scale := range []float32{1, 0.75, 1.0 / 3, 1 << 20} {
				got := make([]float32, len(src))
				if err := DecodeFloat8ToF32(d, got, src, scale); err != nil {
					t.Fatal(err)
				}
				scales := make([]float32, len(src))
				for i := range scales {
					scales[i] = scale
				}
				gotv := make([]float32, len(src))
				if err := DecodeFloat8ToF32Scales(d, gotv, src, scales); err != nil {
					t.Fatal(err)
				}
				for i, b := range src {
					want := f.decode(b) * scale
					if math.Float32bits(got[i]) != math.Float32bits(want) || math.Float32bits(gotv[i]) != math.Float32bits(want) {
						t.Fatalf("%v %#02x ×%g: got %#08x / %#08x, reference %#08x", d, b, scale, math.Float32bits(got[i]), math.Float32bits(gotv[i]), math.Float32bits(want))
					}
				}
			}
			h := make([]uint16, len(src))
			bf := make([]uint16, len(src))
			if err := DecodeFloat8ToF16(d, h, src); err != nil {
				t.Fatal(err)
			}
			if err := DecodeFloat8ToBF16(d, bf, src); err != nil {
				t.Fatal(err)
			}
			for i, b := range src {
				v := f.decode(b)
				if got := math.Float32bits(DecodeFloat8(d, b)); got != math.Float32bits(v) {
					t.Fatalf("%v %#02x: %#08x, reference %#08x", d, b, got, math.Float32bits(v))
				}
				if v == v && F16ToF32(canonF16(v)) != v || v == v && BF16ToF32(F32ToBF16(v)) != v {
					t.Fatalf("%v %#02x: %g is not exact in f16/bf16", d, b, v)
				}
				wh, wb := canonF16(v), F32ToBF16(v)
				oneH, oneB := E4M3ToF16(b), E4M3ToBF16(b)
				if d == E5M2 {
					oneH, oneB = E5M2ToF16(b), E5M2ToBF16(b)
				}
				if h[i] != wh || oneH != wh || bf[i] != wb || oneB != wb {
					t.Fatalf("%v %#02x: f16 %#04x/%#04x want %#04x; bf16 %#04x/%#04x want %#04x", d, b, h[i], oneH, wh, bf[i], oneB, wb)
				}
			}
		}
	})
}

// TestFloat8Boundaries is the hand-checked table.
func TestFloat8Boundaries(t *testing.T) {
	f := math.Float32frombits
	up := func(x float32) float32 { return math.Nextafter32(x, float32(math.Inf(1))) }
	down := func(x float32) float32 { return math.Nextafter32(x, 0) }
	p2 := func(k int) float32 { return float32(math.Ldexp(1, k)) }
	inf := float32(math.Inf(1))
	cases := []struct {
		x                          float32
		e4sat, e4non, e5sat, e5non uint8
	}{
		{1, 0x38, 0x38, 0x3C, 0x3C},
		{448, 0x7E, 0x7E, 0x5F, 0x5F},       // 448 = 1.75·2^8: E5M2 exponent 23 → 0x5C|3
		{-448, 0xFE, 0xFE, 0xDF, 0xDF},      //
		{464, 0x7E, 0x7E, 0x5F, 0x5F},       // E4M3: tie 448 (mantissa 110, even) / 480 → 448; E5M2: 1.8125·2^8 → 1.75·2^8
		{up(464), 0x7E, 0x7F, 0x5F, 0x5F},   // just above: E4M3 overflows
		{down(464), 0x7E, 0x7E, 0x5F, 0x5F}, //
		{480, 0x7E, 0x7F, 0x60, 0x60},       // E5M2: tie 448 (odd) / 512 → 512 (0x60)
		{57344, 0x7E, 0x7F, 0x7B, 0x7B},     // E5M2 largest finite
		{down(61440), 0x7E, 0x7F, 0x7B, 0x7B},
		{61440, 0x7E, 0x7F, 0x7B, 0x7C}, // tie between 57344 and 65536 (Inf): even → overflow
		{up(61440), 0x7E, 0x7F, 0x7B, 0x7C},
		{-61440, 0xFE, 0xFF, 0xFB, 0xFC},
		{p2(-6), 0x08, 0x08, 0x24, 0x24},           // E4M3 smallest normal; E5M2 exponent 9
		{7 * p2(-9), 0x07, 0x07, 0x23, 0x23},       // E4M3 largest subnormal; E5M2 1.75·2^-7
		{7.5 * p2(-9), 0x08, 0x08, 0x24, 0x24},     // tie 7/8 → 8 (even); E5M2 1.875·2^-7: tie 1.75/2 → 2^-6
		{p2(-9), 0x01, 0x01, 0x18, 0x18},           // E4M3 smallest subnormal
		{p2(-10), 0x00, 0x00, 0x14, 0x14},          // half of it: tie → 0
		{up(p2(-10)), 0x01, 0x01, 0x14, 0x14},      // just above half → smallest subnormal
		{1.5 * p2(-9), 0x02, 0x02, 0x1A, 0x1A},     // tie 1/2 → 2
		{p2(-14), 0x00, 0x00, 0x04, 0x04},          // E5M2 smallest normal
		{p2(-16), 0x00, 0x00, 0x01, 0x01},          // E5M2 smallest subnormal
		{p2(-17), 0x00, 0x00, 0x00, 0x00},          // half of it → 0
		{up(p2(-17)), 0x00, 0x00, 0x01, 0x01},      //
		{-p2(-17), 0x80, 0x80, 0x80, 0x80},         // rounds to −0
		{3 * p2(-17), 0x00, 0x00, 0x02, 0x02},      // tie 1/2 → 2
		{1.0625, 0x38, 0x38, 0x3C, 0x3C},           // E4M3 mantissa tie → even
		{1.1875, 0x3A, 0x3A, 0x3D, 0x3D},           // tie 1.125/1.25 → 1.25; E5M2 → 1.25
		{f(0x80000000), 0x80, 0x80, 0x80, 0x80},    // −0
		{0, 0, 0, 0, 0},                            //
		{f(1), 0, 0, 0, 0},                         // smallest f32 subnormal
		{f(0x7fc00001), 0x7F, 0x7F, 0x7F, 0x7F},    // quiet NaN with payload
		{f(0x7f800001), 0x7F, 0x7F, 0x7F, 0x7F},    // signalling NaN
		{f(0xffa5a5a5), 0xFF, 0xFF, 0xFF, 0xFF},    // negative NaN with payload
		{inf, 0x7E, 0x7F, 0x7B, 0x7C},              //
		{-inf, 0xFE, 0xFF, 0xFB, 0xFC},             //
		{math.MaxFloat32, 0x7E, 0x7F, 0x7B, 0x7C},  //
		{-math.MaxFloat32, 0xFE, 0xFF, 0xFB, 0xFC}, //
	}
	for _, c := range cases {
		want := [2][2]uint8{{c.e4sat, c.e4non}, {c.e5sat, c.e5non}}
		for fi, d := range formats {
			for mi, mode := range modes {
				w := want[fi][mi]
				r := ref(d).encode(c.x, mode)
				g := EncodeFloat8(d, c.x, mode)
				var s [1]uint8
				if err := EncodeF32ToFloat8(d, s[:], []float32{c.x}, 1, mode); err != nil {
					t.Fatal(err)
				}
				if r != w || g != w || s[0] != w {
					t.Errorf("%v %v %#08x (%g): reference %#02x, fast %#02x, slice %#02x; table says %#02x", d, mode, math.Float32bits(c.x), c.x, r, g, s[0], w)
				}
			}
		}
	}
	// Decode side of the table.
	dec := []struct {
		d    DType
		b    uint8
		want float32
	}{
		{E4M3, 0x7E, 448}, {E4M3, 0xFE, -448}, {E4M3, 0x01, p2(-9)}, {E4M3, 0x08, p2(-6)}, {E4M3, 0x38, 1},
		{E4M3, 0x80, f(0x80000000)}, {E4M3, 0x7F, f(0x7fc00000)}, {E4M3, 0xFF, f(0xffc00000)},
		{E5M2, 0x7B, 57344}, {E5M2, 0x7C, inf}, {E5M2, 0xFC, -inf}, {E5M2, 0x7D, f(0x7fc00000)},
		{E5M2, 0xFE, f(0xffc00000)}, {E5M2, 0x01, p2(-16)}, {E5M2, 0x04, p2(-14)}, {E5M2, 0x3C, 1},
	}
	for _, c := range dec {
		if g, r := DecodeFloat8(c.d, c.b), ref(c.d).decode(c.b); math.Float32bits(g) != math.Float32bits(c.want) || math.Float32bits(r) != math.Float32bits(c.want) {
			t.Errorf("%v decode %#02x: fast %#08x, reference %#08x, table %#08x", c.d, c.b, math.Float32bits(g), math.Float32bits(r), math.Float32bits(c.want))
		}
	}
}

func TestFloat8SlicesScaled(t *testing.T) {
	withSIMD(t, func(t *testing.T) {
		for _, n := range []int{0, 1, 7, 15, 16, 17, 24, 40, 56, 100, 129, 1000} {
			src := make([]float32, n)
			scales := make([]float32, n)
			for i := range src {
				src[i] = float32(math.Sin(float64(i)*1.7)) * float32(math.Ldexp(1, i%40-20))
				scales[i] = float32(1 + i%7)
			}
			for _, d := range formats {
				for _, mode := range modes {
					got := make([]uint8, n)
					gotv := make([]uint8, n)
					if err := EncodeF32ToFloat8(d, got, src, 3.5, mode); err != nil {
						t.Fatal(err)
					}
					if err := EncodeF32ToFloat8Scales(d, gotv, src, scales, mode); err != nil {
						t.Fatal(err)
					}
					for i := range src {
						if w := ref(d).encode(src[i]*3.5, mode); got[i] != w {
							t.Fatalf("n=%d %v %v [%d]: %#02x want %#02x", n, d, mode, i, got[i], w)
						}
						if w := ref(d).encode(src[i]*scales[i], mode); gotv[i] != w {
							t.Fatalf("n=%d %v %v scales [%d]: %#02x want %#02x", n, d, mode, i, gotv[i], w)
						}
					}
				}
			}
		}
	})
}

func TestAbsMax(t *testing.T) {
	withSIMD(t, func(t *testing.T) {
		for _, n := range []int{0, 1, 16, 33, 1000} {
			src := make([]float32, n)
			var want float32
			for i := range src {
				src[i] = float32(math.Cos(float64(i)*2.3)) * float32(i+1)
				want = max(want, float32(math.Abs(float64(src[i]))))
			}
			if got := AbsMax(src); got != want {
				t.Fatalf("n=%d: %g want %g", n, got, want)
			}
			if n > 0 {
				src[n/2] = -float32(math.Inf(1))
				if got := AbsMax(src); !math.IsInf(float64(got), 1) {
					t.Fatalf("n=%d with -Inf: %g", n, got)
				}
				src[n-1] = math.Float32frombits(0xff800001)
				if got := AbsMax(src); got == got {
					t.Fatalf("n=%d with NaN: %g", n, got)
				}
			}
		}
	})
}

func TestFloat8SliceErrors(t *testing.T) {
	dst := []uint8{1, 2, 3}
	src := []float32{1, 2, 3}
	check := func(err error, sentinel error, arg string) {
		t.Helper()
		var ae *ArgError
		if !errors.Is(err, sentinel) || !errors.As(err, &ae) || ae.Arg != arg {
			t.Errorf("got %v, want %v naming %s", err, sentinel, arg)
		}
		if fmt.Sprint(dst) != "[1 2 3]" {
			t.Errorf("dst written on error: %v", dst)
		}
	}
	check(EncodeF32ToFloat8(F16, dst, src, 1, Saturate), ErrDType, "format")
	check(EncodeF32ToFloat8(E4M3, dst, src, 1, 7), ErrArgument, "mode")
	check(EncodeF32ToFloat8(E4M3, dst[:2], src, 1, Saturate), ErrShape, "dst")
	check(EncodeF32ToFloat8Scales(E4M3, dst, src, []float32{1}, Saturate), ErrShape, "scales")
	check(EncodeF16ToFloat8(U8, dst, []uint16{1, 2, 3}, Saturate), ErrDType, "format")
	check(DecodeFloat8ToF32(BF16, []float32{1, 2, 3}, dst, 1), ErrDType, "format")
}

func BenchmarkFloat8Reference(b *testing.B) {
	var s uint8
	for i := 0; i < b.N; i++ {
		s += fmtE4M3.encode(math.Float32frombits(uint32(i)*2654435761), Saturate)
	}
	_ = s
}

func TestFloat8Blocks(t *testing.T) {
	withSIMD(t, func(t *testing.T) {
		for _, bl := range []int{8, 16, 24, 32, 40, 56, 128, 20} {
			nb := 7
			src := make([]float32, nb*bl)
			for i := range src {
				src[i] = float32(math.Sin(float64(i)*0.37)) * float32(math.Ldexp(1, i%30-15))
			}
			src[3] = float32(math.NaN())
			scales := make([]float32, nb)
			for b := range scales {
				scales[b] = float32(b+1) * 0.75
			}
			for _, d := range formats {
				got := make([]uint8, len(src))
				if err := EncodeF32ToFloat8Blocks(d, got, src, scales, bl, NonSaturating); err != nil {
					t.Fatal(err)
				}
				dec := make([]float32, len(src))
				if err := DecodeFloat8ToF32Blocks(d, dec, got, scales, bl); err != nil {
					t.Fatal(err)
				}
				am := make([]float32, nb)
				if err := AbsMaxBlocks(am, src, bl); err != nil {
					t.Fatal(err)
				}
				for b := range nb {
					want := make([]uint8, bl)
					wantDec := make([]float32, bl)
					encF32Go(d, want, src[b*bl:(b+1)*bl], scales[b], NonSaturating)
					decF32Go(d, wantDec, want, scales[b])
					for i := range bl {
						if got[b*bl+i] != want[i] || math.Float32bits(dec[b*bl+i]) != math.Float32bits(wantDec[i]) {
							t.Fatalf("bl %d %v block %d [%d]: %#02x/%g want %#02x/%g", bl, d, b, i, got[b*bl+i], dec[b*bl+i], want[i], wantDec[i])
						}
					}
					if w := AbsMax(src[b*bl : (b+1)*bl]); math.Float32bits(am[b]) != math.Float32bits(w) {
						t.Fatalf("bl %d block %d: amax %g want %g", bl, b, am[b], w)
					}
				}
			}
		}
		if err := EncodeF32ToFloat8Blocks(E4M3, make([]uint8, 10), make([]float32, 10), []float32{1}, 16, Saturate); !errors.Is(err, ErrShape) {
			t.Fatalf("bad blocks: %v", err)
		}
	})
}

// TestFloat8DecodeStream compares the non-temporal decoders with the
// reference on every code, at each alignment of dst (the kernels need 32
// bytes; the portable code takes the elements before it) and odd lengths,
// into poisoned outputs.
func TestFloat8DecodeStream(t *testing.T) {
	withSIMD(t, func(t *testing.T) {
		for _, d := range formats {
			f := ref(d)
			for _, n := range []int{1, 7, 8, 24, 129, 256, 1000} {
				src := make([]uint8, n)
				for i := range src {
					src[i] = uint8(i*37 + n)
				}
				for off := range 8 {
					buf := make([]float32, n+off+1)
					for i := range buf {
						buf[i] = math.Float32frombits(0x7fa5a5a5)
					}
					dst := buf[off : off+n]
					if err := DecodeFloat8ToF32Stream(d, dst, src, 0.75); err != nil {
						t.Fatal(err)
					}
					for i, b := range src {
						if want := f.decode(b) * 0.75; math.Float32bits(dst[i]) != math.Float32bits(want) {
							t.Fatalf("%v n=%d offset %d [%d] %#02x: %#08x want %#08x", d, n, off, i, b, math.Float32bits(dst[i]), math.Float32bits(want))
						}
					}
					if math.Float32bits(buf[off+n]) != 0x7fa5a5a5 || off > 0 && math.Float32bits(buf[off-1]) != 0x7fa5a5a5 {
						t.Fatalf("%v n=%d offset %d: wrote outside dst", d, n, off)
					}
				}
			}
			// Blocks, aligned (the kernel) and not (the plain path).
			for _, bl := range []int{8, 16, 24, 40, 20} {
				const nb = 5
				src := make([]uint8, nb*bl)
				for i := range src {
					src[i] = uint8(i * 11)
				}
				scales := []float32{1, 0.5, 3, 1.0 / 3, 1 << 20}
				for _, off := range []int{0, 8, 1} {
					buf := make([]float32, nb*bl+off)
					dst := buf[off:]
					if err := DecodeFloat8ToF32BlocksStream(d, dst, src, scales, bl); err != nil {
						t.Fatal(err)
					}
					for i, b := range src {
						if want := f.decode(b) * scales[i/bl]; math.Float32bits(dst[i]) != math.Float32bits(want) {
							t.Fatalf("%v blocks of %d offset %d [%d]: %#08x want %#08x", d, bl, off, i, math.Float32bits(dst[i]), math.Float32bits(want))
						}
					}
				}
			}
		}
		dst := []float32{1, 2}
		if err := DecodeFloat8ToF32Stream(E4M3, dst, []uint8{1}, 1); !errors.Is(err, ErrShape) || dst[0] != 1 {
			t.Fatalf("short src: %v, dst %v", err, dst)
		}
		if err := DecodeFloat8ToF32BlocksStream(E4M3, dst, []uint8{1, 2}, []float32{1}, 3); !errors.Is(err, ErrShape) || dst[0] != 1 {
			t.Fatalf("bad blocks: %v, dst %v", err, dst)
		}
	})
}
