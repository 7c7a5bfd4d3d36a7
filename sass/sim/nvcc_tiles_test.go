package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/sass/internal/corpus"
)

// The nvcc corpus's tiles.cu kernels against Go references, bit for bit,
// with poisoning on: shared-memory tiles read before a barrier
// (sgemm_tiled), bf16 WMMA through shared memory (wmma_bf16), a guarded
// load beside a reciprocal into the same register and two divisions
// (guarded_div), bf16x2 arithmetic with an immediate pack (bf16_affine)
// and a sign-extended 32-bit index (gather_sx).

// smallInts returns n floats that are small integers, so that every sum
// and product of the GEMMs is exact whatever order nvcc sums in.
func smallInts(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.IntN(9) - 4)
	}
	return v
}

func f32Words(v []float32) []uint32 {
	w := make([]uint32, len(v))
	for i, x := range v {
		w[i] = math.Float32bits(x)
	}
	return w
}

// TestSimNVCCTilesGEMM: sgemm_tiled (64x64 tiles, 4x4 per thread, the next
// k-slice prefetched into registers) and wmma_bf16 (four warps, 16x16
// tiles of C) on shapes of one and several tiles.
func TestSimNVCCTilesGEMM(t *testing.T) { corpus.ForSMs(t, simNVCCTilesGEMM) }

func simNVCCTilesGEMM(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(90, 91))
	ref := func(a, b []float32, m, n, k int) []uint32 {
		c := make([]uint32, m*n)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var s float32
				for p := 0; p < k; p++ {
					s += a[i*k+p] * b[p*n+j]
				}
				c[i*n+j] = math.Float32bits(s)
			}
		}
		return c
	}
	for _, sh := range [][3]int{{64, 64, 16}, {128, 64, 48}} {
		m, n, k := sh[0], sh[1], sh[2]
		a, b := smallInts(r, m*k), smallInts(r, k*n)
		mem := NewMemory()
		pa, pb, pc := alloc(t, mem, "a", f32Words(a), 0), alloc(t, mem, "b", f32Words(b), 0), alloc(t, mem, "c", poisonWords(m*n), 0)
		launchNVCC(t, "tiles", "sgemm_tiled", sm, Config{Grid: [3]int{n / 64, m / 64}, Block: [3]int{16, 16}, Memory: mem, SharedBytes: 2 * 16 * (68 + 64) * 4,
			Params: params(pa, pb, pc, uint32(m), uint32(n), uint32(k)), Poison: true})
		want, got := ref(a, b, m, n, k), simWords(mem.Bytes("c"))
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("sgemm_tiled %v: c[%d] = %#x, want %#x", sh, i, got[i], want[i])
			}
		}
	}
	bf := func(v []float32) []uint32 {
		// bf16 pairs: small integers are exact in bfloat16
		w := make([]uint32, (len(v)+1)/2)
		for i, x := range v {
			w[i/2] |= math.Float32bits(x) >> 16 << (16 * (i % 2))
		}
		return w
	}
	for _, sh := range [][3]int{{64, 16, 16}, {128, 32, 48}} {
		m, n, k := sh[0], sh[1], sh[2]
		a, b := smallInts(r, m*k), smallInts(r, k*n)
		mem := NewMemory()
		pa, pb, pc := alloc(t, mem, "a", bf(a), 0), alloc(t, mem, "b", bf(b), 0), alloc(t, mem, "c", poisonWords(m*n), 0)
		launchNVCC(t, "tiles", "wmma_bf16", sm, Config{Grid: [3]int{n / 16, m / 64}, Block: [3]int{128}, Memory: mem, SharedBytes: (64 + 16) * 24 * 2,
			Params: params(pa, pb, pc, uint32(m), uint32(n), uint32(k)), Poison: true})
		want, got := ref(a, b, m, n, k), simWords(mem.Bytes("c"))
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("wmma_bf16 %v: c[%d] = %#x, want %#x", sh, i, got[i], want[i])
			}
		}
	}
}

// TestSimNVCCTilesScalar: guarded_div, bf16_affine and gather_sx on sizes
// that are no multiple of the block.
func TestSimNVCCTilesScalar(t *testing.T) { corpus.ForSMs(t, simNVCCTilesScalar) }

func simNVCCTilesScalar(t *testing.T, sm int) {
	r := rand.New(rand.NewPCG(92, 93))
	for _, n := range []int{1, 7, 129, 1000} {
		grid := Config{Grid: [3]int{(n + 127) / 128}, Block: [3]int{128}, Poison: true}
		p, x, d, e := make([]uint32, n), make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range p {
			p[i] = uint32(r.IntN(2))
			x[i] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(40)-20)))
			d[i] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(40)-20)))
			e[i] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(40)-20)))
		}
		mem := NewMemory()
		cfg := grid
		cfg.Memory = mem
		cfg.Params = params(alloc(t, mem, "p", p, 0), alloc(t, mem, "x", f32Words(x), 0), alloc(t, mem, "d", f32Words(d), 0),
			alloc(t, mem, "e", f32Words(e), 0), alloc(t, mem, "y", poisonWords(n+32), 0), uint32(n))
		launchNVCC(t, "tiles", "guarded_div", sm, cfg)
		y := simWords(mem.Bytes("y"))
		for i := 0; i < n; i++ {
			v := 1 / d[i]
			if p[i] != 0 {
				v = x[i]
			}
			if want := math.Float32bits(v/e[i] + x[i]/d[i]); y[i] != want {
				t.Fatalf("guarded_div n=%d: y[%d] = %#x, want %#x", n, i, y[i], want)
			}
		}
		checkPoison(t, fmt.Sprint("guarded_div n=", n), y, n)

		// bf16_affine: max(x*1 + 1, 0) per bfloat16 half: x + 1 is exact in
		// binary32 for x of 8 significant bits within 2^±10 of 1, then
		// rounded once to bfloat16 (to nearest, ties to even)
		xb := make([]uint32, n)
		for i := range xb {
			for h := 0; h < 2; h++ {
				v := float32(r.IntN(512)-256) * float32(math.Pow(2, float64(r.IntN(12)-10)))
				xb[i] |= math.Float32bits(v) >> 16 << (16 * h)
			}
		}
		mem = NewMemory()
		cfg = grid
		cfg.Memory = mem
		cfg.Params = params(alloc(t, mem, "x", xb, 0), alloc(t, mem, "y", poisonWords(n+32), 0), uint32(n))
		launchNVCC(t, "tiles", "bf16_affine", sm, cfg)
		y = simWords(mem.Bytes("y"))
		for i := 0; i < n; i++ {
			var want uint32
			for h := 0; h < 2; h++ {
				v := math.Float32frombits(xb[i]>>(16*h)<<16) + 1
				if v <= 0 {
					v = 0
				}
				b := math.Float32bits(v)
				want |= (b + 0x7fff + b>>16&1) >> 16 << (16 * h)
			}
			if y[i] != want {
				t.Fatalf("bf16_affine n=%d: y[%d] = %#x on %#x, want %#x", n, i, y[i], xb[i], want)
			}
		}
		checkPoison(t, fmt.Sprint("bf16_affine n=", n), y, n)

		// gather_sx: y[i] = x[idx[i] + base] + x[blockIdx.x*base - 7], x
		// passed 64 words into its buffer so that negative indices stay
		// inside it
		const pad = 64
		base := int32(r.IntN(5)) - 2
		xs, idx := make([]uint32, n+2*pad), make([]uint32, n)
		for i := range xs {
			xs[i] = math.Float32bits(float32(r.IntN(1000)))
		}
		for i := range idx {
			idx[i] = uint32(int32(r.IntN(n+2*pad)-pad) - base)
		}
		mem = NewMemory()
		cfg = grid
		cfg.Memory = mem
		ax := alloc(t, mem, "x", xs, 0)
		cfg.Params = params(ax+4*pad, alloc(t, mem, "idx", idx, 0), alloc(t, mem, "y", poisonWords(n+32), 0), uint32(n), uint32(base))
		launchNVCC(t, "tiles", "gather_sx", sm, cfg)
		y = simWords(mem.Bytes("y"))
		at := func(j int32) float32 { return math.Float32frombits(xs[pad+int(j)]) }
		for i := 0; i < n; i++ {
			want := math.Float32bits(at(int32(idx[i])+base) + at(int32(i/128)*base-7))
			if y[i] != want {
				t.Fatalf("gather_sx n=%d base %d: y[%d] = %#x, want %#x", n, base, i, y[i], want)
			}
		}
		checkPoison(t, fmt.Sprint("gather_sx n=", n), y, n)
	}
}
