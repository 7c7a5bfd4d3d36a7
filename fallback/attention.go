package fallback

import (
	"math"

	"github.com/tcrt-go/tcrt/tile"
)

// AttnTensor is a strided 4-D view [batch, seq, heads, headDim] of f32, f16
// or bf16 elements in host memory; the headDim dimension is contiguous.
// Element (b, s, h, d) is element b·BatchStride + s·SeqStride + h·HeadStride
// + d of Data. For a paged KV cache the batch dimension is the page.
type AttnTensor struct {
	DType                              tile.DType
	Data                               []byte
	BatchStride, SeqStride, HeadStride int
}

// offset returns the element offset of (b, s, h, 0).
func (t *AttnTensor) offset(b, s, h int) int { return b*t.BatchStride + s*t.SeqStride + h*t.HeadStride }

// Unbounded is the window size meaning "no limit on this side".
const Unbounded = -1

// AttentionArgs is one attention call on host memory. For every sequence b,
// every query head h (served by key/value head h / (HeadsQ/HeadsKV)) and
// every query row i of the sequence,
//
//	O[b,i,h] = Σ_j softmax_j(cap(Scale·Q[b,i,h]·K[b,j,g])) · V[b,j,g]
//
// over the visible keys j, where cap(x) = SoftCap·tanh(x/SoftCap) when
// SoftCap > 0. With nq queries and nk keys, query i sits at position
// i + nk − nq (masks are aligned bottom-right) and sees key j when
// j ≥ pos − WindowLeft (WindowLeft ≥ 0) and j ≤ pos + WindowRight
// (WindowRight ≥ 0; Causal forces it to 0). A row that sees no key outputs
// zeros and has log-sum-exp −Inf.
//
// Sequence layout, in order of precedence:
//   - CuSeqQ (Batch+1 increasing offsets, "varlen"): sequence b's queries
//     are rows CuSeqQ[b] … CuSeqQ[b+1]−1 of batch 0 of Q and O; otherwise
//     they are rows 0 … SeqQ−1 of batch b.
//   - CuSeqKV likewise for keys and values; otherwise SeqLensKV (one length
//     per sequence, a KV cache) gives sequence b's key count, keys being rows
//     0 … SeqLensKV[b]−1 of batch b (or, when PageSize > 0, of the pages
//     BlockTable[b·BlocksPerSeq …]); otherwise SeqKV keys of batch b.
//
// The arguments are assumed valid: the ops package checks them first.
type AttentionArgs struct {
	Batch, HeadsQ, HeadsKV, HeadDim int
	SeqQ, SeqKV                     int
	CuSeqQ, CuSeqKV                 []int
	SeqLensKV                       []int
	PageSize                        int // power of two; 0 when not paged
	BlockTable                      []int32
	BlocksPerSeq                    int
	Q, K, V, O                      AttnTensor
	// LSE, if not nil, receives the f32 natural log-sum-exp of every row's
	// (scaled, capped) logits: element (b, h, i) at b·LSEBatchStride +
	// h·LSEHeadStride + i, where for varlen queries b·LSEBatchStride is
	// replaced by CuSeqQ[b].
	LSE                           []byte
	LSEBatchStride, LSEHeadStride int
	Scale, SoftCap                float32
	Causal                        bool
	WindowLeft, WindowRight       int
	// Threads bounds the goroutines used; 0 means GOMAXPROCS.
	Threads int
	// Splits forces the number of KV splits per (sequence, head, row block)
	// of the fast path; 0 chooses.
	Splits int
}

// seqQ returns the first query row and count of sequence b.
func (a *AttentionArgs) seqQ(b int) (row0, n, batch int) {
	if a.CuSeqQ != nil {
		return a.CuSeqQ[b], a.CuSeqQ[b+1] - a.CuSeqQ[b], 0
	}
	return 0, a.SeqQ, b
}

// seqKV returns the key count of sequence b.
func (a *AttentionArgs) seqKV(b int) int {
	switch {
	case a.CuSeqKV != nil:
		return a.CuSeqKV[b+1] - a.CuSeqKV[b]
	case a.SeqLensKV != nil:
		return a.SeqLensKV[b]
	}
	return a.SeqKV
}

// kvOffset returns the element offset in K (or V, with t) of key j of head g
// of sequence b.
func (a *AttentionArgs) kvOffset(t *AttnTensor, b, j, g int) int {
	switch {
	case a.CuSeqKV != nil:
		return t.offset(0, a.CuSeqKV[b]+j, g)
	case a.PageSize > 0:
		page := int(a.BlockTable[b*a.BlocksPerSeq+j/a.PageSize])
		return t.offset(page, j%a.PageSize, g)
	}
	return t.offset(b, j, g)
}

// lseOffset returns the element offset in LSE of row i of head h of sequence b.
func (a *AttentionArgs) lseOffset(b, h, i int) int {
	if a.CuSeqQ != nil {
		return a.CuSeqQ[b] + h*a.LSEHeadStride + i
	}
	return b*a.LSEBatchStride + h*a.LSEHeadStride + i
}

// visible returns the half-open range [lo, hi) of keys that query i of nq
// sees among nk keys (lo ≥ hi when none).
func (a *AttentionArgs) visible(i, nq, nk int) (lo, hi int) {
	pos := i + nk - nq
	lo, hi = 0, nk
	if a.WindowLeft >= 0 {
		lo = max(lo, pos-a.WindowLeft)
	}
	right := a.WindowRight
	if a.Causal {
		right = 0
	}
	if right >= 0 {
		hi = min(hi, pos+right+1)
	}
	return lo, hi
}

// AttentionRef is the reference attention: for every row, the float64 logits
// of all visible keys, a full softmax, and the weighted sum of the values in
// float64, rounded once to O's element type.
func AttentionRef(a *AttentionArgs) {
	group := a.HeadsQ / a.HeadsKV
	d := a.HeadDim
	logits := []float64{}
	var seen []int
	acc := make([]float64, d)
	for b := 0; b < a.Batch; b++ {
		row0, nq, qb := a.seqQ(b)
		nk := a.seqKV(b)
		for h := 0; h < a.HeadsQ; h++ {
			g := h / group
			for i := 0; i < nq; i++ {
				qo := a.Q.offset(qb, row0+i, h)
				// The mask, written out independently of the fast path's.
				pos := i + nk - nq
				sees := func(j int) bool {
					return (!a.Causal || j <= pos) &&
						(a.WindowLeft < 0 || j >= pos-a.WindowLeft) &&
						(a.WindowRight < 0 || j <= pos+a.WindowRight)
				}
				logits = logits[:0]
				seen = seen[:0]
				mx := math.Inf(-1)
				for j := 0; j < nk; j++ {
					if !sees(j) {
						continue
					}
					seen = append(seen, j)
					ko := a.kvOffset(&a.K, b, j, g)
					var s float64
					for c := 0; c < d; c++ {
						s += float64(loadF32(a.Q.DType, a.Q.Data, qo+c)) * float64(loadF32(a.K.DType, a.K.Data, ko+c))
					}
					s *= float64(a.Scale)
					if a.SoftCap > 0 {
						s = float64(a.SoftCap) * math.Tanh(s/float64(a.SoftCap))
					}
					logits = append(logits, s)
					mx = math.Max(mx, s)
				}
				clear(acc)
				var sum float64
				for jj, s := range logits {
					// The non-finite policy (docs/nonfinite.md), as PyTorch's
					// scaled_dot_product_attention: a NaN logit makes mx, and
					// so the row, NaN; a +Inf one gives exp(Inf − Inf) = NaN;
					// a −Inf one is masked (weight 0, even when mx is −Inf).
					p := 0.0
					if s != math.Inf(-1) {
						p = math.Exp(s - mx)
					}
					sum += p
					vo := a.kvOffset(&a.V, b, seen[jj], g)
					for c := 0; c < d; c++ {
						acc[c] += p * float64(loadF32(a.V.DType, a.V.Data, vo+c))
					}
				}
				oo := a.O.offset(qb, row0+i, h)
				for c := 0; c < d; c++ {
					v := 0.0
					if sum != 0 { // 0: no key visible, or all masked
						v = acc[c] / sum
					}
					storeF32(a.O.DType, a.O.Data, oo+c, float32(v))
				}
				if a.LSE != nil {
					lse := math.Inf(-1)
					if sum != 0 {
						lse = mx + math.Log(sum)
					}
					storeF32(tile.F32, a.LSE, a.lseOffset(b, h, i), float32(lse))
				}
			}
		}
	}
}

// KVAppendArgs copies new keys and values into a KV cache on host memory:
// for every sequence b, rows 0 … Counts[b]−1 of batch b of NewK and NewV go
// to positions Lens[b] … Lens[b]+Counts[b]−1 of the cache (contiguous: batch
// b of K and V; paged: the pages BlockTable[b·BlocksPerSeq …] of PageSize
// tokens). Element types are converted (rounding to nearest even).
type KVAppendArgs struct {
	Batch, HeadsKV, HeadDim int
	NewK, NewV, K, V        AttnTensor
	Lens, Counts            []int
	PageSize                int
	BlockTable              []int32
	BlocksPerSeq            int
}

// KVAppend performs the copy of a KVAppendArgs.
func KVAppend(a *KVAppendArgs) {
	at := &AttentionArgs{PageSize: a.PageSize, BlockTable: a.BlockTable, BlocksPerSeq: a.BlocksPerSeq}
	for b := 0; b < a.Batch; b++ {
		for r := 0; r < a.Counts[b]; r++ {
			for g := 0; g < a.HeadsKV; g++ {
				for _, p := range [2][2]*AttnTensor{{&a.NewK, &a.K}, {&a.NewV, &a.V}} {
					src, dst := p[0], p[1]
					so := src.offset(b, r, g)
					do := at.kvOffset(dst, b, a.Lens[b]+r, g)
					copyRow(dst.DType, dst.Data[do*dst.DType.Size():], src.DType, src.Data[so*src.DType.Size():], a.HeadDim)
				}
			}
		}
	}
}

// copyRow copies n elements of type st to type dt.
func copyRow(dt tile.DType, dst []byte, st tile.DType, src []byte, n int) {
	if dt == st {
		copy(dst[:n*dt.Size()], src[:n*st.Size()])
		return
	}
	for c := 0; c < n; c++ {
		storeF32(dt, dst, c, loadF32(st, src, c))
	}
}
