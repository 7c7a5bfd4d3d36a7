package sm86attn

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/tile"
)

// ErrUnsupported is wrapped by every PlanPrefill error: the call is outside
// what the kernels cover (the caller falls back to another kernel and can
// show the reason).
var ErrUnsupported = errors.New("sm86attn: not covered")

// PrefillArgs is one prefill call in plain values: device addresses,
// shapes and element strides, as fallback.AttentionArgs lays them out
// ([batch, seq, heads, headDim], head dimension contiguous).
type PrefillArgs struct {
	// Q, K, V, O: device addresses. LSE (f32) may be 0 (not stored).
	// CuSeqQ and CuSeqKV (int32, Batch+1 offsets) may be 0; with one,
	// that side is varlen (sequence b's rows CuSeq[b]..CuSeq[b+1]-1 of
	// batch 0) and SeqQ (SeqKV) is the longest sequence.
	Q, K, V, O, LSE, CuSeqQ, CuSeqKV uint64
	// SeqLensKV (int32, one a sequence) may be 0; with it the keys are a
	// KV cache: sequence b's SeqLensKV[b] keys are rows 0.. of batch b
	// (CuSeqKV must then be 0); SeqKV bounds them.
	SeqLensKV uint64
	// PageSize > 0 (a power of two >= 16): K and V are a paged KV cache,
	// the batch dimension of their strides being the page; sequence b's
	// key j is in page BlockTable[b*BlocksPerSeq + j/PageSize] (int32
	// entries at device address BlockTable). Needs SeqLensKV.
	PageSize     int
	BlockTable   uint64
	BlocksPerSeq int

	Batch, HeadsQ, HeadsKV, HeadDim int
	SeqQ, SeqKV                     int
	// Strides in elements: batch, seq, head.
	QStrides, KStrides, VStrides, OStrides [3]int
	// LSE strides in elements (varlen queries: the batch stride is unused,
	// rows being CuSeqQ[b] + i).
	LSEBatchStride, LSEHeadStride int

	In  tile.DType // one of Inputs
	Out tile.DType // one of Outputs

	Scale, SoftCap float32
	Causal         bool
	// WindowLeft and WindowRight: -1 for unbounded (fallback.Unbounded).
	WindowLeft, WindowRight int

	// Splits > 1 (PlanSplitKV only) splits the keys of every row over
	// that many CTAs (flash-decoding); their partial results go to
	// Workspace (SplitWorkspaceBytes, 16-byte aligned) and a combine
	// kernel merges them into O and LSE.
	Splits    int
	Workspace uint64
	// TotalQ (split-KV with CuSeqQ only) is CuSeqQ[Batch], the query
	// rows of the whole batch: the workspace holds that many rows.
	TotalQ int
}

// splitRows is the query rows the split workspace holds: Batch·SeqQ, or
// TotalQ with varlen queries (rows CuSeqQ[b] + i of batch 0).
func (a PrefillArgs) splitRows() int {
	if a.CuSeqQ != 0 {
		return a.TotalQ
	}
	return a.Batch * a.SeqQ
}

// Launch is one kernel launch of a plan: the device seam's launch
// description, Params with one 8-byte slot per kernel parameter in the
// order of Params (prefill) or CombineParams (combine); PackParams lays
// them out for a parameter window. Func is the variant's Config.Name (or
// CombineConfig.Name). Plans leave Module nil; the caller launches in
// this package's Module.
type Launch = backend.Launch

// PackParams lays l's slots out as its kernel's parameter window:
// Params, or CombineParams for a combine kernel (Func with the combine
// prefix).
func PackParams(l Launch) ([]byte, error) {
	ps := Params()
	if strings.HasPrefix(l.Func, combinePrefix) {
		ps = CombineParams()
	}
	if len(l.Params) != len(ps) {
		return nil, fmt.Errorf("sm86attn: %s: %d parameter slots, the kernel takes %d", l.Func, len(l.Params), len(ps))
	}
	offs, size, err := cubin.ParamLayout(ps)
	if err != nil {
		return nil, err
	}
	out := make([]byte, size)
	for i, v := range l.Params {
		for j := range ps[i].Size {
			out[offs[i]+j] = byte(v >> (8 * j))
		}
	}
	return out, nil
}

// Select returns the variant PlanPrefill and PlanSplitKV launch for a
// (whether a is covered is theirs to say). The rule: the 16-row decode
// variant (Config.Decode: one row tile a CTA, 16-key blocks) when a CTA's
// rows, SeqQ·G' (G' the GQA group when above 1, else 1; SeqQ the longest
// varlen sequence), are at most 16; the 64-row kernel otherwise. A 64-row
// CTA would compute 64 rows for those 16 or fewer useful ones.
func Select(a PrefillArgs) Config {
	rowG := 1
	if a.HeadsKV > 0 && a.HeadsQ/a.HeadsKV > 1 {
		rowG = a.HeadsQ / a.HeadsKV
	}
	return Config{In: a.In, Out: a.Out, HeadDim: a.HeadDim, SoftCap: a.SoftCap > 0, Paged: a.PageSize > 0,
		Decode: a.SeqQ*rowG <= 16}
}

// PlanPrefill checks that a call is within what the prefill kernels cover
// and returns the launch. The selection rule: head dimension 64, 128 or
// 256 (8 warps, 32-key blocks);
// f16 or bf16 Q, K and V (one type); O f32, f16 or bf16; Q, K, V 16-byte
// aligned with batch, seq and head strides multiples of 8 elements; O
// aligned to two elements with even strides; every byte stride below
// 2^32 (the kernels form offsets as 32x32-bit products); HeadsQ a
// multiple of HeadsKV, below 2^16; SeqQ·group and SeqKV below 2^24;
// Batch below 2^16; a positive finite Scale; windows -1 or more. Causal,
// windows, soft-cap, varlen (CuSeqQ/CuSeqKV), contiguous KV caches
// (SeqLensKV) and paged ones (PageSize a power of two >= 16, with
// SeqLensKV, BlockTable and BlocksPerSeq) are all covered; with a group
// above 1 the query heads of a KV head are packed into one CTA's rows.
// Anything else returns an error wrapping ErrUnsupported that names the
// rule. Splits > 1 is PlanSplitKV's. The kernels are unverified on
// silicon.
func PlanPrefill(a PrefillArgs) (Launch, error) {
	if a.Splits > 1 {
		return Launch{}, fmt.Errorf("%w: Splits %d: use PlanSplitKV", ErrUnsupported, a.Splits)
	}
	return plan(a, 1, 0, 0)
}

// SplitWorkspaceBytes is the workspace a split-KV call needs: the
// partial outputs (f32 [Splits][Batch][SeqQ][HeadsQ][HeadDim]) then the
// partial LSEs (f32 [Splits][Batch][HeadsQ][SeqQ]); with varlen queries
// TotalQ rows take the place of Batch x SeqQ ([Splits][TotalQ][HeadsQ]
// [HeadDim] and [Splits][HeadsQ][TotalQ]).
func SplitWorkspaceBytes(a PrefillArgs) int {
	rows := max(a.splitRows(), 0)
	return a.Splits*rows*a.HeadsQ*a.HeadDim*4 + a.Splits*a.HeadsQ*rows*4
}

// PlanSplitKV plans a split-KV (flash-decoding) call: the prefill kernel
// with f32 output over Splits CTAs per query block, each taking an equal
// run of key blocks and writing its partial O and LSE to the workspace,
// then the combine kernel (grid SeqQ x HeadsQ x Batch, one warp each)
// merging them by LSE into O and LSE. Covered as PlanPrefill, with
// 2 <= Splits < 2^16; varlen queries (CuSeqQ) need TotalQ (CuSeqQ[Batch]),
// and the combine CTAs of rows past a sequence's end exit.
func PlanSplitKV(a PrefillArgs) ([2]Launch, error) {
	var out [2]Launch
	if a.Splits < 2 || a.Splits >= 1<<16 || a.Workspace%16 != 0 || a.Workspace == 0 {
		return out, fmt.Errorf("%w: split-KV with Splits %d, workspace %#x (want 2 <= Splits < 2^16, an aligned workspace)", ErrUnsupported, a.Splits, a.Workspace)
	}
	if !slices.Contains(Outputs(), a.Out) {
		return out, fmt.Errorf("%w: output type %v", ErrUnsupported, a.Out)
	}
	if a.CuSeqQ != 0 && (a.TotalQ < 0 || a.TotalQ >= 1<<24) {
		return out, fmt.Errorf("%w: split-KV with varlen queries: TotalQ %d (CuSeqQ[Batch], below 2^24)", ErrUnsupported, a.TotalQ)
	}
	if uint64(SplitWorkspaceBytes(a)) >= 1<<32 {
		return out, fmt.Errorf("%w: split-KV workspace of %d bytes (below 2^32)", ErrUnsupported, SplitWorkspaceBytes(a))
	}
	part := a
	part.Out = tile.F32
	part.O = a.Workspace
	d, nq, hq := a.HeadDim, a.SeqQ, a.HeadsQ
	// rows: nq a batch, or (varlen) the whole batch's rows CuSeqQ[b]+i
	// of batch 0
	rows, cnq := a.splitRows(), nq
	if a.CuSeqQ != 0 {
		cnq = rows
	}
	part.OStrides = [3]int{nq * hq * d, hq * d, d}
	oBytes := a.Splits * rows * hq * d * 4
	part.LSE = a.Workspace + uint64(oBytes)
	part.LSEBatchStride, part.LSEHeadStride = hq*cnq, cnq
	kb := Select(part).KeyBlock()
	blocks := (a.SeqKV + kb - 1) / kb
	bps := max(1, (blocks+a.Splits-1)/a.Splits)
	main, err := plan(part, a.Splits, bps, uint32(rows*hq*d*4))
	if err != nil {
		return out, err
	}
	esz := a.Out.Size()
	// the combine kernel stores d/32 consecutive elements a lane
	per := d / 32
	if a.O%uint64(per*esz) != 0 || a.LSE%4 != 0 {
		return out, fmt.Errorf("%w: O not aligned to %d bytes", ErrUnsupported, per*esz)
	}
	for _, v := range a.OStrides {
		if v < 0 || v%per != 0 || uint64(v)*uint64(esz) >= 1<<32 {
			return out, fmt.Errorf("%w: O stride %d: a multiple of %d elements, below 2^32 bytes", ErrUnsupported, v, per)
		}
	}
	cc := CombineConfig{HeadDim: d, Out: a.Out}
	par := []uint64{part.O, part.LSE, a.O, a.LSE}
	for _, v := range []int{a.Splits, oBytes / a.Splits, rows * hq * 4,
		a.OStrides[1] * esz, a.OStrides[2] * esz, a.OStrides[0] * esz, 4 * a.LSEHeadStride, 4 * a.LSEBatchStride, cnq, hq} {
		par = append(par, uint64(uint32(v)))
	}
	par = append(par, a.CuSeqQ)
	out[0] = main
	out[1] = Launch{Func: cc.Name(), Grid: [3]int{max(nq, 1), hq, a.Batch}, Block: [3]int{CombineThreads, 1, 1}, Params: par}
	if nq == 0 {
		out[1].Grid[0] = 0 // nothing to combine
	}
	return out, nil
}

// plan builds the prefill launch; splits, bps and oSplit describe a
// split-KV call (1, 0, 0 otherwise).
func plan(a PrefillArgs, splits, bps int, oSplit uint32) (Launch, error) {
	bad := func(f string, x ...any) (Launch, error) {
		return Launch{}, fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(f, x...))
	}
	if a.HeadDim != 64 && a.HeadDim != 128 && a.HeadDim != 256 {
		return bad("head dimension %d (covered: 64, 128, 256)", a.HeadDim)
	}
	if !slices.Contains(Inputs(), a.In) {
		return bad("input type %v", a.In)
	}
	if !slices.Contains(Outputs(), a.Out) {
		return bad("output type %v", a.Out)
	}
	if a.Batch < 1 || a.HeadsQ < 1 || a.HeadsKV < 1 || a.HeadsQ%a.HeadsKV != 0 || a.HeadsQ >= 1<<16 {
		return bad("heads %d / %d", a.HeadsQ, a.HeadsKV)
	}
	if a.SeqQ < 0 || a.SeqKV < 0 || a.SeqQ*(a.HeadsQ/a.HeadsKV) >= 1<<24 || a.SeqKV >= 1<<24 || a.Batch >= 1<<16 {
		return bad("sequence lengths %d, %d", a.SeqQ, a.SeqKV)
	}
	if !(a.Scale > 0) || math.IsInf(float64(a.Scale), 0) || a.SoftCap < 0 || math.IsNaN(float64(a.SoftCap)) {
		return bad("scale %g, soft-cap %g", a.Scale, a.SoftCap)
	}
	if a.SeqLensKV%4 != 0 || a.SeqLensKV != 0 && a.CuSeqKV != 0 {
		return bad("SeqLensKV with CuSeqKV")
	}
	shift := 0
	if a.PageSize != 0 {
		if a.PageSize < 16 || a.PageSize&(a.PageSize-1) != 0 || a.SeqLensKV == 0 || a.BlockTable%4 != 0 || a.BlocksPerSeq < 1 {
			return bad("paged cache: PageSize %d (a power of two >= 16), SeqLensKV, an aligned BlockTable and BlocksPerSeq >= 1 needed", a.PageSize)
		}
		for 1<<shift < a.PageSize {
			shift++
		}
	}
	if a.WindowLeft < -1 || a.WindowRight < -1 {
		return bad("window %d, %d", a.WindowLeft, a.WindowRight)
	}
	for _, p := range []struct {
		n string
		v uint64
	}{{"Q", a.Q}, {"K", a.K}, {"V", a.V}} {
		if p.v%16 != 0 {
			return bad("%s not 16-byte aligned", p.n)
		}
	}
	esz := uint64(a.Out.Size())
	if a.O%(2*esz) != 0 || a.LSE%4 != 0 || a.CuSeqQ%4 != 0 || a.CuSeqKV%4 != 0 {
		return bad("O, LSE or cu_seqlens misaligned")
	}
	var strides []uint32
	for _, s := range []struct {
		n    string
		st   [3]int
		mult int
		size int
	}{{"Q", a.QStrides, 8, 2}, {"K", a.KStrides, 8, 2}, {"V", a.VStrides, 8, 2}, {"O", a.OStrides, 2, a.Out.Size()}} {
		var b [3]uint32
		for k, v := range s.st {
			if v < 0 || v%s.mult != 0 || uint64(v)*uint64(s.size) >= 1<<32 {
				return bad("%s stride %d: a multiple of %d elements, below 2^32 bytes", s.n, v, s.mult)
			}
			b[k] = uint32(v * s.size)
		}
		strides = append(strides, b[1], b[2], b[0]) // seq, head, batch
	}
	if a.LSEBatchStride < 0 || a.LSEHeadStride < 0 || uint64(a.LSEBatchStride)*4 >= 1<<32 || uint64(a.LSEHeadStride)*4 >= 1<<32 {
		return bad("LSE strides %d, %d", a.LSEBatchStride, a.LSEHeadStride)
	}
	strides = append(strides, uint32(4*a.LSEHeadStride), uint32(4*a.LSEBatchStride))
	// GQA packing: with group > 1 a CTA serves query rows of all the
	// group's heads of one KV head (packed row r = query r/group of head
	// kvh*group + r%group), so K and V are read once per KV head; the KV
	// head is then the grid's y (kernel group 1)
	group := a.HeadsQ / a.HeadsKV
	rowG, heads := 1, a.HeadsQ
	if group > 1 {
		rowG, heads, group = group, a.HeadsKV, 1
	}
	magicOf := func(g int) uint32 {
		if g <= 1 {
			return 0
		}
		return uint32((uint64(1)<<32 + uint64(g) - 1) / uint64(g))
	}
	magic := magicOf(group)
	rowLow := uint32(0)
	if rowG == 1 {
		rowLow = 1
	}
	c, capIn := a.Scale*float32(math.Log2E), float32(0)
	if a.SoftCap > 0 {
		c, capIn = a.SoftCap*float32(math.Log2E), a.Scale/a.SoftCap
	}
	// a window at least 2^25 wide reaches every key of sequences below
	// 2^24: unbounded, so that the kernel's 32-bit bounds never overflow
	winL, winR := a.WindowLeft, a.WindowRight
	if winL >= 1<<25 {
		winL = -1
	}
	if winR >= 1<<25 {
		winR = -1
	}
	if a.Causal {
		winR = 0
	}
	cfg := Select(a)
	par := []uint64{a.Q, a.K, a.V, a.O, a.LSE, a.CuSeqQ, a.CuSeqKV}
	for _, v := range strides {
		par = append(par, uint64(v))
	}
	for _, v := range []uint32{uint32(a.SeqQ), uint32(a.SeqKV), uint32(group), magic,
		math.Float32bits(c), math.Float32bits(capIn), uint32(int32(winL)), uint32(int32(winR))} {
		par = append(par, uint64(v))
	}
	par = append(par, a.SeqLensKV)
	var smagic uint32
	if splits > 1 {
		smagic = uint32((uint64(1)<<32 + uint64(splits) - 1) / uint64(splits))
	}
	lSplit := uint32(a.splitRows() * a.HeadsQ * 4)
	if splits <= 1 {
		bps, lSplit = 1<<24, 0
	}
	for _, v := range []uint32{uint32(splits), smagic, uint32(bps), oSplit, lSplit, 0} {
		par = append(par, uint64(v))
	}
	par = append(par, a.BlockTable)
	for _, v := range []uint32{uint32(a.BlocksPerSeq), uint32(shift), uint32(max(a.PageSize, 1) - 1),
		uint32(rowG), magicOf(rowG), rowLow, uint32(-int32(rowG))} {
		par = append(par, uint64(v))
	}
	return Launch{
		Func:        cfg.Name(),
		Grid:        [3]int{max(1, (a.SeqQ*rowG+cfg.Rows()-1)/cfg.Rows()) * splits, heads, a.Batch},
		Block:       [3]int{cfg.CTAThreads(), 1, 1},
		SharedBytes: cfg.SharedBytes(),
		Params:      par,
	}, nil
}
