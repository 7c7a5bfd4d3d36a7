// Package gen generates the sm86mm kernels (see package sm86mm for what
// they compute and the variants): the program instruction by instruction
// in an order chosen by hand (the interleaving slots of the main loop are
// listed in mainLoop); the scoreboards and wait masks are chosen by hand;
// the stall counts are the hand-given minimums (HMMA to HMMA 8 cycles,
// ptxas's spacing) raised where a fixed-latency producer needs more, using
// the sass latency table (the kit's FixStalls). sched.Check verifies the result.
// Only go generate and the tests link it.
package gen

import (
	"fmt"
	"slices"

	"github.com/tcrt-go/tcrt/kernels/internal/sasskit"
	"github.com/tcrt-go/tcrt/kernels/sm86mm"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/sass/sched"
	"github.com/tcrt-go/tcrt/tile"
)

func bOffset(g sm86mm.Geometry) int { return g.TM * sm86mm.TileK * 2 }
func chunksB(g sm86mm.Geometry) int { return g.TN / 8 }
func copiesA(g sm86mm.Geometry) int { return g.TM * 4 / g.Threads() }
func copiesB(g sm86mm.Geometry) int { return sm86mm.TileK * chunksB(g) / g.Threads() }
func ringPow2(g sm86mm.Geometry) bool {
	s := sm86mm.Stages * g.StageBytes()
	return s&(s-1) == 0
}

// Parameter offsets in constant bank 0.
const (
	pD     = cubin.ParamBase + 0x00
	pA     = cubin.ParamBase + 0x08
	pB     = cubin.ParamBase + 0x10
	pM     = cubin.ParamBase + 0x18
	pN     = cubin.ParamBase + 0x1c
	pK     = cubin.ParamBase + 0x20
	pLDA   = cubin.ParamBase + 0x24
	pLDB   = cubin.ParamBase + 0x28
	pLDD   = cubin.ParamBase + 0x2c
	pAlpha = cubin.ParamBase + 0x30
	pBeta  = cubin.ParamBase + 0x34
	pLDC   = cubin.ParamBase + 0x38
	pAct   = cubin.ParamBase + 0x3c
	pC     = cubin.ParamBase + 0x40
	pBias  = cubin.ParamBase + 0x48
	pKC    = cubin.ParamBase + 0x50
	pKOff  = cubin.ParamBase + 0x54
)

// Register map.
const (
	rAcc  = 64 // 16 tiles x 4: acc(mi,ni) = rAcc + 4*(4*mi+ni)
	rF0A  = 8  // fragments, buffer 0: A(mi) = rF0A+4*mi, B = rF0B (ni: +2*ni)
	rF0B  = 24
	rF1A  = 32
	rF1B  = 48
	rBase = 128 // scalars from here
)

func acc(mi, ni int) sass.Reg { return sass.Reg(rAcc + 4*(4*mi+ni)) }

// Scalar registers.
const (
	rTid = rBase + iota
	rCtaX
	rCtaY
	rLane
	rWarp
	rWM
	rWN
	rM0
	rN0
	rT0
	rT1
	rT2
	rT3
	rDA  // A copy destination, lane part
	rDB  // B copy destination, lane part (includes the B offset)
	rKA0 // remaining-K counters that also carry row/column validity (4 A, 4 B)
	_
	_
	_
	rKB0
	_
	_
	_
	rBStep
	rLA0 // LDSM lane bases
	rLA1
	rLB0
	rLB1
	rAA0 // LDSM addresses (lane base + read stage)
	rAA1
	rAB0
	rAB1
	rSt  // read stage offset
	rStW // write stage offset
	rDstA
	rDstB
	rKT   // tiles left
	rKeff // K range of this CTA (split-K)
	rKOff // K offset of this CTA (split-K)
	rCtaZ
	rPA0 // 64-bit pointers (4 A, 4 B): even registers
	_
	_
	_
	_
	_
	_
	_
	rPB0
	_
	_
	_
	_
	_
	_
	_
	rLA2 // TransA: LDSM lane bases and addresses of mi 2, 3
	rLA3
	rAA2
	rAA3
	rAStep // TransA: A pointer step a K tile (32 lda elements, bytes)
	rLast
)

// Epilogue registers: the pipeline's, dead after the main loop.
const (
	rS0    = rKA0 // staging STS addresses, one per ni (4)
	rWBase = rKB0 // the warp's staging area
	rRow   = rKB0 + 1
	rGRow  = rKB0 + 2
	rEIt   = rKB0 + 3
	rCnt   = rLA0 // N - first column of the thread's 4
	rCntS  = rLA1 // scalar store count (0 where the 16-byte store is used)
	rCntC  = rLB0 // scalar C load count
	rFloor = rLB1 // ReLU floor: 0, else -inf
	rVD    = rAA0 // vector D store allowed
	rVC    = rAA1 // vector C load allowed
	rCol   = rAB0 // first column of the thread's 4
	rAct   = rAB1
	rQ     = rDA // the thread's 16-byte chunk of a staged row
	rPD    = rPA0
	rPC    = rPA0 + 2
	rPBias = rPA0 + 4
	// f32 values: bias R0..R3, C R4..R7, staged accumulators R8..R11,
	// f16/bf16 packs R12..R15, activation temporaries R16..R31.
	rBiasV = 0
	rCV    = 4
	rV     = 8
	rW     = 12
	rTmp   = 16
)

// Registers is the register count recorded in the cubin (ptxas's rule:
// highest index + 3).
const Registers = rLast - 1 + 3

// builder is the kit's builder (Loops: [first, backward BRA] of every
// loop, in program order) with the variant it generates.
type builder struct {
	sasskit.Builder
	c sm86mm.Config
	g sm86mm.Geometry
}

func (b *builder) add(is ...sass.Inst) { b.Add(is...) }

// Program is a generated kernel: the instructions, where the main loop
// starts and ends (Loop[0] is the first instruction of the body, Loop[1]
// the backward BRA), the epilogue's row loop, and the EXIT offsets.
type Program struct {
	Config sm86mm.Config
	Insts  sass.Program
	Loop   [2]int
	// EpiLoop is the epilogue's loop over staged rows.
	EpiLoop [2]int
	Exits   []int
}

func hmmaMods(c sm86mm.Config) string {
	if c.In == tile.BF16 {
		return "16816.F32.BF16"
	}
	return "16816.F32"
}

// ldsmSet returns the six LDSM.x4 of one fragment buffer (ks: which 16 of
// the tile's 32 k), each setting write scoreboard sb.
func (b *builder) ldsmSet(a, bb int, ks int, sb sass.Scoreboard) []sass.Inst {
	var out []sass.Inst
	aRegs := []int{rAA0, rAA1, rAA2, rAA3}
	for mi := 0; mi < 4; mi++ {
		if b.c.TransA {
			// k rows: mi is a swizzled chunk (its own address), ks 16 rows
			out = append(out, sass.New("LDSM", "16.MT88.4", r(a+4*mi), sass.Shared(sass.Reg(aRegs[mi]), 0, int64(ks*16*b.rowA()))).WriteSB(sb))
			continue
		}
		out = append(out, sass.New("LDSM", "16.M88.4", r(a+4*mi), sass.Shared(sass.Reg(aRegs[ks]), 0, int64(mi*1024))).WriteSB(sb))
	}
	bRegs := []int{rAB0, rAB1}
	for np := 0; np < 2; np++ {
		if b.c.TransB {
			// n rows of 32 k: ks is a swizzled chunk pair, np 16 rows
			out = append(out, sass.New("LDSM", "16.M88.4", r(bb+4*np), sass.Shared(sass.Reg(bRegs[ks]), 0, int64(np*1024))).WriteSB(sb))
			continue
		}
		out = append(out, sass.New("LDSM", "16.MT88.4", r(bb+4*np), sass.Shared(sass.Reg(bRegs[np]), 0, int64(ks*16*b.rowB()))).WriteSB(sb))
	}
	return out
}

// hmmaOrder is the (mi, ni) order of the 16 HMMAs of one k16 step:
// serpentine in ni so the B fragment can be reused at each turn.
func hmmaOrder() [][2]int {
	var o [][2]int
	for mi := 0; mi < 4; mi++ {
		for k := 0; k < 4; k++ {
			ni := k
			if mi%2 == 1 {
				ni = 3 - k
			}
			o = append(o, [2]int{mi, ni})
		}
	}
	return o
}

// kOp is the K extent of this CTA: the parameter, or the split-K range.
func (b *builder) kOp() sass.Operand {
	if b.c.SplitK {
		return r(rKeff)
	}
	return cb(pK)
}

// copies is the number of 16-byte copies a thread issues per K tile.
func (b *builder) copies() int { return copiesA(b.g) + copiesB(b.g) }

// Shared layouts. An operand whose rows run along K (A plain, B
// transposed) is a tile of TM (TN) rows of 32 k, 64 bytes a row, the
// 16-byte chunk c of row r at (c ^ ((r>>1)&3))*16; one whose rows are k
// (B plain, A transposed) is 32 rows of TM (TN) elements, the chunk c of
// row r at (c ^ (r&7))*16. Either way 8 lanes of an LDSM matrix (8 rows,
// one logical chunk) and 8 consecutive threads' copies hit 8 distinct
// 16-byte bank groups.

// rowA and rowB are the shared row lengths in bytes.
func (b *builder) rowA() int {
	if b.c.TransA {
		return b.g.TM * 2
	}
	return sm86mm.TileK * 2
}

func (b *builder) rowB() int {
	if b.c.TransB {
		return sm86mm.TileK * 2
	}
	return b.g.TN * 2
}

// stepA and stepB are the rows between a thread's successive copies.
func (b *builder) stepA() int {
	if b.c.TransA {
		return b.g.Threads() / (b.g.TM / 8)
	}
	return b.g.Threads() / 4
}

func (b *builder) stepB() int {
	if b.c.TransB {
		return b.g.Threads() / 4
	}
	return b.g.Threads() / (b.g.TN / 8)
}

// copyTile returns the copies of one K tile: predicates from the K
// counters, the LDGSTS (or, where a copy is out of bounds, STS.128 of
// zero) to dstA/dstB + off, the commit, and the pointer and counter
// updates for the next tile. The copies release read scoreboard SB1; the
// pointer updates wait on it. Copy i is guarded by P(7-n+i) for n copies:
// P3..P6 for four, P1..P6 for six.
func (b *builder) copyTile(dstA, dstB int, off int64) (preds, copies, updates []sass.Inst) {
	g := b.g
	nA, nB := copiesA(g), copiesB(g)
	n := nA + nB
	type cp struct {
		p        sass.Pred
		k        int
		dst, src int
		off      int64
	}
	var cs []cp
	for i := 0; i < nA; i++ {
		cs = append(cs, cp{sass.Pred(7 - n + i), rKA0 + i, dstA, rPA0 + 2*i, off + int64(i*b.stepA()*b.rowA())})
	}
	for i := 0; i < nB; i++ {
		cs = append(cs, cp{sass.Pred(7 - n + nA + i), rKB0 + i, dstB, rPB0 + 2*i, off + int64(i*b.stepB()*b.rowB())})
	}
	for _, c := range cs {
		preds = append(preds, isetp("GT", c.p, c.k, rz, pt))
	}
	for _, c := range cs {
		copies = append(copies,
			sass.New("LDGSTS", "E.BYPASS.128", sass.Shared(sass.Reg(c.dst), 0, c.off), sass.G64(sass.Reg(c.src), 0)).When(sass.If(c.p)).ReadSB(sass.SB1),
			sass.New("STS", "128", sass.Shared(sass.Reg(c.dst), 0, c.off), rz).When(sass.IfNot(c.p)).ReadSB(sass.SB1))
	}
	copies = append(copies, sass.New("LDGDEPBAR", "").WriteSB(sass.SB0))
	var u []sass.Inst
	stA, stB := imm(sm86mm.TileK*2), r(rBStep)
	if b.c.TransA {
		stA = r(rAStep)
	}
	if b.c.TransB {
		stB = imm(sm86mm.TileK * 2)
	}
	for i := 0; i < nA; i++ {
		u = append(u, add64(rPA0+2*i, stA, sass.Pred(1+i%2))...)
	}
	for i := 0; i < nB; i++ {
		u = append(u, add64(rPB0+2*i, stB, sass.Pred(1+(nA+i)%2))...)
	}
	u[0] = u[0].Wait(1 << 1)
	for _, c := range cs {
		u = append(u, iadd(c.k, r(c.k), imm(-sm86mm.TileK)))
	}
	return preds, copies, u
}

// Generate emits the kernel for c.
func Generate(c sm86mm.Config) (*Program, error) {
	if !slices.Contains(sm86mm.Inputs(), c.In) || !slices.Contains(sm86mm.Outputs(), c.Out) {
		return nil, fmt.Errorf("sm86mm: no variant with %v inputs and %v output", c.In, c.Out)
	}
	if c.SplitK && c.Out != tile.F32 {
		return nil, fmt.Errorf("sm86mm: split-K reduces into f32 D only")
	}
	g := c.Geometry()
	b := &builder{c: c, g: g}
	lat := sched.DefaultLatencies()
	T := g.Threads()

	// --- setup ---------------------------------------------------------
	b.add(
		sass.New("S2R", "", r(rTid), sass.SR(sass.SRTidX)).WriteSB(sass.SB2),
		sass.New("S2R", "", r(rCtaX), sass.SR(sass.SRCtaidX)).WriteSB(sass.SB3),
		sass.New("S2R", "", r(rCtaY), sass.SR(sass.SRCtaidY)).WriteSB(sass.SB4),
	)
	if c.SplitK {
		b.add(sass.New("S2R", "", r(rCtaZ), sass.SR(sass.SRCtaidZ)).WriteSB(sass.SB4))
	}
	b.add(sass.New("ULDC", "64", sass.UR(4), cb(0x118)))
	// zero the accumulators while the special registers arrive
	for k := 0; k < 32; k++ {
		b.add(sass.New("CS2R", "", r(rAcc+2*k), sass.SR(sass.SRZero)))
	}
	b.add(and(rLane, rTid, 31).Wait(1<<2 | 1<<3 | 1<<4))
	if c.SplitK {
		// this CTA's K range: koff + z*kc .. min(K, +kc); none: exit
		b.add(
			sass.New("MOV", "", r(rT0), cb(pKOff)),
			sass.New("IMAD", "", r(rKOff), r(rCtaZ), cb(pKC), r(rT0)),
			sass.New("IADD3", "", r(rKeff), sass.Neg(r(rKOff)), cb(pK), rz),
			sass.New("IMNMX", "", r(rKeff), r(rKeff), cb(pKC), pt),
			isetp("LT", sass.P0, rKeff, imm(1), pt),
		)
		b.Exit()
		b.add(sass.New("EXIT", "").When(sass.If(sass.P0)).Yield())
	}
	b.add(shr(rWarp, rTid, 5),
		shl(rM0, rCtaY, log2(g.TM)),
		shl(rN0, rCtaX, log2(g.TN)))
	if g.WM == 1 {
		b.add(sass.New("MOV", "", r(rWM), imm(0)), sass.New("MOV", "", r(rWN), r(rWarp)))
	} else {
		b.add(and(rWM, rWarp, int64(g.WM-1)), shr(rWN, rWarp, log2(g.WM)))
	}
	b.setupCopies()
	b.laneBases()
	b.add(
		// stages: read 0, write 3 (tile S-1); tiles = ceil(K/32)
		sass.New("MOV", "", r(rSt), imm(0)),
		sass.New("MOV", "", r(rStW), imm(int64((sm86mm.Stages-1)*g.StageBytes()))),
		sass.New("MOV", "", r(rKT), b.kOp()),
		iadd(rKT, r(rKT), imm(sm86mm.TileK-1)),
		shr(rKT, rKT, 5),
		sass.New("MOV", "", r(rAA0), r(rLA0)),
		sass.New("MOV", "", r(rAA1), r(rLA1)),
		sass.New("MOV", "", r(rAB0), r(rLB0)),
		sass.New("MOV", "", r(rAB1), r(rLB1)),
	)
	if c.TransA {
		b.add(sass.New("MOV", "", r(rAA2), r(rLA2)), sass.New("MOV", "", r(rAA3), r(rLA3)))
	}
	_ = T
	// --- prologue: tiles 0..S-2 ------------------------------------------
	for t := 0; t < sm86mm.Stages-1; t++ {
		preds, copies, upd := b.copyTile(rDA, rDB, int64(t*g.StageBytes()))
		b.add(preds...)
		b.add(copies...)
		b.add(upd...)
	}
	b.add(
		sass.New("DEPBAR", "LE", sass.SB(0), imm(sm86mm.Stages-2)).Yield(),
		sass.New("BAR", "SYNC", imm(0)).Yield(),
	)
	// The last prologue LDSM sets SB5 rather than SB2, so that the loop's
	// first wait on SB5 (the previous iteration's F1 HMMAs) has a setter on
	// entry too (the simulator faults on a wait on an idle scoreboard).
	pro := b.ldsmSet(rF0A, rF0B, 0, sass.SB2)
	pro[5] = pro[5].WriteSB(sass.SB5)
	b.add(pro...)

	// --- main loop -------------------------------------------------------
	loopStart := len(b.Prog)
	b.mainLoop()
	loopEnd := len(b.Prog) - 1
	b.Loops = append(b.Loops, [2]int{loopStart, loopEnd})

	// --- epilogue ----------------------------------------------------------
	b.epilogue()
	b.Exit()
	b.add(sass.New("EXIT", "").Yield())
	b.add(sass.New("BRA", "", sass.Target(-16)).Yield())
	for len(b.Prog)%8 != 0 {
		b.add(sass.New("NOP", ""))
	}
	if err := b.FixStalls(lat); err != nil {
		return nil, err
	}
	p := &Program{Config: c, Insts: b.Prog, Loop: b.Loops[0], EpiLoop: b.Loops[1]}
	p.Exits = b.ExitOffsets()
	return p, nil
}

// setupCopies sets each operand's copy destinations, remaining-K
// counters and pointers.
func (b *builder) setupCopies() {
	g := b.g
	b.operandCopies(!b.c.TransA, g.TM, rM0, pM, pLDA, pA, rKA0, rPA0, rDA, 0, copiesA(g), rAStep)
	b.operandCopies(b.c.TransB, g.TN, rN0, pN, pLDB, pB, rKB0, rPB0, rDB, bOffset(g), copiesB(g), rBStep)
}

// operandCopies emits the set-up of one operand's n copies a thread, for
// a tile of X rows (M or N) starting at origin, extent parameter ext.
// kMajor: the operand's rows run along K (r = tid>>2 of the X rows, chunk
// c = tid&3 of the row's 4; counter K - 8c where the row is in bounds,
// else 0; pointer step 64 bytes a tile). Otherwise its rows are k (r =
// tid/(X/8), chunk c = tid%(X/8); counter K - r - i*step where the
// chunk's first column is in bounds; pointer step 32*ld elements, in
// stepReg).
func (b *builder) operandCopies(kMajor bool, X, origin int, ext, ld, ptrAt int64, kc, pc, dst, dstOff, n, stepReg int) {
	if kMajor {
		step := b.g.Threads() / 4
		b.add(
			// r = tid>>2, c = tid&3; dst = r*64 + ((c ^ ((r>>1)&3))<<4)
			shr(rT0, rTid, 2),
			and(rT1, rTid, 3),
			shr(rT2, rT0, 1),
			and(rT2, rT2, 3),
			xor(rT2, rT2, r(rT1)),
			shl(rT2, rT2, 4),
			lea(dst, rT0, r(rT2), 6),
		)
		if dstOff != 0 {
			b.add(iadd(dst, r(dst), imm(int64(dstOff))))
		}
		b.add(
			// k_i = K - c*8 where row origin+r+i*step < ext, else 0
			shl(rT1, rT1, 3),
			iadd(rT2, r(origin), r(rT0)),
			sass.New("IADD3", "", r(rT3), sass.Neg(r(rT1)), b.kOp(), rz),
		)
		if b.c.SplitK {
			b.add(iadd(rT1, r(rT1), r(rKOff)))
		}
		for i := 0; i < n; i++ {
			// p_i = X + ((origin+r+i*step)*ld + c*8 [+ koff])*2
			b.add(
				iadd(rT0, r(rT2), imm(int64(i*step))),
				isetp("LT", sass.P1, rT0, cb(ext), pt),
				sel(kc+i, r(rT3), rz, sass.P1),
				sass.New("IMAD", "", r(rT0), r(rT0), cb(ld), r(rT1)),
			)
			b.add(ptr(pc+2*i, rT0, ptrAt, 1, sass.P1)...)
		}
		return
	}
	cn := X / 8
	step := b.g.Threads() / cn
	b.add(
		// r = tid/CN, c = tid%CN; dst = off + r*2X + ((c ^ (r&7))<<4)
		shr(rT0, rTid, log2(cn)),
		and(rT1, rTid, int64(cn-1)),
		and(rT2, rT0, 7),
		xor(rT2, rT2, r(rT1)),
		shl(rT2, rT2, 4),
		lea(dst, rT0, r(rT2), log2(2*X)),
	)
	if dstOff != 0 {
		b.add(iadd(dst, r(dst), imm(int64(dstOff))))
	}
	b.add(
		// column origin + c*8 < ext: k_i = K - r - i*step, else 0
		lea(rT1, rT1, r(origin), 3),
		isetp("LT", sass.P1, rT1, cb(ext), pt),
		sass.New("IADD3", "", r(rT2), sass.Neg(r(rT0)), b.kOp(), rz),
		sass.New("MOV", "", r(stepReg), imm(2*sm86mm.TileK)),
		sass.New("IMAD", "", r(stepReg), r(stepReg), cb(ld), rz),
	)
	if b.c.SplitK {
		b.add(iadd(rT0, r(rT0), r(rKOff)))
	}
	for i := 0; i < n; i++ {
		// p_i = X + ((r + i*step [+ koff])*ld + origin + c*8)*2
		st := int64(i * step)
		b.add(
			iadd(rT3, r(rT2), imm(-st)),
			sel(kc+i, r(rT3), rz, sass.P1),
			iadd(rT3, r(rT0), imm(st)),
			sass.New("IMAD", "", r(rT3), r(rT3), cb(ld), r(rT1)),
		)
		b.add(ptr(pc+2*i, rT3, ptrAt, 1, sass.P2)...)
	}
}

// laneBases sets the LDSM lane addresses (stage 0).
func (b *builder) laneBases() {
	g := b.g
	if !b.c.TransA {
		b.add(
			// A: r = wm*64 + (lane&15), chunk (lane>>4) ^ ((lane>>1)&3); ks 1: chunk ^ 2
			shr(rT0, rLane, 1),
			and(rT0, rT0, 3),
			shr(rT1, rLane, 4),
			xor(rT0, rT0, r(rT1)),
			shl(rT0, rT0, 4),
			and(rT2, rLane, 15),
			lea(rT3, rWM, r(rT2), 6),
			lea(rLA0, rT3, r(rT0), 6),
			xor(rLA1, rLA0, imm(0x20)),
		)
	} else {
		b.add(
			// A^T: k row (lane&7) + 8(lane>>4), m chunk wm*8 + 2mi + ((lane>>3)&1),
			// swizzled ^ (lane&7): mi is chunk ^ 2mi (its own base)
			shr(rT0, rLane, 3),
			and(rT0, rT0, 1),
			and(rT1, rLane, 7),
			xor(rT0, rT0, r(rT1)),
			lea(rT0, rWM, r(rT0), 3),
			shl(rT0, rT0, 4),
			shr(rT2, rLane, 4),
			lea(rT2, rT2, r(rT1), 3),
			lea(rLA0, rT2, r(rT0), log2(b.rowA())),
			xor(rLA1, rLA0, imm(0x20)),
			xor(rLA2, rLA0, imm(0x40)),
			xor(rLA3, rLA0, imm(0x60)),
		)
	}
	if !b.c.TransB {
		if b.c.TransA {
			b.add(shr(rT1, rLane, 4), and(rT2, rLane, 15))
		}
		b.add(
			// B: k row lane&15, chunk (wn*4 + (lane>>4)) ^ (lane&7); np 1: chunk ^ 2
			lea(rT1, rWN, r(rT1), 2),
			and(rT3, rLane, 7),
			xor(rT1, rT1, r(rT3)),
			shl(rT1, rT1, 4),
			lea(rLB0, rT2, r(rT1), log2(b.rowB())),
		)
	} else {
		b.add(
			// B^T: n row wn*32 + (lane&7) + 8(lane>>4), k chunk
			// ((lane>>3)&1) ^ ((lane>>1)&3); ks 1: chunk ^ 2
			shr(rT0, rLane, 3),
			and(rT0, rT0, 1),
			shr(rT1, rLane, 1),
			and(rT1, rT1, 3),
			xor(rT0, rT0, r(rT1)),
			shl(rT0, rT0, 4),
			and(rT1, rLane, 7),
			shr(rT2, rLane, 4),
			lea(rT2, rT2, r(rT1), 3),
			lea(rT2, rWN, r(rT2), 5),
			lea(rLB0, rT2, r(rT0), 6),
		)
	}
	b.add(
		iadd(rLB0, r(rLB0), imm(int64(bOffset(g)))),
		xor(rLB1, rLB0, imm(0x20)),
	)
}

// mainLoop emits one iteration (tile kt, read stage rSt; the F0 fragments
// of its first k16 step are loaded on entry). The first half computes with
// F0 while LDSM fills F1 (second k16 step) and the copies of tile kt+S-1
// go out; then DEPBAR/BAR make tile kt+1 visible; the second half
// computes with F1 while LDSM fills F0 from tile kt+1.
func (b *builder) mainLoop() {
	g := b.g
	hm := hmmaMods(b.c)
	order := hmmaOrder()
	hmma := func(fa, fb int, k int) sass.Inst {
		mi, ni := order[k][0], order[k][1]
		return sass.New("HMMA", hm, sass.R(acc(mi, ni)), r(fa+4*mi), r(fb+2*ni), sass.R(acc(mi, ni)))
	}
	start := len(b.Prog)
	n := b.copies()
	ring := int64(sm86mm.Stages * g.StageBytes())

	// first half: F0 x 16 HMMA (write SB4); fillers per slot
	preds, copies, upd := b.copyTile(rDstA, rDstB, 0)
	f1 := b.ldsmSet(rF1A, rF1B, 1, sass.SB2)
	// The pointer updates need no wait of their own: HMMA 12 below waits
	// on SB1, which the copies share with the second half's last four
	// HMMAs, after every copy of this tile has issued.
	upd[0] = upd[0].Wait(0)
	slots := make([][]sass.Inst, 16)
	// F1 A(mi 0..2) as soon as HMMA 0's wait on SB5 has retired the
	// previous second half's HMMAs 0..11; A(mi 3) and B after HMMA 12's
	// wait on SB1 (its HMMAs 12..15)
	slots[0] = []sass.Inst{f1[0]}
	slots[1] = []sass.Inst{f1[1]}
	slots[2] = []sass.Inst{f1[2]}
	slots[3] = []sass.Inst{iadd(rDstA, r(rDA), r(rStW)), iadd(rDstB, r(rDB), r(rStW))}
	slots[4] = preds
	slots[5] = []sass.Inst{iadd(rKT, r(rKT), imm(-1)), isetp("GT", sass.P0, rKT, rz, pt)}
	// one copy (LDGSTS + its zero-fill STS) a slot from 6, the commit
	// with the last
	for i := 0; i < n; i++ {
		slots[6+i] = copies[2*i : 2*i+2]
	}
	slots[5+n] = append(append([]sass.Inst{}, slots[5+n]...), copies[2*n])
	if ringPow2(g) {
		slots[10] = []sass.Inst{iadd(rSt, r(rSt), imm(int64(g.StageBytes()))), and(rSt, rSt, ring-1)}
	} else {
		// the stage just read is the next write stage; the read stage
		// wraps at the ring's end
		slots[14] = []sass.Inst{
			sass.New("MOV", "", r(rStW), r(rSt)),
			iadd(rSt, r(rSt), imm(int64(g.StageBytes()))),
			isetp("GE", sass.P1, rSt, imm(ring), pt),
			sel(rSt, rz, r(rSt), sass.P1),
		}
	}
	slots[12] = []sass.Inst{f1[3], f1[4]}
	slots[13] = []sass.Inst{f1[5]}
	slots[15] = []sass.Inst{
		sass.New("DEPBAR", "LE", sass.SB(0), imm(sm86mm.Stages-2)).Wait(1 << 2).Yield(),
		sass.New("BAR", "SYNC", imm(0)).Yield(),
	}
	// HMMAs 0..11 (mi 0..2) set SB4, 12..15 (mi 3) SB3: the second half's
	// first HMMA then waits only for the first twelve
	b.half(hmma, rF0A, rF0B, map[int]uint8{0: 1<<2 | 1<<5, 12: 1 << 1}, func(k int) sass.Scoreboard {
		if k >= 12 {
			return sass.SB3
		}
		return sass.SB4
	}, slots)

	// second half: F1 x 16 HMMA (write SB5); F0 <- tile kt+1
	f0 := b.ldsmSet(rF0A, rF0B, 0, sass.SB2)
	slots = make([][]sass.Inst, 16)
	slots[0] = []sass.Inst{iadd(rAA0, r(rLA0), r(rSt)), iadd(rAA1, r(rLA1), r(rSt)),
		iadd(rAB0, r(rLB0), r(rSt)), iadd(rAB1, r(rLB1), r(rSt))}
	if b.c.TransA {
		slots[0] = append(slots[0], iadd(rAA2, r(rLA2), r(rSt)), iadd(rAA3, r(rLA3), r(rSt)))
	}
	// A(mi 0..2) only after the wait on SB4 (HMMAs 0..11 of the first
	// half read them); A(mi 3) and B after HMMA 12's wait on SB3
	slots[1] = []sass.Inst{f0[0]}
	slots[2] = []sass.Inst{f0[1]}
	slots[3] = []sass.Inst{f0[2]}
	if ringPow2(g) {
		slots[4] = []sass.Inst{iadd(rStW, r(rSt), imm(int64((sm86mm.Stages-1)*g.StageBytes()))), and(rStW, rStW, ring-1)}
	}
	// one pointer update a slot from 5, then the counters
	for i := 0; i < n; i++ {
		slots[5+i] = upd[2*i : 2*i+2]
	}
	slots[5+n] = upd[2*n:]
	slots[12] = []sass.Inst{f0[3]}
	slots[13] = []sass.Inst{f0[4]}
	slots[14] = []sass.Inst{f0[5]}
	// HMMAs 0..11 set SB5, 12..15 SB1 (shared with the copies' reads)
	b.half(hmma, rF1A, rF1B, map[int]uint8{0: 1 << 4, 12: 1 << 3}, func(k int) sass.Scoreboard {
		if k >= 12 {
			return sass.SB1
		}
		return sass.SB5
	}, slots)
	m := len(b.Prog)
	b.add(sass.New("BRA", "", sass.Target(int64(16*(start-(m+1))))).When(sass.If(sass.P0)).Yield())
}

// half emits 16 HMMAs with the fillers of each slot after it. HMMA k waits
// on waits[k] and sets write scoreboard sb(k). Consecutive
// HMMAs sharing an A (or B) fragment mark it for reuse.
func (b *builder) half(hmma func(fa, fb, k int) sass.Inst, fa, fb int, waits map[int]uint8, sb func(int) sass.Scoreboard, slots [][]sass.Inst) {
	for k := 0; k < 16; k++ {
		h := hmma(fa, fb, k).WriteSB(sb(k)).Wait(waits[k])
		fill := slots[k]
		if len(fill) == 0 && k < 15 {
			next := hmma(fa, fb, k+1)
			var ru uint8
			if next.Args[1] == h.Args[1] {
				ru |= 1
			}
			if next.Args[2] == h.Args[2] {
				ru |= 2
			}
			h = h.Reuse(ru)
		}
		// HMMA to HMMA: 8 cycles (ptxas's spacing), fillers included
		fs := 0
		for _, f := range fill {
			s := int(f.Ctrl.Stall)
			if s == 0 {
				s = 1
			}
			fs += s
		}
		st := 8 - fs
		if st < 1 {
			st = 1
		}
		b.add(h.Stall(uint8(st)))
		b.add(fill...)
	}
}

// epilogue: stage the accumulators through shared memory (each warp its
// own 64x32 f32 area, 8 KiB, rows of 128 bytes with the 16-byte chunk c of
// row r at (c ^ (r&7))*16), then a loop of 16 iterations in which each
// thread takes 4 consecutive columns of one row (lane>>3 picks the row of
// 4, lane&7 the chunk): LDS.128, alpha, beta*C, bias, activation, the
// conversion, and a 16-byte (f32) or 8-byte (f16/bf16) store where the 4
// columns are in bounds and the row start is aligned, else up to 4
// predicated scalar stores. The split-K kernel adds alpha*acc with
// RED.E.ADD.F32 instead.
func (b *builder) epilogue() {
	c := b.c
	esz := c.Out.Size()
	// every LDSM and HMMA done, every copy group retired, every warp past
	// the main loop: the ring can be overwritten
	b.add(
		sass.New("DEPBAR", "LE", sass.SB(0), imm(0)).Wait(1<<5|1<<1|1<<2).Yield(),
		sass.New("BAR", "SYNC", imm(0)).Yield(),
		// staging addresses: s = lane>>2 (the row's low bits), hb = (lane>>1)&1
		shr(rT0, rLane, 2),
		shr(rT1, rLane, 1),
		and(rT1, rT1, 1),
		and(rT2, rLane, 1),
		shl(rT3, rWarp, 13),
		lea(rT3, rT0, r(rT3), 7),
		lea(rT3, rT2, r(rT3), 3),
	)
	for ni := 0; ni < 4; ni++ {
		// chunk 2ni + hb of row s, swizzled by s
		b.add(iadd(rT2, r(rT1), imm(int64(2*ni))),
			xor(rT2, rT2, r(rT0)),
			lea(rS0+ni, rT2, r(rT3), 4))
	}
	for mi := 0; mi < 4; mi++ {
		for h := 0; h < 2; h++ {
			for ni := 0; ni < 4; ni++ {
				b.add(sass.New("STS", "64", sass.Shared(sass.Reg(rS0+ni), 0, int64(mi*2048+h*1024)), sass.R(acc(mi, ni)+sass.Reg(2*h))).ReadSB(sass.SB1))
			}
		}
	}
	// row lane>>3 (+4 an iteration), chunk q = lane&7: columns
	// n0 + wn*32 + 4q .. +3
	b.add(
		sass.New("BAR", "SYNC", imm(0)).Yield(),
		shr(rRow, rLane, 3),
		and(rQ, rLane, 7),
		shl(rWBase, rWarp, 13),
		lea(rT1, rWN, r(rN0), 5),
		lea(rCol, rQ, r(rT1), 2),
		sass.New("IADD3", "", r(rCnt), sass.Neg(r(rCol)), cb(pN), rz),
		lea(rT1, rWM, r(rM0), 6),
		iadd(rGRow, r(rT1), r(rRow)),
		sass.New("MOV", "", r(rEIt), imm(16)),
		// 4 columns in bounds (cnt >= 4), ldd % 4 == 0 and D aligned to
		// the vector: rVD = 1 and no scalar stores; else rCntS scalars
		sass.New("IMNMX", "", r(rT3), r(rCnt), imm(4), pt),
		sass.New("MOV", "", r(rT0), cb(pLDD)),
		sass.New("MOV", "", r(rT1), cb(pD)),
		and(rT0, rT0, 3),
		and(rT1, rT1, int64(4*esz-1)),
		lop3(rT0, rT0, r(rT1), 0xfc),
		isetp("EQ", sass.P1, rT0, rz, pt),
		isetp("GT", sass.P1, rCnt, imm(3), sass.P(sass.P1)),
	)
	if c.SplitK {
		// RED has no vector form here: scalars only
		b.add(sass.New("MOV", "", r(rVD), imm(0)), sass.New("MOV", "", r(rCntS), r(rT3)))
	} else {
		b.add(sass.New("SEL", "", r(rVD), rz, imm(1), sass.NotP(sass.P1)), sel(rCntS, rz, r(rT3), sass.P1))
		// C: the same rule with ldc and C, and only when beta != 0
		b.add(
			sass.New("MOV", "", r(rT0), cb(pLDC)),
			sass.New("MOV", "", r(rT1), cb(pC)),
			and(rT0, rT0, 3),
			and(rT1, rT1, int64(4*esz-1)),
			lop3(rT0, rT0, r(rT1), 0xfc),
			asmf("FSETP.NEU.AND P2, PT, RZ, c[0x0][%#x], PT ;", pBeta),
			isetp("EQ", sass.P1, rT0, rz, sass.P(sass.P2)),
			isetp("GT", sass.P1, rCnt, imm(3), sass.P(sass.P1)),
			sass.New("SEL", "", r(rVC), rz, imm(1), sass.NotP(sass.P1)),
			sel(rCntC, rz, r(rT3), sass.P1),
			sel(rCntC, r(rCntC), rz, sass.P2),
			// bias: 4 f32 values, loaded once where the column exists and
			// the pointer is not 0
			sass.New("MOV", "", r(rT0), cb(pBias)),
			sass.New("MOV", "", r(rT1), cb(pBias+4)),
			lop3(rT0, rT0, r(rT1), 0xfc),
			isetp("NE", sass.P2, rT0, rz, pt),
			sass.New("CS2R", "", r(rBiasV), sass.SR(sass.SRZero)),
			sass.New("CS2R", "", r(rBiasV+2), sass.SR(sass.SRZero)),
		)
		b.add(ptr(rPBias, rCol, pBias, 2, sass.P0)...)
		for j := 0; j < 4; j++ {
			b.add(isetp("GT", sass.Pred(3+j), rCnt, imm(int64(j)), sass.P(sass.P2)))
		}
		for j := 0; j < 4; j++ {
			b.add(asmf("@P%d LDG.E R%d, [R%d.64+%#x] ;", 3+j, rBiasV+j, rPBias, 4*j).WriteSB(sass.SB4))
		}
		b.add(
			sass.New("MOV", "", r(rAct), cb(pAct)),
			isetp("EQ", sass.P1, rAct, imm(sm86mm.ActReLU), pt),
			sel(rFloor, rz, imm(0xff800000), sass.P1),
		)
	}
	// the first iteration's uses of the bias: wait here, once
	b.add(sass.New("MOV", "", r(rT0), imm(0)))
	if !c.SplitK {
		b.Prog[len(b.Prog)-1] = b.Prog[len(b.Prog)-1].Wait(1 << 4)
	}

	// --- the loop over staged rows ---------------------------------------
	ls := len(b.Prog)
	b.add(
		xor(rT0, rRow, r(rQ)),
		and(rT0, rT0, 7),
		lea(rT1, rRow, r(rWBase), 7),
		lea(rT2, rT0, r(rT1), 4),
		// the previous iteration's stores have read R8.., R12.. and the
		// pointers (SB1)
		asmf("LDS.128 R%d, [R%d] ;", rV, rT2).Wait(1<<1).WriteSB(sass.SB2),
		isetp("LT", sass.P1, rGRow, cb(pM), pt),
		sass.New("IMAD", "", r(rT3), r(rGRow), cb(pLDD), r(rCol)),
	)
	b.add(ptr(rPD, rT3, pD, log2(esz), sass.P0)...)
	if !c.SplitK {
		b.add(sass.New("IMAD", "", r(rT3), r(rGRow), cb(pLDC), r(rCol)))
		b.add(ptr(rPC, rT3, pC, log2(esz), sass.P0)...)
		b.add(isetp("NE", sass.P2, rVC, rz, sass.P(sass.P1)))
		for j := 0; j < 4; j++ {
			b.add(isetp("GT", sass.Pred(3+j), rCntC, imm(int64(j)), sass.P(sass.P1)))
		}
		// the vector load fills R4.., the scalar ones R16..; both start
		// at 0, so their sum (f32) or OR (16-bit) is the loaded value
		b.add(sass.New("CS2R", "", r(rCV), sass.SR(sass.SRZero)), sass.New("CS2R", "", r(rCV+2), sass.SR(sass.SRZero)),
			sass.New("CS2R", "", r(rTmp), sass.SR(sass.SRZero)), sass.New("CS2R", "", r(rTmp+2), sass.SR(sass.SRZero)))
		if esz == 4 {
			b.add(asmf("@P2 LDG.E.128 R%d, [R%d.64] ;", rCV, rPC).WriteSB(sass.SB3))
			for j := 0; j < 4; j++ {
				b.add(asmf("@P%d LDG.E R%d, [R%d.64+%#x] ;", 3+j, rTmp+j, rPC, 4*j).WriteSB(sass.SB3))
			}
		} else {
			b.add(asmf("@P2 LDG.E.64 R%d, [R%d.64] ;", rCV, rPC).WriteSB(sass.SB3))
			for j := 0; j < 4; j++ {
				b.add(asmf("@P%d LDG.E.U16 R%d, [R%d.64+%#x] ;", 3+j, rTmp+j, rPC, 2*j).WriteSB(sass.SB3))
			}
		}
	}
	// alpha
	for j := 0; j < 4; j++ {
		i := sass.New("FMUL", "", r(rV+j), r(rV+j), cb(pAlpha))
		if j == 0 {
			i = i.Wait(1 << 2)
		}
		b.add(i)
	}
	if !c.SplitK {
		// beta*C (C is 0 where not loaded)
		first := true
		wait := func(i sass.Inst) sass.Inst {
			if first {
				first = false
				return i.Wait(1 << 3)
			}
			return i
		}
		if esz == 2 {
			// the vector load holds the pairs (0,1) in R4 and (2,3) in R5
			b.add(
				wait(asmf("@P2 SHF.R.U32.HI R%d, RZ, 0x10, R%d ;", rCV+3, rCV+1)),
				asmf("@P2 MOV R%d, R%d ;", rCV+2, rCV+1),
				asmf("@P2 SHF.R.U32.HI R%d, RZ, 0x10, R%d ;", rCV+1, rCV),
			)
			for j := 0; j < 4; j++ {
				b.add(lop3(rCV+j, rCV+j, r(rTmp+j), 0xfc))
			}
			for j := 0; j < 4; j++ {
				if c.Out == tile.F16 {
					b.add(asmf("HADD2.F32 R%d, -RZ, R%d.H0_H0 ;", rCV+j, rCV+j))
				} else {
					b.add(shl(rCV+j, rCV+j, 16))
				}
			}
		}
		for j := 0; j < 4; j++ {
			b.add(wait(asmf("FFMA R%d, R%d, c[0x0][%#x], R%d ;", rV+j, rCV+j, pBeta, rV+j)))
			if esz == 4 {
				b.add(asmf("FFMA R%d, R%d, c[0x0][%#x], R%d ;", rV+j, rTmp+j, pBeta, rV+j))
			}
		}
		for j := 0; j < 4; j++ {
			b.add(asmf("FADD R%d, R%d, R%d ;", rV+j, rV+j, rBiasV+j))
		}
		// activation, branch-free: h = x/2; GELU w = sqrt(2/pi)(x +
		// 0.044715x^3), SiLU w = x/2; t = tanh(w); g = h + h*t; ReLU /
		// none: max.NaN(x, floor), so that a NaN stays NaN (a plain
		// FMNMX returns the other operand: NaN rows became -Inf with no
		// activation, 0 with ReLU); act >= 2 takes g
		const c0 = 0.7978845608028654 // sqrt(2/pi)
		b.add(isetp("GE", sass.P3, rAct, imm(sm86mm.ActGELU), pt), isetp("EQ", sass.P4, rAct, imm(sm86mm.ActGELU), pt))
		for j := 0; j < 4; j++ {
			x, t, h := rV+j, rTmp+j, rTmp+4+j
			b.add(
				sass.New("FMUL", "", r(t), r(x), r(x)),
				sass.New("FMUL", "", r(t), r(t), sass.F32(0.044715)),
				sass.New("FFMA", "", r(t), r(t), r(x), r(x)),
				sass.New("FMUL", "", r(t), r(t), sass.F32(float32(c0))),
				sass.New("FMUL", "", r(h), r(x), sass.F32(0.5)),
				sass.New("FSEL", "", r(t), r(t), r(h), sass.P(sass.P4)),
			)
		}
		for j := 0; j < 4; j++ {
			b.add(asmf("MUFU.TANH R%d, R%d ;", rTmp+8+j, rTmp+j).WriteSB(sass.SB5))
		}
		for j := 0; j < 4; j++ {
			x, h, th, g := rV+j, rTmp+4+j, rTmp+8+j, rTmp+12+j
			i := sass.New("FFMA", "", r(g), r(h), r(th), r(h))
			if j == 0 {
				i = i.Wait(1 << 5)
			}
			b.add(i,
				sass.New("FMNMX", "NAN", r(x), r(x), r(rFloor), sass.NotP(sass.PT)),
				sass.New("FSEL", "", r(x), r(g), r(x), sass.P(sass.P3)))
		}
	}
	// stores: the vector where rVD, scalars for j < rCntS
	b.add(isetp("NE", sass.P2, rVD, rz, sass.P(sass.P1)))
	for j := 0; j < 4; j++ {
		b.add(isetp("GT", sass.Pred(3+j), rCntS, imm(int64(j)), sass.P(sass.P1)))
	}
	switch {
	case c.SplitK:
		for j := 0; j < 4; j++ {
			b.add(asmf("@P%d RED.E.ADD.F32.FTZ.RN.STRONG.GPU [R%d.64+%#x], R%d ;", 3+j, rPD, 4*j, rV+j).ReadSB(sass.SB1))
		}
	case esz == 4:
		b.add(asmf("@P2 STG.E.128 [R%d.64], R%d ;", rPD, rV).ReadSB(sass.SB1))
		for j := 0; j < 4; j++ {
			b.add(asmf("@P%d STG.E [R%d.64+%#x], R%d ;", 3+j, rPD, 4*j, rV+j).ReadSB(sass.SB1))
		}
	default:
		pk := "F2FP.PACK_AB"
		if c.Out == tile.BF16 {
			pk = "F2FP.BF16.PACK_AB"
		}
		b.add(
			asmf("%s R%d, R%d, R%d ;", pk, rW, rV+1, rV),
			asmf("%s R%d, R%d, R%d ;", pk, rW+1, rV+3, rV+2),
			asmf("SHF.R.U32.HI R%d, RZ, 0x10, R%d ;", rW+2, rW),
			asmf("SHF.R.U32.HI R%d, RZ, 0x10, R%d ;", rW+3, rW+1),
			asmf("@P2 STG.E.64 [R%d.64], R%d ;", rPD, rW).ReadSB(sass.SB1),
		)
		src := []int{rW, rW + 2, rW + 1, rW + 3}
		for j := 0; j < 4; j++ {
			b.add(asmf("@P%d STG.E.U16 [R%d.64+%#x], R%d ;", 3+j, rPD, 2*j, src[j]).ReadSB(sass.SB1))
		}
	}
	b.add(
		iadd(rRow, r(rRow), imm(4)),
		iadd(rGRow, r(rGRow), imm(4)),
		iadd(rEIt, r(rEIt), imm(-1)),
		isetp("GT", sass.P0, rEIt, rz, pt),
	)
	n := len(b.Prog)
	b.add(sass.New("BRA", "", sass.Target(int64(16*(ls-(n+1))))).When(sass.If(sass.P0)).Yield())
	b.Loops = append(b.Loops, [2]int{ls, n})
}

// Code returns the program's words.
func (p *Program) Code() ([]byte, error) { return sass.Encode(p.Insts) }

// Kernel returns the cubin description of the program.
func (p *Program) Kernel() (cubin.Kernel, error) {
	return sasskit.Kernel(p.Insts, cubin.Kernel{
		Name:          p.Config.Name(),
		Params:        sm86mm.Params(),
		Registers:     Registers,
		Barriers:      1,
		DynamicShared: true,
		MaxThreads:    [3]int{p.Config.Geometry().Threads(), 1, 1},
		ExitOffsets:   p.Exits,
	})
}

// Cubin assembles the program into a cubin for arch (86 or 89).
func (p *Program) Cubin(arch int) ([]byte, error) {
	k, err := p.Kernel()
	if err != nil {
		return nil, err
	}
	return cubin.Write(arch, k)
}

// ModuleCubin generates the module's cubin for arch (86 or 89) from the
// generator as it is now; go generate writes it to cubin/, and
// TestEmbeddedCubinsCurrent fails when the embedded files differ.
func ModuleCubin(arch int) ([]byte, error) {
	ks, err := sasskit.Kernels(sm86mm.Variants(), Generate)
	if err != nil {
		return nil, err
	}
	return cubin.Write(arch, ks...)
}
