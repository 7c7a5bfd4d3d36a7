package fallback

import (
	"math"
	"sync"
	"testing"
	"unsafe"

	"github.com/tcrt-go/tcrt/tile"
)

// TestSubWordCASConcurrent has goroutines increment neighbouring 8- and
// 16-bit elements of the same words through CAS loops (including elements
// whose word reaches past the slice, which take the lock path): every
// increment must land and no neighbour may be disturbed.
func TestSubWordCASConcurrent(t *testing.T) {
	rounds := 200000
	if testing.Short() {
		rounds = 50000
	}
	for _, size := range []int{1, 2} {
		mem := make([]byte, 6*size) // for bytes, elements 4 and 5 have no whole word in the slice
		n := len(mem) / size
		var wg sync.WaitGroup
		for e := 0; e < n; e++ {
			for g := 0; g < 2; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < rounds; i++ {
						for {
							old := AtomicLoad(mem, e*size, size)
							if AtomicCAS(mem, e*size, size, old, (old+1)&(1<<(8*size)-1)) == old {
								break
							}
						}
					}
				}()
			}
		}
		wg.Wait()
		for e := 0; e < n; e++ {
			if got, want := AtomicLoad(mem, e*size, size), uint64(2*rounds)&(1<<(8*size)-1); got != want {
				t.Errorf("size %d element %d = %d, want %d", size, e, got, want)
			}
		}
	}
}

// TestTailLockPath uses a 6-byte slice: bytes 4 and 5 have no whole word
// inside the slice.
func TestTailLockPath(t *testing.T) {
	big := make([]byte, 64)
	off := int(-uintptr(unsafe.Pointer(&big[0])) & 7)
	mem := big[off : off+6 : off+6]
	if _, _, _, ok := subWord(mem, 4, 2); ok {
		t.Fatal("the word of bytes 4-5 should reach past the slice")
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				AtomicRMW(mem, 4, tile.F16, ScatterAdd, uint64(tile.F32ToF16(1)))
				AtomicRMW(mem, 0, tile.F16, ScatterAdd, uint64(tile.F32ToF16(1)))
			}
		}()
	}
	wg.Wait()
	for _, off := range []int{0, 4} {
		if got := tile.F16ToF32(uint16(AtomicLoad(mem, off, 2))); got != 2048 { // f16 integers are exact to 2048
			t.Errorf("f16 at %d = %v, want 2048", off, got)
		}
	}
}

func TestCombine(t *testing.T) {
	f := func(v float32) uint64 { return uint64(math.Float32bits(v)) }
	negZero, nan := f(float32(math.Copysign(0, -1))), uint64(0x7fc00000)
	cases := []struct {
		op        ScatterOp
		d         tile.DType
		old, v, w uint64
	}{
		{ScatterMax, tile.F32, negZero, f(0), f(0)},
		{ScatterMax, tile.F32, f(0), negZero, f(0)},
		{ScatterMin, tile.F32, f(0), negZero, negZero},
		{ScatterMin, tile.F32, negZero, f(0), negZero},
		{ScatterMax, tile.F32, f(1), nan, f(1)},
		{ScatterMax, tile.F32, nan, f(1), nan},
		{ScatterMax, tile.F32, f(-3), f(2), f(2)},
		{ScatterMin, tile.S32, 5, uint64(math.MaxUint32), uint64(math.MaxUint32)}, // −1 < 5
		{ScatterMin, tile.U32, 5, uint64(math.MaxUint32), 5},
		{ScatterAdd, tile.S32, uint64(math.MaxUint32), 2, 1},
		{ScatterAdd, tile.F16, uint64(tile.F32ToF16(1)), uint64(tile.F32ToF16(0.5)), uint64(tile.F32ToF16(1.5))},
		{ScatterAdd, tile.BF16, uint64(tile.F32ToBF16(256)), uint64(tile.F32ToBF16(1)), uint64(tile.F32ToBF16(256))}, // ties to even
	}
	for _, c := range cases {
		if got := Combine(c.op, c.d, c.old, c.v); got != c.w {
			t.Errorf("Combine(%v, %v, %#x, %#x) = %#x, want %#x", c.op, c.d, c.old, c.v, got, c.w)
		}
		if got := refCombine(c.op, c.d, c.old, c.v); got != c.w {
			t.Errorf("refCombine(%v, %v, %#x, %#x) = %#x, want %#x", c.op, c.d, c.old, c.v, got, c.w)
		}
	}
}
