package ops_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// mmOperand is one fuzzed matrix: its stored shape and layout, its element
// type and the length of its buffer.
type mmOperand struct {
	rows, cols, ld, bs, off int
	trans                   bool
	dt                      tile.DType
	n                       int
}

// Counts of the calls judged, for the log.
var fuzzValid, fuzzInvalid atomic.Int64

var fuzzDTypes = []tile.DType{tile.F32, tile.F16, tile.BF16, tile.E4M3, tile.S32}

// resolve is the model of the matmul rules for one operand: whether it is
// valid for batch matrices of element types allowed, and its resolved LD and
// batch stride. It computes in big integers, so nothing overflows.
func (o mmOperand) resolve(batch int, allowed map[tile.DType]bool) (ld, bs int, ok bool) {
	if !allowed[o.dt] || o.rows <= 0 || o.cols <= 0 || o.off < 0 || o.bs < 0 {
		return 0, 0, false
	}
	ld = o.ld
	if ld == 0 {
		ld = o.cols
	}
	if ld < o.cols {
		return 0, 0, false
	}
	B := func(v int) *big.Int { return big.NewInt(int64(v)) }
	bsBig := B(o.bs)
	if o.bs == 0 {
		bsBig = new(big.Int).Mul(B(o.rows), B(ld))
	}
	last := new(big.Int).Mul(B(batch-1), bsBig)
	last.Add(last, B(o.off))
	last.Add(last, new(big.Int).Mul(B(o.rows-1), B(ld)))
	last.Add(last, B(o.cols))
	if last.Cmp(B(o.n)) > 0 {
		return 0, 0, false
	}
	return ld, int(bsBig.Int64()), true
}

func (o mmOperand) opShape() (int, int) {
	if o.trans {
		return o.cols, o.rows
	}
	return o.rows, o.cols
}

// FuzzMatMulArgs calls ops.MatMul with fuzzed shapes, strides, offsets,
// batch counts, element types and alpha, on buffers of fuzzed lengths, and
// judges each call against a model of the rules: an invalid call must
// return a typed error and leave D byte for byte unchanged; a valid one
// must succeed, match fallback.MatMulRef inside D's view and leave every
// other element of D untouched.
func FuzzMatMulArgs(f *testing.F) {
	// rows, cols, ld, bs, off, trans, dtype, n for A, B, D, then batch, alpha.
	f.Add(int16(3), int16(5), int64(0), int64(0), int64(0), false, uint8(0), uint16(15),
		int16(5), int16(2), int64(0), int64(0), int64(0), false, uint8(0), uint16(10),
		int16(3), int16(2), int64(0), int64(0), int64(0), uint8(0), uint16(6), int16(1), float32(1), uint64(1))
	f.Add(int16(7), int16(4), int64(9), int64(70), int64(3), true, uint8(1), uint16(200),
		int16(7), int16(3), int64(4), int64(0), int64(1), false, uint8(2), uint16(100),
		int16(4), int16(3), int64(5), int64(21), int64(2), uint8(1), uint16(70), int16(3), float32(0.5), uint64(2))
	f.Add(int16(2), int16(2), int64(math.MaxInt64/2), int64(0), int64(0), false, uint8(0), uint16(8),
		int16(2), int16(2), int64(-4), int64(0), int64(0), false, uint8(0), uint16(8),
		int16(2), int16(2), int64(0), int64(math.MinInt64), int64(math.MaxInt64), uint8(0), uint16(8), int16(-1), float32(math.Inf(1)), uint64(3))
	f.Add(int16(1), int16(1), int64(0), int64(1<<62), int64(0), false, uint8(3), uint16(1),
		int16(1), int16(1), int64(0), int64(0), int64(0), false, uint8(4), uint16(1),
		int16(1), int16(1), int64(0), int64(0), int64(0), uint8(2), uint16(1), int16(4), float32(1), uint64(4))
	rt, err := runtime.Open(testOptions(runtime.Options{Threads: 1}))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		rt.Close()
		f.Logf("%d valid calls checked against the reference, %d invalid ones rejected", fuzzValid.Load(), fuzzInvalid.Load())
	})
	f.Fuzz(func(t *testing.T,
		ar, ac int16, ald, abs, aoff int64, at bool, adt uint8, an uint16,
		br, bc int16, bld, bbs, boff int64, bt bool, bdt uint8, bn uint16,
		dr, dc int16, dld, dbs, doff int64, ddt uint8, dn uint16,
		batch16 int16, alpha float32, seed uint64) {
		ops3 := [3]mmOperand{
			{int(ar), int(ac), int(ald), int(abs), int(aoff), at, fuzzDTypes[int(adt)%len(fuzzDTypes)], int(an)%4096 + 1},
			{int(br), int(bc), int(bld), int(bbs), int(boff), bt, fuzzDTypes[int(bdt)%len(fuzzDTypes)], int(bn)%4096 + 1},
			{int(dr), int(dc), int(dld), int(dbs), int(doff), false, fuzzDTypes[int(ddt)%len(fuzzDTypes)], int(dn)%4096 + 1},
		}
		batchOpt := int(batch16)
		judgeMatMul(t, rt, ops3, batchOpt, alpha, seed)
	})
}

func judgeMatMul(t *testing.T, rt *runtime.Runtime, o [3]mmOperand, batchOpt int, alpha float32, seed uint64) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 7))
	bufs := [3]*runtime.Buffer{}
	for i := range o {
		b, err := rt.Alloc(o[i].dt, o[i].n)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		raw := make([]byte, b.Bytes())
		for j := range raw {
			raw[j] = byte(rng.Uint32())
		}
		if i == 2 {
			for j := range raw {
				raw[j] = 0xff // NaN in every float type: unwritten elements stay NaN
			}
		} else if o[i].dt.IsFloat() {
			vals := make([]float32, o[i].n)
			for j := range vals {
				vals[j] = rng.Float32()*2 - 1
			}
			engine.EncodeFloat32(o[i].dt, raw, vals)
		}
		if err := b.Write(ctx, 0, raw); err != nil {
			t.Fatal(err)
		}
		bufs[i] = b
	}
	mat := func(i int) ops.Matrix {
		return ops.Matrix{Buf: bufs[i], Offset: o[i].off, Rows: o[i].rows, Cols: o[i].cols, LD: o[i].ld, BatchStride: o[i].bs, Trans: o[i].trans}
	}
	opt := &ops.MatMulOptions{Alpha: alpha, Batch: batchOpt}

	// The model.
	valid := batchOpt >= 0
	batch := max(batchOpt, 1)
	in := map[tile.DType]bool{tile.F32: true, tile.F16: true, tile.BF16: true, tile.E4M3: true, tile.E5M2: true}
	outT := map[tile.DType]bool{tile.F32: true, tile.F16: true, tile.BF16: true}
	var lds, bss [3]int
	for i := range o {
		allowed := in
		if i == 2 {
			allowed = outT
		}
		var ok bool
		lds[i], bss[i], ok = o[i].resolve(batch, allowed)
		valid = valid && ok
	}
	m, k := o[0].opShape()
	kb, n := o[1].opShape()
	valid = valid && kb == k && o[2].rows == m && o[2].cols == n
	if valid && batch > 1 {
		valid = bss[2] >= (o[2].rows-1)*lds[2]+o[2].cols
	}
	valid = valid && !math.IsNaN(float64(alpha)) && !math.IsInf(float64(alpha), 0)

	before := make([]byte, bufs[2].Bytes())
	if err := bufs[2].Read(ctx, 0, before); err != nil {
		t.Fatal(err)
	}
	err := ops.MatMul(ctx, rt, mat(2), mat(0), mat(1), opt)
	after := make([]byte, bufs[2].Bytes())
	if rerr := bufs[2].Read(ctx, 0, after); rerr != nil {
		t.Fatal(rerr)
	}
	if !valid {
		fuzzInvalid.Add(1)
		if err == nil || !isTyped(err) {
			t.Fatalf("invalid call %+v batch %d alpha %v: got %v, want a typed error", o, batchOpt, alpha, err)
		}
		if !bytes.Equal(before, after) {
			t.Fatalf("rejected call %+v wrote D", o)
		}
		return
	}
	if err != nil {
		t.Fatalf("valid call %+v batch %d: %v", o, batchOpt, err)
	}
	fuzzValid.Add(1)
	// The reference on a copy of D's original contents.
	ref, err := rt.Alloc(o[2].dt, o[2].n)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	if err := ref.Write(ctx, 0, before); err != nil {
		t.Fatal(err)
	}
	args, _, err := ops.MatMulArgs(rt, mat(2), mat(0), mat(1), opt)
	if err != nil {
		t.Fatal(err)
	}
	args.D.Buf = engBuf(ref)
	if err := engine.WithHostArgs(ctx, engRT(rt), args, func() error {
		fallback.MatMulRef(engine.HostMatMulArgs(args, 1))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := make([]byte, ref.Bytes())
	if err := ref.Read(ctx, 0, want); err != nil {
		t.Fatal(err)
	}
	got32, want32 := make([]float32, o[2].n), make([]float32, o[2].n)
	engine.DecodeFloat32(o[2].dt, got32, after)
	engine.DecodeFloat32(o[2].dt, want32, want)
	inView := make([]bool, o[2].n)
	for b := 0; b < batch; b++ {
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				inView[o[2].off+b*bss[2]+i*lds[2]+j] = true
			}
		}
	}
	tol := map[tile.DType]float64{tile.F32: 1e-5, tile.F16: 2e-3, tile.BF16: 1.6e-2}[o[2].dt] + 2e-6*float64(k)
	for idx := range got32 {
		g, w := float64(got32[idx]), float64(want32[idx])
		if !inView[idx] {
			if math.Float32bits(got32[idx]) != math.Float32bits(want32[idx]) {
				t.Fatalf("%+v: element %d outside D's view was written (%v)", o, idx, g)
			}
			continue
		}
		if g == w || (math.IsNaN(g) && math.IsNaN(w)) {
			continue
		}
		if e := math.Abs(g-w) / math.Max(math.Abs(w), 1); !(e <= tol) {
			t.Fatalf("%+v batch %d: D element %d = %v, reference %v", o, batch, idx, g, w)
		}
	}
}

// isTyped reports whether err wraps one of the ops sentinels for bad input.
func isTyped(err error) bool {
	for _, s := range []error{ops.ErrShape, ops.ErrDType, ops.ErrBounds, ops.ErrArgument, ops.ErrAlias, ops.ErrClosed, ops.ErrOutOfMemory, ops.ErrUnsupported} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
