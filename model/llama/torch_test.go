package llama_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/model/llama"
	"github.com/tcrt-go/tcrt/model/llama/llamatest"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// The outside reference: scripts/llama-torch.py computes the logits of a
// checkpoint with Hugging Face's semantics in PyTorch, and TestAgainstTorch
// compares tcrt's with them. It needs /usr/bin/python3 with torch
// (TCRT_PYTHON names another interpreter) and skips without it, with
// -short, and under CI=true (CI machines have no torch).
// TCRT_TORCH_DIR=DIR compares a checkpoint directory of your own instead of
// the generated variants (TCRT_TORCH_TOKENS=1,2,3 sets its prompt).

// torchBounds are the largest relative logit differences (max|Δ| over
// max(1, the row's max|logit|)) TestAgainstTorch accepts, by the dtype
// torch runs in. tcrt keeps activations in f32 whatever the weights' type:
//   - f32: torch upcasts the stored weights and runs in float32, so the
//     two differ by float32 summation order alone (about 1e-6 measured);
//   - f16 and bf16: torch runs natively, rounding every activation to the
//     type (transformers' semantics), tcrt does not: the difference is the
//     type's rounding carried through the layers, a few units of 2^-11
//     (f16) or 2^-8 (bf16) of the largest logit.
var torchBounds = map[string]float64{"float32": 1e-4, "float16": 2e-2, "bfloat16": 0.1}

// torchVariant is one generated checkpoint of TestAgainstTorch.
type torchVariant struct {
	name   string
	cfg    llama.Config
	dt     tile.DType
	shards int
	edit   func(m map[string]any) // config.json edits after writing
	// rewrite, if set, writes the weights itself (instead of
	// WriteRandomCheckpoint's files, whose config.json it keeps).
	rewrite func(t *testing.T, dir string, cfg llama.Config, dt tile.DType)
}

func torchVariants() []torchVariant {
	tiny := llamatest.Tiny() // llama3 RoPE scaling, GQA 4/2
	linear := llamatest.Tiny()
	linear.QKVBias, linear.OutputBias, linear.MLPBias = true, true, true
	linear.RopeScaling = &llama.RopeScaling{Type: "linear", Factor: 2}
	qwen := llamatest.Tiny()
	qwen.ModelType, qwen.QKVBias, qwen.RopeScaling, qwen.RopeTheta = "qwen2", true, nil, 1e6
	qwen.SlidingWindow, qwen.SlidingWindowFromLayer = 5, 1
	mistral := llamatest.Tiny()
	mistral.ModelType, mistral.SlidingWindow, mistral.RopeScaling = "mistral", 4, nil
	tied := llamatest.Tiny()
	tied.TieWordEmbeddings = true
	headDim := llamatest.Tiny()
	headDim.HeadDim, headDim.RopeScaling = 24, nil
	mha := llamatest.Tiny()
	mha.NumKVHeads, mha.RopeScaling, mha.RopeTheta = mha.NumHeads, nil, 10000
	unset := qwen // sliding_window without use_sliding_window: no window
	unset.SlidingWindowFromLayer = 0
	layerTypes := qwen
	mistralKV := llamatest.Tiny()
	mistralKV.ModelType, mistralKV.RopeScaling, mistralKV.HiddenSize = "mistral", nil, 128
	mistralKV.NumHeads, mistralKV.NumKVHeads, mistralKV.HeadDim = 16, 8, 8
	yarn := llamatest.Tiny()
	yarn.RopeTheta, yarn.RopeScaling = 10000, &llama.RopeScaling{Type: "yarn", Factor: 4, OriginalMaxPositionEmbeddings: 64}
	plain := llamatest.Tiny()
	plain.RopeScaling = nil
	quirks := llamatest.Tiny()
	quirks.TieWordEmbeddings, quirks.RopeScaling = true, nil
	return []torchVariant{
		{name: "small-gqa-8-2", cfg: llamatest.Small(), dt: tile.BF16},
		{name: "llama3-rope", cfg: tiny, dt: tile.F32},
		{name: "llama3-rope", cfg: tiny, dt: tile.F16},
		{name: "llama3-rope", cfg: tiny, dt: tile.BF16},
		{name: "linear-rope-attn-mlp-bias", cfg: linear, dt: tile.BF16},
		{name: "qwen2-bias-window", cfg: qwen, dt: tile.BF16},
		{name: "mistral-window", cfg: mistral, dt: tile.F16},
		{name: "tied-sharded", cfg: tied, dt: tile.BF16, shards: 3},
		{name: "head-dim-24", cfg: headDim, dt: tile.F32},
		{name: "mha-defaults", cfg: mha, dt: tile.BF16, edit: func(m map[string]any) {
			// What Hugging Face fills in: rope_theta 10000, no rope_scaling,
			// num_key_value_heads = heads, head_dim = hidden/heads.
			for _, k := range []string{"rope_theta", "rope_scaling", "num_key_value_heads", "head_dim", "torch_dtype"} {
				delete(m, k)
			}
		}},
		{name: "qwen2-window-unset", cfg: unset, dt: tile.BF16, edit: func(m map[string]any) {
			delete(m, "use_sliding_window")
			delete(m, "max_window_layers")
		}},
		{name: "qwen2-layer-types", cfg: layerTypes, dt: tile.F32, edit: func(m map[string]any) {
			delete(m, "max_window_layers")
			m["layer_types"] = []string{"full_attention", "sliding_attention"}
		}},
		{name: "mistral-class-defaults", cfg: mistralKV, dt: tile.BF16, edit: func(m map[string]any) {
			// MistralConfig's defaults: 8 KV heads, sliding_window 4096,
			// rms_norm_eps 1e-6, rope_theta 10000, head_dim hidden/heads.
			for _, k := range []string{"num_key_value_heads", "sliding_window", "head_dim", "rms_norm_eps", "rope_theta", "max_position_embeddings"} {
				delete(m, k)
			}
		}},
		{name: "rope-parameters-v5", cfg: tiny, dt: tile.BF16, edit: func(m map[string]any) {
			rp := m["rope_scaling"].(map[string]any)
			rp["rope_theta"] = m["rope_theta"]
			m["rope_parameters"] = rp
			delete(m, "rope_scaling")
			delete(m, "rope_theta")
		}},
		{name: "architectures-only", cfg: tiny, dt: tile.F32, edit: func(m map[string]any) {
			delete(m, "model_type")
			m["architectures"] = []string{"LlamaForCausalLM"}
		}},
		{name: "yarn", cfg: yarn, dt: tile.F32},
		{name: "yarn", cfg: yarn, dt: tile.BF16},
		{name: "dynamic-ntk", cfg: plain, dt: tile.F32, edit: func(m map[string]any) {
			m["rope_scaling"] = map[string]any{"type": "dynamic", "factor": 2.0}
		}},
		{name: "hf-file-quirks", cfg: quirks, dt: tile.BF16, rewrite: writeQuirkyCheckpoint, edit: func(m map[string]any) {
			m["rope_scaling"] = nil
			m["torch_dtype"] = "float32" // disagrees with the stored bf16
			m["architectures"] = []string{"LlamaForCausalLM"}
		}},
	}
}

// torchRun is the python script's output for one checkpoint.
type torchRun struct {
	Vocab  int    `json:"vocab"`
	Tokens []int  `json:"tokens"`
	Rows   int    `json:"rows"`
	DType  string `json:"dtype"`
	incr   []float32
	full   []float32
}

// torchPython returns the interpreter to run scripts/llama-torch.py with,
// or skips the test when it has no torch.
func torchPython(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the torch comparison takes 15-30 s")
	}
	if os.Getenv("CI") == "true" {
		t.Skip("CI=true: CI machines have no torch; run it by hand (go test ./model/llama -run TestAgainstTorch -v)")
	}
	py := os.Getenv("TCRT_PYTHON")
	if py == "" {
		py = "/usr/bin/python3"
	}
	if out, err := exec.Command(py, "-c", "import torch").CombinedOutput(); err != nil {
		t.Skipf("the torch reference needs %s with torch (set TCRT_PYTHON): %v %s", py, err, bytes.TrimSpace(out))
	}
	return py
}

// torchJob is one checkpoint for scripts/llama-torch.py --jobs: the
// logits of Tokens (a prompt) and of Generate-1 greedy decode steps, with
// torch in each of DType's comma-separated modes ("f32", "stored": the
// checkpoint's dtype), written under Out.
type torchJob struct {
	Dir      string `json:"dir"`
	Tokens   []int  `json:"tokens"`
	Generate int    `json:"generate"`
	DType    string `json:"dtype"`
	Out      string `json:"out"`
}

// runTorch runs every job in one python process (torch's import costs
// seconds) and returns each one's runs by mode.
func runTorch(t *testing.T, py string, jobs []torchJob) []map[string]*torchRun {
	t.Helper()
	tmp := t.TempDir()
	for i := range jobs {
		jobs[i].Out = filepath.Join(tmp, "logits"+strconv.Itoa(i))
	}
	spec, _ := json.Marshal(jobs)
	specFile := filepath.Join(tmp, "jobs.json")
	if err := os.WriteFile(specFile, spec, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, filepath.Join("..", "..", "scripts", "llama-torch.py"), "--jobs", specFile)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("llama-torch.py: %v\n%s", err, stderr.String())
	}
	var all []map[string]*torchRun
	if err := json.Unmarshal(stdout, &all); err != nil || len(all) != len(jobs) {
		t.Fatalf("llama-torch.py output %q: %v", stdout, err)
	}
	for i, runs := range all {
		for _, mode := range strings.Split(jobs[i].DType, ",") {
			r := runs[mode]
			if r == nil {
				t.Fatalf("llama-torch.py output %q has no %s run", stdout, mode)
			}
			for _, f := range []struct {
				ext string
				dst *[]float32
			}{{".incr.f32", &r.incr}, {".full.f32", &r.full}} {
				b, err := os.ReadFile(jobs[i].Out + "." + mode + f.ext)
				if err != nil {
					t.Fatal(err)
				}
				if len(b) != 4*r.Rows*r.Vocab {
					t.Fatalf("%s%s: %d bytes for %d rows of %d", mode, f.ext, len(b), r.Rows, r.Vocab)
				}
				*f.dst = make([]float32, len(b)/4)
				for i := range *f.dst {
					(*f.dst)[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
				}
			}
		}
	}
	return all
}

// tcrtLogits loads dir on the CPU and returns the logits of every prompt
// token (one prefill step) and of each of decode's tokens after it (one
// decode step each), rows of the vocabulary.
func tcrtLogits(t *testing.T, dir string, prompt, decode []int) (llama.Config, []float32) {
	t.Helper()
	ctx := context.Background()
	rt := openRT(t, runtime.Options{Backend: runtime.BackendCPU})
	m, err := llama.Load(ctx, rt, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	n := len(prompt) + len(decode)
	r, err := llama.NewRunner(m, &llama.RunnerOptions{MaxSeqs: 1, MaxTokens: len(prompt), MaxSeqLen: n, AllLogits: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	seq, err := r.NewSequence()
	if err != nil {
		t.Fatal(err)
	}
	V := m.Config().VocabSize
	out := make([]float32, n*V)
	step := func(row int, toks []int) {
		ids := make([]int32, len(toks))
		for i, v := range toks {
			ids[i] = int32(v)
		}
		if err := r.Step(ctx, []llama.Work{{Seq: seq, Tokens: ids}}); err != nil {
			t.Fatal(err)
		}
		if err := r.ReadLogits(ctx, 0, out[row*V:(row+len(toks))*V]); err != nil {
			t.Fatal(err)
		}
	}
	step(0, prompt)
	for i, tok := range decode {
		step(len(prompt)+i, []int{tok})
	}
	return m.Config(), out
}

// agreement compares tcrt's rows with torch's: per row, the largest
// |Δlogit| and the relative difference (see relDiff), the largest of each
// over the prefill rows and over the decode rows, and the rows whose
// argmax differs where torch's top logit leads tcrt's choice by more than
// tol of the row's scale (a near tie decided by rounding is not a
// disagreement).
type agreement struct {
	prefill, decode       float64 // relative
	absPrefill, absDecode float64
	rows, agree           int
	bad                   []int
	rowAbs, rowRel        []float64
	rowSame               []bool
}

func compareRows(got, want []float32, V, promptLen int, tol float64) agreement {
	var a agreement
	a.rows = len(want) / V
	for p := range a.rows {
		g, w := got[p*V:(p+1)*V], want[p*V:(p+1)*V]
		d, ad, scale := relDiff(g, w), 0.0, 1.0
		for i := range w {
			ad = max(ad, math.Abs(float64(g[i])-float64(w[i])))
			scale = max(scale, math.Abs(float64(w[i])))
		}
		if p < promptLen {
			a.prefill, a.absPrefill = max(a.prefill, d), max(a.absPrefill, ad)
		} else {
			a.decode, a.absDecode = max(a.decode, d), max(a.absDecode, ad)
		}
		tg, tw := llamatest.Argmax(g), llamatest.Argmax(w)
		a.rowAbs, a.rowRel, a.rowSame = append(a.rowAbs, ad), append(a.rowRel, d), append(a.rowSame, tg == tw)
		if tg == tw {
			a.agree++
		} else if float64(w[tw]-w[tg]) > tol*scale {
			a.bad = append(a.bad, p)
		}
	}
	return a
}

// TestAgainstTorch compares tcrt's logits with Hugging Face's semantics in
// PyTorch (scripts/llama-torch.py) for every generated variant: each
// prompt position (prefill) and each step of a greedy decode, torch in
// float32 (torchBounds["float32"], and every greedy token the same) and
// natively in the checkpoint's dtype (its torchBounds entry). It logs one
// table row per variant and torch mode (TCRT_TORCH_ROWS=1: one line per
// position too). Run it with
//
//	go test ./model/llama -run TestAgainstTorch -v
func TestAgainstTorch(t *testing.T) {
	py := torchPython(t)
	const promptLen, generate = 13, 10
	t.Logf("| %-26s | %-5s | %-8s | %9s | %9s | %9s | %9s | %9s |", "variant", "ckpt", "torch", "prefill Δ", "relative", "decode Δ", "relative", "greedy")
	if dir := os.Getenv("TCRT_TORCH_DIR"); dir != "" {
		cfg, err := llama.ReadConfig(dir)
		if err != nil {
			t.Fatal(err)
		}
		prompt := randomTokens(promptLen, cfg.VocabSize)
		if s := os.Getenv("TCRT_TORCH_TOKENS"); s != "" {
			prompt = prompt[:0]
			for _, f := range strings.Split(s, ",") {
				v, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil {
					t.Fatalf("TCRT_TORCH_TOKENS: %v", err)
				}
				prompt = append(prompt, v)
			}
		}
		runs := runTorch(t, py, []torchJob{{Dir: dir, Tokens: prompt, Generate: generate, DType: "f32,stored"}})
		checkTorch(t, filepath.Base(dir), dir, prompt, generate, "dir", runs[0])
		return
	}
	vs := torchVariants()
	jobs := make([]torchJob, len(vs))
	for i, v := range vs {
		dir := filepath.Join(t.TempDir(), "ckpt")
		if err := llamatest.WriteRandomCheckpoint(dir, v.cfg, v.dt, 5, &llamatest.Options{Shards: v.shards}); err != nil {
			t.Fatal(err)
		}
		if v.rewrite != nil {
			v.rewrite(t, dir, v.cfg, v.dt)
		}
		if v.edit != nil {
			rewriteJSON(t, filepath.Join(dir, llama.ConfigFile), v.edit)
		}
		jobs[i] = torchJob{Dir: dir, Tokens: randomTokens(promptLen, v.cfg.VocabSize), Generate: generate, DType: "f32,stored"}
	}
	runs := runTorch(t, py, jobs)
	for i, v := range vs {
		t.Run(v.name+"/"+v.dt.String(), func(t *testing.T) {
			checkTorch(t, v.name, jobs[i].Dir, jobs[i].Tokens, generate, v.dt.String(), runs[i])
		})
	}
}

func randomTokens(n, vocab int) []int {
	rng := rand.New(rand.NewPCG(30, 31))
	p := make([]int, n)
	for i := range p {
		p[i] = rng.IntN(vocab)
	}
	return p
}

// checkTorch compares tcrt's logits over dir with torch's runs in float32
// and in the checkpoint's dtype (incremental decode, as tcrt runs; the
// float32 run's one-pass forward too). ckpt names the checkpoint's dtype
// in the table.
func checkTorch(t *testing.T, name, dir string, prompt []int, generate int, ckpt string, runs map[string]*torchRun) {
	t.Helper()
	ref, nat := runs["f32"], runs["stored"]
	cfg, got := tcrtLogits(t, dir, prompt, ref.Tokens[len(prompt):len(prompt)+generate-1])
	if ref.Vocab != cfg.VocabSize {
		t.Fatalf("torch vocabulary %d, tcrt %d", ref.Vocab, cfg.VocabSize)
	}
	V := cfg.VocabSize
	report := func(mode string, a agreement, bound float64, strict bool) {
		t.Logf("| %-26s | %-5s | %-8s | %9.2g | %9.2g | %9.2g | %9.2g | %5d/%-3d |", name, ckpt, mode,
			a.absPrefill, a.prefill, a.absDecode, a.decode, a.agree, a.rows)
		if os.Getenv("TCRT_TORCH_ROWS") != "" {
			for p := range a.rows {
				kind := "decode"
				if p < len(prompt) {
					kind = "prefill"
				}
				t.Logf("    %s %-8s position %3d %-7s max|Δ| %9.3g relative %9.3g same argmax %v", name, mode, p, kind, a.rowAbs[p], a.rowRel[p], a.rowSame[p])
			}
		}
		if a.prefill > bound || a.decode > bound {
			t.Errorf("torch %s: relative logit difference prefill %.3g, decode %.3g; bound %.3g", mode, a.prefill, a.decode, bound)
		}
		if strict && len(a.bad) > 0 {
			t.Errorf("torch %s: greedy tokens differ at positions %v (of %d)", mode, a.bad, a.rows)
		}
	}
	f32 := torchBounds["float32"]
	report("f32", compareRows(got, ref.incr, V, len(prompt), f32), f32, true)
	report("f32-1p", compareRows(got, ref.full, V, len(prompt), f32), f32, true)
	b, ok := torchBounds[nat.DType]
	if !ok || nat.DType == "float32" {
		return
	}
	// Teacher-forced on torch f32's tokens, tcrt's rows are comparable with
	// the native run's while its greedy tokens are the same.
	n := len(prompt)
	for n < nat.Rows && nat.Tokens[n] == ref.Tokens[n] {
		n++
	}
	report(nat.DType, compareRows(got[:n*V], nat.incr[:n*V], V, len(prompt), 2*b), b, false)
	if n < nat.Rows {
		t.Logf("%s: torch %s's greedy tokens leave torch f32's at position %d (a near tie); rows after it not compared", name, nat.DType, n)
	}
}
