package fallback

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

// ropeCacheCases are parameter sets of every scaling, with rotary
// dimensions from 2 to past a head of 128.
var ropeCacheCases = []struct {
	theta  float64
	rotDim int
	s      RoPEScaling
}{
	{10000, 2, RoPEScaling{}},
	{10000, 18, RoPEScaling{Kind: RoPELinear, Factor: 4}},
	{500000, 128, RoPEScaling{Kind: RoPELlama3, Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPosition: 8192}},
	{10000, 64, RoPEScaling{Kind: RoPEYaRN, Factor: 4, OriginalMaxPosition: 4096}},
	{1e6, 130, RoPEScaling{}},
}

// ropeCachePositions are positions around a table's limit and beyond,
// negative ones (which the kernels refuse, but the table must not index
// with) and random ones below the limit.
func ropeCachePositions(rng *rand.Rand, limit int) []int32 {
	p := []int32{0, 1, 7, int32(limit - 1), int32(limit), int32(limit + 1), 1<<24 - 1, -1, math.MinInt32}
	for range 64 {
		p = append(p, int32(rng.IntN(limit)))
	}
	return p
}

// TestRoPETableBits checks that a table's frequencies and its cos/sin rows,
// cached (the second look-up) or not, have the uncached path's bits.
func TestRoPETableBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 29))
	for _, tc := range ropeCacheCases {
		tb := RoPETableOf(tc.theta, tc.rotDim, tc.s)
		inv, ms := RoPEFreqs(tc.theta, tc.rotDim, tc.s)
		if len(tb.InvFreq) != len(inv) || math.Float64bits(tb.MScale) != math.Float64bits(ms) {
			t.Fatalf("rot %d: table has %d frequencies and mscale %v, want %d and %v", tc.rotDim, len(tb.InvFreq), tb.MScale, len(inv), ms)
		}
		for i := range inv {
			if math.Float64bits(tb.InvFreq[i]) != math.Float64bits(inv[i]) {
				t.Fatalf("rot %d: inv_freq[%d] = %v, want %v", tc.rotDim, i, tb.InvFreq[i], inv[i])
			}
		}
		if lim := tb.Limit(); lim < 1 || lim > ropeTablePositions || lim*8*len(inv) > ropeTableBytes {
			t.Fatalf("rot %d: limit %d outside the bounds", tc.rotDim, lim)
		}
		half := tc.rotDim / 2
		wc, ws := make([]float32, half), make([]float32, half)
		for _, p := range ropeCachePositions(rng, tb.Limit()) {
			ropeCosSinInto(inv, ms, p, wc, ws)
			for round := range 2 {
				c, s := tb.cosSin(p, make([]float32, half), make([]float32, half))
				for i := range half {
					if math.Float32bits(c[i]) != math.Float32bits(wc[i]) || math.Float32bits(s[i]) != math.Float32bits(ws[i]) {
						t.Fatalf("rot %d pos %d round %d: pair %d is (%v, %v), want (%v, %v)", tc.rotDim, p, round, i, c[i], s[i], wc[i], ws[i])
					}
				}
			}
		}
	}
}

// TestRoPEFastCachedBits checks that RoPEFast writes the same bytes with
// the cache as without it (the fused and the Go rotations, in place and
// out of place, positions below and past the cache's limit).
func TestRoPEFastCachedBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 29))
	for _, tc := range ropeCacheCases {
		tb := RoPETableOf(tc.theta, tc.rotDim, tc.s)
		hd := tc.rotDim + 2*(tc.rotDim%4)
		pos := slices.DeleteFunc(ropeCachePositions(rng, tb.Limit()), func(p int32) bool { return p < 0 })
		tokens := len(pos)
		for _, d := range []tile.DType{tile.F32, tile.BF16} {
			for _, inter := range []bool{false, true} {
				for _, inPlace := range []bool{false, true} {
					q := fusedMatrix(rng, d, tokens, 3*hd, 1, 1)
					k := fusedMatrix(rng, d, tokens, hd, 2, 1)
					run := func(table bool) (Matrix, Matrix) {
						qi, ki := cloneMatrix(q), cloneMatrix(k)
						qo, ko := fusedMatrix(rng, d, tokens, 3*hd, 1, 0), fusedMatrix(rng, d, tokens, hd, 2, 0)
						if inPlace {
							qo, ko = qi, ki
						}
						inv, ms := RoPEFreqs(tc.theta, tc.rotDim, tc.s)
						a := &RoPEArgs{Q: qi, QOut: qo, K: &ki, KOut: &ko, HeadsQ: 3, HeadsK: 1, HeadDim: hd, RotaryDim: tc.rotDim,
							Interleaved: inter, Pos: pos, MaxPosition: 1 << 24, InvFreq: inv, MScale: ms}
						if table {
							a.Table = tb
						}
						if err := RoPEFast(a); err != nil {
							t.Fatal(err)
						}
						return qo, ko
					}
					wq, wk := run(false)
					for round := range 2 { // filling the cache, then from it
						gq, gk := run(true)
						what := fmt.Sprintf("%v rot %d hd %d interleaved %v in place %v round %d", d, tc.rotDim, hd, inter, inPlace, round)
						sameBytes(t, what+" q", gq.Data, wq.Data)
						sameBytes(t, what+" k", gk.Data, wk.Data)
					}
				}
			}
		}
	}
}

// TestRoPETablesBounded checks that the cache keeps at most ropeTablesMax
// parameter sets, the most recently used, and returns the same table for
// the same parameters while it keeps it.
func TestRoPETablesBounded(t *testing.T) {
	var tables []*RoPETable
	for i := range ropeTablesMax + 3 {
		tables = append(tables, RoPETableOf(1000+float64(i)+0.5, 8, RoPEScaling{}))
		if n := len(ropeTables.list); n > ropeTablesMax {
			t.Fatalf("%d tables kept, at most %d", n, ropeTablesMax)
		}
	}
	last := tables[len(tables)-1]
	if RoPETableOf(1000+float64(len(tables)-1)+0.5, 8, RoPEScaling{}) != last {
		t.Fatal("the most recent parameter set got a new table")
	}
	if RoPETableOf(1000.5, 8, RoPEScaling{}) == tables[0] {
		t.Fatal("the oldest of more than ropeTablesMax sets was kept")
	}
	// -0 and 0 are different parameters (the frequencies may differ).
	if RoPETableOf(10000, 8, RoPEScaling{Kind: RoPELinear, Factor: 0}) == RoPETableOf(10000, 8, RoPEScaling{Kind: RoPELinear, Factor: math.Copysign(0, -1)}) {
		t.Fatal("Factor 0 and −0 share a table")
	}
}

// TestRoPETableConcurrent fills one table from several goroutines at once
// (run it with -race) and checks every row they got.
func TestRoPETableConcurrent(t *testing.T) {
	const theta, rot = 123456.5, 64
	inv, ms := RoPEFreqs(theta, rot, RoPEScaling{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			wc, ws := make([]float32, rot/2), make([]float32, rot/2)
			c, s := make([]float32, rot/2), make([]float32, rot/2)
			for range 300 {
				p := int32(rng.IntN(64))
				gc, gs := RoPETableOf(theta, rot, RoPEScaling{}).cosSin(p, c, s)
				ropeCosSinInto(inv, ms, p, wc, ws)
				for i := range wc {
					if math.Float32bits(gc[i]) != math.Float32bits(wc[i]) || math.Float32bits(gs[i]) != math.Float32bits(ws[i]) {
						errs <- fmt.Errorf("goroutine %d pos %d pair %d: (%v, %v), want (%v, %v)", g, p, i, gc[i], gs[i], wc[i], ws[i])
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
