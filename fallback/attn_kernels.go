package fallback

import (
	"math"
	"unsafe"

	"github.com/klauspost/cpuid/v2"

	"github.com/tcrt-go/tcrt/internal/cpufeat"
	"github.com/tcrt-go/tcrt/tile"
)

// attnKernels are the inner loops of the fast attention path. Every variant
// computes the same thing; they differ in the instructions used.
type attnKernels struct {
	name     string
	features []cpuid.FeatureID
	// gemm computes, for r < 8 and c < nc (nc ≤ 32),
	//
	//	C[r·ldc+c] = s_r·C[r·ldc+c] + Σ_{k<kn} A[r·rsa+k·csa]·B[k·ldb+c]
	//
	// where s_r is scale[r], or 0 (C is not read) when scale is nil. All
	// strides are in elements. Only the nc columns named are touched.
	gemm func(c *float32, ldc int, a *float32, rsa, csa int, b *float32, ldb int, kn, nc int, scale *float32)
	// colMax sets mx[c] = max(mx[c], S[r·lds+c]) for r < rows, c < cols.
	colMax func(s *float32, lds, rows, cols int, mx *float32)
	// expRows replaces S[r·lds+c] by exp(S[r·lds+c] − m[c]) and adds it to
	// sum[c], for r < rows, c < cols. Values of −Inf give 0.
	expRows func(s *float32, lds, rows, cols int, m, sum *float32)
	// cvtBF16 and cvtF16, if set, widen n (a multiple of 16) elements.
	cvtBF16, cvtF16 func(dst *float32, src *uint16, n int)
	// dot4x4, if set, computes S[j·lds+i] = Σ_{c<d} K[j·ldk+c]·Q[i·ldq+c]
	// for j, i < 4, d a multiple of 16: the logits of few query rows
	// (decode), where the transposed-Q gemm would waste vector lanes.
	dot4x4 func(s *float32, lds int, k *float32, ldk int, q *float32, ldq int, d int)
	// prefetch, if set, asks for n bytes of each of rows rows stride bytes
	// apart (the next key block: its rows are pages apart, beyond the
	// hardware prefetcher's reach).
	prefetch func(p *byte, rows, stride, n int)
	// qk4 and pv4, if set, are the decode kernels of few (≤ 4) query rows,
	// indexed by the key/value dtype (see kvIndex); see qk4Func and pv4Func.
	qk4 [3]qk4Func
	pv4 [3]pv4Func
	// pf4 says qk4 and pv4 honour their pf hint, prefetching the next key
	// block a few lines per iteration, so the decode path need not call
	// prefetch (a burst of a block's lines, which stalls on full miss
	// buffers instead of overlapping the arithmetic).
	pf4 bool
	// gemmBF16, if set, is gemm on bf16 pairs, used when Q, K and V are all
	// bf16 (see attnRun.itemBF16 for the numerics): for r < 8, c < nc ≤ 32,
	//
	//	C[r·ldc+c] = s_r·C[r·ldc+c] + mul·Σ_{k<kp} A(r,k)·B[k·ldb+c]
	//
	// where A(r,k) is the pair of bf16 at a + r·rsa + k·csa (byte strides),
	// B holds pairs (a uint32: low half first), x·y is x.lo·y.lo + x.hi·y.hi
	// and s_r is scale[r], or 0 (C is not read) when scale is nil.
	gemmBF16 func(c *float32, ldc int, a *byte, rsa, csa int, b *uint32, ldb int, kp, nc int, scale *float32, mul float32)
	// pairsBF16 sets dst[i] = r0[i] | r1[i]<<16 and pairsF32BF16 the same
	// of r0 and r1 rounded to bf16, for i < n (a multiple of 16): the pair
	// layout of gemmBF16's operands.
	pairsBF16    func(dst *uint32, r0, r1 *uint16, n int)
	pairsF32BF16 func(dst *uint32, r0, r1 *float32, n int)
	// qk4BF16, if set, replaces qk4 when Q and K are both bf16: the same
	// logits, scale·Σ_c K_j[c]·Q[i·ldq+c], from the unscaled bf16 queries
	// (exact products; d a multiple of 32).
	qk4BF16 func(s *float32, k *byte, ldk int, q *uint16, ldq, d, nk, pf int, scale float32)
}

// qk4Func computes S[j·4+i] = Σ_{c<d} K_j[c]·Q[i·ldq+c] for j < nk (a
// multiple of 4) and i < 4, where key row j starts ldk bytes after row j−1
// at k and holds elements of the kernel's dtype (widened to f32 on the
// fly); d is a multiple of 16. pf is a prefetch hint: the kernel may ask
// for the bytes pf after those it reads (0: no hint).
type qk4Func func(s *float32, k *byte, ldk int, q *float32, ldq, d, nk, pf int)

// pv4Func computes O[i·ldo+c] = corr[i]·O[i·ldo+c] + Σ_{j<nk} P[j·4+i]·V_j[c]
// for i < 4 and c < d (a multiple of 64), value row j starting ldv bytes
// after row j−1 at v, in the kernel's dtype; pf as for qk4Func.
type pv4Func func(o *float32, ldo int, p *float32, v *byte, ldv, nk, d int, corr *float32, pf int)

// kvIndex is the index of dt in qk4 and pv4, or -1.
func kvIndex(dt tile.DType) int {
	switch dt {
	case tile.F32:
		return 0
	case tile.BF16:
		return 1
	case tile.F16:
		return 2
	}
	return -1
}

// loadKV returns element c of the row at p (of dtype dt) as float32.
func loadKV(dt tile.DType, p *byte, c int) float32 {
	switch dt {
	case tile.F32:
		return *(*float32)(unsafe.Add(unsafe.Pointer(p), 4*c))
	case tile.BF16:
		return math.Float32frombits(uint32(*(*uint16)(unsafe.Add(unsafe.Pointer(p), 2*c))) << 16)
	}
	return tile.F16ToF32(*(*uint16)(unsafe.Add(unsafe.Pointer(p), 2*c)))
}

// qk4Go is the portable qk4Func for dt (any nk and d).
func qk4Go(dt tile.DType) qk4Func {
	return func(s *float32, k *byte, ldk int, q *float32, ldq, d, nk, pf int) {
		for j := 0; j < nk; j++ {
			kr := (*byte)(unsafe.Add(unsafe.Pointer(k), j*ldk))
			for i := 0; i < 4; i++ {
				qr := f32s(at(q, i*ldq), d)
				var acc float32
				for c, qv := range qr {
					acc += loadKV(dt, kr, c) * qv
				}
				*at(s, j*4+i) = acc
			}
		}
	}
}

// pv4Go is the portable pv4Func for dt (any nk and d).
func pv4Go(dt tile.DType) pv4Func {
	return func(o *float32, ldo int, p *float32, v *byte, ldv, nk, d int, corr *float32, pf int) {
		for i := 0; i < 4; i++ {
			or := f32s(at(o, i*ldo), d)
			s := *at(corr, i)
			for c := range or {
				or[c] *= s
			}
			for j := 0; j < nk; j++ {
				pj := *at(p, j*4+i)
				vr := (*byte)(unsafe.Add(unsafe.Pointer(v), j*ldv))
				for c := range or {
					or[c] += pj * loadKV(dt, vr, c)
				}
			}
		}
	}
}

// f32s views n float32 starting at p.
func f32s(p *float32, n int) []float32 { return unsafe.Slice(p, n) }

// at returns p + i elements.
func at(p *float32, i int) *float32 {
	return (*float32)(unsafe.Add(unsafe.Pointer(p), uintptr(i)*4))
}

func gemmGo(c *float32, ldc int, a *float32, rsa, csa int, b *float32, ldb int, kn, nc int, scale *float32) {
	var acc [8][32]float32
	for r := 0; r < 8; r++ {
		ar := at(a, r*rsa)
		row := &acc[r]
		for k := 0; k < kn; k++ {
			av := *at(ar, k*csa)
			br := f32s(at(b, k*ldb), nc)
			for j, bv := range br {
				row[j] += av * bv
			}
		}
		cr := f32s(at(c, r*ldc), nc)
		if scale != nil {
			s := *at(scale, r)
			for j := range cr {
				cr[j] = s*cr[j] + row[j]
			}
		} else {
			copy(cr, row[:nc])
		}
	}
}

func colMaxGo(s *float32, lds, rows, cols int, mx *float32) {
	m := f32s(mx, cols)
	for r := 0; r < rows; r++ {
		for j, v := range f32s(at(s, r*lds), cols) {
			if v > m[j] {
				m[j] = v
			}
		}
	}
}

func expRowsGo(s *float32, lds, rows, cols int, m, sum *float32) {
	mv, sv := f32s(m, cols), f32s(sum, cols)
	for r := 0; r < rows; r++ {
		row := f32s(at(s, r*lds), cols)
		for j, v := range row {
			e := float32(math.Exp(float64(v - mv[j])))
			row[j] = e
			sv[j] += e
		}
	}
}

var attnGeneric = attnKernels{name: "generic", gemm: gemmGo, colMax: colMaxGo, expRows: expRowsGo}

// attnVariants lists the compiled-in kernel sets, best first; the last is
// the portable one. Architecture files add to it in init.
var attnVariants = []attnKernels{attnGeneric}

// AttentionVariant describes one fast-path kernel set.
type AttentionVariant struct {
	Name     string
	Features []cpuid.FeatureID
}

// Available reports whether the CPU supports the variant.
// Features hidden by the CPU feature mask (internal/cpufeat) count as
// missing.
func (v AttentionVariant) Available() bool { return cpufeat.Supports(v.Features...) }

// AttentionVariants lists the compiled-in attention variants, best first.
func AttentionVariants() []AttentionVariant {
	out := make([]AttentionVariant, len(attnVariants))
	for i, k := range attnVariants {
		out[i] = AttentionVariant{Name: k.name, Features: k.features}
	}
	return out
}

func findAttnVariant(name string) *attnKernels {
	for i := range attnVariants {
		if attnVariants[i].name == name {
			return &attnVariants[i]
		}
	}
	return nil
}
