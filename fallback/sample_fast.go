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
// reference's bits) and returns Σ w.
func sampleWeights(fk *lightFused, w []uint64, x []float32, inv, m float32) uint64 {
	n16 := len(x) &^ 15
	var total uint64
	if n16 > 0 {
		total = fk.sampleWeights(&w[0], &x[0], inv, m, n16)
	}
	for i := n16; i < len(x); i++ {
		s := x[i] * inv
		w[i] = weightOf(ExpF32(s - m))
		total += w[i]
	}
	return total
}

// sampleWeightsSplit is sampleWeights over chunks of the row on up to
// workers goroutines of the pool (the sum is an integer sum: the same
// in any order); SampleFast uses it for a single row, whose weights pass
// is the row's largest cost.
func sampleWeightsSplit(fk *lightFused, w []uint64, x []float32, inv, m float32, workers int) uint64 {
	const chunk = 1 << 13 // a multiple of the kernel's 16
	if workers <= 1 || len(x) < 4*chunk {
		return sampleWeights(fk, w, x, inv, m)
	}
	tasks := (len(x) + chunk - 1) / chunk
	var next atomic.Int64
	var total atomic.Uint64
	run(min(workers, tasks)-1, func() {
		for {
			t := int(next.Add(1) - 1)
			if t >= tasks {
				return
			}
			lo, hi := t*chunk, min(len(x), (t+1)*chunk)
			total.Add(sampleWeights(fk, w[lo:hi], x[lo:hi], inv, m))
		}
	})
	return total.Load()
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

// sampleStride is the subsample's stride, sampleBins its bins of s − m,
// each sampleBinWidth wide (the last takes everything below).
const (
	sampleStride   = 16
	sampleBins     = 64
	sampleBinWidth = 0.25
)

// sigma returns a bound σ whose prefix (s ≥ σ) should hold the cut, from
// a subsample of the row, or −Inf when the subsample says the prefix
// would be most of the row.
func (sp *sampler) sigma(a *SampleArgs, x []float32, w []uint64, inv, m float32, total uint64) float32 {
	var cnt [sampleBins]uint64
	var mass [sampleBins]uint64
	for i := 0; i < len(x); i += sampleStride {
		d := x[i]*inv - m
		if d != d {
			continue
		}
		b := sampleBins - 1 // d = −Inf too
		if f := -d * (1 / sampleBinWidth); f < sampleBins-1 {
			b = int(f)
		}
		cnt[b]++
		mass[b] += w[i]
	}
	topK := a.TopK > 0 && a.TopK < len(x)
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
// the candidates; ok is false when they do not hold the cut (or would be
// most of the row), and then nothing is decided.
func (sp *sampler) rowCandidates(a *SampleArgs, fk *lightFused, x []float32, w []uint64, inv, m float32, total uint64, row int) (tok int, ok bool) {
	n := len(x)
	sigma := sp.sigma(a, x, w, inv, m, total)
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
	var cwSum uint64
	for j, i := range cand {
		key[j] = sampleKey(x[i] * inv)
		cw[j] = w[i]
		cwSum += w[i]
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
		ck, ci, _ := sp.cut(key, cw, false, uint64(a.TopK), false)
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
		ck, ci, kw := sp.cut(key, cw, true, TopPThreshold(a.TopP, w1), false)
		rc, kept, known = rank(ck, ci), kw, true
	}
	minW := uint64(1)
	if a.MinP > 0 {
		minW, known = max(1, MinPThreshold(a.MinP)), false
	}
	u := SampleUniform(a.Seed, a.Offset, row)
	return int(cand[drawFrom(cw, key, rc, minW, u, kept, known)]), true
}
