package fallback

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

var scatterTypes = map[ScatterOp][]tile.DType{
	ScatterStore: {tile.U8, tile.F16, tile.BF16, tile.F32, tile.S32, tile.F64, tile.U64},
	ScatterAdd:   {tile.F32, tile.F16, tile.BF16, tile.F64, tile.S32, tile.U32},
	ScatterMax:   {tile.S32, tile.U32, tile.F32},
	ScatterMin:   {tile.S32, tile.U32, tile.F32},
}

// randValue returns raw bits of a value of type d. With exact set, float
// values are small integers (so any order of adds gives the same sum);
// otherwise floats are arbitrary and f32 includes ±0 and NaN.
func randValue(rng *rand.Rand, d tile.DType, exact bool) uint64 {
	switch d {
	case tile.F32:
		if exact {
			return uint64(math.Float32bits(float32(rng.IntN(9) - 4)))
		}
		switch rng.IntN(8) {
		case 0:
			return uint64(math.Float32bits(0))
		case 1:
			return uint64(math.Float32bits(float32(math.Copysign(0, -1))))
		case 2:
			return 0x7fc00001
		}
		return uint64(math.Float32bits(rng.Float32()*200 - 100))
	case tile.F64:
		if exact {
			return math.Float64bits(float64(rng.IntN(9) - 4))
		}
		return math.Float64bits(rng.Float64()*2 - 1)
	case tile.F16, tile.BF16:
		f := rng.Float32()*8 - 4
		if exact {
			f = float32(rng.IntN(5) - 2)
		}
		return tile.FromFloat32(d, f)
	}
	return rng.Uint64() >> (64 - d.Bits())
}

func TestScatterFastMatchesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	iters := 800
	if testing.Short() {
		iters = 250
	}
	shapes := []int{1, 2, 5, 16, 40}
	for it := 0; it < iters; it++ {
		op := ScatterOp(rng.IntN(4))
		d := scatterTypes[op][rng.IntN(len(scatterTypes[op]))]
		it_ := idxTypes[rng.IntN(len(idxTypes))]
		mode := IndexMode(rng.IntN(2))
		oob := []tile.OOB{tile.OOBError, tile.OOBSkip, tile.OOBClamp, tile.OOBWrap}[rng.IntN(4)]
		det := rng.IntN(2) == 0
		vr, vc := shapes[rng.IntN(len(shapes))], shapes[rng.IntN(len(shapes))]
		src := randTile(rng, d, vr, vc, false)
		exact := !det && op == ScatterAdd
		for r := 0; r < vr; r++ {
			for c := 0; c < vc; c++ {
				storePlain(src.Data, src.Tile.At(r, c)*d.Size(), d.Size(), randValue(rng, d, exact))
			}
		}
		ic := vc
		if mode == IndexRows {
			ic = 1
		}
		idx := randTile(rng, it_, vr, ic, false)
		n := 1 + rng.IntN(30)
		memElems := n
		if mode == IndexRows {
			memElems = n * vc
		}
		mem := make([]byte, memElems*d.Size())
		for e := 0; e < memElems; e++ {
			storePlain(mem, e*d.Size(), d.Size(), randValue(rng, d, exact))
		}
		for r := 0; r < vr; r++ {
			for c := 0; c < ic; c++ {
				putIndex(&idx, r, c, randIndex(rng, it_, n, oob != tile.OOBError || rng.IntN(20) == 0))
			}
		}
		name := fmt.Sprintf("%d: %v %v idx %v %v %v det=%v %dx%d into %d", it, op, d, it_, mode, oob, det, vr, vc, n)
		refMem, fastMem := bytes.Clone(mem), bytes.Clone(mem)
		ref := &ScatterArgs{Mode: mode, Op: op, Deterministic: det, Mem: refMem, MemRows: n, Idx: idx, Src: src, OOB: oob}
		fast := *ref
		fast.Mem, fast.Threads = fastMem, 1+rng.IntN(4)
		errRef, errFast := ScatterRef(ref), ScatterFast(&fast)
		if (errRef == nil) != (errFast == nil) {
			t.Fatalf("%s: ref error %v, fast error %v", name, errRef, errFast)
		}
		if errRef != nil {
			if !bytes.Equal(refMem, mem) || !bytes.Equal(fastMem, mem) {
				t.Fatalf("%s: memory changed by a faulting scatter", name)
			}
			continue
		}
		if op != ScatterStore || det {
			if !bytes.Equal(refMem, fastMem) {
				t.Fatalf("%s: fast and reference memories differ", name)
			}
			continue
		}
		// Unordered plain scatter: each element holds its old value if no
		// lane targets it, else the value of one of the lanes that do.
		checkOneWriter(t, name, ref, mem, fastMem)
	}
}

func checkOneWriter(t *testing.T, name string, a *ScatterArgs, before, got []byte) {
	t.Helper()
	d := a.Src.Tile.DType
	sz := d.Size()
	cands := map[int][]uint64{}
	for r := 0; r < a.Src.Tile.ValidRows; r++ {
		for c := 0; c < a.Src.Tile.ValidCols; c++ {
			ic := c
			if a.Mode == IndexRows {
				ic = 0
			}
			pos, ok := tile.ResolveIndex(a.Idx.index(r, ic), a.Idx.Tile.DType.IsSigned(), a.MemRows, a.OOB)
			if !ok {
				continue
			}
			e := pos
			if a.Mode == IndexRows {
				e = pos*a.Src.Tile.ValidCols + c
			}
			cands[e] = append(cands[e], a.Src.elem(r, c))
		}
	}
	for e := 0; e < len(got)/sz; e++ {
		v := loadPlain(got, e*sz, sz)
		cs, hit := cands[e]
		if !hit {
			if v != loadPlain(before, e*sz, sz) {
				t.Fatalf("%s: untouched element %d changed", name, e)
			}
			continue
		}
		found := false
		for _, c := range cs {
			found = found || c == v
		}
		if !found {
			t.Fatalf("%s: element %d = %#x, not one of the values sent %x", name, e, v, cs)
		}
	}
}

// TestScatterRefByHand pins the reference on a case worked out by hand.
func TestScatterRefByHand(t *testing.T) {
	idx := TileData{Tile: tile.Dense(tile.S32, 4, 1), Data: make([]byte, 16)}
	for r, v := range []int64{2, -1, 2, 0} {
		putIndex(&idx, r, 0, v)
	}
	src := TileData{Tile: tile.Dense(tile.S32, 4, 1), Data: make([]byte, 16)}
	for r, v := range []int32{5, 6, -7, 8} {
		storePlain(src.Data, 4*r, 4, uint64(uint32(v)))
	}
	for _, c := range []struct {
		op   ScatterOp
		oob  tile.OOB
		want [3]int32
	}{
		{ScatterAdd, tile.OOBSkip, [3]int32{1 + 8, 1, 1 + 5 - 7}},
		{ScatterAdd, tile.OOBWrap, [3]int32{1 + 8, 1, 1 + 5 + 6 - 7}},
		{ScatterAdd, tile.OOBClamp, [3]int32{1 + 6 + 8, 1, 1 + 5 - 7}},
		{ScatterStore, tile.OOBSkip, [3]int32{8, 1, -7}},
		{ScatterMax, tile.OOBSkip, [3]int32{8, 1, 5}},
		{ScatterMin, tile.OOBWrap, [3]int32{1, 1, -7}},
	} {
		mem := make([]byte, 12)
		for i := 0; i < 3; i++ {
			storePlain(mem, 4*i, 4, 1)
		}
		a := &ScatterArgs{Mode: IndexElements, Op: c.op, Deterministic: true, Mem: mem, MemRows: 3, Idx: idx, Src: src, OOB: c.oob}
		if err := ScatterRef(a); err != nil {
			t.Fatal(err)
		}
		for i, w := range c.want {
			if g := int32(loadPlain(mem, 4*i, 4)); g != w {
				t.Errorf("%v %v: mem[%d] = %d, want %d", c.op, c.oob, i, g, w)
			}
		}
	}
}
