package fallback

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

var casTypes = []tile.DType{tile.U8, tile.E5M2, tile.F16, tile.S16, tile.F32, tile.U32, tile.F64, tile.S64}

func pow2Tile(rng *rand.Rand, d tile.DType, vr, vc int) TileData {
	t := randTile(rng, d, vr, vc, true)
	for t.Tile.Rows = 1; t.Tile.Rows < vr; t.Tile.Rows *= 2 {
	}
	for t.Tile.Cols = 1; t.Tile.Cols < vc; t.Tile.Cols *= 2 {
	}
	t.Tile.Rows *= 1 + rng.IntN(2)
	t.Data = make([]byte, t.Tile.Bytes())
	for i := range t.Data {
		t.Data[i] = byte(rng.Uint32())
	}
	return t
}

func TestGatherCASFastMatchesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	iters := 500
	if testing.Short() {
		iters = 150
	}
	shapes := []int{1, 2, 3, 8, 13}
	for it := 0; it < iters; it++ {
		d := casTypes[rng.IntN(len(casTypes))]
		sz := d.Size()
		it_ := idxTypes[rng.IntN(len(idxTypes))]
		vr, vc := shapes[rng.IntN(len(shapes))], shapes[rng.IntN(len(shapes))]
		dst := pow2Tile(rng, d, vr, vc)
		idx := randTile(rng, it_, vr, vc, false)
		exp := randTile(rng, d, vr, vc, false)
		rep := randTile(rng, d, vr, vc, false)
		nElem := vr*vc + rng.IntN(10)
		mem := make([]byte, nElem*sz+rng.IntN(3)) // a ragged tail for sub-word edge cases
		for i := range mem {
			mem[i] = byte(rng.Uint32())
		}
		base := rng.IntN(nElem+1) * sz
		if !it_.IsSigned() {
			base = rng.IntN(2) * sz
			if (nElem-1)*sz < base { // one element: an unsigned displacement cannot reach below base
				base = 0
			}
		}
		perm := rng.Perm(nElem)
		for r := 0; r < vr; r++ {
			for c := 0; c < vc; c++ {
				addr := perm[r*vc+c] * sz // unique addresses: the result is defined
				if !it_.IsSigned() && addr < base {
					addr = base + (addr % (nElem*sz - base + 1) / sz * sz)
					addr = min(addr, (nElem-1)*sz)
				}
				putIndex(&idx, r, c, int64(addr-base))
				if rng.IntN(2) == 0 { // expect the current value half the time
					storePlain(exp.Data, exp.Tile.At(r, c)*sz, sz, loadPlain(mem, addr, sz))
				}
			}
		}
		// Unique addresses again (the unsigned fix-up may have merged some).
		seen := map[uint64]bool{}
		dup := false
		for r := 0; r < vr; r++ {
			for c := 0; c < vc; c++ {
				v := idx.index(r, c)
				dup = dup || seen[v]
				seen[v] = true
			}
		}
		if dup {
			continue
		}
		name := fmt.Sprintf("%d: %v idx %v %dx%d base %d", it, d, it_, vr, vc, base)
		refMem, fastMem := bytes.Clone(mem), bytes.Clone(mem)
		refDst := TileData{Tile: dst.Tile, Data: bytes.Clone(dst.Data)}
		fastDst := TileData{Tile: dst.Tile, Data: bytes.Clone(dst.Data)}
		ref := &GatherCASArgs{Mem: refMem, Base: base, Idx: idx, Expected: exp, Replacement: rep, Dst: refDst}
		fast := *ref
		fast.Mem, fast.Dst, fast.Threads = fastMem, fastDst, 1+rng.IntN(4)
		if err := GatherCASRef(ref); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := GatherCASFast(&fast); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(refMem, fastMem) || !bytes.Equal(refDst.Data, fastDst.Data) {
			t.Fatalf("%s: fast and reference differ", name)
		}
		// By hand: observed = old memory; swapped iff equal to expected.
		pat, fill := dst.Tile.Pad.PadPattern(d)
		for r := 0; r < dst.Tile.Rows; r++ {
			for c := 0; c < dst.Tile.Cols; c++ {
				off := dst.Tile.At(r, c) * sz
				got := loadPlain(refDst.Data, off, sz)
				if !dst.Tile.IsValid(r, c) {
					want := loadPlain(dst.Data, off, sz)
					if fill {
						want = pat
					}
					if got != want {
						t.Fatalf("%s: pad (%d,%d) = %#x want %#x", name, r, c, got, want)
					}
					continue
				}
				addr := base + int(int64(idx.index(r, c)))
				old := loadPlain(mem, addr, sz)
				if got != old {
					t.Fatalf("%s: observed (%d,%d) = %#x, memory held %#x", name, r, c, got, old)
				}
				want := old
				if old == exp.elem(r, c) {
					want = rep.elem(r, c)
				}
				if now := loadPlain(refMem, addr, sz); now != want {
					t.Fatalf("%s: memory at %d = %#x, want %#x", name, addr, now, want)
				}
			}
		}
		// Untouched bytes stay.
		for i := range mem {
			if !seen[uint64(int64(i-base))] && (i-base)%sz == 0 {
				if !bytes.Equal(refMem[i:min(len(mem), i+sz)], mem[i:min(len(mem), i+sz)]) {
					t.Fatalf("%s: untouched bytes at %d changed", name, i)
				}
			}
		}
	}
}
