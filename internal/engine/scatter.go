package engine

import (
	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/tile"
)

// ScatterArgs is a validated scatter (see fallback.ScatterArgs for the
// semantics). Index values are checked by the kernel's preflight.
type ScatterArgs struct {
	Mode          IndexMode
	Op            ScatterOp
	Deterministic bool
	Mem           *Buffer
	MemRows       int
	Idx           Tile
	Src           Tile
	OOB           tile.OOB
}

// HostScatterArgs converts a CPU-backend call into the fallback's form.
func HostScatterArgs(a *ScatterArgs, threads int) *fallback.ScatterArgs {
	return &fallback.ScatterArgs{Mode: a.Mode, Op: a.Op, Deterministic: a.Deterministic,
		Mem: a.Mem.Host(), MemRows: a.MemRows, Idx: hostTile(a.Idx), Src: hostTile(a.Src), OOB: a.OOB, Threads: threads}
}

func init() {
	RegisterKernel(OpScatter, TypedKernel[ScatterArgs]{
		Name: "cpu.mscatter.atomic", Arch: Arch{ISA: ISACPU}, Preference: 100,
		Doc: "parallel preflight, then on all threads: integer reductions as one hardware atomic per element, the rest under 4 KiB-page stripe locks (rows a page segment at a time with vector adds, elements grouped by lock)",
		Launch: CPUKernel(func(l *Launch, a *ScatterArgs) error {
			return fallback.ScatterFast(HostScatterArgs(a, l.Threads))
		}),
	})
	RegisterKernel(OpScatter, TypedKernel[ScatterArgs]{
		Name: "cpu.mscatter.reference", Arch: Arch{ISA: ISACPU}, Preference: 0,
		Doc: "sequential reference in lane order (the oracle; not atomic against other streams)",
		Launch: CPUKernel(func(l *Launch, a *ScatterArgs) error {
			return fallback.ScatterRef(HostScatterArgs(a, l.Threads))
		}),
	})
}
