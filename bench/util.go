package bench

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// RandomBuffer allocates a buffer of element type d and shape, filled with
// uniform values in [-scale, scale), and returns the values as stored.
func RandomBuffer(ctx context.Context, rt *runtime.Runtime, rng *rand.Rand, d tile.DType, scale float32, shape ...int) (*runtime.Buffer, []float32, error) {
	b, err := rt.Alloc(d, shape...)
	if err != nil {
		return nil, nil, err
	}
	v := make([]float32, b.Len())
	for i := range v {
		v[i] = (rng.Float32()*2 - 1) * scale
	}
	if err := b.WriteFloat32(ctx, v); err != nil {
		b.Close()
		return nil, nil, err
	}
	if err := b.ReadFloat32(ctx, v); err != nil {
		b.Close()
		return nil, nil, err
	}
	return b, v, nil
}

// MaxRelErr is max |got−want| / max(|want|, floor) over the elements; NaN
// anywhere gives +Inf.
func MaxRelErr(got, want []float32, floor float64) float64 {
	worst := 0.0
	for i := range want {
		g, w := float64(got[i]), float64(want[i])
		e := math.Abs(g-w) / math.Max(math.Abs(w), floor)
		if math.IsNaN(e) {
			return math.Inf(1)
		}
		worst = math.Max(worst, e)
	}
	return worst
}

// Median times fn: one warm-up run, then runs until at least minRuns runs and
// minTime have passed (at most maxRuns), returning the median duration.
func Median(fn func() error, minRuns int, minTime time.Duration) (time.Duration, error) {
	if err := fn(); err != nil {
		return 0, err
	}
	var ds []time.Duration
	start := time.Now()
	for len(ds) < minRuns || (time.Since(start) < minTime && len(ds) < 1000) {
		t0 := time.Now()
		if err := fn(); err != nil {
			return 0, err
		}
		ds = append(ds, time.Since(t0))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], nil
}

// MedianOn is Median for a call on rt; on a simulated device it also
// counts, over one more run, what the device executed (the simulator has
// no timing, so its throughput means nothing).
func MedianOn(rt *runtime.Runtime, fn func() error, minRuns int, minTime time.Duration) (time.Duration, *SimCount, error) {
	if _, ok := rt.DeviceCounters(); ok {
		minRuns, minTime = 1, 0 // every run is a full simulation
	}
	med, err := Median(fn, minRuns, minTime)
	if err != nil {
		return 0, nil, err
	}
	c0, ok := rt.DeviceCounters()
	if !ok {
		return med, nil, nil
	}
	if err := fn(); err != nil {
		return 0, nil, err
	}
	c1, _ := rt.DeviceCounters()
	return med, &SimCount{Launches: c1.Launches - c0.Launches, WarpInstructions: c1.WarpInstructions - c0.WarpInstructions,
		ThreadInstructions: c1.ThreadInstructions - c0.ThreadInstructions}, nil
}

// SimCount is what one run executed on a simulated device.
type SimCount struct {
	Launches           int64 `json:"launches"`
	WarpInstructions   int64 `json:"warp_instructions"`
	ThreadInstructions int64 `json:"thread_instructions"`
}

// maxSetupDim bounds each extent of a benchmark problem: far past any
// benchmark, small enough that the products below stay in range.
const maxSetupDim = 1 << 40

// checkSetup is every New…Setup's first step: rt must be set and each of
// a problem's extents positive and at most 2^40, and the elements of its
// largest operand (the product of extents, each tensor ≤ that) must fit
// in a quarter of the host's memory (a setup stages float32 host copies
// of its inputs beside the buffers). Errors wrap tile.ErrArgument or
// tile.ErrShape and name the argument, before anything is allocated.
func checkSetup(op string, rt *runtime.Runtime, names string, dims ...int) error {
	if rt == nil {
		return tile.Errorf(tile.ErrArgument, op, "rt", "a runtime is required")
	}
	n := int64(1)
	for _, d := range dims {
		if d < 1 || d > maxSetupDim {
			return tile.Errorf(tile.ErrShape, op, names, "extents %v: each must be in [1, 2^40]", dims)
		}
		if n > math.MaxInt64/int64(d) {
			return tile.Errorf(tile.ErrShape, op, names, "extents %v: their product overflows", dims)
		}
		n *= int64(d)
	}
	if h := runtime.HostMemory(); h > 0 && n > h/16 {
		return tile.Errorf(tile.ErrShape, op, names, "extents %v: %d elements, past what this host can stage (%d bytes of memory)", dims, n, h)
	}
	return nil
}
