package mma

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/sass/sim"
	"github.com/tcrt-go/tcrt/tile"
)

// The sim tests run ptxas's sm_86 build of the matmul kernels in the SASS
// simulator (package sass) as PlanMatMul launches them, on fresh random
// inputs with ragged shapes, poisoned outputs (NaN bytes) and every
// epilogue, against a float64 reference. Every matmul kernel of the module
// runs (probeBaseline is zero); simMinKernels makes a regression in the
// simulator a failure rather than a skip.

// simMinKernels is how many matmul kernels must run in the simulator:
// all of them (4 tiles x 4 inputs x 4 layouts).
const simMinKernels = 64

type simKernel struct {
	sim  *sim.Simulator
	info cubin.KernelInfo
	err  error
}

var simKernels = sync.OnceValues(func() (map[string]*simKernel, error) {
	c, err := cubin.Read(cubinSM86)
	if err != nil {
		return nil, err
	}
	out := map[string]*simKernel{}
	for _, ki := range c.Kernels {
		k := &simKernel{info: ki}
		out[ki.Kernel.Name] = k
		p, err := sass.Decode(ki.Kernel.Code)
		if err != nil {
			k.err = err
			continue
		}
		if k.sim, k.err = sim.New(p); k.err != nil {
			continue
		}
		if u := k.sim.Unsupported(); len(u) > 0 {
			k.err = fmt.Errorf("%d instructions not simulated", len(u))
		}
	}
	return out, nil
})

// simLaunch runs one launch of a plan in m.
func simLaunch(k *simKernel, l Launch, m *sim.Memory) error {
	size := 0
	for i, p := range k.info.Kernel.Params {
		size = max(size, k.info.ParamOffsets[i]+p.Size)
	}
	params := make([]byte, size)
	for i, p := range k.info.Kernel.Params {
		for j := 0; j < p.Size && j < 8; j++ {
			params[k.info.ParamOffsets[i]+j] = byte(l.Params[i] >> (8 * j))
		}
	}
	_, err := k.sim.Launch(sim.Config{Grid: l.Grid, Block: l.Block, SharedBytes: k.info.Kernel.SharedStatic + l.SharedBytes,
		Params: params, Memory: m, Poison: true})
	return err
}

// simCase is one matmul of the sweep.
type simCase struct {
	m, n, k      int
	in           tile.DType
	out          tile.DType
	ta, tb       bool
	act          tile.Activation
	alpha, beta  float32
	bias, scales bool
	sms          int // device SMs (split-K when small)
}

func (c simCase) String() string {
	return fmt.Sprintf("%dx%dx%d %v->%v ta=%v tb=%v act=%d beta=%v bias=%v scales=%v sms=%d",
		c.m, c.n, c.k, c.in, c.out, c.ta, c.tb, c.act, c.beta, c.bias, c.scales, c.sms)
}

// encode stores x (rounded to the input type) and returns the stored
// values' exact values.
func encodeIn(in tile.DType, x []float32) ([]byte, []float64) {
	b := make([]byte, len(x)*in.Size())
	v := make([]float64, len(x))
	for i, f := range x {
		switch in {
		case tile.F16:
			h := tile.F32ToF16(f)
			binary.LittleEndian.PutUint16(b[2*i:], h)
			v[i] = float64(tile.F16ToF32(h))
		case tile.BF16:
			h := tile.F32ToBF16(f)
			binary.LittleEndian.PutUint16(b[2*i:], h)
			v[i] = float64(tile.BF16ToF32(h))
		case tile.E4M3:
			b[i] = tile.F32ToE4M3(f, tile.Saturate)
			v[i] = float64(tile.E4M3ToF32(b[i]))
		case tile.E5M2:
			b[i] = tile.F32ToE5M2(f, tile.Saturate)
			v[i] = float64(tile.E5M2ToF32(b[i]))
		}
	}
	return b, v
}

func f32Bytes(x []float32) []byte {
	b := make([]byte, 4*len(x))
	for i, f := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// outVal reads element i of an output buffer.
func outVal(o tile.DType, b []byte, i int) float64 {
	switch o {
	case tile.F16:
		return float64(tile.F16ToF32(binary.LittleEndian.Uint16(b[2*i:])))
	case tile.BF16:
		return float64(tile.BF16ToF32(binary.LittleEndian.Uint16(b[2*i:])))
	}
	return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
}

func actRef(act tile.Activation, x float64) float64 {
	switch act {
	case ActReLU:
		return max(x, 0)
	case ActGELU:
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	case ActSiLU:
		return x / (1 + math.Exp(-x))
	}
	return x
}

// runSimCase runs c in the simulator and checks it; it reports false when
// the simulator cannot run the kernel the plan picks.
func runSimCase(t *testing.T, r *rand.Rand, c simCase) bool {
	t.Helper()
	ks, err := simKernels()
	if err != nil {
		t.Fatal(err)
	}
	rows := func(tr bool, a, b int) (int, int) { // stored rows, row length (padded to 8)
		if tr {
			a, b = b, a
		}
		return a, (b + 7) / 8 * 8
	}
	ar, ald := rows(c.ta, c.m, c.k)
	br, bld := rows(c.tb, c.k, c.n)
	rnd := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		return x
	}
	ab, av := encodeIn(c.in, rnd(ar*ald))
	bb, bv := encodeIn(c.in, rnd(br*bld))
	mem := sim.NewMemory()
	put := func(name string, b []byte) uint64 {
		a, err := mem.Alloc(name, max(len(b), 1))
		if err != nil {
			t.Fatal(err)
		}
		copy(mem.Bytes(name), b)
		return a
	}
	osz := c.out.Size()
	cv := rnd(c.m * c.n)
	cb := make([]byte, c.m*c.n*osz)
	cval := make([]float64, c.m*c.n)
	for i, f := range cv {
		switch c.out {
		case tile.F16:
			h := tile.F32ToF16(f)
			binary.LittleEndian.PutUint16(cb[2*i:], h)
			cval[i] = float64(tile.F16ToF32(h))
		case tile.BF16:
			h := tile.F32ToBF16(f)
			binary.LittleEndian.PutUint16(cb[2*i:], h)
			cval[i] = float64(tile.BF16ToF32(h))
		default:
			binary.LittleEndian.PutUint32(cb[4*i:], math.Float32bits(f))
			cval[i] = float64(f)
		}
	}
	poison := make([]byte, c.m*c.n*osz+64)
	for i := range poison {
		poison[i] = 0xff // NaN in every output type
	}
	p := MatMul{M: c.m, N: c.n, K: c.k, In: c.in, Out: c.out, TransA: c.ta, TransB: c.tb,
		LDA: ald, LDB: bld, LDD: c.n, Alpha: c.alpha, Act: c.act}
	p.A, p.B = put("A", ab), put("B", bb)
	p.D = put("D", poison)
	if c.beta != 0 {
		p.Beta, p.C, p.LDC = c.beta, put("C", cb), c.n
	}
	var biasv []float32
	if c.bias {
		biasv = rnd(c.n)
		p.Bias = put("bias", f32Bytes(biasv))
	}
	sa, sb := []float32{1}, []float32{1}
	if c.scales {
		sa, sb = make([]float32, c.m), []float32{0.75}
		for i := range sa {
			sa[i] = 0.5 + r.Float32()
		}
		p.ScaleA, p.ScaleAMode = put("sa", f32Bytes(sa)), ScaleVector
		p.ScaleB, p.ScaleBMode = put("sb", f32Bytes(sb)), ScaleTensor
	}
	pl, err := PlanMatMul(Device{SM: 86, SMs: c.sms}, p)
	if err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	k := ks[pl.Launches[0].Func]
	if k == nil {
		t.Fatalf("%v: no kernel %s", c, pl.Launches[0].Func)
	}
	if k.err != nil {
		return false
	}
	for _, l := range pl.Launches {
		if err := simLaunch(k, l, mem); err != nil {
			t.Fatalf("%v: %s: %v", c, l.Func, err)
		}
	}
	d := mem.Bytes("D")
	for i, b := range d[c.m*c.n*osz:] {
		if b != 0xff {
			t.Fatalf("%v: byte %d past D written", c, i)
		}
	}
	ulp := map[tile.DType]float64{tile.F32: 1e-6, tile.F16: 1e-3, tile.BF16: 8e-3}[c.out]
	for i := 0; i < c.m; i++ {
		for j := 0; j < c.n; j++ {
			acc := 0.0
			for kk := 0; kk < c.k; kk++ {
				ai, bi := i*ald+kk, kk*bld+j
				if c.ta {
					ai = kk*ald + i
				}
				if c.tb {
					bi = j*bld + kk
				}
				a, b := av[ai], bv[bi]
				acc += a * b
			}
			s := float64(c.alpha)
			if c.scales {
				s *= float64(sa[i]) * float64(sb[0])
			}
			x := s * acc
			if c.beta != 0 {
				x += float64(c.beta) * cval[i*c.n+j]
			}
			if c.bias {
				x += float64(biasv[j])
			}
			want := actRef(c.act, x)
			got := outVal(c.out, d, i*c.n+j)
			tol := 2e-4*float64(c.k) + 2*ulp*(1+math.Abs(want))
			if c.act == ActGELU || c.act == ActSiLU {
				tol += 2e-3 * (1 + math.Abs(want)) // tanh.approx.f32
			}
			if math.IsNaN(got) || math.Abs(got-want) > tol {
				t.Fatalf("%v (%s): D[%d,%d] = %v, reference %v", c, k.info.Kernel.Name, i, j, got, want)
			}
		}
	}
	return true
}

// simCases is the sweep: M, N, K from 1, 7, 129, 1000 mixes, all four
// layouts, f16/bf16/e4m3/e5m2, every output type and epilogue, split-K.
func simCases(long bool) []simCase {
	shapes := [][3]int{{1, 7, 8}, {7, 129, 64}, {129, 70, 40}, {65, 129, 24}, {1, 1, 1}, {33, 7, 129}}
	if long {
		shapes = append(shapes, [3]int{129, 1000, 16}, [3]int{1000, 7, 24}, [3]int{200, 300, 136})
	}
	var out []simCase
	for si, s := range shapes {
		for l, lay := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
			// every shape sees every layout; types and epilogues rotate
			// independently of the layout
			x := si + l
			in := Inputs()[x%4]
			out = append(out, simCase{m: s[0], n: s[1], k: s[2], in: in, out: Outputs()[(si+2*l)%3], ta: lay[0], tb: lay[1],
				act: tile.Activation((x + 1) % 4), alpha: []float32{1, 0.5}[si%2], beta: []float32{0, 0.5}[x%2], bias: x%3 == 1,
				scales: tile.IsFloat8(in) && x%2 == 0, sms: 82})
		}
	}
	// split-K: small M and N, K >= 1024, on a 2-SM device
	out = append(out, simCase{m: 7, n: 129, k: 1024, in: tile.F16, out: tile.F32, tb: true, alpha: 1, sms: 2},
		simCase{m: 1, n: 7, k: 1032, in: tile.BF16, out: tile.F32, tb: true, alpha: 1, beta: 0.25, bias: true, sms: 2})
	return out
}

// TestSimMatMul runs the sweep on the kernels the simulator can run.
func TestSimMatMul(t *testing.T) {
	r := rand.New(rand.NewPCG(rand.Uint64(), 16))
	ran, skipped := 0, 0
	for _, c := range simCases(!testing.Short()) {
		if runSimCase(t, r, c) {
			ran++
		} else {
			skipped++
		}
	}
	t.Logf("%d cases ran, %d skipped (their kernel is outside the simulator: probeBaseline)", ran, skipped)
	ks, err := simKernels()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for name, k := range ks {
		if k.err == nil && len(name) > 9 && name[:9] == "tcrt_mma_" && name[9] >= '0' && name[9] <= '9' {
			n++
		}
	}
	if n < simMinKernels {
		t.Errorf("%d matmul kernels run in the simulator, want >= %d", n, simMinKernels)
	}
	if ran == 0 {
		t.Error("no case ran")
	}
}
