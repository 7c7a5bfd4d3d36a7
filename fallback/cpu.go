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
// arrangement: the kc×NR panel of B that one kernel call streams MC/MR times
// stays in L1 next to the MR×kc panel of A, the mc×kc block of A stays in
// L2, and the kc×nc block of B in the worker's share of L3.
func cacheBlocking(mr, nr int) blocking {
	l1, l2, l3 := cacheSizes()
	// B panel plus A panel in about 2/3 of L1; the rest for the C tile and
	// the lines in flight.
	kc := (l1 * 2 / 3) / (4 * (mr + nr))
	kc = max(16, kc&^7)
	mc := max(mr, (l2/2)/(4*kc)/mr*mr)
	nc := max(nr, l3/(4*kc)/nr*nr)
	return blocking{kc: kc, mc: mc, nc: nc}
}
