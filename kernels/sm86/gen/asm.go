package gen

import (
	"fmt"

	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
)

// Shorthands for the operands the generators use.
var (
	r   = sass.R
	imm = sass.Imm
	p   = sass.P
	np  = sass.NotP
	rz  = sass.R(sass.RZ)
	pt  = sass.P(sass.PT)
	npt = sass.NotP(sass.PT)
)

// c0 is the constant-bank-0 operand c[0x0][off] (kernel parameters start
// at cubin.ParamBase).
func c0(off int64) sass.Operand { return sass.CB(0, off) }

// param is the constant-bank operand of the parameter at byte offset off
// of the parameter window.
func param(off int64) sass.Operand { return c0(cubin.ParamBase + off) }

// prog accumulates a program; each instruction is given with its control
// word in the listing form ("[B01----:R-:W2:Y:S04]", see sass.Control).
type prog struct{ p sass.Program }

// at appends i with the control word ctl. A malformed control string is a
// bug in a generator, so it panics.
func (g *prog) at(ctl string, i sass.Inst) {
	c, err := sass.ParseControl(ctl)
	if err != nil {
		panic(fmt.Sprintf("sm86: instruction %d (%s): %v", len(g.p), i, err))
	}
	g.p = append(g.p, i.C(c))
}

// end appends what ptxas ends every kernel with: a branch to itself after
// the last EXIT, then NOPs up to the next multiple of 128 bytes and 128
// bytes more.
func (g *prog) end() sass.Program {
	g.at("[B------:R-:W-:Y:S00]", sass.New("BRA", "", sass.Target(-16)))
	for len(g.p)%8 != 0 {
		g.at("[B------:R-:W-:Y:S00]", sass.New("NOP", ""))
	}
	for range 8 {
		g.at("[B------:R-:W-:Y:S00]", sass.New("NOP", ""))
	}
	return g.p
}

// inst is sass.New.
func inst(op sass.Op, mods string, args ...sass.Operand) sass.Inst {
	return sass.New(op, mods, args...)
}

// exitOffsets returns the byte offsets of the EXIT instructions of p.
func exitOffsets(p sass.Program) []int {
	var out []int
	for k, i := range p {
		if i.Op == "EXIT" {
			out = append(out, 16*k)
		}
	}
	return out
}

// registers returns the register count to record for p: the highest
// general register it names plus 3, as ptxas 11.8 records it.
func registers(p sass.Program) int {
	hi := 0
	for _, i := range p {
		for _, a := range i.Args {
			n := -1
			switch {
			case a.Kind == sass.KReg && sass.Reg(a.N) != sass.RZ:
				n = int(a.N)
			case a.Kind == sass.KMem && sass.Reg(a.N) != sass.RZ:
				n = int(a.N) + 1
			}
			w := 1
			if a.Kind == sass.KReg {
				w = regWidth(i, a)
			}
			hi = max(hi, n+w-1)
		}
	}
	return hi + 3
}

// regWidth is how many consecutive registers an operand of i names: the
// quad of LDG.E.128's destination, the pairs of IMAD.WIDE and CS2R.
func regWidth(i sass.Inst, a sass.Operand) int {
	if len(i.Args) == 0 || i.Args[0] != a {
		return 1
	}
	switch {
	case i.Op == "LDG" && hasMod(i, "128"):
		return 4
	case i.Op == "LDG" && hasMod(i, "64"):
		return 2
	case i.Op == "IMAD" && hasMod(i, "WIDE"), i.Op == "CS2R" && !hasMod(i, "32"):
		return 2
	}
	return 1
}

func hasMod(i sass.Inst, m string) bool {
	for _, x := range i.Mods {
		if x == m {
			return true
		}
	}
	return false
}
