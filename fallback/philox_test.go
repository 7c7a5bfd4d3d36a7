package fallback

import (
	"math"
	goruntime "runtime"
	"sync"
	"testing"

	"github.com/tcrt-go/tcrt/internal/longtest"
)

// Known-answer vectors of Philox4x32-10 from Random123's kat_vectors
// (counter, key → output).
func TestPhilox4x32KnownAnswers(t *testing.T) {
	for _, v := range []struct {
		ctr  [4]uint32
		key  [2]uint32
		want [4]uint32
	}{
		{[4]uint32{0, 0, 0, 0}, [2]uint32{0, 0}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff}, [4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0}, [4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	} {
		if got := Philox4x32(v.ctr, v.key, 10); got != v.want {
			t.Errorf("Philox4x32-10(%08x, %08x) = %08x, want %08x", v.ctr, v.key, got, v.want)
		}
	}
}

// TestSampleUniformLayout pins how seed, offset and row map to the counter
// and key, so other backends can reproduce the draw.
func TestSampleUniformLayout(t *testing.T) {
	x := Philox4x32([4]uint32{0x03707344, 0x13198a2e, 7, 0}, [2]uint32{0xa4093822, 0x299f31d0}, 10)
	want := uint64(x[0]) | uint64(x[1])<<32
	if got := SampleUniform(0x299f31d0a4093822, 0x13198a2e03707344, 7); got != want {
		t.Errorf("SampleUniform = %#x, want %#x", got, want)
	}
}

// TestExpF32 bounds ExpF32 against math.Exp and checks its fixed points.
func TestExpF32(t *testing.T) {
	if ExpF32(0) != 1 {
		t.Fatalf("ExpF32(0) = %v", ExpF32(0))
	}
	if ExpF32(-100) != 0 || !math.IsInf(float64(ExpF32(100)), 1) || !math.IsNaN(float64(ExpF32(float32(math.NaN())))) {
		t.Fatal("ExpF32 limits")
	}
	worst := 0.0
	for x := float32(-87); x < 88; x += 0.00731 {
		want := math.Exp(float64(x))
		got := float64(ExpF32(x))
		ulp := math.Abs(float64(math.Nextafter32(float32(want), float32(math.Inf(1)))) - want)
		worst = max(worst, math.Abs(got-want)/ulp)
	}
	if worst > 2 {
		t.Errorf("ExpF32 is %.2f ulp from e^x at worst; the bound is 2", worst)
	}
}

// TestExpF32BoundBelowZero checks ExpF32's 2-ulp bound on the inputs the
// sampler's bounds rest on, every float32 in [−87.33654, 0] (scores minus
// their maximum; below, ExpF32 is 0): with TCRT_LONG_TESTS, every one of
// them (about 1.1·10^9), else every 4099th.
func TestExpF32BoundBelowZero(t *testing.T) {
	step := uint32(4099)
	if longtest.Enabled() {
		step = 1
	}
	lo := math.Float32bits(-87.33654)
	// Chunks of the range run on every core; each keeps its worst input.
	const chunks = 64
	type result struct {
		worst float64
		at    float32
	}
	res := make([]result, chunks)
	var wg sync.WaitGroup
	sem := make(chan struct{}, goruntime.GOMAXPROCS(0))
	span := (uint64(lo) - 0x80000000 + chunks) / chunks
	for c := range uint64(chunks) {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			first := 0x80000000 + c*span
			first += (uint64(step) - (first-0x80000000)%uint64(step)) % uint64(step) // on the step grid
			for b := first; b < min(0x80000000+(c+1)*span, uint64(lo)+1); b += uint64(step) {
				x := math.Float32frombits(uint32(b))
				want := math.Exp(float64(x))
				ulp := math.Abs(float64(math.Nextafter32(float32(want), float32(math.Inf(1)))) - want)
				if e := math.Abs(float64(ExpF32(x))-want) / ulp; e > res[c].worst {
					res[c] = result{e, x}
				}
			}
		})
	}
	wg.Wait()
	worst, at := 0.0, float32(0)
	for _, r := range res {
		if r.worst > worst {
			worst, at = r.worst, r.at
		}
	}
	if worst > 2 {
		t.Errorf("ExpF32(%v) is %.2f ulp from e^x; the bound is 2", at, worst)
	}
}
