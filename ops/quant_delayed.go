package ops

import (
	"context"
	"math"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// AmaxReduction is how delayed scaling turns its amax history into one
// amax.
type AmaxReduction uint8

const (
	// AmaxMax takes the largest amax in the history window (Transformer
	// Engine's "max").
	AmaxMax AmaxReduction = iota
	// AmaxMostRecent takes the latest amax ("most_recent").
	AmaxMostRecent
)

// DelayedScaling is the delayed per-tensor scaling recipe: step k quantises
// with a scale computed from the amaxes of earlier steps, then records its
// own amax (Quantize's Amax output) with Update, which yields the scale for
// step k+1:
//
//	scale = (fmax / reduce(history)) / 2^Margin
//
// clamped into [tile.MinScale, tile.MaxScale] (fallback.ScaleFromAmax), so
// that the scale and ScaleInv are both normal and finite whatever the amax
// (1e-45 gives 2^126). If the reduced amax is 0, NaN or Inf the previous
// scale is kept (a NaN
// stays in the history, and so blocks updates under AmaxMax, until it ages
// out). The first scale is 1. A DelayedScaling is not safe for concurrent
// use.
type DelayedScaling struct {
	format    tile.DType
	reduction AmaxReduction
	margin    int
	hist      []float32 // ring buffer
	n, next   int
	scale     float32
}

// NewDelayedScaling returns a recipe for format (E4M3 or E5M2) with an amax
// history of historyLen (≥ 1) steps.
func NewDelayedScaling(format tile.DType, historyLen int, reduction AmaxReduction, margin int) (*DelayedScaling, error) {
	const op = "delayed scaling"
	if !tile.IsFloat8(format) {
		return nil, tile.Errorf(ErrDType, op, "format", "%v is not a float8 format", format)
	}
	if historyLen < 1 {
		return nil, tile.Errorf(ErrArgument, op, "historyLen", "history length %d; want at least 1", historyLen)
	}
	if reduction > AmaxMostRecent {
		return nil, tile.Errorf(ErrArgument, op, "reduction", "unknown amax reduction %d", reduction)
	}
	if margin < 0 || margin > 64 {
		return nil, tile.Errorf(ErrArgument, op, "margin", "margin %d outside [0, 64]", margin)
	}
	if err := engine.CheckHostAlloc(op, "historyLen", historyLen, 4); err != nil {
		return nil, err
	}
	return &DelayedScaling{format: format, reduction: reduction, margin: margin, hist: make([]float32, historyLen), scale: 1}, nil
}

// Scale is the scale for the next quantisation (QuantizeOptions.Scale with
// ScaleGiven).
// A nil recipe returns zero values.
func (d *DelayedScaling) Scale() float32 {
	if d == nil {
		return 0
	}
	return d.scale
}

// ScaleInv is 1/Scale, the inverse scale of the next quantisation.
func (d *DelayedScaling) ScaleInv() float32 {
	if d == nil || d.scale == 0 {
		return 0
	}
	return 1 / d.scale
}

// History returns the recorded amaxes, most recent first.
func (d *DelayedScaling) History() []float32 {
	if d == nil || len(d.hist) == 0 {
		return nil
	}
	out := make([]float32, d.n)
	for i := range out {
		out[i] = d.hist[(d.next-1-i+len(d.hist))%len(d.hist)]
	}
	return out
}

// Update records the amax of the step just quantised and returns the scale
// for the next one (0 on a nil recipe or one not made by
// NewDelayedScaling).
func (d *DelayedScaling) Update(amax float32) float32 {
	if d == nil || len(d.hist) == 0 {
		return 0
	}
	d.hist[d.next] = float32(math.Abs(float64(amax)))
	d.next = (d.next + 1) % len(d.hist)
	d.n = min(d.n+1, len(d.hist))
	var r float32
	if d.reduction == AmaxMostRecent {
		r = d.hist[(d.next-1+len(d.hist))%len(d.hist)]
	} else {
		for _, v := range d.History() {
			if v != v {
				r = v
				break
			}
			r = max(r, v)
		}
	}
	if r > 0 && r <= math.MaxFloat32 {
		d.scale = fallback.ScaleFromAmax(r, tile.Float8Max(d.format), d.margin, false)
	}
	return d.scale
}

// UpdateFrom reads the amax from a one-element f32 buffer (Quantize's Amax
// output; this synchronises with the runtime's streams) and calls Update.
func (d *DelayedScaling) UpdateFrom(ctx context.Context, amax *runtime.Buffer) (float32, error) {
	if d == nil || len(d.hist) == 0 {
		return 0, tile.Errorf(ErrArgument, "delayed scaling", "recipe", "recipe is nil or was not made by NewDelayedScaling")
	}
	if err := checkBuf(amax, nil, "delayed scaling", "amax"); err != nil {
		return d.scale, err
	}
	if err := checkAmaxBuf("delayed scaling", amax); err != nil {
		return d.scale, err
	}
	v := make([]float32, 1)
	if err := amax.ReadFloat32(ctx, v); err != nil {
		return d.scale, err
	}
	return d.Update(v[0]), nil
}
