package fallback

import (
	"github.com/klauspost/cpuid/v2"
	"github.com/tcrt-go/tcrt/internal/cpufeat"
)

// PeakLoop is a loop of register-resident multiply-adds with no memory
// traffic: what one core can compute at most with the instructions of the
// matmul kernels. BenchmarkPeakFMA runs one per core to state the matmul
// rates as fractions of the machine's peak, measured in the same run.
type PeakLoop struct {
	Name     string // "f32" (VFMADD231PS), "bf16dot" (VDPBF16PS)
	Features []cpuid.FeatureID
	FLOPs    int // per trip
	run      func(n int)
}

// peakLoops holds the compiled-in loops (none in the purego build).
var peakLoops []PeakLoop

// PeakLoops lists the loops this CPU can run (the CPU feature mask
// applies).
func PeakLoops() []PeakLoop {
	var out []PeakLoop
	for _, l := range peakLoops {
		if cpufeat.Supports(l.Features...) {
			out = append(out, l)
		}
	}
	return out
}

// Run runs n trips of the loop.
func (l PeakLoop) Run(n int) { l.run(n) }
