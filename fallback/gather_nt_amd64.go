//go:build amd64 && !purego

package fallback

import (
	"unsafe"

	"github.com/klauspost/cpuid/v2"
	"github.com/tcrt-go/tcrt/internal/cpufeat"
)

// copyRowsNT copies, for r in [0, n), the rb bytes at mem + pos[r]·rb to
// dst + r·dstStride (zeros where pos[r] < 0) with non-temporal 32-byte
// stores, prefetching the row pos[r+ahead] while it copies row r, and ends
// with SFENCE. rb must be a positive multiple of 64, every destination row
// 64-byte aligned, and every row it names inside mem: the caller checks.
//
//go:noescape
func copyRowsNT(dst unsafe.Pointer, dstStride int, mem unsafe.Pointer, rb int, pos *int, n int, ahead int)

// haveNTRows says copyRowsNT can run here (it needs AVX, unmasked).
func haveNTRows() bool { return cpufeat.Supports(cpuid.AVX) }
