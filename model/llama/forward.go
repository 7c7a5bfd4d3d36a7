package llama

import (
	"context"
	"sync"
	"unsafe"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// RunnerOptions size a Runner. Zero fields take the defaults named.
type RunnerOptions struct {
	// MaxSeqs is how many sequences the runner holds at once (default 8).
	MaxSeqs int
	// MaxTokens is how many tokens one Step may carry, prompts and decodes
	// together (default 512, at least MaxSeqs). A prompt must fit in one
	// step: there is no chunked prefill.
	MaxTokens int
	// MaxSeqLen is how many tokens one sequence may hold (default the
	// model's MaxPositionEmbeddings, capped at 4096; 4096 when unset).
	MaxSeqLen int
	// PageSize is the KV cache's page size in tokens (default 16; a power
	// of two ≥ 16).
	PageSize int
	// NumPages is the number of KV pages shared by all sequences (default
	// enough for MaxSeqs sequences of MaxSeqLen tokens).
	NumPages int
	// KVDType is the element type of the KV cache (default F32; F16 and
	// BF16 halve it).
	KVDType tile.DType
	// AllLogits makes Step compute the logits of every token, not only of
	// each sequence's last one (the logits buffer is then MaxTokens rows
	// of the vocabulary; for tests and scoring).
	AllLogits bool
}

// Work is one sequence's part of a Step: the tokens it appends.
type Work struct {
	// Seq is a sequence from Runner.NewSequence.
	Seq int
	// Tokens are the new tokens: the whole prompt of an empty sequence
	// (prefill), or one token of a running one (decode).
	Tokens []int32
}

// stageRows is how many rows of one sequence go through the slot-indexed
// staging buffer (and the KV append) at a time.
const stageRows = 64

// Runner runs the forward pass of a Model over steps that mix the prefill
// of new prompts with the decode of running sequences (continuous
// batching), with a paged KV cache per layer. Every buffer is allocated by
// NewRunner and reused by every step. Its methods are safe for concurrent
// use (they serialise); Close releases its buffers, not the model's.
type Runner struct {
	m   *Model
	rt  *runtime.Runtime
	cfg Config
	o   RunnerOptions

	mu     sync.Mutex
	closed bool
	caches []*ops.KVCache // one per layer, identical block tables
	free   []int          // free KV pages
	pages  [][]int        // pages of each sequence
	lens   []int          // tokens of each sequence
	inUse  []bool

	qd, kvd, qkvd, inter int

	ids, pos, tok        *runtime.Buffer // s32
	emb                  *runtime.Buffer // embedding dtype [MaxTokens, H]
	res, h               *runtime.Buffer // f32 [MaxTokens, H]: residual, normed
	qkv, attn            *runtime.Buffer // f32 [MaxTokens, qkvd], [MaxTokens, qd]
	stage, ostage        *runtime.Buffer // f32 [MaxSeqs, stageRows, qkvd], [MaxSeqs, qd]
	gu, act              *runtime.Buffer // f32 [MaxTokens, 2I], [MaxTokens, I]
	last, logits         *runtime.Buffer // f32 [MaxSeqs, H], [MaxSeqs or MaxTokens, V]
	bufs                 []*runtime.Buffer
	hostIDs, hostPos     []int32
	hostTok              []int32
	cu, counts, rows     []int
	decodes              []int // work indices of decodes in the last step
	nWork, nTok          int   // the last step's shape
	appendOpt            ops.KVAppendOptions
	stK, stV, stQ, stO   ops.AttnTensor         // slot-indexed views of stage and ostage
	attnOpt, decAttnOpts []ops.AttentionOptions // per layer: prefill, decode
}

const runnerOp = "llama runner"

// NewRunner allocates a runner for m: its KV caches and every activation
// buffer a step needs.
func NewRunner(m *Model, opts *RunnerOptions) (*Runner, error) {
	if m == nil || m.weights.Embed == nil {
		return nil, tile.Errorf(tile.ErrArgument, runnerOp, "m", "model is nil or was not made by Load")
	}
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return nil, tile.Errorf(tile.ErrClosed, runnerOp, "m", "model is closed")
	}
	var o RunnerOptions
	if opts != nil {
		o = *opts
	}
	cfg := m.cfg
	if o.MaxSeqs == 0 {
		o.MaxSeqs = 8
	}
	if o.MaxTokens == 0 {
		o.MaxTokens = max(512, o.MaxSeqs)
	}
	if o.MaxSeqLen == 0 {
		o.MaxSeqLen = 4096
		if p := cfg.MaxPositionEmbeddings; p > 0 {
			o.MaxSeqLen = min(p, 4096)
		}
	}
	if o.PageSize == 0 {
		o.PageSize = 16
	}
	if o.KVDType == tile.Invalid {
		o.KVDType = tile.F32
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"MaxSeqs", o.MaxSeqs}, {"MaxTokens", o.MaxTokens}, {"MaxSeqLen", o.MaxSeqLen}, {"PageSize", o.PageSize}} {
		if f.v <= 0 || f.v > 1<<24 {
			return nil, tile.Errorf(tile.ErrShape, runnerOp, "opts."+f.name, "%d; want 1 … 2^24", f.v)
		}
	}
	if s := cfg.RopeScaling; s != nil && s.Type == "dynamic" && o.MaxSeqLen > cfg.MaxPositionEmbeddings {
		return nil, tile.Errorf(tile.ErrUnsupported, runnerOp, "opts.MaxSeqLen", "%d exceeds max_position_embeddings %d, past which dynamic RoPE scaling rescales every position", o.MaxSeqLen, cfg.MaxPositionEmbeddings)
	}
	if o.MaxTokens < o.MaxSeqs {
		return nil, tile.Errorf(tile.ErrShape, runnerOp, "opts.MaxTokens", "%d is fewer than MaxSeqs %d: every sequence must be able to decode in one step", o.MaxTokens, o.MaxSeqs)
	}
	perSeq := (o.MaxSeqLen + o.PageSize - 1) / o.PageSize
	if o.NumPages == 0 {
		o.NumPages = o.MaxSeqs * perSeq
	}
	if o.NumPages < 0 || o.NumPages > 1<<24 {
		return nil, tile.Errorf(tile.ErrShape, runnerOp, "opts.NumPages", "%d; want 1 … 2^24", o.NumPages)
	}
	r := &Runner{m: m, rt: m.rt, cfg: cfg, o: o,
		qd: cfg.NumHeads * cfg.HeadDim, kvd: cfg.NumKVHeads * cfg.HeadDim, inter: cfg.IntermediateSize}
	r.qkvd = r.qd + 2*r.kvd
	if err := r.alloc(); err != nil {
		_ = r.Close()
		return nil, err
	}
	return r, nil
}

func (r *Runner) alloc() error {
	o, cfg, rt := r.o, r.cfg, r.rt
	for range cfg.NumLayers {
		c, err := ops.NewKVCache(rt, ops.KVCacheOptions{DType: o.KVDType, Batch: o.MaxSeqs,
			HeadsKV: cfg.NumKVHeads, HeadDim: cfg.HeadDim, PageSize: o.PageSize, NumPages: o.NumPages})
		if err != nil {
			return err
		}
		r.caches = append(r.caches, c)
	}
	H, T, S, V := cfg.HiddenSize, o.MaxTokens, o.MaxSeqs, cfg.VocabSize
	lrows := S
	if o.AllLogits {
		lrows = T
	}
	for _, b := range []struct {
		dst   **runtime.Buffer
		dt    tile.DType
		shape []int
	}{
		{&r.ids, tile.S32, []int{T}}, {&r.pos, tile.S32, []int{T}}, {&r.tok, tile.S32, []int{1}},
		{&r.emb, r.m.weights.Embed.DType(), []int{T, H}},
		{&r.res, tile.F32, []int{T, H}}, {&r.h, tile.F32, []int{T, H}},
		{&r.qkv, tile.F32, []int{T, r.qkvd}}, {&r.attn, tile.F32, []int{T, r.qd}},
		{&r.stage, tile.F32, []int{S, stageRows, r.qkvd}}, {&r.ostage, tile.F32, []int{S, r.qd}},
		{&r.gu, tile.F32, []int{T, 2 * r.inter}}, {&r.act, tile.F32, []int{T, r.inter}},
		{&r.last, tile.F32, []int{S, H}}, {&r.logits, tile.F32, []int{lrows, V}},
	} {
		buf, err := rt.Alloc(b.dt, b.shape...)
		if err != nil {
			return err
		}
		*b.dst = buf
		r.bufs = append(r.bufs, buf)
	}
	r.free = make([]int, o.NumPages)
	for i := range r.free {
		r.free[i] = o.NumPages - 1 - i // pop from the end: page 0 first
	}
	r.pages = make([][]int, S)
	for i := range r.pages {
		r.pages[i] = make([]int, 0, (o.MaxSeqLen+o.PageSize-1)/o.PageSize)
	}
	r.lens, r.inUse = make([]int, S), make([]bool, S)
	r.hostIDs, r.hostPos, r.hostTok = make([]int32, T), make([]int32, T), make([]int32, 1)
	r.cu, r.counts, r.rows = make([]int, 0, S+1), make([]int, S), make([]int, 0, S)
	r.decodes = make([]int, 0, S)
	r.appendOpt.Counts = r.counts
	hd, kvh, qkvd := cfg.HeadDim, cfg.NumKVHeads, r.qkvd
	st := func(c0, heads, rows int) ops.AttnTensor {
		return ops.AttnTensor{Buf: r.stage, Offset: c0, Shape: []int{S, rows, heads, hd},
			Strides: []int{stageRows * qkvd, qkvd, hd, 1}}
	}
	r.stK, r.stV = st(r.qd, kvh, stageRows), st(r.qd+r.kvd, kvh, stageRows)
	r.stQ = st(0, cfg.NumHeads, 1)
	r.stO = ops.AttnTensor{Buf: r.ostage, Shape: []int{S, 1, cfg.NumHeads, hd}}
	r.attnOpt = make([]ops.AttentionOptions, cfg.NumLayers)
	r.decAttnOpts = make([]ops.AttentionOptions, cfg.NumLayers)
	for l := range cfg.NumLayers {
		a := ops.AttentionOptions{Causal: true}
		if w := cfg.LayerSlidingWindow(l); w > 0 {
			a.Window = &ops.Window{Left: w - 1, Right: 0}
		}
		r.attnOpt[l], r.decAttnOpts[l] = a, a
	}
	return nil
}

// Options returns the runner's options with the defaults filled in.
func (r *Runner) Options() RunnerOptions {
	if r == nil {
		return RunnerOptions{}
	}
	return r.o
}

// Close releases the runner's caches and buffers. It is idempotent; on a
// nil Runner it returns an error wrapping tile.ErrArgument.
func (r *Runner) Close() error {
	if r == nil {
		return tile.Errorf(tile.ErrArgument, "close", "runner", "runner is nil")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	var first error
	for _, c := range r.caches {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	for _, b := range r.bufs {
		if err := b.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (r *Runner) check(op string) error {
	if r == nil || r.m == nil {
		return tile.Errorf(tile.ErrArgument, op, "runner", "runner is nil or was not made by NewRunner")
	}
	if r.closed {
		return tile.Errorf(tile.ErrClosed, op, "runner", "runner is closed")
	}
	return nil
}

// NewSequence reserves an empty sequence and returns its id. With every
// slot taken it returns an error wrapping tile.ErrOutOfMemory.
func (r *Runner) NewSequence() (int, error) {
	const op = "llama new sequence"
	if r == nil {
		return -1, r.check(op)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check(op); err != nil {
		return -1, err
	}
	for s, used := range r.inUse {
		if !used {
			r.inUse[s] = true
			return s, nil
		}
	}
	return -1, tile.Errorf(tile.ErrOutOfMemory, op, "runner", "all %d sequences are in use", r.o.MaxSeqs)
}

// FreeSequence empties sequence seq and returns its KV pages and its slot.
func (r *Runner) FreeSequence(seq int) error {
	const op = "llama free sequence"
	if r == nil {
		return r.check(op)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check(op); err != nil {
		return err
	}
	if seq < 0 || seq >= len(r.inUse) || !r.inUse[seq] {
		return tile.Errorf(tile.ErrArgument, op, "seq", "sequence %d is not in use", seq)
	}
	for _, c := range r.caches {
		if err := c.Truncate(seq, 0); err != nil {
			return err
		}
		if err := c.SetBlockTable(seq, nil); err != nil {
			return err
		}
	}
	r.free = append(r.free, r.pages[seq]...)
	r.pages[seq] = r.pages[seq][:0]
	r.lens[seq], r.inUse[seq] = 0, false
	return nil
}

// Len is the number of tokens sequence seq holds (0 for a free one).
func (r *Runner) Len(seq int) int {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if seq < 0 || seq >= len(r.lens) {
		return 0
	}
	return r.lens[seq]
}

// FreePages is the number of unreserved KV pages.
func (r *Runner) FreePages() int {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.free)
}

// validate checks a step's work before anything is touched.
func (r *Runner) validate(op string, work []Work) error {
	if len(work) == 0 {
		return tile.Errorf(tile.ErrShape, op, "work", "no sequences")
	}
	if len(work) > r.o.MaxSeqs {
		return tile.Errorf(tile.ErrShape, op, "work", "%d sequences; the runner holds %d", len(work), r.o.MaxSeqs)
	}
	total, pagesNeeded := 0, 0
	for i, w := range work {
		if w.Seq < 0 || w.Seq >= r.o.MaxSeqs || !r.inUse[w.Seq] {
			return tile.Errorf(tile.ErrArgument, op, "work", "entry %d: sequence %d is not in use (NewSequence)", i, w.Seq)
		}
		for j := range i {
			if work[j].Seq == w.Seq {
				return tile.Errorf(tile.ErrArgument, op, "work", "entries %d and %d both name sequence %d", j, i, w.Seq)
			}
		}
		n := len(w.Tokens)
		if n == 0 {
			return tile.Errorf(tile.ErrShape, op, "work", "entry %d has no tokens", i)
		}
		if n > 1 && r.lens[w.Seq] != 0 {
			return tile.Errorf(tile.ErrArgument, op, "work", "entry %d: %d tokens for sequence %d, which holds %d; several tokens are a prompt of an empty sequence (no chunked prefill)", i, n, w.Seq, r.lens[w.Seq])
		}
		if r.lens[w.Seq]+n > r.o.MaxSeqLen {
			return tile.Errorf(tile.ErrBounds, op, "work", "entry %d: sequence %d would hold %d tokens; MaxSeqLen is %d", i, w.Seq, r.lens[w.Seq]+n, r.o.MaxSeqLen)
		}
		for j, t := range w.Tokens {
			if t < 0 || int(t) >= r.cfg.VocabSize {
				return tile.Errorf(tile.ErrBounds, op, "work", "entry %d, token %d is %d, outside the vocabulary of %d", i, j, t, r.cfg.VocabSize)
			}
		}
		total += n
		ps := r.o.PageSize
		pagesNeeded += (r.lens[w.Seq]+n+ps-1)/ps - len(r.pages[w.Seq])
	}
	if total > r.o.MaxTokens {
		return tile.Errorf(tile.ErrShape, op, "work", "%d tokens; MaxTokens is %d", total, r.o.MaxTokens)
	}
	if pagesNeeded > len(r.free) {
		return tile.Errorf(tile.ErrOutOfMemory, op, "work", "the step needs %d more KV pages, %d are free", pagesNeeded, len(r.free))
	}
	return nil
}

// reserve gives every sequence of work the pages its new tokens need.
func (r *Runner) reserve(work []Work) error {
	ps := r.o.PageSize
	for _, w := range work {
		s := w.Seq
		need := (r.lens[s] + len(w.Tokens) + ps - 1) / ps
		if need == len(r.pages[s]) {
			continue
		}
		for len(r.pages[s]) < need {
			p := r.free[len(r.free)-1]
			r.free = r.free[:len(r.free)-1]
			r.pages[s] = append(r.pages[s], p)
		}
		for _, c := range r.caches {
			if err := c.SetBlockTable(s, r.pages[s]); err != nil {
				return err
			}
		}
	}
	return nil
}

// rowsView is rows [r0, r0+n) of columns [c0, c0+cols) of a buffer of ld
// columns.
func rowsView(b *runtime.Buffer, r0, n, c0, cols, ld int) ops.Matrix {
	return ops.Matrix{Buf: b, Offset: r0*ld + c0, Rows: n, Cols: cols, LD: ld}
}

// weightT is a [out, in] weight as the B operand of x·Wᵀ (from its
// length, not Buffer.Shape, which copies).
func weightT(w *runtime.Buffer, in int) ops.Matrix {
	return ops.Matrix{Buf: w, Rows: w.Len() / in, Cols: in, Trans: true}
}

// linear writes d = a·Wᵀ (+ bias).
func (r *Runner) linear(ctx context.Context, d, a ops.Matrix, w, bias *runtime.Buffer) error {
	opt := ops.MatMulOptions{Alpha: 1, Bias: bias, ScaleB: r.m.scales[w]}
	return ops.MatMul(ctx, r.rt, d, a, weightT(w, a.Cols), &opt)
}

// copyRows copies x into y (EltScale by 1: exact, converting types).
func (r *Runner) copyRows(ctx context.Context, y, x ops.Matrix) error {
	return ops.Elementwise(ctx, r.rt, ops.EltScale, y, x, ops.Matrix{}, 1, nil)
}

func int32Bytes(v []int32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

// Step runs the model over work: each entry's tokens are appended to its
// sequence (prefill of a prompt, or one decode token) and go through every
// layer in one batch. Afterwards the logits of each entry's last token
// are row i of Logits (with AllLogits, every token's, in the order of
// work). Work is checked before anything is touched; an error wraps
// tile.ErrArgument, ErrShape, ErrBounds or ErrOutOfMemory. An error from
// a kernel midway leaves the sequences of work in an undefined state: free
// them.
func (r *Runner) Step(ctx context.Context, work []Work) error {
	const op = "llama step"
	if r == nil {
		return r.check(op)
	}
	if ctx == nil {
		return tile.Errorf(tile.ErrArgument, op, "ctx", "context is nil")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check(op); err != nil {
		return err
	}
	if err := r.validate(op, work); err != nil {
		return err
	}
	if err := r.reserve(work); err != nil {
		return err
	}
	return r.forward(ctx, work)
}

func (r *Runner) forward(ctx context.Context, work []Work) error {
	cfg, rt := r.cfg, r.rt
	H, qd, kvd, qkvd, I := cfg.HiddenSize, r.qd, r.kvd, r.qkvd, r.inter
	// Pack the tokens, their positions and the row each entry starts at.
	T, prefill := 0, false
	r.rows, r.cu, r.decodes = r.rows[:0], append(r.cu[:0], 0), r.decodes[:0]
	for i, w := range work {
		r.rows = append(r.rows, T)
		p0 := r.lens[w.Seq]
		for j, t := range w.Tokens {
			r.hostIDs[T+j], r.hostPos[T+j] = t, int32(p0+j)
		}
		T += len(w.Tokens)
		r.cu = append(r.cu, T)
		if p0 == 0 {
			prefill = true
		} else {
			r.decodes = append(r.decodes, i)
		}
	}
	if err := r.ids.Write(ctx, 0, int32Bytes(r.hostIDs[:T])); err != nil {
		return err
	}
	if err := r.pos.Write(ctx, 0, int32Bytes(r.hostPos[:T])); err != nil {
		return err
	}
	// Embedding gather, into the residual stream as f32.
	ed := r.emb.DType()
	dst := ops.TileOf(r.emb, tile.Tile{DType: ed, ValidRows: T, ValidCols: H, Rows: r.o.MaxTokens, Cols: H})
	idx := ops.TileOf(r.ids, tile.Tile{DType: tile.S32, ValidRows: T, ValidCols: 1, Rows: r.o.MaxTokens, Cols: 1})
	if err := ops.MGather(ctx, rt, dst, r.m.weights.Embed, idx, nil); err != nil {
		return err
	}
	all := func(b *runtime.Buffer, cols int) ops.Matrix { return rowsView(b, 0, T, 0, cols, cols) }
	if err := r.copyRows(ctx, all(r.res, H), all(r.emb, H)); err != nil {
		return err
	}
	norm := ops.RMSNormOptions{Eps: float32(cfg.RMSNormEps)}
	ly := r.m.weights.Layers
	if err := ops.RMSNorm(ctx, rt, all(r.h, H), all(r.res, H), ly[0].InputNorm, &norm); err != nil {
		return err
	}
	rope := r.ropeOptions()
	for l := range ly {
		w := &ly[l]
		qkvCol := func(c0, cols int) ops.Matrix { return rowsView(r.qkv, 0, T, c0, cols, qkvd) }
		if err := r.projectQKV(ctx, l, all(r.h, H), T); err != nil {
			return err
		}
		// q and k in one call would be refused: RoPE's alias check compares
		// spans, and column views of one fused buffer interleave.
		for _, c := range [2][2]int{{0, qd}, {qd, kvd}} {
			if err := ops.RoPE(ctx, rt, qkvCol(c[0], c[1]), ops.Matrix{}, &rope); err != nil {
				return err
			}
		}
		if err := r.appendKV(ctx, l, work); err != nil {
			return err
		}
		if err := r.attention(ctx, l, work, T, prefill); err != nil {
			return err
		}
		if err := r.linear(ctx, all(r.h, H), all(r.attn, qd), w.O, w.OBias); err != nil {
			return err
		}
		if err := ops.AddRMSNorm(ctx, rt, all(r.h, H), all(r.res, H), w.PostAttentionNorm, &norm); err != nil {
			return err
		}
		if err := r.projectGateUp(ctx, l, all(r.h, H), T); err != nil {
			return err
		}
		if err := ops.GatedActivate(ctx, rt, all(r.act, I), all(r.gu, 2*I), ops.SiLU, nil); err != nil {
			return err
		}
		if err := r.linear(ctx, all(r.h, H), all(r.act, I), w.Down, w.DownBias); err != nil {
			return err
		}
		next := r.m.weights.Norm
		if l+1 < len(ly) {
			next = ly[l+1].InputNorm
		}
		if err := ops.AddRMSNorm(ctx, rt, all(r.h, H), all(r.res, H), next, &norm); err != nil {
			return err
		}
	}
	for _, w := range work {
		r.lens[w.Seq] += len(w.Tokens)
	}
	V := cfg.VocabSize
	if r.o.AllLogits {
		r.nWork, r.nTok = len(work), T
		return r.linear(ctx, all(r.logits, V), all(r.h, H), r.m.weights.LMHead, nil)
	}
	for i, w := range work {
		row := r.rows[i] + len(w.Tokens) - 1
		if err := r.copyRows(ctx, rowsView(r.last, i, 1, 0, H, H), rowsView(r.h, row, 1, 0, H, H)); err != nil {
			return err
		}
	}
	r.nWork, r.nTok = len(work), T
	return r.linear(ctx, rowsView(r.logits, 0, len(work), 0, V, V), rowsView(r.last, 0, len(work), 0, H, H), r.m.weights.LMHead, nil)
}

// projectQKV writes h·[Wq|Wk|Wv]ᵀ (+ biases) of layer l into r.qkv: one
// matmul with fused weights, else one per projection into its columns.
func (r *Runner) projectQKV(ctx context.Context, l int, h ops.Matrix, T int) error {
	qd, kvd, qkvd := r.qd, r.kvd, r.qkvd
	if f := r.m.fused; f != nil {
		return r.linear(ctx, rowsView(r.qkv, 0, T, 0, qkvd, qkvd), h, f[l].QKV, f[l].QKVBias)
	}
	w := &r.m.weights.Layers[l]
	for _, p := range []struct {
		c0, cols int
		w, b     *runtime.Buffer
	}{{0, qd, w.Q, w.QBias}, {qd, kvd, w.K, w.KBias}, {qd + kvd, kvd, w.V, w.VBias}} {
		if err := r.linear(ctx, rowsView(r.qkv, 0, T, p.c0, p.cols, qkvd), h, p.w, p.b); err != nil {
			return err
		}
	}
	return nil
}

// projectGateUp writes h·[Wgate|Wup]ᵀ of layer l into r.gu, GatedActivate's
// [gate | up] input: one matmul with fused weights, else two.
func (r *Runner) projectGateUp(ctx context.Context, l int, h ops.Matrix, T int) error {
	I := r.inter
	if f := r.m.fused; f != nil {
		return r.linear(ctx, rowsView(r.gu, 0, T, 0, 2*I, 2*I), h, f[l].GateUp, f[l].GateUpBias)
	}
	w := &r.m.weights.Layers[l]
	if err := r.linear(ctx, rowsView(r.gu, 0, T, 0, I, 2*I), h, w.Gate, w.GateBias); err != nil {
		return err
	}
	return r.linear(ctx, rowsView(r.gu, 0, T, I, I, 2*I), h, w.Up, w.UpBias)
}

// ropeOptions maps the configuration's RoPE to ops.RoPE's options.
func (r *Runner) ropeOptions() ops.RoPEOptions {
	cfg := r.cfg
	o := ops.RoPEOptions{HeadDim: cfg.HeadDim, Theta: cfg.RopeTheta, Positions: r.pos, MaxPosition: r.o.MaxSeqLen}
	if s := cfg.RopeScaling; s != nil {
		switch s.Type {
		case "linear":
			o.Scaling = ops.RoPEScaling{Kind: ops.RoPELinear, Factor: s.Factor}
		case "llama3":
			o.Scaling = ops.RoPEScaling{Kind: ops.RoPELlama3, Factor: s.Factor, LowFreqFactor: s.LowFreqFactor,
				HighFreqFactor: s.HighFreqFactor, OriginalMaxPosition: s.OriginalMaxPositionEmbeddings}
		case "yarn":
			o.Scaling = ops.RoPEScaling{Kind: ops.RoPEYaRN, Factor: s.Factor, OriginalMaxPosition: s.OriginalMaxPositionEmbeddings,
				BetaFast: s.BetaFast, BetaSlow: s.BetaSlow}
		} // dynamic: no scaling within MaxPositionEmbeddings (NewRunner)
	}
	return o
}

// appendKV appends the step's keys and values of layer l to its cache,
// through the slot-indexed staging buffer (ops.KVCache.Append takes one
// [Batch, seq, …] view whose batch index is the sequence): stageRows rows
// of every sequence per round.
func (r *Runner) appendKV(ctx context.Context, l int, work []Work) error {
	qkvd := r.qkvd
	for r0 := 0; ; r0 += stageRows {
		clear(r.counts)
		any := false
		for i, w := range work {
			n := min(len(w.Tokens)-r0, stageRows)
			if n <= 0 {
				continue
			}
			any = true
			r.counts[w.Seq] = n
			if err := r.copyRows(ctx, rowsView(r.stage, w.Seq*stageRows, n, 0, qkvd, qkvd), rowsView(r.qkv, r.rows[i]+r0, n, 0, qkvd, qkvd)); err != nil {
				return err
			}
		}
		if !any {
			return nil
		}
		if err := r.caches[l].Append(ctx, r.stK, r.stV, &r.appendOpt); err != nil {
			return err
		}
	}
}

// attention writes layer l's attention output for the step's T rows into
// r.attn: prompts by varlen causal attention over their own rows, decodes
// by paged attention over the cache (their queries are in the staging
// buffer, the outputs go through ostage).
func (r *Runner) attention(ctx context.Context, l int, work []Work, T int, prefill bool) error {
	cfg, rt := r.cfg, r.rt
	hd, qkvd, qd := cfg.HeadDim, r.qkvd, r.qd
	if prefill {
		// Every entry is a varlen sequence here; a decode's row gets a
		// meaningless value, overwritten below.
		view := func(b *runtime.Buffer, c0, heads, ld int) ops.AttnTensor {
			return ops.AttnTensor{Buf: b, Offset: c0, Shape: []int{T, heads, hd}, Strides: []int{ld, hd, 1}}
		}
		o := r.attnOpt[l]
		o.CuSeqQ, o.CuSeqKV = r.cu, r.cu
		err := ops.Attention(ctx, rt, view(r.attn, 0, cfg.NumHeads, qd), view(r.qkv, 0, cfg.NumHeads, qkvd),
			view(r.qkv, qd, cfg.NumKVHeads, qkvd), view(r.qkv, qd+r.kvd, cfg.NumKVHeads, qkvd), &o)
		if err != nil {
			return err
		}
	}
	if len(r.decodes) == 0 {
		return nil
	}
	if err := ops.AttentionKVCache(ctx, rt, r.stO, r.stQ, r.caches[l], &r.decAttnOpts[l]); err != nil {
		return err
	}
	for _, i := range r.decodes {
		s := work[i].Seq
		if err := r.copyRows(ctx, rowsView(r.attn, r.rows[i], 1, 0, qd, qd), rowsView(r.ostage, s, 1, 0, qd, qd)); err != nil {
			return err
		}
	}
	return nil
}

// LogitsRows is the number of logits rows the last Step produced: its
// entries, or with AllLogits its tokens.
func (r *Runner) LogitsRows() int {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.o.AllLogits {
		return r.nTok
	}
	return r.nWork
}

// ReadLogits copies rows [row, row+len(dst)/Vocab) of the last Step's
// logits into dst.
func (r *Runner) ReadLogits(ctx context.Context, row int, dst []float32) error {
	const op = "llama read logits"
	if r == nil {
		return r.check(op)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check(op); err != nil {
		return err
	}
	V := r.cfg.VocabSize
	rows := r.nWork
	if r.o.AllLogits {
		rows = r.nTok
	}
	if len(dst)%V != 0 || row < 0 || row+len(dst)/V > rows {
		return tile.Errorf(tile.ErrBounds, op, "dst", "rows %d … of %d values each; the last step has %d rows", row, V, rows)
	}
	return r.logits.ReadFloat32At(ctx, row*V, dst)
}

// SampleOptions choose a token from logits; see ops.SampleOptions, whose
// rules they follow (Temperature 0 is greedy).
type SampleOptions struct {
	Temperature float32
	TopK        int
	TopP        float32 // 0 means 1 (off)
	MinP        float32
	Seed        uint64
}

// toOps converts s for ops.Sample at decoding step offset.
func (s SampleOptions) toOps(offset uint64) ops.SampleOptions {
	o := ops.SampleOptions{Temperature: s.Temperature, TopK: s.TopK, TopP: s.TopP, MinP: s.MinP, Seed: s.Seed, Offset: offset}
	if o.TopP == 0 {
		o.TopP = 1
	}
	return o
}

// Sample draws a token from the logits of entry i of the last Step (its
// last token; with AllLogits, of row i) with opt, the Philox draw keyed by
// opt.Seed and offset (bump it every step).
func (r *Runner) Sample(ctx context.Context, i int, opt SampleOptions, offset uint64) (int32, error) {
	const op = "llama sample"
	if r == nil {
		return -1, r.check(op)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check(op); err != nil {
		return -1, err
	}
	rows := r.nWork
	if r.o.AllLogits {
		rows = r.nTok
	}
	if i < 0 || i >= rows {
		return -1, tile.Errorf(tile.ErrBounds, op, "i", "row %d; the last step has %d", i, rows)
	}
	V := r.cfg.VocabSize
	so := opt.toOps(offset)
	if err := ops.Sample(ctx, r.rt, r.tok, rowsView(r.logits, i, 1, 0, V, V), &so); err != nil {
		return -1, err
	}
	if err := runtime.ReadRaw(ctx, r.tok, r.hostTok); err != nil {
		return -1, err
	}
	return r.hostTok[0], nil
}
