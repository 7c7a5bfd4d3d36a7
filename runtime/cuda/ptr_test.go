package cuda_test

import "unsafe"

// ptr is the address of b's first byte.
func ptr(b []byte) unsafe.Pointer { return unsafe.Pointer(&b[0]) }
