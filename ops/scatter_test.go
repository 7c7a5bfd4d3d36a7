package ops_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

var scatterTypesTest = map[ops.ScatterOp][]tile.DType{
	ops.ScatterStore: {tile.U8, tile.F16, tile.BF16, tile.F32, tile.S32, tile.F64, tile.S64},
	ops.ScatterAdd:   {tile.F32, tile.F16, tile.BF16, tile.F64, tile.S32, tile.U32},
	ops.ScatterMax:   {tile.S32, tile.U32, tile.F32},
	ops.ScatterMin:   {tile.S32, tile.U32, tile.F32},
}

// randElem returns the raw bits of a random value of d: for floats, small
// integers when exact (every order of adds gives the same sum), else
// arbitrary values including ±0 and NaN for f32.
func randElem(rng *rand.Rand, d tile.DType, exact bool) uint64 {
	switch d {
	case tile.F32:
		if exact {
			return uint64(math.Float32bits(float32(rng.IntN(7) - 3)))
		}
		switch rng.IntN(10) {
		case 0:
			return 0x80000000 // −0
		case 1:
			return 0
		case 2:
			return 0x7fc00000
		}
		return uint64(math.Float32bits(rng.Float32()*2 - 1))
	case tile.F64:
		if exact {
			return math.Float64bits(float64(rng.IntN(7) - 3))
		}
		return math.Float64bits(rng.NormFloat64())
	case tile.F16, tile.BF16:
		if exact {
			return tile.FromFloat32(d, float32(rng.IntN(5)-2))
		}
		return tile.FromFloat32(d, rng.Float32()*4-2)
	}
	return rng.Uint64() >> (64 - d.Bits())
}

func putElem(raw []byte, d tile.DType, i int, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	copy(raw[i*d.Size():], b[:d.Size()])
}

// TestMScatterMatchesReference runs every operation × element type × index
// type × mode × layout × order, with duplicate indices and a random OOB
// policy, on the default kernel and on the reference, and compares memory
// bit for bit. Unordered plain scatters use distinct targets (the result is
// otherwise "one of the writers"); unordered float adds use values whose sums
// are exact in any order.
func TestMScatterMatchesReference(t *testing.T) {
	fast, ref := openTest(t), openForced(t, "cpu.mscatter.reference")
	rng := rand.New(rand.NewPCG(21, 22))
	ctx := context.Background()
	n := 0
	for op, types := range scatterTypesTest {
		for _, d := range types {
			for _, it := range []tile.DType{tile.S32, tile.U32, tile.S64, tile.U64} {
				for _, mode := range []ops.IndexMode{ops.IndexRows, ops.IndexElements} {
					for _, lay := range []tile.Layout{tile.RowMajor, tile.ColMajor} {
						for _, det := range []bool{false, true} {
							if testing.Short() && rng.IntN(3) > 0 {
								continue
							}
							oob := []ops.OOB{ops.OOBError, ops.OOBSkip, ops.OOBClamp, ops.OOBWrap}[rng.IntN(4)]
							unique := op == ops.ScatterStore && !det
							if unique {
								oob = ops.OOBError
							}
							vr, vc := 1+rng.IntN(20), 1+rng.IntN(9)
							src := tile.Tile{DType: d, ValidRows: vr, ValidCols: vc, Rows: vr + rng.IntN(3), Cols: vc + rng.IntN(3), Layout: lay}
							srcRaw := randBytes(rng, src.Bytes())
							for r := 0; r < vr; r++ {
								for c := 0; c < vc; c++ {
									putElem(srcRaw, d, src.At(r, c), randElem(rng, d, !det))
								}
							}
							ic := vc
							if mode == ops.IndexRows {
								ic = 1
							}
							idx := tile.Tile{DType: it, ValidRows: vr, ValidCols: ic, Layout: tile.Layout(rng.IntN(2))}
							rows := 1 + rng.IntN(12)
							if unique {
								rows = vr*ic + rng.IntN(4)
							}
							memElems, shape := rows, []int{rows}
							if mode == ops.IndexRows {
								memElems, shape = rows*vc, []int{rows, vc}
							}
							memRaw := make([]byte, memElems*d.Size())
							for e := 0; e < memElems; e++ {
								putElem(memRaw, d, e, randElem(rng, d, !det))
							}
							idxRaw := make([]byte, idx.Resolved().Bytes())
							perm := rng.Perm(rows)
							for r := 0; r < vr; r++ {
								for c := 0; c < ic; c++ {
									v := int64(rng.IntN(rows))
									if unique {
										v = int64(perm[r*ic+c])
									} else if oob != ops.OOBError && rng.IntN(4) == 0 {
										v = int64(rows + rng.IntN(30))
										if it.IsSigned() && rng.IntN(2) == 0 {
											v = -v
										}
									}
									putIdx(idxRaw, idx, r, c, v)
								}
							}
							name := fmt.Sprintf("%v %v idx %v %v %v det=%v oob %v %dx%d into %d", op, d, it, mode, lay, det, oob, vr, vc, rows)
							var outs [2][]byte
							for i, rt := range []*runtime.Runtime{fast, ref} {
								mem := bufWith(t, rt, d, memRaw, shape...)
								s := tileWith(t, rt, src, srcRaw)
								x := tileWith(t, rt, idx, idxRaw)
								err := ops.MScatter(ctx, rt, mem, x, s, &ops.ScatterOptions{Mode: mode, Op: op, Deterministic: det, OOB: oob})
								if err != nil {
									t.Fatalf("%s: %v", name, err)
								}
								outs[i] = bytesOf(t, mem)
								mem.Close()
								s.Buf.Close()
								x.Buf.Close()
							}
							if !bytes.Equal(outs[0], outs[1]) {
								t.Fatalf("%s: memory differs from the reference", name)
							}
							n++
						}
					}
				}
			}
		}
	}
	t.Logf("%d cases", n)
}

// TestMScatterDeterministicFloat repeats a deterministic f32 scatter-add
// with many duplicates: every run gives the reference's bits, which differ
// from at least one other order of the same adds.
func TestMScatterDeterministicFloat(t *testing.T) {
	fast, ref := openTest(t), openForced(t, "cpu.mscatter.reference")
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(23, 24))
	const lanes, slots = 20000, 3
	srcRaw, idxRaw := make([]byte, 4*lanes), make([]byte, 4*lanes)
	for l := 0; l < lanes; l++ {
		putElem(srcRaw, tile.F32, l, uint64(math.Float32bits(float32(rng.NormFloat64()*1000))))
		putElem(idxRaw, tile.S32, l, uint64(rng.IntN(slots)))
	}
	run := func(rt *runtime.Runtime, det bool) []byte {
		mem := bufWith(t, rt, tile.F32, make([]byte, 4*slots), slots)
		src := tileWith(t, rt, tile.Dense(tile.F32, lanes, 1), srcRaw)
		idx := tileWith(t, rt, tile.Dense(tile.S32, lanes, 1), idxRaw)
		if err := ops.MScatter(ctx, rt, mem, idx, src, &ops.ScatterOptions{Mode: ops.IndexElements, Op: ops.ScatterAdd, Deterministic: det}); err != nil {
			t.Fatal(err)
		}
		return bytesOf(t, mem)
	}
	want := run(ref, true)
	for i := 0; i < 5; i++ {
		if got := run(fast, true); !bytes.Equal(got, want) {
			t.Fatalf("run %d: deterministic sums %x, reference %x", i, got, want)
		}
	}
	// The order matters for these values: summing backwards differs.
	var back [slots]float32
	for l := lanes - 1; l >= 0; l-- {
		back[binary.LittleEndian.Uint32(idxRaw[4*l:])] += math.Float32frombits(binary.LittleEndian.Uint32(srcRaw[4*l:]))
	}
	same := true
	for s := 0; s < slots; s++ {
		same = same && math.Float32bits(back[s]) == binary.LittleEndian.Uint32(want[4*s:])
	}
	if same {
		t.Log("note: the backward order happened to give the same bits")
	}
}

// TestMScatterStress has many goroutines, each on its own stream, scatter
// integers (and exactly representable floats) into a few shared slots at
// once: the totals must be exact.
func TestMScatterStress(t *testing.T) {
	rt := openTest(t)
	ctx := context.Background()
	G, rounds, lanes := 8, 20, 512
	if testing.Short() {
		rounds = 6
	}
	const slots = 4
	for _, d := range []tile.DType{tile.S32, tile.U32, tile.F32, tile.F16, tile.F64} {
		mem := bufWith(t, rt, d, make([]byte, slots*d.Size()), slots)
		var want [slots]int64
		var mu sync.Mutex
		var wg sync.WaitGroup
		errs := make(chan error, G)
		for g := 0; g < G; g++ {
			rng := rand.New(rand.NewPCG(uint64(g), 99))
			lanes := lanes
			if d == tile.F16 {
				lanes = 32 // with values 0 or 1 spread evenly, every total stays ≤ 2048, where f16 integers are exact
			}
			srcRaw, idxRaw := make([]byte, lanes*d.Size()), make([]byte, 4*lanes)
			var local [slots]int64
			for l := 0; l < lanes; l++ {
				v := int64(rng.IntN(3))
				s := rng.IntN(slots)
				switch d {
				case tile.S32:
					v = int64(rng.IntN(2001) - 1000)
				case tile.F16:
					v, s = int64(rng.IntN(2)), l%slots
				}
				local[s] += v * int64(rounds)
				switch d {
				case tile.F32:
					putElem(srcRaw, d, l, uint64(math.Float32bits(float32(v))))
				case tile.F64:
					putElem(srcRaw, d, l, math.Float64bits(float64(v)))
				case tile.F16:
					putElem(srcRaw, d, l, uint64(tile.F32ToF16(float32(v))))
				default:
					putElem(srcRaw, d, l, uint64(v))
				}
				putElem(idxRaw, tile.S32, l, uint64(s))
			}
			mu.Lock()
			for s := range want {
				want[s] += local[s]
			}
			mu.Unlock()
			src := tileWith(t, rt, tile.Dense(d, lanes, 1), srcRaw)
			idx := tileWith(t, rt, tile.Dense(tile.S32, lanes, 1), idxRaw)
			st, err := rt.NewStream()
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := 0; r < rounds; r++ {
					if err := ops.MScatter(ctx, rt, mem, idx, src, &ops.ScatterOptions{Mode: ops.IndexElements, Op: ops.ScatterAdd, Stream: st}); err != nil {
						errs <- err
						return
					}
				}
				if err := st.Synchronize(ctx); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		got := bytesOf(t, mem)
		for s := 0; s < slots; s++ {
			var g int64
			switch d {
			case tile.S32:
				g = int64(int32(binary.LittleEndian.Uint32(got[4*s:])))
			case tile.U32:
				g = int64(binary.LittleEndian.Uint32(got[4*s:]))
			case tile.F32:
				g = int64(math.Float32frombits(binary.LittleEndian.Uint32(got[4*s:])))
			case tile.F64:
				g = int64(math.Float64frombits(binary.LittleEndian.Uint64(got[8*s:])))
			case tile.F16:
				g = int64(tile.F16ToF32(binary.LittleEndian.Uint16(got[2*s:])))
			}
			w := want[s]
			if d == tile.U32 {
				w = int64(uint32(w))
			}
			if g != w {
				t.Errorf("%v slot %d: total %d, want %d", d, s, g, w)
			}
		}
	}
}

// TestMScatterFaults checks every bad-input rule with memory and source
// unchanged.
func TestMScatterFaults(t *testing.T) {
	rt := openTest(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(25, 26))
	type setup struct {
		mem      *runtime.Buffer
		idx, src ops.Tile
		opt      ops.ScatterOptions
	}
	base := func() *setup {
		mem := bufWith(t, rt, tile.S32, randBytes(rng, 4*16), 16)
		src := tileWith(t, rt, tile.Dense(tile.S32, 2, 3), randBytes(rng, 24))
		raw := make([]byte, 24)
		for i := 0; i < 6; i++ {
			putElem(raw, tile.S32, i, uint64(rng.IntN(16)))
		}
		idx := tileWith(t, rt, tile.Dense(tile.S32, 2, 3), raw)
		return &setup{mem: mem, idx: idx, src: src, opt: ops.ScatterOptions{Mode: ops.IndexElements, Op: ops.ScatterAdd}}
	}
	if s := base(); ops.MScatter(ctx, rt, s.mem, s.idx, s.src, &s.opt) != nil {
		t.Fatal("baseline scatter failed")
	}
	setIdx := func(s *setup, i int, v int64) {
		raw := bytesOf(t, s.idx.Buf)
		putElem(raw, tile.S32, i, uint64(v))
		s.idx.Buf.Write(ctx, 0, raw)
	}
	cases := []struct {
		name      string
		mut       func(s *setup)
		arg       string
		sentinels []error
	}{
		{"index past memory", func(s *setup) { setIdx(s, 5, 16) }, "idx", []error{ops.ErrBounds}},
		{"negative index", func(s *setup) { setIdx(s, 0, -3) }, "idx", []error{ops.ErrBounds}},
		{"missing src", func(s *setup) { s.src.Buf = nil }, "src", []error{ops.ErrTileLegality, ops.ErrArgument}},
		{"missing idx", func(s *setup) { s.idx.Buf = nil }, "idx", []error{ops.ErrTileLegality, ops.ErrArgument}},
		{"missing mem", func(s *setup) { s.mem = nil }, "mem", []error{ops.ErrTileLegality}},
		{"idx mis-shaped", func(s *setup) { s.idx.Desc = tile.Tile{DType: tile.S32, ValidRows: 3, ValidCols: 2} }, "idx", []error{ops.ErrTileLegality, ops.ErrShape}},
		{"src mis-shaped buffer", func(s *setup) { s.src.Desc.Rows = 4 }, "src", []error{ops.ErrTileLegality, ops.ErrShape}},
		{"float index", func(s *setup) {
			s.idx = tileWith(t, rt, tile.Dense(tile.F64, 2, 3), make([]byte, 48))
		}, "idx", []error{ops.ErrTileLegality, ops.ErrDType}},
		{"zero dims", func(s *setup) { s.src.Desc.ValidCols = 0 }, "src", []error{ops.ErrTileLegality, ops.ErrShape}},
		{"add on u8", func(s *setup) {
			s.src = tileWith(t, rt, tile.Dense(tile.U8, 2, 3), make([]byte, 6))
			s.mem = bufWith(t, rt, tile.U8, make([]byte, 16), 16)
		}, "src", []error{ops.ErrTileLegality, ops.ErrDType}},
		{"max on f16", func(s *setup) {
			s.opt.Op = ops.ScatterMax
			s.src = tileWith(t, rt, tile.Dense(tile.F16, 2, 3), make([]byte, 12))
			s.mem = bufWith(t, rt, tile.F16, make([]byte, 32), 16)
		}, "src", []error{ops.ErrTileLegality, ops.ErrDType}},
		{"mem dtype", func(s *setup) { s.mem = bufWith(t, rt, tile.U32, make([]byte, 64), 16) }, "mem", []error{ops.ErrTileLegality, ops.ErrDType}},
		{"zero policy", func(s *setup) { s.opt.OOB = ops.OOBZero }, "OOB", []error{ops.ErrTileLegality, ops.ErrArgument}},
		{"bad op", func(s *setup) { s.opt.Op = 9 }, "Op", []error{ops.ErrTileLegality, ops.ErrArgument}},
		{"alias", func(s *setup) { s.mem = s.src.Buf }, "mem", []error{ops.ErrAlias}},
	}
	for _, c := range cases {
		s := base()
		c.mut(s)
		sn := snap(t, s.mem, s.src.Buf, s.idx.Buf)
		wantFault(t, c.name, ops.MScatter(ctx, rt, s.mem, s.idx, s.src, &s.opt), c.arg, c.sentinels...)
		sn.unchanged(t, c.name)
	}
}
