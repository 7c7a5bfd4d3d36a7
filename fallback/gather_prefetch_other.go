//go:build !amd64

package fallback

import "unsafe"

func prefetchRange(p unsafe.Pointer, n int) {}

const havePrefetch = false
