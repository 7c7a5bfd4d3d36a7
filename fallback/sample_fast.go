package fallback

import (
	"math"
	goruntime "runtime"
	"sync/atomic"
)

// The vector passes of SampleFast (the fused kernels): the weights of a
// row in one pass, and the candidates of a cut.
//
// Top-k and top-p keep a prefix of the order (rule 3), and the order is by
// s = x·(1/T) alone (index among equal s): so for any bound σ the
// elements with s ≥ σ are a prefix of the order, and if that prefix holds
// K elements (top-k) or weight P (top-p) the cut falls inside it. The row
// then works on those candidates only, kept in index order (the tie order
// and the draw's order): a subsample of the row's weights picks σ, one
// vector pass lists the candidates, and the radix select and the draw run
// over them. Whether the prefix holds the cut is checked exactly (a count,
// an integer sum of the candidates' weights); where it does not, the row
// falls back to the whole-row path. Either way the token is the
// reference's.

// sampleWeights writes w_i = weightOf(ExpF32(x_i·inv − m)) (rule 4, the
// reference's bits) and returns Σ w; with w nil it only returns Σ w.
func sampleWeights(fk *lightFused, w []uint64, x []float32, inv, m float32) uint64 {
	n16 := len(x) &^ 15
	var total uint64
	if n16 > 0 {
		if w == nil {
			total = fk.sampleWeightSum(nil, &x[0], inv, m, n16)
		} else {
			total = fk.sampleWeights(&w[0], &x[0], inv, m, n16)
		}
	}
	for i := n16; i < len(x); i++ {
		s := x[i] * inv
		wi := weightOf(ExpF32(s - m))
		if w != nil {
			w[i] = wi
		}
		total += wi
	}
	return total
}

// gatherWeights writes into w the weights of x's elements at idx and
// returns their sum, gathering the elements into g.
func gatherWeights(fk *lightFused, w []uint64, g, x []float32, idx []int32, inv, m float32) uint64 {
	g = g[:len(idx)]
	for j, i := range idx {
		g[j] = x[i]
	}
	return sampleWeights(fk, w[:len(idx)], g, inv, m)
}

// sampleChunk is the chunk of sampleWeightsSplit: a multiple of the
// kernel's 16.
const sampleChunk = 1 << 13

// sampleWeightsSplit is sampleWeights (w may be nil) over chunks of
// sampleChunk elements,
// on up to workers goroutines of the pool (the sum is an integer sum: the
// same in any order), writing each chunk's weight into chunks; SampleFast
// splits a single row, whose weights pass is the row's largest cost.
func sampleWeightsSplit(fk *lightFused, w []uint64, x []float32, inv, m float32, workers int, chunks []uint64) uint64 {
	tasks := (len(x) + sampleChunk - 1) / sampleChunk
	var next atomic.Int64
	var total atomic.Uint64
	do := func() {
		for {
			t := int(next.Add(1) - 1)
			if t >= tasks {
				return
			}
			lo, hi := t*sampleChunk, min(len(x), (t+1)*sampleChunk)
			var wt []uint64
			if w != nil {
				wt = w[lo:hi]
			}
			chunks[t] = sampleWeights(fk, wt, x[lo:hi], inv, m)
			total.Add(chunks[t])
		}
	}
	if workers <= 1 || tasks < 4 {
		do()
	} else {
		run(min(workers, tasks)-1, do)
	}
	return total.Load()
}

// drawChunks is rule 8 over every element of weight ≥ 1 (no cut, no
// min-p): the chunk whose weights reach past r = pick(u, total), then the
// element inside it, its weights computed into w.
func drawChunks(fk *lightFused, w []uint64, x []float32, inv, m float32, chunks []uint64, u, total uint64) int {
	target := pick(u, total)
	var before uint64
	for c, cw := range chunks {
		if before+cw > target {
			lo, hi := c*sampleChunk, min(len(x), (c+1)*sampleChunk)
			sampleWeights(fk, w[lo:hi], x[lo:hi], inv, m)
			var cum uint64
			for i, v := range w[lo:hi] {
				cum += v
				if before+cum > target {
					return lo + i
				}
			}
		}
		before += cw
	}
	return len(x) - 1 // not reached: target < total
}

// rowMinP is rules 7–8 for min-p alone (0 < MinP ≤ 1) over the candidates
// s ≥ σ = m + ln(MinP) − margin. An element below σ has s − m (rounded)
// below ln(MinP) − 0.99·margin, so ExpF32 (within 2^−22 of e^x) gives it
// less than MinP·e^−0.0099 and its weight is below ⌈MinP·2^40⌉: it could
// not be drawn. The margin (0.01 + 10^−5·|m|) is far above the float32
// rounding of σ and of s − m.
func (sp *sampler) rowMinP(a *SampleArgs, fk *lightFused, x []float32, inv, m float32, row int) int {
	n := len(x)
	margin := 0.01 + 1e-5*float32(math.Abs(float64(m)))
	sigma := m + float32(math.Log(float64(a.MinP))) - margin
	n8 := n &^ 7
	cand := sp.cand[:n+8] // the kernel's slack
	c := 0
	if n8 > 0 {
		c = fk.sampleSelect(&cand[0], &x[0], inv, sigma, n8)
	}
	for i := n8; i < n; i++ {
		if x[i]*inv >= sigma {
			cand[c] = int32(i)
			c++
		}
	}
	cw := sp.cw[:c]
	gatherWeights(fk, cw, sp.e, x, cand[:c], inv, m)
	minW := max(1, MinPThreshold(a.MinP))
	return int(cand[drawFrom(cw, nil, 0, minW, SampleUniform(a.Seed, a.Offset, row), 0, false)])
}

// sampleWorkers is how many goroutines a single row's passes may use.
func sampleWorkers(a *SampleArgs) int {
	if a.Logits.Rows != 1 {
		return 1 // the rows go across the pool instead
	}
	if a.Threads > 0 {
		return min(a.Threads, goruntime.GOMAXPROCS(0))
	}
	return goruntime.GOMAXPROCS(0)
}

// The subsample: blocks of sampleBlock consecutive elements (a cache
// line of float32), one in every sampleStride blocks, so that it touches
// 1/sampleStride of the row's lines (a strided subsample touches them
// all); sampleBins bins of s − m, each sampleBinWidth wide (the last
// takes everything below).
const (
	sampleBlock    = 16
	sampleStride   = 64
	sampleBins     = 64
	sampleBinWidth = 0.25
)

// sigma returns a bound σ whose prefix (s ≥ σ) should hold the cut, from
// a subsample of the row, or −Inf when the subsample says the prefix
// would be most of the row.
func (sp *sampler) sigma(a *SampleArgs, fk *lightFused, x []float32, inv, m float32, total uint64) float32 {
	var cnt [sampleBins]uint64
	var mass [sampleBins]uint64
	topK := a.TopK > 0 && a.TopK < len(x)
	g := sp.e[:0]
	for lo := 0; lo < len(x); lo += sampleBlock * sampleStride {
		g = append(g, x[lo:min(lo+sampleBlock, len(x))]...)
	}
	// The subsample's weights (top-p only), computed on the gathered copy.
	w := sp.cw[:len(g)]
	if !topK {
		sampleWeights(fk, w, g, inv, m)
	}
	for j, v := range g {
		d := v*inv - m
		if d != d {
			continue
		}
		b := sampleBins - 1 // d = −Inf too
		if f := -d * (1 / sampleBinWidth); f < sampleBins-1 {
			b = int(f)
		}
		cnt[b]++
		if !topK {
			mass[b] += w[j]
		}
	}
	var needC, needW uint64
	if topK {
		needC = 2*uint64(a.TopK) + 16*sampleStride
	} else {
		// P plus a quarter of the mass beyond it: room for the
		// subsample's error.
		p := TopPThreshold(a.TopP, total)
		needW = p + (total-p)/4
	}
	var c, wsum uint64
	for b := range sampleBins - 3 {
		c += cnt[b] * sampleStride
		wsum += mass[b] * sampleStride
		if (topK && c >= needC) || (!topK && wsum >= needW) {
			if 4*c > uint64(len(x)) { // no gain over the whole row
				break
			}
			// Two bins more of slack below the estimate.
			return m - float32(b+3)*sampleBinWidth
		}
	}
	return float32(math.Inf(-1))
}

// rowCandidates is rules 5–8 for a row with a cut (top-k or top-p) over
// the candidates, total the row's weight (unused, and not computed, with
// top-k); ok is false when they do not hold the cut (or would be most of
// the row), and then nothing is decided.
func (sp *sampler) rowCandidates(a *SampleArgs, fk *lightFused, x []float32, inv, m float32, total uint64, row int) (tok int, ok bool) {
	n := len(x)
	sigma := sp.sigma(a, fk, x, inv, m, total)
	if math.IsInf(float64(sigma), -1) {
		return 0, false
	}
	n8 := n &^ 7
	cand := sp.cand[:n+8] // the kernel's slack
	c := 0
	if n8 > 0 {
		c = fk.sampleSelect(&cand[0], &x[0], inv, sigma, n8)
	}
	for i := n8; i < n; i++ {
		if x[i]*inv >= sigma {
			cand[c] = int32(i)
			c++
		}
	}
	cand = cand[:c]
	key, cw := sp.key[:c], sp.cw[:c]
	cwSum := gatherWeights(fk, cw, sp.e, x, cand, inv, m)
	for j, i := range cand {
		key[j] = sampleKey(x[i] * inv)
	}
	topK, topP := a.TopK > 0 && a.TopK < n, a.TopP < 1
	switch {
	case topK && c < a.TopK:
		return 0, false
	case !topK && (c == 0 || cwSum < TopPThreshold(a.TopP, total)):
		return 0, false
	}
	// As rowKeyed, on the candidates (positions j in index order).
	var rc uint64
	kept, known := total, true
	if topK {
		ck, ci, _ := sp.cut(key, cw, false, uint64(a.TopK))
		rc, known = rank(ck, ci), false
	}
	if topP {
		w1 := total
		if topK {
			w1 = 0
			for j, v := range cw {
				if rank(key[j], j) >= rc {
					w1 += v
				}
			}
		}
		ck, ci, kw := sp.cut(key, cw, true, TopPThreshold(a.TopP, w1))
		rc, kept, known = rank(ck, ci), kw, true
	}
	minW := uint64(1)
	if a.MinP > 0 {
		minW, known = max(1, MinPThreshold(a.MinP)), false
	}
	u := SampleUniform(a.Seed, a.Offset, row)
	return int(cand[drawFrom(cw, key, rc, minW, u, kept, known)]), true
}

// MaxF32 returns the largest element of x ignoring NaN (−Inf where there
// is none) with the vector kernel of the samplers' first pass: bench's
// yardstick of reading the logits once.
func MaxF32(x []float32) float32 { return vecMax(lightVec(), x) }
