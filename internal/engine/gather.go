package engine

import (
	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/tile"
)

// The scatter–gather ops.
var (
	OpGather    = Op[GatherArgs]{"mgather"}
	OpScatter   = Op[ScatterArgs]{"mscatter"}
	OpGatherCAS = Op[GatherCASArgs]{"mgather_cas"}
)

// IndexMode says what a gather or scatter index selects: a table row or a
// memory element.
type IndexMode = tile.IndexMode

// ScatterOp is a scatter's operation: store, add, max or min.
type ScatterOp = tile.ScatterOp

// Tile is a tile stored in a buffer: the buffer holds exactly the physical
// tile (Desc.Elements() elements of Desc.DType) in Desc's layout.
type Tile struct {
	Buf  *Buffer
	Desc tile.Tile
}

// DenseTile views a buffer as a tile whose valid region is all of it: a 2-D
// buffer [rows, cols] as rows × cols, a 1-D buffer of n elements as n × 1
// (a column), a scalar as 1 × 1.
func DenseTile(b *Buffer) Tile {
	if b == nil {
		return Tile{}
	}
	rows, cols := 1, 1
	switch s := b.shape; len(s) {
	case 0:
	case 1:
		rows = s[0]
	default:
		cols = s[len(s)-1]
		rows = b.n / cols
	}
	return Tile{Buf: b, Desc: tile.Dense(b.dtype, rows, cols)}
}

// hostTile gives a tile's descriptor and host bytes to the fallback.
func hostTile(t Tile) fallback.TileData {
	return fallback.TileData{Tile: t.Desc, Data: t.Buf.Host()}
}

// GatherArgs is a validated gather (see fallback.GatherArgs for the
// semantics): tile descriptors resolved, element types and shapes checked.
// Mem is the table or flat memory, MemRows its rows (row mode) or elements
// (element mode). Index values are checked by the kernel's preflight.
type GatherArgs struct {
	Mode    IndexMode
	Mem     *Buffer
	MemRows int
	Idx     Tile
	Dst     Tile
	OOB     tile.OOB
}

// HostGatherArgs converts a CPU-backend call into the fallback's form.
func HostGatherArgs(a *GatherArgs, threads int) *fallback.GatherArgs {
	return hostGatherInto(new(hostCall[fallback.GatherArgs]), a, threads)
}

// hostGatherInto is HostGatherArgs into c.
func hostGatherInto(c *hostCall[fallback.GatherArgs], a *GatherArgs, threads int) *fallback.GatherArgs {
	c.h = fallback.GatherArgs{Mode: a.Mode, Mem: a.Mem.Host(), MemRows: a.MemRows,
		Idx: hostTile(a.Idx), Dst: hostTile(a.Dst), OOB: a.OOB, Threads: threads}
	return &c.h
}

func init() {
	RegisterKernel(OpGather, TypedKernel[GatherArgs]{
		Name: "cpu.mgather.fast", Arch: Arch{ISA: ISACPU}, Preference: 100,
		Doc: "parallel preflight, then rows copied by all threads straight into the destination",
		Launch: CPUKernel(func(l *Launch, a *GatherArgs) error {
			return withHost(&hostGathers, a, l.Threads, hostGatherInto, fallback.GatherFast)
		}),
	})
	RegisterKernel(OpGather, TypedKernel[GatherArgs]{
		Name: "cpu.mgather.reference", Arch: Arch{ISA: ISACPU}, Preference: 0,
		Doc: "sequential reference (the oracle); force it with TCRT_KERNEL=cpu.mgather.reference",
		Launch: CPUKernel(func(l *Launch, a *GatherArgs) error {
			return fallback.GatherRef(HostGatherArgs(a, l.Threads))
		}),
	})
}
