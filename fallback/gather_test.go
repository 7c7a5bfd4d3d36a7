package fallback

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/tcrt-go/tcrt/internal/longtest"
	"github.com/tcrt-go/tcrt/tile"
)

var idxTypes = []tile.DType{tile.S32, tile.U32, tile.S64, tile.U64}

// randPad picks one of every pad kind, explicit bits fitting d.
func randPad(rng *rand.Rand, d tile.DType) tile.Pad {
	switch k := tile.PadKind(rng.IntN(5)); k {
	case tile.PadBits:
		return tile.PadValue(rng.Uint64() >> (64 - d.Bits()))
	default:
		return tile.Pad{Kind: k}
	}
}

// randTile makes a resolved tile with valid region vr × vc, a physical
// region up to 3 larger in each dimension, a random layout and pad, and
// random contents.
func randTile(rng *rand.Rand, d tile.DType, vr, vc int, pad bool) TileData {
	t := tile.Tile{DType: d, ValidRows: vr, ValidCols: vc, Rows: vr + rng.IntN(4), Cols: vc + rng.IntN(4),
		Layout: tile.Layout(rng.IntN(2))}
	if pad {
		t.Pad = randPad(rng, d)
	}
	data := make([]byte, t.Bytes())
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	return TileData{Tile: t, Data: data}
}

func putIndex(t *TileData, r, c int, v int64) {
	i := t.Tile.At(r, c)
	if t.Tile.DType.Size() == 4 {
		storePlain(t.Data, 4*i, 4, uint64(uint32(v)))
	} else {
		storePlain(t.Data, 8*i, 8, uint64(v))
	}
}

// randIndex returns an index for memory of n positions: in bounds unless
// oob, then sometimes negative (for signed types), sometimes far past n.
func randIndex(rng *rand.Rand, d tile.DType, n int, oob bool) int64 {
	if !oob || rng.IntN(3) > 0 {
		return int64(rng.IntN(n))
	}
	switch rng.IntN(3) {
	case 0:
		if d.IsSigned() {
			return -1 - int64(rng.IntN(3*n))
		}
		return int64(n + rng.IntN(3*n))
	case 1:
		return int64(n + rng.IntN(3*n))
	}
	if d.Size() == 4 {
		return int64(int32(rng.Uint32()))
	}
	return int64(rng.Uint64())
}

var dataTypes = []tile.DType{tile.U8, tile.E4M3, tile.F16, tile.BF16, tile.S16, tile.F32, tile.U32, tile.F64, tile.S64}

func TestGatherFastMatchesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	iters := 600
	if testing.Short() {
		iters = 200
	}
	shapes := []int{1, 2, 3, 7, 16, 33}
	for it := 0; it < iters; it++ {
		d := dataTypes[rng.IntN(len(dataTypes))]
		it_ := idxTypes[rng.IntN(len(idxTypes))]
		mode := IndexMode(rng.IntN(2))
		oob := tile.OOB(rng.IntN(4)) // error, clamp, wrap, zero
		vr, vc := shapes[rng.IntN(len(shapes))], shapes[rng.IntN(len(shapes))]
		dst := randTile(rng, d, vr, vc, true)
		ic := vc
		if mode == IndexRows {
			ic = 1
		}
		idx := randTile(rng, it_, vr, ic, false)
		n := 1 + rng.IntN(40)
		memElems := n
		if mode == IndexRows {
			memElems = n * vc
		}
		mem := make([]byte, memElems*d.Size())
		for i := range mem {
			mem[i] = byte(rng.Uint32())
		}
		for r := 0; r < vr; r++ {
			for c := 0; c < ic; c++ {
				putIndex(&idx, r, c, randIndex(rng, it_, n, oob != tile.OOBError || rng.IntN(20) == 0))
			}
		}
		name := fmt.Sprintf("%d: %v idx %v %v %v %dx%d in %dx%d %v pad %v", it, d, it_, mode, oob, vr, vc, dst.Tile.Rows, dst.Tile.Cols, dst.Tile.Layout, dst.Tile.Pad)
		refDst := TileData{Tile: dst.Tile, Data: bytes.Clone(dst.Data)}
		fastDst := TileData{Tile: dst.Tile, Data: bytes.Clone(dst.Data)}
		ref := &GatherArgs{Mode: mode, Mem: mem, MemRows: n, Idx: idx, Dst: refDst, OOB: oob}
		fast := *ref
		fast.Dst, fast.Threads = fastDst, 1+rng.IntN(4)
		errRef, errFast := GatherRef(ref), GatherFast(&fast)
		if (errRef == nil) != (errFast == nil) {
			t.Fatalf("%s: ref error %v, fast error %v", name, errRef, errFast)
		}
		if errRef != nil {
			if !bytes.Equal(refDst.Data, dst.Data) || !bytes.Equal(fastDst.Data, dst.Data) {
				t.Fatalf("%s: destination changed by a faulting gather", name)
			}
			continue
		}
		if !bytes.Equal(refDst.Data, fastDst.Data) {
			t.Fatalf("%s: fast and reference destinations differ", name)
		}
		checkGatherByHand(t, name, ref, dst.Data)
	}
}

// checkGatherByHand checks the reference's output element by element from
// the definition.
func checkGatherByHand(t *testing.T, name string, a *GatherArgs, before []byte) {
	t.Helper()
	dt := a.Dst.Tile
	sz := dt.DType.Size()
	pat, fill := dt.Pad.PadPattern(dt.DType)
	for r := 0; r < dt.Rows; r++ {
		for c := 0; c < dt.Cols; c++ {
			off := dt.At(r, c) * sz
			got := loadPlain(a.Dst.Data, off, sz)
			var want uint64
			switch {
			case !dt.IsValid(r, c) && !fill:
				want = loadPlain(before, off, sz)
			case !dt.IsValid(r, c):
				want = pat
			default:
				ic := c
				if a.Mode == IndexRows {
					ic = 0
				}
				raw := a.Idx.index(r, ic)
				var v int64
				if a.Idx.Tile.DType.IsSigned() {
					v = int64(raw)
				} else if raw > math.MaxInt64 {
					v = math.MaxInt64
				} else {
					v = int64(raw)
				}
				n := int64(a.MemRows)
				in := v >= 0 && v < n && !(!a.Idx.Tile.DType.IsSigned() && raw > math.MaxInt64)
				if !in {
					switch a.OOB {
					case tile.OOBClamp:
						v = max(0, min(n-1, v))
						in = true
					case tile.OOBWrap:
						if a.Idx.Tile.DType.IsSigned() {
							v = ((v % n) + n) % n
						} else {
							v = int64(raw % uint64(n))
						}
						in = true
					}
				}
				if in {
					e := v
					if a.Mode == IndexRows {
						e = v*int64(dt.ValidCols) + int64(c)
					}
					want = loadPlain(a.Mem, int(e)*sz, sz)
				}
			}
			if got != want {
				t.Fatalf("%s: (%d,%d) = %#x, want %#x", name, r, c, got, want)
			}
		}
	}
}

// alignedBytes returns n random bytes starting on a 64-byte boundary.
func alignedBytes(rng *rand.Rand, n int) []byte {
	raw := make([]byte, n+64)
	off := int((64 - uintptr(unsafe.Pointer(&raw[0]))%64) % 64)
	b := raw[off : off+n : off+n]
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// TestGatherRowsStreaming drives the row gather's non-temporal copy (every
// destination, however small, takes it while ntMinBytes is 0) and checks it
// bit for bit against the reference: whole-line rows of several element
// types, physical rows longer than the valid ones, padded rows below the
// valid region, dropped lanes (OOBZero), row counts that do not divide
// among the threads, and a misaligned destination that must take the
// plain copy instead.
func TestGatherRowsStreaming(t *testing.T) {
	if !haveNTRows() {
		t.Skip("no streaming row copy on this machine or build")
	}
	defer func(v int) { ntMinBytes = v }(ntMinBytes)
	ntMinBytes = 0
	rng := rand.New(rand.NewPCG(7, 8))
	iters := 200
	if longtest.Race {
		iters = 20
	}
	for it := 0; it < iters; it++ {
		d := []tile.DType{tile.U8, tile.F16, tile.BF16, tile.F32, tile.F64}[rng.IntN(5)]
		sz := d.Size()
		vc := 64 / sz * (1 + rng.IntN(20)) // rows of 64 … 1280 bytes
		cols := vc + 64/sz*rng.IntN(3)     // physical rows of whole lines
		vr := []int{1, 7, 129, 1000}[rng.IntN(4)]
		dt := tile.Tile{DType: d, ValidRows: vr, ValidCols: vc, Rows: vr + rng.IntN(3), Cols: cols, Pad: randPad(rng, d)}
		misaligned := rng.IntN(8) == 0
		n := 1 + rng.IntN(300)
		mem := alignedBytes(rng, n*vc*sz)
		data := alignedBytes(rng, dt.Bytes()+8)[:dt.Bytes()]
		if misaligned {
			data = data[8 : 8+dt.Bytes()]
		}
		it_ := idxTypes[rng.IntN(len(idxTypes))]
		idx := randTile(rng, it_, vr, 1, false)
		oob := []tile.OOB{tile.OOBError, tile.OOBZero}[rng.IntN(2)]
		for r := 0; r < vr; r++ {
			putIndex(&idx, r, 0, randIndex(rng, it_, n, oob == tile.OOBZero))
		}
		if got := ntRows(&GatherArgs{Mem: mem, MemRows: n, Dst: TileData{Tile: dt, Data: data}}, vr, vc*sz, cols*sz); got == misaligned {
			t.Fatalf("%d: ntRows = %v for a destination misaligned %v", it, got, misaligned)
		}
		name := fmt.Sprintf("%d: %v %dx%d in %dx%d idx %v %v misaligned %v", it, d, vr, vc, dt.Rows, dt.Cols, it_, oob, misaligned)
		refDst := TileData{Tile: dt, Data: bytes.Clone(data)}
		fastDst := TileData{Tile: dt, Data: data}
		before := bytes.Clone(data)
		ref := &GatherArgs{Mode: IndexRows, Mem: mem, MemRows: n, Idx: idx, Dst: refDst, OOB: oob}
		fast := *ref
		fast.Dst, fast.Threads = fastDst, 1+rng.IntN(3)
		if err := GatherRef(ref); err != nil {
			t.Fatalf("%s: reference: %v", name, err)
		}
		if err := GatherFast(&fast); err != nil {
			t.Fatalf("%s: fast: %v", name, err)
		}
		if !bytes.Equal(refDst.Data, fastDst.Data) {
			t.Fatalf("%s: streaming and reference destinations differ", name)
		}
		checkGatherByHand(t, name, ref, before)
	}
}
