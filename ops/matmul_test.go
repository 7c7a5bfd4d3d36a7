package ops_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// testOptions is o on the backend the package's tests run on: the one
// TCRT_BACKEND names when it is set (so CI's TCRT_BACKEND=sim run of
// ./ops/... takes them through the simulated GPU's kernels and host
// fallbacks), else the CPU. Options set explicitly win over the
// environment, so the tests read it here, deliberately.
func testOptions(o runtime.Options) runtime.Options {
	o.Backend = runtime.BackendCPU
	if v := os.Getenv("TCRT_BACKEND"); v != "" {
		o.Backend = runtime.BackendKind(strings.ToLower(v))
	}
	return o
}

// openTest opens a runtime on the tests' backend (testOptions) and
// closes it when t ends.
func openTest(t testing.TB) *runtime.Runtime {
	t.Helper()
	rt, err := runtime.Open(testOptions(runtime.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// randBuf allocates a buffer of n elements filled with uniform values in
// [-1, 1) (never all zeros) and returns it with the float32 values it holds.
func randBuf(t testing.TB, rt *runtime.Runtime, rng *rand.Rand, d tile.DType, n int) (*runtime.Buffer, []float32) {
	t.Helper()
	b, err := rt.Alloc(d, n)
	if err != nil {
		t.Fatal(err)
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = rng.Float32()*2 - 1
	}
	if err := b.WriteFloat32(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	if err := b.ReadFloat32(context.Background(), v); err != nil { // values as stored
		t.Fatal(err)
	}
	return b, v
}

// poison fills b with NaN so unwritten elements fail comparison.
func poison(t testing.TB, b *runtime.Buffer) {
	t.Helper()
	raw := make([]byte, b.Bytes())
	for i := range raw {
		raw[i] = 0xff
	}
	if err := b.Write(context.Background(), 0, raw); err != nil {
		t.Fatal(err)
	}
}

type mmCase struct {
	m, n, k, batch int
	ta, tb         bool
	dtA, dtB, dtD  tile.DType
	alpha, beta    float32
	bias           bool
	act            ops.Activation
	padLD          int
}

func (c mmCase) String() string {
	return fmt.Sprintf("%dx%dx%d_b%d_t%v%v_%v%v%v_a%g_b%g_bias%v_%v_pad%d", c.m, c.n, c.k, c.batch, c.ta, c.tb, c.dtA, c.dtB, c.dtD, c.alpha, c.beta, c.bias, c.act, c.padLD)
}

// runCase runs the case through ops.MatMul and through fallback.MatMulRef on
// the same stored inputs and returns the max error relative to max(|ref|,1).
func runCase(t *testing.T, rt *runtime.Runtime, rng *rand.Rand, c mmCase) float64 {
	t.Helper()
	ctx := context.Background()
	mk := func(rows, cols int, trans bool, d tile.DType) (ops.Matrix, []float32) {
		if trans {
			rows, cols = cols, rows
		}
		ld := cols + c.padLD
		stride := rows*ld + 3
		buf, vals := randBuf(t, rt, rng, d, stride*c.batch)
		return ops.Matrix{Buf: buf, Rows: rows, Cols: cols, LD: ld, BatchStride: stride, Trans: trans}, vals
	}
	a, _ := mk(c.m, c.k, c.ta, c.dtA)
	b, _ := mk(c.k, c.n, c.tb, c.dtB)
	dm, _ := mk(c.m, c.n, false, c.dtD)
	opt := ops.MatMulOptions{Alpha: c.alpha, Beta: c.beta, Act: c.act, Batch: c.batch}
	var cm ops.Matrix
	if c.beta != 0 {
		cm, _ = mk(c.m, c.n, false, tile.F32)
		opt.C = &cm
	}
	if c.bias {
		opt.Bias, _ = randBuf(t, rt, rng, tile.F32, c.n)
	}
	// Reference on a copy of D's buffer.
	ref, err := rt.Alloc(c.dtD, dm.Buf.Len())
	if err != nil {
		t.Fatal(err)
	}
	poison(t, dm.Buf)
	poison(t, ref)
	if err := ops.MatMul(ctx, rt, dm, a, b, &opt); err != nil {
		t.Fatalf("%v: %v", c, err)
	}
	rargs, _, err := ops.MatMulArgs(rt, dm, a, b, &opt)
	if err != nil {
		t.Fatal(err)
	}
	rargs.D.Buf = engBuf(ref)
	if err := engine.WithHostArgs(ctx, engRT(rt), rargs, func() error {
		fallback.MatMulRef(engine.HostMatMulArgs(rargs, 1))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, dm.Buf.Len())
	want := make([]float32, ref.Len())
	if err := dm.Buf.ReadFloat32(ctx, got); err != nil {
		t.Fatal(err)
	}
	if err := ref.ReadFloat32(ctx, want); err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for bi := 0; bi < c.batch; bi++ {
		for i := 0; i < c.m; i++ {
			for j := 0; j < c.n; j++ {
				idx := bi*dm.BatchStride + i*dm.LD + j
				g, w := float64(got[idx]), float64(want[idx])
				e := math.Abs(g-w) / math.Max(math.Abs(w), 1)
				if math.IsNaN(g) || math.IsNaN(e) {
					t.Fatalf("%v: D[%d][%d][%d] = %v, want %v (unwritten?)", c, bi, i, j, g, w)
				}
				worst = math.Max(worst, e)
			}
		}
	}
	return worst
}

func TestMatMulMatchesReference(t *testing.T) {
	rt := openTest(t)
	rng := rand.New(rand.NewPCG(1, uint64(rand.Int64())))
	dims := []int{1, 7, 129}
	if !testing.Short() {
		dims = append(dims, 1000)
	}
	var cases []mmCase
	for _, m := range dims {
		for _, n := range dims {
			for _, k := range dims {
				if m*n*k > 1000*129*7 {
					continue
				}
				cases = append(cases, mmCase{m: m, n: n, k: k, batch: 1, dtA: tile.F32, dtB: tile.F32, dtD: tile.F32, alpha: 1})
			}
		}
	}
	for i, act := range []ops.Activation{ops.ActNone, ops.ActReLU, ops.ActGELU, ops.ActSiLU} {
		for _, dt := range []tile.DType{tile.F32, tile.F16, tile.BF16} {
			cases = append(cases, mmCase{m: 33, n: 65, k: 47, batch: 1 + i, ta: i&1 == 1, tb: i&2 == 2,
				dtA: dt, dtB: tile.F32, dtD: dt, alpha: 0.75, beta: -0.5, bias: true, act: act, padLD: i})
		}
	}
	cases = append(cases, mmCase{m: 17, n: 31, k: 64, batch: 3, ta: true, tb: true, dtA: tile.BF16, dtB: tile.F16, dtD: tile.F32, alpha: 2, padLD: 5})
	for _, c := range cases {
		e := runCase(t, rt, rng, c)
		tol := 1e-4
		if c.dtA != tile.F32 || c.dtD != tile.F32 {
			tol = 1e-2
		}
		if e > tol {
			t.Errorf("%v: max relative error %.3g > %.0g", c, e, tol)
		}
	}
}

// TestMatMulBadInput checks each rejected argument: the error wraps the
// expected sentinel, names the argument, and D is left untouched.
func TestMatMulBadInput(t *testing.T) {
	rt := openTest(t)
	other := openTest(t)
	rng := rand.New(rand.NewPCG(2, 3))
	ctx := context.Background()
	newM := func(r *runtime.Runtime, d tile.DType, rows, cols int) ops.Matrix {
		b, _ := randBuf(t, r, rng, d, rows*cols)
		return ops.Matrix{Buf: b, Rows: rows, Cols: cols}
	}
	a := newM(rt, tile.F32, 4, 5)
	b := newM(rt, tile.F32, 5, 6)
	d := newM(rt, tile.F32, 4, 6)
	closed := newM(rt, tile.F32, 5, 6)
	closed.Buf.Close()
	ints, _ := rt.Alloc(tile.S32, 30)
	bias5, _ := randBuf(t, rt, rng, tile.F32, 5)
	foreign := newM(other, tile.F32, 5, 6)
	before := make([]float32, d.Buf.Len())
	if err := d.Buf.ReadFloat32(ctx, before); err != nil {
		t.Fatal(err)
	}
	shifted := func(m ops.Matrix, f func(*ops.Matrix)) ops.Matrix { f(&m); return m }
	cases := []struct {
		name    string
		d, a, b ops.Matrix
		opt     *ops.MatMulOptions
		want    error
		arg     string
	}{
		{"K mismatch", d, a, newM(rt, tile.F32, 4, 6), nil, ops.ErrShape, "argument B"},
		{"D shape", newM(rt, tile.F32, 4, 7), a, b, nil, ops.ErrShape, "argument D"},
		{"int input", d, a, ops.Matrix{Buf: ints, Rows: 5, Cols: 6}, nil, ops.ErrDType, "argument B"},
		{"zero rows", d, shifted(a, func(m *ops.Matrix) { m.Rows = 0 }), b, nil, ops.ErrShape, "argument A"},
		{"negative cols", d, shifted(a, func(m *ops.Matrix) { m.Cols = -5 }), b, nil, ops.ErrShape, "argument A"},
		{"small LD", d, shifted(a, func(m *ops.Matrix) { m.LD = 3 }), b, nil, ops.ErrShape, "argument A.LD"},
		{"view past end", d, shifted(a, func(m *ops.Matrix) { m.Offset = 1 }), b, nil, ops.ErrBounds, "argument A"},
		{"closed buffer", d, a, closed, nil, ops.ErrClosed, "argument B"},
		{"nil buffer", d, a, ops.Matrix{Rows: 5, Cols: 6}, nil, ops.ErrArgument, "argument B"},
		{"foreign buffer", d, a, foreign, nil, ops.ErrArgument, "argument B"},
		{"D aliases A", ops.Matrix{Buf: a.Buf, Rows: 4, Cols: 5}, a, newM(rt, tile.F32, 5, 5), nil, ops.ErrAlias, "argument D"},
		{"bias length", d, a, b, &ops.MatMulOptions{Alpha: 1, Bias: bias5}, ops.ErrShape, "argument Bias"},
		{"beta without C", d, a, b, &ops.MatMulOptions{Alpha: 1, Beta: 1}, ops.ErrArgument, "argument C"},
		{"C without beta", d, a, b, &ops.MatMulOptions{C: &d}, ops.ErrArgument, "argument Beta"},
		{"NaN alpha", d, a, b, &ops.MatMulOptions{Alpha: float32(math.NaN())}, ops.ErrArgument, "argument Alpha"},
		{"bad activation", d, a, b, &ops.MatMulOptions{Alpha: 1, Act: 9}, ops.ErrArgument, "argument Act"},
		{"negative batch", d, a, b, &ops.MatMulOptions{Alpha: 1, Batch: -1}, ops.ErrShape, "argument Batch"},
		{"batch past end", d, a, b, &ops.MatMulOptions{Alpha: 1, Batch: 2}, ops.ErrBounds, "argument A"},
		{"transposed D", d.T(), a, b, nil, ops.ErrArgument, "argument D.Trans"},
	}
	for _, c := range cases {
		err := ops.MatMul(ctx, rt, c.d, c.a, c.b, c.opt)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.arg) {
			t.Errorf("%s: error %q does not name %q", c.name, err, c.arg)
		}
		after := make([]float32, d.Buf.Len())
		if err := d.Buf.ReadFloat32(ctx, after); err != nil {
			t.Fatal(err)
		}
		for i := range after {
			if math.Float32bits(after[i]) != math.Float32bits(before[i]) {
				t.Fatalf("%s: D[%d] changed from %v to %v", c.name, i, before[i], after[i])
			}
		}
	}
}

// TestMatMulZeroOptions: &MatMulOptions{} is D = A·B (Alpha 0 means 1),
// bit for bit the same as nil options and as Alpha 1.
func TestMatMulZeroOptions(t *testing.T) {
	rt := openTest(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(28, 1))
	ab, _ := randBuf(t, rt, rng, tile.F32, 7*129)
	bb, _ := randBuf(t, rt, rng, tile.F32, 129*5)
	a := ops.Matrix{Buf: ab, Rows: 7, Cols: 129, LD: 129}
	b := ops.Matrix{Buf: bb, Rows: 129, Cols: 5, LD: 5}
	var outs [3][]float32
	for i, opt := range []*ops.MatMulOptions{nil, {}, {Alpha: 1}} {
		db, err := rt.Alloc(tile.F32, 7, 5)
		if err != nil {
			t.Fatal(err)
		}
		poison(t, db)
		if err := ops.MatMul(ctx, rt, ops.Matrix{Buf: db, Rows: 7, Cols: 5, LD: 5}, a, b, opt); err != nil {
			t.Fatal(err)
		}
		outs[i] = make([]float32, 35)
		if err := db.ReadFloat32(ctx, outs[i]); err != nil {
			t.Fatal(err)
		}
	}
	for i := range outs[0] {
		if outs[0][i] == 0 || math.IsNaN(float64(outs[0][i])) {
			t.Fatalf("D[%d] = %v: not a product", i, outs[0][i])
		}
		for j := 1; j < 3; j++ {
			if math.Float32bits(outs[j][i]) != math.Float32bits(outs[0][i]) {
				t.Fatalf("options %d: D[%d] = %v, nil options give %v", j, i, outs[j][i], outs[0][i])
			}
		}
	}
}
