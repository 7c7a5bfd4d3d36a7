// Package sm86 holds tcrt's hand-scheduled SASS kernels for SM86 and SM89
// (Ampere GA10x, Ada), written in Go against the instruction model of
// package sass: every instruction and every control word (stall count,
// yield, scoreboards, waits) is chosen by hand, not by ptxas. This package
// holds the embedded cubins, the kernel names and the launch plans; the
// generators are package gen (kernels/sm86/gen), which only go generate
// and the tests link.
//
// Each kernel is a generator function returning a sass.Program. gen.Cubin
// assembles the kernels of one architecture with cubin.Write; the
// results for sm_86 and sm_89 are embedded (cubin/), go generate rebuilds
// them, and TestCubinsCurrent (in gen) fails when an embedded cubin
// differs from what the generators produce now. Module wraps them as a
// backend.Module (the CUDA backend selects them on sm_86..sm_89 only).
//
// # Kernels
//
//	tcrt_sass_quantize_e4m3(dst *u8, src *f32, n u32, scale f32)
//	tcrt_sass_quantize_e5m2(dst *u8, src *f32, n u32, scale f32)
//
// dst[i] = f8(f32(src[i]·scale)) for i < n, round to nearest even,
// saturating to the largest finite value (a NaN stays NaN with its sign,
// zero keeps its sign): tile.F32ToE4M3(src[i]*scale, tile.Saturate) and
// F32ToE5M2 bit for bit. One thread converts one group of four elements
// (LDG.E.128, one 32-bit STG); the group at the end of the tensor is loaded
// and stored element by element, so any n works. src must be 16-byte and
// dst 4-byte aligned. The sm_89 cubin converts with
// F2FP.SATFINITE.{E4M3,E5M2}.F32.PACK_AB_MERGE_C; the sm_86 one (which also
// runs on sm_87..sm_89) with integer code: exponent and mantissa fields,
// variable shifts and an add of half-minus-one plus the kept lowest bit for
// round to nearest even. Block QuantBlock, grid QuantGrid(n).
//
//	tcrt_sass_scatter_add_f32(mem *f32, idx *i32, src *f32, n, cols, magic,
//	    shift, negCols, memRows, hiClamp, signed, skip u32)
//
// For every lane l < n (one thread each): r = l / cols, c = l % cols,
// mem[pos(idx[r])·cols + c] += src[l] with RED.E.ADD.F32.FTZ.RN.STRONG.GPU.
// Row mode of a scatter is cols = the row width; element mode is cols = 1
// (idx then has one index per lane). The division is a multiply by the
// magic number DivMagic computes. pos resolves an out-of-bounds index
// (unsigned idx ≥ memRows, as signed below 0 when signed ≠ 0): with skip ≠ 0
// the lane is dropped (tile.OOBSkip), else it is clamped to 0 (a negative
// signed index) or hiClamp = memRows−1 (tile.OOBClamp). Updates are
// unordered (float sums may round differently from run to run) and the
// hardware add flushes subnormal operands and results to zero (FTZ): a
// subnormal sum differs from the CPU reference. Block ScatterBlock, grid
// ScatterGrid(n). ScatterParams builds the parameter slots.
//
// # Scatter-gather, amax, dequantise and MX quantise
//
// The other kernels are reached through device-level operators: exported
// plan functions taking plain values (device addresses, tile.Tile
// descriptors, codes) that return the launches (Launch, the device seam's
// backend.Launch: kernel, grid, block, parameter slots) of one op, each
// with a Supports function stating what it covers (nil, or an error wrapping ErrSGUnsupported):
//
//	PlanGather / GatherSupports          sg_plan.go; gen/sg.go (rows and elements)
//	PlanScatter / ScatterSupports        store (deterministic too: gen/scatter_det.go); add, max, min on
//	                                     s32/u32; max, min on f32; add on f64, f32, f16, bf16 (gen/scatter_fadd.go)
//	PlanGatherCAS / GatherCASSupports    8/16/32/64-bit compare-and-swap at byte displacements
//	PlanAmax / AmaxSupports              amax_plan.go; gen/amax.go
//	PlanDequant / DequantSupports        dequant_plan.go; gen/dequant.go (E4M3/E5M2 to f32/f16/bf16)
//	PlanQuantizeMX / QuantizeMXSupports  quant_plan.go; gen/quant_mx.go (f32 to E4M3/E5M2, E8M0 scales)
//
// Faults follow the tile contract: a preflight kernel records the first
// faulting lane (or scale block) as ^lane in an 8-byte slot the caller
// zeroes first (SGFault decodes it), and every effect kernel exits when the
// slot is set, so memory and destination stay unchanged. All blocks are
// SGBlock (256) threads; each thread handles one lane, run or group.
//
// # Verification
//
// What is checked without a GPU: every instruction word of every kernel
// disassembles under nvdisasm -b SM86 / -b SM89 to the text the model
// prints; the cubins are read by cuobjdump -elf and nvdisasm; the schedule
// checker (sched.Check) finds no hazard; and, where the functional
// simulator is available, the kernels run in it on random inputs and match
// the CPU reference bit for bit. NOT VERIFIED: that the CUDA driver loads
// these cubins and that they compute the same on an sm_86/sm_89 GPU — none
// has been available to this project.
package sm86
