//go:build ignore

// light_gen writes light_fused_amd64.s, the AVX2 (+FMA3, F16C) row
// kernels of the light ops (the fused kernels, whose float32 variants are
// also the vector kernels of light_vec.go), and with -decl their Go
// declarations and tables, light_fused_amd64.go:
//
//	go run light_gen.go > light_fused_amd64.s
//	go run light_gen.go -decl > light_fused_amd64.go
//
// Each kernel reads its rows in their own element type (f32, f16 or bf16),
// widens eight elements at a time to float32 in a register, computes, and
// narrows the result (round to nearest even, NaN kept quiet, as the
// converters do) straight into the output row: one pass over memory, no
// float32 copy of the row. A kernel processes the largest multiple of 8
// elements of its count; the Go wrappers (light_fused.go) do the tails.
// Kernels with an nt argument store with non-temporal stores when it is
// not 0 (the destination then must be 32-byte aligned) and end with
// SFENCE. Most kernels take 16 elements a trip and store them together
// (storePair), then a last 8.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
)

var out strings.Builder

func p(format string, args ...any) { fmt.Fprintf(&out, format+"\n", args...) }

func lines(ls ...string) {
	for _, l := range ls {
		p("\t%s", l)
	}
}

// typ is an element type of the rows. For bf16, unpacked (with zero, a
// register holding 0) makes the 16-element loads and stores of load16
// and storePair work in unpacked order: 16 elements at p are loaded by
// one unpack each into [p0..p3, p8..p11] and [p4..p7, p12..p15] (two
// instructions instead of four), and a pair in that order packs back
// into p0..p15 without a lane permutation. A kernel of such a type
// therefore sees a 16-element block's elements in that order: its float32
// operands other than the rows (norm weights and bias, softmax's
// exponentials) are in it too (unpackedOrder in light_fused.go), and its
// output must be bf16. The 8-element loop is in natural order.
//
// noNaN, when set, is a register that is nonzero when the caller knows
// the values stored hold no NaN: storePair then skips its NaN test.
type typ struct {
	name, goName string
	unpacked     bool
	zero, noNaN  string
}

// unpack returns the bf16 type t in unpacked order with zero register z
// (other types unchanged).
func (t typ) unpack(z string) typ {
	if t.name == "BF16" {
		t.unpacked, t.zero = true, z
	}
	return t
}

// pairOrder returns t and u in unpacked order (zero register z) when both
// are bf16, else as they are.
func pairOrder(t, u typ, z string) (typ, typ) {
	if t.name == "BF16" && u.name == "BF16" {
		return t.unpack(z), u.unpack(z)
	}
	return t, u
}

// setup emits what the type's loads need before the loop.
func (t typ) setup() {
	if t.unpacked {
		lines("VPXOR " + t.zero + ", " + t.zero + ", " + t.zero)
	}
}

// load16 widens 16 elements at addr (an offset(reg) operand) into y0 and
// y1: elements 0–7 and 8–15, or in unpacked order.
func (t typ) load16(addr, y0, y1 string) {
	if t.unpacked {
		lines("VPUNPCKLWD "+addr+", "+t.zero+", "+y0, "VPUNPCKHWD "+addr+", "+t.zero+", "+y1)
		return
	}
	t.load(addr, y0)
	t.load(offset(addr, 8*t.size()), y1)
}

// offset adds o bytes to the offset(reg) operand addr.
func offset(addr string, o int) string {
	if i := strings.IndexByte(addr, '('); i > 0 {
		var b int
		fmt.Sscan(addr[:i], &b)
		return fmt.Sprintf("%d%s", b+o, addr[i:])
	}
	return fmt.Sprintf("%d%s", o, addr)
}

var types = []typ{{name: "F32", goName: "tile.F32"}, {name: "F16", goName: "tile.F16"}, {name: "BF16", goName: "tile.BF16"}}

func (t typ) size() int {
	if t.name == "F32" {
		return 4
	}
	return 2
}

// load widens eight elements at addr into register y (Y0..Y15).
func (t typ) load(addr, y string) {
	switch t.name {
	case "F32":
		lines("VMOVUPS " + addr + ", " + y)
	case "F16":
		lines("VCVTPH2PS " + addr + ", " + y)
	default:
		lines("VPMOVZXWD "+addr+", "+y, "VPSLLD $16, "+y+", "+y)
	}
}

// narrow rounds the eight float32 of Y2 to the type, leaving them packed
// in X0 (Y2 for f32); it uses Y0, Y1, Y3.
func (t typ) narrow() string {
	switch t.name {
	case "F32":
		return "Y2"
	case "F16":
		lines("VCVTPS2PH $0, Y2, X0")
	default:
		lines(
			"VPSRLD $16, Y2, Y1",
			"VPAND ·lightFK+0(SB), Y1, Y0", // (x >> 16) & 1
			"VPADDD ·lightFK+32(SB), Y0, Y0",
			"VPADDD Y2, Y0, Y0",
			"VPSRLD $16, Y0, Y0",
			"VPAND ·lightFK+64(SB), Y2, Y3",
			"VPCMPGTD ·lightFK+96(SB), Y3, Y3", // NaN
			"VPOR ·lightFK+128(SB), Y1, Y1",
			"VPBLENDVB Y3, Y1, Y0, Y0",
			"VEXTRACTI128 $1, Y0, X1",
			"VPACKUSDW X1, X0, X0",
		)
	}
	return "X0"
}

// store narrows Y2 and stores it at addr (non-temporally when nt).
func (t typ) store(addr string, nt bool) {
	r := t.narrow()
	switch {
	case t.name == "F32" && nt:
		lines("VMOVNTPS " + r + ", " + addr)
	case t.name == "F32":
		lines("VMOVUPS " + r + ", " + addr)
	case nt:
		lines("VMOVNTDQ " + r + ", " + addr)
	default:
		lines("VMOVDQU " + r + ", " + addr)
	}
}

// labelN numbers the labels of storePair's NaN paths.
var labelN int

// roundBF16 leaves in dst the bf16 bits of the float32 lanes of src (in
// the low half of each lane), rounded to nearest even, for lanes that are
// not NaN; it uses tmp.
func roundBF16(src, dst, tmp string) {
	lines(
		"VPSRLD $16, "+src+", "+tmp,
		"VPAND ·lightFK+0(SB), "+tmp+", "+tmp, // (x >> 16) & 1
		"VPADDD "+src+", "+tmp+", "+dst,
		"VPADDD ·lightFK+32(SB), "+dst+", "+dst,
		"VPSRLD $16, "+dst+", "+dst,
	)
}

// storePair narrows the sixteen float32 of Y2 (the first eight) and Y3
// and stores them at addr (non-temporally when nt: then addr is 32-byte
// aligned); it uses Y0, Y1, Y4, Y5. For bf16 the NaN lanes' fix-up runs
// only when the pair holds a NaN.
func (t typ) storePair(addr string, nt bool) { t.storeTwo(addr, "", nt) }

// storeTwo is storePair with the second eight stored at addr2 (not after
// the first eight) when addr2 is not empty; then nt must be false.
func (t typ) storeTwo(addr, addr2 string, nt bool) {
	at := func(o int) string {
		if o == 0 {
			return addr
		}
		return offset(addr, o)
	}
	second := func(o int) string {
		if addr2 != "" {
			return addr2
		}
		return at(o)
	}
	switch t.name {
	case "F32":
		op := "VMOVUPS"
		if nt {
			op = "VMOVNTPS"
		}
		lines(op+" Y2, "+addr, op+" Y3, "+second(32))
		return
	case "F16":
		lines("VCVTPS2PH $0, Y2, X0", "VCVTPS2PH $0, Y3, X1")
		op := "VMOVDQU"
		if nt {
			op = "VMOVNTDQ"
		}
		lines(op+" X0, "+addr, op+" X1, "+second(16))
		return
	}
	labelN++
	join := fmt.Sprintf("lfjoin%d", labelN)
	roundBF16("Y2", "Y0", "Y1")
	roundBF16("Y3", "Y1", "Y5")
	if t.noNaN != "" {
		lines("TESTQ "+t.noNaN+", "+t.noNaN, "JNZ "+join)
	}
	lines("VCMPPS $3, Y3, Y2, Y4", "VPTEST Y4, Y4", "JZ "+join)
	// A NaN lane becomes x >> 16 with the quiet bit.
	for _, r := range [][2]string{{"Y2", "Y0"}, {"Y3", "Y1"}} {
		lines(
			"VPSRLD $16, "+r[0]+", Y4",
			"VPOR ·lightFK+128(SB), Y4, Y4",
			"VCMPPS $3, "+r[0]+", "+r[0]+", Y5",
			"VPBLENDVB Y5, Y4, "+r[1]+", "+r[1],
		)
	}
	p("%s:", join)
	lines("VPACKUSDW Y1, Y0, Y4")
	if !t.unpacked {
		lines("VPERMQ $0xd8, Y4, Y4")
	}
	if addr2 != "" {
		lines("VMOVDQU X4, "+addr, "VEXTRACTI128 $1, Y4, X5", "VMOVDQU X5, "+addr2)
		return
	}
	if nt {
		lines("VMOVNTDQ Y4, " + addr)
	} else {
		lines("VMOVDQU Y4, " + addr)
	}
}

// rewidenPair puts the values storePair stored back into Y2 and Y3 as
// float32: the values the type holds.
func (t typ) rewidenPair() {
	switch t.name {
	case "F16":
		lines("VCVTPH2PS X0, Y2", "VCVTPH2PS X1, Y3")
	case "BF16":
		lines("VPSLLD $16, Y0, Y2", "VPSLLD $16, Y1, Y3")
	}
}

// rewiden puts the narrowed value (X0, or Y2 for f32) back into Y2 as
// float32: the value the type holds.
func (t typ) rewiden() {
	switch t.name {
	case "F16":
		lines("VCVTPH2PS X0, Y2")
	case "BF16":
		lines("VPMOVZXWD X0, Y2", "VPSLLD $16, Y2, Y2")
	}
}

// arg is a Go argument: name and size.
type arg struct {
	name string
	size int
}

func ptr(n string) arg { return arg{n, 8} }
func f32(n string) arg { return arg{n, 4} }
func i64(n string) arg { return arg{n, 8} }

// frame lays out args (and a float32 result when ret) as the Go ABI0 does
// and returns the offsets and the frame size.
func frame(args []arg, ret, ret64 bool) (map[string]int, int) {
	off := map[string]int{}
	o := 0
	for _, a := range args {
		o = (o + a.size - 1) / a.size * a.size
		off[a.name] = o
		o += a.size
	}
	if ret {
		o = (o + 7) / 8 * 8
		off["ret"] = o
		o += 4
		if ret64 {
			o += 4
		}
	}
	return off, o
}

// kernel is one generated function: its Go signature, the table entry it
// fills and its body.
type kernel struct {
	name  string
	args  []arg
	ret   bool
	ret64 bool // an 8-byte result
	goSig string
	entry string
	body  func(off map[string]int)
}

var kernels []kernel

func movq(off map[string]int, name, reg string) {
	lines(fmt.Sprintf("MOVQ %s+%d(FP), %s", name, off[name], reg))
}

func bcast(off map[string]int, name, y string) {
	lines(fmt.Sprintf("VBROADCASTSS %s+%d(FP), %s", name, off[name], y))
}

// loop emits a loop over CX elements, 8 a trip; incs are the pointer
// registers and their element sizes.
func loop(label string, body func(), incs map[string]int) { loopN(label, 8, body, incs) }

// loopN is loop with step elements a trip.
func loopN(label string, step int, body func(), incs map[string]int) {
	p("%s:", label)
	lines(fmt.Sprintf("CMPQ CX, $%d", step), "JLT "+label+"done")
	body()
	for _, r := range []string{"SI", "DI", "DX", "BX", "R8", "R9", "R10", "R11", "R12", "R13"} {
		if s, ok := incs[r]; ok {
			lines(fmt.Sprintf("ADDQ $%d, %s", step*s, r))
		}
	}
	lines(fmt.Sprintf("SUBQ $%d, CX", step), "JMP "+label)
	p("%sdone:", label)
}

// ntLoops2 is ntLoops with a loop of 16 a trip (body16) before the loop
// of 8; bit 0 of nt selects the non-temporal stores, and bit 1 (the
// caller knows the values stored hold no NaN) is left in R11, the noNaN
// register of the kernels that use it.
func ntLoops2(off map[string]int, label string, body16, body8 func(nt bool), incs map[string]int) {
	lines(fmt.Sprintf("MOVQ nt+%d(FP), AX", off["nt"]), "MOVQ AX, R11", "ANDQ $2, R11", "TESTQ $1, AX", "JNZ "+label+"nt")
	loopN(label+"w", 16, func() { body16(false) }, incs)
	loop(label, func() { body8(false) }, incs)
	lines("VZEROUPPER", "RET")
	p("%snt:", label)
	loopN(label+"nw", 16, func() { body16(true) }, incs)
	loop(label+"n", func() { body8(true) }, incs)
	lines("SFENCE", "VZEROUPPER", "RET")
}

// ntLoops emits the loop twice, with ordinary and with non-temporal
// stores, chosen by the nt argument, and returns.
func ntLoops(off map[string]int, label string, body func(nt bool), incs map[string]int) {
	lines(fmt.Sprintf("MOVQ nt+%d(FP), AX", off["nt"]), "TESTQ AX, AX", "JNZ "+label+"nt")
	loop(label, func() { body(false) }, incs)
	lines("VZEROUPPER", "RET")
	p("%snt:", label)
	loop(label+"n", func() { body(true) }, incs)
	lines("SFENCE", "VZEROUPPER", "RET")
}

// hsum adds the lanes of Y0 into the float32 result and returns.
func hsum(off map[string]int) {
	lines("VEXTRACTF128 $1, Y0, X1", "VADDPS X1, X0, X0", "VHADDPS X0, X0, X0", "VHADDPS X0, X0, X0",
		"VZEROUPPER", fmt.Sprintf("MOVSS X0, ret+%d(FP)", off["ret"]), "RET")
}

// reduce is a reduction kernel over x: Y0, Y4, Y8 and Y12 accumulate
// step(x, acc), four vectors a trip (four dependency chains), from zero
// (or from the constant at init), combined by comb.
func reduce(name string, t typ, extra []arg, setup func(off map[string]int), step func(x, acc string), init, comb string) {
	args := append([]arg{ptr("x")}, extra...)
	args = append(args, i64("n"))
	name += t.name
	kernels = append(kernels, kernel{
		name: name, args: args, ret: true,
		body: func(off map[string]int) {
			movq(off, "x", "SI")
			movq(off, "n", "CX")
			if init == "" {
				lines("VXORPS Y0, Y0, Y0", "VXORPS Y4, Y4, Y4")
			} else {
				lines("VBROADCASTSS "+init+", Y0", "VMOVAPS Y0, Y4")
			}
			lines("VMOVAPS Y0, Y8", "VMOVAPS Y0, Y12")
			setup(off)
			// Four accumulators, 32 elements a trip (bf16 in unpacked
			// order: a sum's order does not matter), then 8 a trip.
			tu := t.unpack("Y14")
			tu.setup()
			p("%s4:", name)
			lines("CMPQ CX, $32", "JLT "+name+"1")
			tu.load16("(SI)", "Y1", "Y5")
			tu.load16(fmt.Sprintf("%d(SI)", 16*t.size()), "Y9", "Y13")
			step("Y1", "Y0")
			step("Y5", "Y4")
			step("Y9", "Y8")
			step("Y13", "Y12")
			lines(fmt.Sprintf("ADDQ $%d, SI", 32*t.size()), "SUBQ $32, CX", "JMP "+name+"4")
			p("%s1:", name)
			lines("CMPQ CX, $8", "JLT "+name+"done")
			t.load("(SI)", "Y1")
			step("Y1", "Y0")
			lines(fmt.Sprintf("ADDQ $%d, SI", 8*t.size()), "SUBQ $8, CX", "JMP "+name+"1")
			p("%sdone:", name)
			lines(comb+" Y8, Y0, Y0", comb+" Y12, Y4, Y4")
			lines(comb + " Y4, Y0, Y0")
			if comb == "VMAXPS" {
				lines("VEXTRACTF128 $1, Y0, X1", "VMAXPS X1, X0, X0", "VPERMILPS $0x4e, X0, X1", "VMAXPS X1, X0, X0",
					"VPERMILPS $0xb1, X0, X1", "VMAXPS X1, X0, X0",
					"VZEROUPPER", fmt.Sprintf("MOVSS X0, ret+%d(FP)", off["ret"]), "RET")
				return
			}
			hsum(off)
		},
	})
}

// expK are the vector constants of the kernels (8 float32 lanes each), at
// lightFE+32·i: ExpF32's (exp2x), −Inf, then pow2's and the gates'
// (pow2K in lightrows.go, gateK and geluK in act.go, the same values).
var expK = []struct {
	name string
	bits uint32
}{
	{"log2e", 0x3fb8aa3b}, {"magic", 0x4b400000}, {"ln2hi", 0x3f318000}, {"ln2lo", 0xb95e8083},
	{"p0", 0x39506967}, {"p1", 0x3ab743ce}, {"p2", 0x3c088908}, {"p3", 0x3d2aa9c1}, {"p4", 0x3e2aaaaa}, {"p5", 0x3f000000},
	{"one", 0x3f800000}, {"below", 0xc2aeac4f}, {"above", 0x42b17217}, {"inf", 0x7f800000}, {"i127", 0x7f},
	{"sign", 0x80000000}, {"m87", 0xc2ae0000}, {"ninf", 0xff800000},
	{"q1", f32bits(0.693147004)}, {"q2", f32bits(0.240222424)}, {"q3", f32bits(0.0555073358)},
	{"q4", f32bits(0.00967151299)}, {"q5", f32bits(0.00132647273)},
	{"m127", f32bits(-127)}, {"m126", f32bits(-126)}, {"p128", f32bits(128)},
	{"nlog2e", f32bits(-1.44269502)}, {"gk1", f32bits(-2.30220819)}, {"gk3", f32bits(-0.102943242)},
	{"abs", 0x7fffffff}, {"ep", f32bits(0.231641889)}, {"eh", f32bits(-0.721347511)},
	{"e0", f32bits(0.127414793)}, {"e1", f32bits(-0.142248362)}, {"e2", f32bits(0.71070689)},
	{"e3", f32bits(-0.72657603)}, {"e4", f32bits(0.53070271)},
}

func f32bits(v float32) uint32 { return math.Float32bits(v) }

func ek(name string) string {
	for i, k := range expK {
		if k.name == name {
			return fmt.Sprintf("·lightFE+%d(SB)", 32*i)
		}
	}
	panic(name)
}

// expRegs are the registers of one exp chain: in, out and four temporaries.
type expRegs struct{ in, out, t1, t3, t4, t5 string }

// exp2x computes out = ExpF32(in) for each chain, the chains' instructions
// interleaved (two independent dependency chains keep the units busy);
// the operations and their order are ExpF32's (the same bits), the
// constants memory operands.
func exp2x(cs ...expRegs) { exp2xOf(false, cs...) }

// exp2xFast is exp2x for inputs known to be in [−87, 0] (no NaN): no
// limits, and 2^n in one step (n ≥ −126, so 2^n is a normal float and
// p·2^n is rounded once either way: the same bits).
func exp2xFast(cs ...expRegs) { exp2xOf(true, cs...) }

func exp2xOf(fast bool, cs ...expRegs) {
	steps := func(r expRegs) []string {
		all := []string{
			"VMULPS " + ek("log2e") + ", " + r.in + ", " + r.t1,
			"VADDPS " + ek("magic") + ", " + r.t1 + ", " + r.t1,
			"VSUBPS " + ek("magic") + ", " + r.t1 + ", " + r.t3,
			"VPSUBD " + ek("magic") + ", " + r.t1 + ", " + r.t1,
			"VMULPS " + ek("ln2hi") + ", " + r.t3 + ", " + r.t4,
			"VSUBPS " + r.t4 + ", " + r.in + ", " + r.t4,
			"VMULPS " + ek("ln2lo") + ", " + r.t3 + ", " + r.t5,
			"VSUBPS " + r.t5 + ", " + r.t4 + ", " + r.t3,
			"VMULPS " + ek("p0") + ", " + r.t3 + ", " + r.out,
			"VADDPS " + ek("p1") + ", " + r.out + ", " + r.out,
			"VMULPS " + r.t3 + ", " + r.out + ", " + r.out,
			"VADDPS " + ek("p2") + ", " + r.out + ", " + r.out,
			"VMULPS " + r.t3 + ", " + r.out + ", " + r.out,
			"VADDPS " + ek("p3") + ", " + r.out + ", " + r.out,
			"VMULPS " + r.t3 + ", " + r.out + ", " + r.out,
			"VADDPS " + ek("p4") + ", " + r.out + ", " + r.out,
			"VMULPS " + r.t3 + ", " + r.out + ", " + r.out,
			"VADDPS " + ek("p5") + ", " + r.out + ", " + r.out,
			"VMULPS " + r.t3 + ", " + r.out + ", " + r.out,
			"VMULPS " + r.t3 + ", " + r.out + ", " + r.out,
			"VADDPS " + r.t3 + ", " + r.out + ", " + r.out,
			"VADDPS " + ek("one") + ", " + r.out + ", " + r.out,
			"VPSRAD $1, " + r.t1 + ", " + r.t4,
			"VPSUBD " + r.t4 + ", " + r.t1 + ", " + r.t5,
			"VPADDD " + ek("i127") + ", " + r.t4 + ", " + r.t4,
			"VPADDD " + ek("i127") + ", " + r.t5 + ", " + r.t5,
			"VPSLLD $23, " + r.t4 + ", " + r.t4,
			"VPSLLD $23, " + r.t5 + ", " + r.t5,
			"VMULPS " + r.t4 + ", " + r.out + ", " + r.out,
			"VMULPS " + r.t5 + ", " + r.out + ", " + r.out,
			"VCMPPS $1, " + ek("below") + ", " + r.in + ", " + r.t5,
			"VANDNPS " + r.out + ", " + r.t5 + ", " + r.out,
			"VCMPPS $0x1e, " + ek("above") + ", " + r.in + ", " + r.t5,
			"VMOVUPS " + ek("inf") + ", " + r.t4,
			"VBLENDVPS " + r.t5 + ", " + r.t4 + ", " + r.out + ", " + r.out,
			"VCMPPS $3, " + r.in + ", " + r.in + ", " + r.t5,
			"VBLENDVPS " + r.t5 + ", " + r.in + ", " + r.out + ", " + r.out,
		}
		if !fast {
			return all
		}
		// Up to the polynomial, then 2^n = (n + 127) << 23 and one product.
		return append(all[:22:22],
			"VPADDD "+ek("i127")+", "+r.t1+", "+r.t4,
			"VPSLLD $23, "+r.t4+", "+r.t4,
			"VMULPS "+r.t4+", "+r.out+", "+r.out)
	}
	var all [][]string
	for _, c := range cs {
		all = append(all, steps(c))
	}
	for i := range all[0] {
		for _, s := range all {
			lines(s[i])
		}
	}
}

// pow2 computes out = 2^in for each chain, chains interleaved, for in
// in [−127, 128] or NaN: n = round(in), f = in − n (exact, |f| ≤ 1/2),
// 2^f by a degree-5 polynomial in fused multiply-adds (its relative error
// below 1.7e-7; the polynomial's value at f = 0 is exactly 1), and n
// added to the exponent field. So 2^n·p is exact scaling for n in
// [−126, 127]; in = 128 gives +Inf and in = −127 gives +0 (in in (−127,
// −126.5) gives a subnormal below 2^−126); NaN stays NaN (n converts to
// the integer indefinite, whose shift is 0). pow2F32 (lightrows.go) is
// the same operations. It uses t1 and t3; q5 is an operand holding
// pow2's q5 (a register saves a load).
func pow2(q5 string, cs ...expRegs) {
	steps := func(r expRegs) []string {
		s := []string{
			"VROUNDPS $0, " + r.in + ", " + r.t1,
			"VSUBPS " + r.t1 + ", " + r.in + ", " + r.t3,
			"VMOVAPS " + q5 + ", " + r.out,
		}
		if q5[0] != 'Y' {
			s[2] = "VMOVUPS " + q5 + ", " + r.out
		}
		for _, q := range []string{"q4", "q3", "q2", "q1", "one"} {
			s = append(s, "VFMADD213PS "+ek(q)+", "+r.t3+", "+r.out)
		}
		return append(s, "VCVTPS2DQ "+r.t1+", "+r.t1, "VPSLLD $23, "+r.t1+", "+r.t1, "VPADDD "+r.t1+", "+r.out+", "+r.out)
	}
	var all [][]string
	for _, c := range cs {
		all = append(all, steps(c))
	}
	interleave(all...)
}

// interleave emits the op lists one op of each in turn (the lists are of
// equal length).
func interleave(all ...[]string) {
	for i := range all[0] {
		for _, s := range all {
			lines(s[i])
		}
	}
}

var chainA = expRegs{"Y0", "Y2", "Y1", "Y3", "Y4", "Y5"}
var chainB = expRegs{"Y8", "Y10", "Y9", "Y11", "Y12", "Y13"}

// sampleKernels are the sampling pass kernels.
func sampleKernels() {
	// w = ⌊ExpF32(x·inv − m)·2^40⌋ (NaN: 0), 16 a trip; returns Σ w.
	// The Sum variant (w unused) only returns Σ w.
	for _, store := range []bool{true, false} {
		name, entry, L := "lightFSampleWeights", "sampleWeights", "lfsw"
		if !store {
			name, entry, L = "lightFSampleWeightSum", "sampleWeightSum", "lfsws"
		}
		kernels = append(kernels, kernel{
			name: name, args: []arg{ptr("w"), ptr("x"), f32("inv"), f32("m"), i64("n")}, ret: true, ret64: true,
			goSig: "(w *uint64, x *float32, inv, m float32, n int) uint64", entry: entry,
			body: func(off map[string]int) {
				movq(off, "w", "DI")
				movq(off, "x", "SI")
				movq(off, "n", "CX")
				bcast(off, "inv", "Y6")
				bcast(off, "m", "Y7")
				lines("VPXOR Y14, Y14, Y14", "VPXOR Y15, Y15, Y15")
				p("%s:", L)
				lines("CMPQ CX, $16", "JLT "+L+"done",
					"VMULPS (SI), Y6, Y0", "VMULPS 32(SI), Y6, Y8", "VSUBPS Y7, Y0, Y0", "VSUBPS Y7, Y8, Y8",
					// Every lane ≥ −87 (so not NaN): the fast exponential.
					"VCMPPS $0x0d, "+ek("m87")+", Y0, Y1", "VCMPPS $0x0d, "+ek("m87")+", Y8, Y9",
					"VANDPS Y1, Y9, Y1", "VMOVMSKPS Y1, AX", "CMPL AX, $0xff", "JNE "+L+"slow")
				exp2xFast(chainA, chainB)
				lines("JMP " + L + "int")
				p("%sslow:", L)
				exp2x(chainA, chainB)
				for _, r := range []expRegs{chainA, chainB} {
					lines("VCMPPS $3, "+r.out+", "+r.out+", "+r.t1, "VANDNPS "+r.out+", "+r.t1+", "+r.out)
				}
				p("%sint:", L)
				for i, r := range []expRegs{chainA, chainB} {
					acc := []string{"Y14", "Y15"}[i]
					lines(
						"VCVTPS2PD "+x(r.out)+", "+r.t1,
						"VEXTRACTF128 $1, "+r.out+", "+x(r.t3),
						"VCVTPS2PD "+x(r.t3)+", "+r.t3,
						"VMULPD ·lightFD+0(SB), "+r.t1+", "+r.t1,
						"VMULPD ·lightFD+0(SB), "+r.t3+", "+r.t3,
						"VROUNDPD $3, "+r.t1+", "+r.t1,
						"VROUNDPD $3, "+r.t3+", "+r.t3,
						"VADDPD ·lightFD+32(SB), "+r.t1+", "+r.t1,
						"VADDPD ·lightFD+32(SB), "+r.t3+", "+r.t3,
						"VPSUBQ ·lightFD+32(SB), "+r.t1+", "+r.t1,
						"VPSUBQ ·lightFD+32(SB), "+r.t3+", "+r.t3,
						"VPADDQ "+r.t1+", "+acc+", "+acc,
						"VPADDQ "+r.t3+", "+acc+", "+acc,
					)
					if store {
						lines(fmt.Sprintf("VMOVDQU %s, %d(DI)", r.t1, 64*i), fmt.Sprintf("VMOVDQU %s, %d(DI)", r.t3, 64*i+32))
					}
				}
				lines("ADDQ $64, SI", "ADDQ $128, DI", "SUBQ $16, CX", "JMP "+L)
				p("%sdone:", L)
				lines("VPADDQ Y15, Y14, Y14", "VEXTRACTI128 $1, Y14, X1", "VPADDQ X1, X14, X0", "VPSHUFD $0x4e, X0, X1", "VPADDQ X1, X0, X0",
					"VZEROUPPER", fmt.Sprintf("MOVQ X0, ret+%d(FP)", off["ret"]), "RET")
			},
		})
	}
	// idx receives, in order, the indices i < n (n a multiple of 8) with
	// x_i·inv ≥ sigma (NaN: no), 8 a trip by a permutation from the
	// comparison's mask (lightFPerm); it writes up to 8 entries past the
	// count. Returns the count.
	kernels = append(kernels, kernel{
		name: "lightFSampleSelect", args: []arg{ptr("idx"), ptr("x"), f32("inv"), f32("sigma"), i64("n")}, ret: true, ret64: true,
		goSig: "(idx *int32, x *float32, inv, sigma float32, n int) int", entry: "sampleSelect",
		body: func(off map[string]int) {
			movq(off, "idx", "DI")
			movq(off, "x", "SI")
			movq(off, "n", "CX")
			bcast(off, "inv", "Y6")
			bcast(off, "sigma", "Y7")
			lines("MOVQ DI, R9", "LEAQ ·lightFPerm(SB), R10", "VMOVDQU ·lightFIota(SB), Y5", "VPBROADCASTD ·lightFIota+32(SB), Y4")
			loop("lfsel", func() {
				lines("VMULPS (SI), Y6, Y0", "VCMPPS $0x1d, Y7, Y0, Y1", "VMOVMSKPS Y1, AX",
					"MOVQ AX, DX", "SHLQ $5, DX", "VMOVDQU (R10)(DX*1), Y2", "VPERMD Y5, Y2, Y3", "VMOVDQU Y3, (DI)",
					"POPCNTL AX, AX", "LEAQ (DI)(AX*4), DI", "VPADDD Y4, Y5, Y5")
			}, map[string]int{"SI": 4})
			lines("SUBQ R9, DI", "SHRQ $2, DI", "VZEROUPPER", fmt.Sprintf("MOVQ DI, ret+%d(FP)", off["ret"]), "RET")
		},
	})
}

// x is the xmm register of a ymm one.
func x(y string) string { return "X" + y[1:] }

const unsafeP = "unsafe.Pointer"

func build() {
	for i, t := range types {
		ix := fmt.Sprint(i)
		none := func(map[string]int) {}
		reduce("lightFSumSq", t, nil, none, func(x, acc string) { lines("VFMADD231PS " + x + ", " + x + ", " + acc) }, "", "VADDPS")
		kernels[len(kernels)-1].goSig, kernels[len(kernels)-1].entry = "(x unsafe.Pointer, n int) float32", "sumSq["+ix+"]"
		reduce("lightFSum", t, nil, none, func(x, acc string) { lines("VADDPS " + x + ", " + acc + ", " + acc) }, "", "VADDPS")
		kernels[len(kernels)-1].goSig, kernels[len(kernels)-1].entry = "(x unsafe.Pointer, n int) float32", "sum["+ix+"]"
		reduce("lightFSumSqDev", t, []arg{f32("m")}, func(off map[string]int) { bcast(off, "m", "Y15") }, func(x, acc string) {
			lines("VSUBPS Y15, "+x+", "+x, "VFMADD231PS "+x+", "+x+", "+acc)
		}, "", "VADDPS")
		kernels[len(kernels)-1].goSig, kernels[len(kernels)-1].entry = "(x unsafe.Pointer, m float32, n int) float32", "sumSqDev["+ix+"]"
		// acc stays unless x > acc: NaN is skipped, as `if v > m` does.
		reduce("lightFMax", t, nil, none, func(x, acc string) { lines("VMAXPS " + acc + ", " + x + ", " + acc) }, ek("ninf"), "VMAXPS")
		kernels[len(kernels)-1].goSig, kernels[len(kernels)-1].entry = "(x unsafe.Pointer, n int) float32", "max["+ix+"]"

		// dst (f32) = 2^max(−127, (x − m)·a) (pow2; a = log2(e)/T, so
		// e^((x − m)/T), and exactly 0 far below m); the sum of dst. For
		// bf16 also expSumU, dst in unpacked order.
		variants := []typ{t}
		if t.name == "BF16" {
			variants = append(variants, t.unpack("Y5"))
		}
		for _, t := range variants {
			name, entry, label := "lightFExpSum"+t.name, "expSum["+ix+"]", "lfexp"+t.name
			if t.unpacked {
				name, entry, label = "lightFExpSumUBF16", "expSumU", "lfexpu"
			}
			kernels = append(kernels, kernel{
				name: name, args: []arg{ptr("dst"), ptr("x"), f32("m"), f32("a"), i64("n")}, ret: true,
				goSig: "(dst *float32, x unsafe.Pointer, m, a float32, n int) float32", entry: entry,
				body: func(off map[string]int) {
					movq(off, "dst", "DI")
					movq(off, "x", "SI")
					movq(off, "n", "CX")
					bcast(off, "m", "Y6")
					bcast(off, "a", "Y7")
					lines("VXORPS Y14, Y14, Y14", "VXORPS Y15, Y15, Y15", "VBROADCASTSS "+ek("m127")+", Y12",
						"VBROADCASTSS "+ek("q5")+", Y13")
					// The clamp keeps a NaN: VMAXPS returns its first Go
					// operand when either is NaN.
					arg := func(r expRegs) []string {
						return []string{"VSUBPS Y6, " + r.in + ", " + r.in, "VMULPS Y7, " + r.in + ", " + r.in, "VMAXPS " + r.in + ", Y12, " + r.in}
					}
					incs := map[string]int{"SI": t.size(), "DI": 4}
					t.setup()
					loopN(label+"w", 16, func() {
						t.load16("(SI)", "Y0", "Y8")
						interleave(arg(chainA), arg(chainB))
						pow2("Y13", chainA, chainB)
						lines("VMOVUPS Y2, (DI)", "VMOVUPS Y10, 32(DI)", "VADDPS Y2, Y14, Y14", "VADDPS Y10, Y15, Y15")
					}, incs)
					loop(label, func() {
						t.load("(SI)", "Y0")
						interleave(arg(chainA))
						pow2("Y13", chainA)
						lines("VMOVUPS Y2, (DI)", "VADDPS Y2, Y14, Y14")
					}, incs)
					lines("VADDPS Y15, Y14, Y0")
					hsum(off)
				},
			})
		}

		if t.name == "F32" {
			// dst = ExpF32((x − m)·inv), ExpF32's bits (the sampling
			// paths' exponential); the sum of dst.
			kernels = append(kernels, kernel{
				name: "lightFExpSumExactF32", args: []arg{ptr("dst"), ptr("x"), f32("m"), f32("inv"), i64("n")}, ret: true,
				goSig: "(dst *float32, x unsafe.Pointer, m, inv float32, n int) float32", entry: "expSumExact",
				body: func(off map[string]int) {
					movq(off, "dst", "DI")
					movq(off, "x", "SI")
					movq(off, "n", "CX")
					bcast(off, "m", "Y6")
					bcast(off, "inv", "Y7")
					lines("VXORPS Y14, Y14, Y14", "VXORPS Y15, Y15, Y15")
					incs := map[string]int{"SI": 4, "DI": 4}
					loopN("lfexpxw", 16, func() {
						lines("VMOVUPS (SI), Y0", "VMOVUPS 32(SI), Y8",
							"VSUBPS Y6, Y0, Y0", "VSUBPS Y6, Y8, Y8", "VMULPS Y7, Y0, Y0", "VMULPS Y7, Y8, Y8")
						exp2x(chainA, chainB)
						lines("VMOVUPS Y2, (DI)", "VMOVUPS Y10, 32(DI)", "VADDPS Y2, Y14, Y14", "VADDPS Y10, Y15, Y15")
					}, incs)
					loop("lfexpx", func() {
						lines("VMOVUPS (SI), Y0", "VSUBPS Y6, Y0, Y0", "VMULPS Y7, Y0, Y0")
						exp2x(chainA)
						lines("VMOVUPS Y2, (DI)", "VADDPS Y2, Y14, Y14")
					}, incs)
					lines("VADDPS Y15, Y14, Y0")
					hsum(off)
				},
			})
		}
		for j, u := range types {
			jx := fmt.Sprint(j)
			t, u := t, u
			// dst (u) = (x − m)·s·w + b, the last two one fused multiply-add.
			kernels = append(kernels, kernel{
				name: "lightFAffine" + t.name + u.name, args: []arg{ptr("dst"), ptr("x"), ptr("w"), ptr("b"), f32("m"), f32("s"), ptr("pf"), i64("n"), i64("nt")},
				goSig: "(dst, x unsafe.Pointer, w, b *float32, m, s float32, pf unsafe.Pointer, n, nt int)", entry: "affine[" + ix + "][" + jx + "]",
				body: func(off map[string]int) {
					movq(off, "dst", "DI")
					movq(off, "x", "SI")
					movq(off, "w", "DX")
					movq(off, "b", "BX")
					movq(off, "pf", "R12")
					bcast(off, "m", "Y14")
					bcast(off, "s", "Y15")
					movq(off, "n", "CX")
					t, u := pairOrder(t, u, "Y13")
					u.noNaN = "R11"
					t.setup()
					ntLoops2(off, "lfaff"+t.name+u.name, func(nt bool) {
						lines("PREFETCHT0 (R12)")
						t.load16("(SI)", "Y6", "Y7")
						lines("VSUBPS Y14, Y6, Y6", "VSUBPS Y14, Y7, Y7", "VMULPS Y15, Y6, Y6", "VMULPS Y15, Y7, Y7",
							"VMOVUPS (BX), Y2", "VMOVUPS 32(BX), Y3", "VFMADD231PS (DX), Y6, Y2", "VFMADD231PS 32(DX), Y7, Y3")
						u.storePair("(DI)", nt)
					}, func(nt bool) {
						t.load("(SI)", "Y4")
						lines("VSUBPS Y14, Y4, Y4", "VMULPS Y15, Y4, Y4", "VMOVUPS (DX), Y5", "VMOVUPS (BX), Y2", "VFMADD231PS Y5, Y4, Y2")
						u.store("(DI)", nt)
					}, map[string]int{"SI": t.size(), "DI": u.size(), "DX": 4, "BX": 4, "R12": t.size()})
				},
			})
			// dst (u) = x·s·w, each product rounded: the affine map of
			// an RMS norm without bias, two products an element.
			kernels = append(kernels, kernel{
				name: "lightFScaleW" + t.name + u.name, args: []arg{ptr("dst"), ptr("x"), ptr("w"), f32("s"), ptr("pf"), i64("n"), i64("nt")},
				goSig: "(dst, x unsafe.Pointer, w *float32, s float32, pf unsafe.Pointer, n, nt int)", entry: "scaleW[" + ix + "][" + jx + "]",
				body: func(off map[string]int) {
					movq(off, "dst", "DI")
					movq(off, "x", "SI")
					movq(off, "w", "DX")
					movq(off, "pf", "R12")
					bcast(off, "s", "Y15")
					movq(off, "n", "CX")
					t, u := pairOrder(t, u, "Y14")
					u.noNaN = "R11"
					t.setup()
					ntLoops2(off, "lfsw"+t.name+u.name, func(nt bool) {
						lines("PREFETCHT0 (R12)")
						t.load16("(SI)", "Y6", "Y7")
						lines("VMULPS Y15, Y6, Y2", "VMULPS Y15, Y7, Y3", "VMULPS (DX), Y2, Y2", "VMULPS 32(DX), Y3, Y3")
						u.storePair("(DI)", nt)
					}, func(nt bool) {
						t.load("(SI)", "Y4")
						lines("VMULPS Y15, Y4, Y2", "VMULPS (DX), Y2, Y2")
						u.store("(DI)", nt)
					}, map[string]int{"SI": t.size(), "DI": u.size(), "DX": 4, "R12": t.size()})
				},
			})
			// res (t) = round(res + x (u)); the sum of squares of the
			// rounded values.
			kernels = append(kernels, kernel{
				name: "lightFAddRes" + t.name + u.name, args: []arg{ptr("res"), ptr("x"), i64("n")}, ret: true,
				goSig: "(res, x unsafe.Pointer, n int) float32", entry: "addRes[" + ix + "][" + jx + "]",
				body: func(off map[string]int) {
					movq(off, "res", "DI")
					movq(off, "x", "SI")
					movq(off, "n", "CX")
					lines("VXORPS Y8, Y8, Y8", "VXORPS Y10, Y10, Y10", "VXORPS Y11, Y11, Y11")
					t, u := pairOrder(t, u, "Y12")
					t.setup()
					loopN("lfaddw"+t.name+u.name, 16, func() {
						u.load16("(SI)", "Y6", "Y7")
						t.load16("(DI)", "Y2", "Y3")
						lines("VADDPS Y6, Y2, Y2", "VADDPS Y7, Y3, Y3")
						t.storePair("(DI)", false)
						t.rewidenPair()
						lines("VFMADD231PS Y2, Y2, Y10", "VFMADD231PS Y3, Y3, Y11")
					}, map[string]int{"SI": u.size(), "DI": t.size()})
					lines("VADDPS Y11, Y10, Y10", "VADDPS Y10, Y8, Y8")
					loop("lfadd"+t.name+u.name, func() {
						u.load("(SI)", "Y4")
						t.load("(DI)", "Y5")
						lines("VADDPS Y4, Y5, Y2")
						t.store("(DI)", false)
						t.rewiden()
						lines("VFMADD231PS Y2, Y2, Y8")
					}, map[string]int{"SI": u.size(), "DI": t.size()})
					lines("VMOVAPS Y8, Y0")
					hsum(off)
				},
			})
			// dst (u) = x/(1 + 2^t)·b, b nil: no product (x of type t):
			// gate32's operations, for silu (t = −x·log2 e) and the tanh
			// GELU (t = −2u·log2 e, as x·σ(2u) = x/2·(1 + tanh u)), with
			// t clamped to [−126, 128] (pow2's range; 128 gives +Inf and
			// so −0 for a very negative x). Two chains (16 elements) a
			// trip, then 8.
			for _, g := range []struct{ name, entry string }{{"Silu", "silu"}, {"GeluTanh", "geluTanh"}} {
				g := g
				kernels = append(kernels, kernel{
					name: "lightF" + g.name + t.name + u.name, args: []arg{ptr("dst"), ptr("a"), ptr("b"), i64("n"), i64("nt")},
					goSig: "(dst, a, b unsafe.Pointer, n, nt int)", entry: g.entry + "[" + ix + "][" + jx + "]",
					body: func(off map[string]int) {
						movq(off, "dst", "DI")
						movq(off, "a", "SI")
						movq(off, "b", "BX")
						movq(off, "n", "CX")
						lines("VBROADCASTSS "+ek("q5")+", Y13", "VBROADCASTSS "+ek("gk3")+", Y12", "VBROADCASTSS "+ek("one")+", Y6")
						label := "lf" + g.entry + t.name + u.name
						t, u := pairOrder(t, u, "Y7")
						t.setup()
						// The chains' x (Y14, Y15) and t (in).
						pre := func(x string, r expRegs) []string {
							var s []string
							if g.name == "Silu" {
								s = []string{"VMULPS " + ek("nlog2e") + ", " + x + ", " + r.in}
							} else {
								s = []string{"VMULPS " + x + ", " + x + ", " + r.in, "VFMADD213PS " + ek("gk1") + ", Y12, " + r.in,
									"VMULPS " + x + ", " + r.in + ", " + r.in}
							}
							return append(s, "VMAXPS "+ek("m126")+", "+r.in+", "+r.in, "VMINPS "+ek("p128")+", "+r.in+", "+r.in)
						}
						post := func(x string, r expRegs) []string {
							return []string{"VADDPS Y6, " + r.out + ", " + r.out, "VDIVPS " + r.out + ", " + x + ", " + r.out}
						}
						body := func(nt bool, wide bool) {
							tag := nb(nt)
							if wide {
								tag += "w"
							}
							if wide {
								t.load16("(SI)", "Y14", "Y15")
								interleave(pre("Y14", chainA), pre("Y15", chainB))
								pow2("Y13", chainA, chainB)
								interleave(post("Y14", chainA), post("Y15", chainB))
							} else {
								t.load("(SI)", "Y14")
								interleave(pre("Y14", chainA))
								pow2("Y13", chainA)
								interleave(post("Y14", chainA))
							}
							lines("TESTQ BX, BX", "JZ "+label+tag)
							if wide {
								t.load16("(BX)", "Y1", "Y9")
								lines("VMULPS Y1, Y2, Y2", "VMULPS Y9, Y10, Y10", fmt.Sprintf("ADDQ $%d, BX", 16*t.size()))
							} else {
								t.load("(BX)", "Y1")
								lines("VMULPS Y1, Y2, Y2", fmt.Sprintf("ADDQ $%d, BX", 8*t.size()))
							}
							p("%s%s:", label, tag)
							if wide {
								lines("VMOVAPS Y10, Y3")
								u.storePair("(DI)", nt)
							} else {
								u.store("(DI)", nt)
							}
						}
						ntLoops2(off, label, func(nt bool) { body(nt, true) }, func(nt bool) { body(nt, false) },
							map[string]int{"SI": t.size(), "DI": u.size()})
					},
				})
			}
			// dst (u) = gelu(a)·b, b nil: no product (a and b of type t):
			// gelu32's operations, x·(1 − q) for x ≥ 0 and x·q below, q =
			// Φ(−|x|) by Abramowitz and Stegun's 7.1.26 with e^(−x²/2) by
			// pow2. Two chains (16 elements) a trip, then 8.
			kernels = append(kernels, kernel{
				name: "lightFGelu" + t.name + u.name, args: []arg{ptr("dst"), ptr("a"), ptr("b"), i64("n"), i64("nt")},
				goSig: "(dst, a, b unsafe.Pointer, n, nt int)", entry: "gelu[" + ix + "][" + jx + "]",
				body: func(off map[string]int) {
					movq(off, "dst", "DI")
					movq(off, "a", "SI")
					movq(off, "b", "BX")
					movq(off, "n", "CX")
					lines("VBROADCASTSS "+ek("q5")+", Y13", "VBROADCASTSS "+ek("one")+", Y6")
					label := "lfgelu" + t.name + u.name
					t, u := pairOrder(t, u, "Y7")
					t.setup()
					// x, the chain and its register for t, then P(t).
					q := func(x, pr string, r expRegs) []string {
						s := []string{
							"VANDPS " + ek("abs") + ", " + x + ", " + r.in,
							"VFMADD132PS " + ek("ep") + ", Y6, " + r.in,
							"VDIVPS " + r.in + ", Y6, " + pr,
							"VMOVUPS " + ek("e4") + ", " + r.out,
						}
						for _, c := range []string{"e3", "e2", "e1", "e0"} {
							s = append(s, "VFMADD213PS "+ek(c)+", "+pr+", "+r.out)
						}
						return append(s, "VMULPS "+pr+", "+r.out+", "+pr,
							"VMULPS "+x+", "+x+", "+r.in, "VMULPS "+ek("eh")+", "+r.in+", "+r.in, "VMAXPS "+ek("m127")+", "+r.in+", "+r.in)
					}
					post := func(x, pr string, r expRegs) []string {
						return []string{"VMULPS " + pr + ", " + r.out + ", " + r.out, "VSUBPS " + r.out + ", Y6, " + pr,
							"VBLENDVPS " + x + ", " + r.out + ", " + pr + ", " + r.out, "VMULPS " + x + ", " + r.out + ", " + r.out}
					}
					body := func(nt bool, wide bool) {
						tag := nb(nt)
						if wide {
							tag += "w"
						}
						if wide {
							t.load16("(SI)", "Y14", "Y15")
							interleave(q("Y14", "Y4", chainA), q("Y15", "Y5", chainB))
							pow2("Y13", chainA, chainB)
							interleave(post("Y14", "Y4", chainA), post("Y15", "Y5", chainB))
						} else {
							t.load("(SI)", "Y14")
							interleave(q("Y14", "Y4", chainA))
							pow2("Y13", chainA)
							interleave(post("Y14", "Y4", chainA))
						}
						lines("TESTQ BX, BX", "JZ "+label+tag)
						if wide {
							t.load16("(BX)", "Y1", "Y9")
							lines("VMULPS Y1, Y2, Y2", "VMULPS Y9, Y10, Y10", fmt.Sprintf("ADDQ $%d, BX", 16*t.size()))
						} else {
							t.load("(BX)", "Y1")
							lines("VMULPS Y1, Y2, Y2", fmt.Sprintf("ADDQ $%d, BX", 8*t.size()))
						}
						p("%s%s:", label, tag)
						if wide {
							lines("VMOVAPS Y10, Y3")
							u.storePair("(DI)", nt)
						} else {
							u.store("(DI)", nt)
						}
					}
					ntLoops2(off, label, func(nt bool) { body(nt, true) }, func(nt bool) { body(nt, false) },
						map[string]int{"SI": t.size(), "DI": u.size()})
				},
			})
			// olo = xlo·c − xhi·s, ohi = xhi·c + xlo·s (x of type t, o of
			// u), each product rounded on its own; o may be x.
			kernels = append(kernels, kernel{
				name: "lightFRot" + t.name + u.name, args: []arg{ptr("olo"), ptr("ohi"), ptr("xlo"), ptr("xhi"), ptr("c"), ptr("s"), i64("n")},
				goSig: "(olo, ohi, xlo, xhi unsafe.Pointer, c, s *float32, n int)", entry: "rot[" + ix + "][" + jx + "]",
				body: func(off map[string]int) {
					movq(off, "olo", "DI")
					movq(off, "ohi", "R8")
					movq(off, "xlo", "SI")
					movq(off, "xhi", "R9")
					movq(off, "c", "R10")
					movq(off, "s", "R11")
					movq(off, "n", "CX")
					loop("lfrot"+t.name+u.name, func() {
						t.load("(SI)", "Y10")
						t.load("(R9)", "Y11")
						lines("VMOVUPS (R10), Y6", "VMOVUPS (R11), Y7",
							"VMULPS Y6, Y10, Y8", "VMULPS Y7, Y11, Y9", "VSUBPS Y9, Y8, Y2",
							"VMULPS Y6, Y11, Y8", "VMULPS Y7, Y10, Y9", "VADDPS Y9, Y8, Y3")
						u.storeTwo("(DI)", "(R8)", false)
					}, map[string]int{"SI": t.size(), "R9": t.size(), "R10": 4, "R11": 4, "DI": u.size(), "R8": u.size()})
					lines("VZEROUPPER", "RET")
				},
			})
		}
		// dst (t) = s·x, x float32, prefetching pf (softmax's next row);
		// for bf16 also scaleU, x in unpacked order.
		variants = []typ{t}
		if t.name == "BF16" {
			variants = append(variants, t.unpack(""))
		}
		for _, u := range variants {
			name, entry, label := "lightFScale"+u.name, "scale["+ix+"]", "lfscl"+u.name
			if u.unpacked {
				name, entry, label = "lightFScaleUBF16", "scaleU", "lfsclu"
			}
			kernels = append(kernels, kernel{
				name: name, args: []arg{ptr("dst"), ptr("x"), f32("s"), ptr("pf"), i64("n"), i64("nt")},
				goSig: "(dst unsafe.Pointer, x *float32, s float32, pf unsafe.Pointer, n, nt int)", entry: entry,
				body: func(off map[string]int) {
					movq(off, "dst", "DI")
					movq(off, "x", "SI")
					movq(off, "pf", "R12")
					bcast(off, "s", "Y15")
					movq(off, "n", "CX")
					u.noNaN = "R11"
					// pf advances 4 bytes an element whatever the type it
					// prefetches: a 16-bit row is covered twice over.
					ntLoops2(off, label, func(nt bool) {
						lines("PREFETCHT0 (R12)", "VMULPS (SI), Y15, Y2", "VMULPS 32(SI), Y15, Y3")
						u.storePair("(DI)", nt)
					}, func(nt bool) {
						lines("VMULPS (SI), Y15, Y2")
						u.store("(DI)", nt)
					}, map[string]int{"SI": 4, "DI": u.size(), "R12": 4})
				},
			})
		}
	}
	sampleKernels()
}

func nb(nt bool) string {
	if nt {
		return "ntnob"
	}
	return "nob"
}

func writeAsm() {
	p("// Code generated by light_gen.go; DO NOT EDIT.")
	p("")
	p("//go:build amd64 && !purego")
	p("")
	p("#include \"textflag.h\"")
	p("")
	p("// lightFK: the bf16 rounding constants, 8 lanes each: 1, 0x7fff, the")
	p("// magnitude mask, +Inf's bits, the quiet bit of a bf16 NaN.")
	for i, v := range []uint32{1, 0x7fff, 0x7fffffff, 0x7f800000, 0x40} {
		for l := 0; l < 8; l++ {
			p("DATA ·lightFK+%d(SB)/4, $%#08x", 32*i+4*l, v)
		}
	}
	p("GLOBL ·lightFK(SB), RODATA|NOPTR, $160")
	p("")
	p("// lightFE: the kernels' constants, 8 lanes each (see expK).")
	for i, k := range expK {
		for l := 0; l < 8; l++ {
			p("DATA ·lightFE+%d(SB)/4, $%#08x", 32*i+4*l, k.bits)
		}
	}
	p("GLOBL ·lightFE(SB), RODATA|NOPTR, $%d", 32*len(expK))
	p("")
	p("// lightFD: 2^40 and 2^52 as float64, 4 lanes each.")
	for i, v := range []uint64{0x4270000000000000, 0x4330000000000000} {
		for l := 0; l < 4; l++ {
			p("DATA ·lightFD+%d(SB)/8, $%#016x", 32*i+8*l, v)
		}
	}
	p("GLOBL ·lightFD(SB), RODATA|NOPTR, $64")
	p("")
	p("// lightFIota: 0..7, then 8 (int32).")
	for i := 0; i < 9; i++ {
		p("DATA ·lightFIota+%d(SB)/4, $%d", 4*i, i)
	}
	p("GLOBL ·lightFIota(SB), RODATA|NOPTR, $36")
	p("")
	p("// lightFPerm: for each 8-bit mask, the positions of its set bits in")
	p("// order, then zeros (int32, 8 a mask).")
	for m := 0; m < 256; m++ {
		var pos []int
		for b := 0; b < 8; b++ {
			if m>>b&1 != 0 {
				pos = append(pos, b)
			}
		}
		for len(pos) < 8 {
			pos = append(pos, 0)
		}
		for l, v := range pos {
			p("DATA ·lightFPerm+%d(SB)/4, $%d", 32*m+4*l, v)
		}
	}
	p("GLOBL ·lightFPerm(SB), RODATA|NOPTR, $8192")
	for _, k := range kernels {
		off, size := frame(k.args, k.ret, k.ret64)
		var names []string
		for _, a := range k.args {
			names = append(names, a.name)
		}
		p("")
		p("// func %s%s", k.name, k.goSig)
		p("TEXT ·%s(SB), NOSPLIT, $0-%d", k.name, size)
		k.body(off)
	}
}

func writeDecl() {
	p("// Code generated by light_gen.go; DO NOT EDIT.")
	p("")
	p("//go:build amd64 && !purego")
	p("")
	p("package fallback")
	p("")
	p("import \"unsafe\"")
	p("")
	p("// The fused row kernels of light_fused_amd64.s (see light_gen.go).")
	for _, k := range kernels {
		p("")
		p("//go:noescape")
		p("func %s%s", k.name, k.goSig)
	}
	p("")
	p("func init() {")
	p("\tf := &lightFusedAsm")
	for _, k := range kernels {
		p("\tf.%s = %s", k.entry, k.name)
	}
	p("}")
}

func main() {
	decl := flag.Bool("decl", false, "write the Go declarations instead of the assembly")
	flag.Parse()
	build()
	if *decl {
		writeDecl()
	} else {
		writeAsm()
	}
	os.Stdout.WriteString(out.String())
}
