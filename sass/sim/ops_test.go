package sim

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"
)

// shflRef is PTX's shfl.sync pseudo-code.
func shflRef(mode int, x []uint32, b, c uint32) ([]uint32, []bool) {
	out := make([]uint32, 32)
	pred := make([]bool, 32)
	for lane := 0; lane < 32; lane++ {
		bval, cval, segmask := int(b&0x1f), int(c&0x1f), int(c>>8&0x1f)
		maxLane := (lane & segmask) | (cval & ^segmask)
		minLane := lane & segmask
		var j int
		var pval bool
		switch mode {
		case 1: // up
			j = lane - bval
			pval = j >= maxLane
		case 2: // down
			j = lane + bval
			pval = j <= maxLane
		case 3: // bfly
			j = lane ^ bval
			pval = j <= maxLane
		default: // idx
			j = minLane | (bval & ^segmask)
			pval = j <= maxLane
		}
		if !pval {
			j = lane
		}
		out[lane], pred[lane] = x[j], pval
	}
	return out, pred
}

func TestSimShuffle(t *testing.T) {
	modes := []string{"IDX", "UP", "DOWN", "BFLY"}
	r := rand.New(rand.NewSource(5))
	x := make([]uint32, 64)
	for i := range x {
		x[i] = r.Uint32()
	}
	for mi, mode := range modes {
		for _, form := range []string{"R3, R4", "0x3, 0x1f"} {
			src := `
[B------:R-:W0:-:S01] S2R R1, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R6, R1, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E R2, [R6.64] ;
[B------:R-:W-:-:S02] MOV R3, c[0x0][0x170] ;
[B------:R-:W-:-:S02] MOV R4, c[0x0][0x174] ;
[B-1----:R-:W2:-:S04] SHFL.` + mode + ` P0, R8, R2, ` + form + ` ;
[B------:R-:W-:-:S02] MOV R9, 0x1 ;
[B--2---:R-:W-:-:S04] SEL R10, R9, RZ, P0 ;
[B------:R-:W-:-:S04] IMAD.WIDE R6, R1, R5, c[0x0][0x168] ;
[B------:R-:W-:-:S04] STG.E [R6.64], R8 ;
[B------:R-:W-:-:S04] IMAD.WIDE R6, R1, R5, c[0x0][0x178] ;
[B------:R-:W-:-:S04] STG.E [R6.64], R10 ;
[B------:R-:W-:-:S05] EXIT ;
`
			p := asm(t, src)
			var cases [][2]uint32
			if form == "R3, R4" {
				for _, b := range []uint32{0, 1, 2, 5, 16, 31, 37} {
					for _, c := range []uint32{0x1f, 0, 0x181f, 0x1800, 0x1c03, 0x1007, 0x1f00, 0x7} {
						cases = append(cases, [2]uint32{b, c})
					}
				}
			} else {
				cases = [][2]uint32{{3, 0x1f}}
			}
			for _, bc := range cases {
				m := NewMemory()
				ai, ao, ap := alloc(t, m, "in", x, 0), alloc(t, m, "out", nil, 64), alloc(t, m, "pred", nil, 64)
				_, err := Launch(p, Config{StrictScoreboards: true, Block: [3]int{64}, Memory: m, Params: params(ai, ao, bc[0], bc[1], ap), Poison: true})
				if err != nil {
					t.Fatalf("%s %s b=%d c=%#x: %v", mode, form, bc[0], bc[1], err)
				}
				out, pr := simWords(m.Bytes("out")), simWords(m.Bytes("pred"))
				for w := 0; w < 2; w++ {
					want, wp := shflRef(mi, x[32*w:32*w+32], bc[0], bc[1])
					for l := 0; l < 32; l++ {
						if out[32*w+l] != want[l] || (pr[32*w+l] == 1) != wp[l] {
							t.Fatalf("%s b=%d c=%#x lane %d: %#x %v, want %#x %v", mode, bc[0], bc[1], l, out[32*w+l], pr[32*w+l], want[l], wp[l])
						}
					}
				}
			}
		}
	}
}

func TestSimLDSM(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	for _, v := range []string{"16.M88", "16.M88.2", "16.M88.4", "16.MT88", "16.MT88.2", "16.MT88.4"} {
		n := 1
		if v[len(v)-2] == '.' {
			n = int(v[len(v)-1] - '0')
		}
		trans := v[4] == 'T'
		src := `
[B------:R-:W0:-:S01] S2R R1, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x40 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R2, R1, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E.128 R8, [R2.64] ;
[B------:R-:W1:-:S04] LDG.E.128 R12, [R2.64+0x10] ;
[B------:R-:W1:-:S04] LDG.E.128 R16, [R2.64+0x20] ;
[B------:R-:W1:-:S04] LDG.E.128 R20, [R2.64+0x30] ;
[B------:R-:W-:-:S04] SHF.L.U32 R0, R1, 0x6, RZ ;
[B-1----:R-:W-:-:S04] STS.128 [R0], R8 ;
[B------:R-:W-:-:S04] STS.128 [R0+0x10], R12 ;
[B------:R-:W-:-:S04] STS.128 [R0+0x20], R16 ;
[B------:R-:W-:-:S04] STS.128 [R0+0x30], R20 ;
[B------:R-:W-:-:S02] MOV R5, 0x4 ;
[B------:R-:W-:-:S04] IMAD.WIDE R2, R1, R5, c[0x0][0x168] ;
[B------:R-:W2:-:S04] LDG.E R4, [R2.64] ;
[B------:R-:W-:-:S04] BAR.SYNC 0x0 ;
[B------:R-:W-:-:S02] MOV R25, RZ ;
[B------:R-:W-:-:S02] MOV R26, RZ ;
[B------:R-:W-:-:S02] MOV R27, RZ ;
[B--2---:R-:W3:-:S04] LDSM.` + v + ` R24, [R4] ;
[B------:R-:W-:-:S02] MOV R5, 0x10 ;
[B------:R-:W-:-:S04] IMAD.WIDE R2, R1, R5, c[0x0][0x170] ;
[B---3--:R-:W-:-:S04] STG.E.128 [R2.64], R24 ;
[B------:R-:W-:-:S05] EXIT ;
`
		p := asm(t, src)
		data := make([]uint32, 32*16)
		for i := range data {
			data[i] = r.Uint32()
		}
		perm := r.Perm(128)
		addr := make([]uint32, 32)
		for l := range addr {
			addr[l] = uint32(16 * perm[l])
		}
		m := NewMemory()
		ad, aa, ao := alloc(t, m, "data", data, 0), alloc(t, m, "addr", addr, 0), alloc(t, m, "out", make([]uint32, 128), 0)
		if _, err := Launch(p, Config{StrictScoreboards: true, Block: [3]int{32}, SharedBytes: 2048, Memory: m, Params: params(ad, aa, ao), Poison: true}); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		sh := make([]byte, 2048)
		putU32s(sh, data)
		out := simWords(m.Bytes("out"))
		for i := 0; i < n; i++ {
			var M [8][8]uint16
			for row := 0; row < 8; row++ {
				for col := 0; col < 8; col++ {
					M[row][col] = binary.LittleEndian.Uint16(sh[int(addr[8*i+row])+2*col:])
				}
			}
			if trans {
				var T [8][8]uint16
				for a := 0; a < 8; a++ {
					for b := 0; b < 8; b++ {
						T[a][b] = M[b][a]
					}
				}
				M = T
			}
			for l := 0; l < 32; l++ {
				want := uint32(M[l/4][2*(l%4)]) | uint32(M[l/4][2*(l%4)+1])<<16
				if got := out[4*l+i]; got != want {
					t.Fatalf("%s matrix %d lane %d: %#x, want %#x", v, i, l, got, want)
				}
			}
		}
	}
}

func TestSimHMMA(t *testing.T) {
	src := `
[B------:R-:W0:-:S01] S2R R1, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R26, 0x10 ;
[B------:R-:W-:-:S02] MOV R27, 0x8 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R20, R1, R26, c[0x0][0x160] ;
[B------:R-:W-:-:S04] IMAD.WIDE R22, R1, R27, c[0x0][0x168] ;
[B------:R-:W-:-:S04] IMAD.WIDE R24, R1, R26, c[0x0][0x170] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E.128 R4, [R20.64] ;
[B------:R-:W1:-:S04] LDG.E.64 R8, [R22.64] ;
[B------:R-:W1:-:S04] LDG.E.128 R12, [R24.64] ;
[B-1----:R-:W2:-:S04] HMMA.16816.F32` + "%s" + ` R16, R4, R8, R12 ;
[B------:R-:W-:-:S04] IMAD.WIDE R20, R1, R26, c[0x0][0x178] ;
[B--2---:R-:W-:-:S04] STG.E.128 [R20.64], R16 ;
[B------:R-:W-:-:S05] EXIT ;
`
	r := rand.New(rand.NewSource(7))
	for _, bf := range []bool{false, true} {
		suffix := ""
		if bf {
			suffix = ".BF16"
		}
		p := asm(t, sprintf(src, suffix))
		for trial := 0; trial < 4; trial++ {
			var A [16][16]uint16
			var B [16][8]uint16
			var C [16][8]uint32
			for i := range A {
				for j := range A[i] {
					A[i][j] = toHalf(r.NormFloat64(), 0, bf)
				}
			}
			for i := range B {
				for j := range B[i] {
					B[i][j] = toHalf(r.NormFloat64(), 0, bf)
				}
			}
			for i := range C {
				for j := range C[i] {
					C[i][j] = math.Float32bits(float32(r.NormFloat64()))
				}
			}
			fa, fb, fc := make([]uint32, 128), make([]uint32, 64), make([]uint32, 128)
			for lane := 0; lane < 32; lane++ {
				g, tg := lane>>2, lane%4
				for i := 0; i < 8; i++ { // PTX: a0..a7
					row := g + 8
					if i < 2 || (4 <= i && i < 6) {
						row = g
					}
					col := tg*2 + i&1
					if i >= 4 {
						col += 8
					}
					fa[4*lane+i/2] |= uint32(A[row][col]) << (16 * (i % 2))
				}
				for i := 0; i < 4; i++ { // b0..b3
					row := tg*2 + i&1
					if i >= 2 {
						row += 8
					}
					fb[2*lane+i/2] |= uint32(B[row][g]) << (16 * (i % 2))
				}
				for i := 0; i < 4; i++ { // c0..c3
					row := g
					if i >= 2 {
						row = g + 8
					}
					fc[4*lane+i] = C[row][tg*2+i&1]
				}
			}
			m := NewMemory()
			aa, ab, ac, ad := alloc(t, m, "a", fa, 0), alloc(t, m, "b", fb, 0), alloc(t, m, "c", fc, 0), alloc(t, m, "d", nil, 128)
			if _, err := Launch(p, Config{StrictScoreboards: true, Block: [3]int{32}, Memory: m, Params: params(aa, ab, ac, ad), Poison: true}); err != nil {
				t.Fatal(err)
			}
			out := simWords(m.Bytes("d"))
			for lane := 0; lane < 32; lane++ {
				g, tg := lane>>2, lane%4
				for i := 0; i < 4; i++ {
					row := g
					if i >= 2 {
						row = g + 8
					}
					col := tg*2 + i&1
					acc := f32(C[row][col])
					for k := 0; k < 16; k++ {
						acc += half(A[row][k], bf) * half(B[k][col], bf)
					}
					want := math.Float32bits(float32(acc))
					if got := out[4*lane+i]; got != want {
						t.Fatalf("bf16=%v D[%d][%d] = %v, want %v", bf, row, col, math.Float32frombits(got), float32(acc))
					}
				}
			}
		}
	}
}

const ldgstsSrc = `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R5, 0x10 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE.U32 R2, R0, R5, c[0x0][0x160] ;
[B------:R-:W-:-:S04] SHF.L.U32 R10, R0, 0x4, RZ ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R0:W-:-:S04] LDGSTS.E.BYPASS.128 [R10], [R2.64] ;
[B------:R-:W0:-:S01] LDGDEPBAR ;
[B------:R1:W-:-:S04] LDGSTS.E.BYPASS.128 [R10+0x400], [R2.64+0x400] ;
[B------:R-:W0:-:S01] LDGDEPBAR ;
[B------:R-:W-:-:S04] IADD3 R11, R0, 0x1, RZ ;
[B------:R-:W-:-:S04] LOP3.LUT R11, R11, 0x3f, RZ, 0xc0, !PT ;
[B------:R-:W-:-:S04] SHF.L.U32 R11, R11, 0x4, RZ ;
[B------:R-:W-:-:S04] DEPBAR.LE SB0, 0x1 ;
[B------:R-:W-:-:S04] BAR.SYNC 0x0 ;
[B------:R-:W2:-:S04] LDS.128 R12, [R11] ;
[B------:R-:W-:-:S04] DEPBAR.LE SB0, 0x0 ;
[B------:R-:W-:-:S04] BAR.SYNC 0x0 ;
[B------:R-:W2:-:S04] LDS.128 R16, [R11+0x400] ;
[B------:R-:W-:-:S04] IMAD.WIDE.U32 R6, R0, R5, c[0x0][0x168] ;
[B--2---:R-:W-:-:S04] STG.E.128 [R6.64], R12 ;
[B------:R-:W-:-:S04] STG.E.128 [R6.64+0x400], R16 ;
[B------:R-:W-:-:S05] EXIT ;
`

func ldgstsRun(t *testing.T, src string) ([]uint32, []uint32, error) {
	r := rand.New(rand.NewSource(8))
	in := make([]uint32, 2*64*4)
	for i := range in {
		in[i] = r.Uint32()
	}
	m := NewMemory()
	ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", nil, len(in))
	_, err := Launch(asm(t, src), Config{StrictScoreboards: true, Block: [3]int{64}, SharedBytes: 2048, Memory: m, Params: params(ai, ao), Poison: true})
	return in, simWords(m.Bytes("out")), err
}

func TestSimLDGSTSPipeline(t *testing.T) {
	in, out, err := ldgstsRun(t, ldgstsSrc)
	if err != nil {
		t.Fatal(err)
	}
	for s := 0; s < 2; s++ {
		for th := 0; th < 64; th++ {
			for k := 0; k < 4; k++ {
				if got, want := out[256*s+4*th+k], in[256*s+4*((th+1)%64)+k]; got != want {
					t.Fatalf("stage %d thread %d word %d: %#x, want %#x", s, th, k, got, want)
				}
			}
		}
	}
}

type intCase struct {
	ops string
	ref func(a, b, c, d uint32) (uint32, uint32)
}

var intCases = []intCase{
	{"IADD3 R10, P0, R2, R3, RZ ;\nIADD3.X R11, R4, R5, RZ, P0, !PT", func(a, b, c, d uint32) (uint32, uint32) {
		s := (uint64(c)<<32 | uint64(a)) + (uint64(d)<<32 | uint64(b))
		return uint32(s), uint32(s >> 32)
	}},
	{"IADD3 R10, P0, R2, -R3, RZ ;\nIADD3.X R11, R4, ~R5, RZ, P0, !PT", func(a, b, c, d uint32) (uint32, uint32) {
		s := (uint64(c)<<32 | uint64(a)) - (uint64(d)<<32 | uint64(b))
		return uint32(s), uint32(s >> 32)
	}},
	{"IADD3 R10, R2, -R3, R4 ;\nIADD3 R11, R2, 0x7, -R5", func(a, b, c, d uint32) (uint32, uint32) { return a - b + c, a + 7 - d }},
	{"IMAD R10, R2, R3, R4 ;\nIMAD R11, R2, R3, -R5", func(a, b, c, d uint32) (uint32, uint32) { return a*b + c, a*b - d }},
	{"IMAD.HI.U32 R10, R2, R3, R4 ;\nIMAD.HI R11, R2, R3, RZ", func(a, b, c, d uint32) (uint32, uint32) {
		// the addend is the pair R4:R5, added to the 64-bit product
		return uint32((uint64(a)*uint64(b) + (uint64(d)<<32 | uint64(c))) >> 32), uint32(uint64(int64(int32(a))*int64(int32(b))) >> 32)
	}},
	{"IMAD.WIDE.U32 R10, R2, R3, R4", func(a, b, c, d uint32) (uint32, uint32) {
		s := uint64(a)*uint64(b) + (uint64(d)<<32 | uint64(c))
		return uint32(s), uint32(s >> 32)
	}},
	{"IMAD.WIDE R10, R2, R3, R4", func(a, b, c, d uint32) (uint32, uint32) {
		s := uint64(int64(int32(a))*int64(int32(b))) + (uint64(d)<<32 | uint64(c))
		return uint32(s), uint32(s >> 32)
	}},
	{"IMAD.MOV.U32 R10, RZ, RZ, R4 ;\nIMAD.SHL.U32 R11, R2, 0x8, RZ", func(a, b, c, d uint32) (uint32, uint32) { return c, a << 3 }},
	{"SHF.R.U64 R10, R2, 0x7, R4 ;\nSHF.L.U64.HI R11, R2, 0x9, R4", func(a, b, c, d uint32) (uint32, uint32) {
		v := uint64(c)<<32 | uint64(a)
		return uint32(v >> 7), uint32(v << 9 >> 32)
	}},
	{"SHF.R.S32.HI R10, RZ, 0x5, R2 ;\nSHF.R.U32.HI R11, RZ, 0x5, R2", func(a, b, c, d uint32) (uint32, uint32) {
		return uint32(int32(a) >> 5), a >> 5
	}},
	{"SHF.L.U32 R10, R2, R3, RZ ;\nSHF.R.S32.HI R11, RZ, R3, R2", func(a, b, c, d uint32) (uint32, uint32) {
		x := a << (b % 32)
		if b >= 32 {
			x = 0
		}
		n := b
		if n > 31 {
			n = 31
		}
		return x, uint32(int32(a) >> n)
	}},
	{"SHF.L.W.U32.HI R10, R2, R3, R4 ;\nSHF.R.W.U32 R11, R2, R3, R4", func(a, b, c, d uint32) (uint32, uint32) {
		v := uint64(c)<<32 | uint64(a)
		n := b % 64 & 31
		return uint32(v << n >> 32), uint32(v >> n)
	}},
	{"LOP3.LUT R10, R2, R3, R4, 0x96, !PT ;\nLOP3.LUT R11, R2, R3, R4, 0xe8, !PT", func(a, b, c, d uint32) (uint32, uint32) {
		return a ^ b ^ c, a&b | a&c | b&c
	}},
	{"LOP3.LUT R10, R2, R3, R4, 0x1, !PT ;\nLOP3.LUT R11, R2, R3, R4, 0xb4, !PT", func(a, b, c, d uint32) (uint32, uint32) {
		return ^(a | b | c), a ^ (b &^ c)
	}},
	{"LEA R10, P0, R2, R3, 0x3 ;\nLEA.HI.X R11, R2, R4, R5, 0x3, P0", func(a, b, c, d uint32) (uint32, uint32) {
		s := (uint64(c)<<32 | uint64(b)) + (uint64(d)<<32|uint64(a))<<3
		return uint32(s), uint32(s >> 32)
	}},
	{"ISETP.LT.AND P0, PT, R2, R3, PT ;\nISETP.GE.U32.AND P1, PT, R2, R3, PT ;\nSEL R10, R4, R5, P0 ;\nSEL R11, R4, R5, !P1", func(a, b, c, d uint32) (uint32, uint32) {
		x, y := d, d
		if int32(a) < int32(b) {
			x = c
		}
		if !(a >= b) {
			y = c
		}
		return x, y
	}},
	{"ISETP.GE.U32.AND P0, PT, R2, R3, PT ;\nISETP.GE.U32.AND.EX P0, PT, R4, R5, PT, P0 ;\nISETP.LT.AND P1, PT, R2, R3, PT ;\nISETP.NE.OR P1, P2, R4, R5, P1 ;\nSEL R10, R2, R3, P0 ;\nSEL R11, R2, R3, P2", func(a, b, c, d uint32) (uint32, uint32) {
		x, y := b, b
		if uint64(c)<<32|uint64(a) >= uint64(d)<<32|uint64(b) {
			x = a
		}
		p1 := int32(a) < int32(b)
		if (c == d) || p1 { // P2 = !(c != d) OR p1
			y = a
		}
		return x, y
	}},
	{"IMNMX R10, R2, R3, PT ;\nIMNMX.U32 R11, R2, R3, !PT", func(a, b, c, d uint32) (uint32, uint32) {
		x := b
		if int32(a) < int32(b) {
			x = a
		}
		y := b
		if a > b {
			y = a
		}
		return x, y
	}},
	{"PRMT R10, R2, R3, R4 ;\nPRMT R11, R2, 0x3244, RZ", func(a, b, c, d uint32) (uint32, uint32) {
		by := func(i uint32) uint32 {
			v := (uint64(c)<<32 | uint64(a)) >> (8 * (i & 7)) & 0xff
			if i&8 != 0 {
				if v&0x80 != 0 {
					return 0xff
				}
				return 0
			}
			return uint32(v)
		}
		var x uint32
		for k := 0; k < 4; k++ {
			x |= by(b>>(4*k)&15) << (8 * k)
		}
		return x, a & 0xffff0000
	}},
	{"I2FP.F32.S32 R10, R2 ;\nI2FP.F32.U32.RZ R11, R3", func(a, b, c, d uint32) (uint32, uint32) {
		return math.Float32bits(float32(int32(a))), i2f(uint64(b), false, false, rnZero)
	}},
	{"MOV R10, R2 ;\nMOV R11, 0x1234", func(a, b, c, d uint32) (uint32, uint32) { return a, 0x1234 }},
}

func TestSimIntegerOps(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	n := 128
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
	for _, tc := range intCases {
		src := `
[B------:R-:W0:-:S01] S2R R0, SR_TID.X ;
[B------:R-:W-:-:S02] MOV R7, 0x10 ;
[B0-----:R-:W-:-:S04] IMAD.WIDE R8, R0, R7, c[0x0][0x160] ;
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][0x118] ;
[B------:R-:W1:-:S04] LDG.E.128 R12, [R8.64] ;
[B-1----:R-:W-:-:S04] MOV R2, R12 ;
[B------:R-:W-:-:S04] MOV R3, R13 ;
[B------:R-:W-:-:S04] MOV R4, R14 ;
[B------:R-:W-:-:S04] MOV R5, R15 ;
[B------:R-:W-:-:S02] MOV R7, 0x8 ;
` + tc.ops + ` ;
[B------:R-:W-:-:S04] IMAD.WIDE R8, R0, R7, c[0x0][0x168] ;
[B------:R-:W-:-:S04] STG.E.64 [R8.64], R10 ;
[B------:R-:W-:-:S05] EXIT ;
`
		m := NewMemory()
		ai, ao := alloc(t, m, "in", in, 0), alloc(t, m, "out", nil, 2*n)
		if _, err := Launch(asm(t, src), Config{StrictScoreboards: true, Block: [3]int{n}, Memory: m, Params: params(ai, ao), Poison: true}); err != nil {
			t.Fatalf("%s: %v", tc.ops, err)
		}
		out := simWords(m.Bytes("out"))
		for i := 0; i < n; i++ {
			a, b, c, d := in[4*i], in[4*i+1], in[4*i+2], in[4*i+3]
			x, y := tc.ref(a, b, c, d)
			if out[2*i] != x || out[2*i+1] != y {
				t.Fatalf("%q (%#x %#x %#x %#x) = %#x %#x, want %#x %#x", tc.ops, a, b, c, d, out[2*i], out[2*i+1], x, y)
			}
		}
	}
}

func TestSimAtomics(t *testing.T) {
	src := faultPrologue + `
[B------:R-:W-:-:S02] MOV R6, 0x1 ;
[B------:R-:W-:-:S02] MOV R7, 0x3f800000 ;
[B------:R-:W-:-:S02] MOV R8, 0x3c003c00 ;
[B------:R-:W-:-:S02] MOV R12, c[0x0][0x168] ;
[B------:R-:W-:-:S02] MOV R13, c[0x0][0x16c] ;
[B------:R0:W-:-:S04] RED.E.ADD.S32.STRONG.GPU [R12.64], R6 ;
[B------:R0:W-:-:S04] RED.E.ADD.F32.FTZ.RN.STRONG.GPU [R12.64+0x4], R7 ;
[B------:R0:W-:-:S04] RED.E.ADD.F16x2.RN.STRONG.GPU [R12.64+0x8], R8 ;
[B------:R-:W1:-:S04] ATOMG.E.ADD.STRONG.GPU PT, R9, [R12.64+0xc], R6 ;
[B-1----:R-:W-:-:S04] STG.E [R2.64], R9 ;
[B------:R-:W-:-:S05] EXIT ;
`
	m := NewMemory()
	n := 256
	ab := alloc(t, m, "tickets", nil, 2*n)
	ac := alloc(t, m, "acc", make([]uint32, 4), 0)
	if _, err := Launch(asm(t, src), Config{StrictScoreboards: true, Grid: [3]int{2}, Block: [3]int{n / 2}, Memory: m, Params: params(ab, ac), Poison: true}); err != nil {
		t.Fatal(err)
	}
	acc := simWords(m.Bytes("acc"))
	if acc[0] != uint32(n) || acc[1] != math.Float32bits(float32(n)) || acc[2] != 0x5c005c00 || acc[3] != uint32(n) {
		t.Fatalf("accumulators %#x", acc)
	}
	seen := map[uint32]bool{}
	for _, v := range simWords(m.Bytes("tickets"))[:n/2] {
		seen[v] = true
	}
	if len(seen) != n/2 {
		t.Fatalf("ATOMG.ADD tickets not unique: %d", len(seen))
	}
	// CAS: swap only when the compare value matches
	cas := faultPrologue + `
[B------:R-:W-:-:S02] MOV R12, c[0x0][0x168] ;
[B------:R-:W-:-:S02] MOV R13, c[0x0][0x16c] ;
[B------:R-:W-:-:S02] MOV R6, RZ ;
[B------:R-:W-:-:S04] IADD3 R7, R0, 0x1, RZ ;
[B------:R-:W1:-:S04] ATOMG.E.CAS.STRONG.GPU PT, R9, [R12], R6, R7 ;
[B-1----:R-:W-:-:S04] STG.E [R2.64], R9 ;
[B------:R-:W-:-:S05] EXIT ;
`
	m = NewMemory()
	ab = alloc(t, m, "old", nil, 32)
	ac = alloc(t, m, "word", make([]uint32, 1), 0)
	if _, err := Launch(asm(t, cas), Config{StrictScoreboards: true, Block: [3]int{32}, Memory: m, Params: params(ab, ac), Poison: true}); err != nil {
		t.Fatal(err)
	}
	old := simWords(m.Bytes("old"))
	if w := simWords(m.Bytes("word"))[0]; w != 1 || old[0] != 0 || old[1] != 1 || old[31] != 1 {
		t.Fatalf("CAS: word %d, old %v", w, old)
	}
}

func TestSimBF16Widen(t *testing.T) {
	src := faultPrologue + `
[B------:R-:W1:-:S04] LDG.E R4, [R2.64] ;
[B-1----:R-:W-:-:S04] PRMT R6, R4, 0x1044, RZ ;
[B------:R-:W-:-:S04] PRMT R7, R4, 0x3244, RZ ;
[B------:R-:W-:-:S04] HADD2.F32 R8, -RZ, R4.H1_H1 ;
[B------:R-:W-:-:S04] FADD R6, R6, R7 ;
[B------:R-:W-:-:S04] STG.E [R2.64], R6 ;
[B------:R-:W-:-:S04] STG.E [R2.64+0x80], R8 ;
[B------:R-:W-:-:S05] EXIT ;
`
	in := make([]uint32, 64)
	r := rand.New(rand.NewSource(10))
	for i := 0; i < 32; i++ {
		in[i] = uint32(toHalf(r.NormFloat64(), 0, true)) | uint32(toHalf(r.NormFloat64(), 0, true))<<16
	}
	m := NewMemory()
	a := alloc(t, m, "v", in, 0)
	if _, err := Launch(asm(t, src), Config{StrictScoreboards: true, Block: [3]int{32}, Memory: m, Params: params(a), Poison: true}); err != nil {
		t.Fatal(err)
	}
	out := simWords(m.Bytes("v"))
	for i := 0; i < 32; i++ {
		lo, hi := math.Float32frombits(in[i]<<16), math.Float32frombits(in[i]&0xffff0000)
		if out[i] != math.Float32bits(lo+hi) {
			t.Fatalf("lane %d: %#x", i, out[i])
		}
		if want := math.Float32bits(float32(h16(uint16(in[i] >> 16)))); out[32+i] != want {
			t.Fatalf("HADD2.F32 lane %d: %#x, want %#x", i, out[32+i], want)
		}
	}
}
