package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/tile"

	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// The gemm corpus's tensor-core kernels (mma_tf32, mma_f16acc, mma_s8)
// and flash_attn, against Go references that follow the PTX ISA's
// fragment layouts; they agree with the simulator (mma_tc.go), not yet
// checked on hardware.

// exactVal is a random k/8, |k| <= 8: binary16, bf16 and tf32 hold it,
// and products and short sums of such values are exact in binary32 (and
// in binary16 up to 2^10 multiples of 1/64), so an MMA's result does not
// depend on its order of additions.
func exactVal(r *rand.Rand) float32 { return float32(r.IntN(17)-8) / 8 }

// TestSimPtxasMMATF32 runs ptxas's mma_tf32 kernel (m16n8k8 with tf32
// inputs, C = 0) on exact values. Bit for bit against Go.
func TestSimPtxasMMATF32(t *testing.T) { corpus.ForSMs(t, simPtxasMMATF32) }

func simPtxasMMATF32(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(100, 101))
	var a [16][8]float32
	var b [8][8]float32
	fa, fb := make([]uint32, 4*32), make([]uint32, 2*32)
	for i := range a {
		for k := range a[i] {
			a[i][k] = exactVal(r)
		}
	}
	for k := range b {
		for j := range b[k] {
			b[k][j] = exactVal(r)
		}
	}
	for l := 0; l < 32; l++ {
		g, q := l/4, l%4
		for j := 0; j < 4; j++ {
			fa[4*l+j] = math.Float32bits(a[g+8*(j%2)][q+4*(j/2)])
		}
		fb[2*l], fb[2*l+1] = math.Float32bits(b[q][g]), math.Float32bits(b[q+4][g])
	}
	m := NewMemory()
	aa, ab, ad := alloc(t, m, "a", fa, 0), alloc(t, m, "b", fb, 0), alloc(t, m, "d", poisonWords(4*32), 0)
	launchCorpus(t, "gemm", "mma_tf32", sm, Config{Block: [3]int{32}, Memory: m, Params: params(aa, ab, ad), Poison: true})
	out := simWords(m.Bytes("d"))
	for l := 0; l < 32; l++ {
		for j := 0; j < 4; j++ {
			i, c := mmaFragD(l, j)
			var s float32
			for k := 0; k < 8; k++ {
				s += a[i][k] * b[k][c]
			}
			if got := math.Float32frombits(out[4*l+j]); got != s {
				t.Fatalf("D[%d][%d] = %v, want %v", i, c, got, s)
			}
		}
	}
}

// TestSimPtxasMMAF16Acc runs ptxas's mma_f16acc kernel: an m16n8k16 MMA
// with binary16 accumulators (C = 0), then an m16n8k8 one on the first
// half of the same fragments accumulating onto it; exact values, so the
// binary16 results are exact. Bit for bit against Go.
func TestSimPtxasMMAF16Acc(t *testing.T) { corpus.ForSMs(t, simPtxasMMAF16Acc) }

func simPtxasMMAF16Acc(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(102, 103))
	a, b := make([]uint16, 16*16), make([]uint16, 16*8)
	for i := range a {
		a[i] = tile.F32ToF16(exactVal(r))
	}
	for i := range b {
		b[i] = tile.F32ToF16(exactVal(r))
	}
	m := NewMemory()
	aa, ab, ad := alloc(t, m, "a", mmaFragA(a), 0), alloc(t, m, "b", mmaFragB(b), 0), alloc(t, m, "d", poisonWords(2*32), 0)
	launchCorpus(t, "gemm", "mma_f16acc", sm, Config{Block: [3]int{32}, Memory: m, Params: params(aa, ab, ad), Poison: true})
	out := simWords(m.Bytes("d"))
	for l := 0; l < 32; l++ {
		for j := 0; j < 4; j++ {
			i, c := mmaFragD(l, j)
			var s1, s2 float32
			for k := 0; k < 16; k++ {
				s1 += tile.F16ToF32(a[i*16+k]) * tile.F16ToF32(b[k*8+c])
			}
			for k := 0; k < 8; k++ {
				s2 += tile.F16ToF32(a[i*16+k]) * tile.F16ToF32(b[k*8+c])
			}
			want := tile.F32ToF16(s1 + s2)
			if got := uint16(out[2*l+j/2] >> (16 * (j % 2))); got != want {
				t.Fatalf("D[%d][%d] = %#x, want %#x", i, c, got, want)
			}
		}
	}
}

// TestSimPtxasMMAS8 runs ptxas's mma_s8 kernel: an m16n8k32 s8 MMA onto
// C = 7, then an m16n8k16 u8 MMA (satfinite) of the first half of the
// same fragments, read as unsigned bytes, onto it. Bit for bit against Go.
func TestSimPtxasMMAS8(t *testing.T) { corpus.ForSMs(t, simPtxasMMAS8) }

func simPtxasMMAS8(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(104, 105))
	var a [16][32]uint8
	var b [32][8]uint8
	fa, fb := make([]uint32, 4*32), make([]uint32, 2*32)
	for i := range a {
		for k := range a[i] {
			a[i][k] = uint8(r.Uint32())
		}
	}
	for k := range b {
		for j := range b[k] {
			b[k][j] = uint8(r.Uint32())
		}
	}
	for l := 0; l < 32; l++ {
		g, q := l/4, l%4
		for j := 0; j < 4; j++ {
			row, col := g+8*(j%2), 4*q+16*(j/2)
			for e := 0; e < 4; e++ {
				fa[4*l+j] |= uint32(a[row][col+e]) << (8 * e)
			}
		}
		for j := 0; j < 2; j++ {
			for e := 0; e < 4; e++ {
				fb[2*l+j] |= uint32(b[4*q+16*j+e][g]) << (8 * e)
			}
		}
	}
	m := NewMemory()
	aa, ab, ad := alloc(t, m, "a", fa, 0), alloc(t, m, "b", fb, 0), alloc(t, m, "d", poisonWords(4*32), 0)
	launchCorpus(t, "gemm", "mma_s8", sm, Config{Block: [3]int{32}, Memory: m, Params: params(aa, ab, ad), Poison: true})
	out := simWords(m.Bytes("d"))
	for l := 0; l < 32; l++ {
		for j := 0; j < 4; j++ {
			i, c := mmaFragD(l, j)
			s := int64(7)
			for k := 0; k < 32; k++ {
				s += int64(int8(a[i][k])) * int64(int8(b[k][c]))
			}
			for k := 0; k < 16; k++ {
				s += int64(a[i][k]) * int64(b[k][c])
			}
			if got := int32(out[4*l+j]); int64(got) != s {
				t.Fatalf("D[%d][%d] = %d, want %d", i, c, got, s)
			}
		}
	}
}

// TestSimPtxasFlashAttn runs ptxas's flash_attn kernel: one query row of
// four per thread over n keys and values with an online max and sum in
// base 2 (MUFU.EX2), then IEEE, full-range and approximate divisions;
// n of 0 (0/0: NaN), 1, 7 and 129, blocks of 32 and a ragged 7. Compared
// with Go's binary64 attention within 1e-5 of the largest |v|.
func TestSimPtxasFlashAttn(t *testing.T) { corpus.ForSMs(t, simPtxasFlashAttn) }

func simPtxasFlashAttn(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(106, 107))
	for _, c := range []struct{ n, grid, block int }{{0, 1, 7}, {1, 1, 32}, {7, 2, 7}, {129, 2, 32}} {
		threads := c.grid * c.block
		q, k, v := make([]uint32, 4*threads), make([]uint32, 4*c.n+4), make([]uint32, 4*c.n+4)
		rf := func() uint32 { return math.Float32bits(float32(r.NormFloat64())) }
		for i := range q {
			q[i] = rf()
		}
		for i := range k {
			k[i], v[i] = rf(), rf()
		}
		scale := float32(0.5 * math.Log2E)
		m := NewMemory()
		aq, ak, av := alloc(t, m, "q", q, 0), alloc(t, m, "k", k, 0), alloc(t, m, "v", v, 0)
		ao := alloc(t, m, "o", poisonWords(4*threads+4), 0)
		launchCorpus(t, "attn", "flash_attn", sm, Config{Grid: [3]int{c.grid}, Block: [3]int{c.block}, Memory: m,
			Params: params(aq, ak, av, ao, uint32(c.n), math.Float32bits(scale)), Poison: true})
		out := simWords(m.Bytes("o"))
		f := func(b uint32) float64 { return float64(math.Float32frombits(b)) }
		vmax := 0.0
		for _, b := range v[:4*c.n] {
			vmax = max(vmax, math.Abs(f(b)))
		}
		for th := 0; th < threads; th++ {
			s := make([]float64, c.n)
			mx := math.Inf(-1)
			for j := range s {
				for e := 0; e < 4; e++ {
					s[j] += f(q[4*th+e]) * f(k[4*j+e])
				}
				s[j] *= float64(scale)
				mx = max(mx, s[j])
			}
			var sum float64
			var o [4]float64
			for j := range s {
				p := math.Exp2(s[j] - mx)
				sum += p
				for e := range o {
					o[e] += p * f(v[4*j+e])
				}
			}
			for e := range o {
				got := f(out[4*th+e])
				if c.n == 0 {
					if !math.IsNaN(got) {
						t.Fatalf("n=0 thread %d: o[%d] = %g, want NaN", th, e, got)
					}
					continue
				}
				if want := o[e] / sum; !(math.Abs(got-want) <= 1e-5*vmax) {
					t.Fatalf("n=%d thread %d: o[%d] = %g, want %g", c.n, th, e, got, want)
				}
			}
		}
		checkPoison(t, fmt.Sprint("flash_attn n=", c.n), out, 4*threads)
	}
}
