package ops

import (
	"context"
	"sync"
	"unsafe"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// KVCacheOptions describe a KV cache. With PageSize 0 the cache is
// contiguous: Capacity tokens per sequence, stored [Batch, HeadsKV,
// Capacity, HeadDim]. With PageSize > 0 it is paged: NumPages pages of
// PageSize tokens (a power of two ≥ 16), stored [NumPages, HeadsKV,
// PageSize, HeadDim], and each sequence owns the pages its block table lists
// (SetBlockTable).
//
// Heads come before tokens (the "HND" layout) so that a decode step, which
// reads every token of one head in a row, streams contiguous memory: with
// tokens first, a head's 256-byte rows lay 2 KiB apart and the CPU decode
// step ran up to 15% slower.
type KVCacheOptions struct {
	// DType is the element type of the stored keys and values (f32, f16 or
	// bf16); appended values are converted to it.
	DType tile.DType
	// Batch is the number of sequences.
	Batch, HeadsKV, HeadDim int
	// Capacity is the tokens per sequence of a contiguous cache.
	Capacity int
	// PageSize and NumPages shape a paged cache.
	PageSize, NumPages int
}

// KVCache holds the keys and values of Batch sequences for decoding, with
// each sequence's length. It owns two buffers; Close releases them. Its
// methods are safe for concurrent use. Lengths are host-side bookkeeping:
// Append updates them when the copy is enqueued, so work on other streams
// must be ordered after it (events) to see the new tokens.
type KVCache struct {
	rt     *runtime.Runtime
	opt    KVCacheOptions
	mu     sync.Mutex
	k, v   *runtime.Buffer
	kv, vv engine.AttnView // k and v viewed whole (cacheView)
	// scratch holds a synchronous Append's lengths and counts (c.mu is
	// held until its copy has finished)
	scratch []int
	lens    []int
	tables  [][]int32
	refs    []int32 // per page: the block tables that list it (paged caches)
	closed  bool
}

const opKVCache = "kvcache"

// NewKVCache allocates an empty cache on rt.
func NewKVCache(rt *runtime.Runtime, opt KVCacheOptions) (*KVCache, error) {
	if err := checkRuntime(rt, nil, opKVCache); err != nil {
		return nil, err
	}
	switch opt.DType {
	case tile.F32, tile.F16, tile.BF16:
	default:
		return nil, tile.Errorf(ErrDType, opKVCache, "DType", "element type %v; want f32, f16 or bf16", opt.DType)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"Batch", opt.Batch}, {"HeadsKV", opt.HeadsKV}, {"HeadDim", opt.HeadDim}} {
		if f.v <= 0 {
			return nil, tile.Errorf(ErrShape, opKVCache, f.name, "%d; must be positive", f.v)
		}
	}
	if opt.HeadDim > maxHeadDim {
		return nil, tile.Errorf(ErrShape, opKVCache, "HeadDim", "%d exceeds %d", opt.HeadDim, maxHeadDim)
	}
	var shape []int
	if opt.PageSize != 0 {
		if opt.PageSize < 16 || opt.PageSize&(opt.PageSize-1) != 0 {
			return nil, tile.Errorf(ErrArgument, opKVCache, "PageSize", "%d; want a power of two ≥ 16", opt.PageSize)
		}
		if opt.NumPages <= 0 {
			return nil, tile.Errorf(ErrShape, opKVCache, "NumPages", "%d; must be positive", opt.NumPages)
		}
		if opt.Capacity != 0 {
			return nil, tile.Errorf(ErrArgument, opKVCache, "Capacity", "a paged cache's capacity comes from its block tables; leave Capacity 0")
		}
		shape = []int{opt.NumPages, opt.HeadsKV, opt.PageSize, opt.HeadDim}
	} else {
		if opt.Capacity <= 0 {
			return nil, tile.Errorf(ErrShape, opKVCache, "Capacity", "%d; must be positive", opt.Capacity)
		}
		if opt.NumPages != 0 {
			return nil, tile.Errorf(ErrArgument, opKVCache, "NumPages", "NumPages without PageSize")
		}
		shape = []int{opt.Batch, opt.HeadsKV, opt.Capacity, opt.HeadDim}
	}
	// Per-sequence lengths and block tables live on the host.
	if err := engine.CheckHostAlloc(opKVCache, "Batch", opt.Batch, int(unsafe.Sizeof(0))+int(unsafe.Sizeof([]int32(nil)))); err != nil {
		return nil, err
	}
	k, err := rt.Alloc(opt.DType, shape...)
	if err != nil {
		return nil, err
	}
	v, err := rt.Alloc(opt.DType, shape...)
	if err != nil {
		k.Close()
		return nil, err
	}
	c := &KVCache{rt: rt, opt: opt, k: k, v: v, lens: make([]int, opt.Batch), scratch: make([]int, 2*opt.Batch)}
	c.kv, c.vv = cacheView(k), cacheView(v)
	if opt.PageSize > 0 {
		c.tables = make([][]int32, opt.Batch)
		c.refs = make([]int32, opt.NumPages)
	}
	return c, nil
}

// Close releases the cache's buffers (after the work already enqueued on
// them). It is idempotent; on a nil cache it returns an error wrapping
// ErrArgument.
func (c *KVCache) Close() error {
	if c == nil || c.rt == nil {
		return tile.Errorf(ErrArgument, "close", "cache", "cache is nil or was not made by NewKVCache")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	err := c.k.Close()
	if e := c.v.Close(); err == nil {
		err = e
	}
	// Closed buffers stay closed; a refused Close (from work running on a
	// stream, which cannot wait for itself) leaves the cache usable.
	c.closed = c.k.Closed() && c.v.Closed()
	return err
}

// The getters return zero values on a nil cache.

// Options returns the options the cache was made with.
func (c *KVCache) Options() KVCacheOptions {
	if c == nil {
		return KVCacheOptions{}
	}
	return c.opt
}

// Paged reports whether the cache is paged.
func (c *KVCache) Paged() bool { return c != nil && c.opt.PageSize > 0 }

// Buffers returns the key and value storage ([Batch or NumPages, HeadsKV,
// Capacity or PageSize, HeadDim]).
func (c *KVCache) Buffers() (k, v *runtime.Buffer) {
	if c == nil {
		return nil, nil
	}
	return c.k, c.v
}

// Lens returns every sequence's length in tokens.
func (c *KVCache) Lens() []int {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.lens...)
}

// capacity is the tokens sequence b can hold; c.mu is held.
func (c *KVCache) capacity(b int) int {
	if c.opt.PageSize > 0 {
		return len(c.tables[b]) * c.opt.PageSize
	}
	return c.opt.Capacity
}

func (c *KVCache) check(op string) error {
	if c == nil {
		return tile.Errorf(ErrArgument, op, "cache", "cache is nil")
	}
	if c.rt == nil {
		return tile.Errorf(ErrArgument, op, "cache", "cache was not made by NewKVCache")
	}
	if c.closed {
		return tile.Errorf(ErrClosed, op, "cache", "cache is closed")
	}
	return nil
}

// SetBlockTable gives sequence seq of a paged cache its pages, in order:
// token t lives in page pages[t/PageSize]. Every entry must name a page
// (0 … NumPages−1) and appear once, and the pages that hold the tokens the
// sequence already has must stay where they are (the table may grow or
// shrink only past them: Truncate first to drop tokens). Sequences may
// share pages (a common prefix) but should then not append into the shared
// ones. Reserve and Release manage the tables instead, from the cache's own
// free pages.
func (c *KVCache) SetBlockTable(seq int, pages []int) error {
	const op = "kvcache.set-block-table"
	if c == nil {
		return c.check(op)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(op); err != nil {
		return err
	}
	if c.opt.PageSize == 0 {
		return tile.Errorf(ErrArgument, op, "cache", "the cache is contiguous, not paged")
	}
	if seq < 0 || seq >= c.opt.Batch {
		return tile.Errorf(ErrBounds, op, "seq", "sequence %d of %d", seq, c.opt.Batch)
	}
	seen := make(map[int]int, len(pages))
	for i, p := range pages {
		if p < 0 || p >= c.opt.NumPages {
			return tile.Errorf(ErrBounds, op, "pages", "entry %d is page %d; the cache has pages 0 … %d", i, p, c.opt.NumPages-1)
		}
		if j, dup := seen[p]; dup {
			return tile.Errorf(ErrArgument, op, "pages", "page %d appears at entries %d and %d", p, j, i)
		}
		seen[p] = i
	}
	if len(pages)*c.opt.PageSize < c.lens[seq] {
		return tile.Errorf(ErrShape, op, "pages", "%d pages of %d tokens cannot hold the sequence's %d tokens", len(pages), c.opt.PageSize, c.lens[seq])
	}
	used := (c.lens[seq] + c.opt.PageSize - 1) / c.opt.PageSize
	for i := 0; i < used; i++ {
		if old := c.tables[seq][i]; int(old) != pages[i] {
			return tile.Errorf(ErrArgument, op, "pages", "entry %d is page %d, but tokens %d … %d of the sequence are in page %d (Truncate them first)",
				i, pages[i], i*c.opt.PageSize, min((i+1)*c.opt.PageSize, c.lens[seq])-1, old)
		}
	}
	t := make([]int32, len(pages))
	for i, p := range pages {
		t[i] = int32(p)
	}
	c.setTable(seq, t)
	return nil
}

// setTable replaces sequence seq's block table, keeping the page
// references; c.mu is held.
func (c *KVCache) setTable(seq int, t []int32) {
	for _, p := range c.tables[seq] {
		c.refs[p]--
	}
	for _, p := range t {
		c.refs[p]++
	}
	c.tables[seq] = t
}

// FreePages returns how many pages of a paged cache no block table lists
// (0 for a contiguous cache).
func (c *KVCache) FreePages() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, r := range c.refs {
		if r == 0 {
			n++
		}
	}
	return n
}

// Reserve makes sequence seq of a paged cache able to hold tokens tokens,
// appending to its block table the lowest-numbered pages that no table
// lists. It does nothing if the table is already long enough. Without
// enough free pages it returns an error wrapping ErrOutOfMemory and
// changes nothing.
func (c *KVCache) Reserve(seq, tokens int) error {
	const op = "kvcache.reserve"
	if c == nil {
		return c.check(op)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(op); err != nil {
		return err
	}
	if c.opt.PageSize == 0 {
		return tile.Errorf(ErrArgument, op, "cache", "the cache is contiguous, not paged")
	}
	if seq < 0 || seq >= c.opt.Batch {
		return tile.Errorf(ErrBounds, op, "seq", "sequence %d of %d", seq, c.opt.Batch)
	}
	if tokens < 0 || tokens > c.opt.NumPages*c.opt.PageSize {
		return tile.Errorf(ErrBounds, op, "tokens", "%d; the cache holds at most %d tokens", tokens, c.opt.NumPages*c.opt.PageSize)
	}
	need := (tokens+c.opt.PageSize-1)/c.opt.PageSize - len(c.tables[seq])
	if need <= 0 {
		return nil
	}
	t := append(make([]int32, 0, len(c.tables[seq])+need), c.tables[seq]...)
	for p := 0; p < c.opt.NumPages && need > 0; p++ {
		if c.refs[p] == 0 {
			t = append(t, int32(p))
			need--
		}
	}
	if need > 0 {
		return tile.Errorf(ErrOutOfMemory, op, "tokens", "%d tokens need %d more pages than the %d free", tokens, need, len(t)-len(c.tables[seq]))
	}
	c.setTable(seq, t)
	return nil
}

// Release empties sequence seq and gives its pages back (a paged cache's
// pages return to the free pages once no other table lists them).
func (c *KVCache) Release(seq int) error {
	const op = "kvcache.release"
	if c == nil {
		return c.check(op)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(op); err != nil {
		return err
	}
	if seq < 0 || seq >= c.opt.Batch {
		return tile.Errorf(ErrBounds, op, "seq", "sequence %d of %d", seq, c.opt.Batch)
	}
	c.lens[seq] = 0
	if c.opt.PageSize > 0 {
		c.setTable(seq, nil)
	}
	return nil
}

// Truncate shortens sequence seq to n tokens (n ≤ its length); 0 empties it.
func (c *KVCache) Truncate(seq, n int) error {
	const op = "kvcache.truncate"
	if c == nil {
		return c.check(op)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(op); err != nil {
		return err
	}
	if seq < 0 || seq >= c.opt.Batch {
		return tile.Errorf(ErrBounds, op, "seq", "sequence %d of %d", seq, c.opt.Batch)
	}
	if n < 0 || n > c.lens[seq] {
		return tile.Errorf(ErrBounds, op, "n", "%d; the sequence has %d tokens", n, c.lens[seq])
	}
	c.lens[seq] = n
	return nil
}

// flatTables returns the block tables as one [Batch, blocksPerSeq] array,
// in dst's memory where it has room; c.mu is held.
func (c *KVCache) flatTables(dst []int32) ([]int32, int) {
	if c.opt.PageSize == 0 {
		return nil, 0
	}
	bps := 1
	for _, t := range c.tables {
		bps = max(bps, len(t))
	}
	flat := dst[:0]
	if n := c.opt.Batch * bps; cap(flat) >= n {
		flat = flat[:n]
		clear(flat)
	} else {
		flat = make([]int32, n)
	}
	for b, t := range c.tables {
		copy(flat[b*bps:], t)
	}
	return flat, bps
}

// cacheView is the storage of k or v as an AttnView.
func cacheView(b *runtime.Buffer) engine.AttnView {
	s := b.Shape()
	return engine.AttnView{Buf: ebuf(b), Batch: s[0], Heads: s[1], Seq: s[2], HeadDim: s[3],
		BatchStride: s[1] * s[2] * s[3], HeadStride: s[2] * s[3], SeqStride: s[3]}
}

// KVAppendOptions are the optional parts of KVCache.Append.
type KVAppendOptions struct {
	// Counts, if set, is the number of rows (≤ seq) of k and v each
	// sequence appends; nil appends all seq rows to every sequence.
	Counts []int
	// Stream, if set, makes the copy asynchronous on that stream.
	Stream *runtime.Stream
}

// Append copies new keys and values, k and v of [Batch, seq, HeadsKV,
// HeadDim] (any of f32, f16, bf16, strided), to the end of each sequence and
// advances its length. A sequence without room (its capacity, or for a paged
// cache its block table's pages) fails the whole call with nothing written.
func (c *KVCache) Append(ctx context.Context, k, v AttnTensor, opt *KVAppendOptions) error {
	const op = "kvcache.append"
	var o KVAppendOptions
	if opt != nil {
		o = *opt
	}
	if c == nil {
		return tile.Errorf(ErrArgument, op, "cache", "cache is nil")
	}
	if c == nil {
		return c.check(op)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.check(op); err != nil {
		return err
	}
	if err := checkRuntime(c.rt, o.Stream, op); err != nil {
		return err
	}
	kv, err := checkAttnView(c.rt, op, "k", k)
	if err != nil {
		return err
	}
	vv, err := checkAttnView(c.rt, op, "v", v)
	if err != nil {
		return err
	}
	if kv.Batch != c.opt.Batch || kv.Heads != c.opt.HeadsKV || kv.HeadDim != c.opt.HeadDim {
		return tile.Errorf(ErrShape, op, "k", "k is %s; the cache wants [%d, seq, %d, %d]", dims(kv), c.opt.Batch, c.opt.HeadsKV, c.opt.HeadDim)
	}
	if vv.Batch != kv.Batch || vv.Seq != kv.Seq || vv.Heads != kv.Heads || vv.HeadDim != kv.HeadDim {
		return tile.Errorf(ErrShape, op, "v", "v is %s, k is %s; they must agree", dims(vv), dims(kv))
	}
	// A synchronous copy uses the cache's scratch for the lengths and
	// counts it reads; an asynchronous one, copies of its own.
	lens, counts := c.scratch[:c.opt.Batch], c.scratch[c.opt.Batch:]
	if o.Stream != nil {
		lens, counts = make([]int, c.opt.Batch), make([]int, c.opt.Batch)
	}
	copy(lens, c.lens)
	if o.Counts == nil {
		for i := range counts {
			counts[i] = kv.Seq
		}
	} else {
		if len(o.Counts) != c.opt.Batch {
			return tile.Errorf(ErrShape, op, "Counts", "%d counts for %d sequences", len(o.Counts), c.opt.Batch)
		}
		for i, n := range o.Counts {
			if n < 0 || n > kv.Seq {
				return tile.Errorf(ErrShape, op, "Counts", "count %d of sequence %d; want 0 … %d (the rows of k)", n, i, kv.Seq)
			}
		}
		copy(counts, o.Counts)
	}
	for b, n := range counts {
		if c.opt.PageSize > 0 && n > 0 && len(c.tables[b]) == 0 {
			return tile.Errorf(ErrArgument, op, "cache", "sequence %d of the paged cache has no pages: give it some with Reserve or SetBlockTable first", b)
		}
		if cp := c.capacity(b); c.lens[b]+n > cp {
			return tile.Errorf(ErrBounds, op, "k", "appending %d tokens to sequence %d of %d tokens exceeds its capacity of %d", n, b, c.lens[b], cp)
		}
	}
	for _, in := range []*engine.Buffer{kv.Buf, vv.Buf} {
		if engine.Overlaps(in, ebuf(c.k)) || engine.Overlaps(in, ebuf(c.v)) {
			return tile.Errorf(ErrAlias, op, "k", "new keys or values are in the cache's own storage")
		}
	}
	pa := kvAppendPool.getAll()
	table, bps := c.flatTables(pa.i32)
	pa.i32 = table
	args := &pa.a
	*args = engine.KVAppendArgs{
		Batch: c.opt.Batch, HeadsKV: c.opt.HeadsKV, HeadDim: c.opt.HeadDim,
		NewK: kv, NewV: vv, K: c.kv, V: c.vv,
		Lens: lens, Counts: counts,
		PageSize: c.opt.PageSize, BlockTable: table, BlocksPerSeq: bps,
	}
	if err := runPooled(ctx, c.rt, o.Stream, engine.OpKVAppend.Name(), args, &kvAppendPool); err != nil {
		// a wait that ctx ended leaves the copy running on the scratch
		c.scratch = make([]int, 2*c.opt.Batch)
		return err
	}
	for b, n := range counts {
		c.lens[b] += n
	}
	return nil
}

// AttentionKVCache is decode (or chunked prefill) attention over a cache:
// for every sequence b, the seqQ queries of q ([Batch, seqQ, headsQ,
// HeadDim], headsQ a multiple of the cache's HeadsKV) attend to the
// sequence's cached tokens, the queries being its last seqQ positions (so
// Causal aligns bottom-right; append the new tokens first). A sequence
// holding fewer tokens than seqQ is an error, except an empty one (an idle
// slot of the batch), whose rows output zeros. o is like q.
// Options are those of Attention except CuSeqQ and CuSeqKV; the work is split
// over key ranges when there are too few sequences and heads for the cores.
func AttentionKVCache(ctx context.Context, rt *runtime.Runtime, o, q AttnTensor, cache *KVCache, opt *AttentionOptions) error {
	args, s, err := attentionKVCacheArgs(rt, o, q, cache, opt)
	if err != nil {
		return err
	}
	return runPooled(ctx, rt, s, engine.OpAttention.Name(), args, &attentionPool)
}

// attentionKVCacheArgs validates an AttentionKVCache call and returns the
// runtime's argument struct and the stream, without launching.
func attentionKVCacheArgs(rt *runtime.Runtime, o, q AttnTensor, cache *KVCache, opt *AttentionOptions) (*engine.AttentionArgs, *runtime.Stream, error) {
	var op AttentionOptions
	if opt != nil {
		op = *opt
	}
	if err := checkRuntime(rt, op.Stream, opAttention); err != nil {
		return nil, nil, err
	}
	if cache == nil {
		return nil, nil, tile.Errorf(ErrArgument, opAttention, "cache", "cache is nil")
	}
	cache.mu.Lock()
	defer cache.mu.Unlock()
	if err := cache.check(opAttention); err != nil {
		return nil, nil, err
	}
	if cache.rt != rt {
		return nil, nil, tile.Errorf(ErrArgument, opAttention, "cache", "cache belongs to another runtime")
	}
	if op.CuSeqQ != nil || op.CuSeqKV != nil {
		return nil, nil, tile.Errorf(ErrArgument, opAttention, "CuSeqQ", "varlen offsets cannot be used with a KV cache")
	}
	qv, err := checkAttnView(rt, opAttention, "q", q)
	if err != nil {
		return nil, nil, err
	}
	ov, err := checkAttnView(rt, opAttention, "o", o)
	if err != nil {
		return nil, nil, err
	}
	c := cache.opt
	if qv.Batch != c.Batch {
		return nil, nil, tile.Errorf(ErrShape, opAttention, "q", "batch %d; the cache holds %d sequences", qv.Batch, c.Batch)
	}
	if err := checkHeads(opAttention, qv, c.HeadsKV, c.HeadDim, "q"); err != nil {
		return nil, nil, err
	}
	// The query rows are the last qv.Seq tokens of each sequence, already
	// appended: a sequence must hold at least that many, or be empty (an
	// idle slot of the batch).
	for b, l := range cache.lens {
		if l > 0 && qv.Seq > l {
			return nil, nil, tile.Errorf(ErrShape, opAttention, "q", "%d query rows, but sequence %d holds only %d cached tokens; append the queries' keys and values first", qv.Seq, b, l)
		}
	}
	if ov.Heads != qv.Heads || ov.HeadDim != qv.HeadDim || ov.Seq != qv.Seq || ov.Batch != qv.Batch {
		return nil, nil, tile.Errorf(ErrShape, opAttention, "o", "o is %s, q is %s; they must agree", dims(ov), dims(qv))
	}
	if engine.Overlaps(ov.Buf, qv.Buf) {
		return nil, nil, tile.Errorf(ErrAlias, opAttention, "o", "output shares its buffer with input q")
	}
	if engine.Overlaps(ov.Buf, ebuf(cache.k)) || engine.Overlaps(ov.Buf, ebuf(cache.v)) {
		return nil, nil, tile.Errorf(ErrAlias, opAttention, "o", "output is the cache's storage")
	}
	// The kernel reads the lengths and table after the cache's lock is
	// released: copies, in the pooled struct's memory.
	pa := attentionPool.getAll()
	table, bps := cache.flatTables(pa.i32)
	pa.i32, pa.ints = table, append(pa.ints[:0], cache.lens...)
	args := &pa.a
	*args = engine.AttentionArgs{
		Batch: c.Batch, HeadsQ: qv.Heads, HeadsKV: c.HeadsKV, HeadDim: c.HeadDim,
		SeqQ: qv.Seq, Q: qv, O: ov, K: cache.kv, V: cache.vv,
		SeqLensKV: pa.ints,
		PageSize:  c.PageSize, BlockTable: table, BlocksPerSeq: bps,
	}
	if err := attnOptions(rt, args, &op, []*engine.Buffer{qv.Buf, ov.Buf, ebuf(cache.k), ebuf(cache.v)}); err != nil {
		return nil, nil, err
	}
	return args, op.Stream, nil
}

// ExplainAttentionKVCache says which kernel AttentionKVCache would select.
func ExplainAttentionKVCache(rt *runtime.Runtime, o, q AttnTensor, cache *KVCache, opt *AttentionOptions) (Explanation, error) {
	args, _, err := attentionKVCacheArgs(rt, o, q, cache, opt)
	if err != nil {
		return Explanation{}, err
	}
	return explain(rt, engine.OpAttention.Name(), args)
}

// AttentionKVCachePlan validates an AttentionKVCache call and selects its
// kernel once, without launching it: the returned Call runs it (Call.Run)
// and explains the choice (Call.Explain).
func AttentionKVCachePlan(rt *runtime.Runtime, o, q AttnTensor, cache *KVCache, opt *AttentionOptions) (*Call, error) {
	args, s, err := attentionKVCacheArgs(rt, o, q, cache, opt)
	return newCall(rt, s, engine.OpAttention.Name(), args, err)
}
