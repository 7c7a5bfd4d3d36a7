package gen

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/kernels/mma"
	"github.com/tcrt-go/tcrt/tile"
)

// attnProb is one sequence batch in the kernel's strided layout.
type attnProb struct {
	nq, nk, hq, hkv, d int
	q, k, v            []uint16 // [b][s][h][d], dense
	scale, softcap     float32
	wl, wr             int
	batch              int
}

func (p *attnProb) at(x []uint16, heads, b, s, h, c, seq int) uint16 {
	return x[((b*seq+s)*heads+h)*p.d+c]
}

// refAttn is the float64 reference of one row (fallback.AttentionRef's
// rule): O and the natural LSE.
func (p *attnProb) refAttn(b, h, i int) ([]float64, float64) {
	g := h / (p.hq / p.hkv)
	pos := i + p.nk - p.nq
	f := func(u uint16) float64 { return float64(tile.F16ToF32(u)) }
	var logits []float64
	var keys []int
	mx := math.Inf(-1)
	for j := 0; j < p.nk; j++ {
		if (p.wl >= 0 && j < pos-p.wl) || (p.wr >= 0 && j > pos+p.wr) {
			continue
		}
		s := 0.0
		for c := 0; c < p.d; c++ {
			s += f(p.at(p.q, p.hq, b, i, h, c, p.nq)) * f(p.at(p.k, p.hkv, b, j, g, c, p.nk))
		}
		s *= float64(p.scale)
		if p.softcap > 0 {
			s = float64(p.softcap) * math.Tanh(s/float64(p.softcap))
		}
		logits, keys = append(logits, s), append(keys, j)
		mx = math.Max(mx, s)
	}
	o := make([]float64, p.d)
	sum := 0.0
	for n, s := range logits {
		w := math.Exp(s - mx)
		sum += w
		for c := range o {
			o[c] += w * f(p.at(p.v, p.hkv, b, keys[n], g, c, p.nk))
		}
	}
	if sum == 0 {
		return o, math.Inf(-1)
	}
	for c := range o {
		o[c] /= sum
	}
	return o, mx + math.Log(sum)
}

// modelAttnCTA runs the kernel's algorithm for CTA (qb, h, b): the Q tile
// and K/V blocks copied with the kernel's swizzled destinations, fragments
// read with its ldmatrix addresses, S and P·V by m16n8k16 fragments, the
// online base-2 softmax with P rounded to f16, per-thread partial sums
// reduced at the end. It returns the rows' O and LSE.
func modelAttnCTA(t *testing.T, c mma.AttnConfig, p *attnProb, qb, h, b, kLo, kHi int) ([][]float32, []float32) {
	tq, tk, tv, _ := attnTiles(c)
	bn := c.BN()
	g := h / (p.hq / p.hkv)
	smem := make([]uint16, c.SharedBytes()/2)
	fill := func(tr tileRows, src func(row, col int) uint16) {
		seen := map[int]bool{}
		for th := 0; th < mma.AttnThreads; th++ {
			for i := 0; i < tr.rows*tr.l/mma.AttnThreads; i++ {
				row, ch, off := tr.copyDst(th, i, mma.AttnThreads)
				if seen[off] {
					t.Fatalf("%s: two copies to %d", c.Name(), off)
				}
				seen[off] = true
				for e := 0; e < 8; e++ {
					smem[off/2+e] = src(row, ch*8+e)
				}
			}
		}
	}
	i0 := qb * mma.AttnBM
	fill(tq, func(r, col int) uint16 {
		if i0+r >= p.nq {
			return 0
		}
		return p.at(p.q, p.hq, b, i0+r, h, col, p.nq)
	})
	pos0 := i0 + p.nk - p.nq
	posL := min(i0+mma.AttnBM-1, p.nq-1) + p.nk - p.nq
	lo, hi := 0, p.nk
	if p.wl >= 0 {
		lo = max(0, pos0-p.wl)
	}
	if p.wr >= 0 {
		hi = min(p.nk, posL+p.wr+1)
	}
	lo, hi = max(lo, kLo), min(hi, kHi) // the split's range (paged kernel)
	kvS := lo / bn * bn
	f := tile.F16ToF32
	outO := make([][]float32, mma.AttnBM)
	outL := make([]float32, mma.AttnBM)
	for warp := 0; warp < 4; warp++ {
		// per lane state: rows g, g+8
		var m, l [32][2]float32
		o := make([][32][4]float32, c.D/8)
		for ln := range m {
			m[ln] = [2]float32{float32(math.Inf(-1)), float32(math.Inf(-1))}
		}
		for kv0 := kvS; kv0 < hi; kv0 += bn {
			fill(tk, func(r, col int) uint16 {
				if kv0+r >= p.nk {
					return 0
				}
				return p.at(p.k, p.hkv, b, kv0+r, g, col, p.nk)
			})
			fill(tv, func(r, col int) uint16 {
				if kv0+r >= p.nk {
					return 0
				}
				return p.at(p.v, p.hkv, b, kv0+r, g, col, p.nk)
			})
			s := make([][32][4]float32, bn/8)
			mma := func(acc *[32][4]float32, a [32][4][2]uint16, b0, b1 [32][2]uint16) {
				var A [16][16]float32
				var B [16][8]float32
				for ln := 0; ln < 32; ln++ {
					gq, tq := ln/4, ln%4
					for hh := 0; hh < 2; hh++ {
						A[gq][2*tq+hh], A[gq+8][2*tq+hh] = f(a[ln][0][hh]), f(a[ln][1][hh])
						A[gq][2*tq+8+hh], A[gq+8][2*tq+8+hh] = f(a[ln][2][hh]), f(a[ln][3][hh])
						B[2*tq+hh][gq], B[2*tq+8+hh][gq] = f(b0[ln][hh]), f(b1[ln][hh])
					}
				}
				for ln := 0; ln < 32; ln++ {
					gq, tq := ln/4, ln%4
					for k := 0; k < 4; k++ {
						r, cc := gq+8*(k/2), 2*tq+k%2
						var x float32
						for kk := 0; kk < 16; kk++ {
							x += A[r][kk] * B[kk][cc]
						}
						acc[ln][k] += x
					}
				}
			}
			load := func(tr tileRows, kind byte, x, y int, trans bool) [32][4][2]uint16 {
				var addr [32]int
				for ln := range addr {
					addr[ln] = tr.attnLdsm(kind, ln, warp*16, x, y)
				}
				var out [32][4][2]uint16
				for ln := range out {
					out[ln] = ldmatrix(smem, addr, trans, ln)
				}
				return out
			}
			split := func(r [32][4][2]uint16) (b0, b1, b2, b3 [32][2]uint16) {
				for ln := range r {
					b0[ln], b1[ln], b2[ln], b3[ln] = r[ln][0], r[ln][1], r[ln][2], r[ln][3]
				}
				return
			}
			for kk := 0; kk < c.D/16; kk++ {
				qa := load(tq, 'q', kk, 0, false)
				for y := 0; y < bn/16; y++ {
					b0, b1, b2, b3 := split(load(tk, 'k', kk, y, false))
					mma(&s[2*y], qa, b0, b1)
					mma(&s[2*y+1], qa, b2, b3)
				}
			}
			for ln := 0; ln < 32; ln++ {
				gq, t4 := ln/4, ln%4
				var mx [2]float32
				mx[0], mx[1] = float32(math.Inf(-1)), float32(math.Inf(-1))
				for n := range s {
					for k := 0; k < 4; k++ {
						r := k / 2
						i := i0 + warp*16 + gq + 8*r
						pos := i + p.nk - p.nq
						j := kv0 + 8*n + 2*t4 + k%2
						x := s[n][ln][k] * p.scale
						if p.softcap > 0 {
							x = p.softcap * float32(math.Tanh(float64(x/p.softcap)))
						}
						x *= math.Log2E
						if (p.wl >= 0 && j < pos-p.wl) || (p.wr >= 0 && j > pos+p.wr) || j >= p.nk || j < lo || j >= hi {
							x = float32(math.Inf(-1))
						}
						s[n][ln][k] = x
						mx[r] = max(mx[r], x)
					}
				}
				// the quad's reduction: the model takes the max over the 4 lanes below
				_ = mx
			}
			for ln := 0; ln < 32; ln++ {
				for r := 0; r < 2; r++ {
					mx := float32(math.Inf(-1))
					for q := ln &^ 3; q < ln&^3+4; q++ {
						for n := range s {
							mx = max(mx, s[n][q][2*r], s[n][q][2*r+1])
						}
					}
					mn := max(m[ln][r], mx)
					mu := mn
					if math.IsInf(float64(mn), -1) {
						mu = 0
					}
					al := float32(math.Exp2(float64(m[ln][r] - mu)))
					m[ln][r] = mn
					l[ln][r] *= al
					for n := range o {
						o[n][ln][2*r] *= al
						o[n][ln][2*r+1] *= al
					}
					_ = mu
				}
			}
			// exponentiate (after every lane's max is known)
			for ln := 0; ln < 32; ln++ {
				for n := range s {
					for k := 0; k < 4; k++ {
						mu := m[ln][k/2]
						if math.IsInf(float64(mu), -1) {
							mu = 0
						}
						s[n][ln][k] = float32(math.Exp2(float64(s[n][ln][k] - mu)))
						l[ln][k/2] += s[n][ln][k]
					}
				}
			}
			for y := 0; y < bn/16; y++ {
				var a [32][4][2]uint16
				for ln := 0; ln < 32; ln++ {
					for hh := 0; hh < 2; hh++ {
						a[ln][0][hh] = tile.F32ToF16(s[2*y][ln][hh])
						a[ln][1][hh] = tile.F32ToF16(s[2*y][ln][2+hh])
						a[ln][2][hh] = tile.F32ToF16(s[2*y+1][ln][hh])
						a[ln][3][hh] = tile.F32ToF16(s[2*y+1][ln][2+hh])
					}
				}
				for x := 0; x < c.D/16; x++ {
					b0, b1, b2, b3 := split(load(tv, 'v', x, y, true))
					mma(&o[2*x], a, b0, b1)
					mma(&o[2*x+1], a, b2, b3)
				}
			}
		}
		for ln := 0; ln < 32; ln++ {
			gq, t4 := ln/4, ln%4
			for r := 0; r < 2; r++ {
				sum := float32(0)
				for q := ln &^ 3; q < ln&^3+4; q++ {
					sum += l[q][r]
				}
				row := warp*16 + gq + 8*r
				if outO[row] == nil {
					outO[row] = make([]float32, c.D)
				}
				inv := float32(0)
				if sum > 0 {
					inv = 1 / sum
				}
				for n := range o {
					outO[row][8*n+2*t4] = o[n][ln][2*r] * inv
					outO[row][8*n+2*t4+1] = o[n][ln][2*r+1] * inv
				}
				outL[row] = float32(math.Inf(-1))
				if sum > 0 {
					outL[row] = (m[ln][r] + float32(math.Log2(float64(sum)))) * math.Ln2
				}
			}
		}
	}
	return outO, outL
}

func TestModelAttention(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 2))
	type cs struct {
		d, nq, nk, hq, hkv, wl, wr int
		cap                        float32
	}
	cases := []cs{
		{64, 7, 100, 2, 1, -1, 0, 0},   // causal, GQA, ragged
		{128, 70, 70, 1, 1, -1, -1, 0}, // full
		{64, 65, 130, 4, 2, 20, 0, 30}, // sliding window + soft-cap
		{256, 3, 40, 2, 2, -1, 0, 0},   // D 256 (BN 32)
		{64, 1, 1, 1, 1, -1, 0, 0},     // one key
		{64, 5, 3, 1, 1, -1, 0, 0},     // rows that see no key
	}
	if testing.Short() {
		cases = cases[:3]
	}
	for _, cc := range cases {
		c := mma.AttnConfig{D: cc.d, In: tile.F16}
		p := &attnProb{nq: cc.nq, nk: cc.nk, hq: cc.hq, hkv: cc.hkv, d: cc.d, scale: 1 / float32(math.Sqrt(float64(cc.d))),
			softcap: cc.cap, wl: cc.wl, wr: cc.wr, batch: 1}
		gen := func(n int) []uint16 {
			x := make([]uint16, n)
			for i := range x {
				x[i] = tile.F32ToF16(float32(rng.NormFloat64()))
			}
			return x
		}
		p.q, p.k, p.v = gen(p.nq*p.hq*p.d), gen(p.nk*p.hkv*p.d), gen(p.nk*p.hkv*p.d)
		for h := 0; h < p.hq; h++ {
			for qb := 0; qb*mma.AttnBM < p.nq; qb++ {
				o, lse := modelAttnCTA(t, c, p, qb, h, 0, 0, p.nk)
				for r := 0; r < mma.AttnBM && qb*mma.AttnBM+r < p.nq; r++ {
					i := qb*mma.AttnBM + r
					want, wl := p.refAttn(0, h, i)
					if math.IsInf(wl, -1) != math.IsInf(float64(lse[r]), -1) || (!math.IsInf(wl, -1) && math.Abs(wl-float64(lse[r])) > 1e-3) {
						t.Fatalf("%+v h %d row %d: LSE %v, want %v", cc, h, i, lse[r], wl)
					}
					for d := range want {
						if math.Abs(want[d]-float64(o[r][d])) > 1e-2 {
							t.Fatalf("%+v h %d row %d d %d: %v, want %v", cc, h, i, d, o[r][d], want[d])
						}
					}
				}
			}
		}
	}
}

// TestAttnBankConflicts checks the attention tiles' copies and ldmatrix
// reads hit distinct 16-byte bank groups in every 8-lane phase.
func TestAttnBankConflicts(t *testing.T) {
	for _, c := range mma.AttnVariants() {
		tq, tk, tv, _ := attnTiles(c)
		for _, tr := range []tileRows{tq, tk, tv} {
			for i := 0; i < tr.rows*tr.l/mma.AttnThreads; i++ {
				for ph := 0; ph < mma.AttnThreads; ph += 8 {
					seen := map[int]bool{}
					for th := ph; th < ph+8; th++ {
						_, _, off := tr.copyDst(th, i, mma.AttnThreads)
						seen[off%128/16] = true
					}
					if len(seen) != 8 {
						t.Fatalf("%s copy %d: bank conflict", c.Name(), i)
					}
				}
			}
		}
		for _, k := range []struct {
			tr   tileRows
			kind byte
			nx   int
			ny   int
		}{{tq, 'q', c.D / 16, 1}, {tk, 'k', c.D / 16, c.BN() / 16}, {tv, 'v', c.D / 16, c.BN() / 16}} {
			for x := 0; x < k.nx; x++ {
				for y := 0; y < k.ny; y++ {
					for q := 0; q < 4; q++ {
						seen := map[int]bool{}
						for ln := 8 * q; ln < 8*q+8; ln++ {
							seen[k.tr.attnLdsm(k.kind, ln, 16, x, y)%128/16] = true
						}
						if len(seen) != 8 {
							t.Fatalf("%s %c x %d y %d: bank conflict", c.Name(), k.kind, x, y)
						}
					}
				}
			}
		}
	}
}

// TestModelSplitKV runs the paged kernel's split-KV model: each split's
// CTA covers keys [s·chunk, (s+1)·chunk) and writes normalised O and
// natural LSE; the combine kernel's rule merges them. The result must
// match the reference (splits with no visible key included).
func TestModelSplitKV(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	for _, cc := range []struct{ d, nq, nk, wl, splits int }{{128, 1, 300, -1, 4}, {64, 3, 200, 50, 3}, {256, 1, 70, -1, 3}} {
		c := mma.AttnConfig{D: cc.d, In: tile.F16, Paged: true}
		p := &attnProb{nq: cc.nq, nk: cc.nk, hq: 4, hkv: 1, d: cc.d, scale: 0.1, wl: cc.wl, wr: 0, batch: 1}
		gen := func(n int) []uint16 {
			x := make([]uint16, n)
			for i := range x {
				x[i] = tile.F32ToF16(float32(rng.NormFloat64()))
			}
			return x
		}
		p.q, p.k, p.v = gen(p.nq*p.hq*p.d), gen(p.nk*p.hkv*p.d), gen(p.nk*p.hkv*p.d)
		dev := mma.Device{SM: 80, SMs: 108}
		ap := &mma.Attention{D: cc.d, Batch: 1, HeadsQ: 4, SeqQ: cc.nq, SeqLensKV: []int{cc.nk}}
		splits, chunk := mma.AttnSplits(dev, ap, cc.splits)
		if splits < 2 || splits > cc.splits || chunk%c.BN() != 0 || (splits-1)*chunk >= cc.nk || splits*chunk < cc.nk {
			t.Fatalf("%+v: %d splits of %d", cc, splits, chunk)
		}
		for h := 0; h < p.hq; h++ {
			var os [][][]float32
			var ls [][]float32
			for s := 0; s < splits; s++ {
				o, l := modelAttnCTA(t, c, p, 0, h, 0, s*chunk, (s+1)*chunk)
				os, ls = append(os, o), append(ls, l)
			}
			for i := 0; i < p.nq; i++ {
				m := math.Inf(-1)
				for s := range ls {
					m = math.Max(m, float64(ls[s][i]))
				}
				mu := m
				if math.IsInf(m, -1) {
					mu = 0
				}
				sum, acc := 0.0, make([]float64, p.d)
				for s := range ls {
					w := math.Exp(float64(ls[s][i]) - mu)
					sum += w
					for d := range acc {
						acc[d] += w * float64(os[s][i][d])
					}
				}
				want, wl := p.refAttn(0, h, i)
				if got := m + math.Log(sum); math.Abs(got-wl) > 1e-3 {
					t.Fatalf("%+v h %d row %d: LSE %v, want %v", cc, h, i, got, wl)
				}
				for d := range acc {
					if math.Abs(acc[d]/sum-want[d]) > 1e-2 {
						t.Fatalf("%+v h %d row %d d %d: %v, want %v", cc, h, i, d, acc[d]/sum, want[d])
					}
				}
			}
		}
	}
}
