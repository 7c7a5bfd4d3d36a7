package ptx

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/tile"
)

// The models below transliterate sg.ptx's preflight and arithmetic
// instruction by instruction (64-bit two's-complement arithmetic, as the
// registers hold it), so the algorithms the PTX implements are checked
// against the tile contract and fallback.Combine on the CPU. They check the
// algorithms, not ptxas or the GPU.

// itypeCode is the SG index-type code of d.
func itypeCode(d tile.DType) uint32 {
	switch d {
	case tile.S32:
		return 0
	case tile.U32:
		return 1
	case tile.S64:
		return 2
	}
	return 3
}

// loadIndexModel is sg_load_index on an already loaded 32- or 64-bit word.
func loadIndexModel(w uint64, it uint32) uint64 {
	if it >= 2 {
		return w
	}
	if it == 0 {
		return uint64(int64(int32(uint32(w))))
	}
	return uint64(uint32(w))
}

// resolveModel is sg_resolve.
func resolveModel(raw uint64, it uint32, n uint64, oob uint32) uint64 {
	if raw < n {
		return raw
	}
	neg := it&1 == 0 && int64(raw) < 0
	switch oob {
	case 1:
		if neg {
			return 0
		}
		return n - 1
	case 2:
		if !neg {
			return raw % n
		}
		m := int64(raw) % int64(n) // rem.s64 truncates like Go
		if m < 0 {
			m += int64(n)
		}
		return uint64(m)
	}
	return SGDropped
}

// checkDispModel is tcrt_sg_check_disp's test of one lane: true = fault.
func checkDispModel(raw uint64, it uint32, base, limit uint64, elog uint32) bool {
	size := uint64(1) << elog
	room := int64(limit - size - base)
	nbase := -int64(base)
	sgn := it&1 == 0
	p1 := (int64(raw) < nbase || int64(raw) > room) && sgn
	p2 := (raw > uint64(room) || room < 0) && !sgn
	if p1 || p2 {
		return true
	}
	return (base+raw)&(size-1) != 0
}

func indexSamples(rng *rand.Rand, n int) []uint64 {
	out := []uint64{0, 1, uint64(n - 1), uint64(n), uint64(n + 1), ^uint64(0), ^uint64(1), 1 << 31, 1<<31 - 1, 1 << 32, 1<<32 - 1,
		uint64(math.MaxInt64), 1 << 63, uint64(-int64(n)), uint64(-int64(n) - 1), uint64(2 * n), uint64(3*n - 1)}
	for range 300 {
		switch rng.IntN(3) {
		case 0:
			out = append(out, rng.Uint64())
		case 1:
			out = append(out, uint64(rng.IntN(4*n+2)-2*n))
		default:
			out = append(out, uint64(int64(int32(rng.Uint32()))))
		}
	}
	return out
}

// trunc is what an index tile of type d can hold of raw.
func trunc(d tile.DType, raw uint64) uint64 {
	if d == tile.S32 || d == tile.U32 {
		return raw & math.MaxUint32
	}
	return raw
}

func TestSGResolveModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 7, 1000, 1 << 20, 1<<31 + 5} {
		for _, d := range []tile.DType{tile.S32, tile.U32, tile.S64, tile.U64} {
			it := itypeCode(d)
			for _, w := range indexSamples(rng, n) {
				w = trunc(d, w)
				raw := loadIndexModel(w, it)
				if want := tile.LoadIndex(d, le(w), 0); raw != want {
					t.Fatalf("%v load %#x: %#x, want %#x", d, w, raw, want)
				}
				// The preflight's fault test is raw >= n, for every type.
				_, inb := tile.ResolveIndex(raw, d.IsSigned(), n, tile.OOBError)
				if got := raw >= uint64(n); got == inb {
					t.Fatalf("%v %#x n=%d: check_index fault %v, contract in bounds %v", d, raw, n, got, inb)
				}
				for _, p := range []tile.OOB{tile.OOBError, tile.OOBClamp, tile.OOBWrap, tile.OOBZero, tile.OOBSkip} {
					pos, ok := tile.ResolveIndex(raw, d.IsSigned(), n, p)
					got := resolveModel(raw, it, uint64(n), uint32(p))
					if ok != (got != SGDropped) || (ok && uint64(pos) != got) {
						t.Fatalf("%v %#x n=%d %v: model %#x, contract %d %v", d, raw, n, p, got, pos, ok)
					}
				}
			}
		}
	}
}

func le(w uint64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(w >> (8 * i))
	}
	return b
}

func TestSGCheckDispModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, limit := range []int{0, 1, 3, 4, 8, 9, 64, 1000, 1 << 20} {
		for _, base := range []int{0, 1, 2, 4, 7, limit / 2, limit} {
			if base > limit {
				continue
			}
			for elog := uint32(0); elog <= 3; elog++ {
				size := 1 << elog
				for _, d := range []tile.DType{tile.S32, tile.U32, tile.S64, tile.U64} {
					for _, w := range indexSamples(rng, limit+1) {
						w = trunc(d, w)
						raw := loadIndexModel(w, itypeCode(d))
						_, f := tile.ResolveDisplacement(base, raw, d.IsSigned(), limit, size)
						if got := checkDispModel(raw, itypeCode(d), uint64(base), uint64(limit), elog); got != (f != tile.DispOK) {
							t.Fatalf("%v disp %#x base %d limit %d size %d: model fault %v, contract %v", d, raw, base, limit, size, got, f)
						}
					}
				}
			}
		}
	}
}

// TestSGLanesCover checks the thread mapping of every SG kernel: with the
// lg and grid the host computes, each (row, unit) is visited exactly once,
// and a thread's lanes (r·cols + u) only increase, so its first fault is its
// smallest and red.max of ^lane records the first faulting lane.
func TestSGLanesCover(t *testing.T) {
	for _, sh := range [][2]int64{{1, 1}, {1, 7}, {7, 1}, {3, 300}, {1000, 3}, {129, 33}, {5, 5000}, {40000, 1}} {
		rows, units := sh[0], sh[1]
		lg := SGLog2Threads(units)
		for _, sms := range []int{1, 2, 132} {
			gx, gy := SGGrid(rows, units, lg, sms)
			seen := make([]int8, rows*units)
			rpb, tpr := int64(SGBlock>>lg), int64(1)<<lg
			for bx := range int64(gx) {
				for by := range int64(gy) {
					for th := range int64(SGBlock) {
						last := int64(-1)
						for r := bx*rpb + th>>lg; r < rows; r += int64(gx) * rpb {
							for u := by*tpr + th&(tpr-1); u < units; u += int64(gy) * tpr {
								seen[r*units+u]++
								if l := r*units + u; l <= last {
									t.Fatalf("lanes not increasing")
								} else {
									last = l
								}
							}
						}
					}
				}
			}
			for i, s := range seen {
				if s != 1 {
					t.Fatalf("%dx%d lg %d grid %dx%d: lane %d visited %d times", rows, units, lg, gx, gy, i, s)
				}
			}
		}
	}
	if SGLog2Threads(1) != 0 || SGLog2Threads(2) != 1 || SGLog2Threads(3) != 2 || SGLog2Threads(256) != 8 || SGLog2Threads(1<<30) != 8 {
		t.Fatal("SGLog2Threads")
	}
}

// applyModel is sg_apply's arithmetic for the CAS-loop codes: the new bits
// of the element (for f16/bf16 the 16-bit element, the word handling is
// modelled by TestSGSubwordModel).
func applyModel(code uint32, old, v uint32) uint32 {
	f := math.Float32frombits
	switch code {
	case SGAddF32:
		return math.Float32bits(f(old) + f(v))
	case SGAddF16:
		return uint32(tile.F32ToF16(tile.F16ToF32(uint16(old)) + tile.F16ToF32(uint16(v))))
	case SGAddBF16:
		return uint32(f32ToBF16RN(f(old<<16) + f(v<<16)))
	case SGMaxF32, SGMinF32:
		if v&0x7FFFFFFF > 0x7F800000 || old&0x7FFFFFFF > 0x7F800000 {
			return old
		}
		x, y := old, v
		if code == SGMinF32 {
			x, y = v, old
		}
		lt := f(x) < f(y)
		if (x|y)&0x7FFFFFFF == 0 {
			lt = x == 0x80000000 && y == 0
		}
		if lt {
			return v
		}
		return old
	}
	panic("code")
}

// f32ToBF16RN is cvt.rn.bf16.f32 for non-NaN inputs.
func f32ToBF16RN(x float32) uint16 {
	u := math.Float32bits(x)
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

func f32Samples(rng *rand.Rand) []uint32 {
	out := []uint32{0, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 1, 0x80000001, 0x007FFFFF, 0x7F7FFFFF}
	for range 2000 {
		out = append(out, rng.Uint32())
	}
	return out
}

func TestSGApplyModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	xs := f32Samples(rng)
	for _, c := range []struct {
		code uint32
		op   fallback.ScatterOp
		d    tile.DType
	}{{SGAddF32, fallback.ScatterAdd, tile.F32}, {SGMaxF32, fallback.ScatterMax, tile.F32}, {SGMinF32, fallback.ScatterMin, tile.F32},
		{SGAddF16, fallback.ScatterAdd, tile.F16}, {SGAddBF16, fallback.ScatterAdd, tile.BF16}} {
		for i := range 20000 {
			a, b := xs[i%len(xs)], xs[rng.IntN(len(xs))]
			if c.d != tile.F32 {
				a, b = a>>16, b>>16
				if isNaN16(c.d, a) || isNaN16(c.d, b) {
					continue // NaN payloads: the hardware's canonical NaN may differ (documented)
				}
			} else if c.code == SGAddF32 && (a&0x7FFFFFFF > 0x7F800000 || b&0x7FFFFFFF > 0x7F800000) {
				continue
			}
			want := uint32(fallback.Combine(c.op, c.d, uint64(a), uint64(b)))
			got := applyModel(c.code, a, b)
			if c.code == SGAddF32 || c.d != tile.F32 {
				if isNaNBits(c.d, want) && isNaNBits(c.d, got) {
					continue // Inf − Inf: both NaN; payloads may differ
				}
			}
			if got != want {
				t.Fatalf("code %d on %v: old %#x v %#x: model %#x, Combine %#x", c.code, c.d, a, b, got, want)
			}
		}
	}
}

func isNaN16(d tile.DType, v uint32) bool {
	if d == tile.F16 {
		return v&0x7FFF > 0x7C00
	}
	return v&0x7FFF > 0x7F80
}

func isNaNBits(d tile.DType, v uint32) bool {
	if d == tile.F32 {
		return v&0x7FFFFFFF > 0x7F800000
	}
	return isNaN16(d, v)
}

// TestSGSubwordModel checks the containing-word arithmetic of sg_cas and the
// f16/bf16 adds: the element's shift and mask, and that the neighbours'
// bytes survive.
func TestSGSubwordModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 10000 {
		word := rng.Uint32()
		addr := uint64(rng.IntN(1 << 20))
		for _, elog := range []uint32{0, 1} {
			addr &^= uint64(1)<<elog - 1
			sh := uint32(addr&3) * 8
			mask := uint32(0xFF)
			if elog == 1 {
				mask = 0xFFFF
			}
			mask <<= sh
			obs := (word & mask) >> sh
			var mem [4]byte
			for i := range mem {
				mem[i] = byte(word >> (8 * i))
			}
			off := int(addr & 3)
			want := uint32(mem[off])
			if elog == 1 {
				want |= uint32(mem[off+1]) << 8
			}
			if obs != want {
				t.Fatalf("observed %#x, want %#x", obs, want)
			}
			r := rng.Uint32() & (mask >> sh)
			nw := word&^mask | r<<sh&mask
			for i := range 4 {
				inElem := i >= off && i < off+(1<<elog)
				if b := byte(nw >> (8 * i)); !inElem && b != mem[i] {
					t.Fatalf("neighbour byte %d changed", i)
				}
			}
		}
	}
}
