package ops_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/internal/longtest"
	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// The PTX mma.sync kernels (kernels/mma) through ops.* on the simulated
// sm_86 device, forced by name as TCRT_KERNEL=ptx.matmul.mma /
// ptx.attention.mma would: the device runs ptxas's sm_86 cubin in the SASS
// simulator. The CI subset is small (the simulator is slow on two shared
// cores); TCRT_LONG_TESTS=1 runs the whole sweep.

// mmaSimRefused reports whether err is the simulated device refusing the
// module because the simulator cannot run part of its sm_86 cubin (today:
// the uniform-datapath words kernels/mma's TestSimProbeSM86 lists).
func mmaSimRefused(err error) bool {
	return errors.Is(err, runtime.ErrUnsupported) && strings.Contains(err.Error(), mmaRefusal)
}

// mmaRefusal is how runtime/sim words that refusal.
const mmaRefusal = "the simulator cannot run its sm_86 cubin"

// openMMASim opens the simulated sm_86 device with kernel forced.
func openMMASim(t *testing.T, kernel string) *runtime.Runtime {
	t.Helper()
	if os.Getenv("TCRT_BACKEND") != "" || os.Getenv("TCRT_KERNEL") != "" {
		t.Skip("this test picks its own device and kernel; TCRT_BACKEND/TCRT_KERNEL are set")
	}
	rt, err := runtime.Open(runtime.Options{Backend: runtime.BackendSim, SimArch: 86, Kernel: kernel})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

type mmaMMCase struct {
	m, n, k   int
	in, out   tile.DType
	ta, tb    bool
	act       ops.Activation
	alpha     float32
	beta      float32
	bias      bool
	scales    int // float8: 0 none, 1 per tensor, 2 per row/column
	wantSplit bool
}

func (c mmaMMCase) String() string {
	return fmt.Sprintf("%dx%dx%d %v->%v ta=%v tb=%v act=%v alpha=%v beta=%v bias=%v scales=%d",
		c.m, c.n, c.k, c.in, c.out, c.ta, c.tb, c.act, c.alpha, c.beta, c.bias, c.scales)
}

// mmaMatMulCases: M, N, K from 1, 7, 129, 1000 mixes, every layout,
// f16/bf16/e4m3/e5m2 in, f32/f16/bf16 out, epilogues, float8 scales and
// split-K; short keeps a few of each.
func mmaMatMulCases(long bool) []mmaMMCase {
	shapes := [][3]int{{1, 7, 8}, {7, 129, 64}, {129, 7, 33}, {65, 129, 40}, {1, 1, 1}, {33, 70, 129}}
	if long {
		shapes = append(shapes, [3]int{129, 1000, 16}, [3]int{1000, 7, 24}, [3]int{7, 1000, 129}, [3]int{200, 129, 1000})
	}
	ins := []tile.DType{tile.F16, tile.BF16, tile.E4M3, tile.E5M2}
	outs := []tile.DType{tile.F32, tile.F16, tile.BF16}
	acts := []ops.Activation{ops.ActNone, ops.ActReLU, ops.ActGELU, ops.ActSiLU}
	var cases []mmaMMCase
	for si, s := range shapes {
		for l, lay := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
			// every shape sees every layout; types and epilogues rotate
			// independently of the layout
			x := si + l
			in := ins[x%4]
			c := mmaMMCase{m: s[0], n: s[1], k: s[2], in: in, out: outs[(si+2*l)%3], ta: lay[0], tb: lay[1], act: acts[(x+1)%4],
				alpha: []float32{1, 0.5}[si%2], beta: []float32{0, 0.5}[x%2], bias: x%3 == 1}
			if tile.IsFloat8(in) {
				c.scales = x % 3
			}
			cases = append(cases, c)
		}
	}
	// split-K: small M and N, K >= 1024, f32 out
	cases = append(cases, mmaMMCase{m: 7, n: 129, k: 1024, in: tile.F16, out: tile.F32, alpha: 1, wantSplit: true},
		mmaMMCase{m: 1, n: 7, k: 1032, in: tile.BF16, out: tile.F32, tb: true, alpha: 1, beta: 0.25, bias: true, wantSplit: true})
	return cases
}

// TestGPUMatMulMMASim runs ptx.matmul.mma's sm_86 build through ops.MatMul
// on the simulated device against the CPU reference kernel on the same
// stored inputs (TestGPUMatMulSM86's tolerance), outputs poisoned.
func TestGPUMatMulMMASim(t *testing.T) {
	ctx := context.Background()
	rt := openMMASim(t, "ptx.matmul.mma")
	ref, err := runtime.Open(runtime.Options{Backend: runtime.BackendCPU, Kernel: "cpu.matmul.reference"})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	rng := rand.New(rand.NewPCG(rand.Uint64(), 16))
	for _, c := range mmaMatMulCases(longtest.Enabled()) {
		ashape, bshape := []int{c.m, c.k}, []int{c.k, c.n}
		if c.ta {
			ashape = []int{c.k, c.m}
		}
		if c.tb {
			bshape = []int{c.n, c.k}
		}
		// rows padded to 8 elements (the 16-byte copies' rule)
		pad := func(s []int) []int { return []int{s[0], (s[1] + 7) / 8 * 8} }
		ashape, bshape = pad(ashape), pad(bshape)
		av, bv := randF32(rng, ashape[0]*ashape[1]), randF32(rng, bshape[0]*bshape[1])
		cv, biasv := randF32(rng, c.m*c.n), randF32(rng, c.n)
		sav, sbv := []float32{0.75}, []float32{1.25}
		if c.scales == 2 {
			sav, sbv = make([]float32, c.m), make([]float32, c.n)
			for i := range sav {
				sav[i] = 0.5 + rng.Float32()
			}
			for i := range sbv {
				sbv[i] = 0.5 + rng.Float32()
			}
		}
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
			opt.Act, opt.Alpha, opt.Beta = c.act, c.alpha, c.beta
			if c.beta != 0 {
				opt.C = &dm
			} else {
				poison(t, d)
			}
			if c.bias {
				opt.Bias = bufF32(t, r, tile.F32, biasv, c.n)
			}
			if c.scales > 0 {
				opt.ScaleA = bufF32(t, r, tile.F32, sav, len(sav))
				opt.ScaleB = bufF32(t, r, tile.F32, sbv, len(sbv))
			}
			if r == rt {
				e, err := ops.ExplainMatMul(r, dm, am, bm, &opt)
				if err == nil && e.Chosen() == nil && strings.Contains(e.String(), mmaRefusal) {
					t.Fatalf("the simulated device refuses the module (the simulator runs all of it: TestSimProbeSM86):\n%v", e)
				}
				chosen(t, e, err, "ptx.matmul.mma")
			}
			c0, counting := r.DeviceCounters()
			err := ops.MatMul(ctx, r, dm, am, bm, &opt)
			if r == rt && mmaSimRefused(err) {
				t.Fatalf("the simulated device refuses the module (the simulator runs all of it: TestSimProbeSM86): %v", err)
			}
			if err != nil {
				t.Fatalf("%v: %v", c, err)
			}
			if c1, _ := r.DeviceCounters(); r == rt && counting && c.wantSplit && c1.Launches-c0.Launches != 2 {
				t.Fatalf("%v: ran %d launches, want split-K's 2", c, c1.Launches-c0.Launches)
			}
			outs[j] = readF32(t, d)
		}
		ulp := map[tile.DType]float64{tile.F32: 1e-6, tile.F16: 1e-3, tile.BF16: 8e-3}[c.out]
		for e := range outs[0] {
			got, want := float64(outs[0][e]), float64(outs[1][e])
			if math.IsNaN(got) || math.Abs(got-want) > 2e-4*float64(c.k)+2*ulp*(1+math.Abs(want)) {
				t.Fatalf("%v: element %d = %v, reference %v", c, e, got, want)
			}
		}
	}
}

// TestGPUAttentionMMASim runs ptx.attention.mma's sm_86 build through
// ops.Attention on the simulated device against the float64 reference:
// causal, GQA/MQA, window, soft-cap, varlen, LSE, head dimensions 64, 128
// and 256, f16 and bf16, outputs poisoned.
func TestGPUAttentionMMASim(t *testing.T) {
	rt := openMMASim(t, "ptx.attention.mma")
	rng := rand.New(rand.NewPCG(rand.Uint64(), 17))
	cases := []attnCase{
		{batch: 1, sq: 17, skv: 17, hq: 4, hkv: 4, d: 64, dt: tile.F16, causal: true},
		{batch: 2, sq: 7, skv: 129, hq: 4, hkv: 2, d: 128, dt: tile.BF16},
		{batch: 1, sq: 33, skv: 40, hq: 2, hkv: 1, d: 256, dt: tile.F16, causal: true, softcap: 2},
		{batch: 1, sq: 3, skv: 1, hq: 2, hkv: 1, d: 64, dt: tile.F16, causal: true, cuQ: []int{0, 1, 1, 3}, cuKV: []int{0, 5, 5, 12}},
	}
	if longtest.Enabled() {
		w := &ops.Window{Left: 32, Right: -1}
		cases = append(cases,
			attnCase{batch: 1, sq: 64, skv: 127, hq: 4, hkv: 1, d: 64, dt: tile.F16, causal: true, window: w, softcap: 30},
			attnCase{batch: 2, sq: 129, skv: 129, hq: 8, hkv: 2, d: 128, dt: tile.BF16, causal: true},
			attnCase{batch: 1, sq: 1, skv: 1000, hq: 8, hkv: 8, d: 128, dt: tile.BF16},
			attnCase{batch: 1, sq: 100, skv: 100, hq: 2, hkv: 2, d: 256, dt: tile.BF16, window: &ops.Window{Left: 5, Right: 3}},
			attnCase{batch: 3, sq: 0, skv: 0, hq: 4, hkv: 2, d: 128, dt: tile.F16, causal: true, cuQ: []int{0, 5, 5, 21}, cuKV: []int{0, 9, 9, 40}},
		)
		// the SASS attention sweep's lengths in mixed pairs, rotating
		// head dimension, type, GQA group, causal, window and soft-cap
		lens := []int{1, 17, 64, 127, 128, 129, 1000}
		k := 0
		for i, sq := range lens {
			for j, skv := range lens {
				if (i+j)%3 != 0 || sq*skv > 200000 {
					continue
				}
				g := []int{1, 4, 8}[k%3]
				c := attnCase{batch: 1, sq: sq, skv: skv, hq: 8, hkv: 8 / g, d: []int{64, 128, 256}[k%3],
					dt: []tile.DType{tile.F16, tile.BF16}[k%2], causal: k%2 == 0}
				if k%4 == 1 {
					c.window = &ops.Window{Left: 37, Right: 11}
				}
				if k%5 == 2 {
					c.softcap = 7.5
				}
				cases = append(cases, c)
				k++
			}
		}
	}
	for _, c := range cases {
		if c.cuQ != nil {
			c.batch, c.sq, c.skv = 1, c.cuQ[len(c.cuQ)-1], c.cuKV[len(c.cuKV)-1]
		}
		if err := mmaAttnProbe(rt); mmaSimRefused(err) {
			t.Fatalf("the simulated device refuses the module (the simulator runs all of it: TestSimProbeSM86): %v", err)
		}
		runAttnCase(t, rt, rng, c)
	}
}

// TestGPUAttentionKVCacheMMASim: paged-KV decode (split-KV and the combine
// kernel) through ops.AttentionKVCache on the simulated device, pages in
// shuffled order, against the reference.
func TestGPUAttentionKVCacheMMASim(t *testing.T) {
	rt := openMMASim(t, "ptx.attention.mma")
	if err := mmaAttnProbe(rt); mmaSimRefused(err) {
		t.Fatalf("the simulated device refuses the module (the simulator runs all of it: TestSimProbeSM86): %v", err)
	}
	rng := rand.New(rand.NewPCG(rand.Uint64(), 18))
	ctx := context.Background()
	steps := [][]int{{37, 1, 130}, {1, 1, 1}}
	cases := []cacheCase{{dt: tile.F16, pageSize: 16, hq: 8, hkv: 2, d: 64, seqQ: 1, steps: steps}}
	if longtest.Enabled() {
		cases = append(cases, cacheCase{dt: tile.BF16, pageSize: 64, hq: 4, hkv: 1, d: 128, seqQ: 1, steps: steps},
			cacheCase{dt: tile.F16, pageSize: 32, hq: 2, hkv: 2, d: 256, seqQ: 1, steps: steps})
	}
	for _, c := range cases {
		const batch = 3
		opt := ops.KVCacheOptions{DType: c.dt, Batch: batch, HeadsKV: c.hkv, HeadDim: c.d, PageSize: c.pageSize}
		total := make([]int, batch)
		for _, s := range c.steps {
			for b, n := range s {
				total[b] += n
			}
		}
		for _, n := range total {
			opt.NumPages += (n + c.pageSize - 1) / c.pageSize
		}
		opt.NumPages += 2
		cache, err := ops.NewKVCache(rt, opt)
		if err != nil {
			t.Fatal(err)
		}
		perm := rng.Perm(opt.NumPages)
		for b := 0; b < batch; b++ {
			n := (total[b] + c.pageSize - 1) / c.pageSize
			if err := cache.SetBlockTable(b, perm[:n]); err != nil {
				t.Fatal(err)
			}
			perm = perm[n:]
		}
		row := c.hkv * c.d
		keys, vals := make([][]float32, batch), make([][]float32, batch)
		for _, step := range c.steps {
			n := 0
			for _, x := range step {
				n = max(n, x)
			}
			nk, kv := randBuf(t, rt, rng, tile.F32, batch*n*row)
			nv, vv := randBuf(t, rt, rng, tile.F32, batch*n*row)
			kt := ops.AttnTensor{Buf: nk, Shape: []int{batch, n, c.hkv, c.d}}
			vt := ops.AttnTensor{Buf: nv, Shape: []int{batch, n, c.hkv, c.d}}
			if err := cache.Append(ctx, kt, vt, &ops.KVAppendOptions{Counts: step}); err != nil {
				t.Fatalf("%v: append: %v", c, err)
			}
			for b, cnt := range step {
				for _, x := range kv[b*n*row : (b*n+cnt)*row] {
					keys[b] = append(keys[b], tile.ToFloat32(c.dt, tile.FromFloat32(c.dt, x)))
				}
				for _, x := range vv[b*n*row : (b*n+cnt)*row] {
					vals[b] = append(vals[b], tile.ToFloat32(c.dt, tile.FromFloat32(c.dt, x)))
				}
			}
			nk.Close()
			nv.Close()
			checkDecode(t, rt, rng, c, cache, keys, vals)
			mmaSplitKV(t, rt, rng, c, cache)
		}
		if err := cache.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// mmaSplitKV checks the split-KV path (the paged kernel's partial results
// and the combine kernel): decode with forced KVSplits must run two
// launches and match the unsplit decode, which checkDecode compared with
// the reference.
func mmaSplitKV(t *testing.T, rt *runtime.Runtime, rng *rand.Rand, c cacheCase, cache *ops.KVCache) {
	t.Helper()
	ctx := context.Background()
	const batch = 3
	qb, _ := randBuf(t, rt, rng, c.dt, batch*c.seqQ*c.hq*c.d)
	q := ops.AttnTensor{Buf: qb, Shape: []int{batch, c.seqQ, c.hq, c.d}}
	var outs [2][]float32
	for j, splits := range []int{0, 3} {
		ob, err := rt.Alloc(c.dt, batch, c.seqQ, c.hq, c.d)
		if err != nil {
			t.Fatal(err)
		}
		poison(t, ob)
		c0, counting := rt.DeviceCounters()
		if err := ops.AttentionKVCache(ctx, rt, ops.AttnTensorOf(ob), q, cache, &ops.AttentionOptions{Causal: c.causal, KVSplits: splits}); err != nil {
			t.Fatalf("%v splits %d: %v", c, splits, err)
		}
		if c1, _ := rt.DeviceCounters(); counting && splits > 0 && c1.Launches-c0.Launches != 2 {
			t.Fatalf("%v: forced split-KV ran %d launches, want 2 (split + combine)", c, c1.Launches-c0.Launches)
		}
		outs[j] = readF32(t, ob)
		ob.Close()
	}
	qb.Close()
	for i := range outs[0] {
		if d := math.Abs(float64(outs[0][i] - outs[1][i])); !(d <= tolFor(c.dt)) {
			t.Fatalf("%v lens %v: split-KV O[%d] = %v, unsplit %v", c, cache.Lens(), i, outs[1][i], outs[0][i])
		}
	}
}

// mmaAttnProbe runs the smallest attention call to learn whether the
// simulated device accepts the module.
func mmaAttnProbe(rt *runtime.Runtime) error {
	mk := func(shape ...int) (*runtime.Buffer, error) {
		b, err := rt.Alloc(tile.F16, shape...)
		if err != nil {
			return nil, err
		}
		return b, b.WriteFloat32(context.Background(), make([]float32, b.Len()))
	}
	var bs [4]*runtime.Buffer
	for i := range bs {
		b, err := mk(1, 1, 1, 64)
		if err != nil {
			return err
		}
		defer b.Close()
		bs[i] = b
	}
	at := ops.AttnTensorOf
	return ops.Attention(context.Background(), rt, at(bs[0]), at(bs[1]), at(bs[2]), at(bs[3]), nil)
}
