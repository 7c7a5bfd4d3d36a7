package sim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"regexp"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/sass"

	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// asm parses a program written with labels: a line "name:" labels the
// next instruction and "BRA name" branches to it.
func asm(t testing.TB, src string) sass.Program {
	t.Helper()
	var lines []string
	labels := map[string]int{}
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		if strings.HasSuffix(line, ":") {
			labels[strings.TrimSuffix(line, ":")] = len(lines)
			continue
		}
		lines = append(lines, line)
	}
	re := regexp.MustCompile(`BRA (!?P[0-6T], )?([A-Za-z_][A-Za-z_0-9]*)`)
	for k, line := range lines {
		lines[k] = re.ReplaceAllStringFunc(line, func(m string) string {
			sm := re.FindStringSubmatch(m)
			at, ok := labels[sm[2]]
			if !ok {
				t.Fatalf("no label %q", sm[2])
			}
			return fmt.Sprintf("BRA %s0x%x", sm[1], 16*at)
		})
	}
	p, err := sass.Parse(strings.Join(lines, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// params packs kernel parameters: uint64 and uint32 values in order, each
// aligned to its size.
func params(vals ...any) []byte {
	var b []byte
	for _, v := range vals {
		switch x := v.(type) {
		case uint64:
			for len(b)%8 != 0 {
				b = append(b, 0)
			}
			b = binary.LittleEndian.AppendUint64(b, x)
		case uint32:
			b = binary.LittleEndian.AppendUint32(b, x)
		case int:
			b = binary.LittleEndian.AppendUint32(b, uint32(x))
		default:
			panic("params: " + fmt.Sprint(v))
		}
	}
	return b
}

func simWords(b []byte) []uint32 {
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

func putU32s(b []byte, v []uint32) {
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
}

// alloc allocates a region holding v (or n poisoned words when v is nil).
func alloc(t testing.TB, m *Memory, name string, v []uint32, n int) uint64 {
	t.Helper()
	if v != nil {
		n = len(v)
	}
	if n == 0 {
		n = 1
	}
	a, err := m.Alloc(name, 4*n)
	if err != nil {
		t.Fatal(err)
	}
	b := m.Bytes(name)
	if v != nil {
		putU32s(b, v)
	} else {
		for i := range b {
			b[i] = 0xff
		}
	}
	return a
}

const vecAdd = `
[B------:R-:W0:-:S01] S2R R0, SR_CTAID.X ;
[B------:R-:W1:-:S01] S2R R3, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B01----:R-:W-:-:S04] IMAD R0, R0, c[0x0][0x0], R3 ;
[B------:R-:W-:-:S13] ISETP.GE.AND P0, PT, R0, c[0x0][0x178], PT ;
[B------:R-:W-:-:S05] @P0 EXIT ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W-:-:S04] IMAD.WIDE R2, R0, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S04] IMAD.WIDE R6, R0, R5, c[0x0][0x168] ;
[B------:R-:W2:-:S04] LDG.E R2, [R2.64] ;
[B------:R-:W3:-:S04] LDG.E R6, [R6.64] ;
[B------:R-:W-:-:S04] IMAD.WIDE R4, R0, R5, c[0x0][0x170] ;
[B--23--:R-:W-:-:S04] FADD R9, R2, R6 ;
[B------:R-:W-:-:S04] STG.E [R4.64], R9 ;
[B------:R-:W-:-:S05] EXIT ;
`

func TestSimVectorAdd(t *testing.T) {
	p := asm(t, vecAdd)
	s, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{1, 2, 31, 32, 33, 127, 128, 129, 1000, 4097, 33333, 100000} {
		x := make([]uint32, n)
		y := make([]uint32, n)
		for i := range x {
			x[i] = math.Float32bits(float32(rng.NormFloat64()))
			y[i] = math.Float32bits(float32(rng.NormFloat64()))
		}
		m := NewMemory()
		ax, ay, az := alloc(t, m, "x", x, 0), alloc(t, m, "y", y, 0), alloc(t, m, "z", nil, n)
		block := 128
		if n%3 == 0 {
			block = 96
		}
		st, err := s.Launch(Config{StrictScoreboards: true, Grid: [3]int{(n + block - 1) / block}, Block: [3]int{block}, Memory: m,
			Params: params(ax, ay, az, n), Poison: true})
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		z := simWords(m.Bytes("z"))
		for i := range z {
			want := math.Float32bits(math.Float32frombits(x[i]) + math.Float32frombits(y[i]))
			if z[i] != want {
				t.Fatalf("n=%d: z[%d] = %#x, want %#x", n, i, z[i], want)
			}
		}
		if st.CTAs != int64((n+block-1)/block) {
			t.Fatalf("n=%d: %d CTAs", n, st.CTAs)
		}
	}
}

const reduceSrc = `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W1:-:S01] S2R R1, SR_CTAID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B------:R-:W-:-:S02] MOV R4, RZ ;
[B01----:R-:W-:-:S04] IMAD R2, R1, c[0x0][0x0], R0 ;
[B------:R-:W-:-:S13] ISETP.GE.AND P0, PT, R2, c[0x0][0x170], PT ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W-:-:S04] IMAD.WIDE R6, R2, R5, c[0x0][0x160] ;
[B------:R-:W2:-:S04] @!P0 LDG.E R4, [R6.64] ;
[B--2---:R0:W-:-:S04] STS [R0.X4], R4 ;
[B0-----:R-:W-:-:S04] BAR.SYNC 0x0 ;
[B------:R-:W-:-:S04] MOV R8, c[0x0][0x0] ;
[B------:R-:W-:-:S04] SHF.R.U32.HI R8, RZ, 0x1, R8 ;
loop:
[B------:R-:W-:-:S13] ISETP.LT.U32.AND P1, PT, R0, R8, PT ;
[B------:R-:W-:-:S04] IADD3 R9, R0, R8, RZ ;
[B------:R-:W3:-:S04] @P1 LDS R10, [R0.X4] ;
[B------:R-:W3:-:S04] @P1 LDS R11, [R9.X4] ;
[B---3--:R-:W-:-:S04] @P1 FADD R10, R10, R11 ;
[B------:R0:W-:-:S04] @P1 STS [R0.X4], R10 ;
[B0-----:R-:W-:-:S04] BAR.SYNC 0x0 ;
[B------:R-:W-:-:S04] SHF.R.U32.HI R8, RZ, 0x1, R8 ;
[B------:R-:W-:-:S13] ISETP.NE.AND P2, PT, R8, RZ, PT ;
[B------:R-:W-:-:S05] @P2 BRA loop ;
[B------:R-:W-:-:S13] ISETP.NE.AND P3, PT, R0, RZ, PT ;
[B------:R-:W-:-:S05] @P3 EXIT ;
[B------:R-:W3:-:S04] LDS R10, [R0.X4] ;
[B------:R-:W-:-:S04] IMAD.WIDE R6, R1, R5, c[0x0][0x168] ;
[B---3--:R-:W-:-:S04] STG.E [R6.64], R10 ;
[B------:R-:W-:-:S05] EXIT ;
`

func TestSimSharedReduction(t *testing.T) {
	p := asm(t, reduceSrc)
	s, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(2))
	for _, tc := range []struct{ n, block int }{{1, 32}, {100, 64}, {1000, 256}, {5000, 128}, {65536, 1024}} {
		x := make([]uint32, tc.n)
		for i := range x {
			x[i] = math.Float32bits(float32(rng.Float64()))
		}
		grid := (tc.n + tc.block - 1) / tc.block
		m := NewMemory()
		ax, ao := alloc(t, m, "x", x, 0), alloc(t, m, "out", nil, grid)
		_, err := s.Launch(Config{StrictScoreboards: true, Grid: [3]int{grid}, Block: [3]int{tc.block}, SharedBytes: 4 * tc.block,
			Memory: m, Params: params(ax, ao, tc.n), Poison: true})
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		out := simWords(m.Bytes("out"))
		for b := 0; b < grid; b++ {
			sh := make([]float32, tc.block)
			for i := range sh {
				if g := b*tc.block + i; g < tc.n {
					sh[i] = math.Float32frombits(x[g])
				}
			}
			for st := tc.block / 2; st > 0; st /= 2 {
				for i := 0; i < st; i++ {
					sh[i] += sh[i+st]
				}
			}
			if out[b] != math.Float32bits(sh[0]) {
				t.Fatalf("%+v: block %d sum %v, want %v", tc, b, math.Float32frombits(out[b]), sh[0])
			}
		}
	}
}

func TestSimErrorsIs(t *testing.T) {
	f := &Fault{Kind: ErrDeadlock}
	if !errors.Is(f, ErrDeadlock) {
		t.Fatal("errors.Is")
	}
}

func sprintf(f string, a ...any) string { return fmt.Sprintf(f, a...) }

// corpusKernel decodes kernel name of the corpus cubin file for sm_<sm>.
func corpusKernel(t *testing.T, file, name string, sm int) sass.Program {
	t.Helper()
	p, err := sass.Decode(corpus.Code(t, file, name, sm))
	if err != nil {
		t.Fatalf("%s sm_%d %s: %v", file, sm, name, err)
	}
	return p
}
