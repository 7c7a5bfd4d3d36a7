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

// cacheBlocking sizes the blocks for an MR×NR micro-kernel: the kc×NR
// panel of B that MC/MR kernel calls in a row read is twice the size of
// L1D, the mc×kc block of A takes half of L2, the kc×nc block of B the
// worker's share of L3.
//
// A B panel that big does not stay in L1D: it comes from L2 beside the A
// panel streaming through, which the kernel's 184 bytes per 14 cycles do
// not strain. What the longer kc buys is fewer passes over C: each K block
// loads and stores the whole of C, and the 14 rows of a C tile, when D's
// rows are a power of two apart, all fall in one L1 set, so its loads
// miss L1 however early they are prefetched (the same 2048³ product with
// D's rows padded by 16 floats ran 1.03× as fast). On Zen 5 (48 KiB L1D,
// 1 MiB L2) the 14×32 AVX-512 kernel gets kc = 768, mc = 168, nc = 1344;
// against the earlier kc = 384 (one L1D), mc = 336, nc = 2720, two-core
// products ran 1.057× as fast at 2048³, 1.025× at 1024³ and 1.034× at
// 512³ (medians of the ratios of 5 alternated rounds, idle machine). With
// kc = 256 and 512 before that, 2048³ had run within 1% of kc = 384's
// time by CPU time on a busy machine.
func cacheBlocking(mr, nr int) blocking {
	l1, l2, l3 := cacheSizes()
	kc := 2 * l1 / (4 * nr)
	kc = min(1024, max(16, kc&^7))
	mc := max(mr, (l2/2)/(4*kc)/mr*mr)
	nc := max(nr, l3/(4*kc)/nr*nr)
	return blocking{kc: kc, mc: mc, nc: nc}
}
