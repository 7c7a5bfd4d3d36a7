package llamatest_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/tcrt-go/tcrt/model/llama"
	"github.com/tcrt-go/tcrt/model/llama/llamatest"
	"github.com/tcrt-go/tcrt/tile"
)

func reference(t *testing.T, cfg llama.Config, dt tile.DType, seed uint64) *llamatest.Reference {
	t.Helper()
	dir := t.TempDir()
	if err := llamatest.WriteRandomCheckpoint(dir, cfg, dt, seed, nil); err != nil {
		t.Fatal(err)
	}
	return openReference(t, dir)
}

func openReference(t *testing.T, dir string) *llamatest.Reference {
	t.Helper()
	ck, err := llama.OpenCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	r, err := llamatest.NewReference(ck)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func randTokens(rng *rand.Rand, n, vocab int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = rng.IntN(vocab)
	}
	return out
}

// maxRelDiff is max|a-b| over the rows, relative to the largest |b|.
func maxRelDiff(a, b [][]float32) float64 {
	d, m := 0.0, 0.0
	for i := range b {
		for j := range b[i] {
			d = max(d, math.Abs(float64(a[i][j])-float64(b[i][j])))
			m = max(m, math.Abs(float64(b[i][j])))
		}
	}
	return d / m
}

// TestReferencePrefillMatchesDecode: the logits of a prompt run at once
// equal those of the same tokens run one at a time, and in chunks, on the
// cache, position by position (bound: 1e-4 of the largest logit). The
// reference does each token's arithmetic the same way in every case, so
// the difference observed is 0: what this checks is the cache (positions,
// appends, the causal and sliding-window masks across calls).
func TestReferencePrefillMatchesDecode(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		cfg  func() llama.Config
		dt   tile.DType
	}{
		{"llama3-rope/bf16", llamatest.Tiny, tile.BF16},
		{"small/bf16", llamatest.Small, tile.BF16},
		{"qwen2-bias-window/f32", func() llama.Config {
			c := llamatest.Tiny()
			c.ModelType, c.QKVBias, c.SlidingWindow, c.SlidingWindowFromLayer, c.RopeScaling = "qwen2", true, 4, 1, nil
			return c
		}, tile.F32},
		{"llama-attention-bias-linear/f16", func() llama.Config {
			c := llamatest.Tiny()
			c.QKVBias, c.OutputBias = true, true
			c.RopeScaling = &llama.RopeScaling{Type: "linear", Factor: 4}
			return c
		}, tile.F16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg()
			r := reference(t, cfg, tc.dt, 5)
			rng := rand.New(rand.NewPCG(3, 4))
			tokens := randTokens(rng, 11, cfg.VocabSize)
			prefill, err := r.Forward(ctx, r.NewCache(), tokens)
			if err != nil {
				t.Fatal(err)
			}
			if len(prefill) != len(tokens) || len(prefill[0]) != cfg.VocabSize {
				t.Fatalf("%d×%d logits", len(prefill), len(prefill[0]))
			}
			// The random model is not degenerate: logits spread.
			lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
			for _, v := range prefill[len(tokens)-1] {
				lo, hi = min(lo, v), max(hi, v)
			}
			if hi-lo < 1 {
				t.Fatalf("logits span only [%v, %v]", lo, hi)
			}
			for _, chunks := range [][]int{{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, {3, 4, 1, 3}, {10, 1}} {
				c := r.NewCache()
				var got [][]float32
				at := 0
				for _, n := range chunks {
					step, err := r.Forward(ctx, c, tokens[at:at+n])
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, step...)
					at += n
				}
				if c.Len() != len(tokens) {
					t.Fatalf("cache holds %d positions", c.Len())
				}
				d := maxRelDiff(got, prefill)
				if d > 1e-4 {
					t.Errorf("chunks %v: logits differ from prefill by %.3g relative", chunks, d)
				}
				t.Logf("chunks %v: %.3g relative", chunks, d)
			}
		})
	}
}

// TestReferenceTiedEqualsUntied: a tied model and an untied one whose
// lm_head.weight is a copy of the embedding give the same logits.
func TestReferenceTiedEqualsUntied(t *testing.T) {
	cfg := llamatest.Tiny()
	cfg.TieWordEmbeddings = true
	tiedDir := t.TempDir()
	if err := llamatest.WriteRandomCheckpoint(tiedDir, cfg, tile.F32, 8, nil); err != nil {
		t.Fatal(err)
	}
	// The untied copy: the same tensors plus lm_head.weight = the embedding.
	ck, err := llama.OpenCheckpoint(tiedDir)
	if err != nil {
		t.Fatal(err)
	}
	var tensors []llamatest.TensorData
	for _, n := range ck.Names() {
		tt, _ := ck.Tensor(n)
		tensors = append(tensors, llamatest.TensorData{Name: n, Format: tt.Format, Shape: tt.Shape, Data: append([]byte(nil), tt.Data...)})
		if n == "model.embed_tokens.weight" {
			tensors = append(tensors, llamatest.TensorData{Name: "lm_head.weight", Format: tt.Format, Shape: tt.Shape, Data: append([]byte(nil), tt.Data...)})
		}
	}
	ck.Close()
	untied := cfg
	untied.TieWordEmbeddings = false
	untiedDir := t.TempDir()
	js, _ := untied.MarshalJSON()
	os.WriteFile(filepath.Join(untiedDir, llama.ConfigFile), js, 0o644)
	os.WriteFile(filepath.Join(untiedDir, llama.SingleFile), llamatest.EncodeSafetensors(tensors, nil), 0o644)

	tokens := randTokens(rand.New(rand.NewPCG(1, 2)), 6, cfg.VocabSize)
	if _, err := openReference(t, tiedDir).Forward(context.Background(), nil, tokens); err == nil {
		t.Fatal("nil cache accepted")
	}
	rt, ru := openReference(t, tiedDir), openReference(t, untiedDir)
	if ru.Config().TieWordEmbeddings || !rt.Config().TieWordEmbeddings {
		t.Fatal("configs")
	}
	a, _ := rt.Forward(context.Background(), rt.NewCache(), tokens)
	b, _ := ru.Forward(context.Background(), ru.NewCache(), tokens)
	if d := maxRelDiff(a, b); d != 0 {
		t.Fatalf("tied and untied logits differ by %.3g relative", d)
	}
}

// TestReferenceHandComputed checks a 1-layer model of hidden size 4 (one
// head of width 4, MLP width 2, vocabulary 3, all four attention biases,
// theta 10000: frequencies 1 and 1/100) against the forward pass written
// out in float64, RoPE's NeoX pairs (0,2) and (1,3) spelled out, for three
// positions (bound: 1e-5 of the largest logit: the reference rounds its
// activations to float32).
func TestReferenceHandComputed(t *testing.T) {
	cfg := llama.Config{ModelType: "llama", HiddenSize: 4, NumLayers: 1, NumHeads: 1, NumKVHeads: 1, HeadDim: 4,
		IntermediateSize: 2, VocabSize: 3, RMSNormEps: 1e-5, RopeTheta: 10000, BOSTokenID: -1, QKVBias: true, OutputBias: true}
	r := reference(t, cfg, tile.F32, 77)
	W, _ := llamatest.RandomWeights(cfg, 77)
	type vec = []float64
	get := func(name string) vec {
		out := make(vec, len(W[name]))
		for i, v := range W[name] {
			out[i] = float64(v)
		}
		return out
	}
	L := func(name string) vec { return get("model.layers.0." + name) }
	rms := func(x, w vec) vec {
		ss := 0.0
		for _, v := range x {
			ss += v * v
		}
		inv := 1 / math.Sqrt(ss/float64(len(x))+1e-5)
		out := make(vec, len(x))
		for i := range x {
			out[i] = x[i] * inv * w[i]
		}
		return out
	}
	lin := func(w, b, x vec) vec { // w is [len(w)/len(x), len(x)]
		out := make(vec, len(w)/len(x))
		for r := range out {
			for c := range x {
				out[r] += w[r*len(x)+c] * x[c]
			}
			if b != nil {
				out[r] += b[r]
			}
		}
		return out
	}
	rope := func(v vec, p float64) vec {
		c0, s0 := math.Cos(p*1), math.Sin(p*1)       // pair (0, 2)
		c1, s1 := math.Cos(p*0.01), math.Sin(p*0.01) // pair (1, 3)
		return vec{v[0]*c0 - v[2]*s0, v[1]*c1 - v[3]*s1, v[2]*c0 + v[0]*s0, v[3]*c1 + v[1]*s1}
	}
	tokens := []int{2, 0, 1}
	var xs, qs, ks, vs []vec
	for p, tok := range tokens {
		x := get("model.embed_tokens.weight")[4*tok : 4*tok+4]
		h := rms(x, L("input_layernorm.weight"))
		xs = append(xs, x)
		qs = append(qs, rope(lin(L("self_attn.q_proj.weight"), L("self_attn.q_proj.bias"), h), float64(p)))
		ks = append(ks, rope(lin(L("self_attn.k_proj.weight"), L("self_attn.k_proj.bias"), h), float64(p)))
		vs = append(vs, lin(L("self_attn.v_proj.weight"), L("self_attn.v_proj.bias"), h))
	}
	var want [][]float32
	for p := range tokens {
		w := make(vec, p+1) // softmax over keys 0..p of q·k/√4
		sum := 0.0
		for j := range w {
			for d := range 4 {
				w[j] += qs[p][d] * ks[j][d]
			}
			w[j] = math.Exp(w[j] / 2)
			sum += w[j]
		}
		a := make(vec, 4)
		for j := range w {
			for d := range 4 {
				a[d] += w[j] / sum * vs[j][d]
			}
		}
		o := lin(L("self_attn.o_proj.weight"), L("self_attn.o_proj.bias"), a)
		y := make(vec, 4)
		for d := range y {
			y[d] = xs[p][d] + o[d]
		}
		h := rms(y, L("post_attention_layernorm.weight"))
		g, u := lin(L("mlp.gate_proj.weight"), nil, h), lin(L("mlp.up_proj.weight"), nil, h)
		m := vec{g[0] / (1 + math.Exp(-g[0])) * u[0], g[1] / (1 + math.Exp(-g[1])) * u[1]}
		down := lin(L("mlp.down_proj.weight"), nil, m)
		for d := range y {
			y[d] += down[d]
		}
		logits := lin(get("lm_head.weight"), nil, rms(y, get("model.norm.weight")))
		row := make([]float32, len(logits))
		for i, v := range logits {
			row[i] = float32(v)
		}
		want = append(want, row)
	}
	got, err := r.Forward(context.Background(), r.NewCache(), tokens)
	if err != nil {
		t.Fatal(err)
	}
	d := maxRelDiff(got, want)
	if d > 1e-5 {
		t.Fatalf("reference %v, hand-computed %v: %.3g relative", got, want, d)
	}
	t.Logf("%.3g relative", d)
}

// TestReferenceGQAEqualsRepeatedKV: grouped-query attention (4 query
// heads over 2 KV heads) equals multi-head attention whose k and v
// projections repeat each KV head for its group, as Hugging Face's
// repeat_kv does (query head h reads KV head h / (heads/kvHeads)).
func TestReferenceGQAEqualsRepeatedKV(t *testing.T) {
	cfg := llamatest.Tiny()
	gqaDir := t.TempDir()
	if err := llamatest.WriteRandomCheckpoint(gqaDir, cfg, tile.F32, 21, nil); err != nil {
		t.Fatal(err)
	}
	ck, err := llama.OpenCheckpoint(gqaDir)
	if err != nil {
		t.Fatal(err)
	}
	mha := cfg
	mha.NumKVHeads = cfg.NumHeads
	group, row := cfg.NumHeads/cfg.NumKVHeads, cfg.HeadDim*cfg.HiddenSize*4 // bytes of one head's f32 rows
	var tensors []llamatest.TensorData
	for _, n := range ck.Names() {
		tt, _ := ck.Tensor(n)
		d := llamatest.TensorData{Name: n, Format: tt.Format, Shape: tt.Shape, Data: append([]byte(nil), tt.Data...)}
		if filepath.Ext(n) == ".weight" && (filepath.Ext(n[:len(n)-7]) == ".k_proj" || filepath.Ext(n[:len(n)-7]) == ".v_proj") {
			d.Shape = []int{mha.NumHeads * mha.HeadDim, cfg.HiddenSize}
			d.Data = nil
			for h := range mha.NumHeads {
				kv := h / group
				d.Data = append(d.Data, tt.Data[kv*row:(kv+1)*row]...)
			}
		}
		tensors = append(tensors, d)
	}
	ck.Close()
	mhaDir := t.TempDir()
	js, _ := mha.MarshalJSON()
	os.WriteFile(filepath.Join(mhaDir, llama.ConfigFile), js, 0o644)
	os.WriteFile(filepath.Join(mhaDir, llama.SingleFile), llamatest.EncodeSafetensors(tensors, nil), 0o644)
	rg, rm := openReference(t, gqaDir), openReference(t, mhaDir)
	tokens := randTokens(rand.New(rand.NewPCG(5, 6)), 7, cfg.VocabSize)
	a, _ := rg.Forward(context.Background(), rg.NewCache(), tokens)
	b, _ := rm.Forward(context.Background(), rm.NewCache(), tokens)
	if d := maxRelDiff(a, b); d > 1e-6 {
		t.Fatalf("GQA and repeated-KV MHA differ by %.3g relative", d)
	}
}

// TestReferenceSlidingWindow: with one layer and a window of 3, position p
// sees tokens p-2..p only, so changing token 0 changes the logits of
// positions 0-2 and leaves the rest bit for bit; a window as long as the
// sequence is full attention.
func TestReferenceSlidingWindow(t *testing.T) {
	cfg := llamatest.Tiny()
	cfg.ModelType, cfg.NumLayers, cfg.SlidingWindow = "mistral", 1, 3
	r := reference(t, cfg, tile.F32, 11)
	full := cfg
	full.SlidingWindow = 0
	rf := reference(t, full, tile.F32, 11)
	long := cfg
	long.SlidingWindow = 8
	rl := reference(t, long, tile.F32, 11)
	ctx := context.Background()
	a := []int{5, 17, 33, 8, 90, 2, 64, 41}
	b := append([]int{6}, a[1:]...)
	la, _ := r.Forward(ctx, r.NewCache(), a)
	lb, _ := r.Forward(ctx, r.NewCache(), b)
	for p := range a {
		same := maxRelDiff(la[p:p+1], lb[p:p+1]) == 0
		if same != (p >= 3) {
			t.Errorf("position %d: logits unchanged = %v", p, same)
		}
	}
	lf, _ := rf.Forward(ctx, rf.NewCache(), a)
	ll, _ := rl.Forward(ctx, rl.NewCache(), a)
	if maxRelDiff(ll, lf) != 0 || maxRelDiff(la, lf) == 0 {
		t.Error("window 8 over 8 tokens is not full attention, or window 3 is")
	}
}

func TestReferenceErrorsAndGreedy(t *testing.T) {
	cfg := llamatest.Tiny()
	r := reference(t, cfg, tile.BF16, 2)
	ctx := context.Background()
	c := r.NewCache()
	if _, err := r.Forward(ctx, c, []int{1, cfg.VocabSize}); !errors.Is(err, tile.ErrBounds) || c.Len() != 0 {
		t.Fatalf("token out of range: %v, cache %d", err, c.Len())
	}
	if _, err := r.Forward(ctx, c, []int{-1}); !errors.Is(err, tile.ErrBounds) {
		t.Fatalf("negative token: %v", err)
	}
	prompt := []int{1, 50, 7}
	want, _ := r.Forward(ctx, c, prompt)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.Forward(cancelled, c, []int{4}); !errors.Is(err, context.Canceled) || c.Len() != 3 {
		t.Fatalf("cancelled: %v, cache %d", err, c.Len())
	}
	// The cancelled call left the cache as it was: the next token's logits
	// are those of a fresh run.
	next, _ := r.Forward(ctx, c, []int{4})
	fresh, _ := r.Forward(ctx, r.NewCache(), append(prompt, 4))
	if d := maxRelDiff(next, fresh[3:]); d > 1e-4 {
		t.Fatalf("after a cancelled call: %.3g", d)
	}
	g, err := r.Greedy(ctx, prompt, 5)
	if err != nil || len(g) != 5 {
		t.Fatalf("Greedy: %v %v", g, err)
	}
	if g[0] != llamatest.Argmax(want[2]) {
		t.Fatalf("first greedy token %d, argmax %d", g[0], llamatest.Argmax(want[2]))
	}
	g2, _ := r.Greedy(ctx, append(prompt, g[0]), 4)
	for i := range g2 {
		if g2[i] != g[i+1] {
			t.Fatalf("greedy from the extended prompt %v, want %v", g2, g[1:])
		}
	}
	if _, err := r.Greedy(ctx, nil, 2); !errors.Is(err, tile.ErrArgument) {
		t.Fatalf("empty prompt: %v", err)
	}
	var nilRef *llamatest.Reference
	if _, err := nilRef.Forward(ctx, nil, prompt); !errors.Is(err, tile.ErrArgument) {
		t.Fatalf("nil reference: %v", err)
	}
	if _, err := nilRef.Greedy(ctx, prompt, 1); !errors.Is(err, tile.ErrArgument) {
		t.Fatalf("nil reference Greedy: %v", err)
	}
	if nilRef.NewCache() != nil || nilRef.NewCache().Len() != 0 || nilRef.Config().HiddenSize != 0 {
		t.Fatal("nil reference getters")
	}
	//lint:ignore SA1012 probing a nil context
	if _, err := r.Forward(nil, r.NewCache(), prompt); !errors.Is(err, tile.ErrArgument) {
		t.Fatalf("nil ctx: %v", err)
	}
	if _, err := llamatest.NewReference(nil); !errors.Is(err, tile.ErrArgument) {
		t.Fatalf("nil checkpoint: %v", err)
	}
}

func TestArgmax(t *testing.T) {
	nan := float32(math.NaN())
	for _, c := range []struct {
		v    []float32
		want int
	}{
		{nil, -1},
		{[]float32{nan, nan}, -1},
		{[]float32{1, 3, 3, 2}, 1},
		{[]float32{nan, -5, -1, nan}, 2},
		{[]float32{float32(math.Inf(-1))}, 0},
	} {
		if got := llamatest.Argmax(c.v); got != c.want {
			t.Errorf("Argmax(%v) = %d, want %d", c.v, got, c.want)
		}
	}
}
