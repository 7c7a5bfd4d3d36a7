package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/tcrt-go/tcrt/model/llama"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// subcommands are tcrt's model commands, chosen by the first argument;
// each takes the remaining arguments and returns the exit status
// (2 for a usage error):
//
//	tcrt generate -model DIR -tokens 1,2,3 [-n 32] [-temperature T] [-top-k K] [-top-p P] [-seed S] [-dtype bf16] [-ignore-eos]
//	tcrt bench-model -model DIR [-batches 1,8,32] [-prompt 128] [-steps 32] [-dtype bf16]
//
// TCRT_BACKEND chooses the backend (runtime.Open's rule).
var subcommands = map[string]func(args []string, stdout, stderr io.Writer) int{
	"generate":    generateCmd,
	"bench-model": benchModelCmd,
}

// modelFlags are the flags both model commands take.
type modelFlags struct {
	dir    *string
	dtype  *string
	float8 *bool
}

func addModelFlags(fs *flag.FlagSet) modelFlags {
	return modelFlags{
		dir:    fs.String("model", "", "Hugging Face model directory (config.json and *.safetensors); required"),
		dtype:  fs.String("dtype", "", "convert the weights on load: f32, f16 or bf16 (default: as stored)"),
		float8: fs.Bool("float8", false, "quantise the projection matrices to e4m3 on load, one scale per output channel"),
	}
}

var dtypeNames = map[string]tile.DType{"": tile.Invalid, "f32": tile.F32, "f16": tile.F16, "bf16": tile.BF16}

// load opens the runtime (TCRT_BACKEND chooses it) and the model.
func (mf modelFlags) load(ctx context.Context, stderr io.Writer) (*runtime.Runtime, *llama.Model, int) {
	dt, ok := dtypeNames[strings.ToLower(*mf.dtype)]
	if !ok {
		fmt.Fprintf(stderr, "tcrt: -dtype %q: want f32, f16 or bf16\n", *mf.dtype)
		return nil, nil, 2
	}
	if *mf.dir == "" {
		fmt.Fprintln(stderr, "tcrt: -model is required")
		return nil, nil, 2
	}
	rt, err := runtime.Open(runtime.Options{})
	if err != nil {
		fmt.Fprintln(stderr, errorLine("", err))
		return nil, nil, 1
	}
	m, err := llama.Load(ctx, rt, *mf.dir, &llama.LoadOptions{DType: dt, Float8: *mf.float8})
	if err != nil {
		rt.Close()
		fmt.Fprintln(stderr, errorLine("load", err))
		return nil, nil, 1
	}
	return rt, m, 0
}

// parseInts parses a comma-separated list of non-negative integers.
func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%q is not a non-negative integer", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// generateCmd is `tcrt generate`: greedy (or sampled) generation from
// token ids. The first stdout line is the generated ids, comma-separated;
// timings go to stderr.
func generateCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tcrt generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mf := addModelFlags(fs)
	tokens := fs.String("tokens", "", "prompt token ids, comma-separated; required")
	n := fs.Int("n", 32, "tokens to generate at most")
	temp := fs.Float64("temperature", 0, "sampling temperature (0: greedy)")
	topK := fs.Int("top-k", 0, "keep the k most likely tokens (0: all)")
	topP := fs.Float64("top-p", 1, "keep the smallest set holding this probability (1: all)")
	seed := fs.Uint64("seed", 0, "sampling seed")
	ignoreEOS := fs.Bool("ignore-eos", false, "do not stop at the model's EOS tokens")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tcrt generate: unexpected arguments %q\n", fs.Args())
		return 2
	}
	ids, err := parseInts(*tokens)
	if err != nil || *tokens == "" {
		fmt.Fprintf(stderr, "tcrt generate: -tokens: %v\n", err)
		return 2
	}
	if *n <= 0 {
		fmt.Fprintf(stderr, "tcrt generate: -n %d: want a positive count\n", *n)
		return 2
	}
	prompt := make([]int32, len(ids))
	for i, v := range ids {
		if v > 1<<31-1 {
			fmt.Fprintf(stderr, "tcrt generate: -tokens: %d is too large\n", v)
			return 2
		}
		prompt[i] = int32(v)
	}
	ctx := context.Background()
	rt, m, rc := mf.load(ctx, stderr)
	if rc != 0 {
		return rc
	}
	defer rt.Close()
	defer m.Close()
	e, err := llama.NewEngine(m, &llama.RunnerOptions{MaxSeqs: 1, MaxTokens: max(len(prompt), 1), MaxSeqLen: len(prompt) + *n})
	if err != nil {
		fmt.Fprintln(stderr, errorLine("generate", err))
		return 1
	}
	defer e.Close()
	opt := &llama.GenerateOptions{MaxNewTokens: *n,
		Sampling: llama.SampleOptions{Temperature: float32(*temp), TopK: *topK, TopP: float32(*topP), Seed: *seed}}
	if *ignoreEOS {
		opt.StopTokens = []int32{}
	}
	start := time.Now()
	ch, err := e.Submit(ctx, prompt, opt)
	if err != nil {
		fmt.Fprintln(stderr, errorLine("generate", err))
		return 1
	}
	var out []string
	var first time.Duration
	for t := range ch {
		if t.Err != nil {
			fmt.Fprintln(stderr, errorLine("generate", t.Err))
			return 1
		}
		if len(out) == 0 {
			first = time.Since(start)
		}
		out = append(out, strconv.Itoa(int(t.ID)))
	}
	total := time.Since(start)
	fmt.Fprintln(stdout, strings.Join(out, ","))
	fmt.Fprintf(stderr, "%s: prefill %d tokens in %v (%.1f tokens/s); %d tokens generated in %v (decode %.1f tokens/s)\n",
		rt.Device(), len(prompt), first.Round(time.Microsecond), float64(len(prompt))/first.Seconds(),
		len(out), total.Round(time.Microsecond), float64(max(len(out)-1, 0))/(total-first).Seconds())
	return 0
}

// benchModelCmd is `tcrt bench-model`: prefill and decode tokens/s at
// several batch sizes, on random prompts, greedy.
func benchModelCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tcrt bench-model", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mf := addModelFlags(fs)
	batches := fs.String("batches", "1,8,32", "batch sizes, comma-separated")
	promptLen := fs.Int("prompt", 128, "prompt tokens per sequence")
	steps := fs.Int("steps", 32, "decode steps per batch size")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tcrt bench-model: unexpected arguments %q\n", fs.Args())
		return 2
	}
	bs, err := parseInts(*batches)
	if err != nil || *promptLen <= 0 || *steps <= 0 {
		fmt.Fprintf(stderr, "tcrt bench-model: want positive -batches, -prompt and -steps (%v)\n", err)
		return 2
	}
	for _, b := range bs {
		if b <= 0 || b > 4096 {
			fmt.Fprintf(stderr, "tcrt bench-model: -batches: %d; want 1 … 4096\n", b)
			return 2
		}
	}
	ctx := context.Background()
	rt, m, rc := mf.load(ctx, stderr)
	if rc != 0 {
		return rc
	}
	defer rt.Close()
	defer m.Close()
	fmt.Fprintf(stdout, "device: %s; model: %d layers, hidden %d, %d parameters, %.1f MB of weights\n",
		rt.Device(), m.Config().NumLayers, m.Config().HiddenSize, m.Config().NumParams(), float64(m.WeightBytes())/1e6)
	for _, b := range bs {
		pre, dec, err := benchBatch(ctx, m, b, *promptLen, *steps)
		if err != nil {
			fmt.Fprintln(stderr, errorLine(fmt.Sprintf("batch %d", b), err))
			return 1
		}
		fmt.Fprintf(stdout, "batch %d: prefill %.1f tokens/s, decode %.1f tokens/s\n", b, pre, dec)
	}
	return 0
}

// benchBatch prefills b random prompts of promptLen tokens (packed into
// steps of up to 512 tokens) and decodes steps tokens for each, greedy;
// it returns prefill and aggregate decode tokens per second.
func benchBatch(ctx context.Context, m *llama.Model, b, promptLen, steps int) (prefill, decode float64, err error) {
	maxTokens := max(b, min(512, b*promptLen), promptLen)
	r, err := llama.NewRunner(m, &llama.RunnerOptions{MaxSeqs: b, MaxTokens: maxTokens, MaxSeqLen: promptLen + steps + 1})
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	rng := rand.New(rand.NewPCG(1, uint64(b)))
	V := m.Config().VocabSize
	work := make([]llama.Work, b)
	for i := range work {
		seq, err := r.NewSequence()
		if err != nil {
			return 0, 0, err
		}
		work[i].Seq = seq
		work[i].Tokens = make([]int32, promptLen)
		for j := range work[i].Tokens {
			work[i].Tokens[j] = int32(rng.IntN(V))
		}
	}
	next := make([][]int32, b)
	start := time.Now()
	for i := 0; i < b; {
		j, n := i, 0
		for j < b && n+promptLen <= maxTokens {
			n += promptLen
			j++
		}
		if err := r.Step(ctx, work[i:j]); err != nil {
			return 0, 0, err
		}
		for k := i; k < j; k++ {
			tok, err := r.Sample(ctx, k-i, llama.SampleOptions{}, 0)
			if err != nil {
				return 0, 0, err
			}
			next[k] = []int32{tok}
		}
		i = j
	}
	prefill = float64(b*promptLen) / time.Since(start).Seconds()
	for i := range work {
		work[i].Tokens = next[i]
	}
	start = time.Now()
	for s := range steps {
		if err := r.Step(ctx, work); err != nil {
			return 0, 0, err
		}
		for i := range work {
			tok, err := r.Sample(ctx, i, llama.SampleOptions{}, uint64(s))
			if err != nil {
				return 0, 0, err
			}
			work[i].Tokens[0] = tok
		}
	}
	decode = float64(b*steps) / time.Since(start).Seconds()
	return prefill, decode, nil
}
