package fallback

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

// The fast path is checked against MatMulRef with the error metric
//
//	max over b, i, j of |fast − ref| / max(|ref|, scale)
//
// where scale is the root mean square of the reference output: an absolute
// error on the elements that cancellation makes small, a relative one on the
// others. The tolerance depends on D's element type, since a float32 result
// a rounding away from the reference's may round to the neighbouring f16 or
// bf16 value.
func tolerance(d tile.DType) float64 {
	switch d {
	case tile.F16:
		return 2e-3 // 2 ulp of binary16
	case tile.BF16:
		return 1e-2 // about 1 ulp of bfloat16
	}
	return 1e-4
}

// newRand returns a generator seeded from the test's name.
func newRand(t *testing.T) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(t.Name()))
	return rand.New(rand.NewPCG(h.Sum64(), 0x7463727420676f))
}

// randValue is uniform in [-1, -1/64] ∪ [1/64, 1]: never zero, nor zero
// once rounded to any float type the tests use.
func randUnit(r *rand.Rand) float32 {
	v := float32(1.0/64 + (1-1.0/64)*r.Float64())
	if r.IntN(2) == 0 {
		v = -v
	}
	return v
}

// mat describes an operand to build: op shape rows×cols.
type mat struct {
	dt    tile.DType
	trans bool
	ldPad int // extra elements per stored row
	bsPad int // extra elements per batch
	skew  int // bytes the data starts past an allocation (misaligns it)
}

// newMatrix returns a batch of random matrices whose op is rows×cols,
// holding exactly the bytes the layout spans.
func newMatrix(r *rand.Rand, m mat, batch, rows, cols int) Matrix {
	sr, sc := rows, cols
	if m.trans {
		sr, sc = cols, rows
	}
	x := Matrix{DType: m.dt, Rows: sr, Cols: sc, LD: sc + m.ldPad, Trans: m.trans}
	x.BatchStride = sr*x.LD + m.bsPad
	n := (batch-1)*x.BatchStride + (sr-1)*x.LD + sc
	x.Data = make([]byte, m.skew+n*m.dt.Size())[m.skew:]
	for b := range batch {
		for i := range sr {
			for j := range sc {
				setElem(&x, b*x.BatchStride+i*x.LD+j, randUnit(r))
			}
		}
	}
	return x
}

func setElem(x *Matrix, i int, v float32) {
	switch x.DType {
	case tile.E4M3:
		x.Data[i] = tile.F32ToE4M3(v, tile.Saturate)
	case tile.E5M2:
		x.Data[i] = tile.F32ToE5M2(v, tile.Saturate)
	default:
		storeF32(x.DType, x.Data, i, v)
	}
}

// poison fills data with all-ones bytes: NaN in every float type.
func poison(data []byte) {
	for i := range data {
		data[i] = 0xff
	}
}

// mmCase is one fast-path test.
type mmCase struct {
	M, N, K, Batch int
	A, B, C, D     mat
	Alpha, Beta    float32
	Bias           bool
	Act            Activation
	Threads        int
	InPlace        bool // C is D (C's layout is ignored)
	ScaleA, ScaleB []float32
}

func (c mmCase) String() string {
	s := fmt.Sprintf("%dx%dx%d", c.M, c.N, c.K)
	if c.Batch > 1 {
		s += fmt.Sprintf("b%d", c.Batch)
	}
	tr := func(m mat) string {
		if m.trans {
			return "T"
		}
		return "N"
	}
	s += fmt.Sprintf("/%s%s/%v.%v.%v", tr(c.A), tr(c.B), c.A.dt, c.B.dt, c.D.dt)
	if c.Alpha != 1 || c.Beta != 0 {
		s += fmt.Sprintf("/a%gb%g", c.Alpha, c.Beta)
		if c.Beta != 0 {
			s += "." + c.C.dt.String()
		}
	}
	if c.InPlace {
		s += "/inplace"
	}
	if c.Bias {
		s += "/bias"
	}
	if c.Act != ActNone {
		s += "/" + c.Act.String()
	}
	if c.Threads != 0 {
		s += fmt.Sprintf("/t%d", c.Threads)
	}
	if c.ScaleA != nil || c.ScaleB != nil {
		s += fmt.Sprintf("/scales%d.%d", len(c.ScaleA), len(c.ScaleB))
	}
	return s
}

// f32Case is the plain f32 product of an M×K and a K×N matrix.
func f32Case(m, n, k int) mmCase {
	f := mat{dt: tile.F32}
	return mmCase{M: m, N: n, K: k, Batch: 1, A: f, B: f, C: f, D: f, Alpha: 1}
}

// check runs c with every available variant against MatMulRef.
func check(t *testing.T, r *rand.Rand, c mmCase) {
	t.Helper()
	a := MatMulArgs{M: c.M, N: c.N, K: c.K, Batch: c.Batch, Alpha: c.Alpha, Beta: c.Beta, Act: c.Act, Threads: c.Threads}
	a.ScaleA, a.ScaleB = c.ScaleA, c.ScaleB
	a.A = newMatrix(r, c.A, c.Batch, c.M, c.K)
	a.B = newMatrix(r, c.B, c.Batch, c.K, c.N)
	a.D = newMatrix(r, c.D, c.Batch, c.M, c.N)
	if c.Bias {
		a.Bias = make([]float32, c.N)
		for j := range a.Bias {
			a.Bias[j] = randUnit(r)
		}
	}
	if c.Beta != 0 && !c.InPlace {
		cm := newMatrix(r, c.C, c.Batch, c.M, c.N)
		a.C = &cm
	}
	// The reference gets its own D (and C, when C is D).
	ref := a
	ref.D.Data = slices.Clone(a.D.Data)
	var c0 []byte // C's initial contents when C is D
	if c.InPlace {
		c0 = slices.Clone(a.D.Data)
		a.C = &a.D
		refC := ref.D
		ref.C = &refC
	} else {
		poison(ref.D.Data)
	}
	MatMulRef(&ref)
	scale := rms(&ref.D, c.Batch, c.M, c.N)
	// The inputs must come out of every run as they went in.
	inputs := [][]byte{a.A.Data, a.B.Data}
	if a.C != nil && !c.InPlace {
		inputs = append(inputs, a.C.Data)
	}
	saved := make([][]byte, len(inputs))
	for i, in := range inputs {
		saved[i] = slices.Clone(in)
	}
	bias := slices.Clone(a.Bias)
	tol := tolerance(c.D.dt)

	for _, v := range MatMulVariants() {
		if !v.Available() || !v.Accepts(c.A.dt, c.B.dt) {
			continue
		}
		if c.InPlace {
			copy(a.D.Data, c0)
			poisonOutside(&a.D, c.Batch, c.M, c.N)
		} else {
			poison(a.D.Data)
		}
		if err := MatMulFast(v.Name, &a); err != nil {
			t.Fatalf("%v: %v: %v", c, v.Name, err)
		}
		worst, wb, wi, wj := 0.0, 0, 0, 0
		for b := range c.Batch {
			for i := range c.M {
				for j := range c.N {
					k := b*a.D.BatchStride + i*a.D.LD + j
					got := float64(loadF32(a.D.DType, a.D.Data, k))
					want := float64(loadF32(ref.D.DType, ref.D.Data, k))
					e := math.Abs(got-want) / math.Max(math.Abs(want), scale)
					if !(e <= worst) { // NaN counts as the worst
						worst, wb, wi, wj = e, b, i, j
						if math.IsNaN(e) {
							worst = math.Inf(1)
						}
					}
				}
			}
		}
		if worst > tol {
			k := wb*a.D.BatchStride + wi*a.D.LD + wj
			t.Errorf("%v: %s: error %.3g > %.3g at [%d,%d,%d]: got %g, want %g", c, v.Name, worst, tol, wb, wi, wj,
				loadF32(a.D.DType, a.D.Data, k), loadF32(ref.D.DType, ref.D.Data, k))
		}
		if b, i, j, ok := touchedOutside(&a.D, c.Batch, c.M, c.N); !ok {
			t.Errorf("%v: %s: wrote padding element [%d,%d,%d] of D", c, v.Name, b, i, j)
		}
		for i, in := range inputs {
			if !slices.Equal(in, saved[i]) {
				t.Fatalf("%v: %s: input %d (A, B, C) modified", c, v.Name, i)
			}
		}
		if !slices.Equal(bias, a.Bias) {
			t.Fatalf("%v: %s: bias modified", c, v.Name)
		}
	}
}

// rms is the root mean square of the M×N outputs.
func rms(d *Matrix, batch, m, n int) float64 {
	var s float64
	for b := range batch {
		for i := range m {
			for j := range n {
				x := float64(loadF32(d.DType, d.Data, b*d.BatchStride+i*d.LD+j))
				s += x * x
			}
		}
	}
	return math.Max(math.Sqrt(s/float64(batch*m*n)), 1e-6)
}

// inside reports whether element k of d is one of the M×N outputs.
func inside(d *Matrix, batch, m, n, k int) (b, i, j int, ok bool) {
	b = k / d.BatchStride
	r := k % d.BatchStride
	i, j = r/d.LD, r%d.LD
	return b, i, j, b < batch && i < m && j < n
}

func poisonOutside(d *Matrix, batch, m, n int) {
	sz := d.DType.Size()
	for k := 0; k < len(d.Data)/sz; k++ {
		if _, _, _, ok := inside(d, batch, m, n, k); !ok {
			poison(d.Data[k*sz : (k+1)*sz])
		}
	}
}

// touchedOutside checks that the padding elements of d are still poisoned.
func touchedOutside(d *Matrix, batch, m, n int) (b, i, j int, ok bool) {
	sz := d.DType.Size()
	for k := 0; k < len(d.Data)/sz; k++ {
		b, i, j, in := inside(d, batch, m, n, k)
		if in {
			continue
		}
		for _, x := range d.Data[k*sz : (k+1)*sz] {
			if x != 0xff {
				return b, i, j, false
			}
		}
	}
	return 0, 0, 0, true
}

func TestMatMulVariants(t *testing.T) {
	vs := MatMulVariants()
	if len(vs) == 0 || vs[len(vs)-1].Name != "generic" || !vs[len(vs)-1].Available() {
		t.Fatalf("variants %v: want generic last and available", vs)
	}
	for _, v := range vs {
		t.Logf("%s %dx%d available=%v blocking=%+v", v.Name, v.MR, v.NR, v.Available(), variantByName(v.Name).blocking())
	}
	var a MatMulArgs
	if err := MatMulFast("no-such-kernel", &a); err == nil {
		t.Error("unknown variant: no error")
	}
	for _, v := range vs {
		if !v.Available() && MatMulFast(v.Name, &a) == nil {
			t.Errorf("unavailable variant %s: no error", v.Name)
		}
	}
}

func variantByName(name string) *variant {
	for _, v := range variants {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// TestMatMulFastShapes covers edge tiles: every combination of 1, 7 and 129
// in each dimension, and 1000 in one dimension with the others small.
func TestMatMulFastShapes(t *testing.T) {
	r := newRand(t)
	sizes := []int{1, 7, 129}
	for _, m := range sizes {
		for _, n := range sizes {
			for _, k := range sizes {
				if testing.Short() && m*n*k > 129*129*7 {
					continue
				}
				check(t, r, f32Case(m, n, k))
			}
		}
	}
	for _, s := range [][3]int{{1000, 7, 7}, {7, 1000, 7}, {7, 7, 1000}, {1000, 1, 1}, {1, 1000, 1}, {1, 1, 1000}, {1000, 7, 129}} {
		if testing.Short() && s[0]*s[1]*s[2] > 100000 {
			continue
		}
		check(t, r, f32Case(s[0], s[1], s[2]))
	}
}

// TestMatMulFastEpilogue covers transposes, alpha and beta, bias and the
// activations.
func TestMatMulFastEpilogue(t *testing.T) {
	r := newRand(t)
	for _, ta := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			c := f32Case(37, 45, 70)
			c.A.trans, c.B.trans = ta, tb
			check(t, r, c)
		}
	}
	for _, ab := range [][2]float32{{0.5, 0}, {1, 1}, {-1.5, 0.25}, {0, 2}} {
		c := f32Case(19, 50, 33)
		c.Alpha, c.Beta = ab[0], ab[1]
		check(t, r, c)
	}
	for act := ActNone; act.Valid(); act++ {
		for _, bias := range []bool{false, true} {
			c := f32Case(23, 41, 17)
			c.Act, c.Bias = act, bias
			c.Alpha, c.Beta = 0.75, -0.5
			check(t, r, c)
		}
	}
	c := f32Case(15, 33, 0) // no K: D is the epilogue of zero
	c.Beta, c.Bias = 1, true
	check(t, r, c)
}

// TestMatMulFastDTypes covers 16-bit and 8-bit float inputs, C and outputs.
func TestMatMulFastDTypes(t *testing.T) {
	r := newRand(t)
	dts := []tile.DType{tile.F32, tile.F16, tile.BF16}
	for _, da := range dts {
		for _, db := range dts {
			for _, dd := range dts {
				c := f32Case(30, 53, 40)
				c.A.dt, c.B.dt, c.D.dt = da, db, dd
				c.A.trans = da == tile.F16
				c.B.trans = db == tile.BF16
				check(t, r, c)
			}
		}
	}
	for _, dc := range dts {
		c := f32Case(17, 40, 21)
		c.C.dt, c.Beta, c.Bias, c.Act = dc, 0.5, true, ActGELU
		c.D.dt = tile.BF16
		check(t, r, c)
	}
	for _, d8 := range []tile.DType{tile.E4M3, tile.E5M2} {
		c := f32Case(13, 35, 20)
		c.A.dt, c.B.dt = d8, d8
		c.B.trans = d8 == tile.E5M2
		check(t, r, c)
	}
}

// TestMatMulFastLayouts covers batches with padded batch strides, leading
// dimensions larger than the row, in-place C = D, and thread counts.
func TestMatMulFastLayouts(t *testing.T) {
	r := newRand(t)
	pad := mat{dt: tile.F32, ldPad: 5, bsPad: 11}
	for _, tr := range []bool{false, true} {
		c := f32Case(21, 38, 29)
		c.Batch = 3
		c.A, c.B, c.C, c.D = pad, pad, pad, pad
		c.A.trans, c.B.trans = tr, !tr
		c.Beta, c.Bias = 0.5, true
		check(t, r, c)
		c.D.dt = tile.F16
		c.A.dt = tile.BF16
		check(t, r, c)
	}
	for _, threads := range []int{1, 2, 3, 7} {
		c := f32Case(77, 90, 31)
		c.Batch, c.Threads = 2, threads
		check(t, r, c)
	}
	skew := mat{dt: tile.F32, skew: 2}
	c := f32Case(33, 70, 40)
	c.A, c.B, c.D = skew, skew, skew
	c.B.trans = true
	check(t, r, c)
	for _, k := range []int{9, 300} {
		c := f32Case(20, 35, k)
		c.D = pad
		c.Alpha, c.Beta, c.InPlace, c.Act = 2, -1, true, ActReLU
		check(t, r, c)
	}
}

// TestMatMulFastBlocking shrinks the cache blocks so that small shapes go
// through every blocking loop (several K, M and N blocks per worker), with
// partial sums kept in D and in the scratch buffer.
func TestMatMulFastBlocking(t *testing.T) {
	r := newRand(t)
	defer func() { testBlocking = nil }()
	for _, blk := range []blocking{{kc: 16, mc: 28, nc: 64}, {kc: 8, mc: 14, nc: 32}} {
		testBlocking = &blk
		for _, dd := range []tile.DType{tile.F32, tile.BF16} {
			for _, threads := range []int{1, 3} {
				c := f32Case(61, 83, 50)
				c.D.dt, c.Threads = dd, threads
				c.Beta, c.Bias = 0.5, true
				c.A.trans = threads == 3
				check(t, r, c)
			}
		}
		c := f32Case(40, 70, 45)
		c.Batch, c.InPlace, c.Beta = 2, true, 1
		check(t, r, c)
	}
}

// TestMatMulFastLarge runs shapes past the real cache blocks.
func TestMatMulFastLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("slow reference")
	}
	r := newRand(t)
	c := f32Case(300, 520, 600)
	check(t, r, c)
	c.D.dt, c.B.trans, c.Beta = tile.BF16, true, 1
	check(t, r, c)
}

// TestMatMulConverters checks each variant's 16-bit conversions against the
// tile package's bit for bit (NaNs need only stay NaN), at every length up
// to a few vector widths so that the tails are covered too.
func TestMatMulConverters(t *testing.T) {
	r := newRand(t)
	all := make([]uint16, 1<<16)
	for i := range all {
		all[i] = uint16(i)
	}
	f32 := make([]float32, 0, 4096)
	for _, x := range []float32{0, 1, -1, 65504, 65520, -65536, 1e-8, 6e-8, 3e-8, 5.96e-8, 6.1e-5, 1e30, float32(math.Inf(1)), float32(math.NaN())} {
		f32 = append(f32, x, -x)
	}
	for _, u := range []uint32{0x7fc00001, 0xffc12345, 0x7f800001, 0xff800001, 0x7f7fffff, 0xff7fffff, 0x3f808000, 0x3f818000, 0x00008000, 0x80018000} {
		f32 = append(f32, math.Float32frombits(u))
	}
	for len(f32) < cap(f32) {
		if r.IntN(2) == 0 {
			f32 = append(f32, math.Float32frombits(r.Uint32()))
		} else {
			// In binary16's range, the 13 bits it drops often exactly
			// half an ulp or just either side of it.
			u := 0x33000000 + r.Uint32N(0x47800000-0x33000000)
			u = u&^0x1fff | [...]uint32{0, 0x1000, 0x0fff, 0x1001, 0x1fff}[r.IntN(5)]
			f32 = append(f32, math.Float32frombits(u))
		}
	}
	same := func(got, want float32) bool {
		return math.Float32bits(got) == math.Float32bits(want) || got != got && want != want
	}
	for _, v := range variants {
		if !v.Available() {
			continue
		}
		for _, n := range []int{1, 7, 15, 16, 17, 33, 1 << 16} {
			got := make([]float32, n)
			v.cvt.f16ToF32(got, all[:n])
			for i, h := range all[:n] {
				if want := tile.F16ToF32(h); !same(got[i], want) {
					t.Fatalf("%s: f16 %#04x → %g, want %g", v.Name, h, got[i], want)
				}
			}
			v.cvt.bf16ToF32(got, all[:n])
			for i, h := range all[:n] {
				if want := tile.BF16ToF32(h); !same(got[i], want) {
					t.Fatalf("%s: bf16 %#04x → %g, want %g", v.Name, h, got[i], want)
				}
			}
		}
		for _, n := range []int{1, 9, 16, 31, len(f32)} {
			got := make([]uint16, n)
			v.cvt.f32ToF16(got, f32[:n])
			for i, x := range f32[:n] {
				want := tile.F32ToF16(x)
				if got[i] != want && !(x != x && got[i]&0x7c00 == 0x7c00 && got[i]&0x3ff != 0) {
					t.Fatalf("%s: f32 %g (%#08x) → f16 %#04x, want %#04x", v.Name, x, math.Float32bits(x), got[i], want)
				}
			}
			v.cvt.f32ToBF16(got, f32[:n])
			for i, x := range f32[:n] {
				if want := tile.F32ToBF16(x); got[i] != want {
					t.Fatalf("%s: f32 %g (%#08x) → bf16 %#04x, want %#04x", v.Name, x, math.Float32bits(x), got[i], want)
				}
			}
		}
	}
}

// TestMatMulFastSplit checks how work is cut between goroutines: every
// thread gets the same number of items where the shape allows it, and the
// scratch buffer of partial sums stays bounded.
func TestMatMulFastSplit(t *testing.T) {
	v := variants[0]
	for _, c := range []struct {
		m, n, k, batch, threads int
		d                       tile.DType
	}{
		{2048, 2048, 2048, 1, 2, tile.F32},
		{2048, 2048, 2048, 1, 3, tile.F32},
		{100, 3000, 64, 3, 2, tile.F32},
		{50, 50, 50, 5, 4, tile.F32},
		{64, 64, 64, 64, 2, tile.F32},
		{1 << 20, 1024, 4096, 1, 2, tile.BF16},
		{7, 7, 5000, 1, 8, tile.F16},
	} {
		a := MatMulArgs{M: c.m, N: c.n, K: c.k, Batch: c.batch, D: Matrix{DType: c.d}}
		j := &job{a: &a, v: v, blk: v.blocking()}
		j.numKBlk = max(1, ceilDiv(a.K, j.blk.kc))
		j.mode = destD
		if c.d != tile.F32 {
			j.mode = destScratch
		}
		j.split(c.threads)
		if j.items != c.batch*j.mItems*j.nItems {
			t.Errorf("%+v: %d items, grid %d×%d", c, j.items, j.mItems, j.nItems)
		}
		// The items tile M and N in whole panels, evenly.
		for _, d := range []struct{ parts, n, unit int }{{j.mItems, c.m, v.MR}, {j.nItems, c.n, v.NR}} {
			next, lens := 0, []int{}
			for i := range d.parts {
				lo, hi := itemRange(i, d.parts, d.n, d.unit)
				if lo != next || hi <= lo || lo%d.unit != 0 {
					t.Fatalf("%+v: item %d of %d: [%d, %d)", c, i, d.parts, lo, hi)
				}
				next = hi
				lens = append(lens, ceilDiv(hi-lo, d.unit))
			}
			if next != d.n || slices.Max(lens)-slices.Min(lens) > 1 {
				t.Errorf("%+v: items cover %d of %d, panels %v", c, next, d.n, lens)
			}
		}
		if maxItems := ceilDiv(c.m, v.MR) * ceilDiv(c.n, v.NR) * c.batch; j.items%c.threads != 0 && j.items < maxItems && c.batch < 8*c.threads {
			t.Errorf("%+v: %d items for %d threads", c, j.items, c.threads)
		}
		mLen, nLen := roundUp(ceilDiv(c.m, j.mItems), v.MR)+v.MR, roundUp(ceilDiv(c.n, j.nItems), v.NR)
		if j.mode == destScratch {
			if s := 4 * mLen * min(nLen, j.blk.nc); s > maxScratch {
				t.Errorf("%+v: scratch of %d bytes", c, s)
			}
		}
		t.Logf("%+v: %d×%d items of about %d×%d", c, j.mItems, j.nItems, mLen-v.MR, nLen)
	}
}
