package engine

import (
	"fmt"

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

func cpuGatherCASSupports(args any) error {
	if _, ok := args.(*GatherCASArgs); !ok {
		return fmt.Errorf("arguments are %T, not *GatherCASArgs", args)
	}
	return nil
}

func init() {
	Register(Kernel{
		Name: "cpu.mgather_cas.atomic", Op: OpGatherCAS, Arch: Arch{ISA: ISACPU}, Preference: 100,
		Doc:      "parallel preflight, atomic CAS per lane on all threads (8/16-bit via the containing word), staged publication",
		Supports: cpuGatherCASSupports,
		Launch: CPUKernel(func(l *Launch) error {
			return fallback.GatherCASFast(HostGatherCASArgs(l.Args.(*GatherCASArgs), l.Threads))
		}),
	})
	Register(Kernel{
		Name: "cpu.mgather_cas.reference", Op: OpGatherCAS, Arch: Arch{ISA: ISACPU}, Preference: 0,
		Doc:      "sequential reference in row-major lane order (the oracle; not atomic against other streams)",
		Supports: cpuGatherCASSupports,
		Launch: CPUKernel(func(l *Launch) error {
			return fallback.GatherCASRef(HostGatherCASArgs(l.Args.(*GatherCASArgs), l.Threads))
		}),
	})
}
