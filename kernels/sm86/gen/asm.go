package gen

import (
	"github.com/tcrt-go/tcrt/kernels/internal/sasskit"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
)

// Shorthands for the operands the generators use.
var (
	r, p, np       = sass.R, sass.P, sass.NotP
	imm, c0, waits = sasskit.Imm, sasskit.CB, sasskit.Waits
	rz, pt, npt    = sasskit.RZ, sasskit.PT, sasskit.NPT
)

// param is the constant-bank operand of the parameter at byte offset off
// of the parameter window.
func param(off int64) sass.Operand { return c0(cubin.ParamBase + off) }

// prog accumulates a program with the kit's builder; each instruction is
// appended with its control word as given (At).
type prog struct{ sasskit.Builder }

// end appends what ptxas ends every kernel with: a branch to itself after
// the last EXIT, then NOPs up to the next multiple of 128 bytes and 128
// bytes more.
func (g *prog) end() sass.Program {
	g.At(sass.New("BRA", "", sass.Target(-16)).Yield())
	for len(g.Prog)%8 != 0 {
		g.At(sass.New("NOP", "").Yield())
	}
	for range 8 {
		g.At(sass.New("NOP", "").Yield())
	}
	return g.Prog
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
