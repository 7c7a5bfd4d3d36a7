package gen

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/kernels/sm86"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/sass/sim"
	"github.com/tcrt-go/tcrt/tile"
)

// sgSims holds one simulator per scatter-gather kernel (sm_86 programs;
// the sm_89 module carries the same code).
var sgSims = sync.OnceValues(func() (map[string]*sim.Simulator, error) {
	out := map[string]*sim.Simulator{}
	for _, k := range sgKernels {
		s, err := sim.New(k.prog())
		if err != nil {
			return nil, err
		}
		if u := s.Unsupported(); len(u) > 0 {
			return nil, fmt.Errorf("%s: the simulator cannot run %v", k.name, u)
		}
		out[k.name] = s
	}
	return out, nil
})

// sgDev is a simulated device memory for one test case.
type sgDev struct {
	t   *testing.T
	mem *sim.Memory
	n   int
}

func newSGDev(t *testing.T) *sgDev { return &sgDev{t: t, mem: sim.NewMemory()} }

// put allocates a region holding a copy of b and returns its address and
// its bytes (the simulator's, read and written in place).
func (d *sgDev) put(b []byte) (uint64, []byte) {
	d.n++
	name := fmt.Sprintf("r%d", d.n)
	a, err := d.mem.Alloc(name, max(1, len(b)))
	if err != nil {
		d.t.Fatal(err)
	}
	reg := d.mem.Bytes(name)
	copy(reg, b)
	return a, reg
}

// runArch launches ls with the programs of one module (progs by name).
func (d *sgDev) runArch(ls []sm86.Launch, progs map[string]sass.Program, arch int) {
	d.t.Helper()
	ks, err := familyKernels(arch)
	if err != nil {
		d.t.Fatal(err)
	}
	params := map[string][]cubin.Param{}
	for _, k := range ks {
		params[k.name] = k.params
	}
	for _, l := range ls {
		s, err := sim.New(progs[l.Func])
		if err != nil {
			d.t.Fatalf("%s: %v", l.Func, err)
		}
		if _, err := s.Launch(sim.Config{Grid: l.Grid, Block: l.Block,
			Params: paramBytes(d.t, params[l.Func], l.Params), Memory: d.mem, Poison: true}); err != nil {
			d.t.Fatalf("sm_%d %s: %v", arch, l.Func, err)
		}
	}
}

// run launches ls in order and fails the test on any simulator error.
func (d *sgDev) run(ls []sm86.Launch) {
	d.t.Helper()
	sims, err := sgSims()
	if err != nil {
		d.t.Fatal(err)
	}
	params := map[string][]cubin.Param{}
	for _, k := range sgKernels {
		params[k.name] = k.params
	}
	for _, l := range ls {
		s, ok := sims[l.Func]
		if !ok {
			d.t.Fatalf("plan names an unknown kernel %q", l.Func)
		}
		if _, err := s.Launch(sim.Config{Grid: l.Grid, Block: l.Block,
			Params: paramBytes(d.t, params[l.Func], l.Params), Memory: d.mem, Poison: true}); err != nil {
			d.t.Fatalf("%s: %v", l.Func, err)
		}
	}
}

// sgPolicies are the gather policies (scatters use skip for zero).
var sgIndexTypes = []tile.DType{tile.S32, tile.U32, tile.S64, tile.U64}

// randTile returns a tile of type d with the valid shape rows × cols in a
// physical region as large or larger, a random layout and pad.
func randTile(rng *rand.Rand, d tile.DType, rows, cols int, extra bool) tile.Tile {
	t := tile.Tile{DType: d, ValidRows: rows, ValidCols: cols, Rows: rows, Cols: cols}
	if extra {
		t.Rows += rng.IntN(3)
		t.Cols += rng.IntN(3)
	}
	if rng.IntN(2) == 0 {
		t.Layout = tile.ColMajor
	}
	pads := []tile.Pad{tile.PadNullValue, tile.PadZeroValue, tile.PadMaxValue, tile.PadMinValue,
		tile.PadValue(rng.Uint64() >> (64 - 8*d.Size()))}
	if d.Size() == 8 {
		pads[4] = tile.PadValue(rng.Uint64())
	}
	t.Pad = pads[rng.IntN(len(pads))]
	return t
}

// randIndices fills an index tile: positions in [0, n), and under a policy
// that moves or drops them, about one in four outside: negative, at or past
// n, or far out (every bit pattern of the type).
func randIndices(rng *rand.Rand, it tile.Tile, n int, oob tile.OOB) []byte {
	sz := it.DType.Size()
	b := make([]byte, it.Bytes())
	for i := range b {
		b[i] = 0xEE // the non-valid index elements are never read
	}
	for r := 0; r < it.ValidRows; r++ {
		for c := 0; c < it.ValidCols; c++ {
			v := uint64(rng.IntN(n))
			if oob != tile.OOBError && rng.IntN(4) == 0 {
				switch rng.IntN(4) {
				case 0:
					v = uint64(-int64(1 + rng.IntN(3*n)))
				case 1:
					v = uint64(n + rng.IntN(3*n))
				default:
					v = rng.Uint64()
				}
			}
			if sz == 4 {
				binary.LittleEndian.PutUint32(b[it.At(r, c)*4:], uint32(v))
			} else {
				binary.LittleEndian.PutUint64(b[it.At(r, c)*8:], v)
			}
		}
	}
	return b
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// sgSizes are the lane counts of the simulator tests.
func sgSizes() []int {
	ns := []int{1, 7, 129, 1000}
	if !testing.Short() {
		ns = append(ns, 100_000)
	}
	return ns
}

// shapeOf splits n lanes into rows × cols.
func shapeOf(rng *rand.Rand, n int) (rows, cols int) {
	var ds []int
	for c := 1; c <= n && c <= 1000; c++ {
		if n%c == 0 {
			ds = append(ds, c)
		}
	}
	c := ds[rng.IntN(len(ds))]
	return n / c, c
}

// TestSimGather runs sm86.PlanGather's launches in the simulator against
// fallback.GatherRef, byte for byte over the whole poisoned destination:
// both modes, every index type and gather policy, element sizes 1..8,
// valid regions inside larger physical ones, both layouts, every pad kind.
func TestSimGather(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 86))
	for _, rows := range []bool{false, true} {
		for _, itype := range sgIndexTypes {
			for _, oob := range []tile.OOB{tile.OOBError, tile.OOBClamp, tile.OOBWrap, tile.OOBZero} {
				for _, n := range sgSizes() {
					name := fmt.Sprintf("rows=%v/%v/%v/%d", rows, itype, oob, n)
					t.Run(name, func(t *testing.T) { testGatherCase(t, rng, rows, itype, oob, n) })
				}
			}
		}
	}
}

func testGatherCase(t *testing.T, rng *rand.Rand, rows bool, itype tile.DType, oob tile.OOB, n int) {
	etypes := []tile.DType{tile.U8, tile.F16, tile.F32, tile.F64}
	et := etypes[rng.IntN(len(etypes))]
	var dt, it tile.Tile
	memRows := 1 + rng.IntN(2*n)
	var memBytes int
	if rows {
		cols := []int{1, 2, 3, 4, 8, 12, 33}[rng.IntN(7)]
		if n >= 100_000 {
			cols = []int{1, 4}[rng.IntN(2)]
		}
		dt = randTile(rng, et, n, cols, rng.IntN(2) == 0)
		if rng.IntN(2) == 0 { // contiguous rows: the vector copies
			dt.Layout, dt.Cols = tile.RowMajor, cols
		}
		it = randTile(rng, itype, n, 1, rng.IntN(2) == 0)
		memBytes = memRows * cols * et.Size()
	} else {
		r, c := shapeOf(rng, n)
		dt = randTile(rng, et, r, c, rng.IntN(2) == 0)
		it = randTile(rng, itype, r, c, rng.IntN(2) == 0)
		memBytes = memRows * et.Size()
	}
	idx := randIndices(rng, it, memRows, oob)
	mem := randBytes(rng, memBytes)
	dst := bytes.Repeat([]byte{0xFF}, dt.Bytes()) // NaN in every float type
	want := bytes.Clone(dst)
	mode := fallback.IndexElements
	if rows {
		mode = fallback.IndexRows
	}
	if err := fallback.GatherRef(&fallback.GatherArgs{Mode: mode, Mem: mem, MemRows: memRows,
		Idx: fallback.TileData{Tile: it.Resolved(), Data: idx}, Dst: fallback.TileData{Tile: dt.Resolved(), Data: want},
		OOB: oob}); err != nil {
		t.Fatal(err)
	}
	d := newSGDev(t)
	slot, slotB := d.put(make([]byte, 8))
	pos, _ := d.put(make([]byte, 4*it.ValidRows*it.ValidCols))
	ma, _ := d.put(mem)
	ia, _ := d.put(idx)
	da, got := d.put(dst)
	ls, err := sm86.PlanGather(sm86.SGGather{Rows: rows, Slot: slot, Pos: pos, Mem: ma, Idx: ia, Dst: da, MemRows: memRows,
		IdxTile: it, DstTile: dt, OOB: oob})
	if err != nil {
		t.Fatal(err)
	}
	d.run(ls)
	if !bytes.Equal(slotB, make([]byte, 8)) {
		t.Fatalf("fault slot %x after a call without faults", slotB)
	}
	if k := firstDiff(got, want); k >= 0 {
		t.Fatalf("dst %+v (launches %v): byte %d of %d: got %#02x, want %#02x", dt, kernelsOf(ls), k, len(got), got[k], want[k])
	}
}

func kernelsOf(ls []sm86.Launch) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Func)
	}
	return out
}

// scatterDiff is firstDiff for a scatter's result: for a float add it
// accepts any NaN where the CPU has a NaN and the element held a NaN
// before, since which of two NaNs an add returns is not specified
// (fallback.Combine; TestSimScatterAddNaN checks the pairs themselves).
func scatterDiff(et tile.DType, op fallback.ScatterOp, old, got, want []byte) int {
	k := firstDiff(got, want)
	if k < 0 || op != fallback.ScatterAdd || !isFloatType(et) {
		return k
	}
	sz := et.Size()
	for e := 0; e+sz <= len(got); e += sz {
		if bytes.Equal(got[e:e+sz], want[e:e+sz]) {
			continue
		}
		if !(isNaNBits(et, loadN(old, e, sz)) && isNaNBits(et, loadN(got, e, sz)) && isNaNBits(et, loadN(want, e, sz))) {
			return e + firstDiff(got[e:e+sz], want[e:e+sz])
		}
	}
	return -1
}

// quietBits sets the quiet bit of NaN bits v of type d.
func quietBits(d tile.DType, v uint64) uint64 {
	switch d {
	case tile.F16:
		return v | 0x200
	case tile.BF16:
		return v | 0x40
	case tile.F32:
		return v | 0x400000
	}
	return v | 1<<51
}

func isFloatType(d tile.DType) bool {
	return d == tile.F16 || d == tile.BF16 || d == tile.F32 || d == tile.F64
}

// isNaNBits reports whether raw bits v of type d are a NaN.
func isNaNBits(d tile.DType, v uint64) bool {
	switch d {
	case tile.F16:
		return v&0x7c00 == 0x7c00 && v&0x3ff != 0
	case tile.BF16:
		return v&0x7f80 == 0x7f80 && v&0x7f != 0
	case tile.F32:
		return v&0x7f800000 == 0x7f800000 && v&0x7fffff != 0
	case tile.F64:
		return v&0x7ff0000000000000 == 0x7ff0000000000000 && v&0xfffffffffffff != 0
	}
	return false
}

func firstDiff(a, b []byte) int {
	for k := range a {
		if a[k] != b[k] {
			return k
		}
	}
	return -1
}

// TestSimGatherFault puts out-of-bounds indices at random lanes under
// OOBError: the slot records the first of them (the lane the CPU's error
// names) and the destination is unchanged byte for byte.
func TestSimGatherFault(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 1))
	for _, itype := range sgIndexTypes {
		for _, n := range []int{1, 7, 129, 1000} {
			for _, rows := range []bool{false, true} {
				memRows := 1 + rng.IntN(n)
				r, c := shapeOf(rng, n)
				if rows {
					r, c = n, 1
				}
				it := randTile(rng, itype, r, c, true)
				idx := randIndices(rng, it, memRows, tile.OOBError)
				first := n
				for range 1 + rng.IntN(3) {
					l := rng.IntN(n)
					first = min(first, l)
					bad := uint64(memRows + rng.IntN(5))
					if itype.IsSigned() && rng.IntN(2) == 0 {
						bad = uint64(-int64(1 + rng.IntN(5)))
					}
					if itype.Size() == 4 {
						binary.LittleEndian.PutUint32(idx[it.At(l/c, l%c)*4:], uint32(bad))
					} else {
						binary.LittleEndian.PutUint64(idx[it.At(l/c, l%c)*8:], bad)
					}
				}
				dt := randTile(rng, tile.F32, r, c, true)
				if dt.Pad.Kind == tile.PadNull {
					dt.Pad = tile.PadZeroValue
				}
				mem := randBytes(rng, memRows*4*c)
				dst := randBytes(rng, dt.Bytes())
				mode := fallback.IndexElements
				if rows {
					mode = fallback.IndexRows
				}
				ref := bytes.Clone(dst)
				err := fallback.GatherRef(&fallback.GatherArgs{Mode: mode, Mem: mem, MemRows: memRows,
					Idx: fallback.TileData{Tile: it.Resolved(), Data: idx}, Dst: fallback.TileData{Tile: dt.Resolved(), Data: ref}})
				if !errors.Is(err, tile.ErrBounds) {
					t.Fatalf("reference: %v", err)
				}
				d := newSGDev(t)
				slot, slotB := d.put(make([]byte, 8))
				pos, _ := d.put(make([]byte, 4*n))
				ma, _ := d.put(mem)
				ia, _ := d.put(idx)
				da, got := d.put(dst)
				ls, err := sm86.PlanGather(sm86.SGGather{Rows: rows, Slot: slot, Pos: pos, Mem: ma, Idx: ia, Dst: da, MemRows: memRows,
					IdxTile: it, DstTile: dt, OOB: tile.OOBError})
				if err != nil {
					t.Fatal(err)
				}
				d.run(ls)
				lane, faulted := sm86.SGFault(binary.LittleEndian.Uint64(slotB))
				if !faulted || lane != first {
					t.Errorf("%v n=%d rows=%v: slot says lane %d (faulted %v), want %d", itype, n, rows, lane, faulted, first)
				}
				if !bytes.Equal(got, dst) || !bytes.Equal(ref, dst) {
					t.Errorf("%v n=%d rows=%v: the destination changed after a fault", itype, n, rows)
				}
			}
		}
	}
}

// scatterCases are the (op, type) pairs sm86.PlanScatter covers.
var scatterCases = []struct {
	op sm86.SGOp
	fo fallback.ScatterOp
	d  tile.DType
}{
	{sm86.SGStore, fallback.ScatterStore, tile.U8}, {sm86.SGStore, fallback.ScatterStore, tile.BF16},
	{sm86.SGStore, fallback.ScatterStore, tile.F32}, {sm86.SGStore, fallback.ScatterStore, tile.S64},
	{sm86.SGAdd, fallback.ScatterAdd, tile.S32}, {sm86.SGAdd, fallback.ScatterAdd, tile.U32},
	{sm86.SGMax, fallback.ScatterMax, tile.S32}, {sm86.SGMax, fallback.ScatterMax, tile.U32},
	{sm86.SGMin, fallback.ScatterMin, tile.S32}, {sm86.SGMin, fallback.ScatterMin, tile.U32},
	{sm86.SGAdd, fallback.ScatterAdd, tile.F64},
	{sm86.SGMax, fallback.ScatterMax, tile.F32}, {sm86.SGMin, fallback.ScatterMin, tile.F32},
	{sm86.SGAdd, fallback.ScatterAdd, tile.F32}, {sm86.SGAdd, fallback.ScatterAdd, tile.F16},
	{sm86.SGAdd, fallback.ScatterAdd, tile.BF16},
}

// TestSimScatter runs sm86.PlanScatter's launches against fallback.ScatterRef
// with many duplicate positions: exact updates (integers) must match bit
// for bit in any order; a store must leave, per element, the value of some
// lane aimed at it (the serial order of some lane permutation); f64 adds
// are checked on integer-valued doubles, which every order sums exactly.
func TestSimScatter(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 2))
	for _, sc := range scatterCases {
		for _, rows := range []bool{false, true} {
			for _, itype := range sgIndexTypes {
				for _, oob := range []tile.OOB{tile.OOBError, tile.OOBClamp, tile.OOBWrap, tile.OOBSkip} {
					for _, n := range sgSizes() {
						if n == 100_000 && itype != tile.S64 {
							continue // the long sizes once per op and mode
						}
						name := fmt.Sprintf("%d/%v/rows=%v/%v/%v/%d", sc.op, sc.d, rows, itype, oob, n)
						t.Run(name, func(t *testing.T) { testScatterCase(t, rng, sc.op, sc.fo, sc.d, rows, itype, oob, n, kindDup) })
					}
				}
			}
		}
	}
}

// floatAdd reports whether (op, d) is a float scatter-add of the CAS family.
func floatAdd(op sm86.SGOp, d tile.DType) bool {
	return op == sm86.SGAdd && (d == tile.F32 || d == tile.F16 || d == tile.BF16)
}

// scatterKind is how a scatter test aims its lanes.
type scatterKind uint8

const (
	kindDup    scatterKind = iota // duplicates, any order
	kindUnique                    // no two lanes meet (the policy then only drops lanes, under OOBSkip)
	kindDet                       // duplicates, Deterministic: the reference's bits
)

// testScatterCase runs one scatter of the given kind.
func testScatterCase(t *testing.T, rng *rand.Rand, op sm86.SGOp, fo fallback.ScatterOp, et tile.DType, rows bool, itype tile.DType, oob tile.OOB, n int, kind scatterKind) {
	unique, det := kind == kindUnique, kind == kindDet
	memRows := 1 + rng.IntN(max(1, n/4)) // duplicates
	if floatAdd(op, et) && !unique {
		memRows = max(memRows, n/16) // sums stay exact in bf16
	}
	if unique {
		memRows = n + rng.IntN(n+1)
	}
	var st, it tile.Tile
	cols := 1
	if rows {
		cols = []int{1, 2, 5}[rng.IntN(3)]
		st = randTile(rng, et, n, cols, rng.IntN(2) == 0)
		it = randTile(rng, itype, n, 1, rng.IntN(2) == 0)
	} else {
		r, c := shapeOf(rng, n)
		st = randTile(rng, et, r, c, rng.IntN(2) == 0)
		it = randTile(rng, itype, r, c, rng.IntN(2) == 0)
	}
	memElems := memRows * cols
	sz := et.Size()
	src := randBytes(rng, st.Bytes())
	mem := randBytes(rng, memElems*sz)
	if et == tile.F64 {
		for k := 0; k < len(src); k += 8 {
			binary.LittleEndian.PutUint64(src[k:], math.Float64bits(float64(rng.IntN(2001)-1000)))
		}
		for k := 0; k < len(mem); k += 8 {
			binary.LittleEndian.PutUint64(mem[k:], math.Float64bits(float64(rng.IntN(2001)-1000)*0.5))
		}
	}
	if floatAdd(op, et) && !unique {
		// small integers, ±0 and ±Inf: every order of adds gives the same
		// bits (Inf − Inf is the same NaN either way, and stays)
		val := func(b []byte, k int, lim int) {
			f := float32(rng.IntN(2*lim+1) - lim)
			switch rng.IntN(16) {
			case 0:
				f = float32(math.Inf(1 - 2*rng.IntN(2)))
			case 1:
				f = float32(math.Copysign(0, -1))
			}
			storeN(b, k, et.Size(), tile.FromFloat32(et, f))
		}
		for k := 0; k < len(src); k += sz {
			val(src, k, 1)
		}
		for k := 0; k < len(mem); k += sz {
			val(mem, k, 4)
		}
	}
	if et == tile.F32 && (!floatAdd(op, et) || unique) { // specials: ±0, ±Inf, NaNs of both signs, subnormals
		sp := []uint32{0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001, 1, 0x80000001}
		for _, b := range [][]byte{src, mem} {
			for k := 0; k < len(b); k += 4 {
				if rng.IntN(6) == 0 {
					binary.LittleEndian.PutUint32(b[k:], sp[rng.IntN(len(sp))])
				}
			}
		}
	}
	idx := randIndices(rng, it, memRows, oob)
	if unique { // distinct positions for the lanes that land
		perm := rng.Perm(memRows)
		itr := it.Resolved()
		for r := 0; r < itr.ValidRows; r++ {
			for c := 0; c < itr.ValidCols; c++ {
				off := itr.At(r, c) * itype.Size()
				if raw := tile.LoadIndex(itype, idx, itr.At(r, c)); oob == tile.OOBSkip && raw >= uint64(memRows) {
					continue // dropped (a negative s32/s64 index is huge unsigned too)
				}
				storeN(idx, off, itype.Size(), uint64(perm[0]))
				perm = perm[1:]
			}
		}
	}
	mode := fallback.IndexElements
	if rows {
		mode = fallback.IndexRows
	}
	want := bytes.Clone(mem)
	if err := fallback.ScatterRef(&fallback.ScatterArgs{Mode: mode, Op: fo, Mem: want, MemRows: memRows,
		Idx: fallback.TileData{Tile: it.Resolved(), Data: idx}, Src: fallback.TileData{Tile: st.Resolved(), Data: src},
		OOB: oob}); err != nil {
		t.Fatal(err)
	}
	d := newSGDev(t)
	slot, slotB := d.put(make([]byte, 8))
	pos, _ := d.put(make([]byte, 4*it.ValidRows*it.ValidCols))
	// two bytes past the table, as in a device allocation (a 16-bit add
	// swaps the aligned word holding its element): they must stay
	tail := randBytes(rng, 2)
	ma, gotAll := d.put(append(bytes.Clone(mem), tail...))
	got := gotAll[:len(mem)]
	ia, _ := d.put(idx)
	sa, _ := d.put(src)
	defer func() {
		if !bytes.Equal(gotAll[len(mem):], tail) {
			t.Errorf("the bytes after the table changed: %x, were %x", gotAll[len(mem):], tail)
		}
	}()
	sgs := sm86.SGScatter{Rows: rows, Op: op, Deterministic: det, Slot: slot, Pos: pos, Mem: ma, Idx: ia, Src: sa,
		MemRows: memRows, IdxTile: it, SrcTile: st, OOB: oob}
	if w := sm86.ScatterWinBytes(sgs); w > 0 {
		sgs.Win, _ = d.put(randBytes(rng, w)) // poisoned: the plan zeroes it
	}
	ls, err := sm86.PlanScatter(sgs)
	if err != nil {
		t.Fatal(err)
	}
	d.run(ls)
	if !bytes.Equal(slotB, make([]byte, 8)) {
		t.Fatalf("fault slot %x after a call without faults", slotB)
	}
	if op != sm86.SGStore || det {
		if k := scatterDiff(et, fo, mem, got, want); k >= 0 {
			t.Fatalf("mem byte %d of %d: got %#02x, want %#02x", k, len(got), got[k], want[k])
		}
		return
	}
	// a store: each element holds its old value when no lane aims at it,
	// else the value of one of the lanes that do.
	st, it = st.Resolved(), it.Resolved()
	cands := make([]map[uint64]bool, memElems)
	for r := 0; r < st.ValidRows; r++ {
		for c := 0; c < st.ValidCols; c++ {
			ir, ic := r, c
			if rows {
				ic = 0
			}
			raw := tile.LoadIndex(itype, idx, it.At(ir, ic))
			p, ok := tile.ResolveIndex(raw, itype.IsSigned(), memRows, oob)
			if !ok {
				continue
			}
			e := p
			if rows {
				e = p*cols + c
			}
			if cands[e] == nil {
				cands[e] = map[uint64]bool{}
			}
			cands[e][loadN(src, st.At(r, c)*sz, sz)] = true
		}
	}
	for e := range memElems {
		v := loadN(got, e*sz, sz)
		if cands[e] == nil {
			if old := loadN(mem, e*sz, sz); v != old {
				t.Fatalf("element %d: no lane aims at it, got %#x, held %#x", e, v, old)
			}
		} else if !cands[e][v] {
			t.Fatalf("element %d: %#x is no lane's value", e, v)
		}
	}
}

func loadN(b []byte, off, sz int) uint64 {
	var w [8]byte
	copy(w[:], b[off:off+sz])
	return binary.LittleEndian.Uint64(w[:])
}

// TestSimScatterFault: a faulting index under OOBError leaves memory
// unchanged byte for byte and the slot names the first faulting lane.
func TestSimScatterFault(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 3))
	for _, sc := range scatterCases {
		for _, itype := range sgIndexTypes {
			n := []int{1, 7, 129, 1000}[rng.IntN(4)]
			memRows := 1 + rng.IntN(n)
			r, c := shapeOf(rng, n)
			it := randTile(rng, itype, r, c, true)
			st := randTile(rng, sc.d, r, c, true)
			idx := randIndices(rng, it, memRows, tile.OOBError)
			l := rng.IntN(n)
			bad := uint64(memRows)
			if itype.Size() == 4 {
				binary.LittleEndian.PutUint32(idx[it.Resolved().At(l/c, l%c)*4:], uint32(bad))
			} else {
				binary.LittleEndian.PutUint64(idx[it.Resolved().At(l/c, l%c)*8:], bad)
			}
			mem := randBytes(rng, memRows*sc.d.Size())
			src := randBytes(rng, st.Bytes())
			d := newSGDev(t)
			slot, slotB := d.put(make([]byte, 8))
			pos, _ := d.put(make([]byte, 4*n))
			ma, got := d.put(mem)
			ia, _ := d.put(idx)
			sa, _ := d.put(src)
			ls, err := sm86.PlanScatter(sm86.SGScatter{Op: sc.op, Slot: slot, Pos: pos, Mem: ma, Idx: ia, Src: sa,
				MemRows: memRows, IdxTile: it, SrcTile: st, OOB: tile.OOBError})
			if err != nil {
				t.Fatal(err)
			}
			d.run(ls)
			if lane, ok := sm86.SGFault(binary.LittleEndian.Uint64(slotB)); !ok || lane != l {
				t.Errorf("%d %v %v n=%d: slot says lane %d (%v), want %d", sc.op, sc.d, itype, n, lane, ok, l)
			}
			if !bytes.Equal(got, mem) {
				t.Errorf("%d %v %v n=%d: memory changed after a fault", sc.op, sc.d, itype, n)
			}
		}
	}
}

// TestSGSupports: the plans refuse what their kernels do not cover, with
// sm86.ErrSGUnsupported.
func TestSGSupports(t *testing.T) {
	it := tile.Dense(tile.S32, 4, 1)
	ok := sm86.SGScatter{Op: sm86.SGAdd, MemRows: 8, IdxTile: it, SrcTile: tile.Dense(tile.S32, 4, 1)}
	if err := sm86.ScatterSupports(ok); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]sm86.SGScatter{
		"det f64 add":    {Op: sm86.SGAdd, Deterministic: true, MemRows: 8, IdxTile: it, SrcTile: tile.Dense(tile.F64, 4, 1)},
		"det f32 add":    {Op: sm86.SGAdd, Deterministic: true, MemRows: 8, IdxTile: it, SrcTile: tile.Dense(tile.F32, 4, 1)},
		"det bf16 add":   {Op: sm86.SGAdd, Deterministic: true, MemRows: 8, IdxTile: it, SrcTile: tile.Dense(tile.BF16, 4, 1)},
		"f16 max":        {Op: sm86.SGMax, MemRows: 8, IdxTile: it, SrcTile: tile.Dense(tile.F16, 4, 1)},
		"zero policy":    {Op: sm86.SGAdd, OOB: tile.OOBZero, MemRows: 8, IdxTile: it, SrcTile: tile.Dense(tile.S32, 4, 1)},
		"no memory":      {Op: sm86.SGAdd, MemRows: 0, IdxTile: it, SrcTile: tile.Dense(tile.S32, 4, 1)},
		"index f32":      {Op: sm86.SGAdd, MemRows: 8, IdxTile: tile.Dense(tile.F32, 4, 1), SrcTile: tile.Dense(tile.S32, 4, 1)},
		"huge memory":    {Op: sm86.SGAdd, MemRows: 1 << 31, IdxTile: it, SrcTile: tile.Dense(tile.S32, 4, 1)},
		"e4m3 storeless": {Op: sm86.SGAdd, MemRows: 8, IdxTile: it, SrcTile: tile.Dense(tile.E4M3, 4, 1)},
	} {
		if err := sm86.ScatterSupports(s); !errors.Is(err, sm86.ErrSGUnsupported) {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := sm86.PlanScatter(s); !errors.Is(err, sm86.ErrSGUnsupported) {
			t.Errorf("%s: plan: %v", name, err)
		}
	}
	if err := sm86.GatherSupports(sm86.SGGather{MemRows: 8, IdxTile: it, DstTile: tile.Dense(tile.F32, 4, 1), OOB: tile.OOBSkip}); !errors.Is(err, sm86.ErrSGUnsupported) {
		t.Errorf("gather skip: %v", err)
	}
}

// casCase builds a gather-CAS over a memory of memElems elements of type
// d: lane l aims at element aim[l] through a displacement of index type
// it from a random base.
type casCase struct {
	d, it                   tile.DType
	dt, itile, etile, rtile tile.Tile
	mem, idx, exp, rep, dst []byte
	base                    int
	aim                     []int
}

func newCASCase(rng *rand.Rand, d, it tile.DType, rows, cols, memElems int, aim []int) *casCase {
	sz := d.Size()
	c := &casCase{d: d, it: it, aim: aim}
	c.dt = randTile(rng, d, rows, cols, true)
	c.itile = randTile(rng, it, rows, cols, rng.IntN(2) == 0)
	c.etile = randTile(rng, d, rows, cols, rng.IntN(2) == 0)
	c.rtile = randTile(rng, d, rows, cols, rng.IntN(2) == 0)
	c.mem = randBytes(rng, (memElems*sz+3)&^3) // whole words (sm86.GatherCASSupports)
	if !it.IsSigned() {
		c.base = 0
	} else {
		c.base = sz * rng.IntN(memElems+1)
	}
	c.idx = make([]byte, c.itile.Bytes())
	c.exp = randBytes(rng, c.etile.Bytes())
	c.rep = randBytes(rng, c.rtile.Bytes())
	c.dst = bytes.Repeat([]byte{0xFF}, c.dt.Bytes())
	for r := 0; r < rows; r++ {
		for col := 0; col < cols; col++ {
			l := r*cols + col
			disp := uint64(int64(aim[l]*sz - c.base))
			if it.Size() == 4 {
				binary.LittleEndian.PutUint32(c.idx[c.itile.At(r, col)*4:], uint32(disp))
			} else {
				binary.LittleEndian.PutUint64(c.idx[c.itile.At(r, col)*8:], disp)
			}
		}
	}
	return c
}

// run runs sm86.PlanGatherCAS in the simulator; it returns the memory, the
// destination and the fault slot after the launches.
func (c *casCase) run(t *testing.T) (mem, dst []byte, slot uint64) {
	t.Helper()
	d := newSGDev(t)
	sa, slotB := d.put(make([]byte, 8))
	lanes := c.dt.ValidRows * c.dt.ValidCols
	pos, _ := d.put(make([]byte, 8*lanes))
	ma, mem := d.put(c.mem)
	ia, _ := d.put(c.idx)
	ea, _ := d.put(c.exp)
	ra, _ := d.put(c.rep)
	da, dst := d.put(c.dst)
	ls, err := sm86.PlanGatherCAS(sm86.SGGatherCAS{Slot: sa, Pos: pos, Mem: ma, Idx: ia, Exp: ea, Rep: ra, Dst: da,
		MemBytes: len(c.mem), Base: c.base, IdxTile: c.itile, ExpTile: c.etile, RepTile: c.rtile, DstTile: c.dt})
	if err != nil {
		t.Fatal(err)
	}
	d.run(ls)
	return mem, dst, binary.LittleEndian.Uint64(slotB)
}

func (c *casCase) ref() ([]byte, []byte, error) {
	mem, dst := bytes.Clone(c.mem), bytes.Clone(c.dst)
	err := fallback.GatherCASRef(&fallback.GatherCASArgs{Mem: mem, Base: c.base,
		Idx: fallback.TileData{Tile: c.itile.Resolved(), Data: c.idx}, Expected: fallback.TileData{Tile: c.etile.Resolved(), Data: c.exp},
		Replacement: fallback.TileData{Tile: c.rtile.Resolved(), Data: c.rep}, Dst: fallback.TileData{Tile: c.dt.Resolved(), Data: dst}})
	return mem, dst, err
}

var casTypes = []tile.DType{tile.U8, tile.F16, tile.S32, tile.F64}

// TestSimGatherCAS: lanes at distinct elements (any order gives the
// reference's bytes), half of them expecting the held value: memory and
// the padded destination match fallback.GatherCASRef byte for byte, for
// every transfer size and index type, neighbours of 8- and 16-bit lanes in
// the same word included.
func TestSimGatherCAS(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 4))
	for _, d := range casTypes {
		for _, it := range sgIndexTypes {
			for _, n := range sgSizes() {
				t.Run(fmt.Sprintf("%v/%v/%d", d, it, n), func(t *testing.T) {
					rows, cols := shapeOf(rng, n)
					memElems := n + rng.IntN(n+3)
					aim := rng.Perm(memElems)[:n]
					c := newCASCase(rng, d, it, rows, cols, memElems, aim)
					sz := d.Size()
					for r := 0; r < rows; r++ {
						for col := 0; col < cols; col++ {
							if rng.IntN(2) == 0 { // expect the held value: a swap
								e := c.etile.Resolved().At(r, col) * sz
								copy(c.exp[e:e+sz], c.mem[aim[r*cols+col]*sz:])
							}
						}
					}
					wantMem, wantDst, err := c.ref()
					if err != nil {
						t.Fatal(err)
					}
					mem, dst, slot := c.run(t)
					if slot != 0 {
						t.Fatalf("fault slot %#x", slot)
					}
					if k := firstDiff(mem, wantMem); k >= 0 {
						t.Fatalf("mem byte %d: got %#02x, want %#02x", k, mem[k], wantMem[k])
					}
					if k := firstDiff(dst, wantDst); k >= 0 {
						t.Fatalf("dst byte %d: got %#02x, want %#02x", k, dst[k], wantDst[k])
					}
				})
			}
		}
	}
}

// TestSimGatherCASContention aims many lanes at a few elements (8- and
// 16-bit ones sharing words): every replacement value is distinct and
// differs from the held values, and each lane expects the held value or
// another lane's replacement. Some serial order must explain the result:
// the successful lanes (observed == expected) form one chain from the held
// value to the final one, each installed value swapped out by at most one
// lane, and every failed lane observed a value of that chain other than
// the one it expected. Elements no lane aims at keep their bytes.
func TestSimGatherCASContention(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 5))
	for _, d := range casTypes {
		for _, it := range sgIndexTypes {
			for _, n := range []int{7, 129, 1000} {
				t.Run(fmt.Sprintf("%v/%v/%d", d, it, n), func(t *testing.T) {
					sz := d.Size()
					rows, cols := shapeOf(rng, n)
					memElems := 8
					aim := make([]int, n)
					for l := range aim {
						aim[l] = rng.IntN(memElems)
					}
					c := newCASCase(rng, d, it, rows, cols, memElems, aim)
					et, rt, dt := c.etile.Resolved(), c.rtile.Resolved(), c.dt.Resolved()
					// held values 0..7 are the initial ones; replacements count
					// up from 8 (distinct per lane within the element's width).
					reps := map[int][]uint64{}
					for e := range memElems {
						storeN(c.mem, e*sz, sz, uint64(e))
						reps[e] = []uint64{uint64(e)}
					}
					next := uint64(8)
					for l := range n {
						r, col := l/cols, l%cols
						v := next
						next++
						if sz == 1 && next > 255 {
							next = 8 // few lanes per element keep 8-bit values distinct per element
						}
						storeN(c.rep, rt.At(r, col)*sz, sz, v)
						reps[aim[l]] = append(reps[aim[l]], v)
					}
					if sz == 1 && n > 200 {
						t.Skip("8-bit replacements cannot be distinct per element for this many lanes")
					}
					for l := range n {
						r, col := l/cols, l%cols
						// half the lanes expect the initial value, so lanes at
						// neighbouring bytes of one word race to swap at once.
						cand := reps[aim[l]]
						v := cand[0]
						if rng.IntN(2) == 0 {
							v = cand[rng.IntN(len(cand))]
						}
						storeN(c.exp, et.At(r, col)*sz, sz, v)
					}
					mem, dst, slot := c.run(t)
					if slot != 0 {
						t.Fatalf("fault slot %#x", slot)
					}
					for e := range memElems {
						held := uint64(e)
						type lane struct{ exp, rep, obs uint64 }
						var ok, failed []lane
						for l := range n {
							if aim[l] != e {
								continue
							}
							r, col := l/cols, l%cols
							x := lane{loadN(c.exp, et.At(r, col)*sz, sz), loadN(c.rep, rt.At(r, col)*sz, sz), loadN(dst, dt.At(r, col)*sz, sz)}
							if x.obs == x.exp {
								ok = append(ok, x)
							} else {
								failed = append(failed, x)
							}
						}
						chain := map[uint64]bool{held: true}
						bySrc := map[uint64]lane{}
						for _, x := range ok {
							if _, dup := bySrc[x.exp]; dup {
								t.Fatalf("element %d: value %#x swapped out twice", e, x.exp)
							}
							bySrc[x.exp] = x
						}
						cur := held
						for range ok {
							x, found := bySrc[cur]
							if !found {
								t.Fatalf("element %d: the successful lanes do not form one chain from %#x", e, held)
							}
							cur = x.rep
							chain[cur] = true
						}
						if got := loadN(mem, e*sz, sz); got != cur {
							t.Fatalf("element %d: final %#x, chain ends at %#x", e, got, cur)
						}
						for _, x := range failed {
							if !chain[x.obs] {
								t.Fatalf("element %d: a failed lane observed %#x, never held", e, x.obs)
							}
						}
					}
				})
			}
		}
	}
}

func storeN(b []byte, off, sz int, v uint64) {
	var w [8]byte
	binary.LittleEndian.PutUint64(w[:], v)
	copy(b[off:off+sz], w[:sz])
}

// TestSimGatherCASFault: a displacement outside the memory, or misaligned,
// faults the first such lane with memory and destination unchanged.
func TestSimGatherCASFault(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 6))
	for _, d := range casTypes {
		for _, it := range sgIndexTypes {
			for _, misalign := range []bool{false, true} {
				if misalign && d.Size() == 1 {
					continue
				}
				n := []int{1, 7, 129, 1000}[rng.IntN(4)]
				rows, cols := shapeOf(rng, n)
				memElems := n + 5
				aim := rng.Perm(memElems)[:n]
				c := newCASCase(rng, d, it, rows, cols, memElems, aim)
				l := rng.IntN(n)
				bad := uint64(int64(len(c.mem) - c.base)) // one past the end
				if misalign {
					bad = uint64(int64(aim[l]*d.Size() - c.base + 1))
				} else if it.IsSigned() && rng.IntN(2) == 0 {
					bad = uint64(-int64(c.base + d.Size()))
				}
				it2 := c.itile.Resolved()
				if it.Size() == 4 {
					binary.LittleEndian.PutUint32(c.idx[it2.At(l/cols, l%cols)*4:], uint32(bad))
				} else {
					binary.LittleEndian.PutUint64(c.idx[it2.At(l/cols, l%cols)*8:], bad)
				}
				if _, _, err := c.ref(); !errors.Is(err, tile.ErrBounds) {
					t.Fatalf("%v %v: the reference does not fault: %v", d, it, err)
				}
				mem, dst, slot := c.run(t)
				if lane, ok := sm86.SGFault(slot); !ok || lane != l {
					t.Errorf("%v %v misalign=%v n=%d: slot says lane %d (%v), want %d", d, it, misalign, n, lane, ok, l)
				}
				if !bytes.Equal(mem, c.mem) || !bytes.Equal(dst, c.dst) {
					t.Errorf("%v %v misalign=%v: memory or destination changed after a fault", d, it, misalign)
				}
			}
		}
	}
}

// TestSimScatterDeterministic: a Deterministic store leaves the largest
// lane's value in every element, fallback.ScatterRef's bytes, with many
// duplicates: both modes, every index type and scatter policy, element
// sizes 1 to 8, the winners' scratch poisoned.
func TestSimScatterDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 8))
	for _, d := range []tile.DType{tile.U8, tile.BF16, tile.F32, tile.S64} {
		for _, rows := range []bool{false, true} {
			for _, itype := range sgIndexTypes {
				for _, oob := range []tile.OOB{tile.OOBError, tile.OOBClamp, tile.OOBWrap, tile.OOBSkip} {
					for _, n := range sgSizes() {
						if n == 100_000 && (itype != tile.S64 || oob != tile.OOBWrap) {
							continue // the long size once per type and mode
						}
						name := fmt.Sprintf("%v/rows=%v/%v/%v/%d", d, rows, itype, oob, n)
						t.Run(name, func(t *testing.T) {
							testScatterCase(t, rng, sm86.SGStore, fallback.ScatterStore, d, rows, itype, oob, n, kindDet)
						})
					}
				}
			}
		}
	}
}

// TestSimScatterAddUnique: the float adds bit for bit against
// fallback.ScatterRef on arbitrary bits (subnormals, ±0, ±Inf, NaNs of
// both signs, held and arriving) when no two lanes meet: both modes, every
// index type and scatter policy, valid regions inside larger physical ones.
func TestSimScatterAddUnique(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 7))
	for _, d := range []tile.DType{tile.F32, tile.F16, tile.BF16} {
		for _, rows := range []bool{false, true} {
			for _, itype := range sgIndexTypes {
				for _, oob := range []tile.OOB{tile.OOBError, tile.OOBClamp, tile.OOBWrap, tile.OOBSkip} {
					ns := sgSizes()
					if itype != tile.S32 {
						ns = []int{ns[rng.IntN(len(ns))]}
					}
					if oob != tile.OOBSkip && ns[len(ns)-1] == 100_000 {
						ns = ns[:len(ns)-1] // the long size once per type and mode
					}
					for _, n := range ns {
						name := fmt.Sprintf("%v/rows=%v/%v/%v/%d", d, rows, itype, oob, n)
						t.Run(name, func(t *testing.T) {
							testScatterCase(t, rng, sm86.SGAdd, fallback.ScatterAdd, d, rows, itype, oob, n, kindUnique)
						})
					}
				}
			}
		}
	}
}

// TestSimScatterAddNaN: every pair of NaN, Inf and finite operands, held
// and arriving, in every float add type, gives fallback.ScatterRef's bits
// (the NaN that wins, its quiet bit, Inf − Inf's NaN).
func TestSimScatterAddNaN(t *testing.T) {
	vals := map[tile.DType][]uint64{
		tile.F32:  {0x7f800001, 0xffc00002, 0x7fc00003, 0x7f800000, 0xff800000, 0x3f800000, 0x80000000, 1},
		tile.F16:  {0x7c01, 0xfe02, 0x7e03, 0x7c00, 0xfc00, 0x3c00, 0x8000, 1},
		tile.BF16: {0x7f81, 0xffc2, 0x7fc3, 0x7f80, 0xff80, 0x3f80, 0x8000, 1},
	}
	for d, vs := range vals {
		sz := d.Size()
		n := len(vs) * len(vs)
		mem, src, idx := make([]byte, n*sz), make([]byte, n*sz), make([]byte, 4*n)
		for i, a := range vs {
			for j, b := range vs {
				k := i*len(vs) + j
				storeN(mem, k*sz, sz, a)
				storeN(src, k*sz, sz, b)
				storeN(idx, 4*k, 4, uint64(k))
			}
		}
		it, st := tile.Dense(tile.S32, 1, n), tile.Dense(d, 1, n)
		want := bytes.Clone(mem)
		if err := fallback.ScatterRef(&fallback.ScatterArgs{Mode: fallback.IndexElements, Op: fallback.ScatterAdd, Mem: want,
			MemRows: n, Idx: fallback.TileData{Tile: it, Data: idx}, Src: fallback.TileData{Tile: st, Data: src}}); err != nil {
			t.Fatal(err)
		}
		dev := newSGDev(t)
		slot, _ := dev.put(make([]byte, 8))
		pos, _ := dev.put(make([]byte, 4*n))
		ma, got := dev.put(mem)
		ia, _ := dev.put(idx)
		sa, _ := dev.put(src)
		ls, err := sm86.PlanScatter(sm86.SGScatter{Op: sm86.SGAdd, Slot: slot, Pos: pos, Mem: ma, Idx: ia, Src: sa,
			MemRows: n, IdxTile: it, SrcTile: st})
		if err != nil {
			t.Fatal(err)
		}
		dev.run(ls)
		for k := 0; k < n; k++ {
			a, b := loadN(mem, k*sz, sz), loadN(src, k*sz, sz)
			g, w := loadN(got, k*sz, sz), loadN(want, k*sz, sz)
			if g == w {
				continue
			}
			// two NaNs: either one, quieted (which one the CPU returns
			// depends on the compiled instruction order: fallback.Combine)
			if isNaNBits(d, a) && isNaNBits(d, b) && (g == quietBits(d, a) || g == quietBits(d, b)) {
				continue
			}
			t.Errorf("%v: %#x + %#x: got %#x, the CPU %#x", d, a, b, g, w)
		}
	}
}
