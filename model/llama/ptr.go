package llama

import "unsafe"

// uintptrOf is the address of b's first byte (b non-empty).
func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
