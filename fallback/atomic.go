package fallback

import (
	"math"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tcrt-go/tcrt/tile"
)

// The atomic primitives below work on elements of 1, 2, 4 or 8 bytes at a
// byte offset of a host memory slice. 32- and 64-bit elements use sync/atomic
// directly; 8- and 16-bit elements use compare-and-swap loops on the aligned
// 32-bit word that contains them, so neighbouring bytes are never disturbed.
// Elements are little-endian (tcrt's hosts are little-endian), and a 4- or
// 8-byte element must lie at an address that is a multiple of its size.
//
// An 8- or 16-bit element whose containing word reaches past the end of the
// slice (the last bytes of an allocation whose length is not a multiple of
// four) is updated under a striped lock instead; every access to those bytes
// through these functions takes the same lock, provided callers always pass
// the whole allocation (the runtime passes a buffer's whole host memory).

// subLocks serialise sub-word updates whose containing word is not wholly
// inside the slice.
var subLocks [64]sync.Mutex

func ptr32(mem []byte, off int) *uint32 { return (*uint32)(unsafe.Pointer(&mem[off])) }
func ptr64(mem []byte, off int) *uint64 { return (*uint64)(unsafe.Pointer(&mem[off])) }

// subWord locates the 32-bit word containing the size-byte element at off:
// the word, the bit shift of the element inside it and its mask. ok is false
// when the word is not wholly inside mem.
func subWord(mem []byte, off, size int) (w *uint32, shift uint, mask uint32, ok bool) {
	mis := int(uintptr(unsafe.Pointer(&mem[off])) & 3)
	start := off - mis
	if start < 0 || start+4 > len(mem) {
		return nil, 0, 0, false
	}
	shift = uint(mis * 8)
	mask = uint32(1)<<(8*uint(size)) - 1
	if size == 4 {
		mask = math.MaxUint32
	}
	return ptr32(mem, start), shift, mask << shift, true
}

func lockFor(mem []byte, off int) *sync.Mutex {
	return &subLocks[(uintptr(unsafe.Pointer(&mem[off]))>>2)%uintptr(len(subLocks))]
}

// loadPlain and storePlain read and write a little-endian element.
func loadPlain(mem []byte, off, size int) uint64 {
	var v uint64
	for k := size - 1; k >= 0; k-- {
		v = v<<8 | uint64(mem[off+k])
	}
	return v
}

func storePlain(mem []byte, off, size int, v uint64) {
	for k := 0; k < size; k++ {
		mem[off+k] = byte(v >> (8 * k))
	}
}

// AtomicLoad atomically reads the size-byte element at byte offset off.
func AtomicLoad(mem []byte, off, size int) uint64 {
	switch size {
	case 4:
		return uint64(atomic.LoadUint32(ptr32(mem, off)))
	case 8:
		return atomic.LoadUint64(ptr64(mem, off))
	}
	w, shift, mask, ok := subWord(mem, off, size)
	if !ok {
		l := lockFor(mem, off)
		l.Lock()
		defer l.Unlock()
		return loadPlain(mem, off, size)
	}
	return uint64((atomic.LoadUint32(w) & mask) >> shift)
}

// AtomicStore atomically writes v (its low size bytes) to the element at
// byte offset off.
func AtomicStore(mem []byte, off, size int, v uint64) {
	switch size {
	case 4:
		atomic.StoreUint32(ptr32(mem, off), uint32(v))
		return
	case 8:
		atomic.StoreUint64(ptr64(mem, off), v)
		return
	}
	atomicUpdateSub(mem, off, size, func(uint64) uint64 { return v })
}

// AtomicCAS atomically compares the element at byte offset off with old and,
// if the raw bits are equal, replaces it with new. It returns the value it
// observed (old exactly when the swap happened).
func AtomicCAS(mem []byte, off, size int, old, new uint64) uint64 {
	switch size {
	case 4:
		// Load first: a lane that will fail needs no locked instruction
		// (and plain loads of many lanes can miss the cache in parallel).
		// The load that sees a different value is the lane's atomic
		// observation; a failed CAS retries so that a value that changed
		// back to old in between is not reported as a failure.
		p := ptr32(mem, off)
		for {
			if cur := atomic.LoadUint32(p); cur != uint32(old) {
				return uint64(cur)
			}
			if atomic.CompareAndSwapUint32(p, uint32(old), uint32(new)) {
				return old
			}
		}
	case 8:
		p := ptr64(mem, off)
		for {
			if cur := atomic.LoadUint64(p); cur != old {
				return cur
			}
			if atomic.CompareAndSwapUint64(p, old, new) {
				return old
			}
		}
	}
	w, shift, mask, ok := subWord(mem, off, size)
	if !ok {
		l := lockFor(mem, off)
		l.Lock()
		defer l.Unlock()
		cur := loadPlain(mem, off, size)
		if cur == old {
			storePlain(mem, off, size, new)
		}
		return cur
	}
	for {
		cur := atomic.LoadUint32(w)
		obs := uint64((cur & mask) >> shift)
		if obs != old {
			return obs
		}
		if atomic.CompareAndSwapUint32(w, cur, cur&^mask|uint32(new)<<shift&mask) {
			return obs
		}
	}
}

// atomicUpdateSub applies f to the 8- or 16-bit element at off through a
// CAS loop on its containing word and returns the old value.
func atomicUpdateSub(mem []byte, off, size int, f func(uint64) uint64) uint64 {
	w, shift, mask, ok := subWord(mem, off, size)
	if !ok {
		l := lockFor(mem, off)
		l.Lock()
		defer l.Unlock()
		old := loadPlain(mem, off, size)
		storePlain(mem, off, size, f(old))
		return old
	}
	for {
		cur := atomic.LoadUint32(w)
		old := uint64((cur & mask) >> shift)
		nv := f(old)
		if nv == old {
			return old
		}
		if atomic.CompareAndSwapUint32(w, cur, cur&^mask|uint32(nv)<<shift&mask) {
			return old
		}
	}
}

// AtomicRMW atomically replaces the element e of type d at byte offset off
// with Combine(op, d, e, v) and returns e. Integer adds use the hardware
// add; everything else is a compare-and-swap loop.
func AtomicRMW(mem []byte, off int, d tile.DType, op ScatterOp, v uint64) uint64 {
	size := d.Size()
	if op == ScatterStore {
		if size >= 4 {
			AtomicStore(mem, off, size, v)
			return 0
		}
		return atomicUpdateSub(mem, off, size, func(uint64) uint64 { return v })
	}
	switch size {
	case 4:
		p := ptr32(mem, off)
		if op == ScatterAdd && (d == tile.S32 || d == tile.U32) {
			return uint64(atomic.AddUint32(p, uint32(v)) - uint32(v))
		}
		for {
			cur := atomic.LoadUint32(p)
			nv := uint32(Combine(op, d, uint64(cur), v))
			if nv == cur || atomic.CompareAndSwapUint32(p, cur, nv) {
				return uint64(cur)
			}
		}
	case 8:
		p := ptr64(mem, off)
		if op == ScatterAdd && (d == tile.S64 || d == tile.U64) {
			return atomic.AddUint64(p, v) - v
		}
		for {
			cur := atomic.LoadUint64(p)
			nv := Combine(op, d, cur, v)
			if nv == cur || atomic.CompareAndSwapUint64(p, cur, nv) {
				return cur
			}
		}
	}
	return atomicUpdateSub(mem, off, size, func(old uint64) uint64 { return Combine(op, d, old, v) })
}

// Combine is the reduction of a scatter: the new raw bits of an element of
// type d holding old when value v arrives.
//
//   - Store: v.
//   - Add: integers wrap; f32 and f64 add with IEEE round-to-nearest-even;
//     f16 and bf16 add in f32 and round once to the type (which is the
//     correctly rounded sum, f32 having more than twice their precision).
//     A NaN operand gives that NaN, quieted. When both are NaN the result
//     is one of them, quieted, and which one is not specified: it follows
//     the operand order of the instruction the compiler chose, which
//     differs between builds (-race) and between the CPU's paths, and the
//     GPU kernels may return either.
//   - Max and Min: integers by value (signed or unsigned); floats in the
//     order where −0 is below +0; a NaN arriving never replaces, and a NaN
//     already held is never replaced, so the result is the same in any
//     order.
func Combine(op ScatterOp, d tile.DType, old, v uint64) uint64 {
	switch op {
	case ScatterStore:
		return v
	case ScatterAdd:
		switch d {
		case tile.F32:
			return uint64(math.Float32bits(math.Float32frombits(uint32(old)) + math.Float32frombits(uint32(v))))
		case tile.F64:
			return math.Float64bits(math.Float64frombits(old) + math.Float64frombits(v))
		case tile.F16:
			return uint64(tile.F32ToF16(tile.F16ToF32(uint16(old)) + tile.F16ToF32(uint16(v))))
		case tile.BF16:
			return uint64(tile.F32ToBF16(tile.BF16ToF32(uint16(old)) + tile.BF16ToF32(uint16(v))))
		case tile.S32, tile.U32:
			return uint64(uint32(old) + uint32(v))
		case tile.S64, tile.U64:
			return old + v
		}
	case ScatterMax:
		if !isNaN(d, old) && !isNaN(d, v) && before(d, old, v) {
			return v
		}
	case ScatterMin:
		if !isNaN(d, old) && !isNaN(d, v) && before(d, v, old) {
			return v
		}
	}
	return old
}

// before reports whether a orders strictly below b (integers by value,
// floats with −0 below +0; NaN never orders).
func before(d tile.DType, a, b uint64) bool {
	switch d {
	case tile.S32:
		return int32(a) < int32(b)
	case tile.U32:
		return uint32(a) < uint32(b)
	case tile.S64:
		return int64(a) < int64(b)
	case tile.U64:
		return a < b
	case tile.F32:
		fa, fb := math.Float32frombits(uint32(a)), math.Float32frombits(uint32(b))
		if fa == 0 && fb == 0 {
			return a != b && a>>31 == 1 // −0 < +0
		}
		return fa < fb
	case tile.F64:
		fa, fb := math.Float64frombits(a), math.Float64frombits(b)
		if fa == 0 && fb == 0 {
			return a != b && a>>63 == 1
		}
		return fa < fb
	}
	return false
}

func isNaN(d tile.DType, v uint64) bool {
	switch d {
	case tile.F32:
		return v&0x7fffffff > 0x7f800000
	case tile.F64:
		return v&(1<<63-1) > 0x7ff0000000000000
	}
	return false
}
