package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/x448/float16"

	"github.com/tcrt-go/tcrt/sass"

	"github.com/tcrt-go/tcrt/sass/sched"
)

// TestSimMMAOps runs SGXT, HMUL2 by an f16x2 immediate and P2R (mma.go)
// on random words against references written from the PTX definitions
// (szext, mul.rn.f16x2, the predicate bits).
func TestSimMMAOps(t *testing.T) {
	type op struct {
		text string
		ref  func(x uint32) uint32
	}
	szext := func(n int, signed bool) func(uint32) uint32 {
		return func(x uint32) uint32 {
			if n == 0 {
				return 0
			}
			if n >= 32 {
				return x
			}
			v := int64(x) & (1<<n - 1)
			if signed && v >= 1<<(n-1) {
				v -= 1 << n
			}
			return uint32(v)
		}
	}
	hmul := func(h1, h0 float32) func(uint32) uint32 {
		mul := func(b uint16, k float32) uint16 {
			// the product of two binary16 is exact in binary32: one rounding
			return uint16(float16.Fromfloat32(float16.Frombits(b).Float32() * k))
		}
		return func(x uint32) uint32 {
			return uint32(mul(uint16(x>>16), h1))<<16 | uint32(mul(uint16(x), h0))
		}
	}
	preds := func(m uint32) func(uint32) uint32 {
		// P0..P6 are bits 0..6 of the input (set below)
		return func(x uint32) uint32 { return x & 0x7f & m }
	}
	ops := []op{
		{"SGXT.U32 R8, R2, 0x5", szext(5, false)},
		{"SGXT R8, R2, 0x5", szext(5, true)},
		{"SGXT R8, R2, 0x1", szext(1, true)},
		{"SGXT R8, R2, 0x0", szext(0, true)},
		{"SGXT.U32 R8, R2, 0x1f", szext(31, false)},
		{"SGXT R8, R2, 0x1f", szext(31, true)},
		{"SGXT R8, R2, 0x25", szext(32, true)},
		{"SGXT.W R8, R2, 0x25", szext(5, true)},
		{"SGXT.W.U32 R8, R2, 0x20", szext(0, false)},
		{"HMUL2 R8, R2, 256, 256", hmul(256, 256)},
		{"HMUL2 R8, R2, 2, 0.333251953125", hmul(2, 0.333251953125)},
		{"HMUL2 R8, R2, -0.0 , 65504", hmul(float32(negZero()), 65504)},
		{"P2R R8, PR, RZ, 0x7f", preds(0x7f)},
		{"P2R R8, PR, RZ, 0x2a", preds(0x2a)},
		{"P2R R8, PR, RZ, 0x40", preds(0x40)},
	}
	var b strings.Builder
	b.WriteString(`
[B------:R-:W0:-:S01] S2R R1, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R6, R1, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E R2, [R6.64] ;
[B------:R-:W-:-:S04] IMAD.WIDE R6, R1, R5, c[0x0][0x168] ;
`)
	for p := 0; p < 7; p++ {
		wait := "------"
		if p == 0 {
			wait = "-1----"
		}
		fmt.Fprintf(&b, "[B%s:R-:W-:-:S04] LOP3.LUT R3, R2, %#x, RZ, 0xc0, !PT ;\n", wait, 1<<p)
		fmt.Fprintf(&b, "[B------:R-:W-:-:S04] ISETP.NE.U32.AND P%d, PT, R3, RZ, PT ;\n", p)
	}
	for k, o := range ops {
		fmt.Fprintf(&b, "[B------:R-:W-:-:S04] %s ;\n", o.text)
		fmt.Fprintf(&b, "[B------:R-:W-:-:S04] STG.E [R6.64+%#x], R8 ;\n", 0x100*k)
	}
	b.WriteString("[B------:R-:W-:-:S05] EXIT ;\n")
	p := asm(t, b.String())
	r := rand.New(rand.NewPCG(16, 1))
	for round := 0; round < 8; round++ {
		x := make([]uint32, 64)
		for i := range x {
			x[i] = r.Uint32()
			for h := 0; h < 32; h += 16 {
				if x[i]>>(h+10)&0x1f == 0x1f {
					x[i] &^= 1 << (h + 14) // no NaN or infinity inputs
				}
			}
		}
		m := NewMemory()
		ai, ao := alloc(t, m, "in", x, 0), alloc(t, m, "out", nil, 64*len(ops))
		if _, err := Launch(p, Config{StrictScoreboards: true, Block: [3]int{64}, Memory: m, Params: params(ai, ao), Poison: true}); err != nil {
			t.Fatal(err)
		}
		out := simWords(m.Bytes("out"))
		for k, o := range ops {
			for l := 0; l < 64; l++ {
				if got, want := out[64*k+l], o.ref(x[l]); got != want {
					t.Fatalf("%s on %#08x: %#08x, want %#08x", o.text, x[l], got, want)
				}
			}
		}
	}
}

func negZero() float64 {
	z := 0.0
	return -z
}

// TestSimLDGSTSZeroFill checks cp.async with a source size as ptxas
// compiles it, for copies of 16, 8 and 4 bytes: LDGSTS.ZFILL with the
// address src + (n-size)&(n-1) and the predicate size != 0 (every size
// 0..n), and the plain predicated form (false: n zero bytes). Lane l's
// source row is at n·l, so 8- and 4-byte rows are not 16-byte aligned.
// Shared memory starts poisoned (0xCD).
func TestSimLDGSTSZeroFill(t *testing.T) {
	widths := []struct {
		n                int
		ldgsts, lds, stg string
	}{{16, ".BYPASS.128", ".128", ".128"}, {8, ".64", ".64", ".64"}, {4, "", "", ""}}
	for _, wd := range widths {
		for _, zfill := range []bool{true, false} {
			n := wd.n
			mod := ""
			if zfill {
				mod = ".ZFILL"
			}
			src := `
[B------:R-:W0:-:S01] S2R R1, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R6, R1, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E R2, [R6.64] ;
[B------:R-:W-:-:S02] MOV R5, ` + fmt.Sprintf("%#x", n) + ` ;
[B------:R-:W-:-:S04] IMAD.WIDE R6, R1, R5, c[0x0][0x168] ;
[B-1----:R-:W-:-:S04] IADD3 R3, -R2, ` + fmt.Sprintf("%#x", n) + `, RZ ;
[B------:R-:W-:-:S04] LOP3.LUT R3, R3, ` + fmt.Sprintf("%#x", n-1) + `, RZ, 0xc0, !PT ;
[B------:R-:W-:-:S04] ISETP.NE.U32.AND P0, PT, R2, RZ, PT ;
[B------:R-:W-:-:S04] SHF.L.U32 R0, R1, 0x4, RZ ;
`
			if zfill {
				src += `[B------:R-:W-:-:S04] IADD3 R6, P1, R6, R3, RZ ;
[B------:R-:W-:-:S04] IADD3.X R7, RZ, R7, RZ, P1, !PT ;
`
			}
			src += `[B------:R0:W-:-:S04] LDGSTS.E` + wd.ldgsts + mod + ` [R0], [R6.64], P0 ;
[B------:R-:W0:-:S01] LDGDEPBAR ;
[B------:R-:W-:-:S04] DEPBAR.LE SB0, 0x0 ;
[B------:R-:W2:-:S04] LDS` + wd.lds + ` R8, [R0] ;
[B------:R-:W-:-:S04] IMAD.WIDE R6, R1, R5, c[0x0][0x170] ;
[B--2---:R-:W-:-:S04] STG.E` + wd.stg + ` [R6.64], R8 ;
[B------:R-:W-:-:S05] EXIT ;
`
			p := asm(t, src)
			r := rand.New(rand.NewPCG(17, 2))
			sizes := make([]uint32, 64)
			for l := range sizes {
				sizes[l] = uint32(l % (n + 1))
				if !zfill {
					sizes[l] = uint32(l%2) * uint32(n)
				}
			}
			rows := make([]uint32, 4*64)
			for i := range rows {
				rows[i] = r.Uint32() | 0x01010101 // no zero bytes
			}
			m := NewMemory()
			as, ar, ao := alloc(t, m, "sizes", sizes, 0), alloc(t, m, "rows", rows, 0), alloc(t, m, "out", nil, 4*64)
			if _, err := Launch(p, Config{StrictScoreboards: true, Block: [3]int{64}, SharedBytes: 1024, Memory: m, Params: params(as, ar, ao), Poison: true}); err != nil {
				t.Fatalf("%d bytes%s: %v", n, mod, err)
			}
			in, out := m.Bytes("rows"), m.Bytes("out")
			for l := 0; l < 64; l++ {
				for k := 0; k < n; k++ {
					want := byte(0)
					if k < int(sizes[l]) {
						want = in[n*l+k]
					}
					if out[n*l+k] != want {
						t.Fatalf("LDGSTS %d bytes%s size %d: byte %d = %#x, want %#x", n, mod, sizes[l], k, out[n*l+k], want)
					}
				}
			}
		}
	}
}

// TestSimDEPBARSet: DEPBAR's scoreboard set waits for the loads of those
// scoreboards: a second wait on one of them finds it clear, which
// StrictScoreboards reports (ErrScoreboard naming it).
func TestSimDEPBARSet(t *testing.T) {
	head := `
[B------:R-:W0:-:S01] S2R R1, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R6, R1, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W0:-:S04] LDG.E R9, [R6.64] ;
[B------:R-:W2:-:S04] LDG.E R2, [R6.64] ;
[B------:R-:W3:-:S04] LDG.E R3, [R6.64] ;
[B------:R-:W-:-:S04] DEPBAR.LE SB0, 0x0, {3,2} ;
`
	tail := `[B------:R-:W-:-:S04] IADD3 R4, R2, R3, R9 ;
[B------:R-:W-:-:S04] STG.E [R6.64], R4 ;
[B------:R-:W-:-:S05] EXIT ;
`
	run := func(src string) (uint32, error) {
		m := NewMemory()
		a := alloc(t, m, "x", []uint32{21}, 0)
		_, err := Launch(asm(t, src), Config{StrictScoreboards: true, Block: [3]int{1}, Memory: m, Params: params(a), Poison: true})
		return simWords(m.Bytes("x"))[0], err
	}
	if got, err := run(head + tail); err != nil || got != 63 {
		t.Fatalf("DEPBAR with a set: %d, %v; want 63", got, err)
	}
	again := head + "[B------:R-:W0:-:S04] LDG.E R9, [R6.64] ;\n[B------:R-:W-:-:S04] DEPBAR.LE SB0, 0x0, {2} ;\n" + tail
	if _, err := run(again); !errors.Is(err, ErrScoreboard) || !strings.Contains(err.Error(), "SB2") {
		t.Fatalf("a second wait on SB2: %v, want ErrScoreboard on SB2", err)
	}
}

// TestCycleDEPBARSet: the cycle model waits for the scoreboards of
// DEPBAR's set as for its count.
func TestCycleDEPBARSet(t *testing.T) {
	body := asm(t, `
[B------:R-:W2:-:S01] LDG.E R2, [R4.64] ;
[B------:R-:W-:-:S01] DEPBAR.LE SB0, 0x0, {2} ;
[B------:R-:W-:-:S01] NOP ;
[B------:R-:W-:-:S05] BRA 0x0 ;
`)
	c, err := sched.CycleModel(body, sched.CycleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := sched.DefaultLatencies().Release(sass.ClassGlobal)
	if c.Period < float64(w) {
		t.Fatalf("period %.1f: the DEPBAR did not wait for the load (release %d cycles)", c.Period, w)
	}
}

// TestCheckScheduleDEPBARSet: the schedule checker counts DEPBAR's set as
// a wait on those scoreboards: reading a load's result after it is clean,
// without the set it is a missing wait.
func TestCheckScheduleDEPBARSet(t *testing.T) {
	prog := func(set string) sass.Program {
		return asm(t, `
[B------:R-:W0:-:S01] LDG.E R6, [R4.64] ;
[B------:R-:W2:-:S01] LDG.E R2, [R4.64] ;
[B------:R-:W-:-:S04] DEPBAR.LE SB0, 0x0`+set+` ;
[B------:R-:W-:-:S04] IADD3 R3, R2, R6, RZ ;
[B------:R-:W-:-:S05] EXIT ;
`)
	}
	if f := sched.Check(prog(", {2}"), sched.Options{}); len(f) != 0 {
		t.Fatalf("with the set: %v", f)
	}
	if f := sched.Check(prog(""), sched.Options{}); len(f) == 0 {
		t.Fatal("without the set: no finding for R2 read before SB2 is waited for")
	}
}
