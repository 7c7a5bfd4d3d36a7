package sched

import (
	"fmt"

	"github.com/tcrt-go/tcrt/sass"
)

// CycleOptions configures CycleModel.
type CycleOptions struct {
	// Latencies gives the variable latencies at which scoreboards are
	// released; nil means DefaultLatencies().
	Latencies *LatencyTable
	// Iterations is how many iterations are simulated; the last one is
	// reported. 0 means 16.
	Iterations int
	// TensorInterval is the cycles the tensor pipe of a sub-partition
	// is busy per HMMA.16816 (one every 16 cycles at full rate on GA10x,
	// sm86.md); an HMMA.1688 takes half. 0 means 16; a negative value
	// turns the structural limit off (issue then follows the control
	// words alone).
	TensorInterval int
}

// Cycles is the steady state CycleModel finds for a loop body.
type Cycles struct {
	// Issue is the issue cycle of each instruction of the last simulated
	// iteration, from that iteration's first issue.
	Issue []int
	// Waited is, per instruction, the cycles it issued later than its
	// predecessor's stall allowed: scoreboard waits and tensor-pipe
	// throttling.
	Waited []int
	// Period is the steady-state cycles per iteration: the distance
	// between the first issues of the last two iterations, averaged over
	// the second half of the simulated iterations.
	Period float64
	// HMMA counts the HMMA.16816-equivalents per iteration (an
	// HMMA.1688 counts half).
	HMMA float64
	// TensorShare is the share of the sub-partition's tensor-pipe slots
	// that issue an HMMA: HMMA*16/Period, at most 1.
	TensorShare float64
	// MixByClass and MixByOp count the body's instructions.
	MixByClass map[sass.Class]int
	MixByOp    map[sass.Op]int
}

// String summarises the figure: "period 96.0 cycles, 4 HMMA, tensor share 66.7%".
func (c *Cycles) String() string {
	return fmt.Sprintf("period %.1f cycles/iteration, %g HMMA.16816, tensor-pipe share %.1f%%",
		c.Period, c.HMMA, 100*c.TensorShare)
}

// CycleModel returns the issue cycle of each instruction of a loop body in
// steady state, and the share of tensor-pipe slots that issue an HMMA. The
// body is the instructions of one iteration, its last (normally the
// backward BRA) followed by its first.
//
// The model's assumptions:
//   - one warp on the sub-partition: no other warp fills the cycles this
//     one stalls or waits, and yield flags cost nothing;
//   - an instruction issues Stall cycles after the one before it (a stall
//     of 0 counts 1: at most one issue per cycle), later if it waits;
//   - a wait on a scoreboard ends when every instruction that set it has
//     released it, the Latencies' variable latency after its issue (write
//     scoreboards at Write, read scoreboards at Read); DEPBAR.LE SBn, k
//     waits for all but the k newest;
//   - fixed-latency dependences are covered by the stall counts (check
//     them with Check); the cycle model adds nothing for them;
//   - no shared-memory bank conflicts, cache misses beyond the table's
//     latency, register-bank conflicts or instruction-cache misses; the
//     taken branch costs its own stall count only;
//   - the tensor pipe accepts one HMMA.16816 every TensorInterval cycles;
//     an HMMA that finds it busy waits.
func CycleModel(body sass.Program, opts CycleOptions) (*Cycles, error) {
	if len(body) == 0 {
		return nil, fmt.Errorf("%w: empty loop body", sass.ErrInvalid)
	}
	lat := opts.Latencies
	if lat == nil {
		lat = DefaultLatencies()
	}
	iters := opts.Iterations
	if iters <= 0 {
		iters = 16
	}
	if iters < 2 {
		iters = 2
	}
	interval := opts.TensorInterval
	if interval == 0 {
		interval = 16
	}
	res := &Cycles{MixByClass: map[sass.Class]int{}, MixByOp: map[sass.Op]int{}}
	classes := make([]sass.Class, len(body))
	weight := make([]float64, len(body))
	for k, i := range body {
		d, err := sass.DepsOf(i)
		if err != nil {
			return nil, fmt.Errorf("instruction %d: %w", k, err)
		}
		classes[k] = d.Class
		res.MixByClass[d.Class]++
		res.MixByOp[i.Op]++
		if d.Class == sass.ClassHMMA {
			weight[k] = 1
			if i.HasMod("1688") {
				weight[k] = 0.5
			}
			res.HMMA += weight[k]
		}
	}
	var (
		pending    [7][]int // release cycles of each scoreboard's setters, in issue order
		next       = 0      // earliest issue of the next instruction
		tensorFree = 0
		starts     = make([]int, 0, iters)
		issue      = make([]int, len(body))
		waited     = make([]int, len(body))
	)
	for it := 0; it < iters; it++ {
		for k, i := range body {
			t := next
			for n := 0; n < 6; n++ {
				if i.Ctrl.Wait>>n&1 == 0 {
					continue
				}
				for _, r := range pending[n] {
					t = max(t, r)
				}
				pending[n] = pending[n][:0]
			}
			if i.Op == "DEPBAR" && len(i.Args) == 3 && i.Args[2].Kind == sass.KSBSet {
				// DEPBAR.LE SBn, k, {set}: the set's scoreboards are
				// waited for as a wait mask waits
				for n := 0; n < 6; n++ {
					if i.Args[2].Imm>>n&1 != 0 {
						for _, r := range pending[n] {
							t = max(t, r)
						}
						pending[n] = pending[n][:0]
					}
				}
			}
			if i.Op == "DEPBAR" && len(i.Args) >= 2 && i.Args[0].Kind == sass.KSB && int(i.Args[0].N) < len(pending) {
				n, keep := int(i.Args[0].N), int(i.Args[1].Imm)
				if cut := len(pending[n]) - keep; cut > 0 {
					for _, r := range pending[n][:cut] {
						t = max(t, r)
					}
					pending[n] = append([]int(nil), pending[n][cut:]...)
				}
			}
			if weight[k] > 0 && interval > 0 {
				t = max(t, tensorFree)
				tensorFree = t + int(float64(interval)*weight[k])
			}
			if k == 0 {
				starts = append(starts, t)
			}
			issue[k], waited[k] = t, t-next
			if classes[k].Variable() {
				w, r := lat.Release(classes[k])
				if s := i.Ctrl.WriteSB.Index(); s >= 0 {
					pending[s] = append(pending[s], t+w)
				}
				if s := i.Ctrl.ReadSB.Index(); s >= 0 {
					pending[s] = append(pending[s], t+r)
				}
			}
			next = t + max(1, int(i.Ctrl.Stall))
		}
	}
	last := starts[len(starts)-1]
	res.Issue = make([]int, len(body))
	for k := range issue {
		res.Issue[k] = issue[k] - last
	}
	res.Waited = waited
	half := len(starts) / 2
	res.Period = float64(last-starts[half]) / float64(len(starts)-1-half)
	if res.Period > 0 {
		res.TensorShare = min(1, res.HMMA*16/res.Period)
	}
	return res, nil
}

// LoopBody returns the instructions of p's last loop, from the target of
// its backward BRA through the BRA, and the index of its first
// instruction: the body CycleModel takes. It fails when p has no backward
// branch.
func LoopBody(p sass.Program) (sass.Program, int, error) {
	for k := len(p) - 1; k >= 0; k-- {
		// an unguarded BRA to itself is ptxas's end-of-code filler
		if t, ok := cfgTarget(p, k); ok && p[k].Op == "BRA" && t <= k && !(t == k && !p[k].Guard.Set) {
			return p[t : k+1], t, nil
		}
	}
	return nil, 0, fmt.Errorf("%w: no backward branch", sass.ErrInvalid)
}
