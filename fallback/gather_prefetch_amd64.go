package fallback

import "unsafe"

// prefetchRange asks the CPU to start loading the cache lines of
// [p, p+n) (a hint: it never faults and changes no memory).
//
//go:noescape
func prefetchRange(p unsafe.Pointer, n int)

const havePrefetch = true
