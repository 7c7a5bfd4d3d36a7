package llama_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/tcrt-go/tcrt/model/llama"
	"github.com/tcrt-go/tcrt/model/llama/llamatest"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

func (f *fixture) engine(t *testing.T, o llama.RunnerOptions) *llama.Engine {
	t.Helper()
	e, err := llama.NewEngine(f.m, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TestEngineGreedyMatchesReference: requests submitted concurrently to one
// engine (so their steps are shared) each generate the reference's greedy
// tokens.
func TestEngineGreedyMatchesReference(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, runtime.BackendCPU, llamatest.Small(), tile.F32, 5)
	e := f.engine(t, llama.RunnerOptions{MaxSeqs: 3, MaxTokens: 32, MaxSeqLen: 64})
	rng := rand.New(rand.NewPCG(5, 6))
	lens := []int{4, 11, 1, 7, 2} // more requests than slots: some queue
	const n = 9
	got := make([][]int32, len(lens))
	errs := make([]error, len(lens))
	var wg sync.WaitGroup
	prompts := make([][]int32, len(lens))
	for i, l := range lens {
		prompts[i] = randPrompt(rng, l, f.cfg.VocabSize)
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = e.Generate(ctx, prompts[i], &llama.GenerateOptions{MaxNewTokens: n, StopTokens: []int32{}})
		}()
	}
	wg.Wait()
	for i := range lens {
		if errs[i] != nil {
			t.Fatalf("request %d: %v", i, errs[i])
		}
		want, err := f.ref.Greedy(ctx, ints(prompts[i]), n)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ints(got[i]), want) {
			t.Errorf("request %d: got %v, reference %v", i, got[i], want)
		}
	}
}

// TestEngineSamplingDeterministic: a seeded sampled request gives the same
// tokens alone and alongside other requests; another seed differs.
func TestEngineSamplingDeterministic(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, runtime.BackendCPU, llamatest.Small(), tile.BF16, 8)
	e := f.engine(t, llama.RunnerOptions{MaxSeqs: 4, MaxTokens: 32, MaxSeqLen: 64})
	prompt := []int32{5, 17, 400, 9}
	opt := func(seed uint64) *llama.GenerateOptions {
		return &llama.GenerateOptions{MaxNewTokens: 16, StopTokens: []int32{},
			Sampling: llama.SampleOptions{Temperature: 1.5, TopK: 50, TopP: 0.95, Seed: seed}}
	}
	alone, err := e.Generate(ctx, prompt, opt(42))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	others := make([][]int32, 3)
	for i := range others {
		wg.Add(1)
		go func() {
			defer wg.Done()
			others[i], _ = e.Generate(ctx, []int32{int32(3 + i), 8}, opt(uint64(i)))
		}()
	}
	together, err := e.Generate(ctx, prompt, opt(42))
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(alone, together) {
		t.Errorf("seed 42 alone %v, alongside others %v", alone, together)
	}
	other, _ := e.Generate(ctx, prompt, opt(43))
	if slices.Equal(alone, other) {
		t.Errorf("seeds 42 and 43 drew the same 16 tokens %v", alone)
	}
	if len(alone) != 16 {
		t.Errorf("%d tokens, want 16", len(alone))
	}
}

// TestEngineStopCancelClose: a stop token ends a stream before it is sent;
// a cancelled ctx ends one at the next step with ctx's error and frees its
// sequence; Close ends the rest with ErrClosed and refuses new work.
func TestEngineStopCancelClose(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, runtime.BackendCPU, llamatest.Tiny(), tile.F32, 2)
	ro := llama.RunnerOptions{MaxSeqs: 2, MaxTokens: 16, MaxSeqLen: 200}
	e := f.engine(t, ro)
	prompt := []int32{1, 2, 3}
	full, err := e.Generate(ctx, prompt, &llama.GenerateOptions{MaxNewTokens: 20, StopTokens: []int32{}})
	if err != nil || len(full) != 20 {
		t.Fatalf("%d tokens, %v; want 20", len(full), err)
	}
	cut := 1
	for cut < len(full) && slices.Contains(full[:cut], full[cut]) {
		cut++
	}
	if cut == len(full) {
		t.Skip("no token of the greedy output is new")
	}
	stopped, err := e.Generate(ctx, prompt, &llama.GenerateOptions{MaxNewTokens: 20, StopTokens: []int32{full[cut]}})
	if err != nil || !slices.Equal(stopped, full[:cut]) {
		t.Errorf("stop at %d: got %v (%v), want %v", full[cut], stopped, err, full[:cut])
	}

	cctx, cancel := context.WithCancel(ctx)
	ch, err := e.Submit(cctx, prompt, &llama.GenerateOptions{StopTokens: []int32{}}) // until full: 197 tokens
	if err != nil {
		t.Fatal(err)
	}
	<-ch
	cancel()
	var last llama.Token
	n := 1
	for tok := range ch {
		last = tok
		n++
	}
	if !errors.Is(last.Err, context.Canceled) || n >= 197 {
		t.Errorf("cancelled stream: %d values, last %+v; want an early context.Canceled", n, last)
	}
	// The slot is free again: two more requests run at once.
	for range 2 {
		if _, err := e.Generate(ctx, prompt, &llama.GenerateOptions{MaxNewTokens: 2}); err != nil {
			t.Fatal(err)
		}
	}

	ch, err = e.Submit(ctx, prompt, &llama.GenerateOptions{StopTokens: []int32{}})
	if err != nil {
		t.Fatal(err)
	}
	<-ch
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for tok := range ch {
		last = tok
	}
	if !errors.Is(last.Err, tile.ErrClosed) {
		t.Errorf("stream at Close ended with %+v, want ErrClosed", last)
	}
	if _, err := e.Submit(ctx, prompt, nil); !errors.Is(err, tile.ErrClosed) {
		t.Errorf("Submit after Close: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestEngineSubmitErrors: bad requests are refused with typed errors.
func TestEngineSubmitErrors(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, runtime.BackendCPU, llamatest.Tiny(), tile.F32, 2)
	e := f.engine(t, llama.RunnerOptions{MaxSeqs: 2, MaxTokens: 8, MaxSeqLen: 32})
	V := int32(f.cfg.VocabSize)
	for _, c := range []struct {
		name   string
		ctx    context.Context
		prompt []int32
		opt    *llama.GenerateOptions
		want   error
	}{
		{"nil ctx", nil, []int32{1}, nil, tile.ErrArgument},
		{"empty prompt", ctx, nil, nil, tile.ErrShape},
		{"prompt past MaxTokens", ctx, make([]int32, 9), nil, tile.ErrShape},
		{"token past vocab", ctx, []int32{V}, nil, tile.ErrBounds},
		{"negative max", ctx, []int32{1}, &llama.GenerateOptions{MaxNewTokens: -1}, tile.ErrArgument},
		{"negative temperature", ctx, []int32{1}, &llama.GenerateOptions{Sampling: llama.SampleOptions{Temperature: -1}}, tile.ErrArgument},
		{"top-p > 1", ctx, []int32{1}, &llama.GenerateOptions{Sampling: llama.SampleOptions{TopP: 1.5}}, tile.ErrArgument},
		{"negative top-k", ctx, []int32{1}, &llama.GenerateOptions{Sampling: llama.SampleOptions{TopK: -1}}, tile.ErrArgument},
	} {
		if _, err := e.Submit(c.ctx, c.prompt, c.opt); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := llama.NewEngine(f.m, &llama.RunnerOptions{AllLogits: true}); !errors.Is(err, tile.ErrArgument) {
		t.Errorf("AllLogits engine: %v", err)
	}
	var nilEngine *llama.Engine
	if _, err := nilEngine.Submit(ctx, []int32{1}, nil); !errors.Is(err, tile.ErrArgument) {
		t.Errorf("nil engine: %v", err)
	}
}

// TestEngineTopK: with top-k 3 every sampled token is one of the three
// largest logits of the reference at its position (feeding the reference
// the sampled tokens), and the draws are not all the argmax.
func TestEngineTopK(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, runtime.BackendCPU, llamatest.Small(), tile.F32, 4)
	e := f.engine(t, llama.RunnerOptions{MaxSeqs: 2, MaxTokens: 16, MaxSeqLen: 64})
	prompt := []int32{7, 300, 12}
	notTop := 0
	for seed := range uint64(4) {
		got, err := e.Generate(ctx, prompt, &llama.GenerateOptions{MaxNewTokens: 10, StopTokens: []int32{},
			Sampling: llama.SampleOptions{Temperature: 3, TopK: 3, Seed: seed}})
		if err != nil {
			t.Fatal(err)
		}
		cache := f.ref.NewCache()
		logits, err := f.ref.Forward(ctx, cache, ints(prompt))
		if err != nil {
			t.Fatal(err)
		}
		last := logits[len(logits)-1]
		for i, tok := range got {
			rank := 0
			for _, v := range last {
				if v > last[tok] {
					rank++
				}
			}
			if rank >= 3 {
				t.Fatalf("seed %d, token %d: %d has rank %d; top-k 3 keeps ranks 0 … 2", seed, i, tok, rank)
			}
			if rank > 0 {
				notTop++
			}
			step, err := f.ref.Forward(ctx, cache, []int{int(tok)})
			if err != nil {
				t.Fatal(err)
			}
			last = step[0]
		}
	}
	if notTop == 0 {
		t.Error("40 draws at temperature 3 were all the argmax")
	}
}
