package ops_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

type cacheCase struct {
	dt       tile.DType
	pageSize int // 0: contiguous
	hq, hkv  int
	d, seqQ  int
	causal   bool
	window   *ops.Window
	steps    [][]int // per step, tokens appended to each of the 3 sequences
}

func (c cacheCase) String() string {
	return fmt.Sprintf("%v_page%d_h%d/%d_d%d_q%d_causal%v", c.dt, c.pageSize, c.hq, c.hkv, c.d, c.seqQ, c.causal)
}

func newBuf(t testing.TB, rt *runtime.Runtime, dt tile.DType, vals []float32, shape ...int) *runtime.Buffer {
	t.Helper()
	b, err := rt.Alloc(dt, shape...)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteFloat32(context.Background(), vals); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAttentionKVCache appends to contiguous and paged caches (pages handed
// out in shuffled order) in uneven steps and checks decode attention after
// every step against the reference run on a packed copy the test keeps.
func TestAttentionKVCache(t *testing.T) {
	rt := openTest(t)
	rng := rand.New(rand.NewPCG(5, uint64(rand.Int64())))
	ctx := context.Background()
	long := 700
	if testing.Short() {
		long = 300
	}
	steps := [][]int{{37, 0, long}, {1, 1, 1}, {3, 3, 3}, {16, 17, 0}}
	cases := []cacheCase{
		{tile.F32, 0, 8, 2, 64, 1, false, nil, steps},
		{tile.F32, 0, 8, 8, 128, 3, true, nil, steps},
		{tile.BF16, 0, 8, 1, 256, 1, true, nil, steps},
		{tile.F32, 16, 8, 1, 64, 1, true, nil, steps},
		{tile.F32, 32, 4, 4, 72, 3, true, &ops.Window{Left: 20, Right: -1}, steps},
		{tile.F16, 64, 8, 2, 128, 1, false, nil, steps},
		{tile.F32, 128, 8, 2, 128, 2, true, nil, steps},
		{tile.F16, 256, 8, 2, 128, 1, false, nil, steps}, // pages of one decode block
		{tile.BF16, 512, 4, 1, 64, 1, true, nil, steps},  // pages longer than it
	}
	for _, c := range cases {
		const batch = 3
		opt := ops.KVCacheOptions{DType: c.dt, Batch: batch, HeadsKV: c.hkv, HeadDim: c.d}
		total := make([]int, batch)
		for _, s := range c.steps {
			for b, n := range s {
				total[b] += n
			}
		}
		if c.pageSize == 0 {
			opt.Capacity = long + 40
		} else {
			opt.PageSize = c.pageSize
			for _, n := range total {
				opt.NumPages += (n + c.pageSize - 1) / c.pageSize
			}
			opt.NumPages += 2 // pages no sequence uses
		}
		cache, err := ops.NewKVCache(rt, opt)
		if err != nil {
			t.Fatal(err)
		}
		if c.pageSize > 0 {
			perm := rng.Perm(opt.NumPages)
			for b := 0; b < batch; b++ {
				n := (total[b] + c.pageSize - 1) / c.pageSize
				if err := cache.SetBlockTable(b, perm[:n]); err != nil {
					t.Fatal(err)
				}
				perm = perm[n:]
			}
		}
		row := c.hkv * c.d
		keys := make([][]float32, batch) // as stored in the cache
		vals := make([][]float32, batch)
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
			lens := cache.Lens()
			for b := range lens {
				if lens[b]*row != len(keys[b]) {
					t.Fatalf("%v: sequence %d has length %d, want %d", c, b, lens[b], len(keys[b])/row)
				}
			}
			checkDecode(t, rt, rng, c, cache, keys, vals)
		}
		if err := cache.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// checkDecode runs AttentionKVCache and the reference on a varlen packing of
// the test's copy of the cache.
func checkDecode(t *testing.T, rt *runtime.Runtime, rng *rand.Rand, c cacheCase, cache *ops.KVCache, keys, vals [][]float32) {
	t.Helper()
	ctx := context.Background()
	batch := len(keys)
	qb, _ := randBuf(t, rt, rng, c.dt, batch*c.seqQ*c.hq*c.d)
	q := ops.AttnTensor{Buf: qb, Shape: []int{batch, c.seqQ, c.hq, c.d}}
	ob, err := rt.Alloc(c.dt, batch, c.seqQ, c.hq, c.d)
	if err != nil {
		t.Fatal(err)
	}
	poison(t, ob)
	lse, _ := rt.Alloc(tile.F32, batch*c.hq*c.seqQ)
	poison(t, lse)
	opt := &ops.AttentionOptions{Causal: c.causal, Window: c.window, LSE: lse}
	short := false // a sequence holds fewer tokens than the query rows
	for _, k := range keys {
		short = short || (len(k) > 0 && len(k) < c.seqQ*c.hkv*c.d)
	}
	if short {
		before := rawBytes(t, ob)
		err := ops.AttentionKVCache(ctx, rt, ops.AttnTensorOf(ob), q, cache, opt)
		if !errors.Is(err, ops.ErrShape) {
			t.Fatalf("%v: %d query rows over a shorter sequence: got %v, want ErrShape", c, c.seqQ, err)
		}
		if !bytes.Equal(before, rawBytes(t, ob)) {
			t.Fatalf("%v: rejected call wrote its output", c)
		}
		return
	}
	if err := ops.AttentionKVCache(ctx, rt, ops.AttnTensorOf(ob), q, cache, opt); err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	// Reference: varlen over packed copies.
	var pk, pv []float32
	cuQ, cuKV := []int{0}, []int{0}
	for b := 0; b < batch; b++ {
		pk = append(pk, keys[b]...)
		pv = append(pv, vals[b]...)
		cuQ = append(cuQ, (b+1)*c.seqQ)
		cuKV = append(cuKV, len(pk)/(c.hkv*c.d))
	}
	nkv := max(1, cuKV[batch])
	pad := make([]float32, c.hkv*c.d)
	kb := newBuf(t, rt, tile.F32, append(pk, pad...), nkv+1, c.hkv, c.d)
	vb := newBuf(t, rt, tile.F32, append(pv, pad...), nkv+1, c.hkv, c.d)
	qr := ops.AttnTensor{Buf: qb, Shape: []int{batch * c.seqQ, c.hq, c.d}}
	refO, _ := rt.Alloc(c.dt, batch*c.seqQ, c.hq, c.d)
	refL, _ := rt.Alloc(tile.F32, batch*c.hq*c.seqQ)
	args, _, err := ops.AttentionArgs(rt, ops.AttnTensorOf(refO), qr, ops.AttnTensorOf(kb), ops.AttnTensorOf(vb),
		&ops.AttentionOptions{Causal: c.causal, Window: c.window, CuSeqQ: cuQ, CuSeqKV: cuKV})
	if err != nil {
		t.Fatal(err)
	}
	lref := make([]byte, 4*batch*c.hq*c.seqQ)
	if err := engine.WithHostArgs(ctx, engRT(rt), args, func() error {
		h := engine.HostAttentionArgs(args, 1)
		h.LSE, h.LSEBatchStride, h.LSEHeadStride = lref, c.hq*c.seqQ, c.seqQ
		h.CuSeqQ = nil // dense query layout, so LSE is [batch, heads, seqQ] like the decode's
		h.SeqQ = c.seqQ
		h.Q.BatchStride, h.O.BatchStride = c.seqQ*c.hq*c.d, c.seqQ*c.hq*c.d
		fallback.AttentionRef(h)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := refL.Write(ctx, 0, lref); err != nil {
		t.Fatal(err)
	}
	if e := maxErr(t, c.String()+" O", ob, refO, -1); e > tolFor(c.dt) {
		t.Errorf("%v lens %v: O max relative error %.3g", c, cache.Lens(), e)
	}
	if e := maxErr(t, c.String()+" LSE", lse, refL, -1); e > 1e-4 {
		t.Errorf("%v lens %v: LSE max relative error %.3g", c, cache.Lens(), e)
	}
	for _, b := range []*runtime.Buffer{qb, ob, lse, kb, vb, refO, refL} {
		b.Close()
	}
}

// bufferBytes returns the bytes of buffers.
func bufferBytes(t *testing.T, bufs ...*runtime.Buffer) [][]byte {
	t.Helper()
	var out [][]byte
	for _, b := range bufs {
		raw := make([]byte, b.Bytes())
		if err := b.Read(context.Background(), 0, raw); err != nil {
			t.Fatal(err)
		}
		out = append(out, raw)
	}
	return out
}

func checkErr(t *testing.T, name string, err, want error, arg string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: got %v, want %v", name, err, want)
		return
	}
	if !strings.Contains(err.Error(), "argument "+arg) {
		t.Errorf("%s: error %q does not name argument %q", name, err, arg)
	}
}

func checkUnchanged(t *testing.T, name string, before [][]byte, bufs ...*runtime.Buffer) {
	t.Helper()
	after := bufferBytes(t, bufs...)
	for i := range before {
		if !bytes.Equal(before[i], after[i]) {
			t.Errorf("%s: buffer %d was written", name, i)
		}
	}
}

func TestAttentionBadInput(t *testing.T) {
	rt := openTest(t)
	other := openTest(t)
	rng := rand.New(rand.NewPCG(8, 9))
	ctx := context.Background()
	mk := func(r *runtime.Runtime, dt tile.DType, shape ...int) ops.AttnTensor {
		n := 1
		for _, s := range shape {
			n *= s
		}
		b, err := r.Alloc(dt, shape...)
		if err != nil {
			t.Fatal(err)
		}
		if dt.IsFloat() {
			v := make([]float32, n)
			for i := range v {
				v[i] = rng.Float32()
			}
			b.WriteFloat32(ctx, v)
		}
		return ops.AttnTensor{Buf: b, Shape: shape}
	}
	q := mk(rt, tile.F32, 2, 5, 8, 16)
	k := mk(rt, tile.F32, 2, 7, 4, 16)
	v := mk(rt, tile.F32, 2, 7, 4, 16)
	o := mk(rt, tile.F32, 2, 5, 8, 16)
	lse := mk(rt, tile.F32, 2*8*5, 1, 1)
	poison(t, o.Buf)
	poison(t, lse.Buf)
	closed := mk(rt, tile.F32, 2, 7, 4, 16)
	closed.Buf.Close()
	with := func(x ops.AttnTensor, f func(*ops.AttnTensor)) ops.AttnTensor { f(&x); return x }
	packedQ := mk(rt, tile.F32, 1, 12, 8, 16)
	packedK := mk(rt, tile.F32, 1, 14, 4, 16)
	packedO := mk(rt, tile.F32, 1, 12, 8, 16)
	nan := float32(math.NaN())
	cases := []struct {
		name       string
		o, q, k, v ops.AttnTensor
		opt        *ops.AttentionOptions
		want       error
		arg        string
	}{
		{"heads not divisible", o, q, mk(rt, tile.F32, 2, 7, 3, 16), mk(rt, tile.F32, 2, 7, 3, 16), nil, ops.ErrShape, "q"},
		{"head dim mismatch", o, q, mk(rt, tile.F32, 2, 7, 4, 32), mk(rt, tile.F32, 2, 7, 4, 32), nil, ops.ErrShape, "k"},
		{"v length mismatch", o, q, k, mk(rt, tile.F32, 2, 6, 4, 16), nil, ops.ErrShape, "v"},
		{"v head dim mismatch", o, q, k, mk(rt, tile.F32, 2, 7, 4, 8), nil, ops.ErrShape, "v"},
		{"o shape", mk(rt, tile.F32, 2, 4, 8, 16), q, k, v, nil, ops.ErrShape, "o"},
		{"batch mismatch", o, q, mk(rt, tile.F32, 1, 7, 4, 16), mk(rt, tile.F32, 1, 7, 4, 16), nil, ops.ErrShape, "k"},
		{"int keys", o, q, mk(rt, tile.S32, 2, 7, 4, 16), v, nil, ops.ErrDType, "k"},
		{"rank 2", o, with(q, func(x *ops.AttnTensor) { x.Shape = []int{40, 16} }), k, v, nil, ops.ErrShape, "q"},
		{"head dim stride", o, q, with(k, func(x *ops.AttnTensor) { x.Shape = []int{2, 7, 4, 8}; x.Strides = []int{448, 64, 16, 2} }), v, nil, ops.ErrShape, "k"},
		{"view past end", o, with(q, func(x *ops.AttnTensor) { x.Offset = 1 }), k, v, nil, ops.ErrBounds, "q"},
		{"closed buffer", o, q, k, closed, nil, ops.ErrClosed, "v"},
		{"foreign buffer", o, q, k, mk(other, tile.F32, 2, 7, 4, 16), nil, ops.ErrArgument, "v"},
		{"nil buffer", o, q, ops.AttnTensor{Shape: []int{2, 7, 4, 16}}, v, nil, ops.ErrArgument, "k"},
		{"o aliases q", q, q, k, v, nil, ops.ErrAlias, "o"},
		{"NaN scale", o, q, k, v, &ops.AttentionOptions{Scale: nan}, ops.ErrArgument, "Scale"},
		{"negative softcap", o, q, k, v, &ops.AttentionOptions{SoftCap: -1}, ops.ErrArgument, "SoftCap"},
		{"bad window", o, q, k, v, &ops.AttentionOptions{Window: &ops.Window{Left: -2, Right: 0}}, ops.ErrArgument, "Window"},
		{"LSE length", o, q, k, v, &ops.AttentionOptions{LSE: mk(rt, tile.F32, 79).Buf}, ops.ErrShape, "LSE"},
		{"LSE dtype", o, q, k, v, &ops.AttentionOptions{LSE: mk(rt, tile.F16, 80).Buf}, ops.ErrDType, "LSE"},
		{"negative splits", o, q, k, v, &ops.AttentionOptions{KVSplits: -1}, ops.ErrArgument, "KVSplits"},
		{"seqlens not increasing", packedO, packedQ, packedK, packedK, &ops.AttentionOptions{CuSeqQ: []int{0, 6, 4, 12}, CuSeqKV: []int{0, 2, 4, 14}}, ops.ErrArgument, "CuSeqQ"},
		{"kv seqlens not increasing", packedO, packedQ, packedK, packedK, &ops.AttentionOptions{CuSeqQ: []int{0, 6, 12}, CuSeqKV: []int{0, 9, 8}}, ops.ErrArgument, "CuSeqKV"},
		{"seqlens not from 0", packedO, packedQ, packedK, packedK, &ops.AttentionOptions{CuSeqQ: []int{1, 6, 12}, CuSeqKV: []int{0, 2, 4}}, ops.ErrArgument, "CuSeqQ"},
		{"seqlens past rows", packedO, packedQ, packedK, packedK, &ops.AttentionOptions{CuSeqQ: []int{0, 6, 12}, CuSeqKV: []int{0, 2, 15}}, ops.ErrBounds, "CuSeqKV"},
		{"seqlens count", packedO, packedQ, packedK, packedK, &ops.AttentionOptions{CuSeqQ: []int{0, 6, 12}, CuSeqKV: []int{0, 2, 4, 6}}, ops.ErrShape, "CuSeqKV"},
		{"seqlens half", packedO, packedQ, packedK, packedK, &ops.AttentionOptions{CuSeqQ: []int{0, 6, 12}}, ops.ErrArgument, "CuSeqKV"},
		{"varlen batch", o, q, k, v, &ops.AttentionOptions{CuSeqQ: []int{0, 5}, CuSeqKV: []int{0, 7}}, ops.ErrShape, "q"},
	}
	bufs := []*runtime.Buffer{o.Buf, lse.Buf, packedO.Buf}
	for _, c := range cases {
		before := bufferBytes(t, bufs...)
		opt := c.opt
		if opt == nil {
			opt = &ops.AttentionOptions{LSE: lse.Buf}
		}
		err := ops.Attention(ctx, rt, c.o, c.q, c.k, c.v, opt)
		checkErr(t, c.name, err, c.want, c.arg)
		checkUnchanged(t, c.name, before, bufs...)
	}
	// The same calls succeed once fixed.
	if err := ops.Attention(ctx, rt, o, q, k, v, &ops.AttentionOptions{LSE: lse.Buf}); err != nil {
		t.Fatal(err)
	}
}

func TestKVCacheBadInput(t *testing.T) {
	rt := openTest(t)
	rng := rand.New(rand.NewPCG(10, 11))
	ctx := context.Background()
	rb := func(dt tile.DType, shape ...int) ops.AttnTensor {
		n := 1
		for _, s := range shape {
			n *= s
		}
		b, _ := randBuf(t, rt, rng, dt, n)
		return ops.AttnTensor{Buf: b, Shape: shape}
	}
	for _, o := range []struct {
		name string
		opt  ops.KVCacheOptions
		want error
		arg  string
	}{
		{"page size not a power of two", ops.KVCacheOptions{DType: tile.F32, Batch: 1, HeadsKV: 1, HeadDim: 8, PageSize: 24, NumPages: 4}, ops.ErrArgument, "PageSize"},
		{"page size 8", ops.KVCacheOptions{DType: tile.F32, Batch: 1, HeadsKV: 1, HeadDim: 8, PageSize: 8, NumPages: 4}, ops.ErrArgument, "PageSize"},
		{"no capacity", ops.KVCacheOptions{DType: tile.F32, Batch: 1, HeadsKV: 1, HeadDim: 8}, ops.ErrShape, "Capacity"},
		{"int cache", ops.KVCacheOptions{DType: tile.S8, Batch: 1, HeadsKV: 1, HeadDim: 8, Capacity: 4}, ops.ErrDType, "DType"},
		{"zero heads", ops.KVCacheOptions{DType: tile.F32, Batch: 1, HeadDim: 8, Capacity: 4}, ops.ErrShape, "HeadsKV"},
	} {
		_, err := ops.NewKVCache(rt, o.opt)
		checkErr(t, o.name, err, o.want, o.arg)
	}
	contig, err := ops.NewKVCache(rt, ops.KVCacheOptions{DType: tile.BF16, Batch: 2, HeadsKV: 2, HeadDim: 16, Capacity: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer contig.Close()
	paged, err := ops.NewKVCache(rt, ops.KVCacheOptions{DType: tile.F32, Batch: 2, HeadsKV: 2, HeadDim: 16, PageSize: 16, NumPages: 6})
	if err != nil {
		t.Fatal(err)
	}
	defer paged.Close()
	if err := paged.SetBlockTable(0, []int{5, 2}); err != nil {
		t.Fatal(err)
	}
	if err := paged.SetBlockTable(1, []int{0}); err != nil {
		t.Fatal(err)
	}
	k15 := rb(tile.F32, 2, 15, 2, 16)
	v15 := rb(tile.F32, 2, 15, 2, 16)
	for _, c := range []*ops.KVCache{contig, paged} {
		if err := c.Append(ctx, k15, v15, nil); err != nil {
			t.Fatal(err)
		}
	}
	pk, pv := paged.Buffers()
	ck, cv := contig.Buffers()
	all := []*runtime.Buffer{pk, pv, ck, cv}
	k6, v6 := rb(tile.F32, 2, 6, 2, 16), rb(tile.F32, 2, 6, 2, 16)
	appends := []struct {
		name  string
		cache *ops.KVCache
		k, v  ops.AttnTensor
		opt   *ops.KVAppendOptions
		want  error
		arg   string
	}{
		{"contiguous cache too small", contig, k6, v6, nil, ops.ErrBounds, "k"},
		{"paged cache too small", paged, k6, v6, &ops.KVAppendOptions{Counts: []int{1, 2}}, ops.ErrBounds, "k"},
		{"heads mismatch", contig, rb(tile.F32, 2, 1, 1, 16), rb(tile.F32, 2, 1, 1, 16), nil, ops.ErrShape, "k"},
		{"head dim mismatch", contig, rb(tile.F32, 2, 1, 2, 8), rb(tile.F32, 2, 1, 2, 8), nil, ops.ErrShape, "k"},
		{"k v mismatch", contig, rb(tile.F32, 2, 1, 2, 16), rb(tile.F32, 2, 2, 2, 16), nil, ops.ErrShape, "v"},
		{"counts past rows", contig, k6, v6, &ops.KVAppendOptions{Counts: []int{7, 0}}, ops.ErrShape, "Counts"},
		{"counts length", contig, k6, v6, &ops.KVAppendOptions{Counts: []int{1}}, ops.ErrShape, "Counts"},
	}
	for _, c := range appends {
		before := bufferBytes(t, all...)
		lens := [2][]int{contig.Lens(), paged.Lens()}
		err := c.cache.Append(ctx, c.k, c.v, c.opt)
		checkErr(t, c.name, err, c.want, c.arg)
		checkUnchanged(t, c.name, before, all...)
		if fmt.Sprint(lens) != fmt.Sprint([2][]int{contig.Lens(), paged.Lens()}) {
			t.Errorf("%s: lengths changed", c.name)
		}
	}
	// Block tables.
	checkErr(t, "block-table entry out of range", paged.SetBlockTable(1, []int{0, 6}), ops.ErrBounds, "pages")
	checkErr(t, "negative block-table entry", paged.SetBlockTable(1, []int{-1}), ops.ErrBounds, "pages")
	checkErr(t, "duplicate page", paged.SetBlockTable(1, []int{3, 3}), ops.ErrArgument, "pages")
	checkErr(t, "table drops tokens", paged.SetBlockTable(1, nil), ops.ErrShape, "pages")
	checkErr(t, "sequence out of range", paged.SetBlockTable(2, []int{1}), ops.ErrBounds, "seq")
	checkErr(t, "contiguous block table", contig.SetBlockTable(0, []int{1}), ops.ErrArgument, "cache")
	// Sequence 0 holds 15 tokens in page 5: moving them is refused.
	checkErr(t, "table moves tokens", paged.SetBlockTable(0, []int{4, 2}), ops.ErrArgument, "pages")
	if err := paged.SetBlockTable(0, []int{5}); err != nil { // dropping the unused page 2 is fine
		t.Fatal(err)
	}
	if got := paged.FreePages(); got != 4 {
		t.Errorf("free pages after tables {5} and {0}: %d, want 4", got)
	}
	// Decode arguments.
	q := rb(tile.F32, 2, 1, 4, 16)
	o := rb(tile.F32, 2, 1, 4, 16)
	poison(t, o.Buf)
	decode := []struct {
		name  string
		o, q  ops.AttnTensor
		cache *ops.KVCache
		opt   *ops.AttentionOptions
		want  error
		arg   string
	}{
		{"heads not divisible", rb(tile.F32, 2, 1, 3, 16), rb(tile.F32, 2, 1, 3, 16), paged, nil, ops.ErrShape, "q"},
		{"head dim", rb(tile.F32, 2, 1, 4, 8), rb(tile.F32, 2, 1, 4, 8), paged, nil, ops.ErrShape, "q"},
		{"batch", rb(tile.F32, 1, 1, 4, 16), rb(tile.F32, 1, 1, 4, 16), contig, nil, ops.ErrShape, "q"},
		{"o shape", rb(tile.F32, 2, 2, 4, 16), q, contig, nil, ops.ErrShape, "o"},
		{"varlen with cache", o, q, contig, &ops.AttentionOptions{CuSeqQ: []int{0, 1, 2}, CuSeqKV: []int{0, 1, 2}}, ops.ErrArgument, "CuSeqQ"},
		{"nil cache", o, q, nil, nil, ops.ErrArgument, "cache"},
	}
	for _, c := range decode {
		before := bufferBytes(t, o.Buf)
		err := ops.AttentionKVCache(ctx, rt, c.o, c.q, c.cache, c.opt)
		checkErr(t, c.name, err, c.want, c.arg)
		checkUnchanged(t, c.name, before, o.Buf)
	}
	if err := ops.AttentionKVCache(ctx, rt, o, q, paged, nil); err != nil {
		t.Fatal(err)
	}
	closedCache, _ := ops.NewKVCache(rt, ops.KVCacheOptions{DType: tile.F32, Batch: 2, HeadsKV: 2, HeadDim: 16, Capacity: 4})
	closedCache.Close()
	checkErr(t, "closed cache", ops.AttentionKVCache(ctx, rt, o, q, closedCache, nil), ops.ErrClosed, "cache")
	checkErr(t, "append to closed cache", closedCache.Append(ctx, k6, v6, nil), ops.ErrClosed, "cache")
	if err := closedCache.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestKVCachePageAllocator: Reserve takes the cache's free pages, Release
// gives them back, Append without pages says so, and a Reserve beyond the
// free pages is ErrOutOfMemory with nothing changed.
func TestKVCachePageAllocator(t *testing.T) {
	rt := openTest(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(28, 3))
	c, err := ops.NewKVCache(rt, ops.KVCacheOptions{DType: tile.F32, Batch: 3, HeadsKV: 1, HeadDim: 8, PageSize: 16, NumPages: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	kb, _ := randBuf(t, rt, rng, tile.F32, 3*20*8)
	vb, _ := randBuf(t, rt, rng, tile.F32, 3*20*8)
	kv := func(b *runtime.Buffer) ops.AttnTensor { return ops.AttnTensor{Buf: b, Shape: []int{3, 20, 1, 8}} }
	one := &ops.KVAppendOptions{Counts: []int{20, 0, 0}}
	checkErr(t, "append before pages", c.Append(ctx, kv(kb), kv(vb), one), ops.ErrArgument, "cache")
	if err := c.Reserve(0, 20); err != nil { // two pages
		t.Fatal(err)
	}
	if err := c.Reserve(1, 33); err != nil { // three pages
		t.Fatal(err)
	}
	if got := c.FreePages(); got != 0 {
		t.Fatalf("free pages: %d, want 0", got)
	}
	checkErr(t, "reserve past the free pages", c.Reserve(2, 1), ops.ErrOutOfMemory, "tokens")
	checkErr(t, "reserve on a bad sequence", c.Reserve(3, 1), ops.ErrBounds, "seq")
	if err := c.Append(ctx, kv(kb), kv(vb), one); err != nil {
		t.Fatal(err)
	}
	if err := c.Reserve(0, 20); err != nil { // already enough: no change
		t.Fatal(err)
	}
	if err := c.Release(1); err != nil {
		t.Fatal(err)
	}
	if got := c.FreePages(); got != 3 {
		t.Fatalf("free pages after releasing sequence 1: %d, want 3", got)
	}
	if err := c.Reserve(2, 40); err != nil {
		t.Fatal(err)
	}
	if got := c.Lens(); got[0] != 20 || got[1] != 0 || got[2] != 0 {
		t.Fatalf("lengths %v, want [20 0 0]", got)
	}
	if err := c.Release(0); err != nil {
		t.Fatal(err)
	}
	if got := c.Lens()[0]; got != 0 {
		t.Fatalf("released sequence has %d tokens", got)
	}
	var nilCache *ops.KVCache
	checkErr(t, "nil cache reserve", nilCache.Reserve(0, 1), ops.ErrArgument, "cache")
	checkErr(t, "nil cache release", nilCache.Release(0), ops.ErrArgument, "cache")
}
