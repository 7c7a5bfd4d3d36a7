package mma

import (
	"fmt"
	"math"
	"slices"

	"github.com/tcrt-go/tcrt/kernels/ptx"
	"github.com/tcrt-go/tcrt/tile"
)

// Attention is one attention call for a plan, in plain values, with the
// conventions of fallback.AttentionArgs: Q and O are [batch, seq, heads,
// D], K and V [batch, seq, headsKV, D], each addressed at its element
// (0, 0, 0, 0) with element strides {batch, seq, head} (the D stride is 1);
// query row i of nq sits at position i + nk − nq (bottom-right masks).
// Varlen: CuSeqQ / CuSeqKV (Batch+1 offsets into the seq dimension of batch
// 0) and SeqLensKV (key counts of a contiguous cache) are host values; the
// plan then makes one launch per sequence. LSE is 0 or f32 values at
// b·LSEBatchStride + h·LSEHeadStride + i (varlen: CuSeqQ[b] + …).
type Attention struct {
	In                            tile.DType // one of AttnInputs
	D                             int
	Batch, HeadsQ, HeadsKV        int
	SeqQ, SeqKV                   int
	Q, K, V, O, LSE               uint64
	QStrides, KStrides            [3]int
	VStrides, OStrides            [3]int
	LSEBatchStride, LSEHeadStride int
	CuSeqQ, CuSeqKV, SeqLensKV    []int
	Scale, SoftCap                float32
	Causal                        bool
	WindowLeft, WindowRight       int // -1: unbounded

	// Paged cache (PageSize > 0, a power of two): K and V address page 0
	// and their batch stride is the page stride; Table (device address)
	// holds BlocksPerSeq int32 page numbers a sequence and Lens (device
	// address) the int32 key counts (SeqLensKV on the host, for the split
	// choice). Splits (0: AttnSplits chooses) cuts each sequence's keys; with
	// more than one the kernel writes f32 partials to WsO and WsL
	// (AttnWorkspace bytes) and a combine launch merges them.
	PageSize, BlocksPerSeq int
	Table, Lens, WsO, WsL  uint64
	Splits                 int
}

// AttnSplits is the split-KV rule of the paged decode kernel: enough
// splits that Batch·HeadsQ·ceil(SeqQ/64)·splits CTAs fill every SM twice,
// at most one a 256 keys of the longest sequence and at most 16; chunk is
// the keys a split, rounded up to the kernel's BN. forced > 0 sets the
// split count (clamped to the keys). A nil p is one split of one key.
func AttnSplits(dev Device, p *Attention, forced int) (splits, chunk int) {
	if p == nil {
		return 1, AttnConfig{}.BN()
	}
	maxNK := 1
	for _, n := range p.SeqLensKV {
		maxNK = max(maxNK, n)
	}
	if p.SeqLensKV == nil {
		maxNK = max(maxNK, p.SeqKV)
	}
	maxNK = min(maxNK, 1<<40) // past any cache; keeps the sums below in range
	bn := AttnConfig{D: p.D}.BN()
	ctas := max(1, p.Batch*p.HeadsQ*ceilDiv(max(p.SeqQ, 1), AttnBM))
	s := forced
	if s <= 0 {
		s = min(ceilDiv(2*max(dev.SMs, 1), ctas), ceilDiv(maxNK, 256), 16)
	}
	s = max(1, min(s, ceilDiv(maxNK, bn)))
	chunk = ceilDiv(ceilDiv(maxNK, s), bn) * bn
	return ceilDiv(maxNK, chunk), chunk
}

// AttnWorkspace is the bytes of the f32 partial outputs and LSEs a paged
// call with splits > 1 needs (0 for a nil p or extents that are not
// positive).
func AttnWorkspace(p *Attention, splits int) (oBytes, lBytes int) {
	if p == nil || p.Batch < 1 || splits < 1 || p.HeadsQ < 1 || p.SeqQ < 1 || p.D < 1 {
		return 0, 0
	}
	rows := p.Batch * splits * p.HeadsQ * p.SeqQ
	return rows * p.D * 4, rows * 4
}

// CheckAttention returns an error wrapping tile.ErrUnsupported when the
// attention kernels cannot run p: D 64, 128 or 256; f16 or bf16; HeadsQ a
// multiple of HeadsKV; Q, K, V, O 16-byte aligned with batch, seq and head
// strides multiples of 8 elements below 2^32 (16-byte cp.async copies and
// 32-bit stride parameters); LSE 4-byte aligned. A nil p is an error
// wrapping tile.ErrArgument.
func CheckAttention(p *Attention) error {
	if p == nil {
		return fmt.Errorf("tcrt: mma attention: nil problem: %w", tile.ErrArgument)
	}
	bad := func(f string, a ...any) error {
		return fmt.Errorf("tcrt: mma attention: %s: %w", fmt.Sprintf(f, a...), tile.ErrUnsupported)
	}
	if p.D != 64 && p.D != 128 && p.D != 256 {
		return bad("head dimension %d (64, 128 or 256)", p.D)
	}
	if !slices.Contains(AttnInputs(), p.In) {
		return bad("element type %v", p.In)
	}
	if p.HeadsQ < 1 || p.HeadsKV < 1 || p.HeadsQ%p.HeadsKV != 0 || p.Batch < 1 || p.HeadsQ > 65535 || p.Batch > 65535 {
		return bad("batch %d, heads %d / %d", p.Batch, p.HeadsQ, p.HeadsKV)
	}
	for _, x := range []struct {
		name string
		addr uint64
		st   [3]int
	}{{"Q", p.Q, p.QStrides}, {"K", p.K, p.KStrides}, {"V", p.V, p.VStrides}, {"O", p.O, p.OStrides}} {
		if x.addr%16 != 0 {
			return bad("%s at %#x: needs 16-byte alignment", x.name, x.addr)
		}
		for _, s := range x.st {
			if s%8 != 0 || s < 0 || s > math.MaxUint32 {
				return bad("%s strides %v: need multiples of 8 elements below 2^32", x.name, x.st)
			}
		}
	}
	if p.LSE%4 != 0 {
		return bad("LSE at %#x: needs 4-byte alignment", p.LSE)
	}
	if p.PageSize > 0 {
		if p.PageSize&(p.PageSize-1) != 0 || p.CuSeqQ != nil || p.CuSeqKV != nil || p.SeqLensKV == nil || p.BlocksPerSeq < 1 {
			return bad("paged cache: page size %d (a power of two), SeqLensKV set, no varlen, BlocksPerSeq %d", p.PageSize, p.BlocksPerSeq)
		}
	}
	return nil
}

// PlanAttention returns the launches of p: with uniform lengths one launch
// of grid (ceil(SeqQ/64), HeadsQ, Batch); with CuSeqQ, CuSeqKV or
// SeqLensKV one launch per non-empty sequence (grid (ceil(nq/64),
// HeadsQ, 1), its bases offset to the sequence). The kernel is D and In's;
// 128 threads; AttnConfig.SharedBytes (at most 96 KiB). Paged caches are
// not supported here.
func PlanAttention(dev Device, p Attention) ([]Launch, error) {
	if err := CheckAttention(&p); err != nil {
		return nil, err
	}
	c := AttnConfig{D: p.D, In: p.In}
	if dev.SM < PTXTarget || c.SharedBytes() > dev.optin() {
		return nil, fmt.Errorf("tcrt: mma attention: sm_%d with %d bytes of shared memory: needs sm_%d and %d bytes: %w",
			dev.SM, dev.optin(), PTXTarget, c.SharedBytes(), tile.ErrUnsupported)
	}
	wr := p.WindowRight
	if p.Causal {
		wr = 0
	}
	mk := func(q, k, v, o, lse uint64, nq, nk, batch int) Launch {
		st := func(s [3]int) []uint64 {
			return []uint64{ptx.U32(uint32(s[0])), ptx.U32(uint32(s[1])), ptx.U32(uint32(s[2]))}
		}
		ps := []uint64{ptx.Ptr(q), ptx.Ptr(k), ptx.Ptr(v), ptx.Ptr(o), ptx.Ptr(lse), ptx.U32(uint32(nq)), ptx.U32(uint32(nk))}
		ps = append(ps, st(p.QStrides)...)
		ps = append(ps, st(p.KStrides)...)
		ps = append(ps, st(p.VStrides)...)
		ps = append(ps, st(p.OStrides)...)
		ps = append(ps, ptx.U32(uint32(p.LSEBatchStride)), ptx.U32(uint32(p.LSEHeadStride)), ptx.U32(uint32(p.HeadsQ/p.HeadsKV)),
			ptx.F32(p.Scale), ptx.F32(p.SoftCap), ptx.I32(int32(p.WindowLeft)), ptx.I32(int32(wr)))
		return Launch{Func: c.Name(), Grid: [3]int{ceilDiv(nq, AttnBM), p.HeadsQ, batch}, Block: [3]int{AttnThreads, 1, 1},
			SharedBytes: c.SharedBytes(), Params: ps}
	}
	if p.PageSize > 0 {
		return planPaged(dev, p, mk)
	}
	if p.CuSeqQ == nil && p.CuSeqKV == nil && p.SeqLensKV == nil {
		if p.SeqQ < 1 {
			return nil, nil
		}
		return []Launch{mk(p.Q, p.K, p.V, p.O, p.LSE, p.SeqQ, p.SeqKV, p.Batch)}, nil
	}
	var out []Launch
	for b := 0; b < p.Batch; b++ {
		nq, qoff, lseOff := p.SeqQ, b*p.QStrides[0], b*p.LSEBatchStride
		ooff := b * p.OStrides[0]
		if p.CuSeqQ != nil {
			nq, qoff, ooff, lseOff = p.CuSeqQ[b+1]-p.CuSeqQ[b], p.CuSeqQ[b]*p.QStrides[1], p.CuSeqQ[b]*p.OStrides[1], p.CuSeqQ[b]
		}
		nk, koff, voff := p.SeqKV, b*p.KStrides[0], b*p.VStrides[0]
		switch {
		case p.CuSeqKV != nil:
			nk, koff, voff = p.CuSeqKV[b+1]-p.CuSeqKV[b], p.CuSeqKV[b]*p.KStrides[1], p.CuSeqKV[b]*p.VStrides[1]
		case p.SeqLensKV != nil:
			nk = p.SeqLensKV[b]
		}
		if nq < 1 {
			continue
		}
		var lse uint64
		if p.LSE != 0 {
			lse = p.LSE + uint64(4*lseOff)
		}
		e := uint64(2)
		out = append(out, mk(p.Q+e*uint64(qoff), p.K+e*uint64(koff), p.V+e*uint64(voff), p.O+e*uint64(ooff), lse, nq, nk, 1))
	}
	return out, nil
}

// planPaged is PlanAttention for a paged cache: the paged kernel over grid
// (ceil(SeqQ/64), HeadsQ, Batch·splits), then, with splits > 1, the
// combine kernel over (SeqQ, HeadsQ, Batch) with D threads.
func planPaged(dev Device, p Attention, mk func(q, k, v, o, lse uint64, nq, nk, batch int) Launch) ([]Launch, error) {
	if p.SeqQ < 1 {
		return nil, nil
	}
	splits, chunk := AttnSplits(dev, &p, p.Splits)
	if splits > 1 && (p.WsO == 0 || p.WsL == 0 || p.WsO%16 != 0 || p.WsL%4 != 0) {
		return nil, fmt.Errorf("tcrt: mma attention: %d splits need aligned workspaces (have %#x, %#x): %w", splits, p.WsO, p.WsL, tile.ErrUnsupported)
	}
	l := mk(p.Q, p.K, p.V, p.O, p.LSE, p.SeqQ, 0, p.Batch*splits)
	l.Func = AttnConfig{D: p.D, In: p.In, Paged: true}.Name()
	shift := 0
	for 1<<shift < p.PageSize {
		shift++
	}
	l.Params = append(l.Params, ptx.Ptr(p.Table), ptx.U32(uint32(p.BlocksPerSeq)), ptx.U32(uint32(shift)), ptx.Ptr(p.Lens),
		ptx.U32(uint32(splits)), ptx.U32(uint32(chunk)), ptx.Ptr(p.WsO), ptx.Ptr(p.WsL), ptx.U32(uint32(p.HeadsQ)))
	out := []Launch{l}
	if splits > 1 {
		st := p.OStrides
		out = append(out, Launch{Func: CombineName(p.D, p.In), Grid: [3]int{p.SeqQ, p.HeadsQ, p.Batch}, Block: [3]int{p.D, 1, 1},
			Params: []uint64{ptx.Ptr(p.WsO), ptx.Ptr(p.WsL), ptx.Ptr(p.O), ptx.Ptr(p.LSE),
				ptx.U32(uint32(st[0])), ptx.U32(uint32(st[1])), ptx.U32(uint32(st[2])),
				ptx.U32(uint32(p.LSEBatchStride)), ptx.U32(uint32(p.LSEHeadStride)),
				ptx.U32(uint32(p.SeqQ)), ptx.U32(uint32(p.HeadsQ)), ptx.U32(uint32(splits))}})
	}
	return out, nil
}
