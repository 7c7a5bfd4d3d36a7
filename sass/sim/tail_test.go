package sim

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/x448/float16"
)

// tailRefs are Go references of the PTX instructions ptxas compiles to
// the tail forms' integer operations (opcodes.go), written from the PTX ISA's definitions
// (independently of tail.go's lane functions).
var tailRefs = []struct {
	op  string // the instruction, sources R8, R9, R10
	ref func(a, b, c uint32) uint32
}{
	{"VABSDIFF.U32 R12, R8, R9, R10", func(a, b, c uint32) uint32 { // sad.u32
		if a > b {
			return c + (a - b)
		}
		return c + (b - a)
	}},
	{"VABSDIFF R12, R8, R9, R10", func(a, b, c uint32) uint32 { // vabsdiff.s32.s32.s32.add
		d := int64(int32(a)) - int64(int32(b))
		if d < 0 {
			d = -d
		}
		return uint32(int64(c) + d)
	}},
	{"VABSDIFF4.U8.ACC R12, R8, R9, R10", func(a, b, c uint32) uint32 { return vabsdiff4Ref(a, b, c, false) }},
	{"VABSDIFF4.ACC R12, R8, R9, R10", func(a, b, c uint32) uint32 { return vabsdiff4Ref(a, b, c, true) }},
	{"IDP.4A.U8.U8 R12, R8, R9, R10", func(a, b, c uint32) uint32 { return dp4aRef(a, b, c, false, false) }},
	{"IDP.4A.S8.S8 R12, R8, R9, R10", func(a, b, c uint32) uint32 { return dp4aRef(a, b, c, true, true) }},
	{"IDP.4A.S8.U8 R12, R8, R9, R10", func(a, b, c uint32) uint32 { return dp4aRef(a, b, c, true, false) }},
	{"IDP.4A.U8.S8 R12, R8, R9, R10", func(a, b, c uint32) uint32 { return dp4aRef(a, b, c, false, true) }},
	{"IDP.2A.LO.U16.U8 R12, R8, R9, R10", func(a, b, c uint32) uint32 { return dp2aRef(a, b, c, false, false, false) }},
	{"IDP.2A.HI.S16.S8 R12, R8, R9, R10", func(a, b, c uint32) uint32 { return dp2aRef(a, b, c, true, true, true) }},
	{"IDP.2A.HI.U16.S8 R12, R8, R9, R10", func(a, b, c uint32) uint32 { return dp2aRef(a, b, c, true, false, true) }},
	{"BMSK R12, R8, R9", func(a, b, _ uint32) uint32 { return bmskRef(min(a, 32), min(b, 32)) }}, // bmsk.clamp
	{"BMSK.W R12, R8, R9", func(a, b, _ uint32) uint32 { return bmskRef(a&31, b&31) }},           // bmsk.wrap
	{"SGXT R12, R8, R9", func(a, b, _ uint32) uint32 { return szextRef(a, min(b, 32), true) }},   // szext.clamp.s32
	{"SGXT.U32 R12, R8, R9", func(a, b, _ uint32) uint32 { return szextRef(a, min(b, 32), false) }},
	{"SGXT.W.U32 R12, R8, R9", func(a, b, _ uint32) uint32 { return szextRef(a, b&31, false) }}, // szext.wrap.u32
	{"I2I.S8.S32.SAT R12, R8", func(a, _, _ uint32) uint32 { return uint32(clampRef(int32(a), -128, 127)) }},
	{"I2I.U8.S32.SAT R12, R8", func(a, _, _ uint32) uint32 { return uint32(clampRef(int32(a), 0, 255)) }},
	{"I2I.S16.S32.SAT R12, R8", func(a, _, _ uint32) uint32 { return uint32(clampRef(int32(a), -32768, 32767)) }},
	{"I2I.U16.S32.SAT R12, R8", func(a, _, _ uint32) uint32 { return uint32(clampRef(int32(a), 0, 65535)) }},
	{"PRMT.F4E R12, R8, R9, R10", func(a, s, b uint32) uint32 {
		return prmtIdxRef(a, b, [4][4]int{{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}}[s&3])
	}},
	{"PRMT.B4E R12, R8, R9, R10", func(a, s, b uint32) uint32 {
		return prmtIdxRef(a, b, [4][4]int{{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}}[s&3])
	}},
	{"PRMT.RC8 R12, R8, R9, R10", func(a, s, b uint32) uint32 {
		return prmtIdxRef(a, b, [4][4]int{{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}}[s&3])
	}},
	{"PRMT.ECL R12, R8, R9, R10", func(a, s, b uint32) uint32 {
		return prmtIdxRef(a, b, [4][4]int{{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}}[s&3])
	}},
	{"PRMT.ECR R12, R8, R9, R10", func(a, s, b uint32) uint32 {
		return prmtIdxRef(a, b, [4][4]int{{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}}[s&3])
	}},
	{"PRMT.RC16 R12, R8, R9, R10", func(a, s, b uint32) uint32 {
		return prmtIdxRef(a, b, [4][4]int{{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}}[s&3])
	}},
}

func vabsdiff4Ref(a, b, c uint32, signed bool) uint32 {
	s := int64(c)
	for i := 0; i < 4; i++ {
		x, y := int64(uint8(a>>(8*i))), int64(uint8(b>>(8*i)))
		if signed {
			x, y = int64(int8(a>>(8*i))), int64(int8(b>>(8*i)))
		}
		if x > y {
			s += x - y
		} else {
			s += y - x
		}
	}
	return uint32(s)
}

func byteOf(v uint32, i int, signed bool) int64 {
	if signed {
		return int64(int8(v >> (8 * i)))
	}
	return int64(uint8(v >> (8 * i)))
}

func dp4aRef(a, b, c uint32, sa, sb bool) uint32 {
	s := int64(c)
	for i := 0; i < 4; i++ {
		s += byteOf(a, i, sa) * byteOf(b, i, sb)
	}
	return uint32(s)
}

func dp2aRef(a, b, c uint32, hi, sa, sb bool) uint32 {
	h := func(i int) int64 {
		if sa {
			return int64(int16(a >> (16 * i)))
		}
		return int64(uint16(a >> (16 * i)))
	}
	k := 0
	if hi {
		k = 2
	}
	return uint32(int64(c) + h(0)*byteOf(b, k, sb) + h(1)*byteOf(b, k+1, sb))
}

func bmskRef(pos, width uint32) uint32 {
	var m uint32
	for i := pos; i < pos+width && i < 32; i++ {
		m |= 1 << i
	}
	return m
}

func szextRef(a, n uint32, signed bool) uint32 {
	if n == 0 {
		return 0
	}
	var v uint32
	for i := uint32(0); i < 32; i++ {
		src := min(i, n-1)
		if !signed && i >= n {
			continue
		}
		v |= (a >> src & 1) << i
	}
	return v
}

func clampRef(x, lo, hi int32) int32 {
	if x < lo {
		return lo
	}
	if x > hi {
		return hi
	}
	return x
}

// prmtRef picks the bytes idx (d.b0 first) of {b, a}.
func prmtIdxRef(a, b uint32, idx [4]int) uint32 {
	src := [8]uint32{a & 0xff, a >> 8 & 0xff, a >> 16 & 0xff, a >> 24, b & 0xff, b >> 8 & 0xff, b >> 16 & 0xff, b >> 24}
	return src[idx[0]] | src[idx[1]]<<8 | src[idx[2]]<<16 | src[idx[3]]<<24
}

// TestSimTail runs each of the tail forms' integer operations (opcodes.go) the simulator
// executes lane by lane (tail.go) on 64 threads of random inputs (small
// values for the widths and positions among them) and compares every lane
// with the reference, after poisoning the output.
func TestSimTail(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 1))
	for _, tc := range tailRefs {
		src := `
[B------:R-:W0:-:S01] S2R R1, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x10 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R2, R1, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E.128 R8, [R2.64] ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B------:R-:W-:-:S04] IMAD.WIDE R6, R1, R5, c[0x0][0x168] ;
[B-1----:R-:W-:-:S06] ` + tc.op + ` ;
[B------:R-:W-:-:S04] STG.E [R6.64], R12 ;
[B------:R-:W-:-:S05] EXIT ;
`
		p := asm(t, src)
		in := make([]uint32, 4*64)
		for i := range in {
			switch r.IntN(3) {
			case 0:
				in[i] = r.Uint32N(40)
			default:
				in[i] = r.Uint32()
			}
		}
		m := NewMemory()
		ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", nil, 64)
		if _, err := Launch(p, Config{StrictScoreboards: true, Block: [3]int{64}, Memory: m, Params: params(ai, ao), Poison: true}); err != nil {
			t.Fatalf("%s: %v", tc.op, err)
		}
		out := simWords(m.Bytes("out"))
		for l := 0; l < 64; l++ {
			a, b, c := in[4*l], in[4*l+1], in[4*l+2]
			if want := tc.ref(a, b, c); out[l] != want {
				t.Fatalf("%s lane %d (%#x, %#x, %#x): %#x, want %#x", tc.op, l, a, b, c, out[l], want)
			}
		}
	}
}

// TestSimDoubleDirected runs DADD, DMUL and DFMA with each directed
// rounding on 64 lanes: edge cases first (exact zero sums, overflow,
// underflow to the smallest subnormal), then random normal-range operands
// (near-cancelling sums among them), against math/big rounding the exact
// value to 53 bits in the same direction. Results compare bit for bit.
func TestSimDoubleDirected(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 2))
	modes := map[string]big.RoundingMode{"RZ": big.ToZero, "RM": big.ToNegativeInf, "RP": big.ToPositiveInf}
	tiny := math.SmallestNonzeroFloat64
	edges := map[string][][3]float64{
		"DADD": {{1.5, -1.5, 0}, {math.MaxFloat64, math.MaxFloat64, 0}, {-math.MaxFloat64, -math.MaxFloat64, 0}, {tiny, tiny, 0}, {math.Copysign(0, -1), 0, 0}},
		"DMUL": {{1e-200, 1e-200, 0}, {-1e-200, 1e-200, 0}, {1e200, 1e200, 0}, {-1e200, 1e200, 0}, {3, 0, 0}},
		"DFMA": {{2, 3, -6}, {1e-200, 1e-200, tiny}, {1e200, 1e200, -1}, {-1e300, 1e300, 1}, {0, 5, math.Copysign(0, -1)}},
	}
	for _, op := range []string{"DADD", "DMUL", "DFMA"} {
		for mode, bm := range modes {
			args := "R14, R8, R10"
			if op == "DFMA" {
				args += ", R12"
			}
			src := `
[B------:R-:W0:-:S01] S2R R1, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x20 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R2, R1, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E.128 R8, [R2.64] ;
[B------:R-:W1:-:S04] LDG.E.64 R12, [R2.64+0x10] ;
[B------:R-:W-:-:S02] MOV R5, 0x8 ;
[B------:R-:W-:-:S04] IMAD.WIDE R6, R1, R5, c[0x0][0x168] ;
[B-1----:R-:W2:-:S04] ` + op + `.` + mode + ` ` + args + ` ;
[B--2---:R-:W-:-:S04] STG.E.64 [R6.64], R14 ;
[B------:R-:W-:-:S05] EXIT ;
`
			p := asm(t, src)
			vals := make([][3]float64, 64)
			for l := range vals {
				if l < len(edges[op]) {
					vals[l] = edges[op][l]
					continue
				}
				for k := range vals[l] {
					vals[l][k] = math.Ldexp(1+r.Float64(), r.IntN(41)-20)
					if r.IntN(2) == 0 {
						vals[l][k] = -vals[l][k]
					}
				}
				if l%4 == 0 { // a near-cancelling sum
					vals[l][1] = -vals[l][0] * (1 + math.Ldexp(r.Float64(), -40))
					vals[l][2] = -vals[l][0] * vals[l][1] * (1 + math.Ldexp(r.Float64(), -45))
				}
			}
			in := make([]uint32, 8*64)
			for l, v := range vals {
				for k, x := range v {
					b := math.Float64bits(x)
					in[8*l+2*k], in[8*l+2*k+1] = uint32(b), uint32(b>>32)
				}
			}
			m := NewMemory()
			ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", nil, 128)
			if _, err := Launch(p, Config{StrictScoreboards: true, Block: [3]int{64}, Memory: m, Params: params(ai, ao), Poison: true}); err != nil {
				t.Fatalf("%s.%s: %v", op, mode, err)
			}
			out := simWords(m.Bytes("out"))
			for l, v := range vals {
				got := math.Float64frombits(uint64(out[2*l]) | uint64(out[2*l+1])<<32)
				want := dRoundRef(op, v, bm)
				if math.Float64bits(got) != math.Float64bits(want) {
					t.Errorf("%s.%s lane %d %v: %v (%#x), want %v (%#x)", op, mode, l, v, got, math.Float64bits(got), want, math.Float64bits(want))
				}
			}
		}
	}
}

// dRoundRef rounds the exact result of op on v to binary64 in direction bm:
// math/big to 53 bits for normal results; the edge cases of
// TestSimDoubleDirected by IEEE 754's rules.
func dRoundRef(op string, v [3]float64, bm big.RoundingMode) float64 {
	x, y, z := new(big.Float).SetFloat64(v[0]), new(big.Float).SetFloat64(v[1]), new(big.Float).SetFloat64(v[2])
	e := new(big.Float).SetPrec(4400)
	switch op {
	case "DADD":
		e.Add(x, y)
	case "DMUL":
		e.Mul(x, y)
	default:
		e.Add(new(big.Float).SetPrec(200).Mul(x, y), z)
	}
	if e.Sign() == 0 {
		// exact zero: the sign of the product; sums -0 rounding down
		// unless every term is +0
		neg := math.Signbit(v[0]) != math.Signbit(v[1])
		switch op {
		case "DADD":
			neg = bm == big.ToNegativeInf && !(v[0] == 0 && v[1] == 0 && !math.Signbit(v[0]) && !math.Signbit(v[1])) ||
				math.Signbit(v[0]) && math.Signbit(v[1])
		case "DFMA":
			pneg := neg
			neg = bm == big.ToNegativeInf && !(v[0]*v[1] == 0 && !pneg && v[2] == 0 && !math.Signbit(v[2])) || pneg && math.Signbit(v[2])
		}
		return math.Copysign(0, map[bool]float64{true: -1, false: 1}[neg])
	}
	a := new(big.Float).Abs(e)
	if a.Cmp(new(big.Float).SetFloat64(math.MaxFloat64)) > 0 {
		if bm == big.ToZero || bm == big.ToNegativeInf && e.Sign() > 0 || bm == big.ToPositiveInf && e.Sign() < 0 {
			return math.Copysign(math.MaxFloat64, float64(e.Sign()))
		}
		return math.Inf(e.Sign())
	}
	if a.Cmp(new(big.Float).SetFloat64(0x1p-1022)) < 0 {
		// subnormal range: a whole number of 2^-1074, rounded in direction
		q := new(big.Float).SetMantExp(e, 1074)
		n, _ := q.Int(nil) // toward zero
		if new(big.Float).SetInt(n).Cmp(q) != 0 {
			if bm == big.ToNegativeInf && e.Sign() < 0 {
				n.Sub(n, big.NewInt(1))
			} else if bm == big.ToPositiveInf && e.Sign() > 0 {
				n.Add(n, big.NewInt(1))
			}
		}
		f := math.Ldexp(float64(n.Int64()), -1074)
		if f == 0 {
			return math.Copysign(0, float64(e.Sign()))
		}
		return f
	}
	f, _ := new(big.Float).SetPrec(53).SetMode(bm).Set(e).Float64()
	return f
}

// TestSimHalfModifiers runs HADD2, HMUL2 and HFMA2 (binary16 and
// bfloat16) with source selectors, negation and absolute value on 64 lanes
// of random pairs, against the plain operation (hop2, checked by the
// simulator's own tests) on inputs transformed by halfModRef.
func TestSimHalfModifiers(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 3))
	type srcMod struct {
		text     string
		sel      int // 0 none, 1 .H0_H0, 2 .H1_H1
		neg, abs bool
	}
	mods := []srcMod{{"R8", 0, false, false}, {"-R8", 0, true, false}, {"|R8|", 0, false, true}, {"-|R8|", 0, true, true},
		{"R8.H0_H0", 1, false, false}, {"R8.H1_H1", 2, false, false}, {"-R8.H1_H1", 2, true, false}, {"|R8|.H0_H0", 1, false, true}}
	for _, op := range []string{"HADD2", "HMUL2", "HFMA2", "HFMA2.BF16_V2"} {
		for trial := 0; trial < 6; trial++ {
			ms := [3]srcMod{mods[r.IntN(len(mods))], mods[r.IntN(len(mods))], mods[r.IntN(len(mods))]}
			regs := []string{"R8", "R9", "R10"}
			var args []string
			n := 2
			if op[:5] == "HFMA2" {
				n = 3
			}
			for k := 0; k < n; k++ {
				args = append(args, strings.Replace(ms[k].text, "R8", regs[k], 1))
			}
			if strings.Join(args, "") == strings.Join(regs[:n], "") {
				continue // the plain form is TestSimHalf's
			}
			src := `
[B------:R-:W0:-:S01] S2R R1, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x10 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R2, R1, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E.128 R8, [R2.64] ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B------:R-:W-:-:S04] IMAD.WIDE R6, R1, R5, c[0x0][0x168] ;
[B-1----:R-:W-:-:S06] ` + op + ` R12, ` + strings.Join(args, ", ") + ` ;
[B------:R-:W-:-:S04] STG.E [R6.64], R12 ;
[B------:R-:W-:-:S05] EXIT ;
`
			p := asm(t, src)
			in := make([]uint32, 4*64)
			for i := range in {
				in[i] = r.Uint32()
			}
			m := NewMemory()
			ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", nil, 64)
			if _, err := Launch(p, Config{StrictScoreboards: true, Block: [3]int{64}, Memory: m, Params: params(ai, ao), Poison: true}); err != nil {
				t.Fatalf("%s %v: %v", op, args, err)
			}
			out := simWords(m.Bytes("out"))
			hop := map[string]int{"HADD2": 0, "HMUL2": 1, "HFMA2": 2, "HFMA2.BF16_V2": 2}[op]
			for l := 0; l < 64; l++ {
				var v [3]uint32
				for k := 0; k < n; k++ {
					v[k] = halfModRef(in[4*l+k], ms[k].sel, ms[k].neg, ms[k].abs)
				}
				if want := hop2(hop, v[0], v[1], v[2], op == "HFMA2.BF16_V2"); out[l] != want {
					t.Fatalf("%s %v lane %d: %#x, want %#x", op, args, l, out[l], want)
				}
			}
		}
	}
}

// halfModRef transforms the two halves one by one: the selected half
// (0 as is), then |h| and -h on each.
func halfModRef(v uint32, sel int, neg, abs bool) uint32 {
	h := [2]uint16{uint16(v), uint16(v >> 16)}
	switch sel {
	case 1:
		h[1] = h[0]
	case 2:
		h[0] = h[1]
	}
	for k := range h {
		if abs {
			h[k] &^= 1 << 15
		}
		if neg {
			h[k] ^= 1 << 15
		}
	}
	return uint32(h[0]) | uint32(h[1])<<16
}

// halfCmpRef is setp's comparison on two binary16 values (x448/float16):
// ordered codes false on NaN, unordered ones (U) true.
func halfCmpRef(code string, a, b uint16, ftz bool) bool {
	if ftz {
		for _, h := range []*uint16{&a, &b} {
			if *h&0x7c00 == 0 {
				*h &= 0x8000
			}
		}
	}
	x, y := float16.Frombits(a).Float32(), float16.Frombits(b).Float32()
	nan := x != x || y != y
	base := strings.TrimSuffix(code, "U")
	var r bool
	switch base {
	case "LT":
		r = x < y
	case "EQ":
		r = x == y
	case "LE":
		r = x <= y
	case "GT":
		r = x > y
	case "NE":
		r = x != y
	case "GE":
		r = x >= y
	case "NUM":
		return !nan
	case "NAN":
		return nan
	}
	if code != base {
		return r || nan
	}
	return r && !nan
}

// TestSimHalfCompare runs HSETP2 and HSET2 (.BF, .FTZ, AND/OR/XOR with
// PT, swizzled and negated sources, immediate pairs) on 64 lanes of random halves, NaN,
// infinities, zeros and subnormals among them.
func TestSimHalfCompare(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 4))
	special := []uint16{0x7e00, 0xfc00, 0x7c00, 0x0000, 0x8000, 0x0001, 0x83ff, 0x3c00, 0xbc00}
	randHalf := func() uint32 {
		if r.IntN(3) == 0 {
			return uint32(special[r.IntN(len(special))])
		}
		return r.Uint32N(1 << 16)
	}
	for _, tc := range []struct {
		op, code string
		ftz, bf  bool
		logic    string
		bSrc     string
	}{
		{"HSETP2", "LT", false, false, "AND", "R9"}, {"HSETP2", "GTU", false, false, "AND", "R9"},
		{"HSETP2", "NE", true, false, "AND", "R9"}, {"HSETP2", "EQ", false, false, "XOR", "-R9.H1_H1"},
		{"HSETP2", "NAN", false, false, "OR", "R9"}, {"HSETP2", "GE", false, false, "AND", "|R9|.H0_H0"},
		{"HSET2", "LE", false, true, "AND", "R9"}, {"HSET2", "LTU", true, false, "AND", "R9"},
		{"HSET2", "NUM", false, true, "AND", "R9"}, {"HSET2", "NEU", false, false, "XOR", "R9.H0_H0"},
		// a pair of immediates (H1 first: nvcc's comparisons with constants)
		{"HSET2", "LT", false, true, "AND", "0.5, -2"}, {"HSETP2", "GEU", false, false, "AND", "8.523464202880859375e-06, -inf"},
	} {
		name := tc.op
		if tc.bf {
			name += ".BF"
		}
		name += "." + tc.code
		if tc.ftz {
			name += ".FTZ"
		}
		name += "." + tc.logic
		body := `[B-1----:R-:W-:-:S06] ` + name + ` P0, P1, R8, ` + tc.bSrc + `, PT ;
[B------:R-:W-:-:S02] SEL R12, RZ, 0x1, !P0 ;
[B------:R-:W-:-:S04] SEL R13, RZ, 0x2, !P1 ;
[B------:R-:W-:-:S04] IADD3 R12, R12, R13, RZ ;`
		if tc.op == "HSET2" {
			body = `[B-1----:R-:W-:-:S06] ` + name + ` R12, R8, ` + tc.bSrc + `, PT ;`
		}
		src := `
[B------:R-:W0:-:S01] S2R R1, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x10 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R2, R1, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E.128 R8, [R2.64] ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B------:R-:W-:-:S04] IMAD.WIDE R6, R1, R5, c[0x0][0x168] ;
` + body + `
[B------:R-:W-:-:S04] STG.E [R6.64], R12 ;
[B------:R-:W-:-:S05] EXIT ;
`
		p := asm(t, src)
		in := make([]uint32, 4*64)
		for i := range in {
			in[i] = randHalf() | randHalf()<<16
		}
		m := NewMemory()
		ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", nil, 64)
		if _, err := Launch(p, Config{StrictScoreboards: true, Block: [3]int{64}, Memory: m, Params: params(ai, ao), Poison: true}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out := simWords(m.Bytes("out"))
		for l := 0; l < 64; l++ {
			a, b := in[4*l], in[4*l+1]
			switch tc.bSrc {
			case "-R9.H1_H1":
				b = (b>>16 | b&0xffff0000) ^ 0x80008000
			case "|R9|.H0_H0":
				b = (b&0xffff | b<<16) & 0x7fff7fff
			case "R9.H0_H0":
				b = b&0xffff | b<<16
			case "0.5, -2":
				b = 0x3800<<16 | 0xc000
			case "8.523464202880859375e-06, -inf":
				b = 0x008f<<16 | 0xfc00
			}
			var want uint32
			for k := 0; k < 2; k++ {
				res := halfCmpRef(tc.code, uint16(a>>(16*k)), uint16(b>>(16*k)), tc.ftz)
				switch tc.logic {
				case "OR":
					res = true
				case "XOR":
					res = !res
				}
				if !res {
					continue
				}
				switch {
				case tc.op == "HSETP2":
					want |= 1 << k
				case tc.bf:
					want |= 0x3c00 << (16 * k)
				default:
					want |= 0xffff << (16 * k)
				}
			}
			if out[l] != want {
				t.Fatalf("%s lane %d (%#x, %#x): %#x, want %#x", name, l, a, b, out[l], want)
			}
		}
	}
}

// TestSimHalfMinMax runs HMNMX2 (binary16 and bfloat16, with and without
// .NAN, min with PT and max with !PT, a source with |x|) on random halves
// with NaN, infinities and both zeros among them, against PTX's min/max:
// -0 below +0, one NaN gives the other value (any NaN the canonical NaN
// 0x7fff with .NaN, or when both are NaN).
func TestSimHalfMinMax(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 5))
	special := []uint16{0x7e00, 0xfc00, 0x7c00, 0x0000, 0x8000, 0x7fc0, 0xff81, 0x3c00}
	randHalf := func() uint32 {
		if r.IntN(3) == 0 {
			return uint32(special[r.IntN(len(special))])
		}
		return r.Uint32N(1 << 16)
	}
	val := func(h uint16, bf bool) float32 {
		if bf {
			return math.Float32frombits(uint32(h) << 16)
		}
		return float16.Frombits(h).Float32()
	}
	ref := func(a, b uint16, bf, nan, isMin bool) uint16 {
		x, y := val(a, bf), val(b, bf)
		if x != x && y != y || nan && (x != x || y != y) {
			return 0x7fff
		}
		if x != x {
			return b
		}
		if y != y {
			return a
		}
		if x == 0 && y == 0 {
			neg := a == 0x8000 || b == 0x8000
			if !isMin {
				neg = a == 0x8000 && b == 0x8000
			}
			if neg {
				return 0x8000
			}
			return 0
		}
		if (x < y) == isMin {
			return a
		}
		return b
	}
	for _, tc := range []struct {
		mods, pred, bSrc string
	}{{"", "PT", "R9"}, {".NAN", "PT", "R9"}, {"", "!PT", "R9"}, {".NAN", "!PT", "|R9|"}, {".BF16_V2.NAN", "!PT", "R9"}, {".BF16_V2", "PT", "R9"},
		{".BF16_V2", "PT", "1, -0.5"}} { // an immediate pair, H1 first (nvcc's clamp)
		name := "HMNMX2" + tc.mods
		src := `
[B------:R-:W0:-:S01] S2R R1, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x10 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R2, R1, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E.128 R8, [R2.64] ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B------:R-:W-:-:S04] IMAD.WIDE R6, R1, R5, c[0x0][0x168] ;
[B-1----:R-:W-:-:S06] ` + name + ` R12, R8, ` + tc.bSrc + `, ` + tc.pred + ` ;
[B------:R-:W-:-:S04] STG.E [R6.64], R12 ;
[B------:R-:W-:-:S05] EXIT ;
`
		p := asm(t, src)
		in := make([]uint32, 4*64)
		for i := range in {
			in[i] = randHalf() | randHalf()<<16
		}
		m := NewMemory()
		ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", nil, 64)
		if _, err := Launch(p, Config{StrictScoreboards: true, Block: [3]int{64}, Memory: m, Params: params(ai, ao), Poison: true}); err != nil {
			t.Fatalf("%s %s: %v", name, tc.pred, err)
		}
		out := simWords(m.Bytes("out"))
		bf, nan := strings.Contains(tc.mods, "BF16"), strings.Contains(tc.mods, "NAN")
		for l := 0; l < 64; l++ {
			a, b := in[4*l], in[4*l+1]
			switch tc.bSrc {
			case "|R9|":
				b &= 0x7fff7fff
			case "1, -0.5":
				b = 0x3f80<<16 | 0xbf00
			}
			var want uint32
			for k := 0; k < 32; k += 16 {
				want |= uint32(ref(uint16(a>>k), uint16(b>>k), bf, nan, tc.pred == "PT")) << k
			}
			if out[l] != want {
				t.Fatalf("%s %s lane %d (%#x, %#x): %#x, want %#x", name, tc.pred, l, a, b, out[l], want)
			}
		}
	}
}

// TestSimPLOP3Sign runs PLOP3.LUT over three registers' sign bits (ptxas's
// 64-bit sign tests) with random truth tables on random words.
func TestSimPLOP3Sign(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 6))
	for trial := 0; trial < 8; trial++ {
		lut := r.IntN(256)
		src := `
[B------:R-:W0:-:S01] S2R R1, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x10 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R2, R1, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E.128 R8, [R2.64] ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B------:R-:W-:-:S04] IMAD.WIDE R6, R1, R5, c[0x0][0x168] ;
[B-1----:R-:W-:-:S06] PLOP3.LUT P2, PT, R8.SIGN, R9.SIGN, R10.SIGN, ` + fmt.Sprintf("%#x", lut) + `, 0x0 ;
[B------:R-:W-:-:S13] SEL R12, RZ, 0x1, !P2 ;
[B------:R-:W-:-:S04] STG.E [R6.64], R12 ;
[B------:R-:W-:-:S05] EXIT ;
`
		p := asm(t, src)
		in := make([]uint32, 4*64)
		for i := range in {
			in[i] = r.Uint32()
		}
		m := NewMemory()
		ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", nil, 64)
		if _, err := Launch(p, Config{StrictScoreboards: true, Block: [3]int{64}, Memory: m, Params: params(ai, ao), Poison: true}); err != nil {
			t.Fatalf("lut %#x: %v", lut, err)
		}
		out := simWords(m.Bytes("out"))
		for l := 0; l < 64; l++ {
			neg := func(v uint32) int {
				if int32(v) < 0 {
					return 1
				}
				return 0
			}
			idx := 4*neg(in[4*l]) + 2*neg(in[4*l+1]) + neg(in[4*l+2])
			if want := uint32(lut >> idx & 1); out[l] != want {
				t.Fatalf("lut %#x lane %d (%#x %#x %#x): %d, want %d", lut, l, in[4*l], in[4*l+1], in[4*l+2], out[l], want)
			}
		}
	}
}

// TestSimIADD3XCarryOut runs a 64-bit add as ptxas writes a 96-bit one:
// IADD3 with a carry out, then IADD3.X with a carry in and a carry out
// (IADD3.X Rd, Pc, a, b, RZ, P0, !PT), against Go's 64-bit sum and its
// overflow.
func TestSimIADD3XCarryOut(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 7))
	src := `
[B------:R-:W0:-:S01] S2R R1, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x10 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R2, R1, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E.128 R8, [R2.64] ;
[B------:R-:W-:-:S02] MOV R5, 0x10 ;
[B------:R-:W-:-:S04] IMAD.WIDE R6, R1, R5, c[0x0][0x168] ;
[B-1----:R-:W-:-:S04] IADD3 R12, P0, R8, R10, RZ ;
[B------:R-:W-:-:S13] IADD3.X R13, P1, R9, R11, RZ, P0, !PT ;
[B------:R-:W-:-:S13] SEL R14, RZ, 0x1, !P1 ;
[B------:R-:W-:-:S02] MOV R15, RZ ;
[B------:R-:W-:-:S04] STG.E.128 [R6.64], R12 ;
[B------:R-:W-:-:S05] EXIT ;
`
	p := asm(t, src)
	in := make([]uint32, 4*64)
	for i := range in {
		in[i] = r.Uint32()
		if i%4 == 1 && i < 64 {
			in[i] |= 0xffff0000 // high words near the top: carries out
		}
	}
	m := NewMemory()
	ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", nil, 4*64)
	if _, err := Launch(p, Config{StrictScoreboards: true, Block: [3]int{64}, Memory: m, Params: params(ai, ao), Poison: true}); err != nil {
		t.Fatal(err)
	}
	out := simWords(m.Bytes("out"))
	carries := 0
	for l := 0; l < 64; l++ {
		x := uint64(in[4*l]) | uint64(in[4*l+1])<<32
		y := uint64(in[4*l+2]) | uint64(in[4*l+3])<<32
		s, c := bits.Add64(x, y, 0)
		carries += int(c)
		if got := uint64(out[4*l]) | uint64(out[4*l+1])<<32; got != s || uint64(out[4*l+2]) != c {
			t.Fatalf("lane %d: %#x + %#x = %#x carry %d, want %#x carry %d", l, x, y, got, out[4*l+2], s, c)
		}
	}
	if carries == 0 || carries == 64 {
		t.Fatalf("%d of 64 lanes carry out: the inputs test one case only", carries)
	}
}
