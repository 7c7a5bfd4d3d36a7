package llama

import (
	"context"
	"math"
	"slices"
	"sync"

	"github.com/tcrt-go/tcrt/tile"
)

// GenerateOptions are the parts of a generation request. The zero value
// is greedy decoding until a stop token or a full sequence.
type GenerateOptions struct {
	// MaxNewTokens bounds the tokens generated; 0 means until the
	// sequence is full (the engine's MaxSeqLen).
	MaxNewTokens int
	// StopTokens end the generation; the stop token itself is not sent.
	// nil means the model's EOS ids (Config.EOSTokenIDs); an empty,
	// non-nil slice means none.
	StopTokens []int32
	// Sampling chooses each token (Temperature 0: greedy). Token n of the
	// request is drawn with Philox offset n, so a seed gives the same
	// tokens whatever else the engine runs alongside.
	Sampling SampleOptions
}

// Token is one value of a generation stream: a token id, or, as the last
// value before the stream closes, the error that ended it early (its ctx
// was cancelled, the engine closed or a kernel failed); ID is then -1.
type Token struct {
	ID  int32
	Err error
}

// Engine serves generation requests concurrently: one goroutine runs a
// Runner in steps that batch the decode of every running request with the
// prefill of newly admitted ones (continuous batching). Submit and
// Generate are safe for concurrent use; Close stops it.
type Engine struct {
	r      *Runner
	eos    []int32
	mu     sync.Mutex
	queue  []*request    // submitted, not yet taken by the loop (mu)
	closed bool          // Close has begun (mu)
	wake   chan struct{} // one pending wake-up for the loop
	quit   chan struct{}
	done   chan struct{}
	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	once   sync.Once
	err    error

	reserved int // KV pages reserved by admitted requests (the loop's)
}

type request struct {
	ctx    context.Context
	prompt []int32
	opt    GenerateOptions
	limit  int // tokens to generate at most
	out    chan Token
	seq    int
	pages  int     // KV pages reserved for the whole generation
	n      int     // tokens generated
	next   []int32 // the token to feed next (one element)
	done   bool
}

const engineOp = "llama engine"

// NewEngine starts an engine for m with a runner of opts (AllLogits must
// be false). The model must outlive the engine.
func NewEngine(m *Model, opts *RunnerOptions) (*Engine, error) {
	if opts != nil && opts.AllLogits {
		return nil, tile.Errorf(tile.ErrArgument, engineOp, "opts.AllLogits", "an engine samples each sequence's last token; AllLogits is for Runner users")
	}
	r, err := NewRunner(m, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Engine{r: r, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}), ctx: ctx, cancel: cancel}
	for _, id := range m.cfg.EOSTokenIDs {
		e.eos = append(e.eos, int32(id))
	}
	go e.loop()
	return e, nil
}

// Submit queues a generation of prompt and returns its stream of tokens,
// closed when the generation ends; it does not wait for the engine. The stream is buffered for every token
// the request may produce, so a slow reader never stalls the engine.
// Cancelling ctx ends the generation at the engine's next step (the last
// value then carries ctx's error). Bad arguments give an error wrapping
// tile.ErrArgument, ErrShape or ErrBounds; a closed engine, ErrClosed.
func (e *Engine) Submit(ctx context.Context, prompt []int32, opts *GenerateOptions) (<-chan Token, error) {
	const op = "llama submit"
	if e == nil || e.r == nil {
		return nil, tile.Errorf(tile.ErrArgument, op, "engine", "engine is nil or was not made by NewEngine")
	}
	if ctx == nil {
		return nil, tile.Errorf(tile.ErrArgument, op, "ctx", "context is nil")
	}
	var o GenerateOptions
	if opts != nil {
		o = *opts
	}
	ro, cfg := e.r.o, e.r.cfg
	switch {
	case len(prompt) == 0:
		return nil, tile.Errorf(tile.ErrShape, op, "prompt", "empty")
	case len(prompt) > ro.MaxTokens:
		return nil, tile.Errorf(tile.ErrShape, op, "prompt", "%d tokens; a prompt must fit one step of MaxTokens %d", len(prompt), ro.MaxTokens)
	case len(prompt) >= ro.MaxSeqLen:
		return nil, tile.Errorf(tile.ErrShape, op, "prompt", "%d tokens leave no room in a sequence of MaxSeqLen %d", len(prompt), ro.MaxSeqLen)
	case o.MaxNewTokens < 0:
		return nil, tile.Errorf(tile.ErrArgument, op, "opts.MaxNewTokens", "%d is negative", o.MaxNewTokens)
	}
	for i, t := range prompt {
		if t < 0 || int(t) >= cfg.VocabSize {
			return nil, tile.Errorf(tile.ErrBounds, op, "prompt", "token %d is %d, outside the vocabulary of %d", i, t, cfg.VocabSize)
		}
	}
	if err := o.Sampling.validate(op); err != nil {
		return nil, err
	}
	if o.StopTokens == nil {
		o.StopTokens = e.eos
	}
	limit := ro.MaxSeqLen - len(prompt)
	if o.MaxNewTokens > 0 {
		limit = min(limit, o.MaxNewTokens)
	}
	q := &request{ctx: ctx, prompt: slices.Clone(prompt), opt: o, limit: limit,
		out: make(chan Token, limit+1), seq: -1, next: make([]int32, 1)}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, tile.Errorf(tile.ErrClosed, op, "engine", "engine is closed")
	}
	e.queue = append(e.queue, q)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
	return q.out, nil
}

// take moves the submitted requests onto pending.
func (e *Engine) take(pending []*request) []*request {
	e.mu.Lock()
	defer e.mu.Unlock()
	pending = append(pending, e.queue...)
	clear(e.queue)
	e.queue = e.queue[:0]
	return pending
}

// Generate submits prompt and waits for the whole generation: the tokens,
// and the error that ended it early, if any (with the tokens before it).
func (e *Engine) Generate(ctx context.Context, prompt []int32, opts *GenerateOptions) ([]int32, error) {
	ch, err := e.Submit(ctx, prompt, opts)
	if err != nil {
		return nil, err
	}
	var out []int32
	for t := range ch {
		if t.Err != nil {
			return out, t.Err
		}
		out = append(out, t.ID)
	}
	return out, nil
}

// Close stops the engine: requests still running or queued end with an
// error wrapping tile.ErrClosed, and the runner's buffers are released
// (the model is not closed). It waits for the step in progress and is
// idempotent; on a nil Engine it returns an error wrapping
// tile.ErrArgument.
func (e *Engine) Close() error {
	if e == nil || e.r == nil {
		return tile.Errorf(tile.ErrArgument, "close", "engine", "engine is nil or was not made by NewEngine")
	}
	e.once.Do(func() {
		e.mu.Lock()
		e.closed = true // no Submit queues after this
		e.mu.Unlock()
		close(e.quit)
		e.cancel()
		<-e.done
		e.err = e.r.Close()
	})
	return e.err
}

func (s SampleOptions) validate(op string) error {
	switch {
	case !(s.Temperature >= 0) || math.IsInf(float64(s.Temperature), 0):
		return tile.Errorf(tile.ErrArgument, op, "Sampling.Temperature", "%v; want finite and ≥ 0", s.Temperature)
	case s.TopK < 0:
		return tile.Errorf(tile.ErrArgument, op, "Sampling.TopK", "%d is negative", s.TopK)
	case !(s.TopP >= 0 && s.TopP <= 1):
		return tile.Errorf(tile.ErrArgument, op, "Sampling.TopP", "%v; want 0 (off) … 1", s.TopP)
	case !(s.MinP >= 0 && s.MinP <= 1):
		return tile.Errorf(tile.ErrArgument, op, "Sampling.MinP", "%v; want 0 … 1", s.MinP)
	}
	return nil
}

// finish ends q: an error value if err is set, then the stream closes and
// the sequence is freed.
func (e *Engine) finish(q *request, err error) {
	if q.done {
		return
	}
	q.done = true
	if err != nil {
		q.out <- Token{ID: -1, Err: err}
	}
	close(q.out)
	if q.seq >= 0 {
		_ = e.r.FreeSequence(q.seq)
		q.seq = -1
		e.reserved -= q.pages
	}
}

// fail ends q with err from a step, or with ErrClosed if Close cancelled
// the step.
func (e *Engine) fail(q *request, err error) {
	if e.ctx.Err() != nil {
		err = tile.Errorf(tile.ErrClosed, engineOp, "engine", "engine closed")
	}
	e.finish(q, err)
}

func (e *Engine) loop() {
	defer close(e.done)
	var pending, active []*request
	var work []Work
	closed := tile.Errorf(tile.ErrClosed, engineOp, "engine", "engine closed")
	shutdown := func() {
		for _, q := range e.take(append(active, pending...)) {
			e.finish(q, closed)
		}
	}
	for {
		select {
		case <-e.quit:
			shutdown()
			return
		default:
		}
		pending = e.take(pending)
		if len(active) == 0 && len(pending) == 0 {
			select {
			case <-e.wake:
				continue
			case <-e.quit:
				shutdown()
				return
			}
		}
		// Cancelled requests end here, at the step boundary.
		live := func(q *request) bool {
			if err := q.ctx.Err(); err != nil {
				e.finish(q, err)
			}
			return !q.done
		}
		active = slices.DeleteFunc(active, func(q *request) bool { return !live(q) })
		pending = slices.DeleteFunc(pending, func(q *request) bool { return !live(q) })
		// Admit queued prompts, in order, while a slot, the step's token
		// budget and the KV pages for the whole generation allow (so no
		// step runs out of pages).
		budget := e.r.o.MaxTokens - len(active)
		for len(pending) > 0 && len(pending[0].prompt) <= budget {
			q := pending[0]
			ps := e.r.o.PageSize
			q.pages = (len(q.prompt) + q.limit + ps - 1) / ps
			if q.pages > e.r.o.NumPages {
				pending = pending[1:]
				e.finish(q, tile.Errorf(tile.ErrOutOfMemory, engineOp, "prompt", "%d prompt and %d new tokens need %d KV pages; the engine has %d", len(q.prompt), q.limit, q.pages, e.r.o.NumPages))
				continue
			}
			if e.reserved+q.pages > e.r.o.NumPages {
				break
			}
			seq, err := e.r.NewSequence()
			if err != nil {
				break
			}
			pending = pending[1:]
			q.seq = seq
			e.reserved += q.pages
			budget -= len(q.prompt)
			active = append(active, q)
		}
		if len(active) == 0 {
			continue
		}
		work = work[:0]
		for _, q := range active {
			tokens := q.next
			if q.n == 0 {
				tokens = q.prompt
			}
			work = append(work, Work{Seq: q.seq, Tokens: tokens})
		}
		if err := e.r.Step(e.ctx, work); err != nil {
			for _, q := range active {
				e.fail(q, err)
			}
			active = active[:0]
			continue
		}
		for i, q := range active {
			tok, err := e.r.Sample(e.ctx, i, q.opt.Sampling, uint64(q.n))
			switch {
			case err != nil:
				e.fail(q, err)
			case slices.Contains(q.opt.StopTokens, tok):
				e.finish(q, nil)
			default:
				q.out <- Token{ID: tok}
				q.n++
				q.next[0] = tok
				if q.n >= q.limit {
					e.finish(q, nil)
				}
			}
		}
		active = slices.DeleteFunc(active, func(q *request) bool { return q.done })
	}
}
