package ops_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/tile"
)

// The GPU suite: every registered GPU kernel through ops.*, against the CPU
// backend on the same inputs. It runs on the simulated SM86/SM89 device in
// every build, and on the real GPU in a -tags cuda build (gpuSuiteBackends
// in gpu_cuda_test.go), so one suite covers both devices.

// gpuSuiteBackends lists the devices the suite runs on; a -tags cuda build
// adds CUDA.
var gpuSuiteBackends = []struct {
	kind runtime.BackendKind
	arch int
}{{runtime.BackendSim, 86}, {runtime.BackendSim, 89}}

// forEachGPU runs fn on every device of the suite that opens.
func forEachGPU(t *testing.T, fn func(t *testing.T, rt *runtime.Runtime)) {
	if os.Getenv("TCRT_BACKEND") != "" || os.Getenv("TCRT_KERNEL") != "" {
		t.Skip("the GPU suite picks its own devices and kernels; TCRT_BACKEND/TCRT_KERNEL are set")
	}
	for _, b := range gpuSuiteBackends {
		t.Run(fmt.Sprintf("%s%d", b.kind, b.arch), func(t *testing.T) {
			rt, err := runtime.Open(runtime.Options{Backend: b.kind, SimArch: b.arch})
			if err != nil {
				if b.kind != runtime.BackendSim {
					t.Skip(err)
				}
				t.Fatal(err)
			}
			defer rt.Close()
			fn(t, rt)
		})
	}
}

// needSM86 skips a test of the SM86/SM89 SASS kernels on other GPUs.
func needSM86(t *testing.T, rt *runtime.Runtime) {
	t.Helper()
	if sm := rt.Device().SM(); sm < 86 || sm > 89 {
		t.Skipf("the SASS kernels need sm_86..89; device is sm_%d", sm)
	}
}

// chosen asserts the kernel ops would run.
func chosen(t *testing.T, e ops.Explanation, err error, want string) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if k := e.Chosen(); k == nil || k.Name != want {
		t.Fatalf("chose %v, want %s:\n%s", k, want, e)
	}
}

func randF32(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = rng.Float32()*2 - 1
	}
	return v
}

func bufF32(t testing.TB, rt *runtime.Runtime, d tile.DType, v []float32, shape ...int) *runtime.Buffer {
	t.Helper()
	b, err := rt.Alloc(d, shape...)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteFloat32(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	return b
}

func readF32(t testing.TB, b *runtime.Buffer) []float32 {
	t.Helper()
	v := make([]float32, b.Len())
	if err := b.ReadFloat32(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestGPUMatMulSM86 runs the SASS matmul (every layout, input and output
// type, every tile, split-K, epilogues) through ops.MatMul and compares it
// with the CPU reference kernel on the same (rounded) inputs.
func TestGPUMatMulSM86(t *testing.T) {
	ctx := context.Background()
	ref, err := runtime.Open(runtime.Options{Backend: runtime.BackendCPU, Kernel: "cpu.matmul.reference"})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	type mcase struct {
		m, n, k   int
		in, out   tile.DType
		ta, tb    bool
		act       ops.Activation
		beta      float32
		bias      bool
		wantSplit bool
	}
	var cases []mcase
	shapes := [][3]int{{1, 7, 8}, {7, 129, 64}, {129, 1000, 16}, {1000, 7, 24}, {65, 129, 40}}
	i := 0
	for _, s := range shapes {
		for _, lay := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
			in := []tile.DType{tile.F16, tile.BF16}[i%2]
			out := []tile.DType{tile.F32, tile.F16, tile.BF16}[i%3]
			act := []ops.Activation{ops.ActNone, ops.ActReLU, ops.ActGELU, ops.ActSiLU}[i%4]
			cases = append(cases, mcase{m: s[0], n: s[1], k: s[2], in: in, out: out, ta: lay[0], tb: lay[1], act: act,
				beta: []float32{0, 0.5}[i%2], bias: i%3 == 1})
			i++
		}
	}
	// split-K: small M and N, K >= 1024, f32 out, no activation
	cases = append(cases, mcase{m: 7, n: 129, k: 1024, in: tile.F16, out: tile.F32, wantSplit: true},
		mcase{m: 1, n: 7, k: 1032, in: tile.BF16, out: tile.F32, tb: true, beta: 0.25, bias: true, wantSplit: true})
	if testing.Short() {
		cases = append(cases[:8:8], cases[len(cases)-2:]...)
	}
	forEachGPU(t, func(t *testing.T, rt *runtime.Runtime) {
		needSM86(t, rt)
		rng := rand.New(rand.NewPCG(rand.Uint64(), 86))
		for _, c := range cases {
			name := fmt.Sprintf("%dx%dx%d %v->%v ta=%v tb=%v act=%v beta=%v bias=%v", c.m, c.n, c.k, c.in, c.out, c.ta, c.tb, c.act, c.beta, c.bias)
			ashape, bshape := []int{c.m, c.k}, []int{c.k, c.n}
			if c.ta {
				ashape = []int{c.k, c.m}
			}
			if c.tb {
				bshape = []int{c.n, c.k}
			}
			// operands copied along M or N need their rows padded to 8
			// readable elements (the kernel's Supports rule): pad the
			// stored row length to a multiple of 8
			pad := func(s []int) []int { return []int{s[0], (s[1] + 7) / 8 * 8} }
			ashape, bshape = pad(ashape), pad(bshape)
			av, bv := randF32(rng, ashape[0]*ashape[1]), randF32(rng, bshape[0]*bshape[1])
			cv, biasv := randF32(rng, c.m*c.n), randF32(rng, c.n)
			var outs [2][]float32
			for j, r := range []*runtime.Runtime{rt, ref} {
				a := bufF32(t, r, c.in, av, ashape...)
				b := bufF32(t, r, c.in, bv, bshape...)
				d := bufF32(t, r, c.out, cv, c.m, c.n) // C is D, updated in place
				am := ops.Matrix{Buf: a, Rows: ashape[0], Cols: c.k, LD: ashape[1], Trans: c.ta}
				if c.ta {
					am.Cols = c.m
				}
				bm := ops.Matrix{Buf: b, Rows: bshape[0], Cols: c.n, LD: bshape[1], Trans: c.tb}
				if c.tb {
					bm.Cols = c.k
				}
				dm := ops.Matrix{Buf: d, Rows: c.m, Cols: c.n, LD: c.n}
				opt := ops.DefaultMatMulOptions()
				opt.Act, opt.Beta = c.act, c.beta
				if c.beta != 0 {
					opt.C = &dm
				}
				if c.bias {
					opt.Bias = bufF32(t, r, tile.F32, biasv, c.n)
				}
				if r == rt {
					e, err := ops.ExplainMatMul(r, dm, am, bm, &opt)
					chosen(t, e, err, "sass.matmul.sm86mm")
				}
				if err := ops.MatMul(ctx, r, dm, am, bm, &opt); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				outs[j] = readF32(t, d)
			}
			ulp := map[tile.DType]float64{tile.F32: 1e-6, tile.F16: 1e-3, tile.BF16: 8e-3}[c.out]
			for e := range outs[0] {
				got, want := float64(outs[0][e]), float64(outs[1][e])
				if math.IsNaN(got) || math.Abs(got-want) > 2e-4*float64(c.k)+2*ulp*(1+math.Abs(want)) {
					t.Fatalf("%s: element %d = %v, reference %v", name, e, got, want)
				}
			}
		}
	})
}

// TestGPUQuantizeSM86 runs the SASS per-tensor float8 quantiser through
// ops.Quantize, bit for bit against the CPU, on both architectures.
func TestGPUQuantizeSM86(t *testing.T) {
	ctx := context.Background()
	cpu := openTest(t)
	forEachGPU(t, func(t *testing.T, rt *runtime.Runtime) {
		needSM86(t, rt)
		rng := rand.New(rand.NewPCG(rand.Uint64(), 8))
		want := "sass.quantize.f8.sm86"
		if rt.Device().SM() == 89 {
			want = "sass.quantize.f8.sm89"
		}
		for _, n := range []int{1, 7, 129, 1000, 4099} {
			for _, q := range []tile.DType{tile.E4M3, tile.E5M2} {
				x := make([]float32, n)
				for i := range x { // wide range: saturation, subnormals, NaN, ±0
					x[i] = float32(math.Ldexp(rng.Float64()*2-1, rng.IntN(40)-20))
					switch rng.IntN(50) {
					case 0:
						x[i] = float32(math.NaN())
					case 1:
						x[i] = float32(math.Copysign(0, -1))
					case 2:
						x[i] = float32(math.Inf(1 - 2*rng.IntN(2)))
					}
				}
				scale := float32(math.Ldexp(1, rng.IntN(9)-4))
				var outs [2][]byte
				for j, r := range []*runtime.Runtime{rt, cpu} {
					xb := bufF32(t, r, tile.F32, x, n)
					qb := alloc(t, r, q, n)
					poison(t, qb)
					opt := &ops.QuantizeOptions{Source: ops.ScaleGiven, Scale: scale}
					if r == rt {
						e, err := ops.ExplainQuantize(r, qb, xb, opt)
						chosen(t, e, err, want)
					}
					if err := ops.Quantize(ctx, r, qb, xb, opt); err != nil {
						t.Fatal(err)
					}
					outs[j] = rawBytes(t, qb)
				}
				if string(outs[0]) != string(outs[1]) {
					for i := range outs[0] {
						if outs[0][i] != outs[1][i] {
							t.Fatalf("%v n=%d scale %v: element %d of %v: got %#02x, CPU %#02x", q, n, scale, i, x[i], outs[0][i], outs[1][i])
						}
					}
				}
			}
		}
	})
}

// TestGPUScatterAddSM86 runs the SASS float scatter-adds (f32, f16, bf16)
// through ops.MScatter against the CPU bit for bit: unique indices on
// arbitrary bits (NaNs, subnormals, ±0, ±Inf included), duplicates on small
// integers (which every order sums exactly).
func TestGPUScatterAddSM86(t *testing.T) {
	ctx := context.Background()
	cpu := openTest(t)
	forEachGPU(t, func(t *testing.T, rt *runtime.Runtime) {
		needSM86(t, rt)
		rng := rand.New(rand.NewPCG(rand.Uint64(), 9))
		for _, d := range []tile.DType{tile.F32, tile.F16, tile.BF16} {
			for _, c := range []struct {
				rows, cols, lanes int
				mode              ops.IndexMode
				unique            bool
				oob               ops.OOB
				it                tile.DType
			}{
				{1, 1, 1, ops.IndexRows, true, ops.OOBSkip, tile.S32},
				{7, 3, 7, ops.IndexRows, true, ops.OOBError, tile.U64},
				{129, 5, 100, ops.IndexRows, false, ops.OOBSkip, tile.S64},
				{1000, 1, 1000, ops.IndexElements, true, ops.OOBClamp, tile.S32},
				{1000, 1, 3000, ops.IndexElements, false, ops.OOBWrap, tile.U32},
			} {
				name := fmt.Sprintf("%v %+v", d, c)
				lanes, isz, esz := c.lanes, c.it.Size(), d.Size()
				perm := rng.Perm(max(c.rows, lanes))
				idxRaw := make([]byte, isz*lanes)
				for i := range lanes {
					v := int64(rng.IntN(c.rows))
					if c.unique {
						v = int64(perm[i])
					}
					if c.oob != ops.OOBError && !c.unique && rng.IntN(20) == 0 {
						v = int64(c.rows + rng.IntN(5)) // skipped, clamped or wrapped
					}
					for k := range isz {
						idxRaw[isz*i+k] = byte(v >> (8 * k))
					}
				}
				srcCols := c.cols
				if c.mode == ops.IndexElements {
					srcCols = 1
				}
				vals := func(n int) []byte {
					b := make([]byte, n*esz)
					for i := range n {
						v := rng.Uint64()
						if !c.unique {
							v = tile.FromFloat32(d, float32(rng.IntN(9)-4))
						}
						for k := range esz {
							b[esz*i+k] = byte(v >> (8 * k))
						}
					}
					return b
				}
				mem0, src := vals(c.rows*c.cols), vals(lanes*srcCols)
				var outs [2][]byte
				for j, r := range []*runtime.Runtime{rt, cpu} {
					mem := bufWith(t, r, d, mem0, c.rows, c.cols)
					sb := bufWith(t, r, d, src, lanes, srcCols)
					ib := bufWith(t, r, c.it, idxRaw, lanes)
					opt := &ops.ScatterOptions{Mode: c.mode, Op: ops.ScatterAdd, OOB: c.oob}
					if r == rt {
						e, err := ops.ExplainMScatter(r, mem, ops.DenseTile(ib), ops.DenseTile(sb), opt)
						chosen(t, e, err, "sass.mscatter")
					}
					if err := ops.MScatter(ctx, r, mem, ops.DenseTile(ib), ops.DenseTile(sb), opt); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					outs[j] = rawBytes(t, mem)
				}
				for e := 0; e < len(outs[0]); e += esz {
					if string(outs[0][e:e+esz]) == string(outs[1][e:e+esz]) {
						continue
					}
					// a NaN held and a NaN arriving: either may survive
					// (fallback.Combine), so only NaN-ness is compared
					if rawNaN(d, mem0[e:e+esz]) && rawNaN(d, outs[0][e:e+esz]) && rawNaN(d, outs[1][e:e+esz]) {
						continue
					}
					t.Fatalf("%s: element %d = %x, CPU %x", name, e/esz, outs[0][e:e+esz], outs[1][e:e+esz])
				}
			}
		}
	})
}

// TestGPUScatterDeterministicSM86: a Deterministic store runs on the SASS
// kernels (claim pass, the largest lane wins) with the CPU's bytes under
// many duplicates; a Deterministic float add stays on the host, and
// Explain says why.
func TestGPUScatterDeterministicSM86(t *testing.T) {
	ctx := context.Background()
	cpu := openTest(t)
	forEachGPU(t, func(t *testing.T, rt *runtime.Runtime) {
		needSM86(t, rt)
		rng := rand.New(rand.NewPCG(rand.Uint64(), 10))
		for _, d := range []tile.DType{tile.U8, tile.BF16, tile.F32, tile.S64} {
			for _, mode := range []ops.IndexMode{ops.IndexRows, ops.IndexElements} {
				rows, cols, lanes := 13, 3, 129
				if mode == ops.IndexElements {
					cols = 1
				}
				esz := d.Size()
				mem0 := make([]byte, rows*cols*esz)
				src := make([]byte, lanes*cols*esz)
				for _, b := range [][]byte{mem0, src} {
					for i := range b {
						b[i] = byte(rng.Uint32())
					}
				}
				idxRaw := make([]byte, 4*lanes)
				for i := range lanes {
					v := rng.IntN(rows + 3) // some skipped
					idxRaw[4*i], idxRaw[4*i+1] = byte(v), byte(v>>8)
				}
				opt := &ops.ScatterOptions{Mode: mode, Op: ops.ScatterStore, OOB: ops.OOBSkip, Deterministic: true}
				var outs [2][]byte
				for j, r := range []*runtime.Runtime{rt, cpu} {
					mem := bufWith(t, r, d, mem0, rows, cols)
					sb := bufWith(t, r, d, src, lanes, cols)
					ib := bufWith(t, r, tile.S32, idxRaw, lanes)
					if r == rt {
						e, err := ops.ExplainMScatter(r, mem, ops.DenseTile(ib), ops.DenseTile(sb), opt)
						chosen(t, e, err, "sass.mscatter")
					}
					if err := ops.MScatter(ctx, r, mem, ops.DenseTile(ib), ops.DenseTile(sb), opt); err != nil {
						t.Fatalf("%v %v: %v", d, mode, err)
					}
					outs[j] = rawBytes(t, mem)
				}
				if string(outs[0]) != string(outs[1]) {
					t.Fatalf("%v %v: device %x, CPU %x", d, mode, outs[0], outs[1])
				}
			}
		}
		mem := bufF32(t, rt, tile.F32, randF32(rng, 8), 8)
		sb := bufF32(t, rt, tile.F32, randF32(rng, 4), 4)
		ib := bufWith(t, rt, tile.S32, make([]byte, 16), 4)
		e, err := ops.ExplainMScatter(rt, mem, ops.DenseTile(ib), ops.DenseTile(sb),
			&ops.ScatterOptions{Mode: ops.IndexElements, Op: ops.ScatterAdd, Deterministic: true})
		if err != nil {
			t.Fatal(err)
		}
		if k := e.Chosen(); k == nil || !strings.HasPrefix(k.Name, "host.") {
			t.Fatalf("a deterministic f32 add chose %v, want the host fallback:\n%s", k, e)
		}
		if !strings.Contains(e.String(), "sort by destination") {
			t.Fatalf("Explain does not say why the SASS kernel declines:\n%s", e)
		}
	})
}

// oobModule is a test-only module: one kernel that loads from its pointer
// parameter plus a byte offset parameter and stores the word to its second
// pointer.
func oobModule(t *testing.T) *backend.Module {
	t.Helper()
	p, err := sass.Parse(`
S2R R0, SR_TID.X ;
MOV R2, c[0x0][0x160] ;
MOV R3, c[0x0][0x164] ;
MOV R4, c[0x0][0x170] ;
IADD3 R2, P0, R2, R4, RZ ;
IADD3.X R3, RZ, R3, RZ, P0, !PT ;
LDG.E R6, [R2.64] ;
MOV R8, c[0x0][0x168] ;
MOV R9, c[0x0][0x16c] ;
STG.E [R8.64], R6 ;
EXIT ;
BRA 0xb0 ;
`)
	if err != nil {
		t.Fatal(err)
	}
	code, err := sass.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	var cubins = map[int][]byte{}
	for _, arch := range []int{86, 89} {
		c, err := cubin.Write(arch, cubin.Kernel{Name: "tcrt_test_oob", Code: code, Registers: 16,
			Params: []cubin.Param{{Size: 8, Align: 8}, {Size: 8, Align: 8}, {Size: 4, Align: 4}}})
		if err != nil {
			t.Fatal(err)
		}
		cubins[arch] = c
	}
	return &backend.Module{Name: "tcrt_test_oob", Cubins: cubins}
}

// TestGPUKernelFault: a kernel reading out of bounds fails with a device
// error naming it, its store never happens, and the runtime stays usable.
func TestGPUKernelFault(t *testing.T) {
	ctx := context.Background()
	forEachGPU(t, func(t *testing.T, rt *runtime.Runtime) {
		if !rt.Device().Simulated {
			t.Skip("an illegal address is sticky for a real CUDA context")
		}
		mod := oobModule(t)
		src := bufF32(t, rt, tile.F32, []float32{1, 2, 3, 4}, 4)
		dst := bufF32(t, rt, tile.F32, []float32{-1}, 1)
		ps, _ := engine.DevicePtr(engBuf(src))
		pd, _ := engine.DevicePtr(engBuf(dst))
		s := rt.DefaultStream()
		launch := func(off uint64) error {
			g := &engine.GPULaunch{Module: mod, Func: "tcrt_test_oob", Grid: [3]int{1}, Block: [3]int{1},
				Params: []uint64{ps, pd, off}}
			if err := engine.LaunchGPU(engStream(s), g); err != nil {
				return err
			}
			return s.Synchronize(ctx)
		}
		err := launch(1 << 30) // far past the buffer
		if !errors.Is(err, runtime.ErrDevice) || !strings.Contains(err.Error(), "tcrt_test_oob") ||
			!strings.Contains(err.Error(), "CTA (0,0,0), warp 0, lane 0") {
			t.Fatalf("out-of-bounds launch: %v", err)
		}
		if v := readF32(t, dst); v[0] != -1 {
			t.Fatalf("the faulting kernel wrote %v", v)
		}
		if err := launch(8); err != nil { // the runtime is still usable
			t.Fatal(err)
		}
		if v := readF32(t, dst); v[0] != 3 {
			t.Fatalf("after the fault, a good launch wrote %v, want 3", v)
		}
	})
}

// TestGPUStreams runs quantisations on several streams at once (go test
// -race checks the device's locking) and checks each against the CPU.
func TestGPUStreams(t *testing.T) {
	ctx := context.Background()
	cpu := openTest(t)
	forEachGPU(t, func(t *testing.T, rt *runtime.Runtime) {
		const streams, n = 4, 1000
		rng := rand.New(rand.NewPCG(rand.Uint64(), 4))
		x := randF32(rng, n)
		xc := bufF32(t, cpu, tile.F32, x, n)
		qc := alloc(t, cpu, tile.E4M3, n)
		if err := ops.Quantize(ctx, cpu, qc, xc, &ops.QuantizeOptions{Source: ops.ScaleGiven, Scale: 3}); err != nil {
			t.Fatal(err)
		}
		want := rawBytes(t, qc)
		var wg sync.WaitGroup
		errs := make(chan error, streams)
		for range streams {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, err := rt.NewStream()
				if err != nil {
					errs <- err
					return
				}
				defer s.Close()
				xb := bufF32(t, rt, tile.F32, x, n)
				qbs := make([]*runtime.Buffer, 3)
				for i := range qbs {
					qbs[i] = alloc(t, rt, tile.E4M3, n)
					if err := ops.Quantize(ctx, rt, qbs[i], xb, &ops.QuantizeOptions{Source: ops.ScaleGiven, Scale: 3, Stream: s}); err != nil {
						errs <- err
						return
					}
				}
				if err := s.Synchronize(ctx); err != nil {
					errs <- err
					return
				}
				for _, q := range qbs {
					got := make([]byte, n)
					if err := q.Read(ctx, 0, got); err != nil || string(got) != string(want) {
						errs <- fmt.Errorf("stream result differs from the CPU (%v)", err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	})
}

// TestGPUHostFallbackAttention: a call no GPU kernel covers (f32 attention)
// runs on the host fallback of the GPU device and matches the reference.
func TestGPUHostFallbackAttention(t *testing.T) {
	ctx := context.Background()
	forEachGPU(t, func(t *testing.T, rt *runtime.Runtime) {
		rng := rand.New(rand.NewPCG(rand.Uint64(), 5))
		shape := []int{1, 7, 2, 64}
		n := 7 * 2 * 64
		q := bufF32(t, rt, tile.F32, randF32(rng, n), shape...)
		k := bufF32(t, rt, tile.F32, randF32(rng, n), shape...)
		v := bufF32(t, rt, tile.F32, randF32(rng, n), shape...)
		o := alloc(t, rt, tile.F32, shape...)
		poison(t, o)
		e, err := ops.ExplainAttention(rt, ops.AttnTensorOf(o), ops.AttnTensorOf(q), ops.AttnTensorOf(k), ops.AttnTensorOf(v), nil)
		if err != nil {
			t.Fatal(err)
		}
		if c := e.Chosen(); c == nil || !strings.HasPrefix(c.Name, "host.") {
			t.Fatalf("chose %v:\n%s", c, e)
		}
		if err := ops.Attention(ctx, rt, ops.AttnTensorOf(o), ops.AttnTensorOf(q), ops.AttnTensorOf(k), ops.AttnTensorOf(v), nil); err != nil {
			t.Fatal(err)
		}
		args, _, err := ops.AttentionArgs(rt, ops.AttnTensorOf(o), ops.AttnTensorOf(q), ops.AttnTensorOf(k), ops.AttnTensorOf(v), nil)
		if err != nil {
			t.Fatal(err)
		}
		ref := alloc(t, rt, tile.F32, shape...)
		args.O.Buf = engBuf(ref)
		if err := engine.WithHostArgs(ctx, engRT(rt), args, func() error {
			fallback.AttentionRef(engine.HostAttentionArgs(args, 1))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if e := maxErr(t, "O", o, ref, -1); e > tolFor(tile.F32) {
			t.Fatalf("max relative error %g", e)
		}
	})
}

// TestGPUAttentionSM86 runs the SASS flash attention through ops.Attention
// (prefill, causal, GQA, window, soft-cap, varlen with an empty sequence,
// the LSE, split-KV decode) against the CPU on the same inputs.
func TestGPUAttentionSM86(t *testing.T) {
	ctx := context.Background()
	cpu := openTest(t)
	type acase struct {
		dt             tile.DType
		batch, sq, skv int
		hq, hkv, d     int
		causal         bool
		window         int // -1: none
		softcap        float32
		cuQ, cuKV      []int
		splits         int // forced KVSplits
	}
	cases := []acase{
		{tile.F16, 1, 17, 17, 4, 4, 64, true, -1, 0, nil, nil, 0},
		{tile.BF16, 2, 7, 129, 8, 2, 128, false, -1, 0, nil, nil, 0},
		{tile.F16, 1, 64, 127, 4, 1, 64, true, 32, 30, nil, nil, 0},
		{tile.BF16, 1, 1, 1000, 8, 8, 128, false, -1, 0, nil, nil, 0}, // decode shape: split-KV
		{tile.F16, 3, 0, 0, 4, 2, 64, true, -1, 0, []int{0, 5, 5, 21}, []int{0, 9, 9, 40}, 0},
		{tile.BF16, 1, 33, 70, 4, 2, 256, true, -1, 5, nil, nil, 0}, // head dimension 256
		{tile.F16, 2, 1, 600, 4, 1, 256, false, -1, 0, nil, nil, 0}, // d=256 decode: split-KV
		// varlen queries with split-KV (forced), an empty query sequence
		{tile.BF16, 3, 0, 0, 4, 2, 128, true, -1, 0, []int{0, 2, 2, 9}, []int{0, 300, 340, 700}, 3},
	}
	forEachGPU(t, func(t *testing.T, rt *runtime.Runtime) {
		needSM86(t, rt)
		rng := rand.New(rand.NewPCG(rand.Uint64(), 15))
		for _, c := range cases {
			name := fmt.Sprintf("%+v", c)
			qRows, kRows, batch := c.sq, c.skv, c.batch
			if c.cuQ != nil {
				qRows, kRows, batch = c.cuQ[len(c.cuQ)-1], c.cuKV[len(c.cuKV)-1], 1
			}
			qv := randF32(rng, batch*qRows*c.hq*c.d)
			kv := randF32(rng, batch*kRows*c.hkv*c.d)
			vv := randF32(rng, batch*kRows*c.hkv*c.d)
			lseN := c.batch * c.hq * c.sq
			if c.cuQ != nil {
				lseN = qRows * c.hq
			}
			var outs, lses [2][]float32
			for j, r := range []*runtime.Runtime{rt, cpu} {
				q := bufF32(t, r, c.dt, qv, batch, qRows, c.hq, c.d)
				k := bufF32(t, r, c.dt, kv, batch, kRows, c.hkv, c.d)
				v := bufF32(t, r, c.dt, vv, batch, kRows, c.hkv, c.d)
				o := alloc(t, r, c.dt, batch, qRows, c.hq, c.d)
				poison(t, o)
				lse := alloc(t, r, tile.F32, lseN)
				poison(t, lse)
				opt := &ops.AttentionOptions{Causal: c.causal, SoftCap: c.softcap, LSE: lse, CuSeqQ: c.cuQ, CuSeqKV: c.cuKV, KVSplits: c.splits}
				if c.window >= 0 {
					opt.Window = &ops.Window{Left: c.window, Right: -1}
				}
				at := func(b *runtime.Buffer) ops.AttnTensor { return ops.AttnTensorOf(b) }
				if r == rt {
					e, err := ops.ExplainAttention(r, at(o), at(q), at(k), at(v), opt)
					chosen(t, e, err, "sass.attention.sm86attn")
				}
				c0, counting := r.DeviceCounters()
				if err := ops.Attention(ctx, r, at(o), at(q), at(k), at(v), opt); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if c1, _ := r.DeviceCounters(); counting && r == rt && (c.sq == 1 || c.splits > 1) && c1.Launches-c0.Launches != 2 {
					t.Fatalf("%s: decode ran %d launches, want split-KV's 2", name, c1.Launches-c0.Launches)
				}
				outs[j], lses[j] = readF32(t, o), readF32(t, lse)
			}
			tol := map[tile.DType]float64{tile.F16: 2e-3, tile.BF16: 1e-2}[c.dt]
			for i := range outs[0] {
				if d := math.Abs(float64(outs[0][i] - outs[1][i])); !(d <= tol) {
					t.Fatalf("%s: O[%d] = %v, CPU %v", name, i, outs[0][i], outs[1][i])
				}
			}
			for i := range lses[0] {
				g, w := float64(lses[0][i]), float64(lses[1][i])
				if !(math.Abs(g-w) <= 1e-3*(1+math.Abs(w))) && !(math.IsInf(g, -1) && math.IsInf(w, -1)) {
					t.Fatalf("%s: LSE[%d] = %v, CPU %v", name, i, g, w)
				}
			}
		}
	})
}

// TestGPUFloat8SM86: the SASS amax, dequantisation (a bad scale returns
// the CPU's error with Y unchanged), MX and block-scaled quantisation
// (scales from the amax, margins, powers of two) through ops, bit for bit
// against the CPU, on odd shapes.
func TestGPUFloat8SM86(t *testing.T) {
	ctx := context.Background()
	cpu := openTest(t)
	forEachGPU(t, func(t *testing.T, rt *runtime.Runtime) {
		needSM86(t, rt)
		rng := rand.New(rand.NewPCG(rand.Uint64(), 88))
		mxKernel, blocksKernel := "sass.quantize.mx.sm86", "sass.quantize.blocks.sm86"
		if rt.Device().SM() == 89 {
			mxKernel, blocksKernel = "sass.quantize.mx.sm89", "sass.quantize.blocks.sm89"
		}
		for _, sh := range [][2]int{{1, 32}, {7, 64}, {129, 40}, {3, 1000}} {
			rows, cols := sh[0], sh[1]
			n := rows * cols
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(math.Ldexp(rng.Float64()*2-1, rng.IntN(30)-15))
			}
			for _, q := range []tile.DType{tile.E4M3, tile.E5M2} {
				for gi, g := range []ops.Granularity{ops.PerTensor, ops.PerRow, ops.Block1x128, ops.MX} {
					ytype := []tile.DType{tile.F16, tile.BF16, tile.F32}[(gi+int(rows))%3] // every output type
					name := fmt.Sprintf("%dx%d %v %v -> %v", rows, cols, q, g, ytype)
					type res struct{ amax, q, inv, y []byte }
					var rs [2]res
					for j, r := range []*runtime.Runtime{rt, cpu} {
						xb := bufF32(t, r, tile.F32, x, rows, cols)
						sshape := ops.ScaleShape(g, []int{rows, cols})
						am := alloc(t, r, tile.F32, sshape...)
						poison(t, am)
						if r == rt {
							e, err := ops.ExplainAmax(r, am, xb, &ops.AmaxOptions{Granularity: g})
							chosen(t, e, err, "sass.amax")
						}
						if err := ops.Amax(ctx, r, am, xb, &ops.AmaxOptions{Granularity: g}); err != nil {
							t.Fatalf("%s amax: %v", name, err)
						}
						qb := alloc(t, r, q, rows, cols)
						sdt := tile.F32
						if g == ops.MX {
							sdt = tile.U8
						}
						inv := alloc(t, r, sdt, sshape...)
						qo := &ops.QuantizeOptions{Granularity: g, ScaleInv: inv}
						if g != ops.MX {
							qo.Margin, qo.PowerOfTwo = gi, rows%2 == 1
						}
						if g == ops.PerTensor && rows%4 == 1 { // a given scale, its inverse written on the device
							qo.Source, qo.Scale, qo.Margin, qo.PowerOfTwo = ops.ScaleGiven, 0.8125, 0, false
						}
						if r == rt {
							e, err := ops.ExplainQuantize(r, qb, xb, qo)
							if g == ops.MX {
								chosen(t, e, err, mxKernel)
							} else {
								chosen(t, e, err, blocksKernel)
							}
						}
						if err := ops.Quantize(ctx, r, qb, xb, qo); err != nil {
							t.Fatalf("%s quantize: %v", name, err)
						}
						y := alloc(t, r, ytype, rows, cols)
						poison(t, y)
						do := &ops.DequantizeOptions{Granularity: g, ScaleInv: inv}
						if r == rt {
							e, err := ops.ExplainDequantize(r, y, qb, do)
							chosen(t, e, err, "sass.dequantize")
						}
						if err := ops.Dequantize(ctx, r, y, qb, do); err != nil {
							t.Fatalf("%s dequantize: %v", name, err)
						}
						rs[j] = res{rawBytes(t, am), rawBytes(t, qb), rawBytes(t, inv), rawBytes(t, y)}
						if g == ops.PerRow && r == rt { // a bad scale: the CPU's error, Y unchanged
							bad := readF32(t, inv)
							bad[rows-1] = -1
							if err := inv.WriteFloat32(ctx, bad); err != nil {
								t.Fatal(err)
							}
							before := rawBytes(t, y)
							err := ops.Dequantize(ctx, r, y, qb, do)
							if !errors.Is(err, ops.ErrArgument) || !strings.Contains(err.Error(), "ScaleInv") {
								t.Fatalf("%s: bad scale: %v", name, err)
							}
							if string(rawBytes(t, y)) != string(before) {
								t.Fatalf("%s: a rejected dequantisation wrote Y", name)
							}
						}
					}
					for k, what := range []string{"amax", "q", "scale inverses", "dequantised"} {
						a, b := [][]byte{rs[0].amax, rs[0].q, rs[0].inv, rs[0].y}[k], [][]byte{rs[1].amax, rs[1].q, rs[1].inv, rs[1].y}[k]
						if string(a) != string(b) {
							t.Fatalf("%s: %s differ from the CPU's", name, what)
						}
					}
				}
			}
		}
	})
}

// TestGPUQuantizeGivenAmaxSM86: the SASS block quantiser with a given
// scales tensor (per tensor, per row, 1×128, 128×128) and the Amax output
// of every SASS quantiser (MX and computed scales included; per tensor on
// shapes whose rows are not whole groups of four; f32, bf16 and f16
// input; saturating or not), through ops,
// bit for bit against the CPU (codes, ScaleInv, Amax; NaNs in some inputs),
// outputs poisoned; a bad given scale returns the CPU's error with Q,
// ScaleInv and Amax unchanged.
func TestGPUQuantizeGivenAmaxSM86(t *testing.T) {
	ctx := context.Background()
	cpu := openTest(t)
	forEachGPU(t, func(t *testing.T, rt *runtime.Runtime) {
		needSM86(t, rt)
		rng := rand.New(rand.NewPCG(rand.Uint64(), 89))
		mxKernel, blocksKernel := "sass.quantize.mx.sm86", "sass.quantize.blocks.sm86"
		if rt.Device().SM() == 89 {
			mxKernel, blocksKernel = "sass.quantize.mx.sm89", "sass.quantize.blocks.sm89"
		}
		for si, sh := range [][2]int{{1, 4}, {7, 8}, {129, 12}, {1, 1000}, {130, 256}, {1, 1}, {7, 1}, {129, 7}, {1, 1001}} {
			rows, cols := sh[0], sh[1]
			x := make([]float32, rows*cols)
			for i := range x {
				x[i] = float32(math.Ldexp(rng.Float64()*2-1, rng.IntN(30)-15))
			}
			if si%2 == 1 { // the amax is NaN
				x[rng.IntN(len(x))] = float32(math.NaN())
			}
			grans := []ops.Granularity{ops.PerTensor, ops.PerRow, ops.Block1x128, ops.Block128x128, ops.MX}
			for gi, g := range grans {
				q := []tile.DType{tile.E4M3, tile.E5M2}[(gi+si)%2]
				xt := []tile.DType{tile.F32, tile.BF16, tile.F16}[(gi+si)%3] // 16-bit input is widened first
				sshape := ops.ScaleShape(g, []int{rows, cols})
				ns := 1
				for _, d := range sshape {
					ns *= d
				}
				scales := make([]float32, ns)
				for i := range scales {
					scales[i] = float32(math.Ldexp(1+rng.Float64(), rng.IntN(20)-10))
				}
				for _, mode := range []string{"given", "bad", "computed", "scalar", "bad scalar"} {
					if mode != "computed" && g == ops.MX || strings.HasSuffix(mode, "scalar") && g != ops.PerTensor {
						continue
					}
					bad := strings.HasPrefix(mode, "bad")
					om := []tile.OverflowMode{tile.Saturate, tile.NonSaturating}[rng.IntN(2)]
					name := fmt.Sprintf("%dx%d %v->%v %v %s %v", rows, cols, xt, q, g, mode, om)
					var outs [2][3][]byte
					var errs [2]error
					badAt, badV := rng.IntN(ns), []float32{0, -1, float32(math.Inf(1)), float32(math.NaN())}[rng.IntN(4)]
					for j, r := range []*runtime.Runtime{rt, cpu} {
						xb := bufF32(t, r, xt, x, rows, cols)
						qb, am := alloc(t, r, q, rows, cols), alloc(t, r, tile.F32, 1)
						sdt := tile.F32
						if g == ops.MX {
							sdt = tile.U8
						}
						inv := alloc(t, r, sdt, sshape...)
						for _, b := range []*runtime.Buffer{qb, am, inv} {
							poison(t, b)
						}
						qo := &ops.QuantizeOptions{Granularity: g, ScaleInv: inv, Amax: am, Mode: om}
						switch mode {
						case "scalar":
							qo.Source, qo.Scale = ops.ScaleGiven, scales[0]
						case "bad scalar":
							qo.Source, qo.Scale = ops.ScaleGiven, badV
						}
						if mode == "given" || mode == "bad" {
							s := append([]float32(nil), scales...)
							if bad {
								s[badAt] = badV
							}
							qo.Source, qo.Scales = ops.ScaleGiven, bufF32(t, r, tile.F32, s, sshape...)
						}
						if r == rt && mode != "bad scalar" { // ops rejects a bad scalar before choosing
							e, err := ops.ExplainQuantize(r, qb, xb, qo)
							if g == ops.MX {
								chosen(t, e, err, mxKernel)
							} else {
								chosen(t, e, err, blocksKernel)
							}
						}
						errs[j] = ops.Quantize(ctx, r, qb, xb, qo)
						outs[j] = [3][]byte{rawBytes(t, qb), rawBytes(t, inv), rawBytes(t, am)}
						if bad {
							for k, b := range []*runtime.Buffer{qb, inv, am} {
								if got := outs[j][k]; string(got) != strings.Repeat("\xff", b.Bytes()) {
									t.Fatalf("%s: a rejected quantisation on %v wrote output %d", name, r.Device(), k)
								}
							}
						}
					}
					if bad {
						if !errors.Is(errs[0], ops.ErrArgument) || errs[1] == nil || errs[0].Error() != errs[1].Error() {
							t.Fatalf("%s: device error %v, CPU error %v", name, errs[0], errs[1])
						}
						continue
					}
					for j := range errs {
						if errs[j] != nil {
							t.Fatalf("%s: %v", name, errs[j])
						}
					}
					for k, what := range []string{"codes", "scale inverses", "amax"} {
						if string(outs[0][k]) != string(outs[1][k]) {
							t.Fatalf("%s: %s differ from the CPU's: %x, CPU %x", name, what, outs[0][k][:min(16, len(outs[0][k]))], outs[1][k][:min(16, len(outs[1][k]))])
						}
					}
				}
			}
		}
	})
}

// TestGPUAmaxColumnSM86: the per-column amax on the SASS column kernels
// through ops.Amax, bit for bit against the CPU (f32, bf16, f16; NaNs in
// some columns), output poisoned.
func TestGPUAmaxColumnSM86(t *testing.T) {
	ctx := context.Background()
	cpu := openTest(t)
	forEachGPU(t, func(t *testing.T, rt *runtime.Runtime) {
		needSM86(t, rt)
		rng := rand.New(rand.NewPCG(rand.Uint64(), 90))
		for si, sh := range [][2]int{{1, 1}, {7, 3}, {129, 40}, {1000, 5}, {9, 1000}} {
			rows, cols := sh[0], sh[1]
			x := make([]float32, rows*cols)
			for i := range x {
				x[i] = float32(math.Ldexp(rng.Float64()*2-1, rng.IntN(30)-15))
			}
			if si%2 == 1 {
				x[rng.IntN(len(x))] = float32(math.NaN())
			}
			for _, xt := range []tile.DType{tile.F32, tile.BF16, tile.F16} {
				var outs [2][]byte
				for j, r := range []*runtime.Runtime{rt, cpu} {
					xb := bufF32(t, r, xt, x, rows, cols)
					am := alloc(t, r, tile.F32, ops.ScaleShape(ops.PerColumn, []int{rows, cols})...)
					poison(t, am)
					opt := &ops.AmaxOptions{Granularity: ops.PerColumn}
					if r == rt {
						e, err := ops.ExplainAmax(r, am, xb, opt)
						chosen(t, e, err, "sass.amax")
					}
					if err := ops.Amax(ctx, r, am, xb, opt); err != nil {
						t.Fatalf("%dx%d %v: %v", rows, cols, xt, err)
					}
					outs[j] = rawBytes(t, am)
				}
				if string(outs[0]) != string(outs[1]) {
					t.Fatalf("%dx%d %v: per-column amax differs from the CPU's", rows, cols, xt)
				}
			}
		}
	})
}

// TestGPUQuantizeAnyShapeSM86: the SASS quantisers on the shapes whose
// groups of four elements span scale blocks (Cols not a multiple of 4) and
// per column, through ops: ExplainQuantize picks the SASS kernel, and the
// codes, ScaleInv and Amax match the CPU's bit for bit (computed and given
// scales, both overflow modes, f32 and bf16 input, outputs poisoned); a bad
// given scale returns the CPU's error with every output unchanged.
func TestGPUQuantizeAnyShapeSM86(t *testing.T) {
	ctx := context.Background()
	cpu := openTest(t)
	forEachGPU(t, func(t *testing.T, rt *runtime.Runtime) {
		needSM86(t, rt)
		rng := rand.New(rand.NewPCG(rand.Uint64(), 91))
		mxKernel, blocksKernel := "sass.quantize.mx.sm86", "sass.quantize.blocks.sm86"
		if rt.Device().SM() == 89 {
			mxKernel, blocksKernel = "sass.quantize.mx.sm89", "sass.quantize.blocks.sm89"
		}
		for si, sh := range [][2]int{{1, 1}, {7, 3}, {129, 7}, {1000, 13}, {5, 1001}, {6, 8}} {
			rows, cols := sh[0], sh[1]
			x := make([]float32, rows*cols)
			for i := range x {
				x[i] = float32(math.Ldexp(rng.Float64()*2-1, rng.IntN(30)-15))
			}
			if si%2 == 1 { // a NaN in some blocks
				x[rng.IntN(len(x))] = float32(math.NaN())
			}
			for gi, g := range []ops.Granularity{ops.PerColumn, ops.PerRow, ops.Block1x128, ops.Block128x128, ops.MX} {
				q := []tile.DType{tile.E4M3, tile.E5M2}[(gi+si)%2]
				xt := []tile.DType{tile.F32, tile.BF16}[(gi+si)%2]
				sshape := ops.ScaleShape(g, []int{rows, cols})
				ns := 1
				for _, d := range sshape {
					ns *= d
				}
				scales := make([]float32, ns)
				for i := range scales {
					scales[i] = float32(math.Ldexp(1+rng.Float64(), rng.IntN(20)-10))
				}
				for _, om := range []tile.OverflowMode{tile.Saturate, tile.NonSaturating} {
					for _, mode := range []string{"computed", "given", "bad"} {
						if mode != "computed" && g == ops.MX {
							continue
						}
						bad := mode == "bad"
						name := fmt.Sprintf("%dx%d %v->%v %v %s %v", rows, cols, xt, q, g, mode, om)
						var outs [2][3][]byte
						var errs [2]error
						badAt, badV := rng.IntN(ns), []float32{0, -1, float32(math.Inf(1)), float32(math.NaN())}[rng.IntN(4)]
						for j, r := range []*runtime.Runtime{rt, cpu} {
							xb := bufF32(t, r, xt, x, rows, cols)
							qb, am := alloc(t, r, q, rows, cols), alloc(t, r, tile.F32, 1)
							sdt := tile.F32
							if g == ops.MX {
								sdt = tile.U8
							}
							inv := alloc(t, r, sdt, sshape...)
							for _, b := range []*runtime.Buffer{qb, am, inv} {
								poison(t, b)
							}
							qo := &ops.QuantizeOptions{Granularity: g, ScaleInv: inv, Amax: am, Mode: om}
							if g != ops.MX && mode == "computed" {
								qo.Margin, qo.PowerOfTwo = si%3, si%2 == 0
							}
							if mode != "computed" {
								s := append([]float32(nil), scales...)
								if bad {
									s[badAt] = badV
								}
								qo.Source, qo.Scales = ops.ScaleGiven, bufF32(t, r, tile.F32, s, sshape...)
							}
							if r == rt {
								e, err := ops.ExplainQuantize(r, qb, xb, qo)
								if g == ops.MX {
									chosen(t, e, err, mxKernel)
								} else {
									chosen(t, e, err, blocksKernel)
								}
							}
							errs[j] = ops.Quantize(ctx, r, qb, xb, qo)
							outs[j] = [3][]byte{rawBytes(t, qb), rawBytes(t, inv), rawBytes(t, am)}
							if bad {
								for k, b := range []*runtime.Buffer{qb, inv, am} {
									if got := outs[j][k]; string(got) != strings.Repeat("\xff", b.Bytes()) {
										t.Fatalf("%s: a rejected quantisation on %v wrote output %d", name, r.Device(), k)
									}
								}
							}
						}
						if bad {
							if !errors.Is(errs[0], ops.ErrArgument) || errs[1] == nil || errs[0].Error() != errs[1].Error() {
								t.Fatalf("%s: device error %v, CPU error %v", name, errs[0], errs[1])
							}
							continue
						}
						for j := range errs {
							if errs[j] != nil {
								t.Fatalf("%s: %v", name, errs[j])
							}
						}
						for k, what := range []string{"codes", "scale inverses", "amax"} {
							if string(outs[0][k]) != string(outs[1][k]) {
								t.Fatalf("%s: %s differ from the CPU's: %x, CPU %x", name, what, outs[0][k][:min(16, len(outs[0][k]))], outs[1][k][:min(16, len(outs[1][k]))])
							}
						}
					}
				}
			}
		}
	})
}

// rawNaN reports whether little-endian element bytes b of float type d
// hold a NaN.
func rawNaN(d tile.DType, b []byte) bool {
	var v uint64
	for k := len(b) - 1; k >= 0; k-- {
		v = v<<8 | uint64(b[k])
	}
	switch d {
	case tile.F16:
		return v&0x7c00 == 0x7c00 && v&0x3ff != 0
	case tile.BF16:
		return v&0x7f80 == 0x7f80 && v&0x7f != 0
	case tile.F32:
		return v&0x7f800000 == 0x7f800000 && v&0x7fffff != 0
	case tile.F64:
		return v&0x7ff0000000000000 == 0x7ff0000000000000 && v&0xfffffffffffff != 0
	}
	return false
}
