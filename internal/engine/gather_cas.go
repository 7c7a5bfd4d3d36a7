package engine

import (
	"github.com/tcrt-go/tcrt/fallback"
)

// GatherCASArgs is a validated gather-compare-and-swap (see
// fallback.GatherCASArgs for the semantics). The lane mask has already been
// applied (an all-zero mask never reaches the runtime). Displacements are
// checked by the kernel's preflight.
type GatherCASArgs struct {
	Mem                        *Buffer
	Base                       int
	Idx, Expected, Replacement Tile
	Dst                        Tile
}

// HostGatherCASArgs converts a CPU-backend call into the fallback's form.
func HostGatherCASArgs(a *GatherCASArgs, threads int) *fallback.GatherCASArgs {
	return &fallback.GatherCASArgs{Mem: a.Mem.Host(), Base: a.Base, Idx: hostTile(a.Idx),
		Expected: hostTile(a.Expected), Replacement: hostTile(a.Replacement), Dst: hostTile(a.Dst), Threads: threads}
}

func init() {
	RegisterKernel(OpGatherCAS, TypedKernel[GatherCASArgs]{
		Name: "cpu.mgather_cas.atomic", Arch: Arch{ISA: ISACPU}, Preference: 100,
		Doc: "parallel preflight, atomic CAS per lane on all threads (8/16-bit via the containing word), staged publication",
		Launch: CPUKernel(func(l *Launch, a *GatherCASArgs) error {
			return fallback.GatherCASFast(HostGatherCASArgs(a, l.Threads))
		}),
	})
	RegisterKernel(OpGatherCAS, TypedKernel[GatherCASArgs]{
		Name: "cpu.mgather_cas.reference", Arch: Arch{ISA: ISACPU}, Preference: 0,
		Doc: "sequential reference in row-major lane order (the oracle; not atomic against other streams)",
		Launch: CPUKernel(func(l *Launch, a *GatherCASArgs) error {
			return fallback.GatherCASRef(HostGatherCASArgs(a, l.Threads))
		}),
	})
}
