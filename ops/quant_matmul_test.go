package ops_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// fp8Operand returns a rows×cols (stored) float8 matrix of random values
// and their decoded values.
func fp8Operand(t *testing.T, rt *runtime.Runtime, rng *rand.Rand, d tile.DType, rows, cols int) (*runtime.Buffer, []float32) {
	t.Helper()
	b := alloc(t, rt, d, rows, cols)
	raw := make([]uint8, rows*cols)
	vals := make([]float32, len(raw))
	for i := range raw {
		raw[i] = tile.EncodeFloat8(d, float32(rng.NormFloat64()*8), tile.Saturate)
		vals[i] = tile.DecodeFloat8(d, raw[i])
	}
	if err := runtime.WriteRaw(context.Background(), b, raw); err != nil {
		t.Fatal(err)
	}
	return b, vals
}

func f32Buf(t *testing.T, rt *runtime.Runtime, v []float32) *runtime.Buffer {
	t.Helper()
	b := alloc(t, rt, tile.F32, len(v))
	if err := b.WriteFloat32(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	return b
}

func randScales(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(0.01 + rng.Float64())
	}
	return s
}

func TestMatMulFloat8(t *testing.T) {
	ctx := context.Background()
	rt := openTest(t)
	rng := rand.New(rand.NewPCG(13, 14))
	type c struct {
		m, n, k    int
		ta, tb     tile.DType
		transA     bool
		transB     bool
		sa, sb     string // "", "tensor", "vector"
		beta, bias bool
	}
	cases := []c{
		{7, 9, 33, tile.E4M3, tile.E4M3, false, false, "tensor", "tensor", false, false},
		{7, 9, 33, tile.E4M3, tile.E5M2, false, false, "vector", "vector", false, false},
		{16, 5, 64, tile.E5M2, tile.E4M3, true, false, "vector", "tensor", true, true},
		{3, 130, 17, tile.E4M3, tile.E4M3, false, true, "tensor", "vector", false, true},
		{12, 12, 12, tile.E4M3, tile.F32, true, false, "vector", "", true, false},
		{1, 1, 1, tile.E5M2, tile.E5M2, false, false, "", "", false, false},
	}
	for _, cs := range cases {
		name := fmt.Sprintf("%+v", cs)
		ar, ac := cs.m, cs.k
		if cs.transA {
			ar, ac = ac, ar
		}
		br, bc := cs.k, cs.n
		if cs.transB {
			br, bc = bc, br
		}
		var abuf, bbuf *runtime.Buffer
		var av, bv []float32
		if tile.IsFloat8(cs.ta) {
			abuf, av = fp8Operand(t, rt, rng, cs.ta, ar, ac)
		} else {
			abuf, av = randBuf(t, rt, rng, cs.ta, ar*ac)
		}
		if tile.IsFloat8(cs.tb) {
			bbuf, bv = fp8Operand(t, rt, rng, cs.tb, br, bc)
		} else {
			bbuf, bv = randBuf(t, rt, rng, cs.tb, br*bc)
		}
		a := ops.Matrix{Buf: abuf, Rows: ar, Cols: ac, Trans: cs.transA}
		b := ops.Matrix{Buf: bbuf, Rows: br, Cols: bc, Trans: cs.transB}
		opt := ops.DefaultMatMulOptions()
		opt.Alpha = 0.5
		var sa, sb []float32
		switch cs.sa {
		case "tensor":
			sa = randScales(rng, 1)
		case "vector":
			sa = randScales(rng, cs.m)
		}
		switch cs.sb {
		case "tensor":
			sb = randScales(rng, 1)
		case "vector":
			sb = randScales(rng, cs.n)
		}
		if sa != nil {
			opt.ScaleA = f32Buf(t, rt, sa)
		}
		if sb != nil {
			opt.ScaleB = f32Buf(t, rt, sb)
		}
		var cv []float32
		if cs.beta {
			var cb *runtime.Buffer
			cb, cv = randBuf(t, rt, rng, tile.F32, cs.m*cs.n)
			cm := ops.Matrix{Buf: cb, Rows: cs.m, Cols: cs.n}
			opt.C, opt.Beta = &cm, 0.25
		}
		var biasv []float32
		if cs.bias {
			opt.Bias, biasv = randBuf(t, rt, rng, tile.F32, cs.n)
		}
		dbuf := alloc(t, rt, tile.F32, cs.m, cs.n)
		d := ops.Matrix{Buf: dbuf, Rows: cs.m, Cols: cs.n}
		ex, err := ops.ExplainMatMul(rt, d, a, b, &opt)
		if err != nil {
			t.Fatal(err)
		}
		// A bf16 pair kernel (float8 decoded exactly into bf16) takes
		// float8 and bf16 operands where the CPU has one; otherwise, and
		// for other operand types, float8 is dequantised into f32 panels.
		wantK := "cpu.matmul.fp8"
		for _, v := range fallback.MatMulVariants() {
			if v.BF16Pairs && v.Available() && v.Accepts(cs.ta, cs.tb) {
				wantK = "cpu.matmul." + v.Name
				break
			}
		}
		if k := ex.Chosen(); k == nil || strings.TrimPrefix(k.Name, "host.") != wantK { // host.: the host fallback of a GPU backend
			t.Fatalf("%s: chose %v\n%s", name, k, ex)
		}
		poison(t, dbuf)
		if err := ops.MatMul(ctx, rt, d, a, b, &opt); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := make([]float32, cs.m*cs.n)
		if err := dbuf.ReadFloat32(ctx, got); err != nil {
			t.Fatal(err)
		}
		// The reference on the same arguments.
		args, _, err := ops.MatMulArgs(rt, d, a, b, &opt)
		if err != nil {
			t.Fatal(err)
		}
		ref := alloc(t, rt, tile.F32, cs.m, cs.n)
		args.D.Buf = engBuf(ref)
		if err := engine.WithHostArgs(ctx, engRT(rt), args, func() error {
			fallback.MatMulRef(engine.HostMatMulArgs(args, 1))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		want := make([]float32, len(got))
		if err := ref.ReadFloat32(ctx, want); err != nil {
			t.Fatal(err)
		}
		// And the definition, written out here in float64.
		at := func(v []float32, cols int, trans bool, i, j int) float64 {
			if trans {
				return float64(v[j*cols+i])
			}
			return float64(v[i*cols+j])
		}
		sc := func(s []float32, i int) float64 {
			switch len(s) {
			case 0:
				return 1
			case 1:
				return float64(s[0])
			}
			return float64(s[i])
		}
		for i := range cs.m {
			for j := range cs.n {
				var acc, mag float64
				for k := range cs.k {
					p := at(av, ac, cs.transA, i, k) * at(bv, bc, cs.transB, k, j)
					acc += p
					mag += math.Abs(p)
				}
				def := 0.5 * sc(sa, i) * sc(sb, j) * acc
				mag = math.Abs(0.5 * sc(sa, i) * sc(sb, j) * mag)
				if cv != nil {
					def += 0.25 * float64(cv[i*cs.n+j])
					mag += math.Abs(0.25 * float64(cv[i*cs.n+j]))
				}
				if biasv != nil {
					def += float64(biasv[j])
					mag += math.Abs(float64(biasv[j]))
				}
				tol := 1e-5 * math.Max(1, math.Abs(def))
				if e := math.Abs(float64(want[i*cs.n+j]) - def); e > tol {
					t.Fatalf("%s: reference [%d,%d] = %g, definition %g", name, i, j, want[i*cs.n+j], def)
				}
				// The kernel accumulates in f32: its error is bounded by the
				// magnitude of the terms, not of their sum.
				if e := math.Abs(float64(got[i*cs.n+j]) - def); e > 1e-5*math.Max(1, mag) {
					t.Fatalf("%s: fp8 kernel [%d,%d] = %g, definition %g", name, i, j, got[i*cs.n+j], def)
				}
			}
		}
	}
}

func TestMatMulFloat8BadScales(t *testing.T) {
	ctx := context.Background()
	rt := openTest(t)
	rng := rand.New(rand.NewPCG(15, 16))
	abuf, _ := fp8Operand(t, rt, rng, tile.E4M3, 4, 8)
	bbuf, _ := fp8Operand(t, rt, rng, tile.E4M3, 8, 3)
	fbuf, _ := randBuf(t, rt, rng, tile.F32, 8*3)
	a, b := ops.MatrixOf(abuf), ops.MatrixOf(bbuf)
	fb := ops.Matrix{Buf: fbuf, Rows: 8, Cols: 3}
	dbuf := alloc(t, rt, tile.F32, 4, 3)
	d := ops.MatrixOf(dbuf)
	cases := []struct {
		name     string
		b        ops.Matrix
		sa, sb   *runtime.Buffer
		sentinel error
		arg      string
	}{
		{"scale on f32 operand", fb, nil, f32Buf(t, rt, []float32{1}), ops.ErrArgument, "ScaleB"},
		{"wrong length", b, f32Buf(t, rt, []float32{1, 2}), nil, ops.ErrShape, "ScaleA"},
		{"wrong dtype", b, alloc(t, rt, tile.F16, 1), nil, ops.ErrDType, "ScaleA"},
		{"zero", b, f32Buf(t, rt, []float32{0}), nil, ops.ErrArgument, "ScaleA"},
		{"negative", b, nil, f32Buf(t, rt, []float32{1, -1, 1}), ops.ErrArgument, "ScaleB"},
		{"NaN", b, f32Buf(t, rt, []float32{1, 1, float32(math.NaN()), 1}), nil, ops.ErrArgument, "ScaleA"},
		{"Inf", b, nil, f32Buf(t, rt, []float32{float32(math.Inf(1))}), ops.ErrArgument, "ScaleB"},
	}
	check := func(name string, err error, sentinel error, arg string, dbuf *runtime.Buffer, before []byte) {
		t.Helper()
		var ae *tile.ArgError
		if !errors.Is(err, sentinel) || !errors.As(err, &ae) || ae.Arg != arg {
			t.Errorf("%s: got %v; want %v naming %s", name, err, sentinel, arg)
		}
		if string(before) != string(rawBytes(t, dbuf)) {
			t.Errorf("%s: D written on error", name)
		}
	}
	for _, c := range cases {
		poison(t, dbuf)
		before := rawBytes(t, dbuf)
		opt := ops.DefaultMatMulOptions()
		opt.ScaleA, opt.ScaleB = c.sa, c.sb
		check(c.name, ops.MatMul(ctx, rt, d, a, c.b, &opt), c.sentinel, c.arg, dbuf, before)
	}
	// The reference kernel checks scale values too.
	rf, err := runtime.Open(runtime.Options{Backend: runtime.BackendCPU, Kernel: "cpu.matmul.reference"})
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	ra, _ := fp8Operand(t, rf, rng, tile.E5M2, 4, 8)
	rb, _ := fp8Operand(t, rf, rng, tile.E5M2, 8, 3)
	rd := alloc(t, rf, tile.F32, 4, 3)
	poison(t, rd)
	before := rawBytes(t, rd)
	opt := ops.DefaultMatMulOptions()
	opt.ScaleB = f32Buf(t, rf, []float32{1, float32(math.NaN()), 1})
	check("reference NaN", ops.MatMul(ctx, rf, ops.MatrixOf(rd), ops.MatrixOf(ra), ops.MatrixOf(rb), &opt), ops.ErrArgument, "ScaleB", rd, before)
}
