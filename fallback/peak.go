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
	Name string // "f32" (VFMADD231PS), "bf16dot" (VDPBF16PS)
	// Features are what the loop needs; ISA prints them.
	Features []cpuid.FeatureID
	FLOPs    int // per trip
	run      func(n int)
}

// peakLoops holds the compiled-in loops (none in the purego build).
var peakLoops []PeakLoop

// PeakLoops lists the loops this CPU can run (the CPU feature mask
// applies): of the loops sharing a name, the first it supports, widest ISA
// first (so "f32" is the AVX-512 loop where there is AVX-512, else the
// AVX2+FMA one).
func PeakLoops() []PeakLoop {
	var out []PeakLoop
	seen := map[string]bool{}
	for _, l := range peakLoops {
		if !seen[l.Name] && cpufeat.Supports(l.Features...) {
			seen[l.Name] = true
			out = append(out, l)
		}
	}
	return out
}

// ISA names the instruction set the loop runs: its features, joined.
func (l PeakLoop) ISA() string {
	s := ""
	for i, f := range l.Features {
		if i > 0 {
			s += "+"
		}
		s += f.String()
	}
	return s
}

// Run runs n trips of the loop.
func (l PeakLoop) Run(n int) { l.run(n) }
