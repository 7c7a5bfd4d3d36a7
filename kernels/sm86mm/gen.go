// Package sm86mm generates the hand-scheduled SM86/SM89 matmul kernels:
// LDGSTS.E.BYPASS.128 global->shared copies in a multi-stage pipeline
// (LDGDEPBAR / DEPBAR.LE), swizzled shared tiles read by LDSM.x4 (and
// LDSM.x4.T for the K-by-N operand), HMMA.16816.F32 with the fragments
// double-buffered in registers, and a predicated epilogue.
//
// The generator emits the program instruction by instruction in an order
// chosen by hand (the interleaving slots of the main loop are listed in
// mainLoop); the scoreboards and wait masks are chosen by hand; the stall
// counts are the hand-given minimums (HMMA to HMMA 8 cycles, ptxas's
// spacing) raised where a fixed-latency producer needs more, using the
// sass latency table (fixStalls). CheckSchedule verifies the result.
//
// Variant 1 (Config{}): CTA 128x128, K step 32, 8 warps in a 2 (M) by 4 (N)
// grid, each warp 64x32 (4x4 HMMA tiles of 16x8), 4 shared stages of 16 KiB
// (64 KiB dynamic shared memory), f16 or bf16 inputs, f32 accumulation,
// D = alpha*A*B in f32.
//
// Operands: A is M x K row-major (lda elements per row), B is K x N
// row-major (ldb), D is M x N row-major (ldd). Requirements (the 16-byte
// copies): lda and ldb multiples of 8, A and B 16-byte aligned, K a
// positive multiple of 8, and ldb >= N rounded up to 8 (a copy that starts
// below N may read up to 7 elements of the row's padding; those only reach
// output columns >= N, which are not stored). M, N any positive values;
// grid (ceil(N/128), ceil(M/128)), 256 threads.
package sm86mm

import (
	"fmt"

	"github.com/tcrt-go/tcrt/sass"
)

// Input is the element type of A and B.
type Input int

// Inputs.
const (
	F16 Input = iota
	BF16
)

func (t Input) String() string {
	if t == BF16 {
		return "bf16"
	}
	return "f16"
}

// Config selects a variant. The zero value is the 128x128 f16 kernel.
type Config struct {
	In Input
}

// Geometry of variant 1.
const (
	TileM   = 128
	TileN   = 128
	TileK   = 32
	Threads = 256
	Stages  = 4
	// StageBytes is one stage: the A tile (128x32 halves, 8 KiB) then the
	// B tile (32x128 halves, 8 KiB).
	StageBytes  = 0x4000
	SharedBytes = Stages * StageBytes
	bOffset     = 0x2000
)

// Parameter offsets in constant bank 0.
const (
	pD     = sass.ParamBase + 0x00
	pA     = sass.ParamBase + 0x08
	pB     = sass.ParamBase + 0x10
	pM     = sass.ParamBase + 0x18
	pN     = sass.ParamBase + 0x1c
	pK     = sass.ParamBase + 0x20
	pLDA   = sass.ParamBase + 0x24
	pLDB   = sass.ParamBase + 0x28
	pLDD   = sass.ParamBase + 0x2c
	pAlpha = sass.ParamBase + 0x30
)

// Params is the kernel's parameter list: D, A, B (pointers), M, N, K, lda,
// ldb, ldd (u32), alpha (f32).
func Params() []sass.Param {
	p := []sass.Param{{Size: 8, Align: 8}, {Size: 8, Align: 8}, {Size: 8, Align: 8}}
	for k := 0; k < 7; k++ {
		p = append(p, sass.Param{Size: 4, Align: 4})
	}
	return p
}

// Name returns the kernel's symbol name.
func (c Config) Name() string { return fmt.Sprintf("tcrt_sm86_mm_128x128x32_%s_f32", c.In) }

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
	rDB  // B copy destination, lane part (includes bOffset)
	rKA0 // remaining-K counters that also carry row/column validity
	rKA1
	rKB0
	rKB1
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
	rKT // tiles left
	rMRem
	rNRem
	rStepD
	rPA0 // 64-bit pointers: even registers
	_
	rPA1
	_
	rPB0
	_
	rPB1
	_
	rPD
	_
	rLast
)

// Registers is the register count recorded in the cubin (ptxas's rule:
// highest index + 3).
const Registers = rLast - 1 + 3

func r(n int) sass.Operand { return sass.R(sass.Reg(n)) }

var (
	rz = sass.R(sass.RZ)
	pt = sass.P(sass.PT)
)

func imm(v int64) sass.Operand  { return sass.Imm(v) }
func cb(off int64) sass.Operand { return sass.CB(0, off) }

func lop3(d, a int, b sass.Operand, lut int64) sass.Inst {
	return sass.New("LOP3", "LUT", r(d), r(a), b, rz, imm(lut), sass.NotP(sass.PT))
}
func and(d, a int, m int64) sass.Inst        { return lop3(d, a, imm(m), 0xc0) }
func xor(d, a int, b sass.Operand) sass.Inst { return lop3(d, a, b, 0x3c) }
func shr(d, a int, n int64) sass.Inst {
	return sass.New("SHF", "R.U32.HI", r(d), rz, imm(n), r(a))
}
func shl(d, a int, n int64) sass.Inst { return sass.New("SHF", "L.U32", r(d), r(a), imm(n), rz) }
func lea(d, a int, b sass.Operand, sh int64) sass.Inst {
	return sass.New("LEA", "", r(d), r(a), b, imm(sh))
}
func iadd(d int, a sass.Operand, b sass.Operand) sass.Inst {
	return sass.New("IADD3", "", r(d), a, b, rz)
}
func isetp(cmp string, p sass.Pred, a int, b sass.Operand, comb sass.Operand) sass.Inst {
	return sass.New("ISETP", cmp+".AND", sass.P(p), pt, r(a), b, comb)
}
func sel(d int, a, b sass.Operand, p sass.Pred) sass.Inst {
	return sass.New("SEL", "", r(d), a, b, sass.P(p))
}

// add64 adds b (an immediate or register) to the pointer pair at p, with
// carry predicate c.
func add64(p int, b sass.Operand, c sass.Pred) []sass.Inst {
	return []sass.Inst{
		sass.New("IADD3", "", r(p), sass.P(c), r(p), b, rz),
		sass.New("IADD3", "X", r(p+1), rz, r(p+1), rz, sass.P(c), sass.NotP(sass.PT)),
	}
}

// ptr sets the pair p to param(at) + off*scale (off an unsigned 32-bit element
// offset).
func ptr(p, off int, at int64, shift int64, c sass.Pred) []sass.Inst {
	return []sass.Inst{
		sass.New("LEA", "", r(p), sass.P(c), r(off), cb(at), imm(shift)),
		sass.New("LEA", "HI.X", r(p+1), r(off), cb(at+4), rz, imm(shift), sass.P(c)),
	}
}

type builder struct {
	p   sass.Program
	min []uint8 // hand-given minimum stall per instruction
}

func (b *builder) add(is ...sass.Inst) {
	for _, i := range is {
		if i.Ctrl.Stall == 0 {
			i.Ctrl.Stall = 1
		}
		b.p = append(b.p, i)
		b.min = append(b.min, i.Ctrl.Stall)
	}
}

// Program is a generated kernel: the instructions, where the main loop
// starts and ends (Loop[0] is the first instruction of the body, Loop[1]
// the backward BRA), and the EXIT offsets.
type Program struct {
	Config Config
	Insts  sass.Program
	Loop   [2]int
	Exits  []int
}

func (c Config) hmmaMods() string {
	if c.In == BF16 {
		return "16816.F32.BF16"
	}
	return "16816.F32"
}

// ldsmSet returns the six LDSM.x4 of one fragment buffer (ks: which 16 of
// the tile's 32 k), each setting write scoreboard sb.
func ldsmSet(a, bb int, ks int, sb sass.Scoreboard) []sass.Inst {
	aAddr := rAA0
	if ks == 1 {
		aAddr = rAA1
	}
	var out []sass.Inst
	for mi := 0; mi < 4; mi++ {
		out = append(out, sass.New("LDSM", "16.M88.4", r(a+4*mi), sass.Shared(sass.Reg(aAddr), 0, int64(mi*1024))).WriteSB(sb))
	}
	for np := 0; np < 2; np++ {
		base := rAB0
		if np == 1 {
			base = rAB1
		}
		out = append(out, sass.New("LDSM", "16.MT88.4", r(bb+4*np), sass.Shared(sass.Reg(base), 0, int64(ks*4096))).WriteSB(sb))
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

// copyTile returns the copies of one K tile: predicates from the K
// counters, the four LDGSTS (or, where a copy is out of bounds, STS.128 of
// zero) to dstA/dstB + off, the commit, and the pointer and counter
// updates for the next tile. The copies release read scoreboard SB1; the
// pointer updates wait on it.
func copyTile(dstA, dstB int, off int64) (preds, copies, updates []sass.Inst) {
	preds = []sass.Inst{
		isetp("GT", sass.P3, rKA0, rz, pt),
		isetp("GT", sass.P4, rKA1, rz, pt),
		isetp("GT", sass.P5, rKB0, rz, pt),
		isetp("GT", sass.P6, rKB1, rz, pt),
	}
	type cp struct {
		p        sass.Pred
		dst, src int
		off      int64
	}
	for _, c := range []cp{{sass.P3, dstA, rPA0, off}, {sass.P4, dstA, rPA1, off + 0x1000},
		{sass.P5, dstB, rPB0, off}, {sass.P6, dstB, rPB1, off + 0x1000}} {
		copies = append(copies,
			sass.New("LDGSTS", "E.BYPASS.128", sass.Shared(sass.Reg(c.dst), 0, c.off), sass.G64(sass.Reg(c.src), 0)).When(sass.If(c.p)).ReadSB(sass.SB1),
			sass.New("STS", "128", sass.Shared(sass.Reg(c.dst), 0, c.off), rz).When(sass.IfNot(c.p)).ReadSB(sass.SB1))
	}
	copies = append(copies, sass.New("LDGDEPBAR", "").WriteSB(sass.SB0))
	u := add64(rPA0, imm(TileK*2), sass.P1)
	u[0] = u[0].Wait(1 << 1)
	u = append(u, add64(rPA1, imm(TileK*2), sass.P2)...)
	u = append(u, add64(rPB0, r(rBStep), sass.P1)...)
	u = append(u, add64(rPB1, r(rBStep), sass.P2)...)
	for _, k := range []int{rKA0, rKA1, rKB0, rKB1} {
		u = append(u, iadd(k, r(k), imm(-TileK)))
	}
	return preds, copies, u
}

// Generate emits the kernel for c.
func Generate(c Config) (*Program, error) {
	b := &builder{}
	lat := sass.DefaultLatencies()

	// --- setup ---------------------------------------------------------
	b.add(
		sass.New("S2R", "", r(rTid), sass.SR(sass.SRTidX)).WriteSB(sass.SB2),
		sass.New("S2R", "", r(rCtaX), sass.SR(sass.SRCtaidX)).WriteSB(sass.SB3),
		sass.New("S2R", "", r(rCtaY), sass.SR(sass.SRCtaidY)).WriteSB(sass.SB4),
		sass.New("ULDC", "64", sass.UR(4), cb(0x118)),
	)
	// zero the accumulators while the special registers arrive
	for k := 0; k < 32; k++ {
		b.add(sass.New("CS2R", "", r(rAcc+2*k), sass.SR(sass.SRZero)))
	}
	b.add(
		and(rLane, rTid, 31).Wait(1<<2|1<<3|1<<4),
		shr(rWarp, rTid, 5),
		shl(rM0, rCtaY, 7),
		shl(rN0, rCtaX, 7),
		and(rWM, rWarp, 1),
		shr(rWN, rWarp, 1),
		// A copy: ra = tid>>2, ca = tid&3; dA = ra*64 + ((ca ^ ((ra>>1)&3))<<4)
		shr(rT0, rTid, 2),
		and(rT1, rTid, 3),
		shr(rT2, rT0, 1),
		and(rT2, rT2, 3),
		xor(rT2, rT2, r(rT1)),
		shl(rT2, rT2, 4),
		lea(rDA, rT0, r(rT2), 6),
		// kA = K - ca*8 where row m0+ra (+64) < M, else 0
		shl(rT1, rT1, 3),
		iadd(rT2, r(rM0), r(rT0)),
		sass.New("IADD3", "", r(rT3), sass.Neg(r(rT1)), cb(pK), rz),
		isetp("LT", sass.P1, rT2, cb(pM), pt),
		iadd(rT0, r(rT2), imm(64)),
		isetp("LT", sass.P2, rT0, cb(pM), pt),
		sel(rKA0, r(rT3), rz, sass.P1),
		sel(rKA1, r(rT3), rz, sass.P2),
		// pA0 = A + ((m0+ra)*lda + ca*8)*2, pA1 the same 64 rows down
		sass.New("IMAD", "", r(rT3), r(rT2), cb(pLDA), r(rT1)),
		sass.New("IMAD", "", r(rT2), r(rT0), cb(pLDA), r(rT1)),
	)
	b.add(ptr(rPA0, rT3, pA, 1, sass.P1)...)
	b.add(ptr(rPA1, rT2, pA, 1, sass.P2)...)
	b.add(
		// B copy: rb = tid>>4, cb = tid&15; dB = 0x2000 + rb*256 + ((cb ^ (rb&7))<<4)
		shr(rT0, rTid, 4),
		and(rT1, rTid, 15),
		and(rT2, rT0, 7),
		xor(rT2, rT2, r(rT1)),
		shl(rT2, rT2, 4),
		lea(rDB, rT0, r(rT2), 8),
		iadd(rDB, r(rDB), imm(bOffset)),
		// column n0 + cb*8 < N: kB0 = K - rb, kB1 = K - rb - 16, else 0
		lea(rT1, rT1, r(rN0), 3),
		isetp("LT", sass.P1, rT1, cb(pN), pt),
		sass.New("IADD3", "", r(rT2), sass.Neg(r(rT0)), cb(pK), rz),
		sel(rKB0, r(rT2), rz, sass.P1),
		iadd(rT2, r(rT2), imm(-16)),
		sel(rKB1, r(rT2), rz, sass.P1),
		// pB0 = B + (rb*ldb + n0 + cb*8)*2, pB1 16 rows down
		sass.New("IMAD", "", r(rT3), r(rT0), cb(pLDB), r(rT1)),
		iadd(rT0, r(rT0), imm(16)),
		sass.New("IMAD", "", r(rT2), r(rT0), cb(pLDB), r(rT1)),
		sass.New("MOV", "", r(rBStep), imm(2*TileK)),
		sass.New("IMAD", "", r(rBStep), r(rBStep), cb(pLDB), rz),
	)
	b.add(ptr(rPB0, rT3, pB, 1, sass.P1)...)
	b.add(ptr(rPB1, rT2, pB, 1, sass.P2)...)
	b.add(
		// LDSM lane bases. A: r = wm*64 + (lane&15), chunk (lane>>4) ^ ((lane>>1)&3)
		shr(rT0, rLane, 1),
		and(rT0, rT0, 3),
		shr(rT1, rLane, 4),
		xor(rT0, rT0, r(rT1)),
		shl(rT0, rT0, 4),
		and(rT2, rLane, 15),
		lea(rT3, rWM, r(rT2), 6),
		lea(rLA0, rT3, r(rT0), 6),
		xor(rLA1, rLA0, imm(0x20)),
		// B: k row lane&15, chunk (wn*4 + (lane>>4)) ^ (lane&7)
		lea(rT1, rWN, r(rT1), 2),
		and(rT3, rLane, 7),
		xor(rT1, rT1, r(rT3)),
		shl(rT1, rT1, 4),
		lea(rLB0, rT2, r(rT1), 8),
		iadd(rLB0, r(rLB0), imm(bOffset)),
		xor(rLB1, rLB0, imm(0x20)),
		// stages: read 0, write 3 (tile S-1); tiles = ceil(K/32)
		sass.New("MOV", "", r(rSt), imm(0)),
		sass.New("MOV", "", r(rStW), imm((Stages-1)*StageBytes)),
		sass.New("MOV", "", r(rKT), cb(pK)),
		iadd(rKT, r(rKT), imm(TileK-1)),
		shr(rKT, rKT, 5),
		sass.New("MOV", "", r(rAA0), r(rLA0)),
		sass.New("MOV", "", r(rAA1), r(rLA1)),
		sass.New("MOV", "", r(rAB0), r(rLB0)),
		sass.New("MOV", "", r(rAB1), r(rLB1)),
	)
	// --- prologue: tiles 0..S-2 ------------------------------------------
	for t := 0; t < Stages-1; t++ {
		preds, copies, upd := copyTile(rDA, rDB, int64(t*StageBytes))
		b.add(preds...)
		b.add(copies...)
		b.add(upd...)
	}
	b.add(
		sass.New("DEPBAR", "LE", sass.SB(0), imm(Stages-2)).Yield(),
		sass.New("BAR", "SYNC", imm(0)).Yield(),
	)
	// The last prologue LDSM sets SB5 rather than SB2, so that the loop's
	// first wait on SB5 (the previous iteration's F1 HMMAs) has a setter on
	// entry too (the simulator faults on a wait on an idle scoreboard).
	pro := ldsmSet(rF0A, rF0B, 0, sass.SB2)
	pro[5] = pro[5].WriteSB(sass.SB5)
	b.add(pro...)

	// --- main loop -------------------------------------------------------
	loopStart := len(b.p)
	b.mainLoop(c)
	loopEnd := len(b.p) - 1

	// --- epilogue: D = alpha*acc, f32, predicated scalar stores ----------
	b.epilogue()
	exit := len(b.p)
	b.add(sass.New("EXIT", "").Yield())
	b.add(sass.New("BRA", "", sass.Target(-16)).Yield())
	for len(b.p)%8 != 0 {
		b.add(sass.New("NOP", ""))
	}
	if err := b.fixStalls(lat, loopStart, loopEnd); err != nil {
		return nil, err
	}
	return &Program{Config: c, Insts: b.p, Loop: [2]int{loopStart, loopEnd}, Exits: []int{exit * 16}}, nil
}

// mainLoop emits one iteration (tile kt, read stage rSt; the F0 fragments
// of its first k16 step are loaded on entry). The first half computes with
// F0 while LDSM fills F1 (second k16 step) and the copies of tile kt+S-1
// go out; then DEPBAR/BAR make tile kt+1 visible; the second half
// computes with F1 while LDSM fills F0 from tile kt+1.
func (b *builder) mainLoop(c Config) {
	hm := c.hmmaMods()
	order := hmmaOrder()
	hmma := func(fa, fb int, k int) sass.Inst {
		mi, ni := order[k][0], order[k][1]
		return sass.New("HMMA", hm, sass.R(acc(mi, ni)), r(fa+4*mi), r(fb+2*ni), sass.R(acc(mi, ni)))
	}
	start := len(b.p)

	// first half: F0 x 16 HMMA (write SB4); fillers per slot
	preds, copies, upd := copyTile(rDstA, rDstB, 0)
	f1 := ldsmSet(rF1A, rF1B, 1, sass.SB2)
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
	slots[6] = copies[0:2]
	slots[7] = copies[2:4]
	slots[8] = copies[4:6]
	slots[9] = append(append([]sass.Inst{}, copies[6:8]...), copies[8])
	slots[10] = []sass.Inst{iadd(rSt, r(rSt), imm(StageBytes)), and(rSt, rSt, Stages*StageBytes-1)}
	slots[12] = []sass.Inst{f1[3], f1[4]}
	slots[13] = []sass.Inst{f1[5]}
	slots[15] = []sass.Inst{
		sass.New("DEPBAR", "LE", sass.SB(0), imm(Stages-2)).Wait(1 << 2).Yield(),
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
	f0 := ldsmSet(rF0A, rF0B, 0, sass.SB2)
	slots = make([][]sass.Inst, 16)
	slots[0] = []sass.Inst{iadd(rAA0, r(rLA0), r(rSt)), iadd(rAA1, r(rLA1), r(rSt)),
		iadd(rAB0, r(rLB0), r(rSt)), iadd(rAB1, r(rLB1), r(rSt))}
	// A(mi 0..2) only after the wait on SB4 (HMMAs 0..11 of the first
	// half read them); A(mi 3) and B after HMMA 12's wait on SB3
	slots[1] = []sass.Inst{f0[0]}
	slots[2] = []sass.Inst{f0[1]}
	slots[3] = []sass.Inst{f0[2]}
	slots[4] = []sass.Inst{iadd(rStW, r(rSt), imm((Stages-1)*StageBytes)), and(rStW, rStW, Stages*StageBytes-1)}
	slots[5] = upd[0:2]
	slots[6] = upd[2:4]
	slots[7] = upd[4:6]
	slots[8] = upd[6:8]
	slots[9] = upd[8:12]
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
	n := len(b.p)
	b.add(sass.New("BRA", "", sass.Target(int64(16*(start-(n+1))))).When(sass.If(sass.P0)).Yield())
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

// epilogue stores alpha*acc with a predicate per element: row < M and
// column < N.
func (b *builder) epilogue() {
	b.add(
		// wait for the last HMMAs
		shr(rT0, rLane, 2).Wait(1<<5|1<<1), // the last HMMAs: SB5, SB1
		and(rT1, rLane, 3),
		lea(rT0, rWM, r(rT0), 6),
		iadd(rT0, r(rT0), r(rM0)),
		shl(rT1, rT1, 1),
		lea(rT1, rWN, r(rT1), 5),
		iadd(rT1, r(rT1), r(rN0)),
		sass.New("IADD3", "", r(rMRem), sass.Neg(r(rT0)), cb(pM), rz),
		sass.New("IADD3", "", r(rNRem), sass.Neg(r(rT1)), cb(pN), rz),
		sass.New("IMAD", "", r(rT2), r(rT0), cb(pLDD), r(rT1)),
		sass.New("MOV", "", r(rStepD), imm(32)),
		sass.New("IMAD", "", r(rStepD), r(rStepD), cb(pLDD), rz),
	)
	b.add(ptr(rPD, rT2, pD, 2, sass.P1)...)
	for rg := 0; rg < 8; rg++ {
		mi, h := rg>>1, rg&1
		b.add(isetp("GT", sass.P0, rMRem, imm(int64(8*rg)), pt))
		for half := 0; half < 2; half++ {
			var ps, fm, st []sass.Inst
			for e := 0; e < 4; e++ {
				ni, j := 2*half+e/2, e%2
				v := int(acc(mi, ni)) + 2*h + j
				p := sass.Pred(1 + e)
				ps = append(ps, isetp("GT", p, rNRem, imm(int64(ni*8+j)), sass.P(sass.P0)))
				fm = append(fm, sass.New("FMUL", "", r(v), r(v), cb(pAlpha)))
				st = append(st, sass.New("STG", "E", sass.G64(sass.Reg(rPD), int64(4*(ni*8+j))), r(v)).When(sass.If(p)).ReadSB(sass.SB1))
			}
			b.add(ps...)
			b.add(fm...)
			b.add(st...)
		}
		if rg < 7 {
			u := add64(rPD, r(rStepD), sass.P6)
			u[0] = u[0].Wait(1 << 1)
			b.add(u...)
		}
	}
}

// fixStalls raises stall counts so that every fixed-latency result is read
// (or its guard tested) only after the latency table's cycles, along the
// straight line and around the loop's back edge. It never lowers a
// hand-given stall. Stalls above 11 get the yield flag.
func (b *builder) fixStalls(lat *sass.LatencyTable, ls, le int) error {
	p := b.p
	deps := make([]sass.Deps, len(p))
	for k, i := range p {
		d, err := sass.DepsOf(i)
		if err != nil {
			return fmt.Errorf("instruction %d %s: %w", k, i, err)
		}
		deps[k] = d
	}
	// the sequence analysed: the program, with the loop body repeated once
	// more so that back-edge dependences are seen
	var seq []int
	for k := 0; k <= le; k++ {
		seq = append(seq, k)
	}
	for k := ls; k < len(p); k++ {
		seq = append(seq, k)
	}
	for pass := 0; pass < 3; pass++ {
		for j := 1; j < len(seq); j++ {
			cj := seq[j]
			dj := deps[cj]
			// walk back over producers
			cum := 0
			for q := j - 1; q >= 0 && cum < 16; q-- {
				cq := seq[q]
				cum += int(p[cq].Ctrl.Stall)
				dq := deps[cq]
				if dq.Class.Variable() || dq.Class == sass.ClassBranch || dq.Class == sass.ClassNone {
					continue
				}
				need := 0
				for _, w := range dq.Writes {
					for _, rd := range dj.Reads {
						if rd == w {
							if n := lat.Need(dq.Class, dj.Class); n > need {
								need = n
							}
						}
					}
					if dj.HasGuard && dj.Guard == w {
						if n := lat.Need(dq.Class, sass.ClassGuard); n > need {
							need = n
						}
					}
				}
				if need > cum {
					prev := seq[j-1]
					p[prev].Ctrl.Stall += uint8(need - cum)
					cum = need
				}
			}
		}
	}
	for k := range p {
		if p[k].Ctrl.Stall > 15 {
			return fmt.Errorf("instruction %d %s: stall %d", k, p[k], p[k].Ctrl.Stall)
		}
		if p[k].Ctrl.Stall > 11 {
			p[k].Ctrl.Yield = true
			p[k].Ctrl.Reuse = 0
		}
	}
	return nil
}

// Code returns the program's words.
func (p *Program) Code() ([]byte, error) { return sass.Encode(p.Insts) }

// Kernel returns the cubin description of the program.
func (p *Program) Kernel() (sass.Kernel, error) {
	code, err := p.Code()
	if err != nil {
		return sass.Kernel{}, err
	}
	return sass.Kernel{
		Name:          p.Config.Name(),
		Code:          code,
		Params:        Params(),
		Registers:     Registers,
		Barriers:      1,
		DynamicShared: true,
		MaxThreads:    [3]int{Threads, 1, 1},
		ExitOffsets:   p.Exits,
	}, nil
}

// Cubin assembles the program into a cubin for arch (86 or 89).
func (p *Program) Cubin(arch int) ([]byte, error) {
	k, err := p.Kernel()
	if err != nil {
		return nil, err
	}
	return sass.WriteCubin(arch, k)
}
