package ops_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// sampleMethods are the samplers of the benchmarks and tests.
var sampleMethods = []struct {
	name string
	opt  ops.SampleOptions
}{
	{"greedy", ops.SampleOptions{Temperature: 0, TopP: 1}},
	{"temperature", ops.SampleOptions{Temperature: 0.8, TopP: 1}},
	{"topk", ops.SampleOptions{Temperature: 1, TopK: 40, TopP: 1}},
	{"topp", ops.SampleOptions{Temperature: 1, TopP: 0.9}},
	{"minp", ops.SampleOptions{Temperature: 1.3, TopP: 1, MinP: 0.05}},
	{"topk_topp", ops.SampleOptions{Temperature: 0.7, TopK: 50, TopP: 0.8}},
	{"topk_topp_minp", ops.SampleOptions{Temperature: 1, TopK: 200, TopP: 0.95, MinP: 0.01}},
	{"topk1", ops.SampleOptions{Temperature: 1, TopK: 1, TopP: 1}},
	{"topp_tiny", ops.SampleOptions{Temperature: 2, TopP: 1e-6}},
}

// logitRow fills one row in one of several styles: normal, few distinct
// values (ties), NaN and −Inf sprinkled, all −Inf, a +Inf, all equal.
func logitRow(rng *rand.Rand, style int, v []float32) {
	for i := range v {
		switch style {
		case 1:
			v[i] = float32(rng.IntN(4)) // many ties
		case 2:
			v[i] = float32(rng.NormFloat64() * 3)
			switch rng.IntN(5) {
			case 0:
				v[i] = float32(math.NaN())
			case 1:
				v[i] = float32(math.Inf(-1))
			}
		case 3:
			v[i] = float32(math.Inf(-1))
		case 4:
			v[i] = float32(rng.NormFloat64())
			if i == len(v)/2 {
				v[i] = float32(math.Inf(1))
			}
		case 5:
			v[i] = 1.5
		default:
			v[i] = float32(rng.NormFloat64() * 4)
		}
	}
}

func sampleOnce(t testing.TB, rt *runtime.Runtime, d tile.DType, logits []float32, rows, vocab int, opt ops.SampleOptions) []int32 {
	t.Helper()
	lg := vecBuf(t, rt, d, logits)
	out, err := rt.Alloc(tile.S32, max(1, rows))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := runtime.WriteRaw(context.Background(), out, make([]int32, max(1, rows))); err != nil {
		t.Fatal(err)
	}
	if err := ops.Sample(context.Background(), rt, out, ops.Matrix{Buf: lg, Rows: rows, Cols: vocab}, &opt); err != nil {
		t.Fatal(err)
	}
	got := make([]int32, max(1, rows))
	if err := runtime.ReadRaw(context.Background(), out, got); err != nil {
		t.Fatal(err)
	}
	return got[:rows]
}

// TestSampleMatchesSortedReference: the fast sampler's token ids equal the
// sorting reference's bit for bit, for every method, element type, ties,
// NaN and infinite logits, and vocabularies of odd sizes.
func TestSampleMatchesSortedReference(t *testing.T) {
	p := openLight(t)
	vocabs := []int{1, 7, 129, 1000, 4099}
	if !testing.Short() {
		vocabs = append(vocabs, 128256)
	}
	for _, m := range sampleMethods {
		for _, d := range lightTypes {
			for _, vocab := range vocabs {
				const rows = 6
				rng := rand.New(rand.NewPCG(uint64(vocab), uint64(len(m.name))))
				logits := make([]float32, rows*vocab)
				for r := range rows {
					logitRow(rng, r, logits[r*vocab:(r+1)*vocab])
				}
				for _, seed := range []uint64{1, 0xdeadbeef} {
					opt := m.opt
					opt.Seed, opt.Offset = seed, seed*3
					name := fmt.Sprintf("%s/%v/%d/seed%d", m.name, d, vocab, seed)
					got := sampleOnce(t, p.fast, d, logits, rows, vocab, opt)
					want := sampleOnce(t, p.ref, d, logits, rows, vocab, opt)
					for r := range want {
						if got[r] != want[r] {
							t.Errorf("%s: row %d (style %d): fast drew %d, the sorted reference %d", name, r, r, got[r], want[r])
						}
						if want[r] < 0 || int(want[r]) >= vocab {
							t.Errorf("%s: row %d: token %d outside the vocabulary", name, r, want[r])
						}
					}
				}
			}
		}
	}
}

// TestSampleRules checks the rules themselves on small rows: greedy takes
// the lowest index of the maximum and skips NaN, top-k 2 draws only the
// two best, a tiny top-p only the best, and plain temperature sampling
// matches the softmax frequencies.
func TestSampleRules(t *testing.T) {
	rt := openLight(t).fast
	nan := float32(math.NaN())
	if got := sampleOnce(t, rt, tile.F32, []float32{1, nan, 3, 3, -1}, 1, 5, ops.SampleOptions{TopP: 1}); got[0] != 2 {
		t.Errorf("greedy drew %d, want 2 (the lowest index of the maximum, NaN skipped)", got[0])
	}
	if got := sampleOnce(t, rt, tile.F32, []float32{nan, float32(math.Inf(-1)), nan}, 1, 3, ops.SampleOptions{Temperature: 1, TopP: 1}); got[0] != 0 {
		t.Errorf("a row of NaN and −Inf drew %d, want 0", got[0])
	}
	// Many rows of the same logits: row r draws with counter row r.
	const rows, vocab = 20000, 5
	base := []float32{0.5, 2, -1, 1.5, 0}
	logits := make([]float32, rows*vocab)
	for r := range rows {
		copy(logits[r*vocab:], base)
	}
	count := func(opt ops.SampleOptions) [vocab]int {
		var c [vocab]int
		for _, tok := range sampleOnce(t, rt, tile.F32, logits, rows, vocab, opt) {
			c[tok]++
		}
		return c
	}
	c := count(ops.SampleOptions{Temperature: 1, TopP: 1, Seed: 9})
	var z float64
	for _, v := range base {
		z += math.Exp(float64(v))
	}
	for i, v := range base {
		p := math.Exp(float64(v)) / z
		sd := math.Sqrt(rows * p * (1 - p))
		if math.Abs(float64(c[i])-rows*p) > 5*sd {
			t.Errorf("token %d drawn %d times in %d; softmax expects %.0f ± %.0f", i, c[i], rows, rows*p, sd)
		}
	}
	if c := count(ops.SampleOptions{Temperature: 1, TopK: 2, TopP: 1, Seed: 3}); c[0]+c[2]+c[4] != 0 || c[1] == 0 || c[3] == 0 {
		t.Errorf("top-2 counts %v: want only tokens 1 and 3", c)
	}
	if c := count(ops.SampleOptions{Temperature: 1, TopP: 1e-3, Seed: 4}); c[1] != rows {
		t.Errorf("top-p 1e-3 counts %v: want only token 1", c)
	}
	// min-p 0.5 keeps tokens with p ≥ p_max/2: e^1.5/e^2 = 0.61 keeps 3.
	if c := count(ops.SampleOptions{Temperature: 1, TopP: 1, MinP: 0.5, Seed: 5}); c[0]+c[2]+c[4] != 0 || c[3] == 0 {
		t.Errorf("min-p 0.5 counts %v: want only tokens 1 and 3", c)
	}
	// Determinism: the same seed and offset give the same tokens; another
	// offset gives other draws.
	o := ops.SampleOptions{Temperature: 1, TopP: 1, Seed: 11, Offset: 1}
	a, b := sampleOnce(t, rt, tile.F32, logits[:100*vocab], 100, vocab, o), sampleOnce(t, rt, tile.F32, logits[:100*vocab], 100, vocab, o)
	o.Offset = 2
	c2 := sampleOnce(t, rt, tile.F32, logits[:100*vocab], 100, vocab, o)
	same := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("row %d: %d then %d with the same seed", i, a[i], b[i])
		}
		if a[i] == c2[i] {
			same++
		}
	}
	if same == len(a) {
		t.Errorf("offsets 1 and 2 drew the same %d tokens", len(a))
	}
}
