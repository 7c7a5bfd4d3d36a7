package sim

import (
	"errors"
	"math"
	"math/big"
	"math/bits"
	"math/rand"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/sass"

	"github.com/tcrt-go/tcrt/tile"

	"github.com/x448/float16"
)

// intRun runs ops once per CTA (one thread each) on in's quadruples (a, b,
// c, d in R2..R5) and returns the pairs the ops leave in R10, R11.
func intRun(t *testing.T, ops string, in []uint32) []uint32 {
	t.Helper()
	src := `
[B------:R-:W0:-:S01] S2R R0, SR_CTAID.X ;
[B------:R-:W-:-:S02] MOV R7, 0x10 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R8, R0, R7, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E.128 R12, [R8.64] ;
[B-1----:R-:W-:-:S04] MOV R2, R12 ;
[B------:R-:W-:-:S04] MOV R3, R13 ;
[B------:R-:W-:-:S04] MOV R4, R14 ;
[B------:R-:W-:-:S04] MOV R5, R15 ;
[B------:R-:W-:-:S02] MOV R7, 0x8 ;
` + ops + ` ;
[B------:R-:W-:-:S04] IMAD.WIDE R8, R0, R7, c[0x0][0x168] ;
[B------:R-:W-:-:S04] STG.E.64 [R8.64], R10 ;
[B------:R-:W-:-:S05] EXIT ;
`
	n := len(in) / 4
	m := NewMemory()
	ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", nil, 2*n)
	if _, err := Launch(asm(t, src), Config{StrictScoreboards: true, Grid: [3]int{n}, Block: [3]int{1}, Memory: m,
		Params: params(ai, ao), Poison: true}); err != nil {
		t.Fatalf("%s: %v", ops, err)
	}
	return simWords(m.Bytes("out"))
}

func intInputs(r *rand.Rand, n int) []uint32 {
	in := make([]uint32, 4*n)
	for i := range in {
		switch r.Intn(4) {
		case 0:
			in[i] = uint32(r.Intn(70))
		case 1:
			in[i] = 0xffffffff - uint32(r.Intn(3))
		default:
			in[i] = r.Uint32()
		}
	}
	for i := 0; i < 8; i++ { // equal operands for the comparisons
		in[4*i+1], in[4*i+3] = in[4*i], in[4*i+2]
	}
	return in
}

func checkInt(t *testing.T, name string, in, out []uint32, ref func(a, b, c, d uint32) (uint32, uint32)) {
	t.Helper()
	for i := 0; i < len(in)/4; i++ {
		a, b, c, d := in[4*i], in[4*i+1], in[4*i+2], in[4*i+3]
		x, y := ref(a, b, c, d)
		if out[2*i] != x || out[2*i+1] != y {
			t.Fatalf("%q (%#x %#x %#x %#x) = %#x %#x, want %#x %#x", name, a, b, c, d, out[2*i], out[2*i+1], x, y)
		}
	}
}

var (
	uniRegRE  = regexp.MustCompile(`\bR(\d+|Z)\b`)
	uniPredRE = regexp.MustCompile(`\bP(\d|T)\b`)
	uniOpRE   = regexp.MustCompile(`(?m)^(\S+)`)
)

// uniformOf rewrites general ops into the uniform datapath's: R2..R5 come
// from UR8..UR11 (R2UR), the results go to UR16, UR17 and back (MOV), Pn
// become UPn and each opcode its U form.
func uniformOf(ops string) string {
	u := uniOpRE.ReplaceAllString(ops, "U$1")
	u = uniRegRE.ReplaceAllStringFunc(u, func(s string) string {
		if s == "RZ" {
			return "URZ"
		}
		n, _ := strconv.Atoi(s[1:])
		return "UR" + strconv.Itoa(n+6)
	})
	u = uniPredRE.ReplaceAllString(u, "UP$1")
	return uniformIn + u + uniformOut
}

const (
	uniformIn  = "R2UR UR8, R2 ;\nR2UR UR9, R3 ;\nR2UR UR10, R4 ;\nR2UR UR11, R5 ;\n"
	uniformOut = " ;\nMOV R10, UR16 ;\nMOV R11, UR17"
)

// TestSimUniformOps runs every integer case the uniform datapath has a
// form for (UIADD3 with carries, UIMAD(.WIDE), USHF, ULOP3, ULEA(.HI.X),
// UISETP(.EX) and USEL, ...) on uniform registers and predicates and checks
// it against the same Go reference as the general ops (TestSimIntegerOps).
func TestSimUniformOps(t *testing.T) {
	r := rand.New(rand.NewSource(19))
	in := intInputs(r, 64)
	ran := 0
	for _, tc := range append(intCases, uniformCases...) {
		u := uniformOf(tc.ops)
		if strings.HasPrefix(tc.ops, "U") {
			u = uniformIn + tc.ops + uniformOut
		}
		if _, err := sass.Parse(u); err != nil {
			t.Logf("no uniform form: %s (%v)", strings.ReplaceAll(u, "\n", " "), err)
			continue
		}
		ran++
		checkInt(t, u, in, intRun(t, u, in), tc.ref)
	}
	if ran < 10 {
		t.Fatalf("only %d uniform cases ran", ran)
	}
}

// uniformCases are uniform-datapath forms the general cases do not cover.
var uniformCases = []intCase{
	{"UIMAD UR16, UR8, UR9, UR10 ;\nUIMAD UR17, UR8, 0x7, URZ", func(a, b, c, d uint32) (uint32, uint32) { return a*b + c, a * 7 }},
	{"UFLO.U32 UR16, UR8 ;\nUFLO UR17, UR8", func(a, b, c, d uint32) (uint32, uint32) {
		s := uint32(31 - bits.LeadingZeros32(uint32(int32(a)^int32(a)>>31)))
		return uint32(31 - bits.LeadingZeros32(a)), s
	}},
	{"UISETP.LT.U32.AND UP0, UPT, UR8, UR9, UPT ;\nPLOP3.LUT P1, PT, PT, PT, UP0, 0x80, 0x0 ;\nSEL R10, R4, R5, P1 ;\nR2UR UR16, R10 ;\nUSEL UR17, UR10, UR11, !UP0",
		func(a, b, c, d uint32) (uint32, uint32) {
			if a < b {
				return c, d
			}
			return d, c
		}},
	{"ULOP3.LUT UP0, URZ, UR8, UR9, URZ, 0xc0, !UPT ;\nUSEL UR16, UR10, UR11, UP0 ;\nUMOV UR17, UR16",
		func(a, b, c, d uint32) (uint32, uint32) {
			if a&b != 0 {
				return c, c
			}
			return d, d
		}},
}

// genCases are general-datapath forms ptxas emits: LOP3 with a predicate
// input and output, PLOP3 over predicates, and UR sources in ALU forms.
var genCases = []intCase{
	{"LOP3.LUT P0, RZ, R2, R3, RZ, 0xc0, !PT ;\nLOP3.LUT P0, RZ, R4, R5, RZ, 0xc0, P0 ;\nSEL R10, R2, R3, P0 ;\nPLOP3.LUT P1, PT, P0, PT, PT, 0x33, 0x0 ;\nSEL R11, R4, R5, P1",
		func(a, b, c, d uint32) (uint32, uint32) {
			if a&b != 0 || c&d != 0 {
				return a, d
			}
			return b, c
		}},
	{"ISETP.LT.U32.AND P0, PT, R2, R3, PT ;\nISETP.LT.U32.AND P1, PT, R4, R5, PT ;\nISETP.EQ.AND P2, PT, R2, R4, PT ;\nPLOP3.LUT P3, PT, P0, P1, P2, 0xe8, 0x0 ;\nPLOP3.LUT P4, PT, P0, P1, !P2, 0x96, 0x0 ;\nSEL R10, R2, R3, P3 ;\nSEL R11, R4, R5, P4",
		func(a, b, c, d uint32) (uint32, uint32) {
			p0, p1, p2 := a < b, c < d, a == c
			x, y := b, d
			if p0 && p1 || p0 && p2 || p1 && p2 {
				x = a
			}
			if p0 != p1 != !p2 {
				y = c
			}
			return x, y
		}},
	{"R2UR UR8, R2 ;\nR2UR UR9, R3 ;\nLEA R10, P0, R4, UR8, 0x3 ;\nLEA.HI.X R11, R4, R3, R5, 0x3, P0", func(a, b, c, d uint32) (uint32, uint32) {
		s := (uint64(b)<<32 | uint64(a)) + (uint64(d)<<32|uint64(c))<<3
		return uint32(s), uint32(s >> 32)
	}},
	{"R2UR UR8, R3 ;\nIADD3 R10, R2, UR8, R4 ;\nIMAD R11, R2, UR8, R5", func(a, b, c, d uint32) (uint32, uint32) { return a + b + c, a*b + d }},
}

// TestSimPredicateOps checks LOP3's predicate input and output, PLOP3 and
// ALU forms with a uniform-register source against Go.
func TestSimPredicateOps(t *testing.T) {
	r := rand.New(rand.NewSource(20))
	in := intInputs(r, 64)
	for _, tc := range genCases {
		checkInt(t, tc.ops, in, intRun(t, tc.ops, in), tc.ref)
	}
}

// TestSimLDC loads constants indexed by a register (each lane its own
// address, every width, sign extension) and by a uniform register (ULDC)
// from bank 2, and checks an out-of-bank index faults.
func TestSimLDC(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	bank := make([]byte, 256)
	for i := range bank {
		bank[i] = byte(r.Uint32())
	}
	w32 := func(a int) uint32 {
		return uint32(bank[a]) | uint32(bank[a+1])<<8 | uint32(bank[a+2])<<16 | uint32(bank[a+3])<<24
	}
	run := func(ops string, idx []uint32) ([]uint32, error) {
		src := `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R7, 0x4 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R8, R0, R7, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E R2, [R8.64] ;
[B-1----:R-:W-:-:S02] MOV R7, 0x8 ;
` + ops + ` ;
[B------:R-:W-:-:S04] IMAD.WIDE R8, R0, R7, c[0x0][0x168] ;
[B------:R-:W-:-:S04] STG.E.64 [R8.64], R10 ;
[B------:R-:W-:-:S05] EXIT ;
`
		m := NewMemory()
		ai, ao := alloc(t, m, "in", idx, 0), alloc(t, m, "out", nil, 2*len(idx))
		_, err := Launch(asm(t, src), Config{StrictScoreboards: true, Block: [3]int{len(idx)}, Memory: m,
			Params: params(ai, ao), Banks: map[uint8][]byte{2: bank}, Poison: true})
		return simWords(m.Bytes("out")), err
	}
	idx := make([]uint32, 64)
	for i := range idx {
		idx[i] = uint32(r.Intn(28)) * 8
	}
	cases := []struct {
		ops string
		ref func(x uint32) (uint32, uint32)
	}{
		{"LDC.64 R10, c[0x2][R2+0x10]", func(x uint32) (uint32, uint32) { return w32(int(x) + 16), w32(int(x) + 20) }},
		{"LDC R10, c[0x2][R2] ;\nLDC.S8 R11, c[0x2][R2+0x3]", func(x uint32) (uint32, uint32) {
			return w32(int(x)), uint32(int32(int8(bank[x+3])))
		}},
		{"LDC.U16 R10, c[0x2][R2+0x6] ;\nLDC.S16 R11, c[0x2][R2+0x2]", func(x uint32) (uint32, uint32) {
			return uint32(bank[x+6]) | uint32(bank[x+7])<<8, uint32(int32(int16(uint16(bank[x+2]) | uint16(bank[x+3])<<8)))
		}},
	}
	lane := 0
	cases = append(cases, struct {
		ops string
		ref func(x uint32) (uint32, uint32)
	}{"LDC.U8 R10, c[0x2][0xf] ;\nR2UR UR8, R2 ;\nULDC UR9, c[0x2][UR8+0x30] ;\nMOV R11, UR9", func(x uint32) (uint32, uint32) {
		return uint32(bank[15]), w32(int(idx[lane&^31]) + 0x30) // R2UR: the warp's first lane's index
	}})
	for _, c := range cases {
		out, err := run(c.ops, idx)
		if err != nil {
			t.Fatalf("%s: %v", c.ops, err)
		}
		for i, x := range idx {
			lane = i
			a, b := c.ref(x)
			if out[2*i] != a || out[2*i+1] != b {
				t.Fatalf("%q lane %d (index %#x) = %#x %#x, want %#x %#x", c.ops, i, x, out[2*i], out[2*i+1], a, b)
			}
		}
	}
	idx[5] = 0xfc
	if _, err := run("LDC.64 R10, c[0x2][R2]", idx); !errors.Is(err, ErrOutOfBounds) {
		t.Fatalf("index past the bank: %v", err)
	}
}

// TestSimPredicatedBranch runs BRA P, target and EXIT P under a guard: the
// lanes where the guard and the predicate hold branch (exit); the others
// fall through, so the warp diverges and reconverges.
func TestSimPredicatedBranch(t *testing.T) {
	src := `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R7, 0x4 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R8, R0, R7, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W-:-:S02] MOV R10, 0x1 ;
[B------:R-:W-:-:S02] LOP3.LUT P0, RZ, R0, 0x1, RZ, 0xc0, !PT ;
[B------:R-:W-:-:S02] LOP3.LUT P1, RZ, R0, 0x2, RZ, 0xc0, !PT ;
[B------:R-:W-:-:S02] LOP3.LUT P2, RZ, R0, 0x4, RZ, 0xc0, !PT ;
[B------:R-:W-:-:S05] @!P0 BRA P1, T ;
[B------:R-:W-:-:S02] IADD3 R10, R10, 0x10, RZ ;
[B------:R-:W-:-:S05] BRA J ;
T:
[B------:R-:W-:-:S02] IADD3 R10, R10, 0x100, RZ ;
[B------:R-:W-:-:S05] BRA J ;
J:
[B------:R-:W-:-:S04] STG.E [R8.64], R10 ;
[B------:R-:W-:-:S05] @P0 EXIT !P2 ;
[B------:R-:W-:-:S02] IADD3 R10, R10, 0x1000, RZ ;
[B------:R-:W-:-:S04] STG.E [R8.64], R10 ;
[B------:R-:W-:-:S05] EXIT ;
`
	m := NewMemory()
	ao := alloc(t, m, "out", nil, 64)
	if _, err := Launch(asm(t, src), Config{Block: [3]int{64}, Memory: m, Params: params(ao), Poison: true}); err != nil {
		t.Fatal(err)
	}
	for l, v := range simWords(m.Bytes("out")) {
		want := uint32(0x11)
		if l&1 == 0 && l&2 != 0 {
			want = 0x101
		}
		if !(l&1 != 0 && l&4 == 0) {
			want += 0x1000
		}
		if v != want {
			t.Errorf("lane %d: %#x, want %#x", l, v, want)
		}
	}
}

// TestSimCallDepth: a lane that recurses without end faults at
// MaxCallDepth with the depth named; a RET without a CALL faults too.
func TestSimCallDepth(t *testing.T) {
	p := asm(t, `
[B------:R-:W-:-:S02] MOV R0, 0x0 ;
[B------:R-:W-:-:S02] IADD3 R0, R0, 0x1, RZ ;
[B------:R-:W-:-:S05] CALL.REL.NOINC 0x10 ;
[B------:R-:W-:-:S05] EXIT ;
`)
	_, err := Launch(p, Config{Block: [3]int{32}, Poison: true})
	if !errors.Is(err, ErrOutOfBounds) || !strings.Contains(err.Error(), "MaxCallDepth") {
		t.Fatalf("runaway recursion: %v", err)
	}
	p = asm(t, `
[B------:R-:W-:-:S02] MOV R2, 0x10 ;
[B------:R-:W-:-:S02] MOV R3, 0x0 ;
[B------:R-:W-:-:S05] RET.REL.NODEC R2 0x0 ;
[B------:R-:W-:-:S05] EXIT ;
`)
	if _, err := Launch(p, Config{Block: [3]int{32}, Poison: true}); !errors.Is(err, ErrOutOfBounds) || !strings.Contains(err.Error(), "RET without") {
		t.Fatalf("RET without CALL: %v", err)
	}
}

// TestSimSharedAtomics runs ATOMS ADD, MAX, MIN.S32, AND and EXCH from 96
// threads (three warps) and a CAS loop on ATOMS.CAST.SPIN (ptxas's shared
// compare-and-swap loop: it retries until the instruction returns 1), and
// compares the words with Go; ATOMS.CAS returns the old value.
func TestSimSharedAtomics(t *testing.T) {
	src := `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R7, 0x4 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R8, R0, R7, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E R2, [R8.64] ;
[B------:R-:W-:-:S02] ISETP.NE.AND P0, PT, R0, RZ, PT ;
[B------:R-:W-:-:S02] MOV R3, 0x7fffffff ;
[B------:R-:W-:-:S02] MOV R4, 0xffffffff ;
[B------:R-:W-:-:S02] @!P0 STS [0x0], RZ ;
[B------:R-:W-:-:S02] @!P0 STS [0x4], RZ ;
[B------:R-:W-:-:S02] @!P0 STS [0x8], R3 ;
[B------:R-:W-:-:S02] @!P0 STS [0xc], R4 ;
[B------:R-:W-:-:S02] @!P0 STS [0x10], RZ ;
[B------:R-:W-:-:S02] @!P0 STS [0x14], RZ ;
[B------:R-:W-:-:S02] @!P0 STS [0x18], R4 ;
[B------:R-:W-:-:S02] BAR.SYNC 0x0 ;
[B-1----:R-:W-:-:S02] ATOMS.ADD RZ, [0x0], R2 ;
[B------:R-:W-:-:S02] ATOMS.MAX RZ, [0x4], R2 ;
[B------:R-:W-:-:S02] ATOMS.MIN.S32 RZ, [0x8], R2 ;
[B------:R-:W-:-:S02] ATOMS.AND RZ, [0xc], R2 ;
[B------:R-:W-:-:S02] ATOMS.EXCH RZ, [0x14], R0 ;
[B------:R-:W-:-:S02] ATOMS.CAS R20, [0x18], R4, R0 ;
L:
[B------:R-:W-:-:S02] LDS R6, [0x10] ;
[B------:R-:W-:-:S02] IADD3 R7, R6, R2, RZ ;
[B------:R-:W-:-:S02] ATOMS.CAST.SPIN R7, [0x10], R6, R7 ;
[B------:R-:W-:-:S02] ISETP.EQ.U32.AND P1, PT, R7, 0x1, PT ;
[B------:R-:W-:-:S05] @!P1 BRA L ;
[B------:R-:W-:-:S02] BAR.SYNC 0x0 ;
[B------:R-:W-:-:S02] MOV R7, 0x4 ;
[B------:R-:W-:-:S04] IMAD.WIDE R8, R0, R7, c[0x0][0x168] ;
[B------:R-:W-:-:S04] STG.E [R8.64], R20 ;
[B------:R-:W-:-:S05] @P0 EXIT ;
[B------:R-:W-:-:S02] LDS.128 R12, [0x0] ;
[B------:R-:W-:-:S02] LDS.64 R16, [0x10] ;
[B------:R-:W-:-:S04] STG.E.128 [R8.64+0x200], R12 ;
[B------:R-:W-:-:S04] STG.E.64 [R8.64+0x210], R16 ;
[B------:R-:W-:-:S05] EXIT ;
`
	r := rand.New(rand.NewSource(22))
	const n = 96
	x := make([]uint32, n)
	for i := range x {
		x[i] = r.Uint32() >> r.Intn(32)
	}
	m := NewMemory()
	ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", nil, 0x200/4+6)
	if _, err := Launch(asm(t, src), Config{Block: [3]int{n}, SharedBytes: 64, Memory: m, Params: params(ax, ao), Poison: true}); err != nil {
		t.Fatal(err)
	}
	out := simWords(m.Bytes("out"))
	var sum, mx, and uint32 = 0, 0, 0xffffffff
	mn := int32(math.MaxInt32)
	for _, v := range x {
		sum += v
		mx = max(mx, v)
		mn = min(mn, int32(v))
		and &= v
	}
	want := []uint32{sum, mx, uint32(mn), and, sum}
	if got := out[0x200/4 : 0x200/4+5]; !slices.Equal(got, want) {
		t.Fatalf("shared words %#x, want %#x", got, want)
	}
	if last := out[0x200/4+5]; last >= n {
		t.Fatalf("EXCH left %d, not a thread id", last)
	}
	// CAS [0x18] from 0xffffffff: exactly one thread swaps (it sees the
	// initial value), every later one sees that thread's id
	swapped := -1
	for i := 0; i < n; i++ {
		if out[i] == 0xffffffff {
			if swapped >= 0 {
				t.Fatalf("threads %d and %d both saw the initial value", swapped, i)
			}
			swapped = i
		}
	}
	for i := 0; i < n; i++ {
		if i != swapped && out[i] != uint32(swapped) {
			t.Fatalf("thread %d's CAS saw %#x, want %d", i, out[i], swapped)
		}
	}
}

// TestSimFRND rounds random binary32 and binary64 values (halfway cases,
// ±0, infinities, NaN, subnormals, values past 2^52) in every mode and
// compares with Go's math.
func TestSimFRND(t *testing.T) {
	r := rand.New(rand.NewSource(23))
	specials := []float64{0.5, -0.5, 1.5, 2.5, -2.5, 0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 4.9e-324, -1e300, 1 << 53, 0.49999999999999994}
	const n = 128
	x := make([]uint32, 4*n)
	for i := 0; i < n; i++ {
		v := specials[i%len(specials)]
		if i >= len(specials) {
			v = r.NormFloat64() * math.Pow(2, float64(r.Intn(60)-20))
		}
		b := math.Float64bits(v)
		x[4*i], x[4*i+1] = uint32(b), uint32(b>>32)
		x[4*i+2] = math.Float32bits(float32(v))
	}
	for k, mode := range []string{"", ".FLOOR", ".CEIL", ".TRUNC"} {
		src := `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R7, 0x10 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R8, R0, R7, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E.128 R12, [R8.64] ;
[B-1----:R-:W2:-:S04] FRND.F64` + mode + ` R4, R12 ;
[B------:R-:W3:-:S04] FRND` + mode + ` R6, R14 ;
[B------:R-:W-:-:S04] IMAD.WIDE R8, R0, R7, c[0x0][0x168] ;
[B--23--:R-:W-:-:S04] STG.E.128 [R8.64], R4 ;
[B------:R-:W-:-:S05] EXIT ;
`
		m := NewMemory()
		ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", nil, 4*n)
		if _, err := Launch(asm(t, src), Config{Block: [3]int{n}, Memory: m, Params: params(ax, ao)}); err != nil {
			t.Fatalf("FRND%s: %v", mode, err)
		}
		out := simWords(m.Bytes("out"))
		f := frndOps[k]
		for i := 0; i < n; i++ {
			d := math.Float64frombits(uint64(x[4*i+1])<<32 | uint64(x[4*i]))
			want := math.Float64bits(f(d))
			if d != d {
				want = nanF64
			}
			if got := uint64(out[4*i+1])<<32 | uint64(out[4*i]); got != want {
				t.Fatalf("FRND.F64%s(%v) = %#x, want %#x", mode, d, got, want)
			}
			s := math.Float32frombits(x[4*i+2])
			w32 := math.Float32bits(float32(f(float64(s))))
			if s != s {
				w32 = nanF32
			}
			if out[4*i+2] != w32 {
				t.Fatalf("FRND%s(%v) = %#x, want %#x", mode, s, out[4*i+2], w32)
			}
		}
	}
}

// TestSimRCP64H checks the binary64 seeds: the high word of 1/x (and
// 1/sqrt(x)) for the high word of x, within 2^-19 relative error of the
// exact value (the low word dropped), with 0, infinities and NaN special.
func TestSimRCP64H(t *testing.T) {
	r := rand.New(rand.NewSource(24))
	const n = 64
	x := make([]uint32, n)
	for i := range x {
		x[i] = uint32(math.Float64bits(math.Abs(r.NormFloat64())*math.Pow(2, float64(r.Intn(200)-100))) >> 32)
	}
	x[0], x[1], x[2] = 0, 0x7ff00000, 0x7ff80000 // 0, +inf, NaN
	src := `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R7, 0x4 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R8, R0, R7, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E R2, [R8.64] ;
[B-1----:R-:W2:-:S04] MUFU.RCP64H R4, R2 ;
[B------:R-:W3:-:S04] MUFU.RSQ64H R5, R2 ;
[B------:R-:W-:-:S02] MOV R7, 0x8 ;
[B------:R-:W-:-:S04] IMAD.WIDE R8, R0, R7, c[0x0][0x168] ;
[B--23--:R-:W-:-:S04] STG.E.64 [R8.64], R4 ;
[B------:R-:W-:-:S05] EXIT ;
`
	m := NewMemory()
	ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", nil, 2*n)
	if _, err := Launch(asm(t, src), Config{Block: [3]int{n}, Memory: m, Params: params(ax, ao), Poison: true}); err != nil {
		t.Fatal(err)
	}
	out := simWords(m.Bytes("out"))
	hi := func(v uint32) float64 { return math.Float64frombits(uint64(v) << 32) }
	if out[0] != 0x7ff00000 || out[2] != 0 || out[4]&0x7ff80000 != 0x7ff80000 {
		t.Fatalf("RCP64H of 0, inf, NaN: %#x %#x %#x", out[0], out[2], out[4])
	}
	for i := 3; i < n; i++ {
		v := hi(x[i])
		for k, want := range []float64{1 / v, 1 / math.Sqrt(v)} {
			if got := hi(out[2*i+k]); math.Abs(got-want) > want*0x1p-19 {
				t.Fatalf("seed %d of %v: %v, want %v", k, v, got, want)
			}
		}
	}
}

// TestSimI2FNarrow: I2F from an 8- or 16-bit source reads the register's
// low bits, zero- or sign-extended, then converts as from 32 bits (to f32
// nearest even, and to f64 exactly); the high bits of the register are
// random and must not matter.
func TestSimI2FNarrow(t *testing.T) {
	r := rand.New(rand.NewSource(44))
	in := intInputs(r, 64)
	for _, c := range []struct {
		mods   string
		bits   int
		signed bool
		f64    bool
	}{{"S8", 8, true, false}, {"U8", 8, false, false}, {"S16", 16, true, false}, {"U16", 16, false, false},
		{"F64.S16", 16, true, true}, {"F64.U16", 16, false, true}, {"F64.S8", 8, true, true}, {"F64.U8", 8, false, true}} {
		op := "[B------:R-:W2:-:S02] I2F." + c.mods + " R10, R2 ;\n[B--2---:R-:W-:-:S04] MOV R11, RZ"
		if c.f64 {
			op = "[B------:R-:W2:-:S02] I2F." + c.mods + " R10, R2 ;\n[B--2---:R-:W-:-:S04] NOP"
		}
		if _, err := sass.Parse(strings.SplitN(op, "] ", 2)[1]); err != nil {
			t.Fatalf("I2F.%s does not encode: %v", c.mods, err)
		}
		out := intRun(t, op, in)
		for i := 0; i < 64; i++ {
			v := ext(in[4*i], c.bits, c.signed)
			if !c.signed {
				v = int32(uint32(v))
			}
			if c.f64 {
				want := math.Float64bits(float64(v))
				if got := uint64(out[2*i+1])<<32 | uint64(out[2*i]); got != want {
					t.Fatalf("I2F.%s(%#x) = %#x, want %#x", c.mods, in[4*i], got, want)
				}
				continue
			}
			if want := math.Float32bits(float32(v)); out[2*i] != want {
				t.Fatalf("I2F.%s(%#x) = %#x, want %#x", c.mods, in[4*i], out[2*i], want)
			}
		}
	}
}

// TestSimF2FBF16: F2F.BF16.F32 rounds binary32 to bfloat16 in each
// direction (the reference: the high 16 bits, moved one unit away from
// zero where the direction and the dropped bits say so; nearest even
// through tile.F32ToBF16), subnormals kept, NaN to a NaN.
func TestSimF2FBF16(t *testing.T) {
	r := rand.New(rand.NewSource(46))
	in := intInputs(r, 64)
	in[0], in[4], in[8], in[12] = 0x7f7fffff, 0xff7fffff, 0x00000001, 0x7fc00001
	for _, rnd := range []string{"", ".RM", ".RP", ".RZ"} {
		op := "[B------:R-:W2:-:S02] F2F.BF16.F32" + rnd + " R10, R2 ;\n[B--2---:R-:W-:-:S04] MOV R11, RZ"
		out := intRun(t, op, in)
		for i := 0; i < 64; i++ {
			b := in[4*i]
			f := math.Float32frombits(b)
			got := out[2*i]
			if f != f {
				if g := got & 0xffff; g&0x7f80 != 0x7f80 || g&0x7f == 0 {
					t.Fatalf("F2F.BF16.F32%s(%#x) = %#x, want a NaN", rnd, b, got)
				}
				continue
			}
			tr, rest, neg := b>>16, b&0xffff, b>>31 != 0
			want := tr
			switch rnd {
			case "":
				want = uint32(tile.F32ToBF16(f))
			case ".RP":
				if rest != 0 && !neg {
					want++
				}
			case ".RM":
				if rest != 0 && neg {
					want++
				}
			}
			if tr&0x7f80 == 0x7f80 { // infinities stay
				want = tr
			}
			if got != want {
				t.Fatalf("F2F.BF16.F32%s(%#x = %g) = %#x, want %#x", rnd, b, f, got, want)
			}
		}
	}
}

// TestSimF2FPRZ: F2FP.PACK_AB.RZ and F2FP.BF16.PACK_AB.RZ pack two binary32
// values rounded toward zero (cvt.rz.f16x2.f32): a finite value too large
// for binary16 gives 65504, not infinity; bfloat16 toward zero is the
// high half of the bits. The binary16 reference truncates |x| to a multiple
// of its binary16 ulp in binary64, exactly.
func TestSimF2FPRZ(t *testing.T) {
	r := rand.New(rand.NewSource(47))
	in := intInputs(r, 64)
	for i := 0; i < 64; i += 3 { // values in binary16's range, and its subnormals
		in[4*i] = math.Float32bits(float32(r.NormFloat64() * math.Pow(2, float64(r.Intn(40)-26))))
	}
	rzF16 := func(b uint32) uint32 {
		x := float64(math.Float32frombits(b))
		if x != x {
			return 0x7fff
		}
		a := math.Abs(x)
		if !math.IsInf(a, 0) {
			e := math.Floor(math.Log2(a))
			if math.Ldexp(1, int(e)) > a { // Log2 rounding at a power of two
				e--
			}
			e = max(e, -14) // subnormals: the least normal exponent's ulp
			ulp := math.Ldexp(1, int(e)-10)
			a = math.Min(math.Trunc(a/ulp)*ulp, 65504)
		}
		h := uint32(float16.Fromfloat32(float32(a)).Bits())
		if math.Signbit(x) {
			h |= 0x8000
		}
		return h
	}
	rzBF16 := func(b uint32) uint32 {
		if math.IsNaN(float64(math.Float32frombits(b))) {
			return 0x7fff
		}
		return b >> 16
	}
	for _, c := range []struct {
		mods string
		ref  func(uint32) uint32
	}{{"PACK_AB.RZ", rzF16}, {"BF16.PACK_AB.RZ", rzBF16}} {
		op := "[B------:R-:W-:-:S04] F2FP." + c.mods + " R10, R2, R3 ;\n[B------:R-:W-:-:S04] MOV R11, RZ"
		out := intRun(t, op, in)
		for i := 0; i < 64; i++ {
			want := c.ref(in[4*i])<<16 | c.ref(in[4*i+1])
			if got := out[2*i]; got != want {
				t.Fatalf("F2FP.%s(%#x, %#x) = %#x, want %#x", c.mods, in[4*i], in[4*i+1], got, want)
			}
		}
	}
}

// TestSimHalfResultModifiers: HADD2/HMUL2/HFMA2 with .FTZ, .SAT and .RELU
// (binary16, and bfloat16 for .RELU) on random halves with subnormals,
// infinities and NaNs. The reference applies the modifiers, written on the
// halves' values, around the plain operation (hop2, tested on its own).
func TestSimHalfResultModifiers(t *testing.T) {
	r := rand.New(rand.NewSource(48))
	in := intInputs(r, 64)
	for i := range in {
		switch r.Intn(4) {
		case 0: // a subnormal half in each half
			in[i] = uint32(r.Intn(0x400)) | uint32(r.Intn(0x400))<<16 | uint32(r.Intn(2))<<15
		case 1: // values around [0, 1]
			in[i] = uint32(0x3800+r.Intn(0x800)) | uint32(0xb800+r.Intn(0x800))<<16
		}
	}
	for _, c := range []struct {
		op       string
		kind     int
		bf       bool
		ftz, sat bool
		relu     bool
	}{
		{"HADD2.FTZ R10, R2, R3", 0, false, true, false, false},
		{"HADD2.SAT R10, R2, R3", 0, false, false, true, false},
		{"HMUL2.FTZ.SAT R10, R2, R3", 1, false, true, true, false},
		{"HFMA2.FTZ.SAT R10, R2, R3, R4", 2, false, true, true, false},
		{"HFMA2.RELU R10, R2, R3, R4", 2, false, false, false, true},
		{"HFMA2.BF16_V2.RELU R10, R2, R3, R4", 2, true, false, false, true},
	} {
		if _, err := sass.Parse(c.op); err != nil {
			t.Fatalf("%s does not encode: %v", c.op, err)
		}
		out := intRun(t, "[B------:R-:W-:-:S04] "+c.op+" ;\n[B------:R-:W-:-:S04] MOV R11, RZ", in)
		value := func(h uint16) float64 {
			if c.bf {
				return float64(math.Float32frombits(uint32(h) << 16))
			}
			return float64(float16.Frombits(h).Float32())
		}
		sub := func(h uint16) bool { v := math.Abs(value(h)); return v != 0 && v < 0x1p-14 && !c.bf }
		for i := 0; i < 64; i++ {
			a, b, cc := in[4*i], in[4*i+1], in[4*i+2]
			if c.ftz {
				flush := func(v uint32) uint32 {
					for k := 0; k < 32; k += 16 {
						if sub(uint16(v >> k)) {
							v &^= 0x7fff << k
						}
					}
					return v
				}
				a, b, cc = flush(a), flush(b), flush(cc)
			}
			raw := hop2(c.kind, a, b, cc, c.bf)
			var want uint32
			for k := 0; k < 32; k += 16 {
				h := uint16(raw >> k)
				if c.ftz && sub(h) {
					h &= 0x8000
				}
				v := value(h)
				switch {
				case c.sat && (v != v || v < 0 || v == 0):
					h = 0
				case c.sat && v > 1:
					h = 0x3c00
				case c.relu && (v < 0 || v == 0 && math.Signbit(v)):
					h = 0
				}
				want |= uint32(h) << k
			}
			if got := out[2*i]; got != want {
				t.Fatalf("%s (%#x, %#x, %#x) = %#x, want %#x", c.op, in[4*i], in[4*i+1], in[4*i+2], got, want)
			}
		}
	}
}

// TestSimNarrowConversions: F2I to 8- and 16-bit integers (saturated,
// then sign- or zero-extended to the register), F2I from binary16 (the
// register's low half) and I2F to binary16 (the low half, high half zero),
// on random registers, against Go.
func TestSimNarrowConversions(t *testing.T) {
	r := rand.New(rand.NewSource(49))
	in := intInputs(r, 64)
	for i := 0; i < 64; i += 2 {
		in[4*i] = math.Float32bits(float32(r.NormFloat64() * math.Pow(2, float64(r.Intn(20)))))
		in[4*i+1] = uint32(float16.Fromfloat32(float32(r.NormFloat64() * 300)).Bits())
	}
	sat := func(x float64, bits int, signed bool) int64 {
		if x != x {
			return 0
		}
		lo, hi := 0.0, math.Ldexp(1, bits)-1
		if signed {
			lo, hi = -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1)-1
		}
		return int64(math.Max(lo, math.Min(hi, x)))
	}
	for _, c := range []struct {
		mods   string
		src    int // register: 2 an f32, 3 an f16 (or an integer for I2F)
		bits   int
		signed bool
		i2f    bool
	}{
		{"S8.TRUNC.NTZ", 2, 8, true, false}, {"U8.TRUNC.NTZ", 2, 8, false, false}, {"S16.TRUNC.NTZ", 2, 16, true, false},
		{"U16.F16.TRUNC.NTZ", 3, 16, false, false}, {"F16.TRUNC.NTZ", 3, 32, true, false}, {"U32.F16.TRUNC.NTZ", 3, 32, false, false},
		{"F16", 2, 32, true, true}, {"F16.U32.RZ", 2, 32, false, true}, {"F16.S16", 2, 16, true, true},
	} {
		op := "F2I." + c.mods
		if c.i2f {
			op = "I2F." + c.mods
		}
		text := op + " R10, R" + strconv.Itoa(c.src)
		if _, err := sass.Parse(text + " ;"); err != nil {
			t.Fatalf("%s does not encode: %v", text, err)
		}
		out := intRun(t, "[B------:R-:W2:-:S02] "+text+" ;\n[B--2---:R-:W-:-:S04] MOV R11, RZ", in)
		for i := 0; i < 64; i++ {
			v := in[4*i+c.src-2]
			var want uint32
			if c.i2f {
				var x float64
				switch {
				case c.bits == 16:
					x = float64(int16(v))
				case c.signed:
					x = float64(int32(v))
				default:
					x = float64(v)
				}
				// float32(x) is exact for these 16- and 32-bit values up to
				// 2^24, and beyond binary16's range either way
				h := float16.Fromfloat32(float32(x))
				if strings.HasSuffix(c.mods, ".RZ") {
					// toward zero: the largest binary16 not above x (x >= 0 here)
					for float64(h.Float32()) > x {
						h = float16.Frombits(h.Bits() - 1)
					}
				}
				want = uint32(h.Bits())
			} else {
				var x float64
				if c.src == 3 {
					x = float64(float16.Frombits(uint16(v)).Float32())
				} else {
					x = float64(math.Float32frombits(v))
				}
				n := sat(math.Trunc(x), c.bits, c.signed)
				want = uint32(n)
				if c.bits < 32 && !c.signed {
					want = uint32(n) & (1<<c.bits - 1)
				}
			}
			if got := out[2*i]; got != want {
				t.Fatalf("%s(%#x) = %#x, want %#x", text, v, got, want)
			}
		}
	}
}

// TestSimI2F64Directed: I2F.F64.S64/U64 in every rounding direction
// against math/big, on integers past 2^53 where the directions differ.
func TestSimI2F64Directed(t *testing.T) {
	r := rand.New(rand.NewSource(50))
	in := intInputs(r, 64)
	for _, c := range []struct {
		mods string
		mode big.RoundingMode
	}{{"F64.S64.RZ", big.ToZero}, {"F64.S64.RM", big.ToNegativeInf}, {"F64.U64.RP", big.ToPositiveInf}, {"F64.U64.RZ", big.ToZero}, {"F64.S64", big.ToNearestEven}} {
		text := "I2F." + c.mods + " R10, R2"
		if _, err := sass.Parse(text + " ;"); err != nil {
			t.Fatalf("%s does not encode: %v", text, err)
		}
		out := intRun(t, "[B------:R-:W2:-:S02] "+text+" ;\n[B--2---:R-:W-:-:S04] NOP", in)
		for i := 0; i < 64; i++ {
			v := uint64(in[4*i+1])<<32 | uint64(in[4*i])
			b := new(big.Float).SetPrec(53).SetMode(c.mode)
			if strings.Contains(c.mods, "S64") {
				b.SetInt64(int64(v))
			} else {
				b.SetUint64(v)
			}
			f, _ := b.Float64()
			if got := uint64(out[2*i+1])<<32 | uint64(out[2*i]); got != math.Float64bits(f) {
				t.Fatalf("%s(%#x) = %#x, want %#x", text, v, got, math.Float64bits(f))
			}
		}
	}
}
