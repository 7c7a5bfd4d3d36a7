package fallback

import "github.com/klauspost/cpuid/v2"

// blocking holds the cache block sizes of the matmul fast path, in elements:
// a K block of kc, an M block of mc rows (a multiple of MR) and an N block of
// nc columns (a multiple of NR).
type blocking struct {
	kc, mc, nc int
}

// Cache sizes assumed when cpuid cannot tell (it reports 0 or -1, as for
// L3 in some virtual machines): a small current core, and a small server's
// L3.
const (
	defaultL1D = 32 << 10
	defaultL2  = 512 << 10
	defaultL3  = 16 << 20
)

// cacheSizes returns the L1D, L2 and L3 sizes in bytes, with defaults for
// what cpuid does not report.
func cacheSizes() (l1, l2, l3 int) {
	l1, l2, l3 = cpuid.CPU.Cache.L1D, cpuid.CPU.Cache.L2, cpuid.CPU.Cache.L3
	if l1 <= 0 {
		l1 = defaultL1D
	}
	if l2 <= 0 {
		l2 = defaultL2
	}
	if l3 <= 0 {
		l3 = defaultL3
	}
	// L3 is shared by the cores of a CCX: assume each worker gets 1/4 of it
	// (and no more than 4 MiB), however big it is.
	l3 = min(l3/4, 4<<20)
	return l1, l2, l3
}

// cacheBlocking sizes the blocks for an MR×NR micro-kernel, in the usual
// arrangement: the kc×NR panel of B that MC/MR kernel calls in a row read
// is about the size of L1D, the mc×kc block of A takes half of L2, the
// kc×nc block of B the worker's share of L3.
//
// A B panel as big as L1D does not stay there whole: the A panel streams
// through L1 beside it, and part of each comes from L2, which the kernel's
// 184 bytes per 14 cycles do not strain. What the longer kc buys is fewer
// passes over C: each K block loads and stores the whole of C. On Zen 5
// (48 KiB L1D, 1 MiB L2) that gives the 14×32 AVX-512 kernel kc = 384 and
// mc = 336; two-core 2048³ products on an otherwise idle machine ran at
// 320–345 GFLOP/s with kc = 256 and 340–360 with kc = 384 or 512. By
// process CPU time on a busy machine (load 6–10; kc and mc alternated
// product by product in one process, medians over blocks of 10), 2048³
// with kc = 256 took 1.005 times kc = 384's, and 512³ with kc = 512 (one
// K block) 1.008 times: the B panel's falling out of L1D under the
// streaming A panel costs nothing measurable.
func cacheBlocking(mr, nr int) blocking {
	l1, l2, l3 := cacheSizes()
	kc := l1 / (4 * nr)
	kc = min(1024, max(16, kc&^7))
	mc := max(mr, (l2/2)/(4*kc)/mr*mr)
	nc := max(nr, l3/(4*kc)/nr*nr)
	return blocking{kc: kc, mc: mc, nc: nc}
}
