package fallback

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

// edgeVariant returns the avx512 variant when it has edge kernels and the
// CPU runs it.
func edgeVariant(t *testing.T) *variant {
	v := variantByName("avx512")
	if v == nil || !v.Available() || v.edge == nil {
		t.Skip("no AVX-512 edge kernels")
	}
	return v
}

// TestMatMulEdgeKernels checks each edge kernel against the full kernel on
// the same packed panels: its mr rows bit for bit (the same products summed
// in the same order), stored or added to C, with kc from 0 through the
// unrolled loop's tails to a whole K block, and every other element of C
// (the rows past mr, the padding past NR) still holding its poison.
func TestMatMulEdgeKernels(t *testing.T) {
	v := edgeVariant(t)
	r := newRand(t)
	MR, NR := v.MR, v.NR
	if len(v.edge) != MR {
		t.Fatalf("%d edge kernels, want %d (for 1 to MR-1 rows)", len(v.edge)-1, MR-1)
	}
	const ldc = 32 + 5 // padded rows
	for _, kc := range []int{0, 1, 3, 4, 5, 7, 133, 384} {
		ap := growAligned(nil, max(kc, 1)*MR)
		bp := growAligned(nil, max(kc, 1)*NR)
		for i := range ap {
			ap[i] = randUnit(r)
		}
		for i := range bp {
			bp[i] = randUnit(r)
		}
		c0 := make([]float32, MR*ldc)
		for i := range c0 {
			c0[i] = randUnit(r)
		}
		for accum := range 2 {
			want := slices.Clone(c0)
			v.kernel(kc, &ap[0], &bp[0], &want[0], ldc, accum)
			for mr := 1; mr < MR; mr++ {
				got := slices.Clone(c0)
				poison := float32(math.NaN())
				for i := mr * ldc; i < len(got); i++ {
					got[i] = poison
				}
				for i := range mr {
					for j := NR; j < ldc; j++ {
						got[i*ldc+j] = poison
					}
				}
				v.edge[mr](kc, &ap[0], &bp[0], &got[0], ldc, accum)
				for i := range MR {
					for j := range ldc {
						g, w := got[i*ldc+j], want[i*ldc+j]
						if i >= mr || j >= NR {
							w = poison
						}
						if math.Float32bits(g) != math.Float32bits(w) {
							t.Fatalf("kc %d accum %d: Rows%d: C[%d][%d] = %v, want %v", kc, accum, mr, i, j, g, w)
						}
					}
				}
			}
		}
	}
}

// TestMatMulFastEdgeBitExact runs ragged products through the avx512
// variant with its edge kernels and through the same variant without them
// (a full tile computed into a temporary and merged, the M split in whole
// tiles), and requires the same bits: the edge kernels and the finer split
// change which kernel computes a row, not the order of its sums. The
// shapes cover one and several row blocks, K blocks and column blocks
// (shrunk blocking), the scratch and temporary-tile paths (bf16 D), beta
// and the shared B.
func TestMatMulFastEdgeBitExact(t *testing.T) {
	v := edgeVariant(t)
	r := newRand(t)
	noEdge := &variant{MatMulVariant: v.MatMulVariant, kernel: v.kernel, kernelPackB: v.kernelPackB,
		transPack: v.transPack, cvt: v.cvt}
	withEdge := &variant{MatMulVariant: v.MatMulVariant, kernel: v.kernel, kernelPackB: v.kernelPackB,
		transPack: v.transPack, cvt: v.cvt, edge: v.edge}
	defer func() { testBlocking, testShareSmallB, skinnyOff = nil, false, false }()
	skinnyOff = true
	for _, blk := range []*blocking{nil, {kc: 24, mc: 42, nc: 64}} {
		testBlocking = blk
		for _, s := range [][3]int{{1, 7, 129}, {7, 129, 7}, {129, 33, 129}, {1000, 64, 40}, {2049, 40, 17}, {27, 1000, 7}, {130, 70, 300}} {
			for _, threads := range []int{1, 2, 3} {
				for _, dd := range []tile.DType{tile.F32, tile.BF16} {
					for _, share := range []bool{false, true} {
						name := fmt.Sprintf("blk %v %v threads %d D %v share %v", blk, s, threads, dd, share)
						testShareSmallB = share
						m, n, k := s[0], s[1], s[2]
						a := MatMulArgs{M: m, N: n, K: k, Batch: 1, Alpha: 1, Threads: threads}
						a.A = newMatrix(r, mat{dt: tile.F32}, 1, m, k)
						a.B = newMatrix(r, mat{dt: tile.F32, ldPad: 3}, 1, k, n)
						a.D = newMatrix(r, mat{dt: dd, ldPad: 1}, 1, m, n)
						if dd == tile.BF16 {
							cm := newMatrix(r, mat{dt: tile.F32}, 1, m, n)
							a.C, a.Beta = &cm, 0.5
						}
						b := a
						b.D.Data = slices.Clone(a.D.Data)
						poison(a.D.Data)
						poison(b.D.Data)
						withEdge.matMul(&a)
						noEdge.matMul(&b)
						if i := firstDiff(a.D.Data, b.D.Data); i >= 0 {
							t.Fatalf("%s: D byte %d differs with the edge kernels", name, i)
						}
						if _, _, _, ok := touchedOutside(&a.D, 1, m, n); !ok {
							t.Fatalf("%s: padding of D written", name)
						}
						if i, j, ok := allWritten(&a.D, m, n); !ok {
							t.Fatalf("%s: D[%d][%d] not written", name, i, j)
						}
					}
				}
			}
		}
	}
}

// allWritten reports whether no element of the m×n D still holds the
// poison (all bits set), and if one does, which.
func allWritten(d *Matrix, m, n int) (i, j int, ok bool) {
	sz := d.DType.Size()
	for i := range m {
		for j := range n {
			k := (i*d.LD + j) * sz
			if !slices.ContainsFunc(d.Data[k:k+sz], func(x byte) bool { return x != 0xff }) {
				return i, j, false
			}
		}
	}
	return 0, 0, true
}
