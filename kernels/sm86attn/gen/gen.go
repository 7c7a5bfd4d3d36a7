// Package gen generates the sm86attn kernels (see package sm86attn for
// what they compute and the variants): the prefill and decode kernels and
// the split-KV combine kernel, scheduled by hand, with scoreboards placed
// by a tracker and stall counts raised to the sass latency table. Only go
// generate and the tests link it.
package gen

import (
	"fmt"
	"math"
	"slices"

	"github.com/tcrt-go/tcrt/kernels/internal/sasskit"
	"github.com/tcrt-go/tcrt/kernels/sm86attn"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/sass/sched"
	"github.com/tcrt-go/tcrt/tile"
)

// dw is the head-dimension columns a warp owns (of Q, K in S, and of O).
func dw(c sm86attn.Config) int { return min(c.HeadDim, 128) }

// kbShift is log2(KeyBlock).
func kbShift(c sm86attn.Config) int64 { return log2(c.KeyBlock()) }

// nTiles is the 8-key n-tiles of S a block; nKK the k16 steps of P·V.
func nTiles(c sm86attn.Config) int { return c.KeyBlock() / 8 }
func nKK(c sm86attn.Config) int    { return c.KeyBlock() / 16 }

// Parameter offsets in constant bank 0 (see sm86attn.Params).
const (
	pQ       = cubin.ParamBase + 0x00
	pK       = cubin.ParamBase + 0x08
	pV       = cubin.ParamBase + 0x10
	pO       = cubin.ParamBase + 0x18
	pLSE     = cubin.ParamBase + 0x20
	pCuQ     = cubin.ParamBase + 0x28
	pCuKV    = cubin.ParamBase + 0x30
	pQS      = cubin.ParamBase + 0x38
	pQH      = cubin.ParamBase + 0x3c
	pQB      = cubin.ParamBase + 0x40
	pKS      = cubin.ParamBase + 0x44
	pKH      = cubin.ParamBase + 0x48
	pKB      = cubin.ParamBase + 0x4c
	pVS      = cubin.ParamBase + 0x50
	pVH      = cubin.ParamBase + 0x54
	pVB      = cubin.ParamBase + 0x58
	pOS      = cubin.ParamBase + 0x5c
	pOH      = cubin.ParamBase + 0x60
	pOB      = cubin.ParamBase + 0x64
	pLH      = cubin.ParamBase + 0x68
	pLB      = cubin.ParamBase + 0x6c
	pSeqQ    = cubin.ParamBase + 0x70
	pSeqKV   = cubin.ParamBase + 0x74
	pGroup   = cubin.ParamBase + 0x78
	pMagic   = cubin.ParamBase + 0x7c
	pC       = cubin.ParamBase + 0x80
	pCapIn   = cubin.ParamBase + 0x84
	pWinL    = cubin.ParamBase + 0x88
	pWinR    = cubin.ParamBase + 0x8c
	pSeqLens = cubin.ParamBase + 0x90 // u64: per-sequence key counts (a KV cache), or 0
	pSplits  = cubin.ParamBase + 0x98
	pSMagic  = cubin.ParamBase + 0x9c
	pBPS     = cubin.ParamBase + 0xa0 // key blocks a split
	pOSplit  = cubin.ParamBase + 0xa4 // bytes between splits' O
	pLSplit  = cubin.ParamBase + 0xa8 // bytes between splits' LSE
	pBT      = cubin.ParamBase + 0xb0 // u64: block table (int32), paged variants
	pBPSeq   = cubin.ParamBase + 0xb8 // block-table entries a sequence
	pPShift  = cubin.ParamBase + 0xbc // log2(page size)
	pPMask   = cubin.ParamBase + 0xc0 // page size - 1
	pRowG    = cubin.ParamBase + 0xc4 // query heads packed a CTA row set (G'): group, or 1
	pRowMag  = cubin.ParamBase + 0xc8 // ceil(2^32/G'), or 0 for G' 1
	pRowLow  = cubin.ParamBase + 0xcc // 1 for G' 1, else 0
	pRowNegG = cubin.ParamBase + 0xd0 // -G'
)

// regs is the register map of one variant.
type regs struct {
	o, s, q, f int // O accumulators, S tile, Q fragments, K/V fragment batches
	// scalars
	tid, lane, warp, qt, gq, cx, h, bz, sp      int
	nq, nk, nkm1, qrow0, krow0, qbat, kbat, kvh int
	lo, hi                                      int
	kb, vb, ka, va                              int // ka, va: 4 each
	st, j, jEnd, fLo, fHi                       int
	kp, vp, tp, btp                             int // pairs; tp: 4 pairs; btp: the sequence's block-table row
	rr, dst                                     int
	mo, l, ms, nm, al                           int // 2 each (rows g, g+8)
	ar, br, ma, mb                              int // 2 each
	ninf, hb                                    int // hb: the CTA's first query head (y*G')
	hf, xs                                      int // wide only: the warp's half, its exchange address
	t                                           int // 16 temporaries
	last                                        int
}

// newRegs is the register map at head dimension d; 256 is 128's (a warp
// holds half of Q and O) plus the half index and exchange address.
func newRegs(d int) regs {
	if d == 256 {
		r := newRegs(128)
		r.hf, r.xs = r.last, r.last+1
		r.last += 2
		return r
	}
	var r regs
	r.o = 0
	r.s = d / 2
	r.q = r.s + 32
	r.f = r.q + d/4
	n := r.f + 32
	a := func(k int) int { x := n; n += k; return x }
	r.kp, r.vp, r.tp, r.btp = a(2), a(2), a(8), a(2)
	for _, p := range []*int{&r.tid, &r.lane, &r.warp, &r.qt, &r.gq, &r.cx, &r.h, &r.bz, &r.sp,
		&r.nq, &r.nk, &r.nkm1, &r.qrow0, &r.krow0, &r.qbat, &r.kbat, &r.kvh, &r.lo, &r.hi,
		&r.kb, &r.vb, &r.st, &r.j, &r.jEnd, &r.fLo, &r.fHi, &r.rr, &r.dst, &r.ninf} {
		*p = a(1)
	}
	r.ka, r.va = a(4), a(4)
	r.hb = a(1)
	r.mo, r.l, r.ms, r.nm, r.al = a(2), a(2), a(2), a(2), a(2)
	r.ar, r.br, r.ma, r.mb = a(2), a(2), a(2), a(2)
	n += n % 2
	r.t = a(16)
	r.last = n
	return r
}

// Registers is the register count a variant records (highest index + 3).
func registers(c sm86attn.Config) int { return newRegs(c.HeadDim).last - 1 + 3 }

// Scoreboards: SB0 the copies' groups (LDGDEPBAR / DEPBAR); SB1..3
// rotate over groups of four HMMAs (an HMMA's accumulator dependence is
// on the group two back, never the one in flight); SB4 the LDSM batches
// (batch b+1 is issued after the fourth HMMA of batch b, so a consumer's
// wait never covers a younger batch); SB5 the copies' address reads and
// the short-lived results (SHFL, MUFU, S2R, LDG).
const (
	sbLDSM = sass.SB4
	sbMisc = sass.SB5
)

type builder struct {
	sasskit.Builder
	c     sm86attn.Config
	g     regs
	tr    *tracker
	err   error
	drain bool
	hmmaG int // HMMA group counter (4 a group)
	// dumpAt, when set, makes the first block store the shared-address
	// registers (dumpRegs) of each thread to dumpAt + 64*tid and exit: the
	// bank-conflict test runs it in the simulator.
	dumpAt uint64
	hmmaN  int
}

// add places instructions: the tracker's waits, scoreboard sb for
// variable-latency ones, stall 1 where none was given.
func (b *builder) addSB(sb sass.Scoreboard, is ...sass.Inst) {
	for _, i := range is {
		if b.drain {
			i = i.Wait(i.Ctrl.Wait | b.tr.pendingMask())
			b.tr.clear(b.tr.pendingMask())
			b.drain = false
		}
		i, err := b.tr.place(i, sb)
		if err != nil && b.err == nil {
			b.err = err
		}
		if i.Ctrl.Stall == 0 {
			i.Ctrl.Stall = 1
		}
		b.Prog = append(b.Prog, i)
	}
}

func (b *builder) add(is ...sass.Inst) { b.addSB(sbMisc, is...) }

// label marks the next instruction as a branch target: nothing may be
// pending there.
func (b *builder) label(name string) {
	if m := b.tr.pendingMask(); m != 0 {
		// the fall-through path drains here, so that the label's first
		// instruction waits on nothing (a path arriving by the branch has
		// nothing in flight)
		b.tr.clear(m)
		b.Prog = append(b.Prog, sass.New("NOP", "").Wait(m).Stall(1))
	}
	b.Label(name)
}

// bra emits a branch to label (guarded by cond when set), draining first.
func (b *builder) bra(label string, cond sass.Cond) {
	i := sass.New("BRA", "", sass.Target(0)).When(cond).Yield()
	i = i.Wait(b.tr.pendingMask())
	b.tr.clear(b.tr.pendingMask())
	b.BranchTo(label)
	b.add(i.Stall(6))
}

// Program is a generated kernel: the instructions, the unmasked and
// masked loops ([first, backward BRA]) and the EXIT offsets.
type Program struct {
	Config   sm86attn.Config
	Insts    sass.Program
	Loop     [2]int // the unmasked main loop
	MaskLoop [2]int // the masked loop (diagonal, window edges, key tail)
	Exits    []int
}

func hmmaMods(c sm86attn.Config) string {
	if c.In == tile.BF16 {
		return "16816.F32.BF16"
	}
	return "16816.F32"
}

// Generate emits the prefill kernel for c.
func Generate(c sm86attn.Config) (*Program, error) { return generate(c, 0) }

// dumpRegs are the registers the dump stores: the LDSM addresses of K
// (4) and V (4) of stage 0, the copy destination of this stage and of the
// next, the warp's row tile and (head dimension 256) the exchange address.
func (g regs) dumpRegs() []int {
	d := []int{g.ka, g.ka + 1, g.ka + 2, g.ka + 3, g.va, g.va + 1, g.va + 2, g.va + 3, g.dst, g.t + 9, g.warp}
	if g.xs != 0 {
		d = append(d, g.xs) // head dimension 256: the exchange address
	}
	return append(d, g.t+11) // the decode variant's alt copy base

}

func generate(c sm86attn.Config, dumpAt uint64) (*Program, error) {
	if c.HeadDim != 64 && c.HeadDim != 128 && c.HeadDim != 256 {
		return nil, fmt.Errorf("sm86attn: head dimension %d: the kernels cover 64, 128 and 256", c.HeadDim)
	}
	if !slices.Contains(sm86attn.Inputs(), c.In) || !slices.Contains(sm86attn.Outputs(), c.Out) {
		return nil, fmt.Errorf("sm86attn: no variant with %v inputs and %v output", c.In, c.Out)
	}
	b := &builder{c: c, g: newRegs(c.HeadDim), tr: newTracker(), dumpAt: dumpAt}
	b.setup()
	b.prologue()
	b.dispatch()
	b.epilogue()
	for len(b.Prog)%8 != 0 {
		b.add(sass.New("NOP", ""))
	}
	if err := b.Resolve(); err != nil {
		return nil, fmt.Errorf("sm86attn: %w", err)
	}
	if b.err != nil {
		return nil, b.err
	}
	if err := b.FixStalls(sched.DefaultLatencies()); err != nil {
		return nil, err
	}
	p := &Program{Config: c, Insts: b.Prog, Loop: b.Loops[1], MaskLoop: b.Loops[0]}
	p.Exits = b.ExitOffsets()
	return p, nil
}

// rowSplit returns the instructions that split packed row register row
// into its query index qi and (when head >= 0) query head: qi = row/G'
// (IMAD.HI by the magic, plus row for G' 1), head = hb + row - qi*G'.
func (b *builder) rowSplit(qi, head, row int) [][]sass.Inst {
	out := [][]sass.Inst{
		{sass.New("IMAD", "HI.U32", r(qi), r(row), cb(pRowMag), rz)},
		{sass.New("IMAD", "", r(qi), r(row), cb(pRowLow), r(qi))},
	}
	if head >= 0 {
		out = append(out,
			[]sass.Inst{sass.New("IMAD", "", r(head), r(qi), cb(pRowNegG), r(row))},
			[]sass.Inst{iadd(head, r(head), r(b.g.hb))})
	}
	return out
}

func (b *builder) addAll(iss [][]sass.Inst) {
	for _, is := range iss {
		b.add(is...)
	}
}

// setup: indices, the sequence's rows, pointers, mask offsets, block range.
func (b *builder) setup() {
	g, c := b.g, b.c
	t := g.t
	cn := c.HeadDim / 8 // 16-byte chunks a row
	b.add(
		sass.New("S2R", "", r(g.tid), sass.SR(sass.SRTidX)),
		sass.New("S2R", "", r(g.cx), sass.SR(sass.SRCtaidX)),
		sass.New("S2R", "", r(g.h), sass.SR(sass.SRCtaidY)),
		sass.New("S2R", "", r(g.bz), sass.SR(sass.SRCtaidZ)),
		sass.New("ULDC", "64", sass.UR(4), cb(0x118)),
		// cu_seqlens present: P0 (queries), P1 (keys)
		mov(t+0, cb(pCuQ)),
		mov(t+1, cb(pCuQ+4)),
		mov(t+2, cb(pCuKV)),
		mov(t+3, cb(pCuKV+4)),
		sass.New("LOP3", "LUT", r(t+4), r(t+0), r(t+1), rz, imm(0xfc), sass.NotP(sass.PT)),
		sass.New("LOP3", "LUT", r(t+5), r(t+2), r(t+3), rz, imm(0xfc), sass.NotP(sass.PT)),
		isetp("NE", sass.P0, t+4, rz, pt),
		isetp("NE", sass.P1, t+5, rz, pt),
		mov(g.nq, cb(pSeqQ)),
		mov(g.nk, cb(pSeqKV)),
		mov(g.qrow0, rz),
		mov(g.krow0, rz),
		mov(t+8, rz),
		mov(t+9, rz),
		mov(t+10, rz),
		mov(t+11, rz),
	)
	b.add(
		mov(g.qbat, r(g.bz)),
		mov(g.kbat, r(g.bz)),
		wide(t+6, g.bz, imm(4), t+0),
		wide(t+12, g.bz, imm(4), t+2),
	)
	b.add(
		sass.New("LDG", "E", r(t+8), sass.G64(sass.Reg(t+6), 0)).When(sass.If(sass.P0)),
		sass.New("LDG", "E", r(t+9), sass.G64(sass.Reg(t+6), 4)).When(sass.If(sass.P0)),
		sass.New("LDG", "E", r(t+10), sass.G64(sass.Reg(t+12), 0)).When(sass.If(sass.P1)),
		sass.New("LDG", "E", r(t+11), sass.G64(sass.Reg(t+12), 4)).When(sass.If(sass.P1)),
		// lane decomposition meanwhile
		and(g.lane, g.tid, 31),
		shr(g.warp, g.tid, 5),
		and(g.qt, g.lane, 3),
		shr(g.gq, g.lane, 2),
		// kv head = h / group: IMAD.HI by the magic (group 1: h)
		sass.New("IMAD", "HI.U32", r(g.kvh), r(g.h), cb(pMagic), rz),
	)
	if c.Wide() {
		// the warp's half hf = warp / rowTiles; warp becomes its row tile
		// warp % rowTiles; exchange address xs = 2 stages + (warp's index)
		// *sm86attn.ExchangeBytes + 16 lane
		b.add(shr(g.hf, g.warp, log2(c.RowTiles())), shl(t+14, g.warp, log2(sm86attn.ExchangeBytes)))
		b.add(and(g.warp, g.warp, int64(c.RowTiles()-1)))
		b.add(lea(g.xs, g.lane, r(t+14), 4))
		b.add(iadd(g.xs, r(g.xs), imm(int64(sm86attn.Stages*c.StageBytes()))))
	}
	b.add(
		mov(t+14, cb(pGroup)),
		isetp("EQ", sass.P2, t+14, imm(1), pt),
		sass.New("SEL", "", r(g.kvh), r(g.h), r(g.kvh), sass.P(sass.P2)),
		sass.New("IMAD", "", r(g.hb), r(g.h), cb(pRowG), rz),
		// split: qb = cx / splits (IMAD.HI by the magic; splits 1: cx),
		// sp = cx - qb*splits; cx becomes qb
		sass.New("IMAD", "HI.U32", r(t+15), r(g.cx), cb(pSMagic), rz),
		mov(t+13, cb(pSplits)),
	)
	b.add(
		isetp("EQ", sass.P2, t+13, imm(1), pt),
	)
	b.add(sass.New("SEL", "", r(t+15), r(g.cx), r(t+15), sass.P(sass.P2)))
	b.add(sass.New("IMAD", "", r(t+13), r(t+15), r(t+13), rz))
	b.add(
		sass.New("IADD3", "", r(g.sp), r(g.cx), sass.Neg(r(t+13)), rz),
		mov(g.cx, r(t+15)),
	)
	b.add(
		sass.New("SEL", "", r(g.qrow0), r(t+8), rz, sass.P(sass.P0)),
		sass.New("IADD3", "", r(t+9), r(t+9), sass.Neg(r(t+8)), rz),
		sass.New("SEL", "", r(g.nq), r(t+9), r(g.nq), sass.P(sass.P0)),
		sass.New("SEL", "", r(g.qbat), rz, r(g.bz), sass.P(sass.P0)),
		sass.New("SEL", "", r(g.krow0), r(t+10), rz, sass.P(sass.P1)),
		sass.New("IADD3", "", r(t+11), r(t+11), sass.Neg(r(t+10)), rz),
		sass.New("SEL", "", r(g.nk), r(t+11), r(g.nk), sass.P(sass.P1)),
		sass.New("SEL", "", r(g.kbat), rz, r(g.bz), sass.P(sass.P1)),
		// a KV cache: nk = SeqLensKV[b]
		mov(t+0, cb(pSeqLens)),
		mov(t+1, cb(pSeqLens+4)),
	)
	b.add(
		sass.New("LOP3", "LUT", r(t+4), r(t+0), r(t+1), rz, imm(0xfc), sass.NotP(sass.PT)),
		wide(t+2, g.bz, imm(4), t+0),
		mov(t+5, rz),
	)
	b.add(isetp("NE", sass.P1, t+4, rz, pt))
	b.add(sass.New("LDG", "E", r(t+5), sass.G64(sass.Reg(t+2), 0)).When(sass.If(sass.P1)))
	b.add(sass.New("SEL", "", r(g.nk), r(t+5), r(g.nk), sass.P(sass.P1)))
	// m0 = cx*Rows >= the sequence's rows (nq*G'): nothing to do
	b.add(
		shl(t+0, g.cx, log2(c.Rows())),
		sass.New("IMAD", "", r(t+15), r(g.nq), cb(pRowG), rz),
	)
	b.add(isetp("GE", sass.P0, t+0, r(t+15), pt))
	b.Exit()
	b.add(sass.New("EXIT", "").When(sass.If(sass.P0)).Yield().Stall(5))
	// mask offsets: lo = nk-nq-winL (winL < 0: -2^30), hi = nk-nq+winR+1
	// (winR < 0: 2^30); query i sees keys [max(0, i+lo), min(nk, i+hi))
	b.add(
		mov(t+1, cb(pWinL)),
		mov(t+2, cb(pWinR)),
		sass.New("IADD3", "", r(t+3), r(g.nk), sass.Neg(r(g.nq)), rz),
		isetp("LT", sass.P1, t+1, rz, pt),
		isetp("LT", sass.P2, t+2, rz, pt),
		sass.New("IADD3", "", r(g.lo), r(t+3), sass.Neg(r(t+1)), rz),
		iadd3(g.hi, r(t+3), r(t+2), imm(1)),
		iadd(g.nkm1, r(g.nk), imm(-1)),
		iadd(t+15, r(t+0), imm(int64(c.Rows()-1))),
	)
	b.add(
		sass.New("SEL", "", r(g.lo), r(g.lo), imm(0xc0000000), sass.NotP(sass.P1)), // -2^30 (the field is unsigned)
		sass.New("SEL", "", r(g.hi), r(g.hi), imm(1<<30), sass.NotP(sass.P2)),
	)
	// the CTA's first and last query (of rows m0 and m0+Rows-1): qLo t+13,
	// qHi t+14
	b.addAll(b.rowSplit(t+13, -1, t+0))
	b.addAll(b.rowSplit(t+14, -1, t+15))
	// key range of the CTA: keyLo = max(0, qLo+lo), keyHi = min(nk,
	// min(qHi, nq-1)+hi); blocks [keyLo>>6, ceil(keyHi/64)), none when
	// keyHi <= keyLo. Full blocks [ceil(max(0, qHi+lo)/64),
	// floor(max(0, min(qLo+hi, nk))/64)).
	b.add(
		iadd(t+4, r(t+13), r(g.lo)),
		imax(t+4, r(t+4), rz),
		iadd(t+6, r(g.nq), imm(-1)),
		imin(t+5, r(t+14), r(t+6)),
		iadd(t+5, r(t+5), r(g.hi)),
		imin(t+5, r(t+5), r(g.nk)),
		shr(g.j, t+4, kbShift(c)),
		iadd(t+7, r(t+5), imm(int64(c.KeyBlock()-1))),
		shr(g.jEnd, t+7, kbShift(c)),
		isetp("LE", sass.P1, t+5, r(t+4), pt),
	)
	b.add(
		sass.New("SEL", "", r(g.jEnd), r(g.j), r(g.jEnd), sass.P(sass.P1)),
		iadd(t+8, r(t+14), r(g.lo)),
		imax(t+8, r(t+8), rz),
		iadd(t+8, r(t+8), imm(int64(c.KeyBlock()-1))),
		shr(g.fLo, t+8, kbShift(c)),
		iadd(t+9, r(t+13), r(g.hi)),
		imin(t+9, r(t+9), r(g.nk)),
		imax(t+9, r(t+9), rz),
		shr(g.fHi, t+9, kbShift(c)),
		// this split's blocks: [max(j, sp*bps), min(jEnd, sp*bps+bps)),
		// empty (no block: O 0, LSE -Inf) when that is
		sass.New("IMAD", "", r(t+15), r(g.sp), cb(pBPS), rz),
	)
	b.add(
		imax(g.j, r(g.j), r(t+15)),
		iadd(t+15, r(t+15), cb(pBPS)),
		mov(t+14, cb(pSplits)),
	)
	// the last split takes every block left (keys past the SeqKV the
	// split was planned for are not lost)
	b.add(iadd(t+14, r(t+14), imm(-1)))
	b.add(isetp("EQ", sass.P1, g.sp, r(t+14), pt))
	b.add(sass.New("SEL", "", r(t+15), r(t+15), imm(1<<30), sass.NotP(sass.P1)))
	b.add(imin(g.jEnd, r(g.jEnd), r(t+15)))
	b.add(imax(g.jEnd, r(g.jEnd), r(g.j)))
	// per-thread row bounds for the masked body: rows m0 + 16w + gq (+8)
	// are queries i_r; A_r = i_r + lo - 2t, B_r = min(i_r + hi, nk) - 2t
	b.add(
		lea(t+10, g.warp, r(g.gq), 4),
		shl(t+12, g.qt, 1),
	)
	b.add(iadd(t+10, r(t+10), r(t+0)))
	b.add(iadd(t+11, r(t+10), imm(8)))
	b.addAll(b.rowSplit(t+14, -1, t+10))
	b.addAll(b.rowSplit(t+15, -1, t+11))
	b.add(mov(t+10, r(t+14)), mov(t+11, r(t+15)))
	for k := 0; k < 2; k++ {
		b.add(
			sass.New("IADD3", "", r(g.ar+k), r(t+10+k), r(g.lo), sass.Neg(r(t+12))),
			iadd(t+13, r(t+10+k), r(g.hi)),
			imin(t+13, r(t+13), r(g.nk)),
			sass.New("IADD3", "", r(g.br+k), r(t+13), sass.Neg(r(t+12)), rz),
		)
	}
	// pointers: kp = K + kbat*kB + krow0*kS + kvh*kH + c*16 (vp likewise);
	// the thread's copy row rr and chunk c (copySlots): rr = tid / cn,
	// c = tid % cn; the decode variant's (fewer threads, rows 8 apart):
	// 32 threads rr = ((tid>>3)&3) | (tid&4), c = tid&3; 64 threads
	// rr = tid>>3, c = tid&7
	switch {
	case c.Decode && c.CTAThreads() == 32:
		b.add(shr(t+1, g.tid, 3), and(t+3, g.tid, 4))
		b.add(and(t+1, t+1, 3))
		b.add(sass.New("LOP3", "LUT", r(g.rr), r(t+1), r(t+3), rz, imm(0xfc), sass.NotP(sass.PT)), and(t+1, g.tid, 3))
	case c.Decode:
		b.add(shr(g.rr, g.tid, 3), and(t+1, g.tid, 7))
	default:
		b.add(shr(g.rr, g.tid, log2(cn)), and(t+1, g.tid, int64(cn-1)))
	}
	b.add(
		shl(t+2, t+1, 4),
		mov(g.kp, cb(pK)),
		mov(g.kp+1, cb(pK+4)),
		mov(g.vp, cb(pV)),
		mov(g.vp+1, cb(pV+4)),
	)
	if c.Paged {
		// the pages carry the batch; btp = BlockTable + b*blocksPerSeq*4
		b.add(mov(g.btp, cb(pBT)), mov(g.btp+1, cb(pBT+4)), mov(t+3, cb(pBPSeq)))
		b.add(sass.New("IMAD", "", r(t+3), r(g.bz), r(t+3), rz))
		b.add(wide(g.btp, t+3, imm(4), g.btp))
	} else {
		b.add(
			wide(g.kp, g.kbat, cb(pKB), g.kp),
			wide(g.vp, g.kbat, cb(pVB), g.vp),
		)
		b.add(
			wide(g.kp, g.krow0, cb(pKS), g.kp),
			wide(g.vp, g.krow0, cb(pVS), g.vp),
		)
	}
	b.add(
		wide(g.kp, g.kvh, cb(pKH), g.kp),
		wide(g.vp, g.kvh, cb(pVH), g.vp),
	)
	b.add(
		wide(g.kp, t+2, imm(1), g.kp),
		wide(g.vp, t+2, imm(1), g.vp),
		// dst = rr*rowB + ((c ^ (rr&7))<<4)
		and(t+3, g.rr, 7),
		xor(t+3, t+3, r(t+1)),
		shl(t+3, t+3, 4),
		lea(g.dst, g.rr, r(t+3), log2(c.RowBytes())),
	)
	// LDSM lane bases. K (non-transposed, B of Q·Kᵀ): key row (lane&7) +
	// 8(lane>>4), chunk 2ks + ((lane>>3)&1): kb = row*rowB + (((lane>>3)&1)
	// ^ (lane&7))*16; ks&3 is an XOR by 32(ks&3), ks>>2 +128 bytes.
	// V (transposed, B of P·V) and Q (A of Q·Kᵀ): row lane&15, chunk 2p +
	// (lane>>4): vb = V offset + row*rowB + ((lane>>4) ^ (lane&7))*16.
	rb := log2(c.RowBytes())
	b.add(
		and(t+4, g.lane, 7),
		shr(t+5, g.lane, 3),
		and(t+5, t+5, 1),
		xor(t+5, t+5, r(t+4)),
		shr(t+6, g.lane, 4),
		lea(t+7, t+6, r(t+4), 3),
		shl(t+7, t+7, rb),
		lea(g.kb, t+5, r(t+7), 4),
		xor(t+6, t+6, r(t+4)),
		shl(t+6, t+6, 4),
		and(t+8, g.lane, 15),
		shl(t+9, t+8, rb),
		iadd3(g.vb, r(t+9), r(t+6), imm(int64(c.KeyBlock()*c.RowBytes()))),
		mov(g.ninf, imm(0xff800000)),
	)
	if c.Wide() {
		// the warp's half of the head dimension: chunks 16hf.. (256 bytes
		// on; the swizzle XORs only the low three chunk bits)
		b.add(lea(g.kb, g.hf, r(g.kb), 8), lea(g.vb, g.hf, r(g.vb), 8))
	}
	// running state
	for k := 0; k < 2; k++ {
		b.add(mov(g.mo+k, r(g.ninf)), mov(g.l+k, rz), mov(g.ms+k, rz))
	}
	for k := 0; k < dw(c)/2; k += 2 {
		b.add(sass.New("CS2R", "", r(g.o+k), sass.SR(sass.SRZero)))
	}
}

// slot is one 16-byte copy of a thread: key (or query) row rr + row,
// chunk c + chunk; alt selects the second shared base (dst ^ 64: chunk
// bit 2 flipped under the swizzle, the 32-thread decode mapping's chunks
// c + 4).
type slot struct {
	row, chunk int
	alt        bool
}

// copySlots lists a thread's copies of a tile of n rows. Every row of a
// thread has the same row&7, so the swizzle (chunk ^ (row&7)) is one XOR
// in dst (two with alt) and the rest immediate offsets. 64-row kernels:
// cn threads a row, rows rr + i·(threads/cn) (a multiple of 8).
// Decode, 32 threads: rows rr + 8i, chunks c + 4v + 8m (v = alt); 64
// threads: rows rr + 8i, chunks c + 8m.
func copySlots(c sm86attn.Config, n int) []slot {
	cn := c.HeadDim / 8
	T := c.CTAThreads()
	var out []slot
	switch {
	case !c.Decode:
		step := T / cn
		for i := 0; i < n/step; i++ {
			out = append(out, slot{row: i * step})
		}
	case T == 32:
		for i := 0; i < n/8; i++ {
			for m := 0; m < cn/8; m++ {
				for v := 0; v < 2; v++ {
					out = append(out, slot{row: 8 * i, chunk: 8*m + 4*v, alt: v == 1})
				}
			}
		}
	default:
		for i := 0; i < n/8; i++ {
			for m := 0; m < cn/8; m++ {
				out = append(out, slot{row: 8 * i, chunk: 8 * m})
			}
		}
	}
	return out
}

// shared is a slot's shared-memory offset from its base register (dst or
// its alt), rows of rb bytes.
func (s slot) shared(rb int) int64 { return int64(s.row*rb + 16*(s.chunk&^7)) }

// rowsOf groups slots by row offset, in order.
func rowsOf(sl []slot) [][]slot {
	var out [][]slot
	for _, x := range sl {
		if len(out) > 0 && out[len(out)-1][0].row == x.row {
			out[len(out)-1] = append(out[len(out)-1], x)
			continue
		}
		out = append(out, []slot{x})
	}
	return out
}

// copyRows emits the copies of one tile of K or V (tensor base pair ptr,
// row stride parameter strideAt) to shared offset off of the copy
// destinations dst / alt: the thread's slots of the block starting at
// key row j0 (a register), rows clamped to the last key (rows past it
// are read again; the masked body gives them probability zero).
func (b *builder) copyRows(ptr int, strideAt int64, j0 int, limit int, off int64, dst, alt int) []sass.Inst {
	g, c := b.g, b.c
	var out []sass.Inst
	for i, rs := range rowsOf(copySlots(c, c.KeyBlock())) {
		tp := g.tp + 2*(i%4)
		row := g.t + 12 + i%4
		out = append(out,
			iadd3(row, r(j0), r(g.rr), imm(int64(rs[0].row))),
			imin(row, r(row), r(limit)),
			wide(tp, row, cb(strideAt), ptr),
		)
		for _, x := range rs {
			base := dst
			if x.alt {
				base = alt
			}
			out = append(out, sass.New("LDGSTS", "E.BYPASS.128", sass.Shared(sass.Reg(base), 0, off+x.shared(c.RowBytes())), sass.G64(sass.Reg(tp), int64(16*x.chunk))))
		}
	}
	return out
}

// copyBlock returns the copies of one K and V block (the thread's slots
// of key rows j0.., clamped to the last key) to shared dst / alt (K at
// dst, V KeyBlock rows on), the LDGSTS (and the paged variant's
// block-table LDG) under guard. Paged: first the page of every row (LDG
// into t+i, issued early so that the copies find them), then per row the
// K and V copies from page*batchStride + (row & mask)*seqStride.
func (b *builder) copyBlock(j0, dst, alt int, guard sass.Cond) []sass.Inst {
	g, c := b.g, b.c
	rb := c.RowBytes()
	kb := int64(c.KeyBlock() * rb)
	if !c.Paged {
		out := b.copyRows(g.kp, pKS, j0, g.nkm1, 0, dst, alt)
		out = append(out, b.copyRows(g.vp, pVS, j0, g.nkm1, kb, dst, alt)...)
		for k := range out {
			if out[k].Op == "LDGSTS" {
				out[k] = out[k].When(guard)
			}
		}
		return out
	}
	t := g.t
	rows := rowsOf(copySlots(c, c.KeyBlock()))
	var out []sass.Inst
	for i, rs := range rows {
		tp := g.tp + 2*(i%4)
		row := t + 12 + i%4
		out = append(out,
			iadd3(row, r(j0), r(g.rr), imm(int64(rs[0].row))),
			imin(row, r(row), r(g.nkm1)),
			sass.New("SHF", "R.U32.HI", r(row), rz, cb(pPShift), r(row)),
			wide(tp, row, imm(4), g.btp),
			sass.New("LDG", "E", r(t+i), sass.G64(sass.Reg(tp), 0)).When(guard),
		)
	}
	for i, rs := range rows {
		row := t + 12 + i%4
		tk, tv := g.tp+2*(i%2), g.tp+4+2*(i%2)
		out = append(out,
			iadd3(row, r(j0), r(g.rr), imm(int64(rs[0].row))),
			imin(row, r(row), r(g.nkm1)),
			lop3(row, row, cb(pPMask), 0xc0),
			wide(tk, row, cb(pKS), g.kp),
			wide(tv, row, cb(pVS), g.vp),
			wide(tk, t+i, cb(pKB), tk),
			wide(tv, t+i, cb(pVB), tv),
		)
		for _, x := range rs {
			base := dst
			if x.alt {
				base = alt
			}
			off := x.shared(rb)
			out = append(out,
				sass.New("LDGSTS", "E.BYPASS.128", sass.Shared(sass.Reg(base), 0, off), sass.G64(sass.Reg(tk), int64(16*x.chunk))).When(guard),
				sass.New("LDGSTS", "E.BYPASS.128", sass.Shared(sass.Reg(base), 0, off+kb), sass.G64(sass.Reg(tv), int64(16*x.chunk))).When(guard),
			)
		}
	}
	return out
}

// prologue: the Q tile (stage 1) and the first K/V block (stage 0), one
// group; wait; Q fragments into registers.
func (b *builder) prologue() {
	g, c := b.g, b.c
	t := g.t
	// Q pointer at the thread's chunk: Q + qbat*qB + qrow0*qS + c*16; the
	// packed row r (clamped to the last, nq*G' - 1) adds qi*qS + head*qH
	b.add(
		mov(t+0, cb(pQ)),
		mov(t+1, cb(pQ+4)),
		shl(t+11, g.cx, log2(c.Rows())),
		sass.New("IMAD", "", r(t+9), r(g.nq), cb(pRowG), rz),
	)
	b.add(iadd(t+9, r(t+9), imm(-1)))
	b.add(wide(t+0, g.qbat, cb(pQB), t+0))
	b.add(wide(t+0, g.qrow0, cb(pQS), t+0))
	b.add(wide(t+0, t+2, imm(1), t+0)) // t+2 = c*16 from setup
	// dst of Q copies: the stage-1 region (same swizzle, rows of rowB);
	// t+5 its alt (dst ^ 64)
	b.add(iadd(t+10, r(g.dst), imm(int64(c.StageBytes()))))
	b.add(xor(t+5, t+10, imm(64)))
	for i, rs := range rowsOf(copySlots(c, c.Rows())) {
		tp := g.tp + 2*(i%4)
		row := t + 12 + i%4
		b.add(iadd3(row, r(t+11), r(g.rr), imm(int64(rs[0].row))))
		b.add(imin(row, r(row), r(t+9)))
		b.addAll(b.rowSplit(t+3, t+4, row))
		b.add(wide(tp, t+3, cb(pQS), t+0))
		b.add(wide(tp, t+4, cb(pQH), tp))
		for _, x := range rs {
			base := t + 10
			if x.alt {
				base = t + 5
			}
			b.addSB(sbMisc, sass.New("LDGSTS", "E.BYPASS.128", sass.Shared(sass.Reg(base), 0, x.shared(c.RowBytes())), sass.G64(sass.Reg(tp), int64(16*x.chunk))))
		}
	}
	b.add(sass.New("LDGDEPBAR", "").WriteSB(sass.SB0))
	// first K/V block: rows from j*64, stage 0 (its own group, which the
	// first body's DEPBAR waits for); blocks none: skip nothing
	// (the copies are clamped and harmless); nk == 0: no copies at all
	b.add(shl(t+8, g.j, kbShift(c)), mov(g.st, rz), xor(t+11, g.dst, imm(64)))
	b.add(isetp("LT", sass.P3, g.nkm1, rz, pt))
	b.add(b.copyBlock(t+8, g.dst, t+11, sass.IfNot(sass.P3))...)
	b.add(sass.New("LDGDEPBAR", "").WriteSB(sass.SB0))
	b.add(sass.New("DEPBAR", "LE", sass.SB(0), imm(1)).Yield())
	b.add(sass.New("BAR", "SYNC", imm(0)).Yield())
	// Q lane base: the V lane base moved to the Q tile (stage 1) and the
	// warp's 16 rows: vb - 64 rows + StageBytes + 16w rows
	b.add(shl(t+3, g.warp, 4+log2(c.RowBytes())))
	b.add(iadd3(t+3, r(t+3), r(g.vb), imm(int64(c.StageBytes()-c.KeyBlock()*c.RowBytes()))))
	for ks := 0; ks < dw(c)/16; ks++ {
		// chunk 2ks + (lane>>4): XOR 32(ks&3) then +128(ks>>2)
		if ks%4 == 0 {
			b.add(iadd(t+14, r(t+3), imm(int64(128*(ks/4)))))
		} else {
			b.add(xor(t+13, t+14, imm(int64(32*(ks%4)))))
		}
		a := t + 14
		if ks%4 != 0 {
			a = t + 13
		}
		b.addSB(sass.SB4, sass.New("LDSM", "16.M88.4", r(g.q+4*ks), sass.Shared(sass.Reg(a), 0, 0)))
	}
}

// dispatch: the block loop. At the label "disp" nothing is pending.
func (b *builder) dispatch() {
	g := b.g
	b.label("disp")
	b.add(
		isetp("GE", sass.P0, g.j, r(g.jEnd), pt),
		isetp("GE", sass.P1, g.j, r(g.fLo), pt),
	)
	b.add(isetp("LT", sass.P1, g.j, r(g.fHi), sass.P(sass.P1)))
	b.bra("epi", sass.If(sass.P0))
	b.bra("full", sass.If(sass.P1))
	// masked loop
	b.label("masked")
	start := len(b.Prog)
	b.body(true)
	// next: j < jEnd and not full
	b.add(isetp("GE", sass.P1, g.j, r(g.fLo), pt))
	b.add(isetp("LT", sass.P1, g.j, r(g.fHi), sass.P(sass.P1)))
	b.add(isetp("LT", sass.P0, g.j, r(g.jEnd), sass.NotP(sass.P1)))
	b.bra("masked", sass.If(sass.P0))
	b.Loops = append(b.Loops, [2]int{start, len(b.Prog) - 1})
	b.bra("disp", sass.Cond{})
	// unmasked loop
	b.label("full")
	start = len(b.Prog)
	b.body(false)
	b.add(isetp("LT", sass.P0, g.j, r(g.fHi), pt))
	b.add(isetp("LT", sass.P0, g.j, r(g.jEnd), sass.P(sass.P0)))
	b.bra("full", sass.If(sass.P0))
	b.Loops = append(b.Loops, [2]int{start, len(b.Prog) - 1})
	b.bra("disp", sass.Cond{})
}

// hmma emits one HMMA of the running group (SB1..3 rotate every 4).
func (b *builder) hmma(d, a, bb, cc sass.Operand) {
	sb := sass.Scoreboard(int(sass.SB1) + b.hmmaG%3)
	b.addSB(sb, sass.New("HMMA", hmmaMods(b.c), d, a, bb, cc).Stall(4))
	b.hmmaN++
	if b.hmmaN%4 == 0 {
		b.hmmaG++
	}
}

// body emits one key block: top barrier, the copies of the next block,
// S = Q·Kᵀ, the (masked) online softmax, O += P·V, j++.
func (b *builder) body(masked bool) {
	g, c := b.g, b.c
	t := g.t
	dw := dw(c)
	rb := c.RowBytes()
	sb := c.StageBytes()
	nt, nkk := nTiles(c), nKK(c)
	b.add(sass.New("DEPBAR", "LE", sass.SB(0), imm(0)).Yield())
	b.add(sass.New("BAR", "SYNC", imm(0)).Yield())
	// addresses of this stage; next stage for the copies
	b.add(
		iadd(g.ka, r(g.kb), r(g.st)),
		iadd(g.va, r(g.vb), r(g.st)),
		xor(t+10, g.st, imm(int64(sb))),
		shl(t+8, g.j, kbShift(c)),
	)
	b.add(
		iadd(t+9, r(g.dst), r(t+10)),
		iadd(t+8, r(t+8), imm(int64(c.KeyBlock()))),
	)
	if c.Decode && c.CTAThreads() == 32 {
		b.add(xor(t+11, t+9, imm(64))) // the alt copy base (copySlots)
	}
	for k := 1; k < 4; k++ {
		b.add(xor(g.ka+k, g.ka, imm(int64(32*k))), xor(g.va+k, g.va, imm(int64(32*k))))
	}
	if b.dumpAt != 0 {
		b.add(mov(g.tp, imm(int64(b.dumpAt&0xffffffff))), mov(g.tp+1, imm(int64(b.dumpAt>>32))))
		b.add(wide(g.tp, g.tid, imm(64), g.tp))
		for k, rg := range g.dumpRegs() {
			b.add(sass.New("STG", "E", sass.G64(sass.Reg(g.tp), int64(4*k)), r(rg)))
		}
		b.add(sass.New("EXIT", "").Yield())
	}
	// batches of 4 LDSM.x4: S batches (K fragments: n-tile pairs p at
	// k-step ks, kpb k-steps a batch), then P·V batches (4 LDSM.T of V
	// each: kk, n-tile pairs)
	nS := dw / 16
	np := nt / 2  // n-tile pairs of S a k-step
	kpb := 4 / np // k-steps a batch
	nSB := nS / kpb
	per := dw / 64 // P·V batches per kk
	nV := nkk * per
	var batches [][]sass.Inst
	for B := 0; B < nSB; B++ {
		var bt []sass.Inst
		for k := 0; k < 4; k++ {
			ks, p := B*kpb+k/np, k%np
			dst := g.f + 16*(B%2) + 4*k
			bt = append(bt, sass.New("LDSM", "16.M88.4", r(dst), sass.Shared(sass.Reg(g.ka+ks%4), 0, int64(128*(ks/4)+16*p*rb))))
		}
		batches = append(batches, bt)
	}
	for v := 0; v < nV; v++ {
		kk := v / per
		var bt []sass.Inst
		for q := 0; q < 4; q++ {
			pp := (v%per)*4 + q // pair of n-tiles (d columns 16pp..16pp+15)
			dst := g.f + 16*((nSB+v)%2) + 4*q
			bt = append(bt, sass.New("LDSM", "16.MT88.4", r(dst), sass.Shared(sass.Reg(g.va+pp%4), 0, int64(128*(pp/4)+16*kk*rb))))
		}
		batches = append(batches, bt)
	}
	issue := func(k int) {
		if k < len(batches) {
			b.addSB(sbLDSM, batches[k]...)
		}
	}
	// copies of block j+1 into the other stage, spread over the S phase
	fill := b.copyBlock(t+8, t+9, t+11, sass.Cond{})
	fill = append(fill, sass.New("LDGDEPBAR", "").WriteSB(sass.SB0))
	issue(0)
	issue(1)
	// The paged variant's block-table loads go first, 3 a HMMA; its
	// copies wait until the second half of the S phase so that the loads
	// (global latency) have landed; the others' copies go 3 a HMMA.
	nLDG := 0
	for k, i := range fill {
		if i.Op == "LDG" {
			nLDG = k + 1
		}
	}
	half := nS * nt / 2 // half the S phase's HMMAs
	startCopies, rate := 0, 3
	if nLDG > 0 {
		startCopies = half
		rate = (len(fill) - nLDG + half - 3) / (half - 2)
	}
	fi, hm := 0, 0
	popFill := func(n int) {
		for ; n > 0 && fi < len(fill); n-- {
			if fi == nLDG && hm < startCopies {
				return
			}
			b.add(fill[fi])
			fi++
		}
	}
	// S = Q·Kᵀ: batch B = ks/kpb, HMMA (ks, n) for n < nt; batch B+1
	// (overwriting batch B-1's registers, whose HMMAs have all issued)
	// after the fourth HMMA of batch B
	for ks := 0; ks < nS; ks++ {
		B := ks / kpb
		for n := 0; n < nt; n++ {
			bf := g.f + 16*(B%2) + 4*(np*(ks%kpb)+n/2) + 2*(n%2)
			cc := r(g.s + 4*n)
			if ks == 0 {
				cc = rz
			}
			b.hmma(r(g.s+4*n), r(g.q+4*ks), r(bf), cc)
			if (ks%kpb)*nt+n == 3 && B >= 1 {
				issue(B + 1)
			}
			hm++
			if fi < nLDG || hm <= startCopies {
				popFill(3)
			} else {
				popFill(rate)
			}
		}
	}
	popFill(len(fill))
	if c.Wide() {
		b.exchange()
	}
	fills := b.softmax(masked)
	// O += P·V: batch v (kk = v/per), HMMA (kk, n-tile); the P A fragment
	// of kk is the packed S registers of n-tile 2kk (4 registers). The
	// exponentials, sums and packs of kk >= 1 are fillers between the
	// HMMAs of kk-1 (all of kk's before kk's first HMMA); O tile nt is
	// rescaled by alpha just before its first HMMA.
	perHMMA := (len(fills[1]) + 8*per - 1) / (8 * per)
	var queue []sass.Inst
	for v := 0; v < nV; v++ {
		kk := v / per
		if v%per == 0 {
			b.add(queue...)
			queue = append([]sass.Inst{}, fills[kk+1]...)
		}
		for q := 0; q < 8; q++ {
			ot := (v%per)*8 + q // n-tile of O (8 columns)
			bf := g.f + 16*((nSB+v)%2) + 4*(q/2) + 2*(q%2)
			o := r(g.o + 4*ot)
			if kk == 0 {
				for e := 0; e < 4; e++ {
					b.add(sass.New("FMUL", "", r(g.o+4*ot+e), r(g.o+4*ot+e), r(g.al+e/2)))
				}
			}
			b.hmma(o, r(g.s+8*kk), r(bf), o)
			if q == 3 {
				issue(nSB + v + 1)
			}
			n := min(perHMMA, len(queue))
			b.add(queue[:n]...)
			queue = queue[n:]
		}
	}
	b.add(queue...)
	b.add(xor(g.st, g.st, imm(int64(sb))), iadd(g.j, r(g.j), imm(1)))
}

// exchange (head dimension 256): the warp's partial S (its half of the
// head dimension) to its shared area, a barrier, the partner warp's
// (w ^ rowTiles) partial added: both warps of a row tile then hold the same full S
// (a+b = b+a exactly). The next write of the area follows the next
// block's top barrier, after the partner's reads have landed.
func (b *builder) exchange() {
	g, c := b.g, b.c
	// the partner's partial lands in the fragment registers of the odd
	// batch (free: the last S batch's HMMAs have issued, the first P·V
	// batch is in the even half; 4-aligned for LDS.128)
	x := g.f + 16
	for n := 0; n < nTiles(c); n++ {
		b.add(sass.New("STS", "128", sass.Shared(sass.Reg(g.xs), 0, int64(512*n)), r(g.s+4*n)))
	}
	b.add(sass.New("BAR", "SYNC", imm(0)).Yield())
	// the partner's area: ka is free (this block's K reads have landed)
	b.add(xor(g.ka, g.xs, imm(int64(c.RowTiles()*sm86attn.ExchangeBytes))))
	for n := 0; n < nTiles(c); n++ {
		b.add(sass.New("LDS", "128", r(x+4*n), sass.Shared(sass.Reg(g.ka), 0, int64(512*n))))
	}
	for n := 0; n < nTiles(c); n++ {
		for e := 0; e < 4; e++ {
			b.add(sass.New("FADD", "", r(g.s+4*n+e), r(g.s+4*n+e), r(x+4*n+e)))
		}
	}
}

// softmax: the block's S (row g: c0,c1; row g+8: c2,c3 of each n-tile)
// to P in place (packed), with the running max, sum and rescale of O.
func (b *builder) softmax(masked bool) [][]sass.Inst {
	g, c := b.g, b.c
	nt, nkk := nTiles(c), nKK(c)
	t := g.t
	s := func(n, e int) int { return g.s + 4*n + e }
	if c.SoftCap {
		for n := 0; n < nt; n++ {
			for e := 0; e < 4; e++ {
				b.add(sass.New("FMUL", "", r(s(n, e)), r(s(n, e)), cb(pCapIn)))
			}
		}
		for n := 0; n < nt; n++ {
			for e := 0; e < 4; e++ {
				b.add(mufu("TANH", s(n, e), s(n, e)))
			}
		}
	}
	if masked {
		// A_r, B_r relative to this block: col = 8n + 2t + e sees iff
		// A_r <= 8n+e < B_r (A, B already minus 2t)
		b.add(shl(t+0, g.j, kbShift(c)))
		for k := 0; k < 2; k++ {
			b.add(
				sass.New("IADD3", "", r(g.ma+k), r(g.ar+k), sass.Neg(r(t+0)), rz),
				sass.New("IADD3", "", r(g.mb+k), r(g.br+k), sass.Neg(r(t+0)), rz),
			)
		}
		for n := 0; n < nt; n++ {
			for e := 0; e < 4; e++ {
				row := e / 2
				col := int64(8*n + e%2)
				pr := sass.Pred(e % 4)
				b.add(isetp("LE", pr, g.ma+row, imm(col), pt))
				b.add(isetp("GT", pr, g.mb+row, imm(col), sass.P(pr)))
				b.add(sass.New("FSEL", "", r(s(n, e)), r(s(n, e)), r(g.ninf), sass.P(pr)))
			}
		}
	}
	// row maxima: tree over the 16 values of each row, then the quad
	for row := 0; row < 2; row++ {
		for n := 0; n < nt; n++ {
			b.add(fmax(t+8*row+n, s(n, 2*row), s(n, 2*row+1)))
		}
	}
	for w := nt / 2; w >= 1; w /= 2 {
		for row := 0; row < 2; row++ {
			for k := 0; k < w; k++ {
				b.add(fmax(t+8*row+k, t+8*row+k, t+8*row+k+w))
			}
		}
	}
	for _, lm := range []int64{1, 2} {
		for row := 0; row < 2; row++ {
			b.add(sass.New("SHFL", "BFLY", pt, r(t+8*row+1), r(t+8*row), imm(lm), imm(0x1f)))
		}
		for row := 0; row < 2; row++ {
			b.add(fmax(t+8*row, t+8*row, t+8*row+1))
		}
	}
	for row := 0; row < 2; row++ {
		m := t + 8*row
		b.add(
			fmax(m, m, g.mo+row),
			// msafe = m == -inf ? 0 : m; nm = -msafe*c
			sass.New("FSETP", "EQ.AND", sass.P(sass.Pred(row)), pt, r(m), r(g.ninf), pt),
		)
		b.add(
			sass.New("FSEL", "", r(g.ms+row), rz, r(m), sass.P(sass.Pred(row))),
		)
		b.add(
			sass.New("FMUL", "", r(g.nm+row), r(g.ms+row), sass.Neg(cb(pC))),
		)
		b.add(
			sass.New("FFMA", "", r(g.al+row), r(g.mo+row), cb(pC), r(g.nm+row)),
			mov(g.mo+row, r(m)),
		)
		b.add(mufu("EX2", g.al+row, g.al+row))
	}
	// per kk (n-tiles 2kk, 2kk+1): p = exp2(s*c - msafe*c), the row sums
	// (into t+0, t+8), the pack of P in place: A fragment of kk =
	// {S(2kk).c0c1, S(2kk).c2c3, S(2kk+1).c0c1, S(2kk+1).c2c3} into
	// S(2kk)'s four registers. kk 0 now; the others are returned as fillers
	// (fills[kk+1] precede kk+1's HMMAs; fills[nkk] the l update).
	mods := "PACK_AB"
	if c.In == tile.BF16 {
		mods = "BF16.PACK_AB"
	}
	fills := make([][]sass.Inst, nkk+1)
	for kk := 0; kk < nkk; kk++ {
		var f []sass.Inst
		n0, n1 := 2*kk, 2*kk+1
		for _, n := range []int{n0, n1} {
			for e := 0; e < 4; e++ {
				f = append(f, sass.New("FFMA", "", r(s(n, e)), r(s(n, e)), cb(pC), r(g.nm+e/2)))
			}
		}
		for _, n := range []int{n0, n1} {
			for e := 0; e < 4; e++ {
				f = append(f, mufu("EX2", s(n, e), s(n, e)))
			}
		}
		for row := 0; row < 2; row++ {
			acc := t + 8*row
			for k, n := range []int{n0, n1} {
				if kk == 0 && k == 0 {
					f = append(f, sass.New("FADD", "", r(acc), r(s(n, 2*row)), r(s(n, 2*row+1))))
					continue
				}
				f = append(f, sass.New("FADD", "", r(acc), r(acc), r(s(n, 2*row))), sass.New("FADD", "", r(acc), r(acc), r(s(n, 2*row+1))))
			}
		}
		src := [4][2]int{{s(n0, 1), s(n0, 0)}, {s(n0, 3), s(n0, 2)}, {s(n1, 1), s(n1, 0)}, {s(n1, 3), s(n1, 2)}}
		for k := 0; k < 4; k++ {
			f = append(f, sass.New("F2FP", mods, r(g.s+8*kk+k), r(src[k][0]), r(src[k][1])))
		}
		fills[kk] = f
	}
	for row := 0; row < 2; row++ {
		fills[nkk] = append(fills[nkk], sass.New("FFMA", "", r(g.l+row), r(g.l+row), r(g.al+row), r(t+8*row)))
	}
	b.add(fills[0]...)
	return fills
}

// epilogue: quad sums, O / l, stores of O and LSE.
func (b *builder) epilogue() {
	g, c := b.g, b.c
	t := g.t
	b.label("epi")
	for _, lm := range []int64{1, 2} {
		for row := 0; row < 2; row++ {
			b.add(sass.New("SHFL", "BFLY", pt, r(t+row), r(g.l+row), imm(lm), imm(0x1f)))
		}
		for row := 0; row < 2; row++ {
			b.add(sass.New("FADD", "", r(g.l+row), r(g.l+row), r(t+row)))
		}
	}
	for row := 0; row < 2; row++ {
		b.add(
			sass.New("FSETP", "GT.AND", sass.P(sass.Pred(row)), pt, r(g.l+row), rz, pt),
			mufu("RCP", t+2+row, g.l+row),
		)
		b.add(sass.New("FSEL", "", r(t+2+row), r(t+2+row), rz, sass.P(sass.Pred(row))))
		b.add(mufu("LG2", t+4+row, g.l+row))
		b.add(
			sass.New("FFMA", "", r(t+4+row), r(g.ms+row), cb(pC), r(t+4+row)),
		)
		b.add(sass.New("FMUL", "", r(t+4+row), r(t+4+row), sass.F32(float32(math.Ln2))))
	}
	// rows i_r = m0 + 16w + gq (+8): O stored where valid (P2, P3); the
	// LSE by the quad's first lane where LSE != 0 too (P4, P5)
	b.add(
		shl(t+6, g.cx, log2(c.Rows())),
		lea(t+7, g.warp, r(g.gq), 4),
		mov(g.tp+6, cb(pLSE)),
		mov(g.tp+7, cb(pLSE+4)),
	)
	b.add(
		iadd(t+6, r(t+6), r(t+7)),
		sass.New("LOP3", "LUT", r(t+9), r(g.tp+6), r(g.tp+7), rz, imm(0xfc), sass.NotP(sass.PT)),
		isetp("EQ", sass.P0, g.qt, rz, pt),
	)
	b.add(
		iadd(t+7, r(t+6), imm(8)),
		isetp("NE", sass.P0, t+9, rz, sass.P(sass.P0)),
	)
	if c.Wide() {
		// the LSE by the half-0 warp only
		b.add(isetp("EQ", sass.P0, g.hf, rz, sass.P(sass.P0)))
	}
	b.add(sass.New("IMAD", "", r(t+12), r(g.nq), cb(pRowG), rz))
	b.add(
		isetp("LT", sass.P2, t+6, r(t+12), pt),
		isetp("LT", sass.P3, t+7, r(t+12), pt),
		isetp("LT", sass.P4, t+6, r(t+12), sass.P(sass.P0)),
		isetp("LT", sass.P5, t+7, r(t+12), sass.P(sass.P0)),
	)
	// packed rows to (query, head): t+6/t+7 queries, t+12/t+13 heads
	b.addAll(b.rowSplit(t+14, t+12, t+6))
	b.addAll(b.rowSplit(t+15, t+13, t+7))
	b.add(mov(t+6, r(t+14)), mov(t+7, r(t+15)))
	// O row pointers: O + qbat*oB + (qrow0 + i)*oS + head*oH + 2t*esz
	esz := c.Out.Size()
	b.add(mov(g.tp, cb(pO)), mov(g.tp+1, cb(pO+4)), shl(t+8, g.qt, log2(2*esz)))
	if c.Wide() {
		// the warp's half of the columns
		b.add(sass.New("IMAD", "", r(t+8), r(g.hf), imm(int64(dw(c)*esz)), r(t+8)))
	}
	b.add(wide(g.tp, g.qbat, cb(pOB), g.tp))
	b.add(wide(g.tp, g.sp, cb(pOSplit), g.tp))
	b.add(wide(g.tp, t+8, imm(1), g.tp))
	b.add(iadd(t+6, r(t+6), r(g.qrow0)), iadd(t+7, r(t+7), r(g.qrow0)))
	b.add(wide(g.tp+2, t+6, cb(pOS), g.tp), wide(g.tp+4, t+7, cb(pOS), g.tp))
	b.add(wide(g.tp+2, t+12, cb(pOH), g.tp+2), wide(g.tp+4, t+13, cb(pOH), g.tp+4))
	for nt := 0; nt < dw(c)/8; nt++ {
		for row := 0; row < 2; row++ {
			o := g.o + 4*nt + 2*row
			b.add(
				sass.New("FMUL", "", r(o), r(o), r(t+2+row)),
				sass.New("FMUL", "", r(o+1), r(o+1), r(t+2+row)),
			)
			ptr := sass.Reg(g.tp + 2 + 2*row)
			off := int64(nt * 8 * esz)
			pr := sass.If(sass.Pred(2 + row))
			switch c.Out {
			case tile.F32:
				b.add(sass.New("STG", "E.64", sass.G64(ptr, off), r(o)).When(pr))
			case tile.F16, tile.BF16:
				mods := "PACK_AB"
				if c.Out == tile.BF16 {
					mods = "BF16.PACK_AB"
				}
				b.add(sass.New("F2FP", mods, r(t+10+row), r(o+1), r(o)))
				b.add(sass.New("STG", "E", sass.G64(ptr, off), r(t+10+row)).When(pr))
			}
		}
	}
	// LSE + qbat*lB + head*lH + (qrow0+i)*4
	b.add(wide(g.tp+6, g.qbat, cb(pLB), g.tp+6))
	b.add(wide(g.tp+6, g.sp, cb(pLSplit), g.tp+6))
	b.add(wide(g.tp+2, t+6, imm(4), g.tp+6), wide(g.tp+4, t+7, imm(4), g.tp+6))
	b.add(wide(g.tp+2, t+12, cb(pLH), g.tp+2), wide(g.tp+4, t+13, cb(pLH), g.tp+4))
	for row := 0; row < 2; row++ {
		b.add(sass.New("STG", "E", sass.G64(sass.Reg(g.tp+2+2*row), 0), r(t+4+row)).When(sass.If(sass.Pred(4 + row))))
	}
	b.Exit()
	b.add(sass.New("EXIT", "").Yield())
	b.bra("self", sass.Cond{})
	b.LabelAt("self", len(b.Prog)-1)
}

// Code returns the program's words.
func (p *Program) Code() ([]byte, error) { return sass.Encode(p.Insts) }

// Kernel returns the cubin description of the program.
func (p *Program) Kernel() (cubin.Kernel, error) {
	return sasskit.Kernel(p.Insts, cubin.Kernel{
		Name:          p.Config.Name(),
		Params:        sm86attn.Params(),
		Registers:     registers(p.Config),
		Barriers:      1,
		DynamicShared: true,
		MaxThreads:    [3]int{p.Config.CTAThreads(), 1, 1},
		ExitOffsets:   p.Exits,
	})
}
