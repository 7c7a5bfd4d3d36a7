package llama_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/model/llama"
	"github.com/tcrt-go/tcrt/model/llama/llamatest"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// logitBound is the largest difference allowed between tcrt's logits and
// the reference's, relative to max(1, the row's largest |logit|). Both run
// f32 activations over the same weights (a bf16 checkpoint's reference
// decodes the same bf16 values); the difference is float32 against
// float64 accumulation and reduction order, about 1e-6 measured.
const logitBound = 2e-5

// fixture is a random checkpoint loaded into a runtime, with its reference.
type fixture struct {
	rt  *runtime.Runtime
	m   *llama.Model
	ref *llamatest.Reference
	cfg llama.Config
	dir string
}

func backends(*testing.T) []runtime.BackendKind {
	return []runtime.BackendKind{runtime.BackendCPU, "sim"}
}

func newFixture(t *testing.T, backend runtime.BackendKind, cfg llama.Config, dt tile.DType, seed uint64, lo ...llama.LoadOptions) *fixture {
	t.Helper()
	dir := t.TempDir()
	if err := llamatest.WriteRandomCheckpoint(dir, cfg, dt, seed, nil); err != nil {
		t.Fatal(err)
	}
	ck, err := llama.OpenCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := llamatest.NewReference(ck)
	ck.Close()
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.Open(runtime.Options{Backend: backend})
	if err != nil {
		t.Skipf("backend %s: %v", backend, err)
	}
	t.Cleanup(func() { rt.Close() })
	var opts *llama.LoadOptions
	if len(lo) > 0 {
		opts = &lo[0]
	}
	m, err := llama.Load(context.Background(), rt, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return &fixture{rt: rt, m: m, ref: ref, cfg: cfg, dir: dir}
}

func (f *fixture) runner(t *testing.T, o llama.RunnerOptions) *llama.Runner {
	t.Helper()
	r, err := llama.NewRunner(f.m, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// relDiff is max|a−b| / max(1, max|b|).
func relDiff(a, b []float32) float64 {
	d, m := 0.0, 1.0
	for i := range b {
		d = max(d, math.Abs(float64(a[i])-float64(b[i])))
		m = max(m, math.Abs(float64(b[i])))
	}
	if len(a) != len(b) {
		return math.Inf(1)
	}
	return d / m
}

func randPrompt(rng *rand.Rand, n, vocab int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(rng.IntN(vocab))
	}
	return p
}

func ints(p []int32) []int {
	out := make([]int, len(p))
	for i, v := range p {
		out[i] = int(v)
	}
	return out
}

// TestForwardMatchesReference: prefill logits at every prompt position
// and every greedy decode step's logits match the reference, and the
// greedy tokens are the reference's, for f32 and bf16 weights on the CPU
// and the simulated sm_86 device.
func TestForwardMatchesReference(t *testing.T) {
	for _, backend := range backends(t) {
		for _, dt := range []tile.DType{tile.F32, tile.BF16} {
			t.Run(string(backend)+"/"+dt.String(), func(t *testing.T) {
				promptLen, steps := 13, 12
				if backend != runtime.BackendCPU {
					promptLen, steps = 5, 3
				}
				f := newFixture(t, backend, llamatest.Small(), dt, 7)
				checkAgainstReference(t, f, promptLen, steps)
			})
		}
	}
}

// checkAgainstReference prefills a random prompt of promptLen tokens,
// then decodes steps greedy tokens, comparing every position's logits and
// every token with the reference.
func checkAgainstReference(t *testing.T, f *fixture, promptLen, steps int) {
	t.Helper()
	ctx := context.Background()
	r := f.runner(t, llama.RunnerOptions{MaxSeqs: 2, MaxTokens: 32, MaxSeqLen: 64, AllLogits: true})
	V := f.cfg.VocabSize
	rng := rand.New(rand.NewPCG(1, 2))
	prompt := randPrompt(rng, promptLen, V)
	seq, err := r.NewSequence()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Step(ctx, []llama.Work{{Seq: seq, Tokens: prompt}}); err != nil {
		t.Fatal(err)
	}
	cache := f.ref.NewCache()
	want, err := f.ref.Forward(ctx, cache, ints(prompt))
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, len(prompt)*V)
	if err := r.ReadLogits(ctx, 0, got); err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for p := range prompt {
		d := relDiff(got[p*V:(p+1)*V], want[p])
		worst = max(worst, d)
		if d > logitBound {
			t.Errorf("prefill position %d: logits differ by %.3g (relative), bound %.3g", p, d, logitBound)
		}
	}
	last := got[(len(prompt)-1)*V:]
	for s := range steps {
		tok, err := r.Sample(ctx, r.LogitsRows()-1, llama.SampleOptions{}, uint64(s))
		if err != nil {
			t.Fatal(err)
		}
		if w := llamatest.Argmax(last); int(tok) != w {
			t.Fatalf("step %d: greedy token %d, reference argmax %d", s, tok, w)
		}
		if err := r.Step(ctx, []llama.Work{{Seq: seq, Tokens: []int32{tok}}}); err != nil {
			t.Fatal(err)
		}
		want, err := f.ref.Forward(ctx, cache, []int{int(tok)})
		if err != nil {
			t.Fatal(err)
		}
		last = make([]float32, V)
		if err := r.ReadLogits(ctx, 0, last); err != nil {
			t.Fatal(err)
		}
		d := relDiff(last, want[0])
		worst = max(worst, d)
		if d > logitBound {
			t.Errorf("decode step %d (position %d): logits differ by %.3g, bound %.3g", s, promptLen+s, d, logitBound)
		}
	}
	t.Logf("largest relative logit difference %.3g over %d prefill positions and %d decode steps", worst, promptLen, steps)
}

// TestForwardVariants: the configuration flags the forward pass honours
// (llama3, linear and yarn RoPE scaling, q/k/v, o and MLP biases, sliding windows
// from a layer on, tied embeddings) against the reference, on the CPU,
// with fused and separate projections; the prompt is longer than the
// windows.
func TestForwardVariants(t *testing.T) {
	qwen := llamatest.Small()
	qwen.ModelType, qwen.QKVBias, qwen.SlidingWindow, qwen.SlidingWindowFromLayer, qwen.TieWordEmbeddings = "qwen2", true, 6, 1, true
	biased := llamatest.Small()
	biased.QKVBias, biased.OutputBias = true, true
	biased.RopeScaling = &llama.RopeScaling{Type: "linear", Factor: 2}
	mistral := llamatest.Tiny()
	mistral.ModelType, mistral.SlidingWindow, mistral.RopeScaling = "mistral", 5, nil
	yarn := llamatest.Tiny()
	yarn.RopeTheta, yarn.RopeScaling = 10000, &llama.RopeScaling{Type: "yarn", Factor: 4, OriginalMaxPositionEmbeddings: 64}
	yarn.MLPBias = true
	for _, c := range []struct {
		name string
		cfg  llama.Config
	}{{"tiny-llama3-rope", llamatest.Tiny()}, {"qwen2-bias-window-tied", qwen}, {"llama-bias-linear-rope", biased}, {"mistral-window", mistral}, {"yarn-rope-mlp-bias", yarn}} {
		for _, sep := range []bool{false, true} {
			name := c.name + "/fused"
			if sep {
				name = c.name + "/separate"
			}
			t.Run(name, func(t *testing.T) {
				checkAgainstReference(t, newFixture(t, runtime.BackendCPU, c.cfg, tile.F32, 9, llama.LoadOptions{KeepSeparate: sep}), 13, 8)
			})
		}
	}
}

// TestBatchedStepEqualsAlone: sequences stepped together, with a prompt
// joining while others decode (a mixed prefill+decode step), get the
// logits and greedy tokens each gets alone.
func TestBatchedStepEqualsAlone(t *testing.T) {
	ctx := context.Background()
	for _, backend := range backends(t) {
		t.Run(string(backend), func(t *testing.T) {
			lens, steps := []int{5, 9, 3}, 5
			if backend != runtime.BackendCPU {
				lens, steps = []int{3, 4, 2}, 2
			}
			f := newFixture(t, backend, llamatest.Small(), tile.BF16, 11)
			V := f.cfg.VocabSize
			rng := rand.New(rand.NewPCG(3, 4))
			prompts := make([][]int32, len(lens))
			for i, n := range lens {
				prompts[i] = randPrompt(rng, n, V)
			}
			opts := llama.RunnerOptions{MaxSeqs: 4, MaxTokens: 32, MaxSeqLen: 64, PageSize: 16}
			// Alone: each sequence in its own runner.
			alone := make([][][]float32, len(prompts))
			for i, p := range prompts {
				r := f.runner(t, opts)
				seq, _ := r.NewSequence()
				tokens := p
				for range steps + 1 {
					if err := r.Step(ctx, []llama.Work{{Seq: seq, Tokens: tokens}}); err != nil {
						t.Fatal(err)
					}
					row := make([]float32, V)
					if err := r.ReadLogits(ctx, 0, row); err != nil {
						t.Fatal(err)
					}
					alone[i] = append(alone[i], row)
					tok, err := r.Sample(ctx, 0, llama.SampleOptions{}, 0)
					if err != nil {
						t.Fatal(err)
					}
					tokens = []int32{tok}
				}
			}
			// Together: sequences 0 and 1 prefill in step 0; sequence 2
			// joins in step 1 while 0 and 1 decode; then all decode.
			r := f.runner(t, opts)
			seqs := make([]int, len(prompts))
			next := make([][]int32, len(prompts))
			got := make([]int, len(prompts)) // steps done per sequence
			for i := range prompts {
				seqs[i], _ = r.NewSequence()
				next[i] = prompts[i]
			}
			for step := 0; step < steps+2; step++ {
				var work []llama.Work
				var who []int
				for i := range prompts {
					if (i == 2 && step == 0) || got[i] > steps {
						continue
					}
					work = append(work, llama.Work{Seq: seqs[i], Tokens: next[i]})
					who = append(who, i)
				}
				if err := r.Step(ctx, work); err != nil {
					t.Fatal(err)
				}
				for j, i := range who {
					row := make([]float32, V)
					if err := r.ReadLogits(ctx, j, row); err != nil {
						t.Fatal(err)
					}
					if d := relDiff(row, alone[i][got[i]]); d > 1e-6 {
						t.Errorf("step %d, sequence %d (its step %d): batched logits differ from alone by %.3g", step, i, got[i], d)
					}
					tok, err := r.Sample(ctx, j, llama.SampleOptions{}, 0)
					if err != nil {
						t.Fatal(err)
					}
					if want := llamatest.Argmax(alone[i][got[i]]); int(tok) != want {
						t.Errorf("step %d, sequence %d: token %d, alone %d", step, i, tok, want)
					}
					next[i] = []int32{tok}
					got[i]++
				}
			}
			for i := range prompts {
				if got[i] != steps+1 {
					t.Errorf("sequence %d ran %d steps, want %d", i, got[i], steps+1)
				}
			}
		})
	}
}

// TestRunnerErrors: bad work is refused with typed errors before anything
// changes, and freed pages are reused.
func TestRunnerErrors(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, runtime.BackendCPU, llamatest.Tiny(), tile.F32, 1)
	r := f.runner(t, llama.RunnerOptions{MaxSeqs: 2, MaxTokens: 8, MaxSeqLen: 20, PageSize: 16, NumPages: 3})
	a, err := r.NewSequence()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := r.NewSequence()
	if _, err := r.NewSequence(); !errors.Is(err, tile.ErrOutOfMemory) {
		t.Errorf("third sequence of 2: %v, want ErrOutOfMemory", err)
	}
	V := int32(f.cfg.VocabSize)
	for _, c := range []struct {
		name string
		work []llama.Work
		want error
	}{
		{"none", nil, tile.ErrShape},
		{"unknown seq", []llama.Work{{Seq: 5, Tokens: []int32{1}}}, tile.ErrArgument},
		{"duplicate", []llama.Work{{Seq: a, Tokens: []int32{1}}, {Seq: a, Tokens: []int32{1}}}, tile.ErrArgument},
		{"empty tokens", []llama.Work{{Seq: a}}, tile.ErrShape},
		{"token out of vocab", []llama.Work{{Seq: a, Tokens: []int32{V}}}, tile.ErrBounds},
		{"negative token", []llama.Work{{Seq: a, Tokens: []int32{-1}}}, tile.ErrBounds},
		{"too many tokens", []llama.Work{{Seq: a, Tokens: make([]int32, 9)}}, tile.ErrShape},
	} {
		if err := r.Step(ctx, c.work); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if r.Len(a) != 0 || r.FreePages() != 3 {
		t.Fatalf("after refused steps: len %d, free pages %d; want 0, 3", r.Len(a), r.FreePages())
	}
	if err := r.Step(ctx, []llama.Work{{Seq: a, Tokens: []int32{1, 2, 3}}, {Seq: b, Tokens: []int32{4}}}); err != nil {
		t.Fatal(err)
	}
	if err := r.Step(ctx, []llama.Work{{Seq: a, Tokens: []int32{1, 2}}}); !errors.Is(err, tile.ErrArgument) {
		t.Errorf("two tokens for a running sequence: %v, want ErrArgument", err)
	}
	// Sequence a grows to 17 tokens: a second page; b's next would need
	// … the pool has 3, so a third sequence page fits, a fourth does not.
	for i := 0; r.Len(a) < 17; i++ {
		if err := r.Step(ctx, []llama.Work{{Seq: a, Tokens: []int32{1}}}); err != nil {
			t.Fatal(err)
		}
	}
	if r.FreePages() != 0 {
		t.Fatalf("free pages %d, want 0", r.FreePages())
	}
	for r.Len(b) < 16 {
		if err := r.Step(ctx, []llama.Work{{Seq: b, Tokens: []int32{1}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Step(ctx, []llama.Work{{Seq: b, Tokens: []int32{1}}}); !errors.Is(err, tile.ErrOutOfMemory) {
		t.Errorf("a page past the pool: %v, want ErrOutOfMemory", err)
	}
	for r.Len(a) < 20 {
		if err := r.Step(ctx, []llama.Work{{Seq: a, Tokens: []int32{1}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Step(ctx, []llama.Work{{Seq: a, Tokens: []int32{1}}}); !errors.Is(err, tile.ErrBounds) {
		t.Errorf("past MaxSeqLen: %v, want ErrBounds", err)
	}
	if err := r.FreeSequence(a); err != nil {
		t.Fatal(err)
	}
	if r.FreePages() != 2 || r.Len(a) != 0 {
		t.Errorf("after FreeSequence: %d free pages, len %d; want 2, 0", r.FreePages(), r.Len(a))
	}
	if err := r.FreeSequence(a); !errors.Is(err, tile.ErrArgument) {
		t.Errorf("double free: %v", err)
	}
	if err := r.Step(ctx, []llama.Work{{Seq: b, Tokens: []int32{1}}}); err != nil {
		t.Errorf("b after a was freed: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Step(ctx, []llama.Work{{Seq: b, Tokens: []int32{1}}}); !errors.Is(err, tile.ErrClosed) {
		t.Errorf("step after Close: %v, want ErrClosed", err)
	}
	var nilRunner *llama.Runner
	if err := nilRunner.Step(ctx, nil); !errors.Is(err, tile.ErrArgument) {
		t.Errorf("nil runner: %v", err)
	}
	if _, err := llama.NewRunner(nil, nil); !errors.Is(err, tile.ErrArgument) {
		t.Errorf("nil model: %v", err)
	}
}

// TestForwardHalfKV: with a bf16 or f16 KV cache the logits stay within
// the stated bound of the f32 reference (keys and values rounded to 8 or
// 11 significant bits), decoding the reference's greedy tokens.
func TestForwardHalfKV(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, runtime.BackendCPU, llamatest.Small(), tile.F32, 7)
	for _, c := range []struct {
		dt    tile.DType
		bound float64
	}{{tile.BF16, 1e-2}, {tile.F16, 2e-3}} {
		r := f.runner(t, llama.RunnerOptions{MaxSeqs: 1, MaxTokens: 16, MaxSeqLen: 32, KVDType: c.dt})
		V := f.cfg.VocabSize
		seq, _ := r.NewSequence()
		cache := f.ref.NewCache()
		tokens := []int32{3, 99, 512, 7, 41}
		worst := 0.0
		for step := range 7 {
			if err := r.Step(ctx, []llama.Work{{Seq: seq, Tokens: tokens}}); err != nil {
				t.Fatal(err)
			}
			want, err := f.ref.Forward(ctx, cache, ints(tokens))
			if err != nil {
				t.Fatal(err)
			}
			got := make([]float32, V)
			if err := r.ReadLogits(ctx, 0, got); err != nil {
				t.Fatal(err)
			}
			last := want[len(want)-1]
			d := relDiff(got, last)
			worst = max(worst, d)
			if d > c.bound {
				t.Errorf("%v KV, step %d: logits differ by %.3g, bound %.3g", c.dt, step, d, c.bound)
			}
			tokens = []int32{int32(llamatest.Argmax(last))}
		}
		t.Logf("%v KV cache: largest relative logit difference %.3g", c.dt, worst)
	}
}

// TestNewRunnerErrors: bad or oversized options are typed errors, and a
// runner that does not fit the runtime's memory limit fails cleanly,
// leaving no buffer behind.
func TestNewRunnerErrors(t *testing.T) {
	cfg := llamatest.Tiny()
	dir := t.TempDir()
	if err := llamatest.WriteRandomCheckpoint(dir, cfg, tile.F32, 1, nil); err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.Open(runtime.Options{Backend: runtime.BackendCPU, MemoryLimit: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	m, err := llama.Load(context.Background(), rt, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	live := rt.Stats().LiveBuffers
	for _, c := range []struct {
		name string
		o    llama.RunnerOptions
		want error
	}{
		{"negative MaxSeqs", llama.RunnerOptions{MaxSeqs: -1}, tile.ErrShape},
		{"huge MaxTokens", llama.RunnerOptions{MaxTokens: 1 << 40}, tile.ErrShape},
		{"MaxTokens < MaxSeqs", llama.RunnerOptions{MaxSeqs: 8, MaxTokens: 4}, tile.ErrShape},
		{"bad PageSize", llama.RunnerOptions{PageSize: 24}, tile.ErrArgument},
		{"negative NumPages", llama.RunnerOptions{NumPages: -3}, tile.ErrShape},
		{"KV dtype", llama.RunnerOptions{KVDType: tile.S8}, tile.ErrDType},
		{"past the memory limit", llama.RunnerOptions{MaxTokens: 1 << 20}, tile.ErrOutOfMemory},
	} {
		r, err := llama.NewRunner(m, &c.o)
		if !errors.Is(err, c.want) || r != nil {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if n := rt.Stats().LiveBuffers; n != live {
			t.Errorf("%s: %d live buffers after the failure, want %d", c.name, n, live)
		}
	}
	// Dynamic NTK scaling rescales every position once a sequence passes
	// max_position_embeddings: a runner may not hold such sequences.
	dyn := cfg
	dyn.RopeScaling = &llama.RopeScaling{Type: "dynamic", Factor: 2}
	ddir := t.TempDir()
	if err := llamatest.WriteRandomCheckpoint(ddir, dyn, tile.F32, 1, nil); err != nil {
		t.Fatal(err)
	}
	dm, err := llama.Load(context.Background(), rt, ddir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dm.Close()
	if r, err := llama.NewRunner(dm, &llama.RunnerOptions{MaxSeqs: 1, MaxSeqLen: dyn.MaxPositionEmbeddings + 1}); !errors.Is(err, tile.ErrUnsupported) || r != nil {
		t.Errorf("dynamic RoPE past max_position_embeddings: %v, want ErrUnsupported", err)
	}
	r, err := llama.NewRunner(dm, &llama.RunnerOptions{MaxSeqs: 1})
	if err != nil {
		t.Fatalf("dynamic RoPE within max_position_embeddings: %v", err)
	}
	r.Close()
	m.Close()
	if _, err := llama.NewRunner(m, nil); !errors.Is(err, tile.ErrClosed) {
		t.Errorf("closed model: %v, want ErrClosed", err)
	}
}

// float8Bound is the largest relative logit difference (see relDiff)
// allowed between a model loaded with LoadOptions.Float8 and the f32
// reference of the unquantised weights: e4m3 keeps 4 significant bits, a
// relative rounding error of up to 2^-4 per weight with one scale per
// output channel, which averages down over each dot product and grows
// through the layers; 0.073 measured on the Small model (2 layers),
// fused or separate, against about 1e-6 unquantised.
const float8Bound = 0.15

// TestLoadFloat8: with Float8 every projection is e4m3 (the embeddings,
// norms and LM head keep their type), the weight bytes shrink
// accordingly, and the logits of a prefill and of decode steps fed the
// reference's greedy tokens stay within float8Bound of the reference.
func TestLoadFloat8(t *testing.T) {
	ctx := context.Background()
	for _, sep := range []bool{false, true} {
		t.Run(map[bool]string{false: "fused", true: "separate"}[sep], func(t *testing.T) {
			cfg := llamatest.Small()
			f := newFixture(t, runtime.BackendCPU, cfg, tile.BF16, 11, llama.LoadOptions{Float8: true, KeepSeparate: sep})
			w := f.m.Weights()
			for l, ls := range w.Layers {
				proj := []*runtime.Buffer{ls.O, ls.Down}
				if sep {
					proj = append(proj, ls.Q, ls.K, ls.V, ls.Gate, ls.Up)
				} else {
					fl := f.m.FusedLayers()[l]
					proj = append(proj, fl.QKV, fl.GateUp)
				}
				for i, b := range proj {
					if b == nil || b.DType() != tile.E4M3 {
						t.Fatalf("layer %d, projection %d: %v, want e4m3", l, i, b)
					}
				}
			}
			if w.Embed.DType() != tile.BF16 || w.Layers[0].InputNorm.DType() != tile.BF16 {
				t.Fatalf("embeddings %v, norm %v: want bf16 kept", w.Embed.DType(), w.Layers[0].InputNorm.DType())
			}
			// bf16 → e4m3 halves the projections; the embeddings and the
			// norms stay, the scales (4 bytes per output row) are added.
			H, I, V := cfg.HiddenSize, cfg.IntermediateSize, cfg.VocabSize
			qkv := (cfg.NumHeads + 2*cfg.NumKVHeads) * cfg.HeadDim
			proj := cfg.NumLayers * (qkv*H + cfg.NumHeads*cfg.HeadDim*H + 3*H*I)
			rows := cfg.NumLayers * (qkv + H + 2*I + H)
			other := 2 * (V*H + (2*cfg.NumLayers+1)*H)
			if !cfg.TieWordEmbeddings {
				other += 2 * V * H
			}
			if got, want := f.m.WeightBytes(), proj+4*rows+other; got != want {
				t.Errorf("WeightBytes %d, want %d", got, want)
			}
			r := f.runner(t, llama.RunnerOptions{MaxSeqs: 1, MaxTokens: 32, MaxSeqLen: 64, AllLogits: true})
			rng := rand.New(rand.NewPCG(3, 4))
			tokens := ints(randPrompt(rng, 9, V))
			seq, _ := r.NewSequence()
			cache := f.ref.NewCache()
			worst := 0.0
			for step := range 5 {
				in := make([]int32, len(tokens))
				for i, v := range tokens {
					in[i] = int32(v)
				}
				if err := r.Step(ctx, []llama.Work{{Seq: seq, Tokens: in}}); err != nil {
					t.Fatal(err)
				}
				want, err := f.ref.Forward(ctx, cache, tokens)
				if err != nil {
					t.Fatal(err)
				}
				got := make([]float32, len(tokens)*V)
				if err := r.ReadLogits(ctx, 0, got); err != nil {
					t.Fatal(err)
				}
				for p := range tokens {
					d := relDiff(got[p*V:(p+1)*V], want[p])
					worst = max(worst, d)
					if d > float8Bound {
						t.Errorf("step %d, position %d: logits differ by %.3g, bound %.3g", step, p, d, float8Bound)
					}
				}
				tokens = []int{llamatest.Argmax(want[len(want)-1])}
			}
			t.Logf("e4m3 projections: largest relative logit difference %.3g; weights %d bytes", worst, f.m.WeightBytes())
		})
	}
}
