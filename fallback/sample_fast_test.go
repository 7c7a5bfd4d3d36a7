package fallback

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

// TestSampleWeightsBits: the vector weights are weightOf(ExpF32(x·inv −
// m)), bit for bit, NaN and ±Inf logits included, their sum (also
// without storing them) is the integer sum, and the selection lists exactly the indices at or above
// its bound, in order.
func TestSampleWeightsBits(t *testing.T) {
	fk := lightFusedK()
	if fk == nil {
		t.Skip("no fused kernels on this CPU or build")
	}
	rng := rand.New(rand.NewPCG(29, 2))
	for ni, n := range []int{1, 15, 16, 17, 1000, 40001, 40001} {
		x := make([]float32, n)
		for i := range x {
			if ni == 6 { // all within 87 of the top: the fast exponential
				x[i] = (rng.Float32()*2 - 1) * 30
				continue
			}
			switch rng.IntN(20) {
			case 0:
				x[i] = float32(math.NaN())
			case 1:
				x[i] = float32(math.Inf(-1))
			case 2:
				x[i] = -1e30
			default:
				x[i] = float32(rng.NormFloat64() * 20)
			}
		}
		inv := float32(1 / 0.7)
		m := float32(math.Inf(-1))
		for _, v := range x {
			if v*inv > m {
				m = v * inv
			}
		}
		w := make([]uint64, n)
		got := sampleWeights(fk, w, x, inv, m)
		var want uint64
		for i, v := range x {
			s := v * inv
			wi := weightOf(ExpF32(s - m))
			if w[i] != wi {
				t.Fatalf("n %d: w[%d] of %v is %d, want %d", n, i, v, w[i], wi)
			}
			want += wi
		}
		if got != want {
			t.Fatalf("n %d: total %d, want %d", n, got, want)
		}
		if sum := sampleWeights(fk, nil, x, inv, m); sum != want {
			t.Fatalf("n %d: total without the weights %d, want %d", n, sum, want)
		}
		// The selection: the indices with x·inv ≥ sigma, in order.
		for _, sigma := range []float32{m - 3, m, float32(math.Inf(-1)), float32(math.Inf(1))} {
			n8 := n &^ 7
			idx := make([]int32, n8+8)
			c := 0
			if n8 > 0 {
				c = fk.sampleSelect(&idx[0], &x[0], inv, sigma, n8)
			}
			var wantIdx []int32
			for i, v := range x[:n8] {
				if v*inv >= sigma {
					wantIdx = append(wantIdx, int32(i))
				}
			}
			if c != len(wantIdx) {
				t.Fatalf("n %d, sigma %v: %d selected, want %d", n, sigma, c, len(wantIdx))
			}
			for j := range wantIdx {
				if idx[j] != wantIdx[j] {
					t.Fatalf("n %d, sigma %v: entry %d is %d, want %d", n, sigma, j, idx[j], wantIdx[j])
				}
			}
		}
	}
}

// TestSampleFastLargeRows compares SampleFast's tokens with the sorting
// reference's on vocabulary-sized rows of several spreads, where the
// candidate path takes the cut (checked), where it falls back, and for
// min-p alone and temperature alone (their own paths).
func TestSampleFastLargeRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 3))
	opts := []SampleArgs{
		{Temperature: 1, TopP: 0.9},
		{Temperature: 0.7, TopK: 50, TopP: 0.9},
		{Temperature: 1, TopK: 50, TopP: 1},
		{Temperature: 1, TopP: 0.5, MinP: 0.05},
		{Temperature: 1.3, TopP: 0.99},
		{Temperature: 1, TopK: 1, TopP: 1},
		{Temperature: 1, TopP: 1, MinP: 0.05},
		{Temperature: 0.8, TopP: 1},            // by chunks
		{Temperature: 1, TopP: 1, MinP: 0.9},   // min-p candidates
		{Temperature: 2, TopP: 1, MinP: 1e-30}, // min-p: every element a candidate
	}
	spreads := []func() float32{
		func() float32 { return (rng.Float32()*2 - 1) * 12 },     // the benchmark's
		func() float32 { return float32(rng.NormFloat64() * 3) }, // flat: mostly falls back
		func() float32 { return float32(rng.NormFloat64() * 30) },
		func() float32 { return float32(rng.IntN(9)) }, // ties
	}
	took := 0
	for si, spread := range spreads {
		for oi, o := range opts {
			cols := 100000 + rng.IntN(30000)
			rows := 2
			x := make([]byte, 4*rows*cols)
			xs := F32s(x)
			for i := range xs {
				xs[i] = spread()
			}
			if si == 2 {
				xs[5] = float32(math.NaN())
			}
			m := Matrix{DType: tile.F32, Data: x, Rows: rows, Cols: cols, LD: cols}
			a := o
			a.Logits, a.Seed, a.Offset = m, uint64(si*10+oi), 3
			got, want := make([]int32, rows), make([]int32, rows)
			a.Out = got
			SampleFast(&a)
			a.Out = want
			SampleRef(&a)
			for r := range got {
				if got[r] != want[r] {
					t.Fatalf("spread %d, options %+v, row %d: token %d, want %d", si, o, r, got[r], want[r])
				}
			}
			if fk := lightFusedK(); fk != nil && (o.TopK > 0 || o.TopP < 1) {
				sp := &sampler{e: make([]float32, cols), key: make([]uint32, cols), w: make([]uint64, cols), cw: make([]uint64, cols), list: make([]int32, cols), cand: make([]int32, cols+8)}
				row := xs[:cols]
				inv := 1 / o.Temperature
				mx := vecMax(lightVec(), row) * inv
				total := sampleWeights(fk, nil, row, inv, mx)
				if tok, ok := sp.rowCandidates(&a, fk, row, inv, mx, total, 0); ok {
					took++
					if int32(tok) != want[0] {
						t.Fatalf("spread %d, options %+v: candidates' token %d, want %d", si, o, tok, want[0])
					}
				}
			}
		}
	}
	if lightFusedK() != nil && took < 8 {
		t.Errorf("the candidate path decided %d rows, want at least 8", took)
	}
	t.Logf("candidate path decided %d rows", took)
}

// TestSampleCut checks the radix select against a sort of the order: for
// keys all equal, in a narrow range and over every bit, counts and
// weights (zeros among them), every threshold kind from 1 to the total.
func TestSampleCut(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 4))
	for _, n := range []int{1, 7, 129, 1000} {
		for spread := range 3 {
			key, w := make([]uint32, n), make([]uint64, n)
			base := rng.Uint32()
			var total uint64
			for i := range key {
				switch spread {
				case 0:
					key[i] = base
				case 1:
					key[i] = base&^0xfff | rng.Uint32()&0x3ff
				default:
					key[i] = rng.Uint32()
				}
				if rng.IntN(5) > 0 {
					w[i] = rng.Uint64N(1 << 40)
				}
				total += w[i]
			}
			order := make([]int, n)
			for i := range order {
				order[i] = i
			}
			slices.SortFunc(order, func(i, j int) int { return cmp.Compare(rank(key[j], j), rank(key[i], i)) })
			sp := &sampler{list: make([]int32, n)}
			for _, byWeight := range []bool{false, true} {
				sum := uint64(n)
				if byWeight {
					sum = total
				}
				if sum == 0 {
					continue
				}
				for _, thr := range []uint64{1, sum, 1 + rng.Uint64N(sum), 1 + rng.Uint64N(sum)} {
					// The reference: the elements with a measure below
					// thr before them.
					var before uint64
					last := order[0]
					for _, i := range order {
						if before >= thr {
							break
						}
						last = i
						if byWeight {
							before += w[i]
						} else {
							before++
						}
					}
					ck, ci, kept := sp.cut(key, w, byWeight, thr)
					if ck != key[last] || ci != last || kept != before {
						t.Fatalf("n %d spread %d byWeight %v thr %d: cut (%#x, %d, %d), want (%#x, %d, %d)", n, spread, byWeight, thr, ck, ci, kept, key[last], last, before)
					}
				}
			}
		}
	}
}
