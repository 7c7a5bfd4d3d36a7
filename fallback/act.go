package fallback

import "math"

// ActFunc is an element-wise activation of the light ops.
type ActFunc uint8

const (
	// FnSiLU is x·σ(x) = x / (1 + e^−x).
	FnSiLU ActFunc = iota
	// FnGELU is the exact GELU, x/2 · (1 + erf(x/√2)).
	FnGELU
	// FnGELUTanh is the tanh approximation, x/2 · (1 + tanh(√(2/π)·(x + 0.044715·x³))).
	FnGELUTanh
	numActFuncs
)

var actNames = [numActFuncs]string{"silu", "gelu", "gelu_tanh"}

// String is the function's name ("silu", "gelu", "gelu_tanh").
func (f ActFunc) String() string {
	if f < numActFuncs {
		return actNames[f]
	}
	return "ActFunc(?)"
}

// Valid reports whether f is one of the defined functions.
func (f ActFunc) Valid() bool { return f < numActFuncs }

// actRef is the float64 form of f, the reference's.
func actRef(f ActFunc, x float64) float64 {
	switch f {
	case FnSiLU:
		return x / (1 + math.Exp(-x))
	case FnGELU:
		return 0.5 * x * (1 + math.Erf(x/math.Sqrt2))
	default:
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	}
}

// silu32, gelu32 and geluTanh32 are the fast path's float32 forms, the
// fused kernels' operations (the same bits). silu32 and geluTanh32 are
// gate32, geluTanh32 by x/2·(1 + tanh u) = x·σ(2u); their relative error
// is within 3e-7 + c·|t|, t the exponent gate32 takes (|t| ≤ 128; c =
// 6e-8 for SiLU, 2e-7 for the tanh GELU), so within 1e-6 for |x| ≤ 8
// (SiLU) or 2 (GELU). gelu32 is x·Φ(x) with Φ(−|x|) by Abramowitz and
// Stegun's 7.1.26 (absolute error below 1.5e-7 in erf), so within
// 2e-7·|x| + 3e-7·|gelu(x)| of the exact GELU (far below zero, where
// gelu(x) is tiny, the relative error is not small).
func silu32(x float32) float32 { return gate32(x, x*gateK.nlog2e) }

// gelu32 is x·(1 − q) for x ≥ 0 and x·q below (the sign bit decides), q
// = P(s)·2^max(−127, −x²·log2(e)/2) ≈ Φ(−|x|), s = 1/(1 + p·|x|), P
// 7.1.26's polynomial with halved coefficients.
func gelu32(x float32) float32 {
	k := &geluK
	a := math.Float32frombits(math.Float32bits(x) &^ (1 << 31))
	s := 1 / fma32(a, k.p, 1)
	p := fma32(fma32(fma32(fma32(k.c[4], s, k.c[3]), s, k.c[2]), s, k.c[1]), s, k.c[0]) * s
	u := x * x * k.h
	if !(u > -127) {
		u = -127
	}
	q := p * pow2F32(u)
	if math.Signbit(float64(x)) {
		return x * q
	}
	return x * (1 - q)
}

// geluK are gelu32's constants: 7.1.26's p/√2, its coefficients halved
// and −log2(e)/2 (the same values as light_gen.go's ep, e0…e4 and eh).
var geluK = struct {
	p, h float32
	c    [5]float32
}{0.231641889, -0.721347511, [5]float32{0.127414793, -0.142248362, 0.71070689, -0.72657603, 0.53070271}}

func geluTanh32(x float32) float32 { return gate32(x, x*fma32(x*x, gateK.k3, gateK.k1)) }

// gateK are gate32's constants: −log2 e, and the tanh GELU's 2u·log2 e =
// −x·(k1 + k3·x²), k1 = −2·√(2/π)·log2 e, k3 = 0.044715·k1 (the same values
// as light_gen.go's nlog2e, gk1 and gk3).
var gateK = struct{ nlog2e, k1, k3 float32 }{-1.44269502, -2.30220819, -0.102943242}

// gate32 is x·σ(−t·ln 2) = x/(1 + 2^t), t clamped to [−126, 128] (NaN:
// −126; x then makes the result NaN), 2^t by pow2F32: +Inf at 128, so
// −0 for a very negative x, and NaN for x = −Inf as the reference.
func gate32(x, t float32) float32 {
	if !(t > -126) {
		t = -126
	}
	if !(t < 128) {
		t = 128
	}
	return x / (pow2F32(t) + 1)
}

var actFast = [numActFuncs]func(float32) float32{silu32, gelu32, geluTanh32}

// ActArgs is an activation over rows: Y = f(A), or gated, Y = f(A)·B when
// B is set (A, B and Y all Rows × Cols; for a concatenated [a|b] row the
// caller views its two halves as A and B). Y may be the same memory as A
// or B (in place).
type ActArgs struct {
	Func    ActFunc
	A, Y    Matrix
	B       *Matrix
	Threads int
}

// ActRef is the reference: element loads, the float64 function.
func ActRef(a *ActArgs) {
	for r := 0; r < a.A.Rows; r++ {
		x := refRow(&a.A, r, 0, a.A.Cols)
		var g []float32
		if a.B != nil {
			g = refRow(a.B, r, 0, a.A.Cols)
		}
		for j, v := range x {
			y := actRef(a.Func, float64(v))
			if g != nil {
				y *= float64(g[j])
			}
			x[j] = float32(y)
		}
		refStore(&a.Y, r, 0, x)
	}
}

// ActFast is the fast path: row conversions, the float32 function, rows
// across the pool.
func ActFast(a *ActArgs) {
	if actFused(a, lightFusedK()) {
		return
	}
	st := actState{a: a, cv: lightCvt(), vk: lightVec(), n: a.A.Cols}
	forRowsOf(&actRows, a.A.Rows, st.n, a.Threads, 3*st.n, st, actRowsFn)
}

// actState is the state of actRows's row function.
type actState struct {
	a  *ActArgs
	cv *converters
	vk *lightKernels
	n  int
}

var actRows rowTasks[actState]

// actRowsFn is ActFast's row function for rows [lo, hi): a named function
// over copied state, so a call allocates no closure.
func actRowsFn(s *actState, lo, hi int, buf []float32) {
	a, cv, vk, n := s.a, s.cv, s.vk, s.n
	f := actFast[a.Func]
	xb, gb, ob := buf[:n], buf[n:2*n], buf[2*n:3*n]
	for r := lo; r < hi; r++ {
		x := loadRow(cv, &a.A, r, 0, n, xb)
		if a.Func == FnSiLU || a.Func == FnGELUTanh {
			var g []float32
			if a.B != nil {
				g = loadRow(cv, a.B, r, 0, n, gb)
			}
			if a.Func == FnSiLU {
				vecSilu(vk, ob[:len(x)], x, g)
			} else {
				vecGeluTanh(vk, ob[:len(x)], x, g)
			}
		} else if a.B != nil {
			g := loadRow(cv, a.B, r, 0, n, gb)
			g = g[:len(x)]
			for j, v := range x {
				ob[j] = f(v) * g[j]
			}
		} else {
			for j, v := range x {
				ob[j] = f(v)
			}
		}
		storeRow(cv, &a.Y, r, 0, ob)
	}
}

// EltOp is an element-wise binary op.
type EltOp uint8

const (
	// EltAdd is y = x + z.
	EltAdd EltOp = iota
	// EltMul is y = x · z.
	EltMul
	// EltScale is y = Alpha · x (no z).
	EltScale
	numEltOps
)

var eltNames = [numEltOps]string{"add", "mul", "scale"}

// String is the op's name.
func (o EltOp) String() string {
	if o < numEltOps {
		return eltNames[o]
	}
	return "EltOp(?)"
}

// Valid reports whether o is a defined op.
func (o EltOp) Valid() bool { return o < numEltOps }

// EltArgs is an element-wise op over rows: Y = X op Z, Z either Rows ×
// Cols or one row broadcast to every row (Z.Rows == 1), or Y = Alpha·X.
// Y may be the same memory as X or Z.
type EltArgs struct {
	Op      EltOp
	X, Y    Matrix
	Z       *Matrix
	Alpha   float32
	Threads int
}

func eltApply(op EltOp, x, z, alpha float32) float32 {
	switch op {
	case EltAdd:
		return x + z
	case EltMul:
		return x * z
	}
	return alpha * x
}

// EltRef is the reference (float32 arithmetic: each result is one
// correctly rounded operation, then rounded to Y's type).
func EltRef(a *EltArgs) {
	for r := 0; r < a.X.Rows; r++ {
		x := refRow(&a.X, r, 0, a.X.Cols)
		var z []float32
		if a.Z != nil {
			z = refRow(a.Z, min(r, a.Z.Rows-1), 0, a.X.Cols)
		}
		for j := range x {
			var zj float32
			if z != nil {
				zj = z[j]
			}
			x[j] = eltApply(a.Op, x[j], zj, a.Alpha)
		}
		refStore(&a.Y, r, 0, x)
	}
}

// EltFast is the fast path; it writes the same bytes as EltRef.
func EltFast(a *EltArgs) {
	n := a.X.Cols
	cv := lightCvt()
	var zrow []float32
	if a.Z != nil && a.Z.Rows == 1 && a.X.Rows > 1 {
		zrow = loadRow(cv, a.Z, 0, 0, n, make([]float32, n))
		zrow = append([]float32(nil), zrow...) // own copy: Y may be Z
	}
	forRowsOf(&eltRows, a.X.Rows, n, a.Threads, 3*n, eltState{a, cv, zrow, n}, func(st *eltState, lo, hi int, buf []float32) {
		a, cv, zrow, n := st.a, st.cv, st.zrow, st.n
		xb, zb, ob := buf[:n], buf[n:2*n], buf[2*n:3*n]
		for r := lo; r < hi; r++ {
			x := loadRow(cv, &a.X, r, 0, n, xb)
			ob := ob[:len(x)]
			switch {
			case a.Op == EltScale:
				s := a.Alpha
				for j, v := range x {
					ob[j] = s * v
				}
			default:
				z := zrow
				if z == nil {
					z = loadRow(cv, a.Z, min(r, a.Z.Rows-1), 0, n, zb)
				}
				z = z[:len(x)]
				if a.Op == EltAdd {
					for j, v := range x {
						ob[j] = v + z[j]
					}
				} else {
					for j, v := range x {
						ob[j] = v * z[j]
					}
				}
			}
			storeRow(cv, &a.Y, r, 0, ob)
		}
	})
}

// eltState is the state of eltRows's row function.
type eltState struct {
	a    *EltArgs
	cv   *converters
	zrow []float32
	n    int
}

var eltRows rowTasks[eltState]
