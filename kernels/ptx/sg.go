package ptx

import (
	_ "embed"
	"github.com/tcrt-go/tcrt/runtime/backend"
	"math"
	"math/bits"
)

//go:embed sg.ptx
var sgPTX []byte

//go:embed cubin/sg.sm_86.cubin
var sgSM86 []byte

//go:embed cubin/sg.sm_89.cubin
var sgSM89 []byte

// SG is the scatter–gather module (sg.ptx): gathers, scatters, gather-CAS,
// the tile contract's preflight kernels and the pad fill.
//
// Every kernel walks a rows × units space with SGBlock threads a block:
// 1 << lg threads a row (SGLog2Threads), SGBlock >> lg rows a block, the
// grid from SGGrid. Strides are bytes: element (r, c) of a tile is at
// r·sr + c·sc. Index types are coded 0 s32, 1 u32, 2 s64, 3 u64
// (SGIndexType); OOB policies are tile.OOB's values.
//
// Preflight: the check kernels record the first faulting lane l (in
// row-major lane order) as ^l in a zeroed 8-byte slot with an atomic max; the
// effect kernels and the pad fill read the slot first and do nothing when
// it is non-zero, so a fault leaves memory and destination unchanged. A
// zero slot address means no preflight (policies that cannot fault). The
// host reads the slot after the effect kernel to report the fault.
//
//	tcrt_sg_check_index(slot, idx, itype u32, isr, isc, rows, cols, lg u32, n)
//	tcrt_sg_check_disp(slot, idx, itype u32, isr, isc, rows, cols, lg u32, base, limit, elog u32)
//	tcrt_sg_gather_rows(slot, dst, table, idx, itype u32, isr, oob u32, n, rows, units, lg u32, wlog u32, dpr, dpu, rowbytes)
//	tcrt_sg_gather_elems(slot, dst, mem, idx, itype u32, isr, isc, oob u32, n, rows, cols, lg u32, elog u32, dsr, dsc)
//	tcrt_sg_scatter(slot, mem, src, idx, itype u32, isr, isc, oob u32, n, rows, units, lg u32, wlog u32, ssr, ssu, rowbytes, code u32, mode u32)
//	tcrt_sg_gather_cas(slot, dst, mem, idx, itype u32, isr, isc, exp, esr, esc, rep, rsr, rsc, rows, cols, lg u32, elog u32, dsr, dsc, base)
//	tcrt_sg_fill_pad(slot, dst, prows, pcols, vrows, vcols, lg u32, elog u32, dsr, dsc, pattern)
//
// See the comments in sg.ptx for each kernel's exact semantics.
func SG() *backend.Module {
	return &backend.Module{Name: "sg", PTX: sgPTX, PTXTarget: 80, Cubins: map[int][]byte{86: sgSM86, 89: sgSM89}}
}

// Kernels of module SG.
const (
	SGCheckIndex  = "tcrt_sg_check_index"
	SGCheckDisp   = "tcrt_sg_check_disp"
	SGGatherRows  = "tcrt_sg_gather_rows"
	SGGatherElems = "tcrt_sg_gather_elems"
	SGScatter     = "tcrt_sg_scatter"
	SGGatherCAS   = "tcrt_sg_gather_cas"
	SGFillPad     = "tcrt_sg_fill_pad"
)

// Scatter codes of tcrt_sg_scatter (its code parameter).
const (
	SGStore   uint32 = 0 // plain store of whole units
	SGAddF32  uint32 = 1
	SGAddF16  uint32 = 2
	SGAddBF16 uint32 = 3
	SGAddI32  uint32 = 4 // s32 and u32
	SGAddF64  uint32 = 5
	SGMaxS32  uint32 = 6
	SGMaxU32  uint32 = 7
	SGMaxF32  uint32 = 8
	SGMinS32  uint32 = 9
	SGMinU32  uint32 = 10
	SGMinF32  uint32 = 11
)

// Scatter modes of tcrt_sg_scatter (its mode parameter).
const (
	SGModeElements uint32 = 0
	SGModeRows     uint32 = 1
)

// SGStore16x8 is the wlog of a plain row scatter moving 16-byte units of
// 8-byte elements (a v2.b64 access, so no element tears); 4 is a v4.b32.
const SGStore16x8 uint32 = 5

// SGBlock is the thread-block size of every SG kernel.
const SGBlock = 256

// SGLog2Threads returns lg, the base-2 logarithm of the threads given each
// row of units units: the smallest power of two covering units, at most
// SGBlock.
func SGLog2Threads(units int64) uint32 {
	if units <= 1 {
		return 0
	}
	return uint32(min(bits.Len64(uint64(units-1)), bits.Len(SGBlock)-1))
}

// SGGrid returns the grid of an SG kernel over rows × units with 1 << lg
// threads a row on a device with sms multiprocessors: x covers the rows
// (SGBlock >> lg a block), y the units beyond one pass of the row's
// threads, together at most 16 blocks an SM (the kernels loop over the
// rest).
func SGGrid(rows, units int64, lg uint32, sms int) (x, y int) {
	sms = max(sms, 1)
	lg = min(lg, 30) // past SGBlock's bits: one row a block
	rpb := max(int64(SGBlock>>lg), 1)
	tpr := int64(1) << lg
	capBlocks := int64(16 * sms)
	gx := min(max((rows+rpb-1)/rpb, 1), capBlocks, math.MaxInt32)
	gy := min(max((units+tpr-1)/tpr, 1), max(capBlocks/gx, 1), 65535)
	return int(gx), int(gy)
}

// SGDropped is what sg_resolve returns for a lane the policy drops.
const SGDropped = ^uint64(0)
