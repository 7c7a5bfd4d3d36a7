package ops_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

func getElem(raw []byte, size, i int) uint64 {
	var b [8]byte
	copy(b[:], raw[i*size:i*size+size])
	return binary.LittleEndian.Uint64(b[:])
}

func nextPow2(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}

// TestMGatherCASMatchesReference compares the atomic kernel with the
// reference over every transfer width (several types per width), index
// type, layout and pad, with signed displacements around a base in the
// middle of memory, valid regions smaller than the physical tile, and
// expected values that match about half the time. Addresses are distinct so
// the result is defined.
func TestMGatherCASMatchesReference(t *testing.T) {
	fast, ref := openTest(t), openForced(t, "cpu.mgather_cas.reference")
	rng := rand.New(rand.NewPCG(31, 32))
	ctx := context.Background()
	n := 0
	for _, d := range []tile.DType{tile.U8, tile.E4M3, tile.S16, tile.BF16, tile.F32, tile.U32, tile.F64, tile.S64} {
		sz := d.Size()
		for _, it := range []tile.DType{tile.S32, tile.U32, tile.S64, tile.U64} {
			for _, lay := range []tile.Layout{tile.RowMajor, tile.ColMajor} {
				for p := 0; p < 5; p++ {
					if testing.Short() && rng.IntN(2) > 0 {
						continue
					}
					vr, vc := 1+rng.IntN(9), 1+rng.IntN(9)
					dst := tile.Tile{DType: d, ValidRows: vr, ValidCols: vc, Rows: nextPow2(vr) * (1 + rng.IntN(2)), Cols: nextPow2(vc), Layout: lay, Pad: padFor(p, d)}
					idx := tile.Tile{DType: it, ValidRows: vr, ValidCols: vc, Rows: vr + rng.IntN(2), Layout: tile.Layout(rng.IntN(2))}
					exp := tile.Tile{DType: d, ValidRows: vr, ValidCols: vc, Cols: vc + rng.IntN(2), Layout: tile.Layout(rng.IntN(2))}
					rep := tile.Tile{DType: d, ValidRows: vr, ValidCols: vc, Layout: tile.Layout(rng.IntN(2))}
					nElem := vr*vc + rng.IntN(8)
					memRaw := randBytes(rng, nElem*sz)
					base := 0
					if it.IsSigned() {
						base = rng.IntN(nElem+1) * sz // displacements are negative below it
					}
					idxRaw, expRaw, repRaw := randBytes(rng, idx.Resolved().Bytes()), randBytes(rng, exp.Resolved().Bytes()), randBytes(rng, rep.Resolved().Bytes())
					perm := rng.Perm(nElem)
					rexp := exp.Resolved()
					for r := 0; r < vr; r++ {
						for c := 0; c < vc; c++ {
							addr := perm[r*vc+c] * sz
							putIdx(idxRaw, idx, r, c, int64(addr-base))
							if rng.IntN(2) == 0 {
								copy(expRaw[rexp.At(r, c)*sz:], memRaw[addr:addr+sz])
							}
						}
					}
					dstRaw := randBytes(rng, dst.Bytes())
					name := fmt.Sprintf("%v idx %v %v pad %v dst %dx%d in %dx%d base %d", d, it, lay, dst.Pad.Kind, vr, vc, dst.Rows, dst.Cols, base)
					var mems, dsts [2][]byte
					for i, rt := range []*runtime.Runtime{fast, ref} {
						mem := bufWith(t, rt, tile.U8, memRaw, len(memRaw))
						dt := tileWith(t, rt, dst, dstRaw)
						o := ops.DefaultGatherCASOptions()
						o.Base = base
						err := ops.MGatherCAS(ctx, rt, dt, mem, tileWith(t, rt, idx, idxRaw), tileWith(t, rt, exp, expRaw), tileWith(t, rt, rep, repRaw), &o)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						mems[i], dsts[i] = bytesOf(t, mem), bytesOf(t, dt.Buf)
					}
					if !bytes.Equal(mems[0], mems[1]) || !bytes.Equal(dsts[0], dsts[1]) {
						t.Fatalf("%s: differs from the reference", name)
					}
					n++
				}
			}
		}
	}
	t.Logf("%d cases", n)
}

// TestMGatherCASContention runs gather-CAS from several goroutines, each on
// its own stream, on a few slots that share one 32-bit word (for 8- and
// 16-bit types) with duplicate addresses inside every call. Lanes chain:
// each expects the value another lane of its call installs, so successes
// depend on the order lanes serialise in. Afterwards, per slot, every value
// that was ever installed was swapped out by at most one lane, the successes
// form one chain from the initial value to the final one, and every failed
// lane observed a value from that chain.
func TestMGatherCASContention(t *testing.T) {
	for _, c := range []struct {
		d                tile.DType
		g, rounds, lanes int
	}{
		{tile.U8, 2, 2, 240},
		{tile.U16, 3, 5, 4096},
		{tile.U32, 4, 8, 4096},
		{tile.U64, 4, 4, 2048},
	} {
		t.Run(c.d.String(), func(t *testing.T) { casContention(t, c.d, c.g, c.rounds, c.lanes) })
	}
}

type casLane struct{ slot, exp, rep, obs uint64 }

func casContention(t *testing.T, d tile.DType, G, rounds, lanes int) {
	rt, err := runtime.Open(testOptions(runtime.Options{Threads: 4}))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx := context.Background()
	const slots = 4
	sz := d.Size()
	mem := bufWith(t, rt, tile.U8, make([]byte, 32), 32) // slots at byte displacements 0, sz, 2sz, 3sz
	var mu sync.Mutex
	var all []casLane
	var wg sync.WaitGroup
	for g := 0; g < G; g++ {
		st, err := rt.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			var known [slots]uint64
			var mine []casLane
			for r := 0; r < rounds; r++ {
				idxRaw, expRaw, repRaw := make([]byte, 4*lanes), make([]byte, sz*lanes), make([]byte, sz*lanes)
				last := known
				for l := 0; l < lanes; l++ {
					s := l % slots
					tok := uint64(1 + l/slots + lanes/slots*(r+rounds*g)) // unique per slot, never 0
					putIdx(idxRaw, tile.Dense(tile.S32, 1, lanes), 0, l, int64(s*sz))
					putElem(expRaw, d, l, last[s])
					putElem(repRaw, d, l, tok)
					last[s] = tok
				}
				desc := tile.Tile{DType: d, ValidRows: 1, ValidCols: lanes}
				dd := tile.Tile{DType: d, ValidRows: 1, ValidCols: lanes, Cols: nextPow2(lanes), Pad: tile.PadZeroValue}
				dst := tileWith(t, rt, dd, make([]byte, sz*dd.Cols))
				o := ops.GatherCASOptions{Mask: ops.MaskAll, Stream: st}
				if err := ops.MGatherCAS(ctx, rt, dst, mem, tileWith(t, rt, tile.Dense(tile.S32, 1, lanes), idxRaw),
					tileWith(t, rt, desc, expRaw), tileWith(t, rt, desc, repRaw), &o); err != nil {
					t.Error(err)
					return
				}
				if err := st.Synchronize(ctx); err != nil {
					t.Error(err)
					return
				}
				obs := bytesOf(t, dst.Buf)
				for l := 0; l < lanes; l++ {
					ln := casLane{uint64(l % slots), getElem(expRaw, sz, l), getElem(repRaw, sz, l), getElem(obs, sz, l)}
					mine = append(mine, ln)
					if ln.obs == ln.exp {
						known[ln.slot] = ln.rep
					} else {
						known[ln.slot] = ln.obs
					}
				}
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	final := bytesOf(t, mem)
	total := 0
	for s := uint64(0); s < slots; s++ {
		next := map[uint64]uint64{}
		nsucc := 0
		for _, ln := range all {
			if ln.slot != s || ln.obs != ln.exp {
				continue
			}
			if _, dup := next[ln.exp]; dup {
				t.Fatalf("slot %d: value %#x was swapped out by two lanes", s, ln.exp)
			}
			next[ln.exp] = ln.rep
			nsucc++
		}
		chain := map[uint64]bool{0: true}
		cur, steps := uint64(0), 0
		for {
			v, ok := next[cur]
			if !ok {
				break
			}
			cur, steps = v, steps+1
			chain[cur] = true
			if steps > nsucc {
				t.Fatalf("slot %d: the successes form a cycle", s)
			}
		}
		if steps != nsucc {
			t.Fatalf("slot %d: %d successes, but the chain from 0 has %d", s, nsucc, steps)
		}
		if got := getElem(final, sz, int(s)); got != cur {
			t.Fatalf("slot %d: memory holds %#x, the chain ends at %#x", s, got, cur)
		}
		for _, ln := range all {
			if ln.slot == s && ln.obs != ln.exp && !chain[ln.obs] {
				t.Fatalf("slot %d: a failed lane observed %#x, never installed", s, ln.obs)
			}
		}
		total += nsucc
	}
	if total == 0 {
		t.Fatal("no lane ever succeeded")
	}
	t.Logf("%v: %d lanes, %d successful swaps", d, len(all), total)
}

// TestMGatherCASFaults checks every bad-input rule with memory and every
// tile byte-for-byte unchanged, and the all-zero mask as a strict no-op.
func TestMGatherCASFaults(t *testing.T) {
	rt := openTest(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(33, 34))
	type setup struct {
		dst, idx, exp, rep ops.Tile
		mem                *runtime.Buffer
		opt                ops.GatherCASOptions
	}
	base := func() *setup {
		mem := bufWith(t, rt, tile.U32, randBytes(rng, 64), 16)
		dd := tile.Tile{DType: tile.U32, ValidRows: 2, ValidCols: 3, Rows: 2, Cols: 4, Pad: tile.PadMaxValue}
		vd := tile.Tile{DType: tile.U32, ValidRows: 2, ValidCols: 3}
		raw := make([]byte, 24)
		for i := 0; i < 6; i++ {
			putElem(raw, tile.S32, i, uint64(int64(4*i-16))) // base 16: displacements −16, −12, … 4
		}
		s := &setup{mem: mem, dst: tileWith(t, rt, dd, randBytes(rng, 32)), idx: tileWith(t, rt, tile.Dense(tile.S32, 2, 3), raw),
			exp: tileWith(t, rt, vd, randBytes(rng, 24)), rep: tileWith(t, rt, vd, randBytes(rng, 24)), opt: ops.DefaultGatherCASOptions()}
		s.opt.Base = 16
		return s
	}
	call := func(s *setup) error {
		return ops.MGatherCAS(ctx, rt, s.dst, s.mem, s.idx, s.exp, s.rep, &s.opt)
	}
	if err := call(base()); err != nil {
		t.Fatalf("baseline gather-CAS failed: %v", err)
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
		{"past memory", func(s *setup) { setIdx(s, 5, 48) }, "idx", []error{ops.ErrBounds}},
		{"below memory", func(s *setup) { setIdx(s, 0, -20) }, "idx", []error{ops.ErrBounds}},
		{"last element straddles end", func(s *setup) { setIdx(s, 5, 46) }, "idx", []error{ops.ErrBounds}},
		{"misaligned", func(s *setup) { setIdx(s, 3, 2) }, "idx", []error{ops.ErrBounds}},
		{"misaligned base", func(s *setup) { s.opt.Base = 17 }, "idx", []error{ops.ErrBounds}},
		{"base outside", func(s *setup) { s.opt.Base = 65 }, "Base", []error{ops.ErrBounds}},
		{"u32 index zero-extends", func(s *setup) {
			raw := bytesOf(t, s.idx.Buf)
			s.idx = tileWith(t, rt, tile.Dense(tile.U32, 2, 3), raw) // −16 is now 4294967280
		}, "idx", []error{ops.ErrBounds}},
		{"4-bit transfer type", func(s *setup) {
			d := tile.Tile{DType: tile.U4, ValidRows: 2, ValidCols: 3, Rows: 2, Cols: 4}
			s.dst = tileWith(t, rt, d, make([]byte, 4))
		}, "dst", []error{ops.ErrTileLegality, ops.ErrDType}},
		{"float index", func(s *setup) { s.idx = tileWith(t, rt, tile.Dense(tile.F32, 2, 3), make([]byte, 24)) }, "idx", []error{ops.ErrTileLegality, ops.ErrDType}},
		{"u8 index", func(s *setup) { s.idx = tileWith(t, rt, tile.Dense(tile.U8, 2, 3), make([]byte, 6)) }, "idx", []error{ops.ErrTileLegality, ops.ErrDType}},
		{"not pow2", func(s *setup) {
			s.dst = tileWith(t, rt, tile.Tile{DType: tile.U32, ValidRows: 2, ValidCols: 3}, make([]byte, 24))
		}, "dst", []error{ops.ErrTileLegality, ops.ErrShape}},
		{"zero cols", func(s *setup) { s.dst.Desc.ValidCols = 0 }, "dst", []error{ops.ErrTileLegality, ops.ErrShape}},
		{"zero rows", func(s *setup) { s.exp.Desc.ValidRows = 0 }, "expected", []error{ops.ErrTileLegality, ops.ErrShape}},
		{"missing dst", func(s *setup) { s.dst.Buf = nil }, "dst", []error{ops.ErrTileLegality, ops.ErrArgument}},
		{"missing expected", func(s *setup) { s.exp.Buf = nil }, "expected", []error{ops.ErrTileLegality, ops.ErrArgument}},
		{"missing replacement", func(s *setup) { s.rep = ops.Tile{} }, "replacement", []error{ops.ErrTileLegality, ops.ErrArgument}},
		{"missing mem", func(s *setup) { s.mem = nil }, "mem", []error{ops.ErrTileLegality}},
		{"expected type", func(s *setup) {
			s.exp = tileWith(t, rt, tile.Tile{DType: tile.F32, ValidRows: 2, ValidCols: 3}, make([]byte, 24))
		}, "expected", []error{ops.ErrTileLegality, ops.ErrDType}},
		{"replacement shape", func(s *setup) {
			s.rep = tileWith(t, rt, tile.Tile{DType: tile.U32, ValidRows: 3, ValidCols: 2}, make([]byte, 24))
		}, "replacement", []error{ops.ErrTileLegality, ops.ErrShape}},
		{"idx shape", func(s *setup) { s.idx.Desc = tile.Tile{DType: tile.S32, ValidRows: 1, ValidCols: 6} }, "idx", []error{ops.ErrTileLegality, ops.ErrShape}},
		{"mask bits", func(s *setup) { s.opt.Mask = 0x13 }, "Mask", []error{ops.ErrTileLegality, ops.ErrArgument}},
		{"alias", func(s *setup) { s.mem = s.exp.Buf }, "mem", []error{ops.ErrAlias}},
	}
	for _, c := range cases {
		s := base()
		c.mut(s)
		sn := snap(t, s.mem, s.dst.Buf, s.idx.Buf, s.exp.Buf, s.rep.Buf)
		wantFault(t, c.name, call(s), c.arg, c.sentinels...)
		sn.unchanged(t, c.name)
	}
	// All-zero mask: a strict no-op before any check, even with nothing
	// valid at all.
	zero := ops.GatherCASOptions{Mask: 0}
	if err := ops.MGatherCAS(ctx, nil, ops.Tile{}, nil, ops.Tile{}, ops.Tile{}, ops.Tile{}, &zero); err != nil {
		t.Fatalf("zero mask with no arguments: %v", err)
	}
	s := base()
	setIdx(s, 5, 1000) // would fault
	sn := snap(t, s.mem, s.dst.Buf)
	s.opt.Mask = 0
	if err := call(s); err != nil {
		t.Fatalf("zero mask: %v", err)
	}
	sn.unchanged(t, "zero mask")
}
