package fallback

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/tcrt-go/tcrt/tile"
)

// GatherCASArgs is one gather-compare-and-swap on host memory (MGATHER_CAS).
// The transfer type is Dst's element type (8, 16, 32 or 64 bits, compared
// and stored as raw bits). For each valid coordinate (r, c) the element at
// byte address Base + idx[r, c] of Mem (the displacement sign-extended for
// s32/s64 indices, zero-extended for u32/u64) is atomically compared with
// Expected[r, c] and, if equal, replaced by Replacement[r, c]; Dst[r, c]
// receives the value observed. Dst's non-valid elements get its pad. Idx,
// Expected and Replacement have Dst's valid shape (their own physical shape
// and layout). Mem must start at an 8-byte aligned address (runtime buffers
// do) and must not overlap Dst.
type GatherCASArgs struct {
	Mem                        []byte
	Base                       int
	Idx, Expected, Replacement TileData
	Dst                        TileData
	// Threads bounds the goroutines used; 0 means GOMAXPROCS.
	Threads int
}

const opGatherCAS = "mgather_cas"

// casPrefetchAhead is how many lanes ahead the gather-CAS prefetches the
// memory word: random addresses miss the cache, and a locked instruction
// waits for its miss alone.
const casPrefetchAhead = 16

// casAddress preflights the lane at (r, c): its byte address, or the access
// fault.
func casAddress(a *GatherCASArgs, r, c int) (int, error) {
	return CASAddress(a.Base, a.Idx.index(r, c), a.Idx.Tile.DType, r, c, len(a.Mem), a.Dst.Tile.DType.Size())
}

// CASAddress is the preflight of one gather-CAS lane at (r, c) whose raw
// displacement (as tile.LoadIndex reads it from an index of type d) counts
// from base in a memory of memBytes bytes: the byte address of its
// size-byte element, or the access fault (ErrBounds) the CPU kernels
// return. GPU backends use it to report a fault their preflight found.
func CASAddress(base int, raw uint64, d tile.DType, r, c, memBytes, size int) (int, error) {
	addr, f := tile.ResolveDisplacement(base, raw, d.IsSigned(), memBytes, size)
	switch f {
	case tile.DispOutside:
		return 0, tile.Errorf(tile.ErrBounds, opGatherCAS, "idx", "displacement %s at (%d, %d) from base %d puts a %d-byte element outside the %d-byte memory",
			fmtIndex(raw, d), r, c, base, size, memBytes)
	case tile.DispMisaligned:
		return 0, tile.Errorf(tile.ErrBounds, opGatherCAS, "idx", "displacement %s at (%d, %d) from base %d gives address %d, not a multiple of the %d-byte transfer type",
			fmtIndex(raw, d), r, c, base, int64(base)+int64(raw), size)
	}
	return addr, nil
}

func memAligned(mem []byte) error {
	if len(mem) > 0 && uintptr(unsafe.Pointer(&mem[0]))%8 != 0 {
		return fmt.Errorf("tcrt: %s: memory does not start at an 8-byte aligned address: %w", opGatherCAS, tile.ErrArgument)
	}
	return nil
}

// GatherCASRef is the reference: every lane's address preflighted, then the
// lanes in row-major order with plain reads and writes into a staged
// destination, padded and published at the end. On a fault Mem and Dst are
// unchanged.
func GatherCASRef(a *GatherCASArgs) error {
	if err := memAligned(a.Mem); err != nil {
		return err
	}
	dst := a.Dst.Tile
	for r := 0; r < dst.ValidRows; r++ {
		for c := 0; c < dst.ValidCols; c++ {
			if _, err := casAddress(a, r, c); err != nil {
				return err
			}
		}
	}
	staged := tile.Stage(a.Dst.Data)
	tile.FillPad(dst, staged)
	sz := dst.DType.Size()
	for r := 0; r < dst.ValidRows; r++ {
		for c := 0; c < dst.ValidCols; c++ {
			addr, _ := casAddress(a, r, c)
			old := loadPlain(a.Mem, addr, sz)
			if old == a.Expected.elem(r, c) {
				storePlain(a.Mem, addr, sz, a.Replacement.elem(r, c))
			}
			storePlain(staged, dst.At(r, c)*sz, sz, old)
		}
	}
	tile.Publish(a.Dst.Data, staged)
	return nil
}

// GatherCASFast preflights every lane in parallel, then runs the lanes'
// atomic compare-and-swaps (each under its element's stripe lock) on
// Threads goroutines (lanes with the same
// address serialise in whatever order the hardware gives), collecting the
// observed values in a staged destination that is padded and published with
// one copy when every lane has finished.
func GatherCASFast(a *GatherCASArgs) error {
	if err := memAligned(a.Mem); err != nil {
		return err
	}
	p := threads(a.Threads)
	dst := a.Dst.Tile
	vr, vc := dst.ValidRows, dst.ValidCols
	n := vr * vc
	addrs := make([]int, n)
	var mu sync.Mutex
	firstBad := -1
	var firstErr error
	parallelFor(n, p, 4096, func(lo, hi int) {
		for l := lo; l < hi; l++ {
			addr, err := casAddress(a, l/vc, l%vc)
			if err != nil {
				mu.Lock()
				if firstBad < 0 || l < firstBad {
					firstBad, firstErr = l, err
				}
				mu.Unlock()
				return
			}
			addrs[l] = addr
		}
	})
	if firstErr != nil {
		return firstErr
	}
	staged := tile.Stage(a.Dst.Data)
	tile.FillPad(dst, staged)
	sz := dst.DType.Size()
	parallelFor(n, p, 64, func(lo, hi int) {
		for l := lo; l < hi; l++ {
			if havePrefetch && l+casPrefetchAhead < hi {
				prefetchRange(unsafe.Pointer(&a.Mem[addrs[l+casPrefetchAhead]]), 1)
			}
			r, c := l/vc, l%vc
			// Under the element's stripe lock, so that the swap cannot
			// fall inside another op's locked update (see stripes.go).
			lk := &stripes[stripeAt(a.Mem, addrs[l])]
			lk.Lock()
			obs := AtomicCAS(a.Mem, addrs[l], sz, a.Expected.elem(r, c), a.Replacement.elem(r, c))
			lk.Unlock()
			storePlain(staged, dst.At(r, c)*sz, sz, obs)
		}
	})
	tile.Publish(a.Dst.Data, staged)
	return nil
}
