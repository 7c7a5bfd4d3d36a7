package sim

import (
	"math"

	"github.com/tcrt-go/tcrt/sass"
)

// f2ipLane3 is F2IP.U8.F32[.TRUNC][.NTZ] Rd, RZ, Rb, RZ (ptxas's
// cvt{.rni,.rzi}.sat.u8.f32): Rb rounded to an integer (nearest even, or
// toward zero with .TRUNC), saturated to 0..255 (NaN gives 0), in the low
// byte of Rd, every other bit zero. .NTZ (subnormal sources flushed)
// cannot change an integer result.
//
// F2IP packs two floats' bytes and merges a half of Rc; which source
// lands in which byte and which half of Rc is kept are not pinned down by
// any ptxas output (ptxas 11.8 emits only the form above, with RZ for Ra
// and Rc, and never fuses two conversions into one F2IP), so every other
// form -- a register for Ra or Rc, Rc.H1, .S8, .RELU -- is refused.
func f2ipLane3(in sass.Inst) (func(a, b, c uint32) uint32, int, error) {
	m, a := in.Mods, in.Args
	for _, x := range m {
		if x != "U8" && x != "F32" && x != "TRUNC" && x != "NTZ" {
			return nil, 0, bad("F2IP.%v: only F2IP.U8.F32 (.TRUNC, .NTZ) is modelled", m)
		}
	}
	if len(a) != 4 || a[1].Kind != sass.KReg || a[1].N != 255 || a[3].Kind != sass.KReg || a[3].N != 255 || a[3].Sel != "" ||
		a[2].Kind != sass.KReg || a[2].Neg || a[2].Abs {
		return nil, 0, bad("F2IP: only F2IP Rd, RZ, Rb, RZ is modelled")
	}
	round := math.RoundToEven
	if has(m, "TRUNC") {
		round = math.Trunc
	}
	return func(_, b, _ uint32) uint32 {
		x := float64(math.Float32frombits(b))
		switch {
		case x != x:
			return 0
		case round(x) <= 0:
			return 0
		case round(x) >= 255:
			return 255
		}
		return uint32(round(x))
	}, 3, nil
}
