package fallback

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

// TestScatterFastLarge runs shapes big enough for several goroutines (the
// small shapes of TestScatterFastMatchesRef run on one in deterministic
// mode) and rows that cross 4 KiB pages, so that a row is updated under
// several stripe locks: deterministic results must equal the reference bit
// for bit, with arbitrary float values; unordered adds of small integers
// must too.
func TestScatterFastLarge(t *testing.T) {
	rng := newRand(t)
	for _, c := range []struct {
		mode      IndexMode
		op        ScatterOp
		d         tile.DType
		det       bool
		vr, vc, n int
	}{
		{IndexRows, ScatterAdd, tile.F32, true, 300, 1001, 37},
		{IndexRows, ScatterAdd, tile.F32, false, 300, 1001, 37},
		{IndexRows, ScatterAdd, tile.BF16, true, 200, 129, 11},
		{IndexRows, ScatterMax, tile.F32, false, 200, 700, 5},
		{IndexRows, ScatterMin, tile.F32, true, 200, 700, 5},
		{IndexRows, ScatterStore, tile.F16, true, 100, 999, 7},
		{IndexRows, ScatterAdd, tile.S32, true, 100, 300, 7},
		{IndexElements, ScatterAdd, tile.F32, true, 130, 257, 5000},
		{IndexElements, ScatterAdd, tile.F32, false, 130, 257, 5000},
		{IndexElements, ScatterAdd, tile.F64, true, 130, 129, 3001},
		{IndexElements, ScatterAdd, tile.F16, true, 64, 129, 999},
		{IndexElements, ScatterMax, tile.F32, false, 64, 300, 100},
		{IndexElements, ScatterMin, tile.F32, true, 64, 300, 100},
		{IndexElements, ScatterStore, tile.U8, true, 64, 300, 77},
		{IndexElements, ScatterAdd, tile.U32, false, 64, 300, 77},
	} {
		name := fmt.Sprintf("%v %v %v det=%v %dx%d into %d", c.mode, c.op, c.d, c.det, c.vr, c.vc, c.n)
		exact := !c.det && c.op == ScatterAdd
		src := randTile(rng, c.d, c.vr, c.vc, false)
		for r := range c.vr {
			for col := range c.vc {
				storePlain(src.Data, src.Tile.At(r, col)*c.d.Size(), c.d.Size(), randValue(rng, c.d, exact))
			}
		}
		ic, memElems := c.vc, c.n
		if c.mode == IndexRows {
			ic, memElems = 1, c.n*c.vc
		}
		idx := randTile(rng, tile.S32, c.vr, ic, false)
		for r := range c.vr {
			for col := range ic {
				putIndex(&idx, r, col, int64(rng.IntN(c.n)))
			}
		}
		mem := make([]byte, memElems*c.d.Size())
		for e := range memElems {
			storePlain(mem, e*c.d.Size(), c.d.Size(), randValue(rng, c.d, exact))
		}
		ref := &ScatterArgs{Mode: c.mode, Op: c.op, Deterministic: c.det, Mem: bytes.Clone(mem), MemRows: c.n, Idx: idx, Src: src}
		if err := ScatterRef(ref); err != nil {
			t.Fatal(err)
		}
		for _, threads := range []int{2, 3} {
			fast := *ref
			fast.Mem, fast.Threads = bytes.Clone(mem), threads
			if err := ScatterFast(&fast); err != nil {
				t.Fatal(err)
			}
			if c.op == ScatterStore && !c.det {
				checkOneWriter(t, name, &fast, mem, fast.Mem)
				continue
			}
			if !bytes.Equal(ref.Mem, fast.Mem) {
				t.Fatalf("%s, %d threads: fast and reference memories differ", name, threads)
			}
		}
	}
}

// TestScatterLockedConcurrent runs row-mode and element-mode f32
// scatter-adds and gather-CAS increments on the same small table at once,
// with small integers (exact in any order): every update must land. Rows
// of 1500 floats cross page boundaries, so row updates take several locks.
func TestScatterLockedConcurrent(t *testing.T) {
	const rows, cols = 4, 1500
	n := rows * cols
	mem := alignedBytes(rand.New(rand.NewPCG(1, 1)), 4*n)
	clear(mem)
	want := make([]float64, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	for g := range 6 {
		rng := rand.New(rand.NewPCG(uint64(g), 17))
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]float64, n)
			for range rounds {
				switch g % 3 {
				case 0: // rows
					lanes := 8
					src := TileData{Tile: tile.Dense(tile.F32, lanes, cols), Data: make([]byte, 4*lanes*cols)}
					idx := TileData{Tile: tile.Dense(tile.S32, lanes, 1), Data: make([]byte, 4*lanes)}
					for l := range lanes {
						q := rng.IntN(rows)
						putIndex(&idx, l, 0, int64(q))
						for c := range cols {
							v := float32(rng.IntN(3))
							storePlain(src.Data, 4*(l*cols+c), 4, uint64(math.Float32bits(v)))
							local[q*cols+c] += float64(v)
						}
					}
					a := ScatterArgs{Mode: IndexRows, Op: ScatterAdd, Mem: mem, MemRows: rows, Idx: idx, Src: src, Threads: 2}
					if err := ScatterFast(&a); err != nil {
						t.Error(err)
						return
					}
				case 1: // elements
					lanes := 4096
					src := TileData{Tile: tile.Dense(tile.F32, 1, lanes), Data: make([]byte, 4*lanes)}
					idx := TileData{Tile: tile.Dense(tile.S32, 1, lanes), Data: make([]byte, 4*lanes)}
					for l := range lanes {
						q := rng.IntN(n)
						putIndex(&idx, 0, l, int64(q))
						v := float32(rng.IntN(3))
						storePlain(src.Data, 4*l, 4, uint64(math.Float32bits(v)))
						local[q] += float64(v)
					}
					a := ScatterArgs{Mode: IndexElements, Op: ScatterAdd, Mem: mem, MemRows: n, Idx: idx, Src: src, Threads: 2}
					if err := ScatterFast(&a); err != nil {
						t.Error(err)
						return
					}
				default: // gather-CAS: add 1 to a few elements with CAS retries
					for range 64 {
						q := rng.IntN(n)
						for {
							// Read the element with a CAS that cannot
							// match (a NaN never stored): a plain read
							// would race with the locked updates.
							_, old := casOnce(t, mem, q, math.Float32frombits(0x7fc0dead), 0)
							if ok, _ := casOnce(t, mem, q, old, old+1); ok {
								break
							}
						}
						local[q]++
					}
				}
			}
			mu.Lock()
			for i, v := range local {
				want[i] += v
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	for i := range n {
		if got := math.Float32frombits(uint32(loadPlain(mem, 4*i, 4))); float64(got) != want[i] {
			t.Fatalf("element %d: %g, want %g", i, got, want[i])
		}
	}
}

// casOnce runs a one-lane gather-CAS of element q from old to new and
// reports whether it swapped, and the value it saw.
func casOnce(t *testing.T, mem []byte, q int, old, new float32) (bool, float32) {
	one := func(d tile.DType, v uint64) TileData {
		x := TileData{Tile: tile.Dense(d, 1, 1), Data: make([]byte, 4)}
		storePlain(x.Data, 0, 4, v)
		return x
	}
	a := GatherCASArgs{Mem: mem, Idx: one(tile.S32, uint64(4*q)),
		Expected: one(tile.F32, uint64(math.Float32bits(old))), Replacement: one(tile.F32, uint64(math.Float32bits(new))),
		Dst: one(tile.F32, 0)}
	if err := GatherCASFast(&a); err != nil {
		t.Error(err)
		return true, 0
	}
	obs := math.Float32frombits(uint32(loadPlain(a.Dst.Data, 0, 4)))
	return math.Float32bits(obs) == math.Float32bits(old), obs
}
