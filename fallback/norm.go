package fallback

import "math"

// NormKind selects the normalisation of NormArgs.
type NormKind uint8

const (
	// NormRMS is y = x / sqrt(mean(x²) + eps) · w.
	NormRMS NormKind = iota
	// NormLayer is y = (x − mean(x)) / sqrt(var(x) + eps) · w + b, with the
	// biased variance.
	NormLayer
)

// NormArgs is a row-wise normalisation over host memory: for each row r
// of X (Rows × Cols),
//
//	v  = X[r] + Residual[r]   when Residual is set (and Residual[r] = v, rounded to its type)
//	v  = X[r]                 otherwise
//	Y[r] = norm(v) · w (+ b)
//
// With a residual, the norm is taken of the residual as stored (rounded),
// so the fused op equals an add followed by the unfused norm. Weight and
// Bias hold Cols values (nil: weight 1, bias 0); Gemma uses (1 + w) for
// w. Y may be the same memory as X (in place); Residual may not overlap
// either.
type NormArgs struct {
	Kind     NormKind
	X, Y     Matrix
	Residual *Matrix
	Weight   []float32
	Bias     []float32
	Eps      float32
	Gemma    bool
	Threads  int
}

// scaleOf returns w_j as the norm multiplies by it.
func (a *NormArgs) scaleOf(j int) float32 {
	w := float32(1)
	if a.Weight != nil {
		w = a.Weight[j]
	}
	if a.Gemma {
		w++
	}
	return w
}

// NormRef is the reference: element loads, float64 sums, two passes for
// the variance.
func NormRef(a *NormArgs) {
	n := a.X.Cols
	for r := 0; r < a.X.Rows; r++ {
		v := refRow(&a.X, r, 0, n)
		if a.Residual != nil {
			res := refRow(a.Residual, r, 0, n)
			for j := range v {
				v[j] += res[j]
			}
			refStore(a.Residual, r, 0, v)
			v = refRow(a.Residual, r, 0, n)
		}
		var mean float64
		if a.Kind == NormLayer {
			for _, x := range v {
				mean += float64(x)
			}
			mean /= float64(n)
		}
		var ss float64
		for _, x := range v {
			d := float64(x) - mean
			ss += d * d
		}
		inv := 1 / math.Sqrt(ss/float64(n)+float64(a.Eps))
		out := make([]float32, n)
		for j, x := range v {
			y := (float64(x) - mean) * inv * float64(a.scaleOf(j))
			if a.Bias != nil {
				y += float64(a.Bias[j])
			}
			out[j] = float32(y)
		}
		refStore(&a.Y, r, 0, out)
	}
}

// NormFast is the fast path: each row is loaded once (converted to float32
// in a scratch row when it is 16-bit), added to the residual and stored
// back, reduced, scaled and stored, while it is in L1/L2; rows are split
// across the pool.
func NormFast(a *NormArgs) {
	n := a.X.Cols
	cv, vk := lightCvt(), lightVec()
	// The effective weight row, (1 + w) for Gemma, and bias, once.
	wp := getFloats(n)
	defer putFloats(wp)
	w := *wp
	for j := range w {
		w[j] = a.scaleOf(j)
	}
	if normFused(a, lightFusedK(), w) {
		return
	}
	var ones []float32
	if a.Kind == NormLayer {
		op := getFloats(n)
		defer putFloats(op)
		ones = *op
		for j := range ones {
			ones[j] = 1
		}
	}
	zeros := zeroRow(n)
	forRowsOf(&normRows, a.X.Rows, n, a.Threads, 3*n, normState{a, cv, vk, w, ones, zeros, n}, func(st *normState, lo, hi int, buf []float32) {
		a, cv, vk, w, ones, zeros, n := st.a, st.cv, st.vk, st.w, st.ones, st.zeros, st.n
		xb, rb, ob := buf[:n], buf[n:2*n], buf[2*n:3*n]
		for r := lo; r < hi; r++ {
			v := loadRow(cv, &a.X, r, 0, n, xb)
			if a.Residual != nil {
				res := loadRow(cv, a.Residual, r, 0, n, rb)
				// res may be the residual's own f32 row: the sum goes there.
				res = res[:len(v)]
				for j := range v {
					res[j] += v[j]
				}
				storeRow(cv, a.Residual, r, 0, res)
				v = loadRow(cv, a.Residual, r, 0, n, rb) // the stored (rounded) values
			}
			normRow(a, vk, v, w, ob, ones, zeros)
			storeRow(cv, &a.Y, r, 0, ob[:n])
		}
	})
}

// normRow writes norm(v)·w (+ b) into out (which may not be v); ones
// and zeros are rows of 1 and 0 at least len(v) long.
func normRow(a *NormArgs, vk *lightKernels, v, w, out, ones, zeros []float32) {
	n := len(v)
	out, w = out[:n], w[:n]
	var mean, ss float32
	if a.Kind == NormLayer {
		mean = vecSum(vk, v) / float32(n)
		vecAffine(vk, out, v, ones, nil, mean, 1, zeros) // v − mean
		ss = vecSumSq(vk, out)
	} else {
		ss = vecSumSq(vk, v)
	}
	inv := float32(1 / math.Sqrt(float64(ss)/float64(n)+float64(a.Eps)))
	vecAffine(vk, out, v, w, a.Bias, mean, inv, zeros)
}

// normState is the state of normRows's row function.
type normState struct {
	a              *NormArgs
	cv             *converters
	vk             *lightKernels
	w, ones, zeros []float32
	n              int
}

var normRows rowTasks[normState]
