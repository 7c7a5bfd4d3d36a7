package fallback

import (
	"math"
	"math/bits"
	"slices"
	"sync"

	"github.com/tcrt-go/tcrt/tile"
)

// Sampling from logits, one token per row.
//
// The specification, which SampleRef implements literally (with a full
// sort) and SampleFast without sorting:
//
//  1. Greedy (Temperature 0): the index of the largest logit, the lowest
//     index among equal ones; NaN counts as −Inf (so a row of NaN and −Inf
//     gives 0).
//  2. Otherwise s_i = x_i · (1/T) in float32 (1/T rounded first),
//     m = max s_i. A row whose maximum
//     is +Inf, or that has no logit above −Inf, is sampled greedily (rule
//     1). NaN logits are never drawn.
//  3. The order: s descending, index ascending among equal s (NaN last).
//  4. Weights w_i = ⌊ExpF32(s_i − m) · 2^40⌋, integers (the top weight is
//     exactly 2^40; a token below 2^−40 of the top has weight 0 and is
//     never drawn). All sums below are exact integer sums, so every order
//     of summation gives the same numbers.
//  5. Top-k (TopK > 0): keep the first TopK of the order.
//  6. Top-p (TopP < 1), over what top-k kept: with W the kept weight and
//     P = max(1, ⌈TopP·W⌉) (float64), keep the elements of the order whose
//     weight before them is below P (the smallest prefix holding TopP of
//     the mass).
//  7. Min-p (MinP > 0): of those, keep the elements with w_i ≥ ⌈MinP·2^40⌉.
//  8. The draw: u = SampleUniform(Seed, Offset, row), W_S the weight of
//     the kept set S, r = ⌊u·W_S / 2^64⌋; the token is the element of S, in
//     index order, whose cumulative weight first exceeds r.
//
// So the token is a function of the logits, the options and u alone.

// SampleArgs is a sampling call over host memory: Logits is Rows × Cols
// (the vocabulary), Out receives Rows token ids.
type SampleArgs struct {
	Logits       Matrix
	Out          []int32
	Temperature  float32
	TopK         int
	TopP, MinP   float32
	Seed, Offset uint64
	Threads      int
}

// sampleOne is the weight of 2^0 in the integer weights.
const sampleOne = 1 << 40

// sampleKey maps a score to a uint32 that orders as the float does; NaN
// maps to 0, below −Inf.
func sampleKey(s float32) uint32 {
	if s != s {
		return 0
	}
	b := math.Float32bits(s)
	if b>>31 != 0 {
		return ^b
	}
	return b | 1<<31
}

// weightOf is the weight of e = ExpF32(s − m) (NaN for a NaN score: 0).
func weightOf(e float32) uint64 {
	if e != e {
		return 0
	}
	return uint64(int64(float64(e) * sampleOne)) // e ≤ 1: fits an int64, one conversion instruction
}

// TopPThreshold is P of rule 6 for a kept weight w.
func TopPThreshold(p float32, w uint64) uint64 {
	t := uint64(math.Ceil(float64(p) * float64(w)))
	return max(1, min(t, w))
}

// MinPThreshold is the weight bound of rule 7.
func MinPThreshold(p float32) uint64 { return uint64(math.Ceil(float64(p) * sampleOne)) }

// pick returns r of rule 8.
func pick(u, w uint64) uint64 { hi, _ := bits.Mul64(u, w); return hi }

// greedy returns the argmax of x, rule 1.
func greedy(x []float32) int {
	best, at := float32(math.Inf(-1)), 0
	for i, v := range x {
		if v > best {
			best, at = v, i
		}
	}
	return at
}

// SampleRef is the reference: rule by rule, with a full sort.
func SampleRef(a *SampleArgs) {
	for r := 0; r < a.Logits.Rows; r++ {
		x := refRow(&a.Logits, r, 0, a.Logits.Cols)
		a.Out[r] = int32(sampleRefRow(a, x, r))
	}
}

func sampleRefRow(a *SampleArgs, x []float32, row int) int {
	if a.Temperature == 0 {
		return greedy(x)
	}
	n := len(x)
	s := make([]float32, n)
	m := float32(math.Inf(-1))
	inv := 1 / a.Temperature
	for i, v := range x {
		s[i] = v * inv
		if s[i] > m {
			m = s[i]
		}
	}
	if math.IsInf(float64(m), 0) {
		return greedy(x)
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int {
		ki, kj := sampleKey(s[i]), sampleKey(s[j])
		switch {
		case ki > kj:
			return -1
		case ki < kj:
			return 1
		}
		return i - j
	})
	w := make([]uint64, n)
	for i := range w {
		w[i] = weightOf(ExpF32(s[i] - m))
	}
	keep := n
	if a.TopK > 0 {
		keep = min(keep, a.TopK)
	}
	if a.TopP < 1 {
		var total uint64
		for _, i := range order[:keep] {
			total += w[i]
		}
		p := TopPThreshold(a.TopP, total)
		var before uint64
		for j, i := range order[:keep] {
			if before >= p {
				keep = j
				break
			}
			before += w[i]
		}
	}
	minW := uint64(0)
	if a.MinP > 0 {
		minW = MinPThreshold(a.MinP)
	}
	var set []int
	for _, i := range order[:keep] {
		if w[i] >= minW && w[i] > 0 {
			set = append(set, i)
		}
	}
	slices.Sort(set)
	var total uint64
	for _, i := range set {
		total += w[i]
	}
	target := pick(SampleUniform(a.Seed, a.Offset, row), total)
	var cum uint64
	for _, i := range set {
		cum += w[i]
		if cum > target {
			return i
		}
	}
	return set[len(set)-1] // not reached: target < total
}

// sampler is one goroutine's scratch for SampleFast.
type sampler struct {
	x, s, e []float32
	key     []uint32
	w, cw   []uint64
	list    []int32
	cand    []int32
	chunkW  []uint64 // the weight of each sampleChunk of the row
	hist    [2048]uint64
}

var samplerPool sync.Pool

// SampleFast is the fast path; it returns the tokens SampleRef returns.
// Rows go across the pool. No sort: top-k and top-p find their cut in the
// order (rule 3) by a radix select on the 32-bit keys, 11 bits a level
// from the first bit in which the keys differ: one histogram pass gives
// each top-level bucket's count or weight, a scan from the top finds the
// bucket where the cut falls, and only that bucket's members (usually a
// small fraction) are histogrammed again on the next bits; after the last
// level the members share one key and are in index order, the tie order.
func SampleFast(a *SampleArgs) {
	cv := lightCvt()
	n := a.Logits.Cols
	forRowsOf(&sampleRows, a.Logits.Rows, n, a.Threads, 0, sampleState{a, cv, n}, func(st *sampleState, lo, hi int, _ []float32) {
		a, cv, n := st.a, st.cv, st.n
		if a.Temperature == 0 && a.Logits.DType == tile.F32 { // greedy needs no scratch
			vk := lightVec()
			for r := lo; r < hi; r++ {
				a.Out[r] = int32(vecArgmax(vk, loadRow(cv, &a.Logits, r, 0, n, nil)))
			}
			return
		}
		sp, _ := samplerPool.Get().(*sampler)
		if sp == nil || cap(sp.x) < n {
			sp = &sampler{x: make([]float32, n), s: make([]float32, n), e: make([]float32, n), key: make([]uint32, n), w: make([]uint64, n), cw: make([]uint64, n), list: make([]int32, n), cand: make([]int32, n+8), chunkW: make([]uint64, n/sampleChunk+1)}
		}
		for r := lo; r < hi; r++ {
			x := loadRow(cv, &a.Logits, r, 0, n, sp.x)
			a.Out[r] = int32(sp.row(a, x, r))
		}
		samplerPool.Put(sp)
	})
}

// sampleState is the state of SampleFast's row function.
type sampleState struct {
	a  *SampleArgs
	cv *converters
	n  int
}

var sampleRows rowTasks[sampleState]

func (sp *sampler) row(a *SampleArgs, x []float32, row int) int {
	vk := lightVec()
	if a.Temperature == 0 {
		return vecArgmax(vk, x)
	}
	n := len(x)
	inv := 1 / a.Temperature
	// s = x·(1/T) is monotone in x, so max s = (max x)·(1/T).
	m := vecMax(vk, x) * inv
	if math.IsInf(float64(m), 0) {
		return vecArgmax(vk, x)
	}
	key, w := sp.key[:n], sp.w[:n]
	topK, topP := a.TopK > 0 && a.TopK < n, a.TopP < 1
	if fk := lightFusedK(); fk != nil {
		// The whole row's weight (top-p's P, the draw without a cut) is
		// summed without storing the weights; the passes that need
		// weights compute them again for their elements (the same bits).
		// After top-k, top-p's P is of the weight top-k kept, which the
		// candidates hold: no whole-row pass.
		var total uint64
		chunks := sp.chunkW[:(n+sampleChunk-1)/sampleChunk]
		if !topK && (topP || a.MinP == 0) {
			total = sampleWeightsSplit(fk, nil, x, inv, m, sampleWorkers(a), chunks)
		}
		switch {
		case topK || topP:
			if tok, ok := sp.rowCandidates(a, fk, x, inv, m, total, row); ok {
				return tok
			}
		case a.MinP > 0 && a.MinP <= 1:
			return sp.rowMinP(a, fk, x, inv, m, row)
		case a.MinP == 0:
			return drawChunks(fk, w, x, inv, m, chunks, SampleUniform(a.Seed, a.Offset, row), total)
		}
		// No cut, or the candidates did not hold it: the whole row.
		total = sampleWeights(fk, w, x, inv, m)
		return sp.rowKeyed(a, x, w, inv, total, row, false)
	}
	sc, e := sp.s[:n], sp.e[:n]
	vecScale(vk, sc, x, inv)
	vecExpSum(vk, e, sc, m, 1) // ExpF32((s − m)·1): the reference's bits
	// One pass: weights, their total and keys.
	var total uint64
	for i, v := range sc {
		wi := weightOf(e[i])
		w[i] = wi
		total += wi
		if topK || topP {
			key[i] = sampleKey(v)
		}
	}
	return sp.rowKeyed(a, x, w, inv, total, row, true)
}

// rowKeyed is rules 5–8 over the whole row given the weights w and their
// total; keyed says sp.key holds the keys (else they are computed here).
func (sp *sampler) rowKeyed(a *SampleArgs, x []float32, w []uint64, inv float32, total uint64, row int, keyed bool) int {
	n := len(x)
	key := sp.key[:n]
	topK, topP := a.TopK > 0 && a.TopK < n, a.TopP < 1
	if !keyed && (topK || topP) {
		for i, v := range x {
			key[i] = sampleKey(v * inv)
		}
	}
	// The kept prefix of the order is the elements ranked at or above
	// rc, with rank(i) = key_i·2^32 + (2^32−1−i) (key descending, index
	// ascending); rc 0 keeps everything. kept is its weight when known.
	var rc uint64
	kept, known := total, true
	if topK {
		ck, ci, _ := sp.cut(key, w, false, uint64(a.TopK))
		rc, known = rank(ck, ci), false
	}
	if topP {
		w1 := total
		if topK {
			w1 = 0
			for i, v := range w {
				if rank(key[i], i) >= rc {
					w1 += v
				}
			}
		}
		ck, ci, kw := sp.cut(key, w, true, TopPThreshold(a.TopP, w1))
		rc, kept, known = rank(ck, ci), kw, true
	}
	minW := uint64(1)
	if a.MinP > 0 {
		minW, known = max(1, MinPThreshold(a.MinP)), false
	}
	u := SampleUniform(a.Seed, a.Offset, row)
	if !topK && !topP { // no cut: key is not filled in
		return drawFrom(w, nil, 0, minW, u, kept, known)
	}
	return drawFrom(w, key, rc, minW, u, kept, known)
}

// rank orders elements as the order does: a larger rank comes first.
func rank(key uint32, i int) uint64 { return uint64(key)<<32 | uint64(^uint32(i)) }

// drawFrom is rule 8 over the elements of weight ≥ minW ranked at or above
// rc (key nil: every element); total is their weight when known.
func drawFrom(w []uint64, key []uint32, rc, minW uint64, u uint64, total uint64, known bool) int {
	if !known {
		total = 0
		for i, v := range w {
			if v >= minW && (key == nil || rank(key[i], i) >= rc) {
				total += v
			}
		}
	}
	target := pick(u, total)
	var cum uint64
	last := 0
	for i, v := range w {
		if v >= minW && (key == nil || rank(key[i], i) >= rc) {
			cum += v
			last = i
			if cum > target {
				return i
			}
		}
	}
	return last
}

// cut returns the last element (key, index) of the prefix of the order
// whose elements have a measure before them below thr (thr ≥ 1, at most
// the total measure), and the prefix's measure; the measure is the
// weight, or 1 per element when !byWeight. The levels of the radix
// select take 11 bits at a time from the first bit in which the keys
// differ (the bits above it are every key's), so that keys in a narrow
// range (the candidates) spread over the first level's buckets.
func (sp *sampler) cut(key []uint32, w []uint64, byWeight bool, thr uint64) (uint32, int, uint64) {
	lo, hi := ^uint32(0), uint32(0)
	for _, k := range key {
		lo, hi = min(lo, k), max(hi, k)
	}
	common := bits.LeadingZeros32(lo ^ hi) // 32: a single key
	prefixMask := ^(^uint32(0) >> common)
	prefix := lo & prefixMask
	list := sp.list[:0]
	var kept uint64
	for l, rest := 0, 32-common; rest > 0; l++ {
		nb := min(11, rest)
		rest -= nb
		shift := uint(rest)
		h := sp.hist[:1<<nb]
		mask := uint32(1)<<nb - 1
		clear(h)
		switch {
		case l == 0 && byWeight:
			for i, k := range key {
				h[k>>shift&mask] += w[i]
			}
		case l == 0:
			for _, k := range key {
				h[k>>shift&mask]++
			}
		case byWeight:
			for _, i := range list {
				h[key[i]>>shift&mask] += w[i]
			}
		default:
			for _, i := range list {
				h[key[i]>>shift&mask]++
			}
		}
		b := len(h) - 1
		var before uint64
		for ; b > 0; b-- {
			if before+h[b] >= thr {
				break
			}
			before += h[b]
		}
		// b is the bucket where the cut falls.
		thr -= before
		kept += before
		prefix |= uint32(b) << shift
		prefixMask |= mask << shift
		next := sp.list[:0]
		if l == 0 {
			for i, k := range key {
				if k&prefixMask == prefix {
					next = append(next, int32(i))
				}
			}
		} else {
			for _, i := range list {
				if key[i]&prefixMask == prefix {
					next = append(next, i)
				}
			}
		}
		list = next
	}
	if common == 32 { // one key: every element is a member
		list = list[:0]
		for i := range key {
			list = append(list, int32(i))
		}
	}
	// The members share the key and are in index order.
	var before uint64
	last := int(list[0])
	for _, i := range list {
		if before >= thr {
			break
		}
		last = int(i)
		if byWeight {
			before += w[i]
		} else {
			before++
		}
	}
	return prefix, last, kept + before
}
