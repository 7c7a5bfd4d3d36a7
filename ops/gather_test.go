package ops_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// gatherCase is one random gather built identically on several runtimes.
type gatherCase struct {
	d, it    tile.DType
	mode     ops.IndexMode
	oob      ops.OOB
	dst, idx tile.Tile
	n        int // table rows or memory elements
	mem      []byte
	idxRaw   []byte
	dstRaw   []byte
}

func (c *gatherCase) String() string {
	return fmt.Sprintf("%v idx %v %v oob %v dst %dx%d in %dx%d %v pad %v/%#x idx %v, n %d",
		c.d, c.it, c.mode, c.oob, c.dst.ValidRows, c.dst.ValidCols, c.dst.Rows, c.dst.Cols, c.dst.Layout, c.dst.Pad.Kind, c.dst.Pad.Bits, c.idx.Layout, c.n)
}

func newGatherCase(rng *rand.Rand, d, it tile.DType, mode ops.IndexMode, lay tile.Layout, pad tile.Pad, oob ops.OOB) *gatherCase {
	shapes := []int{1, 3, 8, 17}
	vr, vc := shapes[rng.IntN(4)], shapes[rng.IntN(4)]
	c := &gatherCase{d: d, it: it, mode: mode, oob: oob, n: 1 + rng.IntN(25)}
	c.dst = tile.Tile{DType: d, ValidRows: vr, ValidCols: vc, Rows: vr + rng.IntN(3), Cols: vc + rng.IntN(3), Layout: lay, Pad: pad}
	ic := vc
	if mode == ops.IndexRows {
		ic = 1
	}
	c.idx = tile.Tile{DType: it, ValidRows: vr, ValidCols: ic, Rows: vr + rng.IntN(2), Cols: ic + rng.IntN(2), Layout: tile.Layout(rng.IntN(2))}
	memElems := c.n
	if mode == ops.IndexRows {
		memElems *= vc
	}
	c.mem = randBytes(rng, memElems*d.Size())
	c.idxRaw = randBytes(rng, c.idx.Bytes())
	for r := 0; r < vr; r++ {
		for cc := 0; cc < ic; cc++ {
			v := int64(rng.IntN(c.n))
			if oob != ops.OOBError && rng.IntN(3) == 0 {
				v = int64(c.n + rng.IntN(50))
				if it.IsSigned() && rng.IntN(2) == 0 {
					v = -1 - int64(rng.IntN(50))
				}
			}
			putIdx(c.idxRaw, c.idx, r, cc, v)
		}
	}
	c.dstRaw = randBytes(rng, c.dst.Bytes())
	return c
}

// run builds the case on rt, gathers and returns the destination bytes.
func (c *gatherCase) run(t *testing.T, rt *runtime.Runtime) ([]byte, error) {
	t.Helper()
	var mem *runtime.Buffer
	if c.mode == ops.IndexRows {
		mem = bufWith(t, rt, c.d, c.mem, c.n, c.dst.ValidCols)
	} else {
		mem = bufWith(t, rt, c.d, c.mem, c.n)
	}
	dst := tileWith(t, rt, c.dst, c.dstRaw)
	idx := tileWith(t, rt, c.idx, c.idxRaw)
	err := ops.MGather(context.Background(), rt, dst, mem, idx, &ops.GatherOptions{Mode: c.mode, OOB: c.oob})
	out := bytesOf(t, dst.Buf)
	if !bytes.Equal(bytesOf(t, mem), c.mem) {
		t.Fatalf("%v: gather changed its memory", c)
	}
	for _, b := range []*runtime.Buffer{mem, dst.Buf, idx.Buf} {
		b.Close()
	}
	return out, err
}

// TestMGatherMatchesReference runs every element-type × index-type × mode ×
// layout × pad combination, with a random OOB policy and shape, on the
// default kernel and on the forced reference kernel, and compares the
// destinations bit for bit.
func TestMGatherMatchesReference(t *testing.T) {
	fast, ref := openTest(t), openForced(t, "cpu.mgather.reference")
	rng := rand.New(rand.NewPCG(11, 12))
	if k := mustExplainGather(t, fast); !fast.Device().GPU() && k != "cpu.mgather.fast" { // a GPU device has its own kernels
		t.Fatalf("default kernel %s", k)
	}
	n := 0
	for _, d := range []tile.DType{tile.U8, tile.E4M3, tile.F16, tile.BF16, tile.F32, tile.S32, tile.F64, tile.U64} {
		for _, it := range []tile.DType{tile.S32, tile.U32, tile.S64, tile.U64} {
			for _, mode := range []ops.IndexMode{ops.IndexRows, ops.IndexElements} {
				for _, lay := range []tile.Layout{tile.RowMajor, tile.ColMajor} {
					for p := 0; p < 5; p++ {
						if testing.Short() && rng.IntN(3) > 0 {
							continue
						}
						oob := []ops.OOB{ops.OOBError, ops.OOBClamp, ops.OOBWrap, ops.OOBZero}[rng.IntN(4)]
						c := newGatherCase(rng, d, it, mode, lay, padFor(p, d), oob)
						got, err := c.run(t, fast)
						if err != nil {
							t.Fatalf("%v: %v", c, err)
						}
						want, err := c.run(t, ref)
						if err != nil {
							t.Fatalf("%v: reference: %v", c, err)
						}
						if !bytes.Equal(got, want) {
							t.Fatalf("%v: destination differs from the reference", c)
						}
						n++
					}
				}
			}
		}
	}
	t.Logf("%d cases", n)
}

func mustExplainGather(t *testing.T, rt *runtime.Runtime) string {
	t.Helper()
	mem := bufWith(t, rt, tile.F32, make([]byte, 16), 4)
	dst := ops.DenseTile(bufWith(t, rt, tile.F32, make([]byte, 8), 2))
	idx := ops.DenseTile(bufWith(t, rt, tile.S32, make([]byte, 8), 2))
	ex, err := ops.ExplainMGather(rt, dst, mem, idx, &ops.GatherOptions{Mode: ops.IndexElements})
	if err != nil {
		t.Fatal(err)
	}
	return ex.Chosen().Name
}

// TestMGatherFaults checks every bad-input rule: the right sentinels, the
// argument named, and memory, index and destination byte-for-byte
// unchanged.
func TestMGatherFaults(t *testing.T) {
	rt := openTest(t)
	other := openTest(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(13, 14))
	type setup struct {
		dst, idx ops.Tile
		mem      *runtime.Buffer
		opt      ops.GatherOptions
	}
	base := func() *setup {
		mem := bufWith(t, rt, tile.F32, randBytes(rng, 4*8*4), 8, 4) // 8 rows of 4
		dd := tile.Tile{DType: tile.F32, ValidRows: 3, ValidCols: 4, Rows: 4, Cols: 4, Pad: tile.PadZeroValue}
		dst := tileWith(t, rt, dd, randBytes(rng, dd.Bytes()))
		id := tile.Dense(tile.S32, 3, 1)
		raw := make([]byte, 12)
		for r := 0; r < 3; r++ {
			putIdx(raw, id, r, 0, int64(r*2))
		}
		return &setup{dst: dst, idx: tileWith(t, rt, id, raw), mem: mem}
	}
	if s := base(); ops.MGather(ctx, rt, s.dst, s.mem, s.idx, &s.opt) != nil {
		t.Fatal("baseline gather failed")
	}
	cases := []struct {
		name      string
		mut       func(s *setup)
		arg       string
		sentinels []error
	}{
		{"index past memory", func(s *setup) {
			raw := bytesOf(t, s.idx.Buf)
			putIdx(raw, s.idx.Desc, 2, 0, 8)
			s.idx.Buf.Write(ctx, 0, raw)
		}, "idx", []error{ops.ErrBounds}},
		{"negative index", func(s *setup) {
			raw := bytesOf(t, s.idx.Buf)
			putIdx(raw, s.idx.Desc, 1, 0, -1)
			s.idx.Buf.Write(ctx, 0, raw)
		}, "idx", []error{ops.ErrBounds}},
		{"missing dst", func(s *setup) { s.dst.Buf = nil }, "dst", []error{ops.ErrTileLegality, ops.ErrArgument}},
		{"missing idx", func(s *setup) { s.idx.Buf = nil }, "idx", []error{ops.ErrTileLegality, ops.ErrArgument}},
		{"missing mem", func(s *setup) { s.mem = nil }, "mem", []error{ops.ErrTileLegality}},
		{"closed idx", func(s *setup) { s.idx.Buf.Close() }, "idx", []error{ops.ErrClosed}},
		{"foreign mem", func(s *setup) { s.mem = bufWith(t, other, tile.F32, make([]byte, 4*8*4), 8, 4) }, "mem", []error{ops.ErrArgument}},
		{"dst buffer mis-shaped", func(s *setup) { s.dst.Desc.Rows = 8 }, "dst", []error{ops.ErrTileLegality, ops.ErrShape}},
		{"dst physical too small", func(s *setup) { s.dst.Desc.Rows = 2; s.dst.Desc.Cols = 8 }, "dst", []error{ops.ErrTileLegality, ops.ErrShape}},
		{"idx mis-shaped", func(s *setup) { s.idx.Desc.ValidRows = 2 }, "idx", []error{ops.ErrTileLegality, ops.ErrShape}},
		{"idx float", func(s *setup) {
			s.idx = tileWith(t, rt, tile.Dense(tile.F32, 3, 1), make([]byte, 12))
		}, "idx", []error{ops.ErrTileLegality, ops.ErrDType}},
		{"idx s16", func(s *setup) {
			s.idx = tileWith(t, rt, tile.Dense(tile.S16, 3, 1), make([]byte, 6))
		}, "idx", []error{ops.ErrTileLegality, ops.ErrDType}},
		{"zero valid cols", func(s *setup) { s.dst.Desc.ValidCols = 0 }, "dst", []error{ops.ErrTileLegality, ops.ErrShape}},
		{"zero valid rows", func(s *setup) { s.dst.Desc.ValidRows = 0 }, "dst", []error{ops.ErrTileLegality, ops.ErrShape}},
		{"dtype mismatch", func(s *setup) { s.dst.Desc.DType = tile.U32 }, "dst", []error{ops.ErrTileLegality, ops.ErrDType}},
		{"mem dtype", func(s *setup) { s.mem = bufWith(t, rt, tile.U32, make([]byte, 4*8*4), 8, 4) }, "mem", []error{ops.ErrTileLegality, ops.ErrDType}},
		{"table width", func(s *setup) { s.mem = bufWith(t, rt, tile.F32, make([]byte, 4*8*4), 16, 2) }, "mem", []error{ops.ErrTileLegality, ops.ErrShape}},
		{"packed dst", func(s *setup) {
			s.dst = tileWith(t, rt, tile.Dense(tile.S4, 4, 4), make([]byte, 8))
		}, "dst", []error{ops.ErrTileLegality, ops.ErrDType}},
		{"pad bits too wide", func(s *setup) { s.dst.Desc.Pad = tile.PadValue(1 << 40) }, "dst", []error{ops.ErrTileLegality}},
		{"skip policy", func(s *setup) { s.opt.OOB = ops.OOBSkip }, "OOB", []error{ops.ErrTileLegality, ops.ErrArgument}},
		{"bad mode", func(s *setup) { s.opt.Mode = 7 }, "Mode", []error{ops.ErrTileLegality, ops.ErrArgument}},
		{"alias", func(s *setup) {
			s.dst = ops.TileOf(s.mem, tile.Tile{DType: tile.F32, ValidRows: 3, ValidCols: 4, Rows: 8, Cols: 4})
		}, "dst", []error{ops.ErrAlias}},
	}
	for _, c := range cases {
		s := base()
		c.mut(s)
		sn := snap(t, s.mem, s.dst.Buf, s.idx.Buf)
		err := ops.MGather(ctx, rt, s.dst, s.mem, s.idx, &s.opt)
		wantFault(t, c.name, err, c.arg, c.sentinels...)
		sn.unchanged(t, c.name)
	}
	// An asynchronous call reports the index fault through Synchronize.
	s := base()
	raw := bytesOf(t, s.idx.Buf)
	putIdx(raw, s.idx.Desc, 0, 0, 100)
	s.idx.Buf.Write(ctx, 0, raw)
	st, _ := rt.NewStream()
	defer st.Close()
	sn := snap(t, s.mem, s.dst.Buf)
	if err := ops.MGather(ctx, rt, s.dst, s.mem, s.idx, &ops.GatherOptions{Stream: st}); err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	wantFault(t, "async", st.Synchronize(ctx), "idx", ops.ErrBounds)
	sn.unchanged(t, "async")
}
