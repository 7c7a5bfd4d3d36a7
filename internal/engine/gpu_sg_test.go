package engine

// GPU tests of the scatter–gather kernels (cuda_sg.go): each call runs on
// the GPU and through the CPU reference (fallback.*Ref) on host copies of
// the same fresh random inputs, and the bytes must be equal. They skip
// without a usable GPU unless TCRT_REQUIRE_GPU=1 (scripts/gpu-run.sh).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/tile"
)

// sgTile allocates a device tile of desc holding data (random when nil)
// and returns it with a host copy of its bytes.
func sgTile(t testing.TB, rt *Runtime, desc tile.Tile, data []byte, rng *rand.Rand) (Tile, []byte) {
	t.Helper()
	desc = desc.Resolved()
	b, err := rt.Alloc(desc.DType, desc.Elements())
	must(t, err)
	t.Cleanup(func() { b.Close() })
	if data == nil {
		data = make([]byte, desc.Bytes())
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
	}
	must(t, b.Write(context.Background(), 0, data))
	return Tile{Buf: b, Desc: desc}, bytes.Clone(data)
}

func sgRead(t testing.TB, b *Buffer) []byte {
	t.Helper()
	out := make([]byte, b.Bytes())
	must(t, b.Read(context.Background(), 0, out))
	return out
}

// sgIndices fills an index tile of type d with positions in [0, n), and
// with probability bad/100 an out-of-range value (negative for signed
// types).
func sgIndices(rng *rand.Rand, desc tile.Tile, n, bad int, unique bool) []byte {
	desc = desc.Resolved()
	sz := desc.DType.Size()
	out := make([]byte, desc.Bytes())
	perm := rng.Perm(n)
	k := 0
	for r := 0; r < desc.ValidRows; r++ {
		for c := 0; c < desc.ValidCols; c++ {
			var v int64
			switch {
			case rng.IntN(100) < bad && desc.DType.IsSigned() && rng.IntN(2) == 0:
				v = -1 - int64(rng.IntN(3*n))
			case rng.IntN(100) < bad:
				v = int64(n + rng.IntN(3*n))
			case unique:
				v = int64(perm[k%n])
				k++
			default:
				v = int64(rng.IntN(n))
			}
			off := desc.At(r, c) * sz
			for i := range sz {
				out[off+i] = byte(uint64(v) >> (8 * i))
			}
		}
	}
	return out
}

func sgChosen(t testing.TB, rt *Runtime, op string, args any, want string) {
	t.Helper()
	e := rt.Explain(op, args)
	if k := e.Chosen(); k == nil || k.Name != want {
		t.Fatalf("%s: chose %v, want %s:\n%s", op, k, want, e)
	}
}

var sgIndexTypes = []tile.DType{tile.S32, tile.U32, tile.S64, tile.U64}

func TestCUDAGather(t *testing.T) {
	ctx := context.Background()
	rt := openCUDATest(t, Options{})
	rng := rand.New(rand.NewPCG(21, 22))
	for _, mode := range []IndexMode{fallback.IndexRows, fallback.IndexElements} {
		for _, d := range []tile.DType{tile.U8, tile.F16, tile.F32, tile.F64} {
			for _, sh := range [][2]int{{1, 1}, {7, 3}, {129, 33}, {1000, 256}, {3, 1027}} {
				vr, vc := sh[0], sh[1]
				for _, oob := range []tile.OOB{tile.OOBError, tile.OOBClamp, tile.OOBWrap, tile.OOBZero} {
					it := sgIndexTypes[rng.IntN(4)]
					dst := tile.Dense(d, vr, vc)
					if rng.IntN(3) == 0 { // padded, maybe column-major
						dst = tile.Tile{DType: d, ValidRows: vr, ValidCols: vc, Rows: vr + rng.IntN(3), Cols: vc + rng.IntN(5),
							Pad: tile.PadValue(uint64(rng.Uint32()) & (1<<d.Bits() - 1)), Layout: tile.Layout(rng.IntN(2))}
					}
					memRows := 1 + rng.IntN(2*vr+5)
					memElems := memRows * vc
					if mode == fallback.IndexElements {
						memElems = 1 + rng.IntN(vr*vc+50)
						memRows = memElems
					}
					idxDesc := tile.Dense(it, vr, 1)
					if mode == fallback.IndexElements {
						idxDesc = tile.Tile{DType: it, ValidRows: vr, ValidCols: vc, Layout: tile.Layout(rng.IntN(2))}
					}
					bad := 0
					if oob != tile.OOBError {
						bad = 20
					}
					name := fmt.Sprintf("%v/%v/%dx%d/%v/%v/%v", mode, d, vr, vc, oob, it, dst.Layout)
					mem, err := rt.Alloc(d, memElems)
					must(t, err)
					memHost := make([]byte, mem.Bytes())
					for i := range memHost {
						memHost[i] = byte(rng.Uint32())
					}
					must(t, mem.Write(ctx, 0, memHost))
					idx, idxHost := sgTile(t, rt, idxDesc, sgIndices(rng, idxDesc, memRows, bad, false), rng)
					dt, dstHost := sgTile(t, rt, dst, nil, rng)
					args := &GatherArgs{Mode: mode, Mem: mem, MemRows: memRows, Idx: idx, Dst: dt, OOB: oob}
					sgChosen(t, rt, OpGather.name, args, "ptx.mgather")
					ref := &fallback.GatherArgs{Mode: mode, Mem: memHost, MemRows: memRows,
						Idx: fallback.TileData{Tile: idx.Desc, Data: idxHost}, Dst: fallback.TileData{Tile: dt.Desc, Data: dstHost}, OOB: oob}
					must(t, fallback.GatherRef(ref))
					must(t, rt.Run(ctx, nil, OpGather.name, args))
					if got := sgRead(t, dt.Buf); !bytes.Equal(got, dstHost) {
						t.Fatalf("%s: GPU gather differs from the reference", name)
					}
					mem.Close()
				}
			}
		}
	}
}

// TestCUDAGatherFault: an index out of range under OOBError faults with
// the CPU's error and nothing written, and the next call works.
func TestCUDAGatherFault(t *testing.T) {
	ctx := context.Background()
	rt := openCUDATest(t, Options{})
	rng := rand.New(rand.NewPCG(23, 24))
	for _, it := range sgIndexTypes {
		const vr, vc, memRows = 1000, 64, 500
		mem, err := rt.Alloc(tile.F32, memRows, vc)
		must(t, err)
		memHost := sgRead(t, mem)
		idxHost := sgIndices(rng, tile.Dense(it, vr, 1), memRows, 0, false)
		bad := 700 + rng.IntN(200)
		v := uint64(memRows + 3)
		if it.IsSigned() {
			v = ^uint64(4) // −5
		}
		for i := range it.Size() {
			idxHost[bad*it.Size()+i] = byte(v >> (8 * i))
		}
		idx, _ := sgTile(t, rt, tile.Dense(it, vr, 1), idxHost, rng)
		dst := tile.Tile{DType: tile.F32, ValidRows: vr, ValidCols: vc, Cols: vc + 1, Pad: tile.PadZeroValue}
		dt, before := sgTile(t, rt, dst, nil, rng)
		args := &GatherArgs{Mode: fallback.IndexRows, Mem: mem, MemRows: memRows, Idx: idx, Dst: dt, OOB: tile.OOBError}
		ref := &fallback.GatherArgs{Mode: fallback.IndexRows, Mem: memHost, MemRows: memRows,
			Idx: fallback.TileData{Tile: idx.Desc, Data: idxHost}, Dst: fallback.TileData{Tile: dt.Desc, Data: bytes.Clone(before)}}
		want := fallback.GatherRef(ref)
		err = rt.Run(ctx, nil, OpGather.name, args)
		if !errors.Is(err, ErrBounds) || err.Error() != want.Error() {
			t.Fatalf("%v: fault %v, want %v", it, err, want)
		}
		if got := sgRead(t, dt.Buf); !bytes.Equal(got, before) {
			t.Fatalf("%v: the destination changed after a fault", it)
		}
		// Fixed, the same call runs (the slot was cleared).
		for i := range it.Size() {
			idxHost[bad*it.Size()+i] = 0
		}
		must(t, idx.Buf.Write(ctx, 0, idxHost))
		must(t, rt.Run(ctx, nil, OpGather.name, args))
		mem.Close()
	}
}

// sgScatterSrc fills a source tile of d with values where every element
// lands: finite floats with specials for max/min, no NaN for adds.
func sgScatterSrc(rng *rand.Rand, desc tile.Tile, op ScatterOp) []byte {
	desc = desc.Resolved()
	sz := desc.DType.Size()
	out := make([]byte, desc.Bytes())
	for i := 0; i < len(out); i += sz {
		var v uint64
		switch desc.DType {
		case tile.F32:
			f := float32(rng.NormFloat64() * 100)
			if op != fallback.ScatterAdd && rng.IntN(10) == 0 {
				f = []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}[rng.IntN(5)]
			}
			if op == fallback.ScatterAdd && rng.IntN(20) == 0 {
				f = math.Float32frombits(rng.Uint32() & 0x807FFFFF) // subnormal
			}
			v = uint64(math.Float32bits(f))
		case tile.F64:
			v = math.Float64bits(rng.NormFloat64())
		case tile.F16:
			v = uint64(tile.F32ToF16(float32(rng.NormFloat64())))
		case tile.BF16:
			v = uint64(tile.F32ToBF16(float32(rng.NormFloat64())))
		default:
			v = rng.Uint64()
		}
		for k := range sz {
			out[i+k] = byte(v >> (8 * k))
		}
	}
	return out
}

func TestCUDAScatter(t *testing.T) {
	ctx := context.Background()
	rt := openCUDATest(t, Options{})
	rng := rand.New(rand.NewPCG(25, 26))
	type tc struct {
		op ScatterOp
		d  tile.DType
	}
	var cases []tc
	for _, d := range []tile.DType{tile.U8, tile.S16, tile.F32, tile.F64} {
		cases = append(cases, tc{fallback.ScatterStore, d})
	}
	for _, d := range []tile.DType{tile.F32, tile.F16, tile.BF16, tile.F64, tile.S32, tile.U32} {
		cases = append(cases, tc{fallback.ScatterAdd, d})
	}
	for _, d := range []tile.DType{tile.S32, tile.U32, tile.F32} {
		cases = append(cases, tc{fallback.ScatterMax, d}, tc{fallback.ScatterMin, d})
	}
	for _, c := range cases {
		// Plain stores and float adds depend on lane order: unique
		// destinations make them exact; integer adds and max/min are exact
		// with any contention.
		unique := c.op == fallback.ScatterStore || (c.op == fallback.ScatterAdd && c.d.IsFloat())
		for _, mode := range []IndexMode{fallback.IndexRows, fallback.IndexElements} {
			for _, sh := range [][2]int{{1, 1}, {7, 3}, {129, 33}, {1000, 64}} {
				for _, oob := range []tile.OOB{tile.OOBError, tile.OOBSkip, tile.OOBClamp, tile.OOBWrap} {
					vr, vc := sh[0], sh[1]
					if unique && (oob == tile.OOBClamp || oob == tile.OOBWrap) {
						continue // moved lanes collide
					}
					it := sgIndexTypes[rng.IntN(4)]
					lanes := vr
					if mode == fallback.IndexElements {
						lanes = vr * vc
					}
					n := lanes + rng.IntN(lanes+3)
					if !unique {
						n = 1 + rng.IntN(lanes) // contention
					}
					memElems := n * vc
					if mode == fallback.IndexElements {
						memElems = n
					}
					idxDesc := tile.Dense(it, vr, 1)
					if mode == fallback.IndexElements {
						idxDesc = tile.Tile{DType: it, ValidRows: vr, ValidCols: vc, Layout: tile.Layout(rng.IntN(2))}
					}
					srcDesc := tile.Tile{DType: c.d, ValidRows: vr, ValidCols: vc, Cols: vc + rng.IntN(2), Layout: tile.Layout(rng.IntN(2))}
					bad := 0
					if oob != tile.OOBError {
						bad = 15
					}
					name := fmt.Sprintf("%v/%v/%v/%dx%d/%v/%v", c.op, c.d, mode, vr, vc, oob, it)
					memT, memHost := sgTile(t, rt, tile.Dense(c.d, memElems, 1), sgScatterSrc(rng, tile.Dense(c.d, memElems, 1), c.op), rng)
					idx, idxHost := sgTile(t, rt, idxDesc, sgIndices(rng, idxDesc, n, bad, unique), rng)
					src, srcHost := sgTile(t, rt, srcDesc, sgScatterSrc(rng, srcDesc, c.op), rng)
					args := &ScatterArgs{Mode: mode, Op: c.op, Mem: memT.Buf, MemRows: n, Idx: idx, Src: src, OOB: oob}
					sgChosen(t, rt, OpScatter.name, args, "ptx.mscatter")
					ref := &fallback.ScatterArgs{Mode: mode, Op: c.op, Mem: memHost, MemRows: n,
						Idx: fallback.TileData{Tile: idx.Desc, Data: idxHost}, Src: fallback.TileData{Tile: src.Desc, Data: srcHost}, OOB: oob}
					must(t, fallback.ScatterRef(ref))
					must(t, rt.Run(ctx, nil, OpScatter.name, args))
					if got := sgRead(t, memT.Buf); !bytes.Equal(got, memHost) {
						t.Fatalf("%s: GPU scatter differs from the reference", name)
					}
				}
			}
		}
	}
	// Deterministic float adds go to the host fallback.
	d := tile.Dense(tile.F32, 4, 1)
	m, _ := sgTile(t, rt, d, nil, rng)
	ix, _ := sgTile(t, rt, tile.Dense(tile.S32, 4, 1), make([]byte, 16), rng)
	e := rt.Explain(OpScatter.name, &ScatterArgs{Op: fallback.ScatterAdd, Deterministic: true, Mem: m.Buf, MemRows: 4, Idx: ix, Src: m})
	if k := e.Chosen(); k == nil || k.Name == "ptx.mscatter" {
		t.Fatalf("deterministic f32 add chose %v:\n%s", k, e)
	}
}

func TestCUDAScatterFault(t *testing.T) {
	ctx := context.Background()
	rt := openCUDATest(t, Options{})
	rng := rand.New(rand.NewPCG(27, 28))
	const vr, vc, n = 512, 16, 600
	memT, before := sgTile(t, rt, tile.Dense(tile.F32, n, vc), nil, rng)
	idxHost := sgIndices(rng, tile.Dense(tile.S64, vr, 1), n, 0, true)
	for i := range 8 {
		idxHost[8*300+i] = byte(uint64(n) >> (8 * i))
	}
	idx, _ := sgTile(t, rt, tile.Dense(tile.S64, vr, 1), idxHost, rng)
	src, srcHost := sgTile(t, rt, tile.Dense(tile.F32, vr, vc), nil, rng)
	args := &ScatterArgs{Mode: fallback.IndexRows, Op: fallback.ScatterAdd, Mem: memT.Buf, MemRows: n, Idx: idx, Src: src}
	want := fallback.ScatterRef(&fallback.ScatterArgs{Mode: fallback.IndexRows, Op: fallback.ScatterAdd, Mem: bytes.Clone(before), MemRows: n,
		Idx: fallback.TileData{Tile: idx.Desc, Data: idxHost}, Src: fallback.TileData{Tile: src.Desc, Data: srcHost}})
	err := rt.Run(ctx, nil, OpScatter.name, args)
	if !errors.Is(err, ErrBounds) || want == nil || err.Error() != want.Error() {
		t.Fatalf("fault %v, want %v", err, want)
	}
	if got := sgRead(t, memT.Buf); !bytes.Equal(got, before) {
		t.Fatal("memory changed after a fault")
	}
}

func TestCUDAGatherCAS(t *testing.T) {
	ctx := context.Background()
	rt := openCUDATest(t, Options{})
	rng := rand.New(rand.NewPCG(29, 30))
	for _, d := range []tile.DType{tile.U8, tile.U16, tile.U32, tile.U64} {
		for _, sh := range [][2]int{{1, 1}, {4, 8}, {64, 32}, {256, 128}} {
			for _, fault := range []string{"", "outside", "misaligned"} {
				if fault == "misaligned" && d == tile.U8 {
					continue
				}
				vr, vc := sh[0], sh[1]
				sz := d.Size()
				it := sgIndexTypes[rng.IntN(4)]
				memBytes := (vr*vc+rng.IntN(64))*sz + rng.IntN(8)
				base := sz * rng.IntN(4)
				slots := (memBytes - base) / sz
				if slots < vr*vc {
					memBytes += (vr*vc - slots) * sz
					slots = vr * vc
				}
				mem, err := rt.Alloc(tile.U8, memBytes)
				must(t, err)
				memHost := make([]byte, memBytes)
				for i := range memHost {
					memHost[i] = byte(rng.IntN(4)) // small values: many expected matches
				}
				must(t, mem.Write(ctx, 0, memHost))
				// Unique element addresses (neighbours share words).
				perm := rng.Perm(slots)
				idxDesc := tile.Tile{DType: it, ValidRows: vr, ValidCols: vc, Layout: tile.Layout(rng.IntN(2))}.Resolved()
				idxHost := make([]byte, idxDesc.Bytes())
				expDesc := tile.Dense(d, vr, vc)
				expHost := make([]byte, expDesc.Bytes())
				for r := 0; r < vr; r++ {
					for c := 0; c < vc; c++ {
						disp := uint64(perm[r*vc+c] * sz)
						if fault != "" && r == vr-1 && c == vc/2 {
							if fault == "outside" {
								disp = uint64(memBytes)
							} else {
								disp++
							}
						}
						off := idxDesc.At(r, c) * it.Size()
						for k := range it.Size() {
							idxHost[off+k] = byte(disp >> (8 * k))
						}
						eo := (r*vc + c) * sz
						if rng.IntN(2) == 0 && int(disp)+base+sz <= memBytes {
							copy(expHost[eo:eo+sz], memHost[base+int(disp):])
						}
					}
				}
				idx, _ := sgTile(t, rt, idxDesc, idxHost, rng)
				exp, _ := sgTile(t, rt, expDesc, expHost, rng)
				rep, repHost := sgTile(t, rt, tile.Tile{DType: d, ValidRows: vr, ValidCols: vc, Layout: tile.ColMajor}, nil, rng)
				dst := tile.Tile{DType: d, ValidRows: vr, ValidCols: vc, Rows: pow2(vr), Cols: pow2(vc + 1), Pad: tile.PadMaxValue}
				dt, dstHost := sgTile(t, rt, dst, nil, rng)
				args := &GatherCASArgs{Mem: mem, Base: base, Idx: idx, Expected: exp, Replacement: rep, Dst: dt}
				sgChosen(t, rt, OpGatherCAS.name, args, "ptx.mgather_cas")
				memBefore, dstBefore := bytes.Clone(memHost), bytes.Clone(dstHost)
				want := fallback.GatherCASRef(&fallback.GatherCASArgs{Mem: memHost, Base: base, Idx: fallback.TileData{Tile: idx.Desc, Data: idxHost},
					Expected: fallback.TileData{Tile: exp.Desc, Data: expHost}, Replacement: fallback.TileData{Tile: rep.Desc, Data: repHost},
					Dst: fallback.TileData{Tile: dt.Desc, Data: dstHost}})
				name := fmt.Sprintf("%v/%dx%d/%v/%q", d, vr, vc, it, fault)
				err = rt.Run(ctx, nil, OpGatherCAS.name, args)
				if (err == nil) != (want == nil) || (err != nil && (err.Error() != want.Error() || !errors.Is(err, ErrBounds))) {
					t.Fatalf("%s: error %v, want %v", name, err, want)
				}
				if !bytes.Equal(sgRead(t, mem), memHost) || !bytes.Equal(sgRead(t, dt.Buf), dstHost) {
					t.Fatalf("%s: GPU gather-CAS differs from the reference", name)
				}
				if fault != "" && (!bytes.Equal(memHost, memBefore) || !bytes.Equal(dstHost, dstBefore)) {
					t.Fatalf("%s: the reference wrote after a fault", name)
				}
				mem.Close()
			}
		}
	}
}

func pow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

// BenchmarkCUDASG/<kernel>/<dtype>/<rows>x<cols>/cuda reports GB/s (bytes
// read plus written: indices, rows read, rows written; a scatter-add reads
// the source and reads and writes the memory) through Runtime.Run on a
// stream, preflight and host check included (OOBError), and, as
// <kernel>-nocheck, with OOBClamp (no preflight, no host round trip).
// Indices are a random permutation of the table's rows: no contention.
func BenchmarkCUDASG(b *testing.B) {
	rt := openCUDATest(b, Options{})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(31, 32))
	for _, sh := range [][2]int{{262144, 256}, {1 << 20, 64}} {
		rows, cols := sh[0], sh[1]
		table, _ := sgTile(b, rt, tile.Dense(tile.F32, rows, cols), make([]byte, 4*rows*cols), rng)
		idxDesc := tile.Dense(tile.S64, rows, 1)
		idx, _ := sgTile(b, rt, idxDesc, sgIndices(rng, idxDesc, rows, 0, true), rng)
		other, _ := sgTile(b, rt, tile.Dense(tile.F32, rows, cols), make([]byte, 4*rows*cols), rng)
		rowBytes := int64(4 * rows * cols)
		idxBytes := int64(8 * rows)
		for _, oob := range []tile.OOB{tile.OOBError, tile.OOBClamp} {
			suffix := ""
			if oob == tile.OOBClamp {
				suffix = "-nocheck"
			}
			g := &GatherArgs{Mode: fallback.IndexRows, Mem: table.Buf, MemRows: rows, Idx: idx, Dst: other, OOB: oob}
			b.Run(fmt.Sprintf("gather-rows%s/f32/%dx%d/cuda", suffix, rows, cols), func(b *testing.B) {
				benchGPU(b, rt, func(s *Stream) error { return rt.Run(ctx, s, OpGather.name, g) }, idxBytes+2*rowBytes)
			})
			sc := &ScatterArgs{Mode: fallback.IndexRows, Op: fallback.ScatterAdd, Mem: table.Buf, MemRows: rows, Idx: idx, Src: other, OOB: oob}
			b.Run(fmt.Sprintf("scatter-add%s/f32/%dx%d/cuda", suffix, rows, cols), func(b *testing.B) {
				benchGPU(b, rt, func(s *Stream) error { return rt.Run(ctx, s, OpScatter.name, sc) }, idxBytes+3*rowBytes)
			})
		}
		table.Buf.Close()
		idx.Buf.Close()
		other.Buf.Close()
	}
}
