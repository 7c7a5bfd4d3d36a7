package gen

import (
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/kernels/mma"
	"github.com/tcrt-go/tcrt/tile"
)

// The model tests run the kernel's algorithm in Go, with the kernel's own
// index formulas (copySlot, copyDst, ldsmAddr, the fragment layouts of
// ldmatrix and mma.m16n8k16): the copies into a swizzled stage with their
// zero-fill rule, the ldmatrix reads and the MMAs, over whole problems with
// ragged M, N and K. They check the data layout the PTX encodes, not the
// PTX text itself (no GPU or PTX interpreter runs it here).

type modelProb struct {
	M, N, K, lda, ldb int
	a, b              []uint16 // stored A and B (f16 bits)
}

// stored element of operand o at (mn, k) in global memory, or 0 past the
// extents (the kernel's zero-fill).
func (p *modelProb) load(c mma.Config, name string, mn, k, kEnd int) uint16 {
	switch name {
	case "A":
		if mn >= p.M || k >= kEnd {
			return 0
		}
		if c.TransA {
			return p.a[k*p.lda+mn]
		}
		return p.a[mn*p.lda+k]
	default:
		if mn >= p.N || k >= kEnd {
			return 0
		}
		if c.TransB {
			return p.b[mn*p.ldb+k]
		}
		return p.b[k*p.ldb+mn]
	}
}

// fillStage does the copies of every thread for the K tile at k0: each
// 16-byte chunk is 8 elements along the contiguous dimension, zero past the
// extent (the src-size rule).
func fillStage(t *testing.T, c mma.Config, p *modelProb, o operand, mn0, k0, kEnd int, stage []uint16) {
	g := c.Tile.Geometry()
	nt := g.Threads()
	seen := map[int]bool{}
	for th := 0; th < nt; th++ {
		for i := 0; i < o.copies(nt); i++ {
			row, ch := o.copySlot(th, i, nt)
			dst := o.copyDst(th, i, nt)
			if dst != swz(row, ch, o.l)+o.off {
				t.Fatalf("%s %s thread %d copy %d: dst %d, swizzled slot %d", c.Name(), o.name, th, i, dst, swz(row, ch, o.l)+o.off)
			}
			if seen[dst] {
				t.Fatalf("%s %s: two copies write shared offset %d", c.Name(), o.name, dst)
			}
			seen[dst] = true
			for e := 0; e < 8; e++ {
				var mn, k int
				if o.kContig {
					mn, k = mn0+row, k0+ch*8+e
				} else {
					mn, k = mn0+ch*8+e, k0+row
				}
				stage[dst/2+e] = p.load(c, o.name, mn, k, kEnd)
			}
		}
	}
	if len(seen) != o.r*o.l {
		t.Fatalf("%s %s: %d chunks written, tile has %d", c.Name(), o.name, len(seen), o.r*o.l)
	}
}

// ldmatrix returns the four registers (two halves each) lane receives from
// an x4 load whose matrix q rows lanes 8q..8q+7 address.
func ldmatrix(stage []uint16, addr [32]int, trans bool, lane int) [4][2]uint16 {
	var out [4][2]uint16
	for q := 0; q < 4; q++ {
		for h := 0; h < 2; h++ {
			var r, col int
			if trans {
				r, col = 2*(lane%4)+h, lane/4
			} else {
				r, col = lane/4, 2*(lane%4)+h
			}
			out[q][h] = stage[addr[8*q+r]/2+col]
		}
	}
	return out
}

// modelCTA computes the CTA tile at (m0, n0) over [kS, kE) and returns its
// TM x TN f32 accumulators as the fragments lay them out.
func modelCTA(t *testing.T, c mma.Config, p *modelProb, m0, n0, kS, kE int) []float32 {
	g := c.Tile.Geometry()
	oa, ob := operands(c)
	stage := make([]uint16, g.StageBytes()/2)
	acc := make([]float32, g.TM*g.TN)
	wtm, wtn := g.TM/g.WarpsM, g.TN/g.WarpsN
	f := tile.F16ToF32
	for k0 := kS; k0 < kE; k0 += mma.BK {
		for i := range stage {
			stage[i] = 0x7E00 // NaN: every read must hit a written slot
		}
		fillStage(t, c, p, oa, m0, k0, kE, stage)
		fillStage(t, c, p, ob, n0, k0, kE, stage)
		for warp := 0; warp < g.WarpsM*g.WarpsN; warp++ {
			wA, wB := (warp/g.WarpsN)*wtm, (warp%g.WarpsN)*wtn
			for kk := 0; kk < mma.BK/16; kk++ {
				af := make([][32][4][2]uint16, wtm/16)
				bf := make([][32][2][2]uint16, wtn/8)
				for j := range af {
					var addr [32]int
					for l := range addr {
						addr[l] = oa.ldsmAddr(l, wA, j, kk)
						if r, ch := oa.ldsm(l, wA, j, kk); addr[l] != swz(r, ch, oa.l)+oa.off {
							t.Fatalf("%s A ldsm lane %d: address %d, slot %d", c.Name(), l, addr[l], swz(r, ch, oa.l)+oa.off)
						}
					}
					for l := 0; l < 32; l++ {
						af[j][l] = ldmatrix(stage, addr, oa.trans(), l)
					}
				}
				for j := 0; j < wtn/16; j++ {
					var addr [32]int
					for l := range addr {
						addr[l] = ob.ldsmAddr(l, wB, j, kk)
						if r, ch := ob.ldsm(l, wB, j, kk); addr[l] != swz(r, ch, ob.l)+ob.off {
							t.Fatalf("%s B ldsm lane %d: address %d, slot %d", c.Name(), l, addr[l], swz(r, ch, ob.l)+ob.off)
						}
					}
					for l := 0; l < 32; l++ {
						r := ldmatrix(stage, addr, ob.trans(), l)
						bf[2*j][l] = [2][2]uint16{r[0], r[1]}
						bf[2*j+1][l] = [2][2]uint16{r[2], r[3]}
					}
				}
				// mma.m16n8k16: A[g][2t+h] in a0 (row g) / a1 (g+8) / a2 (k+8) / a3;
				// B[k=2t+h][n=g] in b0, k+8 in b1; C rows g, g+8, cols 2t, 2t+1.
				for i := range af {
					for j := range bf {
						var A [16][16]float32
						var B [16][8]float32
						for l := 0; l < 32; l++ {
							gq, tq := l/4, l%4
							for h := 0; h < 2; h++ {
								A[gq][2*tq+h] = f(af[i][l][0][h])
								A[gq+8][2*tq+h] = f(af[i][l][1][h])
								A[gq][2*tq+8+h] = f(af[i][l][2][h])
								A[gq+8][2*tq+8+h] = f(af[i][l][3][h])
								B[2*tq+h][gq] = f(bf[j][l][0][h])
								B[2*tq+8+h][gq] = f(bf[j][l][1][h])
							}
						}
						for r := 0; r < 16; r++ {
							for cc := 0; cc < 8; cc++ {
								s := float32(0)
								for k := 0; k < 16; k++ {
									s += A[r][k] * B[k][cc]
								}
								acc[(wA+i*16+r)*g.TN+wB+j*8+cc] += s
							}
						}
					}
				}
			}
		}
	}
	return acc
}

func TestModelMatMul(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 16))
	shapes := [][3]int{{1, 1, 1}, {7, 9, 13}, {129, 65, 100}, {64, 128, 64}, {200, 150, 129}}
	if testing.Short() {
		shapes = [][3]int{{7, 9, 13}, {129, 65, 100}}
	}
	for _, tl := range mma.Tiles() {
		for _, lay := range [4][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			c := mma.Config{Tile: tl, TransA: lay[0], TransB: lay[1]}
			g := tl.Geometry()
			for _, s := range shapes {
				M, N, K := s[0], s[1], s[2]
				p := &modelProb{M: M, N: N, K: K}
				ar, ac := M, K
				if c.TransA {
					ar, ac = K, M
				}
				br, bc := K, N
				if c.TransB {
					br, bc = N, K
				}
				p.lda, p.ldb = (ac+7)/8*8+8*rng.IntN(2), (bc+7)/8*8+8*rng.IntN(2)
				p.a, p.b = make([]uint16, ar*p.lda), make([]uint16, br*p.ldb)
				for i := range p.a {
					p.a[i] = tile.F32ToF16(float32(rng.IntN(9) - 4))
				}
				for i := range p.b {
					p.b[i] = tile.F32ToF16(float32(rng.IntN(9) - 4))
				}
				// split K in two chunks of a multiple of mma.BK when K allows
				chunks := [][2]int{{0, K}}
				if K > mma.BK {
					chunks = [][2]int{{0, mma.BK}, {mma.BK, K}}
				}
				for m0 := 0; m0 < M; m0 += g.TM {
					for n0 := 0; n0 < N; n0 += g.TN {
						sum := make([]float32, g.TM*g.TN)
						for _, ch := range chunks {
							for i, v := range modelCTA(t, c, p, m0, n0, ch[0], ch[1]) {
								sum[i] += v
							}
						}
						for i := m0; i < min(M, m0+g.TM); i++ {
							for j := n0; j < min(N, n0+g.TN); j++ {
								want := float32(0)
								for k := 0; k < K; k++ {
									want += tile.F16ToF32(p.load(c, "A", i, k, K)) * tile.F16ToF32(p.load(c, "B", j, k, K))
								}
								if got := sum[(i-m0)*g.TN+j-n0]; got != want {
									t.Fatalf("%s %v: D[%d][%d] = %v, want %v", c.Name(), s, i, j, got, want)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestBankConflicts checks every shared access phase of the kernel hits
// distinct banks: the 16-byte cp.async stores and ldmatrix row reads (8
// lanes a phase, 16 bytes each: distinct 16-byte bank groups mod 128
// bytes) and the epilogue's 8-byte accumulator stores (16 lanes a phase).
func TestBankConflicts(t *testing.T) {
	for _, c := range mma.Variants() {
		g := c.Tile.Geometry()
		nt := g.Threads()
		oa, ob := operands(c)
		for _, o := range []operand{oa, ob} {
			for i := 0; i < o.copies(nt); i++ {
				for ph := 0; ph < nt; ph += 8 {
					seen := map[int]bool{}
					for th := ph; th < ph+8; th++ {
						seen[o.copyDst(th, i, nt)%128/16] = true
					}
					if len(seen) != 8 {
						t.Fatalf("%s %s copy %d threads %d..: bank conflict", c.Name(), o.name, i, ph)
					}
				}
			}
			wt := g.TM / g.WarpsM
			if o.name == "B" {
				wt = g.TN / g.WarpsN
			}
			for w := 0; w < wt*4; w += wt {
				for j := 0; j < 4; j++ {
					for kk := 0; kk < mma.BK/16; kk++ {
						for q := 0; q < 4; q++ {
							seen := map[int]bool{}
							for l := 8 * q; l < 8*q+8; l++ {
								seen[o.ldsmAddr(l, w, j, kk)%128/16] = true
							}
							if len(seen) != 8 {
								t.Fatalf("%s %s ldmatrix w %d j %d kk %d matrix %d: bank conflict", c.Name(), o.name, w, j, kk, q)
							}
						}
					}
				}
			}
		}
		// epilogue: lane stores {c0, c1} at row g, column 2t (+ warp offsets)
		for half := 0; half < 2; half++ {
			seen := map[int]bool{}
			for l := 16 * half; l < 16*half+16; l++ {
				seen[((l/4)*g.EpiStride()+2*(l%4))*4%128/8] = true
			}
			if len(seen) != 16 {
				t.Fatalf("%s epilogue staging: bank conflict", c.Name())
			}
		}
	}
}

// f8ToF16 mirrors the kernels' float8 conversion of one word (four bytes)
// into two f16x2 words, with the same constants.
func f8ToF16(in tile.DType, x uint32) [2]uint32 {
	prmt := func(x uint32, sel uint32) uint32 { // b = 0
		var out uint32
		for i := 0; i < 4; i++ {
			n := (sel >> (4 * i)) & 7
			var byt uint32
			if n < 4 {
				byt = (x >> (8 * n)) & 0xFF
			}
			out |= byt << (8 * i)
		}
		return out
	}
	var w [2]uint32
	for k, sel := range []uint32{fp8Lo, fp8Hi} {
		v := prmt(x, sel)
		if in == tile.E4M3 {
			v = (v & fp8SignMask) | ((v & fp8BodyMask) >> 1)
			lo := tile.F16ToF32(uint16(v)) * 256
			hi := tile.F16ToF32(uint16(v>>16)) * 256
			v = uint32(tile.F32ToF16(lo)) | uint32(tile.F32ToF16(hi))<<16
		}
		w[k] = v
	}
	return w
}

// TestF8Conversion checks the conversion on every byte value in every
// lane against package tile's decoders: exact for all e5m2 values and all
// e4m3 values but NaN (0x7F, 0xFF), which the kernels turn into ±480.
func TestF8Conversion(t *testing.T) {
	for _, in := range []tile.DType{tile.E4M3, tile.E5M2} {
		for v := 0; v < 256; v++ {
			for lane := 0; lane < 4; lane++ {
				x := uint32(0x3C3C3C3C)&^(0xFF<<(8*lane)) | uint32(v)<<(8*lane)
				w := f8ToF16(in, x)
				h := uint16(w[lane/2] >> (16 * (lane % 2)))
				got := tile.F16ToF32(h)
				var want float32
				if in == tile.E4M3 {
					want = tile.E4M3ToF32(uint8(v))
					if v&0x7F == 0x7F {
						if got != 480 && got != -480 {
							t.Errorf("e4m3 NaN %#x: %v, want ±480", v, got)
						}
						continue
					}
				} else {
					want = tile.E5M2ToF32(uint8(v))
				}
				if got != want && !(got != got && want != want) {
					t.Errorf("%v %#x lane %d: %v, want %v", in, v, lane, got, want)
				}
			}
		}
	}
}
