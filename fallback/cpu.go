package fallback

import "github.com/klauspost/cpuid/v2"

// blocking holds the cache block sizes of the matmul fast path, in elements:
// a K block of kc, an M block of mc rows (a multiple of MR) and an N block of
// nc columns (a multiple of NR).
type blocking struct {
	kc, mc, nc int
}

// Cache sizes assumed when cpuid cannot tell (it reports 0 or -1): a small
// current core.
const (
	defaultL1D = 32 << 10
	defaultL2  = 512 << 10
	defaultL3  = 8 << 20
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
// stays in L1, where it gets 2/3 (the MR×kc panel of A streams through the
// rest from L2); the mc×kc block of A stays in half of L2; the kc×nc block
// of B in the worker's share of L3. On Zen 5 (48 KiB L1D, 1 MiB L2) the
// 14×32 AVX-512 kernel gets kc = 256, mc = 504: in single-core runs of
// 2048³ that was as fast as any kc from 128 to 384 and faster than most.
func cacheBlocking(mr, nr int) blocking {
	l1, l2, l3 := cacheSizes()
	kc := (l1 * 2 / 3) / (4 * nr)
	kc = min(1024, max(16, kc&^7))
	mc := max(mr, (l2/2)/(4*kc)/mr*mr)
	nc := max(nr, l3/(4*kc)/nr*nr)
	return blocking{kc: kc, mc: mc, nc: nc}
}
