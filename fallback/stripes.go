package fallback

import (
	"sync"
	"unsafe"
)

// Stripe locks: how the CPU kernels keep read-modify-writes that are more
// than one instruction atomic with respect to each other.
//
// Host memory is cut into 4 KiB pages, and each page hashes to one of
// numStripes locks. An element belongs to the page of its first byte. A
// kernel that updates elements with plain loads and stores (vectorised row
// updates, float reductions, stores, sub-word elements) holds the lock of
// every element's page while it updates it, and a gather-CAS holds it
// around its compare-and-swap; so every update of an element made through
// tcrt is atomic, whatever op and stream made it. The only updates made
// without the lock are single hardware atomic instructions (the integer
// reductions of MScatter: LOCK XADD and CAS loops), which the locked paths
// cannot split, since an element is always updated through one element
// type: under the lock, a store of such an element is a whole aligned
// store.
//
// Locks are taken one at a time, never nested, so they cannot deadlock.
const (
	stripeShift = 12 // 4 KiB pages
	stripeBits  = 10
	numStripes  = 1 << stripeBits
)

// stripe is one lock, alone on its cache line.
type stripe struct {
	sync.Mutex
	_ [64 - unsafe.Sizeof(sync.Mutex{})]byte
}

var stripes [numStripes]stripe

// stripeOf is the index of the lock of the page holding address p.
func stripeOf(p uintptr) int {
	return int((uint64(p>>stripeShift) * 0x9e3779b97f4a7c15) >> (64 - stripeBits))
}

// stripeAt is the lock index of the element at byte offset off of mem.
func stripeAt(mem []byte, off int) int {
	return stripeOf(uintptr(unsafe.Pointer(unsafe.SliceData(mem))) + uintptr(off))
}

// addF32Fast, when set, adds a prefix of src to dst with vector code and
// returns its length.
var addF32Fast func(dst, src []float32) int

// addF32 sets dst[i] += src[i] (len(src) ≥ len(dst)).
func addF32(dst, src []float32) {
	src = src[:len(dst)]
	i := 0
	if addF32Fast != nil {
		i = addF32Fast(dst, src)
	}
	for ; i+8 <= len(dst); i += 8 {
		d := (*[8]float32)(dst[i:])
		s := (*[8]float32)(src[i:])
		d[0] += s[0]
		d[1] += s[1]
		d[2] += s[2]
		d[3] += s[3]
		d[4] += s[4]
		d[5] += s[5]
		d[6] += s[6]
		d[7] += s[7]
	}
	for ; i < len(dst); i++ {
		dst[i] += src[i]
	}
}
