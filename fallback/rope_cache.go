package fallback

import (
	"math"
	"sync"
	"sync/atomic"
)

// The cos/sin cache of the rotary embedding: an implementation detail
// that no API exposes. A decode loop calls RoPE once per layer with the
// same parameters and position, and a prefill of the same length calls it
// with the same positions: the frequencies (RotaryDim/2 math.Pow calls)
// and each position's cos and sin (RotaryDim/2 math.Sincos calls) are
// computed once per parameter set and position, by the function the
// uncached path calls (ropeCosSinInto), so a cached row has the bits of a
// computed one.
//
// Bounds: at most ropeTablesMax parameter sets are kept (the least
// recently used is dropped; callers that hold it keep a valid table), and
// each caches the positions below its Limit, at most ropeTablePositions
// and at most ropeTableBytes of rows; positions at or above Limit are
// computed per call, so the cache sets no range on positions.

// ropeTablesMax, ropeTablePositions and ropeTableBytes bound the cache.
const (
	ropeTablesMax      = 4
	ropeTablePositions = 1 << 14
	ropeTableBytes     = 4 << 20
)

// ropeKey is a parameter set, floats by their bits (so −0 and 0 differ
// and NaN equals itself).
type ropeKey struct {
	theta   uint64
	rotDim  int
	kind    RoPEScalingKind
	factor  uint64
	lowHigh [2]uint64
	orig    int
	betas   [2]uint64
}

func ropeKeyOf(theta float64, rotDim int, s RoPEScaling) ropeKey {
	b := math.Float64bits
	return ropeKey{b(theta), rotDim, s.Kind, b(s.Factor), [2]uint64{b(s.LowFreqFactor), b(s.HighFreqFactor)},
		s.OriginalMaxPosition, [2]uint64{b(s.BetaFast), b(s.BetaSlow)}}
}

// RoPETable is one parameter set's frequencies and its cache of cos/sin
// rows. Safe for concurrent use; InvFreq is shared and read only.
type RoPETable struct {
	key     ropeKey
	InvFreq []float64
	MScale  float64
	// rows holds Limit rows, position p's at p·RotaryDim: RotaryDim/2
	// cos values then as many sin values, valid once state[p] is
	// rowReady. One allocation when the table is made (untouched pages
	// cost nothing), so a call allocates nothing.
	rows  []float32
	state []atomic.Uint32
}

// The states of a cached row: not computed, being computed (by the
// caller that moved it from rowEmpty), ready.
const (
	rowEmpty uint32 = iota
	rowFilling
	rowReady
)

// Limit is the first position the table does not cache.
func (t *RoPETable) Limit() int { return len(t.state) }

// cosSin returns position p's cos and sin: from the cache when p is in
// [0, Limit) (computing the row the first time), else computed into c and
// s.
func (t *RoPETable) cosSin(p int32, c, s []float32) ([]float32, []float32) {
	half := len(t.InvFreq)
	if p >= 0 && int(p) < len(t.state) {
		st := &t.state[p]
		row := t.rows[int(p)*2*half : (int(p)+1)*2*half]
		switch {
		case st.Load() == rowReady:
			return row[:half], row[half:]
		case st.CompareAndSwap(rowEmpty, rowFilling):
			ropeCosSinInto(t.InvFreq, t.MScale, p, row[:half], row[half:])
			st.Store(rowReady) // publishes the row
			return row[:half], row[half:]
		}
		// Another caller is computing the row: compute our own copy.
	}
	ropeCosSinInto(t.InvFreq, t.MScale, p, c[:half], s[:half])
	return c[:half], s[:half]
}

// ropeTables is the cache: most recently used first.
var ropeTables struct {
	mu   sync.Mutex
	list []*RoPETable
}

// RoPETableOf returns the shared table of a parameter set (theta,
// rotDim, s), making it (its frequencies from RoPEFreqs) on first use.
func RoPETableOf(theta float64, rotDim int, s RoPEScaling) *RoPETable {
	k := ropeKeyOf(theta, rotDim, s)
	ropeTables.mu.Lock()
	defer ropeTables.mu.Unlock()
	l := ropeTables.list
	for i, t := range l {
		if t.key == k {
			copy(l[1:i+1], l[:i])
			l[0] = t
			return t
		}
	}
	inv, ms := RoPEFreqs(theta, rotDim, s)
	limit := ropeTablePositions
	if len(inv) > 0 {
		limit = min(limit, ropeTableBytes/(8*len(inv)))
	}
	t := &RoPETable{key: k, InvFreq: inv, MScale: ms, rows: make([]float32, limit*2*len(inv)), state: make([]atomic.Uint32, limit)}
	if len(l) < ropeTablesMax {
		l = append(l, nil)
	}
	copy(l[1:], l[:len(l)-1])
	l[0] = t
	ropeTables.list = l
	return t
}
