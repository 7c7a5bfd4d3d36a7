package fallback

import (
	"math"
	"unsafe"

	"github.com/klauspost/cpuid/v2"
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
func (v AttentionVariant) Available() bool { return cpuid.CPU.Supports(v.Features...) }

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
