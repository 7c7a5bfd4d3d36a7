package gen

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/kernels/sm86"
	"github.com/tcrt-go/tcrt/sass/cubin"
	sasssim "github.com/tcrt-go/tcrt/sass/sim"
	"github.com/tcrt-go/tcrt/tile"
)

// paramBytes lays the slots out as the cubin's parameter list says.
func paramBytes(t *testing.T, ps []cubin.Param, slots []uint64) []byte {
	t.Helper()
	offs, size, err := cubin.ParamLayout(ps)
	if err != nil || len(slots) != len(ps) {
		t.Fatalf("parameters: %v (%d slots for %d)", err, len(slots), len(ps))
	}
	b := make([]byte, size)
	for k, p := range ps {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], slots[k])
		copy(b[offs[k]:offs[k]+p.Size], w[:p.Size])
	}
	return b
}

// simSizes are the element counts the simulator tests run: every tail
// length, block and group boundaries, and 100 000.
func simSizes() []int {
	ns := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 31, 33, 255, 1023, 1024, 1025, 1027, 4098, 9999}
	if !testing.Short() {
		ns = append(ns, 100_000)
	} else {
		ns = append(ns, 20_001)
	}
	return ns
}

// f8Inputs returns n binary32 values mixing specials, float8 boundaries
// (ties, the saturation threshold, subnormal edges) and random bits.
func f8Inputs(rng *rand.Rand, n int) []float32 {
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), -float32(math.NaN()), 448, 464, 464.0001, 480, -449, 57344, 61440, 61439.99,
		1.0 / 64, 1.0 / 512, 1.0 / 1024, 3.0 / 1024, 1.5 / 512, 2.5 / 512, 0x1p-14, 0x1p-16, 0x1p-17, 0x1.8p-17,
		math.SmallestNonzeroFloat32, math.MaxFloat32, 1, 1.0625, 1.1875, 1.125, 1.375, -2.25}
	x := make([]float32, n)
	for i := range x {
		switch k := rng.IntN(8); {
		case k == 0:
			x[i] = special[rng.IntN(len(special))]
		case k <= 3:
			x[i] = math.Float32frombits(rng.Uint32()) // every exponent
		default:
			// around the float8 ranges: |x| in [2^-20, 2^17)
			e := rng.IntN(37) - 20
			x[i] = float32(math.Ldexp(1+rng.Float64(), e))
			if rng.IntN(2) == 0 {
				x[i] = -x[i]
			}
		}
	}
	return x
}

// TestSimQuantize runs both quantisation kernels of both modules in the
// simulator on random inputs of many sizes and compares every byte with
// tile.F32ToE4M3 / F32ToE5M2(x·scale, Saturate).
func TestSimQuantize(t *testing.T) {
	rng := rand.New(rand.NewPCG(86, 89))
	scales := []float32{1, 0.5, 3.7, 0x1p-10, 1e-3, 448 / 17.5, 1.0 / 3}
	for _, arch := range sm86.Archs {
		for _, d := range []tile.DType{tile.E4M3, tile.E5M2} {
			p, err := Quantize(arch, d)
			if err != nil {
				t.Fatal(err)
			}
			sim, err := sasssim.New(p)
			if err != nil {
				t.Fatal(err)
			}
			if u := sim.Unsupported(); len(u) > 0 {
				t.Fatalf("sm_%d %v: the simulator cannot run %v", arch, d, u)
			}
			for si, n := range simSizes() {
				scale := scales[si%len(scales)]
				x := f8Inputs(rng, n)
				mem := sasssim.NewMemory()
				src := make([]byte, 4*n)
				for i, v := range x {
					binary.LittleEndian.PutUint32(src[4*i:], math.Float32bits(v))
				}
				const srcBase, dstBase = 0x10000000, 0x20000000
				// the destination region is exactly n bytes: a store past
				// the end faults.
				dst := make([]byte, n)
				for i := range dst {
					dst[i] = 0xA5
				}
				if err := mem.Map("src", srcBase, src); err != nil {
					t.Fatal(err)
				}
				if err := mem.Map("dst", dstBase, dst); err != nil {
					t.Fatal(err)
				}
				slots := []uint64{dstBase, srcBase, uint64(n), uint64(math.Float32bits(scale))}
				st, err := sim.Launch(sasssim.Config{StrictScoreboards: true, Grid: [3]int{sm86.QuantGrid(n)}, Block: [3]int{sm86.QuantBlock},
					Params: paramBytes(t, quantParams, slots), Memory: mem, Poison: true})
				if err != nil {
					t.Fatalf("sm_%d %v n=%d: %v", arch, d, n, err)
				}
				bad := 0
				for i, v := range x {
					want := tile.EncodeFloat8(d, v*scale, tile.Saturate)
					if dst[i] != want && bad < 5 {
						bad++
						t.Errorf("sm_%d %v n=%d [%d]: x=%g (%#08x) scale %g: got %#02x, want %#02x", arch, d, n, i, v,
							math.Float32bits(v), scale, dst[i], want)
					}
				}
				if n == 100_000 {
					t.Logf("sm_%d %v n=%d: %d thread-instructions", arch, d, n, st.ThreadInstructions)
				}
			}
		}
	}
}

// TestSimQuantizeExhaustive runs the sm_86 integer encoder on every
// binary32 exponent with a spread of mantissas (scale 1), and on every
// float8 tie point.
func TestSimQuantizeExhaustive(t *testing.T) {
	var xs []float32
	for e := uint32(0); e < 256; e++ {
		for _, m := range []uint32{0, 1, 0x7ffff, 0x80000, 0x80001, 0xfffff, 0x100000, 0x17ffff, 0x180000, 0x180001, 0x2fffff, 0x400000, 0x7fffff} {
			for _, s := range []uint32{0, 1 << 31} {
				xs = append(xs, math.Float32frombits(s|e<<23|m))
			}
		}
	}
	for _, d := range []tile.DType{tile.E4M3, tile.E5M2} {
		for c := 0; c < 256; c++ {
			lo := float64(tile.EncodeFloat8(d, 0, tile.Saturate)) // keep the compiler honest
			_ = lo
			v := decode8(d, uint8(c))
			w := decode8(d, uint8(c+1))
			if !math.IsInf(float64(v), 0) && !math.IsNaN(float64(v)) && !math.IsInf(float64(w), 0) && !math.IsNaN(float64(w)) {
				xs = append(xs, (v+w)/2, math.Nextafter32((v+w)/2, v), math.Nextafter32((v+w)/2, w))
			}
		}
	}
	n := len(xs)
	for _, d := range []tile.DType{tile.E4M3, tile.E5M2} {
		p, err := Quantize(86, d)
		if err != nil {
			t.Fatal(err)
		}
		mem := sasssim.NewMemory()
		src := make([]byte, 4*n)
		for i, v := range xs {
			binary.LittleEndian.PutUint32(src[4*i:], math.Float32bits(v))
		}
		dst := make([]byte, n)
		if err := mem.Map("src", 0x1000000, src); err != nil {
			t.Fatal(err)
		}
		if err := mem.Map("dst", 0x9000000, dst); err != nil {
			t.Fatal(err)
		}
		slots := []uint64{0x9000000, 0x1000000, uint64(n), uint64(math.Float32bits(1))}
		if _, err := sasssim.Launch(p, sasssim.Config{StrictScoreboards: true, Grid: [3]int{sm86.QuantGrid(n)}, Block: [3]int{sm86.QuantBlock},
			Params: paramBytes(t, quantParams, slots), Memory: mem, Poison: true}); err != nil {
			t.Fatal(err)
		}
		bad := 0
		for i, v := range xs {
			if want := tile.EncodeFloat8(d, v, tile.Saturate); dst[i] != want && bad < 10 {
				bad++
				t.Errorf("%v: x=%g (%#08x): got %#02x, want %#02x", d, v, math.Float32bits(v), dst[i], want)
			}
		}
	}
}

func decode8(d tile.DType, b uint8) float32 {
	if d == tile.E5M2 {
		return tile.E5M2ToF32(b)
	}
	return tile.E4M3ToF32(b)
}

// scatterCase is one scatter-add the simulator runs and fallback.ScatterRef
// checks.
type scatterCase struct {
	mode          fallback.IndexMode
	rows, cols    int // src valid shape (row mode: rows of cols)
	memRows       int
	signed, skip  bool
	oob           bool // some indices out of bounds
	integerValued bool // values are small integers (sums exact in any order)
}

func (c scatterCase) String() string {
	m := "rows"
	if c.mode == fallback.IndexElements {
		m = "elements"
	}
	return fmt.Sprintf("%s %dx%d mem %d signed=%v skip=%v oob=%v int=%v", m, c.rows, c.cols, c.memRows, c.signed, c.skip, c.oob, c.integerValued)
}

// TestSimScatterAdd runs the scatter-add kernel in the simulator on random
// inputs of many sizes, both index modes, both index types and both
// out-of-bounds policies it covers, and compares the memory bit for bit
// with fallback.ScatterRef. Values are small integers (their sums are exact
// in any order) or, with one update per destination, arbitrary normal
// floats.
func TestSimScatterAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 5))
	sim, err := sasssim.New(ScatterAdd())
	if err != nil {
		t.Fatal(err)
	}
	if u := sim.Unsupported(); len(u) > 0 {
		t.Fatalf("the simulator cannot run %v", u)
	}
	var cases []scatterCase
	for k, n := range simSizes() {
		cases = append(cases,
			scatterCase{mode: fallback.IndexElements, rows: n, cols: 1, memRows: max(1, n/3), signed: k%2 == 0, skip: k%3 == 0, oob: k%4 != 1, integerValued: true},
			scatterCase{mode: fallback.IndexElements, rows: 1, cols: n, memRows: n + 5, signed: k%2 == 1, integerValued: false},
		)
		if cols := []int{1, 3, 8, 33, 100, 257}[k%6]; n/cols >= 1 {
			cases = append(cases, scatterCase{mode: fallback.IndexRows, rows: n / cols, cols: cols, memRows: max(1, n/cols/2+1),
				signed: k%2 == 0, skip: k%3 == 1, oob: k%2 == 0, integerValued: true})
		}
	}
	for _, c := range cases {
		runScatterCase(t, sim, rng, c)
	}
}

func runScatterCase(t *testing.T, sim *sasssim.Simulator, rng *rand.Rand, c scatterCase) {
	t.Helper()
	lanes := c.rows * c.cols
	nIdx := lanes
	memElems := c.memRows
	if c.mode == fallback.IndexRows {
		nIdx = c.rows
		memElems = c.memRows * c.cols
	}
	idxT := tile.S32
	if !c.signed {
		idxT = tile.U32
	}
	idx := make([]byte, 4*nIdx)
	perm := rng.Perm(max(c.memRows, nIdx))
	for i := 0; i < nIdx; i++ {
		v := int64(rng.IntN(c.memRows))
		if !c.integerValued {
			v = int64(perm[i] % c.memRows) // one update per destination
		}
		if c.oob && rng.IntN(5) == 0 {
			switch rng.IntN(3) {
			case 0:
				v = int64(c.memRows + rng.IntN(3))
			case 1:
				v = -1 - int64(rng.IntN(3))
			default:
				v = math.MinInt32
			}
		}
		binary.LittleEndian.PutUint32(idx[4*i:], uint32(v))
	}
	src := make([]byte, 4*lanes)
	for i := 0; i < lanes; i++ {
		v := float32(rng.IntN(201) - 100)
		if !c.integerValued {
			v = float32(math.Ldexp(1+rng.Float64(), rng.IntN(60)-30))
		}
		binary.LittleEndian.PutUint32(src[4*i:], math.Float32bits(v))
	}
	memInit := make([]byte, 4*memElems)
	for i := 0; i < memElems; i++ {
		v := float32(rng.IntN(11) - 5)
		binary.LittleEndian.PutUint32(memInit[4*i:], math.Float32bits(v))
	}
	// the reference
	oob := tile.OOBClamp
	if c.skip {
		oob = tile.OOBSkip
	}
	idxRows, idxCols := c.rows, c.cols
	if c.mode == fallback.IndexRows {
		idxCols = 1
	}
	want := append([]byte(nil), memInit...)
	if err := fallback.ScatterRef(&fallback.ScatterArgs{Mode: c.mode, Op: fallback.ScatterAdd, Mem: want, MemRows: c.memRows,
		Idx: fallback.TileData{Tile: tile.Dense(idxT, idxRows, idxCols), Data: idx},
		Src: fallback.TileData{Tile: tile.Dense(tile.F32, c.rows, c.cols), Data: src}, OOB: oob}); err != nil {
		t.Fatalf("%v: reference: %v", c, err)
	}
	// the kernel
	got := append([]byte(nil), memInit...)
	mem := sasssim.NewMemory()
	const memBase, idxBase, srcBase = 0x10000000, 0x30000000, 0x50000000
	for _, m := range []struct {
		name string
		base uint64
		b    []byte
	}{{"mem", memBase, got}, {"idx", idxBase, idx}, {"src", srcBase, src}} {
		if err := mem.Map(m.name, m.base, m.b); err != nil {
			t.Fatal(err)
		}
	}
	cols := c.cols
	if c.mode == fallback.IndexElements {
		cols = 1
	}
	slots := sm86.ScatterParams(memBase, idxBase, srcBase, uint32(lanes), uint32(cols), uint32(c.memRows), c.signed, c.skip)
	if _, err := sim.Launch(sasssim.Config{StrictScoreboards: true, Grid: [3]int{sm86.ScatterGrid(lanes)}, Block: [3]int{sm86.ScatterBlock},
		Params: paramBytes(t, scatterParams, slots), Memory: mem, Poison: true}); err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	bad := 0
	for i := 0; i < memElems; i++ {
		g, w := binary.LittleEndian.Uint32(got[4*i:]), binary.LittleEndian.Uint32(want[4*i:])
		if g != w && bad < 5 {
			bad++
			t.Errorf("%v: mem[%d] = %g, want %g", c, i, math.Float32frombits(g), math.Float32frombits(w))
		}
	}
}
