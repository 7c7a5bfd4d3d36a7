package ops_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// torchPython returns a Python interpreter that has torch, or skips t:
// TCRT_TORCH_PYTHON names one, else /usr/bin/python3 is tried (Debian's
// python3-torch). CI machines have none, so the test is a developer's
// check against an outside reference (docs/verification.md).
func torchPython(t *testing.T) string {
	t.Helper()
	py := os.Getenv("TCRT_TORCH_PYTHON")
	if py == "" {
		py = "/usr/bin/python3"
	}
	if err := exec.Command(py, "-c", "import torch, numpy").Run(); err != nil {
		t.Skipf("no PyTorch: %s -c 'import torch, numpy': %v (set TCRT_TORCH_PYTHON, or apt-get install python3-torch)", py, err)
	}
	return py
}

type torchInput struct {
	File  string `json:"file"`
	Shape []int  `json:"shape"`
}

// torchCase is one op call: what the Python side needs (op, parameters,
// inputs) and what tcrt wrote, with the error bound of each output.
type torchCase struct {
	Name   string                `json:"name"`
	Op     string                `json:"op"`
	Params map[string]any        `json:"params"`
	Inputs map[string]torchInput `json:"inputs"`

	got   map[string][]float32
	dtype map[string]tile.DType // each output's type
	// scale[out] is the size the absolute part of the bound is relative
	// to (0: purely relative): the largest input of a rotation, of a
	// convex combination.
	scale map[string]float64
	// elem[out], if set, adds a size per element (an activation's
	// input, whose cancellation in the left tail its bound is relative to).
	elem map[string][]float64
	// ulps is how many unit roundoffs of the output type the bound allows.
	ulps float64
}

// torchSuite builds the cases in dir, writing each input's values (as
// stored in tcrt's buffers) for torch_ref.py.
type torchSuite struct {
	t     *testing.T
	ctx   context.Context
	rt    *runtime.Runtime
	rng   *rand.Rand
	dir   string
	cases []*torchCase
	cur   *torchCase
}

func (s *torchSuite) begin(op string, params map[string]any, ulps float64, format string, args ...any) *torchCase {
	c := &torchCase{
		Name: fmt.Sprintf("c%03d", len(s.cases)), Op: op, Params: params, Inputs: map[string]torchInput{},
		got: map[string][]float32{}, dtype: map[string]tile.DType{}, scale: map[string]float64{}, elem: map[string][]float64{}, ulps: ulps,
	}
	c.Params["desc"] = fmt.Sprintf(format, args...)
	s.cases = append(s.cases, c)
	s.cur = c
	return c
}

// input allocates a buffer of dtype d holding vals (rounded to d) and
// records the stored values as the case's input name.
func (s *torchSuite) input(name string, d tile.DType, shape []int, vals []float32) *runtime.Buffer {
	s.t.Helper()
	b, err := s.rt.FromFloat32(s.ctx, d, vals, shape...)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { b.Close() })
	stored := make([]float32, len(vals))
	if err := b.ReadFloat32(s.ctx, stored); err != nil {
		s.t.Fatal(err)
	}
	file := s.cur.Name + "." + name + ".in"
	var buf bytes.Buffer
	if err := binary.Write(&buf, binary.LittleEndian, stored); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.dir, file), buf.Bytes(), 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.cur.Inputs[name] = torchInput{File: file, Shape: shape}
	return b
}

func (s *torchSuite) random(name string, d tile.DType, spread float32, shape ...int) *runtime.Buffer {
	n := 1
	for _, v := range shape {
		n *= v
	}
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = (s.rng.Float32()*2 - 1) * spread
	}
	return s.input(name, d, shape, vals)
}

// output allocates a poisoned buffer for output name.
func (s *torchSuite) output(name string, d tile.DType, shape ...int) *runtime.Buffer {
	s.t.Helper()
	b, err := s.rt.Alloc(d, shape...)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { b.Close() })
	poison(s.t, b)
	s.cur.dtype[name] = d
	return b
}

// result records b's values as what tcrt wrote for output name (b may be
// an input updated in place).
func (s *torchSuite) result(name string, d tile.DType, b *runtime.Buffer, scale float64) {
	s.t.Helper()
	s.cur.got[name] = readF32(s.t, b)
	s.cur.dtype[name] = d
	s.cur.scale[name] = scale
}

func (s *torchSuite) check(err error) {
	s.t.Helper()
	if err != nil {
		s.t.Fatalf("%s %s: %v", s.cur.Op, s.cur.Params["desc"], err)
	}
}

// unitRoundoff is half an ulp of 1 in d, and half its smallest
// subnormal (the absolute error of rounding a tiny value).
func unitRoundoff(d tile.DType) (rel, abs float64) {
	switch d {
	case tile.F16:
		return 0x1p-11, 0x1p-25
	case tile.BF16:
		return 0x1p-8, 0x1p-134
	}
	return 0x1p-24, 0x1p-150
}

// inputAbs returns |v| of the case's input name (as stored), times f.
func (s *torchSuite) inputAbs(name string, f float64) []float64 {
	s.t.Helper()
	raw, err := os.ReadFile(filepath.Join(s.dir, s.cur.Inputs[name].File))
	if err != nil {
		s.t.Fatal(err)
	}
	out := make([]float64, len(raw)/4)
	for i := range out {
		out[i] = f * math.Abs(float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))))
	}
	return out
}

// TestAgainstTorch runs the light ops (RMSNorm, fused add + RMSNorm,
// LayerNorm, RoPE with every scaling and layout, SiLU/GELU/tanh-GELU and
// their gated forms, softmax and log-softmax, L2 normalisation, pooling)
// and attention (GQA, causal, sliding window, soft-cap) on the tests'
// backend, and compares every output with PyTorch's float64 result on the
// same stored inputs (ops/testdata/torch_ref.py): the ops' own references
// are written by the same hands as the kernels, torch is not. The bound
// is ulps unit roundoffs of the output type, relative to |ref| plus the
// case's scale; the largest error found per op is logged.
func TestAgainstTorch(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: torch's start and 243 calls take seconds")
	}
	py := torchPython(t)
	s := &torchSuite{t: t, ctx: context.Background(), rt: openTest(t), rng: rand.New(rand.NewPCG(30, 9)), dir: t.TempDir()}
	dtypes := []tile.DType{tile.F32, tile.F16, tile.BF16}
	// A half-precision output is rounded once from float32 (half an ulp,
	// plus float32's few); a float32 output carries the fast paths' few
	// ulps of exp, rsqrt-free division and summation order.
	ulps := func(d tile.DType, f32 float64) float64 {
		if d == tile.F32 {
			return f32
		}
		return 1.25
	}
	shapes := [][2]int{{1, 1}, {3, 7}, {7, 129}, {2, 1000}, {2, 4099}}

	for _, d := range dtypes {
		for _, sh := range shapes {
			rows, cols := sh[0], sh[1]
			for _, gemma := range []bool{false, true} {
				s.begin("rmsnorm", map[string]any{"eps": 1e-5, "gemma": gemma}, ulps(d, 8), "%v %dx%d gemma=%v", d, rows, cols, gemma)
				x := s.random("x", d, 3, rows, cols)
				w := s.random("w", d, 1.5, cols)
				y := s.output("y", d, rows, cols)
				s.check(ops.RMSNorm(s.ctx, s.rt, ops.MatrixOf(y), ops.MatrixOf(x), w, &ops.RMSNormOptions{Eps: 1e-5, Gemma: gemma}))
				s.result("y", d, y, 0)
			}

			s.begin("add_rmsnorm", map[string]any{"eps": 1e-6, "gemma": false}, ulps(d, 8), "%v %dx%d", d, rows, cols)
			x := s.random("x", d, 2, rows, cols)
			res := s.random("residual", d, 2, rows, cols)
			w := s.random("w", d, 1.5, cols)
			s.check(ops.AddRMSNorm(s.ctx, s.rt, ops.MatrixOf(x), ops.MatrixOf(res), w, &ops.RMSNormOptions{Eps: 1e-6}))
			s.result("residual", d, res, 0)
			// x is normalised from the residual as stored (rounded to d),
			// which torch sees only in float64: allow the residual's
			// rounding through the norm.
			s.result("x", d, x, 0)
			if d != tile.F32 {
				s.cur.ulps = 2.5
			}

			s.begin("layernorm", map[string]any{"eps": 1e-5}, ulps(d, 16), "%v %dx%d", d, rows, cols)
			x = s.random("x", d, 3, rows, cols)
			// An offset makes the mean matter.
			w = s.random("w", d, 1.5, cols)
			b := s.random("b", d, 1, cols)
			y := s.output("y", d, rows, cols)
			s.check(ops.LayerNorm(s.ctx, s.rt, ops.MatrixOf(y), ops.MatrixOf(x), w, b, &ops.LayerNormOptions{Eps: 1e-5}))
			// Subtracting the mean cancels: relative to the row's spread.
			s.result("y", d, y, 2)

			for _, fn := range []struct {
				name string
				f    ops.ActFunc
			}{{"silu", ops.SiLU}, {"gelu", ops.GELU}, {"gelu_tanh", ops.GELUTanh}} {
				s.begin("act", map[string]any{"fn": fn.name}, ulps(d, 12), "%s %v %dx%d", fn.name, d, rows, cols)
				x = s.random("x", d, 8, rows, cols)
				y = s.output("y", d, rows, cols)
				s.check(ops.Activate(s.ctx, s.rt, ops.MatrixOf(y), ops.MatrixOf(x), fn.f, nil))
				// GELU's left tail is x·(1 + erf(x/√2))/2, a difference
				// of order-1 terms: relative to |x| as well as to |y|.
				s.result("y", d, y, 0)
				s.cur.elem["y"] = s.inputAbs("x", 1)

				s.begin("gated", map[string]any{"fn": fn.name}, ulps(d, 12), "%s %v %dx2·%d", fn.name, d, rows, cols)
				x = s.random("x", d, 6, rows, 2*cols)
				y = s.output("y", d, rows, cols)
				s.check(ops.GatedActivate(s.ctx, s.rt, ops.MatrixOf(y), ops.MatrixOf(x), fn.f, nil))
				s.result("y", d, y, 0)
				ab := s.inputAbs("x", 1)
				e := make([]float64, rows*cols)
				for r := range rows {
					for j := range cols {
						e[r*cols+j] = ab[r*2*cols+j] * ab[r*2*cols+cols+j]
					}
				}
				s.cur.elem["y"] = e
			}

			for _, log := range []bool{false, true} {
				temp := 0.7
				s.begin("softmax", map[string]any{"temperature": temp, "log": log}, ulps(d, 12), "%v %dx%d log=%v", d, rows, cols, log)
				x = s.random("x", d, 10, rows, cols)
				y = s.output("y", d, rows, cols)
				s.check(ops.Softmax(s.ctx, s.rt, ops.MatrixOf(y), ops.MatrixOf(x), &ops.SoftmaxOptions{Temperature: float32(temp), Log: log}))
				// Log-probabilities are differences of logits: relative to
				// their size; probabilities relative to themselves, and to
				// the largest one's ulp.
				scale := 1e-7
				if log {
					scale = 10 / temp
				}
				s.result("y", d, y, scale)
				if !log {
					// exp((x − m)/T) in float32 carries the rounding of its
					// argument: relative to |y|·|x − m|/T as well.
					got := s.cur.got["y"]
					xs := readF32(t, x)
					e := make([]float64, rows*cols)
					for r := range rows {
						m := float32(math.Inf(-1))
						for j := range cols {
							m = max(m, xs[r*cols+j])
						}
						for j := range cols {
							e[r*cols+j] = math.Abs(float64(got[r*cols+j])) * float64(m-xs[r*cols+j]) / temp
						}
					}
					s.cur.elem["y"] = e
				}
			}

			s.begin("l2norm", map[string]any{"eps": 1e-12}, ulps(d, 8), "%v %dx%d", d, rows, cols)
			x = s.random("x", d, 2, rows, cols)
			y = s.output("y", d, rows, cols)
			s.check(ops.L2Normalize(s.ctx, s.rt, ops.MatrixOf(y), ops.MatrixOf(x), nil))
			s.result("y", d, y, 0)
		}

		for _, mode := range []struct {
			name string
			m    ops.PoolMode
		}{{"mean", ops.PoolMean}, {"cls", ops.PoolCLS}, {"last", ops.PoolLast}} {
			for _, norm := range []bool{false, true} {
				lengths := []int{1, 7, 33}
				s.begin("pool", map[string]any{"mode": mode.name, "normalize": norm, "lengths": lengths}, ulps(d, 16), "%s %v norm=%v", mode.name, d, norm)
				x := s.random("x", d, 2, 41, 129)
				y := s.output("y", d, 3, 129)
				s.check(ops.Pool(s.ctx, s.rt, ops.MatrixOf(y), ops.MatrixOf(x), &ops.PoolOptions{Mode: mode.m, Lengths: lengths, Normalize: norm}))
				// A mean cancels: relative to the inputs' size.
				s.result("y", d, y, 2)
			}
		}

		type ropeCase struct {
			headDim, rotDim, heads, kvHeads int
			interleaved                     bool
			scaling                         ops.RoPEScaling
			params                          map[string]any
		}
		for _, rc := range []ropeCase{
			{64, 64, 4, 2, false, ops.RoPEScaling{}, map[string]any{"scaling": "none"}},
			{128, 128, 3, 1, false, ops.RoPEScaling{Kind: ops.RoPELlama3, Factor: 32, LowFreqFactor: 1, HighFreqFactor: 4, OriginalMaxPosition: 8192},
				map[string]any{"scaling": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position": 8192}},
			{64, 32, 2, 2, true, ops.RoPEScaling{Kind: ops.RoPELinear, Factor: 4}, map[string]any{"scaling": "linear", "factor": 4.0}},
			{80, 40, 2, 1, false, ops.RoPEScaling{Kind: ops.RoPEYaRN, Factor: 8, OriginalMaxPosition: 4096},
				map[string]any{"scaling": "yarn", "factor": 8.0, "original_max_position": 4096}},
			{32, 32, 1, 1, true, ops.RoPEScaling{}, map[string]any{"scaling": "none"}},
		} {
			const tokens = 9
			theta := 500000.0
			p := rc.params
			p["head_dim"], p["rotary_dim"], p["theta"], p["interleaved"] = rc.headDim, rc.rotDim, theta, rc.interleaved
			s.begin("rope", p, ulps(d, 8), "%v hd=%d rot=%d %v interleaved=%v", d, rc.headDim, rc.rotDim, p["scaling"], rc.interleaved)
			pos := make([]float32, tokens)
			posS32 := make([]int32, tokens)
			for i := range pos {
				// Positions up to 2^20: the angles are where float32
				// arithmetic would lose them.
				posS32[i] = int32(s.rng.IntN(1 << 20))
				pos[i] = float32(posS32[i])
			}
			s.input("pos", tile.F32, []int{tokens}, pos)
			posBuf, err := s.rt.Alloc(tile.S32, tokens)
			s.check(err)
			s.check(runtime.WriteRaw(s.ctx, posBuf, posS32))
			q := s.random("x", d, 2, tokens, rc.heads*rc.headDim)
			k := s.random("k", d, 2, tokens, rc.kvHeads*rc.headDim)
			s.check(ops.RoPE(s.ctx, s.rt, ops.MatrixOf(q), ops.MatrixOf(k), &ops.RoPEOptions{
				HeadDim: rc.headDim, RotaryDim: rc.rotDim, Interleaved: rc.interleaved, Theta: theta, Scaling: rc.scaling, Positions: posBuf,
			}))
			posBuf.Close()
			mscale := 1.0
			if rc.scaling.Kind == ops.RoPEYaRN {
				mscale = 0.1*math.Log(rc.scaling.Factor) + 1
			}
			// A rotation of a pair: relative to the pair's size.
			s.result("q", d, q, 2*mscale)
			s.result("k", d, k, 2*mscale)
		}

		type attnCase struct {
			seqQ, seqKV, hq, hkv, dim int
			causal                    bool
			left                      int
			softcap                   float32
		}
		for _, ac := range []attnCase{
			{1, 1, 1, 1, 64, false, -1, 0},
			{7, 7, 4, 2, 64, true, -1, 0},
			{5, 129, 8, 1, 128, true, -1, 0},
			{33, 33, 2, 2, 64, true, 8, 0},
			{3, 100, 4, 4, 128, false, -1, 30},
		} {
			s.begin("attention", map[string]any{"causal": ac.causal, "left": ac.left, "softcap": ac.softcap}, ulps(d, 64),
				"%v q%d kv%d heads %d/%d d%d causal=%v left=%d cap=%v", d, ac.seqQ, ac.seqKV, ac.hq, ac.hkv, ac.dim, ac.causal, ac.left, ac.softcap)
			q := s.random("q", d, 2, ac.seqQ, ac.hq, ac.dim)
			k := s.random("k", d, 2, ac.seqKV, ac.hkv, ac.dim)
			v := s.random("v", d, 1, ac.seqKV, ac.hkv, ac.dim)
			o := s.output("o", d, ac.seqQ, ac.hq, ac.dim)
			opt := &ops.AttentionOptions{Causal: ac.causal, SoftCap: ac.softcap}
			if ac.left >= 0 {
				opt.Window = &ops.Window{Left: ac.left, Right: -1}
			}
			s.check(ops.Attention(s.ctx, s.rt, ops.AttnTensorOf(o), ops.AttnTensorOf(q), ops.AttnTensorOf(k), ops.AttnTensorOf(v), opt))
			// A convex combination of values: relative to their size.
			s.result("o", d, o, 1)
		}
	}

	js, err := json.Marshal(s.cases)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.dir, "cases.json"), js, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, filepath.Join("testdata", "torch_ref.py"), s.dir).CombinedOutput()
	if err != nil {
		t.Fatalf("torch_ref.py: %v\n%s", err, out)
	}
	t.Logf("torch_ref.py: %s", bytes.TrimSpace(out))

	worst := map[string]float64{} // op → largest error in units of its bound
	for _, c := range s.cases {
		for name, got := range c.got {
			raw, err := os.ReadFile(filepath.Join(s.dir, c.Name+"."+name+".ref"))
			if err != nil {
				t.Fatal(err)
			}
			if len(raw) != 8*len(got) {
				t.Fatalf("%s %v output %s: %d reference values for %d outputs", c.Op, c.Params["desc"], name, len(raw)/8, len(got))
			}
			rel, abs := unitRoundoff(c.dtype[name])
			elem := c.elem[name]
			bad := 0
			for i, g := range got {
				ref := math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
				size := math.Abs(ref) + c.scale[name]
				if elem != nil {
					size += elem[i]
				}
				bound := c.ulps * (rel*size + abs)
				e := math.Abs(float64(g) - ref)
				if !(e <= bound) {
					if bad++; bad <= 3 {
						t.Errorf("%s %v: %s[%d] = %v, torch %v (error %.3g, bound %.3g)", c.Op, c.Params["desc"], name, i, g, ref, e, bound)
					}
					continue
				}
				if bound > 0 {
					worst[c.Op] = max(worst[c.Op], e/bound)
				}
			}
			if bad > 3 {
				t.Errorf("%s %v: %s: %d of %d values out of bounds", c.Op, c.Params["desc"], name, bad, len(got))
			}
		}
	}
	t.Logf("%d cases on %v; largest error per op, as a fraction of its bound: %v", len(s.cases), s.rt.Backend(), worst)
}
