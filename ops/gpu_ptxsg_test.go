package ops_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// TestGPUPTXScatterGather runs the PTX scatter–gather module (kernels/ptx
// sg.sm_86/sg.sm_89, ptxas's code: the preflight check kernels, gather of
// rows and elements, every scatter operation, gather-CAS) through ops.* on
// the simulated sm_86 and sm_89 devices, forced by name, on fresh random
// inputs, and compares memory and destinations with the CPU reference
// kernels bit for bit. A faulting index must give the CPU's error (the same
// sentinel and text) and leave every buffer unchanged. On CUDA the same
// kernels are tested by runtime/gpu_sg_test.go (-tags cuda).
func TestGPUPTXScatterGather(t *testing.T) {
	if os.Getenv("TCRT_BACKEND") != "" || os.Getenv("TCRT_KERNEL") != "" {
		t.Skip("the GPU suite picks its own devices and kernels; TCRT_BACKEND/TCRT_KERNEL are set")
	}
	gref, sref, cref := openForced(t, "cpu.mgather.reference"), openForced(t, "cpu.mscatter.reference"), openForced(t, "cpu.mgather_cas.reference")
	for _, arch := range []int{86, 89} {
		t.Run(fmt.Sprint("sim", arch), func(t *testing.T) {
			rt, err := runtime.Open(runtime.Options{Backend: runtime.BackendSim, SimArch: arch,
				Kernel: "ptx.mgather,ptx.mscatter,ptx.mgather_cas"})
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			rng := rand.New(rand.NewPCG(uint64(arch), 41))
			t.Run("gather", func(t *testing.T) { ptxGather(t, rt, gref, rng) })
			t.Run("scatter", func(t *testing.T) { ptxScatter(t, rt, sref, rng) })
			t.Run("gather_cas", func(t *testing.T) { ptxGatherCAS(t, rt, cref, rng) })
			t.Run("faults", func(t *testing.T) { ptxSGFaults(t, rt, gref, sref, rng) })
		})
	}
}

func ptxGather(t *testing.T, rt, ref *runtime.Runtime, rng *rand.Rand) {
	if k := mustExplainGather(t, rt); k != "ptx.mgather" {
		t.Fatalf("chose %s, want ptx.mgather", k)
	}
	n := 0
	for _, d := range []tile.DType{tile.U8, tile.F16, tile.F32, tile.F64} {
		for _, it := range []tile.DType{tile.S32, tile.U32, tile.S64, tile.U64} {
			for _, mode := range []ops.IndexMode{ops.IndexRows, ops.IndexElements} {
				lay := tile.Layout(rng.IntN(2))
				oob := []ops.OOB{ops.OOBError, ops.OOBClamp, ops.OOBWrap, ops.OOBZero}[rng.IntN(4)]
				c := newGatherCase(rng, d, it, mode, lay, padFor(rng.IntN(5), d), oob)
				got, err := c.run(t, rt)
				if err != nil {
					t.Fatalf("%v: %v", c, err)
				}
				want, err := c.run(t, ref)
				if err != nil {
					t.Fatalf("%v: reference: %v", c, err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("%v: destination differs from the CPU reference", c)
				}
				n++
			}
		}
	}
	t.Logf("%d cases", n)
}

// ptxScatterCase builds one random scatter (as TestMScatterMatchesReference
// does) and returns memory after it on each runtime.
func ptxScatterCase(t *testing.T, rng *rand.Rand, rts []*runtime.Runtime, op ops.ScatterOp, d, it tile.DType, mode ops.IndexMode, det bool, oob ops.OOB) {
	ctx := context.Background()
	unique := op == ops.ScatterStore && !det
	if unique {
		oob = ops.OOBError
	}
	vr, vc := 1+rng.IntN(20), 1+rng.IntN(9)
	src := tile.Tile{DType: d, ValidRows: vr, ValidCols: vc, Rows: vr + rng.IntN(3), Cols: vc + rng.IntN(3), Layout: tile.Layout(rng.IntN(2))}
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
	name := fmt.Sprintf("%v %v idx %v %v det=%v oob %v %dx%d into %d", op, d, it, mode, det, oob, vr, vc, rows)
	var outs [2][]byte
	for i, rt := range rts {
		mem := bufWith(t, rt, d, memRaw, shape...)
		s := tileWith(t, rt, src, srcRaw)
		x := tileWith(t, rt, idx, idxRaw)
		opt := &ops.ScatterOptions{Mode: mode, Op: op, Deterministic: det, OOB: oob}
		if i == 0 && !det {
			e, err := ops.ExplainMScatter(rt, mem, x, s, opt)
			chosen(t, e, err, "ptx.mscatter")
		}
		if err := ops.MScatter(ctx, rt, mem, x, s, opt); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		outs[i] = bytesOf(t, mem)
		mem.Close()
		s.Buf.Close()
		x.Buf.Close()
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Fatalf("%s: memory differs from the CPU reference", name)
	}
}

func ptxScatter(t *testing.T, rt, ref *runtime.Runtime, rng *rand.Rand) {
	n := 0
	for op, types := range scatterTypesTest {
		for _, d := range types {
			for _, mode := range []ops.IndexMode{ops.IndexRows, ops.IndexElements} {
				it := []tile.DType{tile.S32, tile.U32, tile.S64, tile.U64}[rng.IntN(4)]
				oob := []ops.OOB{ops.OOBError, ops.OOBSkip, ops.OOBClamp, ops.OOBWrap}[rng.IntN(4)]
				ptxScatterCase(t, rng, []*runtime.Runtime{rt, ref}, op, d, it, mode, false, oob)
				n++
			}
		}
	}
	t.Logf("%d cases", n)
}

func ptxGatherCAS(t *testing.T, rt, ref *runtime.Runtime, rng *rand.Rand) {
	ctx := context.Background()
	for _, d := range []tile.DType{tile.U8, tile.S16, tile.F32, tile.U32, tile.F64, tile.S64} {
		sz := d.Size()
		it := []tile.DType{tile.S32, tile.U32, tile.S64, tile.U64}[rng.IntN(4)]
		vr, vc := 1+rng.IntN(9), 1+rng.IntN(9)
		dst := tile.Tile{DType: d, ValidRows: vr, ValidCols: vc, Rows: nextPow2(vr), Cols: nextPow2(vc), Layout: tile.Layout(rng.IntN(2)), Pad: padFor(rng.IntN(5), d)}
		idx := tile.Tile{DType: it, ValidRows: vr, ValidCols: vc, Layout: tile.Layout(rng.IntN(2))}
		exp := tile.Tile{DType: d, ValidRows: vr, ValidCols: vc, Layout: tile.Layout(rng.IntN(2))}
		rep := tile.Tile{DType: d, ValidRows: vr, ValidCols: vc, Layout: tile.Layout(rng.IntN(2))}
		nElem := vr*vc + rng.IntN(8)
		memRaw := randBytes(rng, nElem*sz)
		base := 0
		if it.IsSigned() {
			base = rng.IntN(nElem+1) * sz
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
		name := fmt.Sprintf("%v idx %v dst %dx%d base %d", d, it, vr, vc, base)
		var mems, dsts [2][]byte
		for i, r := range []*runtime.Runtime{rt, ref} {
			mem := bufWith(t, r, tile.U8, memRaw, len(memRaw))
			dt := tileWith(t, r, dst, dstRaw)
			o := ops.DefaultGatherCASOptions()
			o.Base = base
			x, e, p := tileWith(t, r, idx, idxRaw), tileWith(t, r, exp, expRaw), tileWith(t, r, rep, repRaw)
			if i == 0 {
				ex, err := ops.ExplainMGatherCAS(r, dt, mem, x, e, p, &o)
				chosen(t, ex, err, "ptx.mgather_cas")
			}
			if err := ops.MGatherCAS(ctx, r, dt, mem, x, e, p, &o); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			mems[i], dsts[i] = bytesOf(t, mem), bytesOf(t, dt.Buf)
		}
		if !bytes.Equal(mems[0], mems[1]) || !bytes.Equal(dsts[0], dsts[1]) {
			t.Fatalf("%s: differs from the CPU reference", name)
		}
	}
}

// ptxSGFaults: an index out of range under OOBError (gather and scatter,
// row and element modes) fails on the device with the CPU's error, found by
// the preflight kernel before anything is written.
func ptxSGFaults(t *testing.T, rt, gref, sref *runtime.Runtime, rng *rand.Rand) {
	ctx := context.Background()
	for _, mode := range []ops.IndexMode{ops.IndexRows, ops.IndexElements} {
		for _, it := range []tile.DType{tile.S32, tile.U64} {
			c := newGatherCase(rng, tile.F32, it, mode, tile.RowMajor, padFor(0, tile.F32), ops.OOBError)
			bad := int64(c.n + rng.IntN(9))
			if it.IsSigned() {
				bad = -1 - int64(rng.IntN(9))
			}
			putIdx(c.idxRaw, c.idx, rng.IntN(c.idx.ValidRows), 0, bad)
			var errs [2]error
			for i, r := range []*runtime.Runtime{rt, gref} {
				got, err := c.run(t, r)
				if !bytes.Equal(got, c.dstRaw) {
					t.Errorf("%v: a faulting gather wrote its destination", c)
				}
				errs[i] = err
			}
			if !errors.Is(errs[0], ops.ErrBounds) || errs[1] == nil || errs[0].Error() != errs[1].Error() {
				t.Errorf("%v: device error %v, CPU error %v", c, errs[0], errs[1])
			}
		}
		// scatter: one index past memory
		d := tile.S32
		src := tile.Dense(d, 5, 3)
		ic := 3
		if mode == ops.IndexRows {
			ic = 1
		}
		idx := tile.Dense(tile.S64, 5, ic)
		idxRaw := make([]byte, idx.Bytes())
		for r := 0; r < 5; r++ {
			for c := 0; c < ic; c++ {
				putIdx(idxRaw, idx, r, c, int64(rng.IntN(4)))
			}
		}
		srcRaw, memRaw := randBytes(rng, src.Bytes()), randBytes(rng, 4*3*4)
		shape := []int{12}
		if mode == ops.IndexRows {
			shape = []int{4, 3}
		}
		putIdx(idxRaw, idx, 4, 0, int64(shape[0])) // one past the last row or element
		var errs [2]error
		for i, r := range []*runtime.Runtime{rt, sref} {
			mem := bufWith(t, r, d, memRaw, shape...)
			errs[i] = ops.MScatter(ctx, r, mem, tileWith(t, r, idx, idxRaw), tileWith(t, r, src, srcRaw), &ops.ScatterOptions{Mode: mode, Op: ops.ScatterAdd})
			if !bytes.Equal(bytesOf(t, mem), memRaw) {
				t.Errorf("%v scatter: a faulting scatter wrote memory", mode)
			}
		}
		if !errors.Is(errs[0], ops.ErrBounds) || errs[1] == nil || errs[0].Error() != errs[1].Error() {
			t.Errorf("%v scatter: device error %v, CPU error %v", mode, errs[0], errs[1])
		}
	}
}
