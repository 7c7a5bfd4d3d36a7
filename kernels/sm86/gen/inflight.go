package gen

import (
	"fmt"
	"strings"

	"github.com/tcrt-go/tcrt/kernels/sm86"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/sched"
)

// Bytes in flight (Little's law). To keep DRAM busy a device needs
// bandwidth × latency bytes requested and not yet returned; for an A10
// (600 GB/s, about 600 ns from request to data, 72 SMs) that is 360 KB,
// InFlightTarget bytes per SM. A streaming kernel's threads each keep
// StreamBytes / RoundTrips bytes in flight on average (its dependent load
// levels run one after another), and an SM holds as many threads as its
// registers and thread slots allow (sm_86: 65,536 registers, allocated per
// warp in units of 256, at most 1,536 threads and 16 blocks).

// A10 figures of the estimate.
const (
	A10Bandwidth   = 600e9  // bytes per second
	A10Latency     = 600e-9 // seconds from request to data
	A10SMs         = 72
	A10Clock       = 1.695e9                            // boost clock, cycles per second
	InFlightTarget = A10Bandwidth * A10Latency / A10SMs // bytes per SM
)

// MemoryEstimate is one kernel's figures.
type MemoryEstimate struct {
	Kernel       string
	Registers    int     // per thread, as recorded in the cubin
	ThreadsPerSM int     // resident threads per SM (registers, slots, blocks of sm86.SGBlock)
	StreamBytes  int     // DRAM bytes a thread loads (cache-resident scales and the fault slot not counted)
	RoundTrips   int     // dependent load levels of a thread
	InFlight     float64 // ThreadsPerSM · StreamBytes / RoundTrips
	Period       float64 // cycle-model cycles of one warp's pass (sched.CycleModel, one warp alone)
	GlobalOps    int     // global-memory instructions of the pass
	IssueRate    float64 // GlobalOps / Period: memory instructions a cycle per warp
	// IssueNeed is the global-memory instructions a cycle an SM must
	// issue to stream its share of 600 GB/s through this kernel: GlobalOps
	// per warp pass for 32·StreamBytes bytes (sm_86 issues up to one per
	// sub-partition, four an SM).
	IssueNeed float64
}

// streamKernels are the memory-bound kernels the estimate covers: the
// bytes each thread streams from DRAM and its dependent load levels, by
// construction of the kernel (see each generator).
var streamKernels = func() map[string][2]int {
	m := map[string][2]int{}
	for _, b := range []int{1, 2, 4, 8, 16} {
		m[fmt.Sprintf("tcrt_sass_sg_gather_%d", b)] = [2]int{sm86.GatherLanesPerThread(b) * (4 + b), 2} // positions, then data
	}
	for _, n := range []string{"e4m3_f32", "e4m3_f16", "e4m3_bf16", "e5m2_f32", "e5m2_f16", "e5m2_bf16"} {
		m["tcrt_sass_dequant_"+n] = [2]int{sm86.DequantPerThread, 1} // the codes; the scales are cache hits
	}
	m["tcrt_sass_amax_f32"] = [2]int{4 * sm86.AmaxRun, 1}
	m["tcrt_sass_amax_bf16"] = [2]int{2 * sm86.AmaxRun, 1}
	m["tcrt_sass_amax_f16"] = [2]int{2 * sm86.AmaxRun, 1}
	m["tcrt_sass_amax_col_f32"] = [2]int{4 * sm86.AmaxRun, 1}
	m["tcrt_sass_amax_col_bf16"] = [2]int{2 * sm86.AmaxRun, 1}
	m["tcrt_sass_amax_col_f16"] = [2]int{2 * sm86.AmaxRun, 1}
	m["tcrt_sass_widen_f16"] = [2]int{2 * sm86.WidenPer, 1}
	m["tcrt_sass_widen_bf16"] = [2]int{2 * sm86.WidenPer, 1}
	return m
}()

// residentThreads is how many threads of blocks of block threads using
// regs registers each an sm_86 SM holds.
func residentThreads(regs, block int) int {
	perWarp := (regs*32 + 255) / 256 * 256
	warps := (block + 31) / 32
	blocks := min(16, 1536/block, 65536/(perWarp*warps))
	return blocks * block
}

// MemoryEstimates returns the figures of the streaming kernels of the
// sm_<arch> module, by kernel name.
func MemoryEstimates(arch int) ([]MemoryEstimate, error) {
	progs, err := Programs(arch)
	if err != nil {
		return nil, err
	}
	var out []MemoryEstimate
	for _, k := range sgKernels {
		s, ok := streamKernels[k.name]
		if !ok {
			continue
		}
		p := progs[k.name]
		last := 0
		for i, in := range p {
			if in.Op == "EXIT" {
				last = i
			}
		}
		c, err := sched.CycleModel(p[:last+1], sched.CycleOptions{Iterations: 4})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.name, err)
		}
		e := MemoryEstimate{Kernel: k.name, Registers: registers(p), StreamBytes: s[0], RoundTrips: s[1],
			Period: c.Period, GlobalOps: c.MixByClass[sass.ClassGlobal]}
		e.ThreadsPerSM = residentThreads(e.Registers, sm86.SGBlock)
		e.InFlight = float64(e.ThreadsPerSM*e.StreamBytes) / float64(e.RoundTrips)
		e.IssueRate = float64(e.GlobalOps) / e.Period
		e.IssueNeed = float64(e.GlobalOps) * A10Bandwidth / A10SMs / A10Clock / float64(32*e.StreamBytes)
		out = append(out, e)
	}
	return out, nil
}

// MemoryTable formats estimates as a Markdown table.
func MemoryTable(es []MemoryEstimate) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| kernel | registers | threads/SM | DRAM bytes/thread | load levels | bytes in flight/SM (target %.0f) | cycles/pass | global ops | ops/cycle/warp | ops/cycle/SM at 600 GB/s |\n", InFlightTarget)
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, e := range es {
		fmt.Fprintf(&b, "| `%s` | %d | %d | %d | %d | %.0f | %.0f | %d | %.3f | %.2f |\n", e.Kernel, e.Registers, e.ThreadsPerSM,
			e.StreamBytes, e.RoundTrips, e.InFlight, e.Period, e.GlobalOps, e.IssueRate, e.IssueNeed)
	}
	return b.String()
}
