//go:build !amd64 || purego

package fallback

import "unsafe"

func copyRowsNT(dst unsafe.Pointer, dstStride int, mem unsafe.Pointer, rb int, pos *int, n int, ahead int) {
	panic("fallback: copyRowsNT without amd64 assembly")
}

func haveNTRows() bool { return false }
