package gen

import (
	"encoding/binary"
	"flag"
	"math"
	"math/rand"
	"testing"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/internal/sasscheck"
	"github.com/tcrt-go/tcrt/kernels/sm86mm"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/sim"
	"github.com/tcrt-go/tcrt/tile"
)

var long = flag.Bool("sm86mm.long", false, "run the full M x N x K sweep in the simulator")

// Output poison: NaN patterns the kernel never produces from finite inputs.
const (
	poisonF32 = 0x7fbadbad
	poisonF16 = 0x7d5a
	poisonB16 = 0x7fa5
)

func roundUp(x, m int) int { return (x + m - 1) / m * m }

// epi is one epilogue setting of a simulator case.
type epi struct {
	alpha, beta float32
	bias        bool
	act         fallback.Activation
	// ldPad is added to N for ldc and ldd: 3 makes every row start
	// misaligned (scalar stores only); 0 or 4 allows the vector stores
	// where N is a multiple of 4
	ldPad int
	// splits > 0 runs split-K: the plain kernel over the first K chunk
	// (beta*C + bias), then the split kernel over splits-1 more chunks
	splits int
}

func outDType(o tile.DType) tile.DType {
	switch o {
	case tile.F16:
		return tile.F16
	case tile.BF16:
		return tile.BF16
	}
	return tile.F32
}

func outPoison(o tile.DType) uint32 {
	switch o {
	case tile.F16:
		return poisonF16
	case tile.BF16:
		return poisonB16
	}
	return poisonF32
}

// variantNamed is the variant whose kernel a launch names.
func variantNamed(t *testing.T, name string) sm86mm.Config {
	t.Helper()
	for _, c := range sm86mm.Variants() {
		if c.Name() == name {
			return c
		}
	}
	t.Fatalf("no variant is named %s", name)
	return sm86mm.Config{}
}

// sims caches one simulator per variant.
var sims sasscheck.SimCache[sm86mm.Config]

func simFor(t *testing.T, c sm86mm.Config) *sim.Simulator {
	return sims.Get(t, c, c.Name(), func() (sass.Program, error) {
		p, err := Generate(c)
		if err != nil {
			return nil, err
		}
		return p.Insts, nil
	})
}

// simCase runs the kernel for one shape and epilogue in the simulator
// (poison mode) and returns the largest error relative to max(|ref|, 1)
// against the float64 reference (fallback.MatMulRef with an f32 D); it
// fails on any fault, any poisoned output left or any padding written.
func simCase(t *testing.T, c sm86mm.Config, M, N, K int, e epi, rng *rand.Rand) float64 {
	t.Helper()
	// stored shapes: A M x K (K x M with TransA), B K x N (N x K with
	// TransB); ld is the stored row rounded up to 8, plus 8 of padding
	ar, ac, br, bc := M, K, K, N
	if c.TransA {
		ar, ac = K, M
	}
	if c.TransB {
		br, bc = N, K
	}
	lda := roundUp(ac, 8) + 8
	ldb := roundUp(bc, 8) + 8
	ldd := N + e.ldPad
	ldc := ldd
	dt := tile.F16
	enc := tile.F32ToF16
	nan := uint16(0x7e00)
	if c.In == tile.BF16 {
		dt, enc, nan = tile.BF16, tile.F32ToBF16, 0x7fc0
	}
	ot := outDType(c.Out)
	osz := c.Out.Size()
	a := make([]byte, 2*ar*lda)
	b := make([]byte, 2*br*ldb)
	fill := func(buf []byte, rows, cols, ld int) {
		for i := 0; i < rows; i++ {
			for j := 0; j < ld; j++ {
				v := nan // padding: NaN, so a read of it shows
				if j < cols {
					v = enc(float32(rng.Float64()*2 - 1))
				}
				binary.LittleEndian.PutUint16(buf[2*(i*ld+j):], v)
			}
		}
	}
	fill(a, ar, ac, lda)
	fill(b, br, bc, ldb)
	putOut := func(buf []byte, i int, v uint32) {
		if osz == 4 {
			binary.LittleEndian.PutUint32(buf[4*i:], v)
		} else {
			binary.LittleEndian.PutUint16(buf[2*i:], uint16(v))
		}
	}
	getOut := func(buf []byte, i int) uint32 {
		if osz == 4 {
			return binary.LittleEndian.Uint32(buf[4*i:])
		}
		return uint32(binary.LittleEndian.Uint16(buf[2*i:]))
	}
	var cm []byte
	if e.beta != 0 {
		cm = make([]byte, osz*M*ldc)
		for k := 0; k < M*ldc; k++ {
			v := float32(rng.Float64()*2 - 1)
			switch ot {
			case tile.F32:
				putOut(cm, k, math.Float32bits(v))
			case tile.F16:
				putOut(cm, k, uint32(tile.F32ToF16(v)))
			default:
				putOut(cm, k, uint32(tile.F32ToBF16(v)))
			}
		}
	}
	var bias []float32
	var biasB []byte
	if e.bias {
		for j := 0; j < N; j++ {
			v := float32(rng.Float64()*2 - 1)
			bias = append(bias, v)
			biasB = binary.LittleEndian.AppendUint32(biasB, math.Float32bits(v))
		}
	}
	d := make([]byte, osz*M*ldd)
	for k := 0; k < M*ldd; k++ {
		putOut(d, k, outPoison(c.Out))
	}
	mem := sim.NewMemory()
	const aBase, bBase, cBase, biasBase, dBase = 0x10000000000, 0x20000000000, 0x40000000000, 0x50000000000, 0x30000000000
	var cAddr, biasAddr uint64
	for _, r := range []struct {
		n    string
		base uint64
		data []byte
		addr *uint64
	}{{"A", aBase, a, nil}, {"B", bBase, b, nil}, {"D", dBase, d, nil}, {"C", cBase, cm, &cAddr}, {"bias", biasBase, biasB, &biasAddr}} {
		if len(r.data) == 0 {
			continue
		}
		if err := mem.Map(r.n, r.base, r.data); err != nil {
			t.Fatal(err)
		}
		if r.addr != nil {
			*r.addr = r.base
		}
	}
	// the launches come from sm86mm.Plan, the device-level operator the runtime
	// calls: the same grid, split and parameter packing
	prob := sm86mm.Problem{M: M, N: N, K: K, In: c.In, Out: c.Out, TransA: c.TransA, TransB: c.TransB,
		D: dBase, A: aBase, B: bBase, C: cAddr, Bias: biasAddr, LDD: ldd, LDA: lda, LDB: ldb, LDC: ldc,
		Alpha: e.alpha, Beta: e.beta, Act: e.act, Splits: max(e.splits, 1)}
	_, launches := sm86mm.Plan(prob, 1)
	if (e.splits > 1) != (len(launches) == 2) {
		t.Fatalf("%s M=%d N=%d K=%d %+v: plan has %d launches", c.Name(), M, N, K, e, len(launches))
	}
	for _, l := range launches {
		par, err := sm86mm.PackParams(l.Params)
		if err != nil {
			t.Fatal(err)
		}
		_, err = simFor(t, variantNamed(t, l.Func)).Launch(sim.Config{StrictScoreboards: true,
			Grid: l.Grid, Block: l.Block, SharedBytes: l.SharedBytes, Params: par, Memory: mem, Poison: true,
		})
		if err != nil {
			t.Fatalf("%s M=%d N=%d K=%d %+v: %v", l.Func, M, N, K, e, err)
		}
	}
	ref := make([]byte, 4*M*N)
	args := &fallback.MatMulArgs{
		M: M, N: N, K: K, Batch: 1,
		A:     fallback.Matrix{DType: dt, Data: a, Rows: ar, Cols: ac, LD: lda, Trans: c.TransA},
		B:     fallback.Matrix{DType: dt, Data: b, Rows: br, Cols: bc, LD: ldb, Trans: c.TransB},
		D:     fallback.Matrix{DType: tile.F32, Data: ref, Rows: M, Cols: N, LD: N},
		Alpha: e.alpha, Beta: e.beta, Bias: bias, Act: e.act,
	}
	if e.beta != 0 {
		args.C = &fallback.Matrix{DType: ot, Data: cm, Rows: M, Cols: N, LD: ldc}
	}
	fallback.MatMulRef(args)
	worst := 0.0
	for i := 0; i < M; i++ {
		for j := 0; j < ldd; j++ {
			bits := getOut(d, i*ldd+j)
			if j >= N {
				if bits != outPoison(c.Out) {
					t.Fatalf("%s M=%d N=%d K=%d %+v: padding D[%d][%d] written", c.Name(), M, N, K, e, i, j)
				}
				continue
			}
			if bits == outPoison(c.Out) {
				t.Fatalf("%s M=%d N=%d K=%d %+v: D[%d][%d] not written", c.Name(), M, N, K, e, i, j)
			}
			var got float64
			switch ot {
			case tile.F32:
				got = float64(math.Float32frombits(bits))
			case tile.F16:
				got = float64(tile.F16ToF32(uint16(bits)))
			default:
				got = float64(tile.BF16ToF32(uint16(bits)))
			}
			want := float64(math.Float32frombits(binary.LittleEndian.Uint32(ref[4*(i*N+j):])))
			er := math.Abs(got-want) / math.Max(math.Abs(want), 1)
			if math.IsNaN(got) {
				er = math.Inf(1)
			}
			if er > worst {
				worst = er
			}
		}
	}
	return worst
}

type shape struct{ M, N, K int }

// ciShapes is the representative subset: every tail kind (M, N below,
// at and above a tile; K one copy chunk, a partial K tile, several tiles
// so that the 4-stage ring wraps).
var ciShapes = []shape{
	{1, 1, 8}, {17, 8, 64}, {128, 128, 32}, {129, 127, 40}, {64, 256, 256}, {8, 17, 320}, {256, 129, 136},
}

func fullShapes() []shape {
	dims := []int{1, 8, 17, 64, 127, 128, 129, 256, 320}
	ks := []int{8, 64, 128, 256, 320} // the kernel requires K % 8 == 0
	var out []shape
	for _, m := range dims {
		for _, n := range dims {
			for _, k := range ks {
				out = append(out, shape{m, n, k})
			}
		}
	}
	return out
}

func tolerance(c sm86mm.Config) float64 {
	if c.In == tile.BF16 || c.Out == tile.BF16 {
		return 1e-2
	}
	return 1e-3
}

// TestSimMatchesReference: the 128x128 kernels, f32 out, alpha only, over
// the shape set (the full sweep with -sm86mm.long).
func TestSimMatchesReference(t *testing.T) {
	shapes := ciShapes
	if *long {
		shapes = fullShapes()
	}
	for _, c := range variants() {
		rng := rand.New(rand.NewSource(1))
		worst := 0.0
		for _, sh := range shapes {
			e := epi{alpha: 1, ldPad: 3}
			if sh.M%2 == 1 {
				e.alpha = -0.75
			}
			er := simCase(t, c, sh.M, sh.N, sh.K, e, rng)
			if er > tolerance(c) {
				t.Errorf("%s M=%d N=%d K=%d: max rel err %.3g > %.g", c.Name(), sh.M, sh.N, sh.K, er, tolerance(c))
			}
			worst = math.Max(worst, er)
		}
		t.Logf("%s: %d shapes, max rel err %.3g", c.Name(), len(shapes), worst)
	}
}

// epiShapes cover the epilogue's cases: vector and scalar stores, a
// partial 4-column group, rows past M.
var epiShapes = []shape{{17, 8, 64}, {129, 20, 40}, {64, 131, 96}}

// TestSimEpilogue sweeps output types, beta*C, bias and the activations.
func TestSimEpilogue(t *testing.T) {
	acts := []fallback.Activation{fallback.ActNone, fallback.ActReLU, fallback.ActGELU, fallback.ActSiLU}
	shapes := epiShapes
	if *long {
		shapes = fullShapes()
	}
	for ii, in := range sm86mm.Inputs() {
		for oi, out := range sm86mm.Outputs() {
			c := sm86mm.Config{In: in, Out: out}
			rng := rand.New(rand.NewSource(2))
			worst := 0.0
			for k, sh := range shapes {
				e := epi{alpha: 0.5, beta: []float32{0, -1.25}[k%2], bias: k%3 != 1, act: acts[(k+oi+ii)%4], ldPad: []int{0, 3, 4}[k%3]}
				er := simCase(t, c, sh.M, sh.N, sh.K, e, rng)
				if er > tolerance(c) {
					t.Errorf("%s M=%d N=%d K=%d %+v: max rel err %.3g > %.g", c.Name(), sh.M, sh.N, sh.K, e, er, tolerance(c))
				}
				worst = math.Max(worst, er)
			}
			// every activation with beta and bias once
			for _, a := range acts {
				e := epi{alpha: 1, beta: 0.5, bias: true, act: a}
				er := simCase(t, c, 33, 40, 32, e, rng)
				if er > tolerance(c) {
					t.Errorf("%s %+v: max rel err %.3g", c.Name(), e, er)
				}
				worst = math.Max(worst, er)
			}
			t.Logf("%s: max rel err %.3g", c.Name(), worst)
		}
	}
}

// TestSimTiles runs the 128x64 and 64x128 tiles over the shape set, with
// an epilogue setting per shape.
func TestSimTiles(t *testing.T) {
	shapes := ciShapes
	if *long {
		shapes = fullShapes()
	}
	acts := []fallback.Activation{fallback.ActNone, fallback.ActReLU, fallback.ActGELU, fallback.ActSiLU}
	for _, tl := range []sm86mm.Tile{sm86mm.Tile128x64, sm86mm.Tile64x128} {
		for _, in := range sm86mm.Inputs() {
			for _, out := range sm86mm.Outputs() {
				c := sm86mm.Config{In: in, Tile: tl, Out: out}
				if !*long && out != tile.F32 && in == tile.BF16 {
					continue // CI: the output types once per tile
				}
				rng := rand.New(rand.NewSource(3))
				worst := 0.0
				for k, sh := range shapes {
					e := epi{alpha: 1, ldPad: []int{3, 0, 4}[k%3]}
					if k%2 == 1 {
						e = epi{alpha: -0.75, beta: 0.5, bias: true, act: acts[k/2%4], ldPad: []int{3, 0, 4}[k%3]}
					}
					er := simCase(t, c, sh.M, sh.N, sh.K, e, rng)
					if er > tolerance(c) {
						t.Errorf("%s M=%d N=%d K=%d %+v: max rel err %.3g > %.g", c.Name(), sh.M, sh.N, sh.K, e, er, tolerance(c))
					}
					worst = math.Max(worst, er)
				}
				t.Logf("%s: %d shapes, max rel err %.3g", c.Name(), len(shapes), worst)
			}
		}
	}
}

// TestSimSplitK: the two-pass split-K scheme (the plain kernel over the
// first K chunk with beta*C and bias, then the split kernel's RED of the
// other chunks) against the reference, for every tile.
func TestSimSplitK(t *testing.T) {
	cases := []struct {
		shape
		e epi
	}{
		{shape{17, 40, 320}, epi{alpha: 1, splits: 3, ldPad: 3}},
		{shape{1, 8, 256}, epi{alpha: -0.5, splits: 4, bias: true}},
		{shape{129, 127, 200}, epi{alpha: 1, beta: 0.5, splits: 2, ldPad: 4}},
		{shape{64, 131, 96}, epi{alpha: 0.75, beta: -1, bias: true, splits: 3}},
	}
	for _, tl := range sm86mm.Tiles() {
		for _, in := range sm86mm.Inputs() {
			c := sm86mm.Config{In: in, Tile: tl, Out: tile.F32}
			rng := rand.New(rand.NewSource(4))
			worst := 0.0
			for _, k := range cases {
				er := simCase(t, c, k.M, k.N, k.K, k.e, rng)
				if er > tolerance(c) {
					t.Errorf("%s M=%d N=%d K=%d %+v: max rel err %.3g", c.Name(), k.M, k.N, k.K, k.e, er)
				}
				worst = math.Max(worst, er)
			}
			t.Logf("%s split-K: %d cases, max rel err %.3g", c.Name(), len(cases), worst)
		}
	}
}

// layouts are the transposed-operand forms (NT, TN, TT).
func layouts() [][2]bool { return [][2]bool{{false, true}, {true, false}, {true, true}} }

// TestSimTransposed: every tile with B transposed, A transposed and both,
// over the CI shapes (f16 and bf16 inputs alternate, f32 and a 16-bit
// output, an epilogue setting per shape); plus split-K once per layout.
// K need not be a multiple of 8 for TN (no operand is copied along K):
// one shape checks K = 17 there.
func TestSimTransposed(t *testing.T) {
	shapes := ciShapes
	if *long {
		shapes = fullShapes()
	}
	acts := []fallback.Activation{fallback.ActNone, fallback.ActReLU, fallback.ActGELU, fallback.ActSiLU}
	for li, l := range layouts() {
		for ti, tl := range sm86mm.Tiles() {
			in := sm86mm.Inputs()[(li+ti)%2]
			out := sm86mm.Outputs()[(li+2*ti)%3]
			c := sm86mm.Config{In: in, Tile: tl, Out: out, TransA: l[0], TransB: l[1]}
			rng := rand.New(rand.NewSource(5))
			worst := 0.0
			sh := shapes
			if l == [2]bool{true, false} {
				sh = append(append([]shape{}, shapes...), shape{33, 70, 17})
			}
			for k, s := range sh {
				e := epi{alpha: 1, ldPad: []int{3, 0, 4}[k%3]}
				if k%2 == 1 {
					e = epi{alpha: -0.75, beta: 0.5, bias: true, act: acts[k/2%4], ldPad: []int{3, 0, 4}[k%3]}
				}
				er := simCase(t, c, s.M, s.N, s.K, e, rng)
				if er > tolerance(c) {
					t.Errorf("%s M=%d N=%d K=%d %+v: max rel err %.3g > %.g", c.Name(), s.M, s.N, s.K, e, er, tolerance(c))
				}
				worst = math.Max(worst, er)
			}
			t.Logf("%s: %d shapes, max rel err %.3g", c.Name(), len(sh), worst)
		}
		c := sm86mm.Config{In: tile.F16, Tile: sm86mm.Tile64x128, Out: tile.F32, TransA: l[0], TransB: l[1]}
		rng := rand.New(rand.NewSource(6))
		for _, e := range []epi{{alpha: 1, splits: 3, ldPad: 3}, {alpha: 0.75, beta: -1, bias: true, splits: 2}} {
			if er := simCase(t, c, 17, 40, 320, e, rng); er > tolerance(c) {
				t.Errorf("%s split-K %+v: max rel err %.3g", c.Name(), e, er)
			}
		}
	}
}
