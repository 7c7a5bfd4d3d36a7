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

// Combine parameter offsets.
const (
	cPartO  = cubin.ParamBase + 0x00 // u64 f32 [split][batch][nq][headsQ][d]
	cPartL  = cubin.ParamBase + 0x08 // u64 f32 [split][batch][headsQ][nq]
	cO      = cubin.ParamBase + 0x10
	cLSE    = cubin.ParamBase + 0x18 // u64, 0: not stored
	cSplits = cubin.ParamBase + 0x20
	cOSplit = cubin.ParamBase + 0x24 // bytes between splits' partial O
	cLSplit = cubin.ParamBase + 0x28 // bytes between splits' partial LSE
	cOS     = cubin.ParamBase + 0x2c // O byte strides: seq, head, batch
	cOH     = cubin.ParamBase + 0x30
	cOB     = cubin.ParamBase + 0x34
	cLH     = cubin.ParamBase + 0x38 // LSE byte strides: head, batch
	cLB     = cubin.ParamBase + 0x3c
	cNQ     = cubin.ParamBase + 0x40 // rows a batch (varlen: all rows, TotalQ)
	cHQ     = cubin.ParamBase + 0x44
	cCuQ    = cubin.ParamBase + 0x48 // u64: CuSeqQ (int32), or 0
	cEnd    = 0x50
)

// combine registers: the thread's d/32 accumulators and partials, then
// scalars.
const (
	xAcc  = 0  // 8
	xPart = 8  // 8
	xPO   = 16 // pair: partial O pointer
	xPL   = 18 // pair: partial LSE pointer
	xPD   = 20 // pair: O / LSE pointer
	xTid  = 22
	xI    = 23
	xH    = 24
	xB    = 25
	xM    = 26
	xS    = 27 // split counter
	xL    = 28
	xW    = 29
	xSum  = 30
	xT    = 32 // temporaries 32..40 (xT+6 a pair)
	xLast = 41
)

// CombineRegisters is the register count the combine kernels record.
const CombineRegisters = xLast - 1 + 3

// CombineProgram is a generated combine kernel.
type CombineProgram struct {
	Config sm86attn.CombineConfig
	Insts  sass.Program
	Exits  []int
}

// GenerateCombine emits the combine kernel for c.
func GenerateCombine(c sm86attn.CombineConfig) (*CombineProgram, error) {
	if c.HeadDim != 64 && c.HeadDim != 128 && c.HeadDim != 256 {
		return nil, fmt.Errorf("sm86attn: combine head dimension %d: 64, 128 and 256", c.HeadDim)
	}
	if !slices.Contains(sm86attn.Outputs(), c.Out) {
		return nil, fmt.Errorf("sm86attn: no combine kernel with %v output", c.Out)
	}
	b := &builder{tr: newTracker()}
	per := c.HeadDim / 32 // floats a thread
	// vector accesses of vec floats (at most 4: LDG/STG.E.128)
	vec := min(per, 4)
	ld := map[int]string{2: "E.64", 4: "E.128"}[vec]
	b.add(
		sass.New("S2R", "", r(xTid), sass.SR(sass.SRTidX)),
		sass.New("S2R", "", r(xI), sass.SR(sass.SRCtaidX)),
		sass.New("S2R", "", r(xH), sass.SR(sass.SRCtaidY)),
		sass.New("S2R", "", r(xB), sass.SR(sass.SRCtaidZ)),
		sass.New("ULDC", "64", sass.UR(4), cb(0x118)),
		mov(xM, imm(0xff800000)),
		mov(xSum, rz),
		mov(xPO, cb(cPartO)),
		mov(xPO+1, cb(cPartO+4)),
		mov(xPL, cb(cPartL)),
		mov(xPL+1, cb(cPartL+4)),
		mov(xT, cb(cNQ)),
		mov(xT+1, cb(cHQ)),
	)
	for k := 0; k < per; k++ {
		b.add(mov(xAcc+k, rz))
	}
	// varlen queries (CuSeqQ != 0, P3): rows [start, end) of batch 0;
	// CTA x past the sequence exits, else i = start + x and b = 0
	b.add(mov(xPD, cb(cCuQ)), mov(xPD+1, cb(cCuQ+4)), mov(xL, rz), mov(xW, rz))
	b.add(sass.New("LOP3", "LUT", r(xT+2), r(xPD), r(xPD+1), rz, imm(0xfc), sass.NotP(sass.PT)))
	b.add(isetp("NE", sass.P3, xT+2, rz, pt), wide(xPD, xB, imm(4), xPD))
	b.add(
		sass.New("LDG", "E", r(xL), sass.G64(sass.Reg(xPD), 0)).When(sass.If(sass.P3)),
		sass.New("LDG", "E", r(xW), sass.G64(sass.Reg(xPD), 4)).When(sass.If(sass.P3)),
	)
	b.add(sass.New("IADD3", "", r(xW), r(xW), sass.Neg(r(xL)), rz))
	b.add(isetp("GE", sass.P0, xI, r(xW), sass.P(sass.P3)))
	b.Exit()
	b.add(sass.New("EXIT", "").When(sass.If(sass.P0)).Yield().Stall(5))
	b.add(iadd(xI, r(xI), r(xL)), sass.New("SEL", "", r(xB), rz, r(xB), sass.P(sass.P3)))
	// partial O row ((b*nq + i)*HQ + h)*d*4 + lane*per*4; partial LSE
	// (b*HQ + h)*nq*4 + i*4
	b.add(
		sass.New("IMAD", "", r(xT+2), r(xB), r(xT), r(xI)),
		sass.New("IMAD", "", r(xT+3), r(xB), r(xT+1), r(xH)),
	)
	b.add(
		sass.New("IMAD", "", r(xT+2), r(xT+2), r(xT+1), r(xH)),
		sass.New("IMAD", "", r(xT+3), r(xT+3), r(xT), r(xI)),
	)
	b.add(
		shl(xT+2, xT+2, log2(4*c.HeadDim)),
		shl(xT+4, xTid, log2(4*per)),
		shl(xT+3, xT+3, 2),
	)
	b.add(iadd(xT+2, r(xT+2), r(xT+4)))
	b.add(wide(xPO, xT+2, imm(1), xPO), wide(xPL, xT+3, imm(1), xPL))
	// pass 1: m = max over splits
	b.add(mov(xS, cb(cSplits)), mov(xT+6, r(xPL)), mov(xT+7, r(xPL+1)))
	b.label("max")
	b.add(sass.New("LDG", "E", r(xL), sass.G64(sass.Reg(xT+6), 0)))
	b.add(
		sass.New("IADD3", "", r(xT+6), sass.P(sass.P1), r(xT+6), cb(cLSplit), rz),
		iadd(xS, r(xS), imm(-1)),
	)
	b.add(sass.New("IADD3", "X", r(xT+7), rz, r(xT+7), rz, sass.P(sass.P1), sass.NotP(sass.PT)))
	b.add(isetp("GT", sass.P0, xS, rz, pt))
	b.add(sass.New("FMNMX", "", r(xM), r(xM), r(xL), sass.NotP(sass.PT)))
	b.bra("max", sass.If(sass.P0))
	// m_safe: a row no split saw keeps weights exp(-inf) = 0
	b.add(sass.New("FSETP", "EQ.AND", sass.P(sass.P0), pt, r(xM), sass.F32Bits(0xff800000), pt))
	b.add(sass.New("FSEL", "", r(xM), rz, r(xM), sass.P(sass.P0)))
	// pass 2
	b.add(mov(xS, cb(cSplits)))
	b.label("sum")
	b.add(sass.New("LDG", "E", r(xL), sass.G64(sass.Reg(xPL), 0)))
	for k := 0; k < per; k += vec {
		b.add(sass.New("LDG", ld, r(xPart+k), sass.G64(sass.Reg(xPO), int64(4*k))))
	}
	b.add(
		sass.New("FADD", "", r(xW), r(xL), sass.Neg(r(xM))),
	)
	b.add(sass.New("FMUL", "", r(xW), r(xW), sass.F32(float32(math.Log2E))))
	b.add(mufu("EX2", xW, xW))
	b.add(sass.New("FADD", "", r(xSum), r(xSum), r(xW)))
	for k := 0; k < per; k++ {
		b.add(sass.New("FFMA", "", r(xAcc+k), r(xW), r(xPart+k), r(xAcc+k)))
	}
	b.add(
		sass.New("IADD3", "", r(xPO), sass.P(sass.P1), r(xPO), cb(cOSplit), rz),
		sass.New("IADD3", "", r(xPL), sass.P(sass.P2), r(xPL), cb(cLSplit), rz),
		iadd(xS, r(xS), imm(-1)),
	)
	b.add(
		sass.New("IADD3", "X", r(xPO+1), rz, r(xPO+1), rz, sass.P(sass.P1), sass.NotP(sass.PT)),
		sass.New("IADD3", "X", r(xPL+1), rz, r(xPL+1), rz, sass.P(sass.P2), sass.NotP(sass.PT)),
		isetp("GT", sass.P0, xS, rz, pt),
	)
	b.bra("sum", sass.If(sass.P0))
	// O = acc / sum (0 when sum is 0); LSE = m + ln sum
	b.add(
		sass.New("FSETP", "GT.AND", sass.P(sass.P0), pt, r(xSum), rz, pt),
		mufu("RCP", xT, xSum),
	)
	b.add(sass.New("FSEL", "", r(xT), r(xT), rz, sass.P(sass.P0)))
	b.add(mufu("LG2", xT+1, xSum))
	b.add(sass.New("FFMA", "", r(xT+1), r(xT+1), sass.F32(float32(math.Ln2)), r(xM)))
	for k := 0; k < per; k++ {
		b.add(sass.New("FMUL", "", r(xAcc+k), r(xAcc+k), r(xT)))
	}
	// O + b*oB + i*oS + h*oH + lane*per*esz
	esz := c.Out.Size()
	b.add(mov(xPD, cb(cO)), mov(xPD+1, cb(cO+4)), shl(xT+2, xTid, log2(per*esz)))
	b.add(wide(xPD, xB, cb(cOB), xPD))
	b.add(wide(xPD, xI, cb(cOS), xPD))
	b.add(wide(xPD, xH, cb(cOH), xPD))
	b.add(wide(xPD, xT+2, imm(1), xPD))
	switch c.Out {
	case tile.F32:
		for k := 0; k < per; k += vec {
			b.add(sass.New("STG", ld, sass.G64(sass.Reg(xPD), int64(4*k)), r(xAcc+k)))
		}
	default:
		mods := "PACK_AB"
		if c.Out == tile.BF16 {
			mods = "BF16.PACK_AB"
		}
		for k := 0; k < per/2; k++ {
			b.add(sass.New("F2FP", mods, r(xPart+k), r(xAcc+2*k+1), r(xAcc+2*k)))
		}
		st := map[int]string{1: "E", 2: "E.64", 4: "E.128"}[per/2]
		b.add(sass.New("STG", st, sass.G64(sass.Reg(xPD), 0), r(xPart)))
	}
	// LSE by lane 0 when LSE != 0: LSE + b*lB + h*lH + i*4
	b.add(mov(xPL, cb(cLSE)), mov(xPL+1, cb(cLSE+4)), isetp("EQ", sass.P0, xTid, rz, pt))
	b.add(sass.New("LOP3", "LUT", r(xT+3), r(xPL), r(xPL+1), rz, imm(0xfc), sass.NotP(sass.PT)))
	b.add(isetp("NE", sass.P0, xT+3, rz, sass.P(sass.P0)), wide(xPL, xB, cb(cLB), xPL))
	b.add(wide(xPL, xH, cb(cLH), xPL))
	b.add(wide(xPL, xI, imm(4), xPL))
	b.add(sass.New("STG", "E", sass.G64(sass.Reg(xPL), 0), r(xT+1)).When(sass.If(sass.P0)))
	b.Exit()
	b.add(sass.New("EXIT", "").Yield())
	b.bra("self", sass.Cond{})
	b.LabelAt("self", len(b.Prog)-1)
	for len(b.Prog)%8 != 0 {
		b.add(sass.New("NOP", ""))
	}
	if err := b.Resolve(); err != nil {
		return nil, fmt.Errorf("sm86attn: %w", err)
	}
	if b.err != nil {
		return nil, b.err
	}
	// the loops, for the stall pass's back edges
	for k, i := range b.Prog {
		if i.Op == "BRA" && i.Args[0].Imm < 0 {
			b.Loops = append(b.Loops, [2]int{k + 1 + int(i.Args[0].Imm/16), k})
		}
	}
	if err := b.FixStalls(sched.DefaultLatencies()); err != nil {
		return nil, err
	}
	p := &CombineProgram{Config: c, Insts: b.Prog}
	p.Exits = b.ExitOffsets()
	return p, nil
}

// Kernel returns the cubin description of the combine program.
func (p *CombineProgram) Kernel() (cubin.Kernel, error) {
	return sasskit.Kernel(p.Insts, cubin.Kernel{
		Name:        p.Config.Name(),
		Params:      sm86attn.CombineParams(),
		Registers:   CombineRegisters,
		MaxThreads:  [3]int{sm86attn.CombineThreads, 1, 1},
		ExitOffsets: p.Exits,
	})
}
