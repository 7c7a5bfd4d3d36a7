package fallback

import (
	"math"
	"unsafe"

	"github.com/klauspost/cpuid/v2"
	"github.com/tcrt-go/tcrt/internal/cpufeat"
	"github.com/tcrt-go/tcrt/tile"
)

// Skinny products: the few rows of A of a decoding step (M ≤ skinnyMaxM)
// times a weight matrix B. Their cost is reading B, once: packing B into
// panels first, as the blocked path does, reads it, writes a copy and reads
// that again, and the 14-row register tile is mostly empty. The skinny path
// instead packs only A (M×K floats, alpha applied as packA does; bf16
// pairs for the pair variant), splits the columns of B among the workers,
// and multiplies groups of up to 6 rows of A with 64 columns of B at a
// time, read where they lie, row after row (skinnyFunc): every element of
// B is loaded from memory once. K is cut in blocks of skinnyKC rows, each
// taken across the column blocks of a run of skinnyRun bytes of a row in
// turn, so that B is read in runs of up to 2 KiB contiguous bytes of a
// row. When M is more than 6, the first group of rows also stores the
// block of B as it multiplied it (widened or paired) to a 16 KiB buffer,
// contiguous, so in L1 whatever B's row stride, and the further groups
// read that (without pairing again), prefetching meanwhile the next block
// of B, which keeps the memory busy while they compute from L1 (about 8%
// more bytes of B per CPU second at M = 16, busy machine). The f32
// variant multiplies f32 B, or bf16 B widened exactly, with one FMA per
// k, as its blocked kernel does; the pair variant multiplies bf16 pairs
// with VDPBF16PS, as its blocked kernel does (matmul_pairs.go's
// numerics, subnormal flushes included). Only the order of the K blocks'
// partial sums differs, within f32 rounding.
//
// Up to 4 rows of A take the row-streaming kernels instead (skinnyRowFunc):
// a tile of the sums of up to 1024 columns (2048 for one row of bf16 B)
// stays in L1 while B is walked two rows (two pairs of rows) at a time
// along all of the tile's columns and down all of K, each sweep
// prefetching the next one's rows. B is then read as a few sequential
// streams, which the memory system serves best: the 64-column kernels
// take 256 bytes from each of 64 rows in turn, and read B at 0.85–0.94
// (f32) and 0.67–0.69 (bf16 pairs) of the rate of the row kernels, M = 1
// and 4 (BenchmarkMatMulCPUTime against its cols path, B-GB/cpu-s,
// medians of 5 alternated rounds, one and two threads, load 4–5). Loading and storing the tile costs an L1 access per
// vector and row of A per sweep, which with more rows of A outweighs the
// gain. Every column's sum is then one chain in the order of k (or pair
// steps), over all of K: the reference's order, rounded in f32.

// From skinnyStripMinM rows on, f32 B takes the strip kernels instead
// (skinnyStripFunc): all of M's sums for 16 columns stay in registers down
// a K block of 64 rows, so each vector of B is loaded once, straight from
// B, and multiplied by every row of A, with no groups of rows and no copy
// of B. Read down a strip, 64 bytes a row, B streams poorly; so each step
// also prefetches a line of the block the next call reads, row after row.
// The sums are kept in an L1 tile whose rows are a cache line longer than
// the run (D's rows, a power of two apart, fall in one L1 set), which
// carries them from one K block to the next: each column's sum is one
// FMA chain in the order of k, as the reference's.
//
// The AVX2 variant (no 64-column kernels: 16 ymm registers) takes, for
// up to 4 rows of A by f32 B, row-streaming kernels (skinnyRowsAVX2 in
// sgemm_gen.go: 8 columns a vector, the last n mod 8 loaded under a mask,
// 8 rows of B a sweep along tiles of 4096 columns, no software prefetch:
// 8 sequential streams, which the hardware prefetcher serves best),
// and otherwise the strip kernels for every M and for f32, bf16, f16,
// e4m3 and e5m2 B, the others widened exactly to f32 in registers
// (skinnyStripAVX2 and widenFloat8AVX2 in sgemm_gen.go): 16 columns a strip, the rows in groups of up to 6 (12 ymm
// of sums), with more than 6 rows the first group copying the strip it
// read to a contiguous buffer for the others (stripBuf). They compute
// whole strips only; stripTail computes the last n mod 16 columns from a
// zero-padded f32 copy of them. By CPU time on a shared 2-vCPU AVX2-only
// EPYC they read 4096² B 3–7× as fast as the blocked path, which packed
// B on every call (BenchmarkMatMulCPUTime, …/avx2 against …/blocked/avx2).
//
// Transposed B (D = x·Wᵀ, W stored N×K by rows as weights are) takes, on
// the AVX2 variant only, the dot kernels (skinnyDotFunc, skinnyDots):
// each element of D is the dot product of a row of A and a row of W, both
// contiguous in K, so W is read in place, row after row, a few rows at a
// time, of any of the strip kernels' types. A is packed by rows (alpha applied); the rows of A go in groups
// of up to 4 over each block of about skinnyDotBlock bytes of W, which
// the first group reads from memory and the further ones from L2 (float8
// W: widened to f32 once, widenOnce). Each
// sum is 8 FMA chains over K, one a lane, added at the end, then the last
// K mod 8 products in the order of k: within f32 rounding of the
// reference's order. The AVX-512 variant has no dot kernels: transposed
// B takes its blocked path.

// skinnyFunc computes an r×64 tile: see skinnyAVX512 in sgemm_gen.go. lda,
// ldb, ldc and pf are in bytes; mask selects the columns loaded and stored;
// the Store kernels copy the steps of B they read to buf.
type skinnyFunc func(kc int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc, accum int, mask uint64, pf int, buf unsafe.Pointer)

// skinnyKernels are a variant's skinny kernels, f32[r-1] and bf16[r-1]
// taking r rows of A (nil when the variant has none for that type of B).
// The Store forms also copy the block of B they read, as they multiplied
// it, to a buffer, and rest[r-1] multiplies that copy by the further rows.
// With pairs, A is packed in bf16 pairs and the bf16 kernels multiply
// pairs of rows of B with VDPBF16PS, with the pair variant's numerics
// (matmul_pairs.go).
type skinnyKernels struct {
	features            []cpuid.FeatureID
	f32, bf16           []skinnyFunc
	f32Store, bf16Store []skinnyFunc
	rest                []skinnyFunc
	// rowsF32 and rowsBF16 are the row-streaming kernels, [m-1] for m
	// rows of A, m ≤ len: see skinnyRowFunc.
	rowsF32, rowsBF16 []skinnyRowFunc
	// rowRun, when not zero, is the bytes of a row of B the variant's
	// row-streaming kernels take in one walk down K, whatever the rows
	// of A (the tile of sums is not bounded by skinnyRowTile), and the
	// fewest bytes of a row of an item beyond one a thread, in place of
	// skinnyRowRun and skinnyRun (see skinnySplit).
	rowRun int
	// strip, stripBF16, stripF16, stripE4M3 and stripE5M2 are the strip
	// kernels for f32, bf16, f16, e4m3 and e5m2 B, [m-stripMinM] for m
	// rows of A: see skinnyStripFunc.
	strip, stripBF16, stripF16, stripE4M3, stripE5M2 []skinnyStripFunc
	stripMinM                                        int
	// dotF32, dotBF16, dotF16, dotE4M3 and dotE5M2 are the dot kernels
	// for transposed B of those types, [mr-1][nr-1]: see skinnyDotFunc.
	dotF32, dotBF16, dotF16, dotE4M3, dotE5M2 [][]skinnyDotFunc
	// stripWhole marks strip kernels that compute whole strips of 16
	// columns only: skinnyStrips computes the rest (stripTail).
	stripWhole bool
	pairs      bool
}

// skinnyStripFunc computes, strip by strip of 16 columns, the m×n tile at
// c (rows ldc bytes apart) as the product of m rows of packed A (m values
// a k step) and kc rows of f32 B (ldb bytes apart, n columns from b on),
// added to c when accum is not zero: see skinnyStripAVX512 in
// sgemm_gen.go. mask is 2^(n mod 16) − 1. Each k step prefetches a line
// of the next block from pf on, pfLines lines a row, pfSkip bytes from a
// row's last line to the next row's first.
type skinnyStripFunc func(kc int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, accum int, pf unsafe.Pointer, pfLines, pfSkip int, buf unsafe.Pointer)

// skinnyDotFunc stores to c (rows ldc bytes apart) the mr×nr dot products
// of mr rows of f32 A (lda bytes apart) with nr rows of B, stored W[N, K]
// by rows as op(B) = Wᵀ is (ldb bytes apart), each over the first 8·k8
// elements of the rows: see skinnyDotAVX2 in sgemm_gen.go.
type skinnyDotFunc func(k8 int, a *float32, lda int, b unsafe.Pointer, ldb int, c *float32, ldc int)

// skinnyDotBlock is the bytes of W that the dot kernels take in one block
// of rows: every group of up to 4 rows of A multiplies the block in turn,
// the first reading it from memory, the others (M > 4) from L2.
const skinnyDotBlock = 128 << 10

// skinnyDotRows is the unit of rows of W of the dot kernels' blocks and
// items: a multiple of every kernel's rows of W (3, 4 and 8), so that
// only the last block of an item has a remainder.
const skinnyDotRows = 24

// skinnyStripMinM is the fewest rows of A the strip kernels take. With 9
// to 16 rows of f32 B they read B 1.15–1.35× as fast as the 64-column
// kernels (groups of 6 rows and a copy of B), with 8 as fast, and with 5
// slower (BenchmarkMatMulCPUTime, ns/op, M×4096×4096, 2 and 3 alternated
// runs, load 1–2). With bf16 pairs they were slower at every M (1.2–1.9×
// the time at M = 5 to 16), so bf16 has none.
const skinnyStripMinM = 9

// skinnyStripKC is the strip kernels' K block: the rows of B a strip's
// sums stay in registers for, and the rows of B read down each strip.
// 64 did best (two threads, 4096² f32 B: 16 to 32 rows about 0.9 of it,
// 128 and 256 0.85 and 0.8; one thread 16–64 about equal).
const skinnyStripKC = 64

// skinnyStripRun is the bytes of a row of B the strip kernels take across
// in one K block: the tile of sums is M rows of as many columns (32 KiB
// at M = 16, in L1), the block of B kc rows of it.
const skinnyStripRun = 2048

// skinnyStripsOff, set by benchmarks, keeps the strip kernels' shapes on
// the 64-column kernels, to compare the two.
var skinnyStripsOff bool

// skinnyRowFunc adds the product of m rows of packed A (m values or bf16
// pairs a k or pair step) and rows rows of B (ldb bytes apart, n columns
// from b on) to the m×n f32 tile at c (rows ldc bytes apart, 64-byte
// aligned), walking B a few rows at a time along all n columns, the
// AVX-512 kernels prefetching the rows pf bytes further down (see
// skinnyRowsAVX512 and skinnyRowsAVX2 in sgemm_gen.go: the AVX2 kernel
// reads neither pf nor mask). mask is 2^(n mod 16) − 1.
type skinnyRowFunc func(rows int, a *float32, b unsafe.Pointer, ldb int, c *float32, ldc, n int, mask uint64, pf int)

const (
	skinnyMaxM = 16 // the most rows of op(A) the skinny path takes
	skinnyNB   = 64 // columns per kernel call
	// skinnyKC is the K block. 64 rows rather than 128 halve the L1
	// copy of a block (16 KiB of f32), which then stays in L1 beside the
	// block of B streaming in and the next one prefetched: one-thread B
	// bytes per CPU second at M = 16 rose 3–4% (f32) and 9% (bf16),
	// M = 1 and 4 unchanged (medians of 3, busy machine).
	skinnyKC = 64
	// skinnyRun is the bytes of a row of B that a K block takes in turn,
	// in column blocks of skinnyNB: 8 blocks of f32, 16 of bf16. With 1
	// KiB runs (8 blocks of bf16) the bf16 products read B at 15–16 GB
	// per CPU second against 18–19 with 2 KiB, the f32 ones' run
	// (BenchmarkMatMulCPUTime, B-GB/cpu-s, 1×4096×4096 bf16, busy).
	skinnyRun = 2048
	// skinnySB is the most column blocks of a run (bf16).
	skinnySB = skinnyRun / (2 * skinnyNB)
)

// skinnyRowRun is the bytes of a row of B that the row-streaming kernels
// take in one walk down K: the tile of sums is M times as many floats.
var skinnyRowRun = 4096

// skinnyRowTile bounds the bytes of the row-streaming kernels' tile of
// sums, which has to stay in L1 beside the rows of B streaming through.
var skinnyRowTile = 16 << 10

// skinnyRowPF is how far ahead down B the row-streaming kernels prefetch,
// in bytes of the tile's columns, rounded up to whole sweeps and at least
// 4 rows: two f32 sweeps of the AVX-512 kernels (one of the AVX2 M = 1
// kernel, which walks 4 rows a sweep), one of pairs. 16 and 64 KiB did no better (two
// threads, B-GB/cpu-s, medians of 4, load 9–13: f32 m1 23.2 and 24.0
// against 23.9, m4 24.3 and 19.5 against 21.6; bf16 m1 24.4 and 22.8
// against 30.2, m4 24.7 and 20.5 against 27.6).
const skinnyRowPF = 4096

// skinnyRowsOff, set by benchmarks, keeps M ≤ 4 on the 64-column kernels,
// to compare the two.
var skinnyRowsOff bool

// skinnyPF is how many rows of B ahead the skinny kernels prefetch.
var skinnyPF = 32

// skinnyOff, set by benchmarks, sends the skinny shapes down the blocked
// path, to compare the two.
var skinnyOff bool

// skinnyEligible reports whether j's product is of the skinny path's
// shape for its variant: few rows, B stored by rows (not transposed) or
// transposed with dot kernels for its type, the variant with skinny
// kernels this CPU (and its mask) can run.
func (j *job) skinnyEligible() bool {
	a, s := j.a, j.v.skinny
	return s != nil && !skinnyOff && a.M <= skinnyMaxM && (!a.B.Trans || j.skinnyDotKernels() != nil) && cpufeat.Supports(s.features...)
}

// skinnyDotKernels returns the dot kernels for j's transposed B, or nil
// when B is not transposed or the variant has none for its type.
func (j *job) skinnyDotKernels() [][]skinnyDotFunc {
	s := j.v.skinny
	if s == nil || !j.a.B.Trans {
		return nil
	}
	switch j.a.B.DType {
	case tile.F32:
		return s.dotF32
	case tile.BF16:
		return s.dotBF16
	case tile.F16:
		return s.dotF16
	case tile.E4M3:
		return s.dotE4M3
	case tile.E5M2:
		return s.dotE5M2
	}
	return nil
}

// skinnyKernel returns the 64-column kernels for j's product, plain and
// Store forms, when it takes them: a skinny shape, B f32 or bf16.
func (j *job) skinnyKernel() (plain, store []skinnyFunc) {
	if !j.skinnyEligible() || j.a.B.Trans {
		return nil, nil
	}
	s := j.v.skinny
	switch j.a.B.DType {
	case tile.F32:
		return s.f32, s.f32Store
	case tile.BF16:
		return s.bf16, s.bf16Store
	}
	return nil, nil // float8 and f16 B take the blocked path or strips
}

// skinnyPath sets j's 64-column skinny kernels and reports whether the
// product takes the skinny path: with those, or (a variant without them,
// AVX2) with a row-streaming, strip or dot kernel.
func (j *job) skinnyPath() bool {
	j.skinny, j.skinnyStore = j.skinnyKernel()
	return j.skinny != nil || j.skinnyEligible() && (j.skinnyRowKernel() != nil || j.skinnyStripKernel() != nil || j.skinnyDotKernels() != nil)
}

// skinnySplit shares the column blocks of every batch out as work items,
// up to four per thread so that a worker slowed by other load leaves its
// share to the others, but no narrower than a run (skinnyRun) when there
// are columns enough for every thread to get one, and sets the K block.
// With a row-streaming kernel (M ≤ 4) K is one block, and an item's
// columns are walked in tiles of j.sb columns: at most skinnyRowRun bytes
// of a row of B (the variant's rowRun, if set), and a tile of sums of at
// most skinnyRowTile bytes; or, with the variant's rowRun set, rowRun
// bytes of a row whatever the tile, and the items beyond one a thread at
// least rowRun bytes of a row: each thread then streams its columns of B
// in as long runs of its rows as it can.
func (j *job) skinnySplit(threads int) {
	a := j.a
	if j.dotK = j.skinnyDotKernels(); j.dotK != nil {
		// Blocks of rows of W of about skinnyDotBlock bytes, in units
		// of skinnyDotRows; items as below.
		sz := a.B.DType.Size()
		if j.widenOnce() {
			sz = 4 // the block is widened to f32 (skinnyDots)
		}
		j.sb = max(skinnyDotRows, min(480, skinnyDotBlock/max(1, a.K*sz)/skinnyDotRows*skinnyDotRows))
		j.mItems = 1
		j.nItems = max(1, min(ceilDiv(a.N, skinnyDotRows), max(threads, min(4*threads, ceilDiv(a.N*max(a.K, 1)*sz, skinnyDotBlock)))))
		j.items = a.Batch * j.nItems
		j.kc = max(a.K, 1)
		j.numKBlk = 1
		return
	}
	if j.rowsK = j.skinnyRowKernel(); j.rowsK != nil {
		j.sb = max(16, min(skinnyRowRun/a.B.DType.Size(), skinnyRowTile/(4*a.M)/16*16))
		item := skinnyRun
		if r := j.v.skinny.rowRun; r != 0 {
			j.sb, item = max(16, r/a.B.DType.Size()), r
		}
		j.mItems = 1
		// An item a thread, up to four of at least item bytes of a
		// row, as below; none wider than a tile.
		j.nItems = max(1, ceilDiv(a.N, j.sb), min(threads, ceilDiv(a.N, skinnyNB)),
			min(4*threads, ceilDiv(a.N*a.B.DType.Size(), item)))
		j.items = a.Batch * j.nItems
		j.kc = max(a.K, 1)
		j.numKBlk = 1
		return
	}
	if j.stripK = j.skinnyStripKernel(); j.stripK != nil {
		sz := a.B.DType.Size()
		j.sb = max(16, skinnyStripRun/sz)
		j.mItems = 1
		// Up to four items a thread, none narrower than a run when
		// there are runs enough, as below.
		j.nItems = max(1, min(ceilDiv(a.N, 16), max(threads, min(4*threads, ceilDiv(a.N*sz, skinnyStripRun)))))
		j.items = a.Batch * j.nItems
		j.kc = max(1, skinnyStripKC)
		j.numKBlk = max(1, ceilDiv(a.K, j.kc))
		return
	}
	blocks := ceilDiv(a.N, skinnyNB)
	j.sb = skinnyRun / (skinnyNB * a.B.DType.Size())
	j.mItems = 1
	j.nItems = max(1, min(blocks, max(ceilDiv(threads, a.Batch), min(ceilDiv(4*threads, a.Batch), blocks/j.sb))))
	j.items = a.Batch * j.nItems
	j.kc = skinnyKC
	j.numKBlk = max(1, ceilDiv(a.K, j.kc))
}

// skinnyRowKernel returns the row-streaming kernel for j's product, or nil
// when it has too many rows for one or its variant none.
func (j *job) skinnyRowKernel() skinnyRowFunc {
	s, M := j.v.skinny, j.a.M
	if skinnyRowsOff || s == nil || j.a.B.Trans {
		return nil
	}
	var k []skinnyRowFunc
	switch j.a.B.DType {
	case tile.F32:
		k = s.rowsF32
	case tile.BF16:
		k = s.rowsBF16
	}
	if M > len(k) {
		return nil
	}
	return k[M-1]
}

// skinnyStripKernel returns the strip kernel for j's product, or nil when
// its rows are outside the strip kernels' range or its variant has none
// for its type of B.
func (j *job) skinnyStripKernel() skinnyStripFunc {
	s, M := j.v.skinny, j.a.M
	if skinnyStripsOff || s == nil || j.a.B.Trans {
		return nil
	}
	var k []skinnyStripFunc
	switch j.a.B.DType {
	case tile.F32:
		k = s.strip
	case tile.BF16:
		k = s.stripBF16
	case tile.F16:
		k = s.stripF16
	case tile.E4M3:
		k = s.stripE4M3
	case tile.E5M2:
		k = s.stripE5M2
	}
	if M < s.stripMinM || M-s.stripMinM >= len(k) {
		return nil
	}
	return k[M-s.stripMinM]
}

// skinnyWork runs skinny items until none are left.
func (j *job) skinnyWork(w *workspace) {
	a, v := j.a, j.v
	M, K := a.M, a.K
	w.a = growAligned(w.a, M*K+panelSlack)
	w.buf = grow(w.buf, max(M*K, 2*K, skinnyNB))
	if v.skinny.pairs {
		w.h = grow16(w.h, max(M, K))
	}
	cols := max(skinnySB*skinnyNB, j.sb) // the most columns of an epilogue
	w.row = grow(w.row, cols)
	w.buf = grow(w.buf, max(len(w.buf), cols))
	w.tile = growAligned(w.tile, max(M*skinnySB*skinnyNB, M*(roundUp(j.sb, 16)+16)))
	if j.dotK == nil && (M > len(j.skinny) || j.stripK != nil) {
		// A block of B for the further rows, or a strip kernel's tail
		// (stripTail) and copy of a strip (stripBuf).
		w.sk = growAligned(w.sk, max(j.kc*skinnyNB, 2*16*skinnyStripKC))
	}
	scale := a.Alpha // as packA applies it; the pair variant's epilogue does
	if v.BF16Pairs {
		scale = 1
	}
	packed := -1 // the batch whose rows of A w.a holds
	if j.dotK != nil {
		kp := roundUp(K, 8)
		w.a = growAligned(w.a, M*kp+panelSlack)
		w.buf = grow(w.buf, max(len(w.buf), M*K, K))
		if j.widenOnce() {
			w.sk = growAligned(w.sk, j.sb*K)
		}
	}
	for {
		t := int(j.next.Add(1) - 1)
		if t >= j.items {
			return
		}
		b, part := t/j.nItems, t%j.nItems
		if b != packed && K > 0 {
			base := b * a.A.BatchStride
			switch {
			case j.dotK != nil:
				j.packRowsA(w, base, scale)
			case v.skinny.pairs:
				skinnyPackPairs(w.a, &a.A, base, M, K, w.h)
			case a.A.Trans:
				v.packRows(w.a, &a.A, base, a.A.LD, K, M, M, scale, w.buf)
			default:
				v.packCols(w.a, &a.A, base, a.A.LD, K, M, M, scale, w.buf)
			}
			packed = b
		}
		if j.dotK != nil {
			n0, n1 := itemRange(part, j.nItems, a.N, skinnyDotRows)
			for jj := n0; jj < n1; jj += j.sb {
				j.skinnyDots(w, b, jj, min(j.sb, n1-jj))
			}
			continue
		}
		if j.stripK != nil {
			n0, n1 := itemRange(part, j.nItems, a.N, 16)
			for jj := n0; jj < n1; jj += j.sb {
				j.skinnyStrips(w, b, jj, min(j.sb, n1-jj), n1)
			}
			continue
		}
		if j.rowsK != nil {
			n0, n1 := itemRange(part, j.nItems, a.N, 16)
			for jj := n0; jj < n1; jj += j.sb {
				j.skinnyRows(w, b, jj, min(j.sb, n1-jj))
			}
			continue
		}
		n0, n1 := itemRange(part, j.nItems, a.N, skinnyNB)
		for jj := n0; jj < n1; jj += j.sb * skinnyNB {
			j.skinnyBlock(w, b, jj, min(j.sb*skinnyNB, n1-jj))
		}
	}
}

// skinnyBlock computes columns [j0, j0+n) of D[b], n ≤ j.sb·skinnyNB:
// for each K block, the column blocks in turn, so that B is read a few
// hundred contiguous bytes of a row at a time (a page of B serves all of
// them while its TLB entry is warm) rather than 64 columns down the whole
// of K.
func (j *job) skinnyBlock(w *workspace, b, j0, n int) {
	a := j.a
	M, K, B := a.M, a.K, &a.B
	rows := len(j.skinny)
	kStep := 1 // K values per packed step of A
	if j.v.skinny.pairs {
		kStep = 2
	}
	sz := B.DType.Size()
	ldb := B.LD * sz
	c, ldc := &w.tile[0], skinnySB*skinnyNB
	if j.mode == destD {
		c, ldc = f32At(a.D.Data, b*a.D.BatchStride+j0), a.D.LD
	}
	for pc := 0; pc < K || pc == 0; pc += j.kc {
		kc := min(j.kc, K-pc)
		accum := 0
		if pc > 0 {
			accum = 1
		}
		for jb := 0; jb < n; jb += skinnyNB {
			mask := ^uint64(0) >> (64 - min(skinnyNB, n-jb))
			var bp unsafe.Pointer // not read when kc is 0
			if kc > 0 {
				bp = unsafe.Pointer(&B.Data[(b*B.BatchStride+pc*B.LD+j0+jb)*sz])
			}
			cb := unsafe.Add(unsafe.Pointer(c), 4*jb)
			// next is the block of B after this one, which the rest
			// kernels prefetch: the next column block, or the first
			// of the next K block; nil after the last.
			var next unsafe.Pointer
			switch {
			case kc == 0:
			case jb+skinnyNB < n:
				next = unsafe.Add(bp, skinnyNB*sz)
			case pc+j.kc < K:
				next = unsafe.Pointer(&B.Data[(b*B.BatchStride+(pc+j.kc)*B.LD+j0)*sz])
			}
			for g := 0; g < M; g += rows {
				r := min(rows, M-g)
				cg := (*float32)(unsafe.Add(cb, 4*g*ldc))
				ag := &w.a[pc/kStep*M+g]
				switch {
				case M <= rows:
					// One group of rows prefetches the next block
					// of B (its rows as it reads them), which the
					// next call reads from its first row: 32 rows
					// ahead in the same columns left each call's
					// first rows unprefetched (one thread, 1 row by
					// 4096×4096 f32 before the row kernels: 21–22
					// against 25 B-GB/cpu-s).
					pf := skinnyPF * ldb
					if next != nil {
						pf = int(uintptr(next) - uintptr(bp))
					}
					j.skinny[r-1](kc, ag, 4*M, bp, ldb, cg, 4*ldc, accum, mask, pf, nil)
				case g == 0:
					// The first rows keep a copy of the block of B.
					j.skinnyStore[r-1](kc, ag, 4*M, bp, ldb, cg, 4*ldc, accum, mask, skinnyPF*ldb, unsafe.Pointer(&w.sk[0]))
				case g == rows && next != nil:
					// The first further rows prefetch the next block.
					j.v.skinny.rest[r-1](kc, ag, 4*M, unsafe.Pointer(&w.sk[0]), 4*skinnyNB, cg, 4*ldc, accum, mask, ldb, next)
				default:
					j.v.skinny.rest[r-1](kc, ag, 4*M, unsafe.Pointer(&w.sk[0]), 4*skinnyNB, cg, 4*ldc, accum, mask, 0, unsafe.Pointer(&w.sk[0]))
				}
			}
		}
	}
	if j.mode != destD || j.epi {
		j.epilogue(w, b, 0, j0, M, n, c, ldc)
	}
}

// skinnyStrips computes columns [j0, j0+n) of D[b], n ≤ j.sb, with the
// strip kernel, K block by K block; end is the end of the item's columns,
// whose next run the last block's prefetches start on.
func (j *job) skinnyStrips(w *workspace, b, j0, n, end int) {
	a := j.a
	M, K, B := a.M, a.K, &a.B
	sz := B.DType.Size()
	ldb := B.LD * sz
	// The sums go to a tile whose rows are padded by a cache line: D's
	// rows, often a power of two apart, would all fall in one set of L1.
	c, ldc := &w.tile[0], roundUp(n, 16)+16
	mask := uint64(1)<<(n%16) - 1
	// Each step prefetches a line of the next block, its rows in
	// turn (pfLines lines a row, then pfSkip bytes on to the next row).
	pfLines := max(1, ceilDiv(n*sz, 64))
	pfSkip := ldb - 64*pfLines
	for pc := 0; pc < K || pc == 0; pc += j.kc {
		kc := min(j.kc, K-pc)
		accum := 0
		if pc > 0 {
			accum = 1
		}
		if kc == 0 {
			// K is zero: the kernel stores zero sums.
			j.stripK(0, &w.a[0], nil, ldb, c, 4*ldc, n, mask, 0, unsafe.Pointer(&w.a[0]), 1, 0, stripBuf(w))
			if mask != 0 && j.v.skinny.stripWhole {
				j.stripTail(w, b, 0, 0, j0, n, c, ldc, 0)
			}
			break
		}
		bp := unsafe.Pointer(&B.Data[(b*B.BatchStride+pc*B.LD+j0)*sz])
		// The next block: the next K block's, or after the last the
		// next run's first, or (after the item's last) this one again.
		next := bp
		switch {
		case pc+j.kc < K:
			next = unsafe.Add(bp, j.kc*ldb)
		case j0+n < end:
			next = unsafe.Pointer(&B.Data[(b*B.BatchStride+j0+n)*sz])
		}
		j.stripK(kc, &w.a[pc*M], bp, ldb, c, 4*ldc, n, mask, accum, next, pfLines, pfSkip, stripBuf(w))
		if mask != 0 && j.v.skinny.stripWhole {
			j.stripTail(w, b, pc, kc, j0, n, c, ldc, accum)
		}
	}
	j.tileOut(w, b, j0, n, w.tile[:M*ldc], ldc)
}

// stripTail computes, for strip kernels of whole strips only
// (stripWhole), the sums of the last n mod 16 of the n columns of D[b]
// from j0 on, over the K block of kc rows from pc: it widens those columns
// of B to f32, exactly, in w.sk (16 floats a row, zero past them) and runs
// the f32 strip kernel of M rows on that, storing (or adding to, with
// accum) 16 columns of the tile c (rows ldc floats apart) from the first
// of them on, which the tile's padding holds.
func (j *job) stripTail(w *workspace, b, pc, kc, j0, n int, c *float32, ldc int, accum int) {
	a, s := j.a, j.v.skinny
	B := &a.B
	whole, rem := n&^15, n%16
	j0 += whole
	buf := w.sk[:max(kc, 1)*16]
	clear(buf)
	for k := range kc {
		row := buf[k*16 : k*16+rem]
		o := b*B.BatchStride + (pc+k)*B.LD + j0
		switch B.DType {
		case tile.F32:
			copy(row, unsafe.Slice(f32At(B.Data, o), rem))
		case tile.BF16:
			for i, x := range unsafe.Slice((*uint16)(unsafe.Pointer(&B.Data[2*o])), rem) {
				row[i] = math.Float32frombits(uint32(x) << 16)
			}
		case tile.F16:
			for i, x := range unsafe.Slice((*uint16)(unsafe.Pointer(&B.Data[2*o])), rem) {
				row[i] = tile.F16ToF32(x)
			}
		case tile.E4M3:
			for i, x := range B.Data[o : o+rem] {
				row[i] = e4m3Table[x]
			}
		case tile.E5M2:
			for i, x := range B.Data[o : o+rem] {
				row[i] = e5m2Table[x]
			}
		}
	}
	ct := (*float32)(unsafe.Add(unsafe.Pointer(c), 4*whole))
	s.strip[a.M-s.stripMinM](kc, &w.a[pc*a.M], unsafe.Pointer(&buf[0]), 64, ct, 4*ldc, 16, 0, accum, unsafe.Pointer(&buf[0]), 1, 0, stripBuf(w))
}

// stripBuf is the buffer of the AVX2 strip kernels' copy of a strip of B
// (skinnyStripKC rows of 16 floats, 64-byte aligned), in w.sk past the
// part stripTail uses.
func stripBuf(w *workspace) unsafe.Pointer { return unsafe.Pointer(&w.sk[skinnyStripKC*16]) }

// tileOut writes the M×n tile t of sums (rows ldt floats apart) to
// columns [j0, j0+n) of D[b]: copied when D is the destination, then the
// epilogue if there is one.
func (j *job) tileOut(w *workspace, b, j0, n int, t []float32, ldt int) {
	a := j.a
	if j.mode == destD {
		for i := range a.M {
			copy(unsafe.Slice(f32At(a.D.Data, b*a.D.BatchStride+i*a.D.LD+j0), n), t[i*ldt:i*ldt+n])
		}
		if !j.epi {
			return
		}
		t, ldt = unsafe.Slice(f32At(a.D.Data, b*a.D.BatchStride+j0), 1), a.D.LD
	}
	j.epilogue(w, b, 0, j0, a.M, n, &t[0], ldt)
}

// skinnyRows computes columns [j0, j0+n) of D[b], n ≤ j.sb, with the
// row-streaming kernel: the sums of all of K in a tile of M rows of n
// floats (the rows padded by a cache line, so that they and the rows of B
// do not all fall in the same L1 sets), then the epilogue.
func (j *job) skinnyRows(w *workspace, b, j0, n int) {
	a := j.a
	M, K, B := a.M, a.K, &a.B
	sz := B.DType.Size()
	ldt := roundUp(n, 16) + 16
	t := w.tile[:M*ldt]
	clear(t)
	if K > 0 {
		bp := unsafe.Pointer(&B.Data[(b*B.BatchStride+j0)*sz])
		pf := B.LD * sz * max(4, roundUp(ceilDiv(skinnyRowPF, n*sz), 4))
		j.rowsK(K, &w.a[0], bp, B.LD*sz, &t[0], 4*ldt, n, uint64(1)<<(n%16)-1, pf)
	}
	j.tileOut(w, b, j0, n, t, ldt)
}

// skinnyPackPairs packs the M rows of op(A) (the first element at base) in
// bf16 pairs: word s·M+i of dst holds op(A)(i, 2s) in its low half and
// op(A)(i, 2s+1) in its high half, zero past K. h holds max(M, K) values.
func skinnyPackPairs(dst []float32, m *Matrix, base, M, K int, h []uint16) {
	d := unsafe.Slice((*uint32)(unsafe.Pointer(&dst[0])), ceilDiv(K, 2)*M)
	clear(d)
	if m.Trans {
		for k := range K {
			sh := 16 * (k & 1)
			row := d[k/2*M : k/2*M+M]
			for i, x := range loadBF16Run(m, base+k*m.LD, M, h) {
				row[i] |= uint32(x) << sh
			}
		}
		return
	}
	for i := range M {
		r := loadBF16Run(m, base+i*m.LD, K, h)
		for s := range K / 2 {
			d[s*M+i] = uint32(r[2*s]) | uint32(r[2*s+1])<<16
		}
		if K%2 != 0 {
			d[K/2*M+i] = uint32(r[K-1])
		}
	}
}

// packRowsA packs the M rows of op(A) (the first element at base), scaled
// by alpha, for the dot kernels: row i of op(A) at w.a[i·kp:], kp =
// roundUp(K, 8), contiguous in K.
func (j *job) packRowsA(w *workspace, base int, alpha float32) {
	a, v := j.a, j.v
	M, K, A := a.M, a.K, &a.A
	kp := roundUp(K, 8)
	if A.Trans {
		// op(A)(i, k) is stored at k·LD + i: a run of M a k.
		for k := range K {
			for i, x := range v.loadRun(A, base+k*A.LD, M, w.buf) {
				w.a[i*kp+k] = alpha * x
			}
		}
		return
	}
	for i := range M {
		row := w.a[i*kp : i*kp+K]
		for k, x := range v.loadRun(A, base+i*A.LD, K, w.buf) {
			row[k] = alpha * x
		}
	}
}

// widenOnce reports whether skinnyDots widens each block of j's float8 W
// to f32 once, for the f32 dot kernels, rather than in registers in every
// group of rows: with more than one group (M > 4), as the float8 kernels'
// widening costs more than their FMAs. The blocks are then of about
// skinnyDotBlock bytes of f32.
func (j *job) widenOnce() bool { return tile.IsFloat8(j.a.B.DType) && j.a.M > 4 }

// skinnyDots computes columns [j0, j0+n) of D[b], n ≤ j.sb, with the dot
// kernels: the rows of A in groups of up to 4, as even as can be, each
// group taking the n rows of W in turn, 3 or 4 (its kernels' nr) at a
// time, into a tile of M rows of n sums (padded by a cache line); the
// last K mod 8 elements of each dot product are added in Go, in the order
// of k; then the tile goes out through the epilogue (tileOut).
func (j *job) skinnyDots(w *workspace, b, j0, n int) {
	a := j.a
	M, K, B := a.M, a.K, &a.B
	sz := B.DType.Size()
	kp := roundUp(K, 8)
	ldt := roundUp(n, 16) + 16
	t := w.tile[:M*ldt]
	k8 := K / 8
	groups := ceilDiv(M, 4)
	// Row jj of the block is at w0 + jj·ldb.
	dotK, ldb := j.dotK, B.LD*sz
	var w0 unsafe.Pointer
	switch {
	case k8 == 0:
	case j.widenOnce():
		// Widen the block to f32 once for all the groups.
		for r := range n {
			o := b*B.BatchStride + (j0+r)*B.LD
			_ = tile.DecodeFloat8ToF32(B.DType, w.sk[r*K:(r+1)*K], B.Data[o:o+K], 1)
		}
		dotK, w0, ldb = j.v.skinny.dotF32, unsafe.Pointer(&w.sk[0]), 4*K
	default:
		w0 = unsafe.Pointer(&B.Data[(b*B.BatchStride+j0*B.LD)*sz])
	}
	for g := range groups {
		i0, i1 := M*g/groups, M*(g+1)/groups
		mr := i1 - i0
		ks := dotK[mr-1]
		nr := len(ks)
		for jj := 0; jj < n; jj += nr {
			r := min(nr, n-jj)
			if k8 == 0 {
				for i := i0; i < i1; i++ {
					clear(t[i*ldt+jj : i*ldt+jj+r])
				}
				continue
			}
			ks[r-1](k8, &w.a[i0*kp], 4*kp, unsafe.Add(w0, jj*ldb), ldb, &t[i0*ldt+jj], 4*ldt)
		}
	}
	if k0 := 8 * k8; k0 < K {
		for jj := range n {
			o := b*B.BatchStride + (j0+jj)*B.LD
			for i := range M {
				s := t[i*ldt+jj]
				for k := k0; k < K; k++ {
					s += w.a[i*kp+k] * loadF32(B.DType, B.Data, o+k)
				}
				t[i*ldt+jj] = s
			}
		}
	}
	j.tileOut(w, b, j0, n, t, ldt)
}
