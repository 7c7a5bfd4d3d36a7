package fallback

import (
	"math"
)

// SoftmaxArgs is a softmax over the last dimension of X (Rows × Cols),
// of the logits divided by Temperature (> 0), into Y (which may be the same
// memory as X):
//
//	y_j = e^{(x_j − m)/T} / Σ_k e^{(x_k − m)/T},  m = max_k x_k
//
// or, with Log, y_j = (x_j − m)/T − ln Σ_k e^{(x_k − m)/T}. A row holding a
// NaN gives NaN; a row whose maximum is +Inf gives NaN (Inf − Inf); a row
// of −Inf only gives NaN (0/0) or −Inf − ln 0 = NaN for log-softmax.
type SoftmaxArgs struct {
	X, Y        Matrix
	Temperature float32
	Log         bool
	Threads     int
}

// SoftmaxRef is the reference: float64 exponentials and sums.
func SoftmaxRef(a *SoftmaxArgs) {
	inv := 1 / float64(a.Temperature)
	for r := 0; r < a.X.Rows; r++ {
		x := refRow(&a.X, r, 0, a.X.Cols)
		m := math.Inf(-1)
		for _, v := range x {
			if float64(v) > m || v != v {
				m = float64(v)
			}
			if v != v {
				break
			}
		}
		var s float64
		for _, v := range x {
			s += math.Exp((float64(v) - m) * inv)
		}
		for j, v := range x {
			d := (float64(v) - m) * inv
			if a.Log {
				x[j] = float32(d - math.Log(s))
			} else {
				x[j] = float32(math.Exp(d) / s)
			}
		}
		refStore(&a.Y, r, 0, x)
	}
}

// SoftmaxFast is the fast path: one pass for the maximum, one computing
// and storing e^{(x−m)/T} (ExpF32) while summing it, one scaling, on a
// float32 row in cache; rows across the pool.
func SoftmaxFast(a *SoftmaxArgs) {
	if softmaxFused(a, lightFusedK()) {
		return
	}
	n := a.X.Cols
	cv, vk := lightCvt(), lightVec()
	inv := 1 / a.Temperature
	forRows(a.X.Rows, n, a.Threads, 2*n, func(lo, hi int, buf []float32) {
		xb, eb := buf[:n], buf[n:2*n]
		for r := lo; r < hi; r++ {
			x := loadRow(cv, &a.X, r, 0, n, xb)
			// A NaN in the row makes its exponential, so the sum and every
			// output, NaN: the maximum may skip it.
			m := vecMax(vk, x)
			e := eb[:len(x)]
			s := vecExpSum(vk, e, x, m, inv)
			if a.Log {
				// The log of the sum is an absolute error of the output:
				// the sum in float64 keeps it at the float32 rounding.
				var s64 float64
				for _, v := range e {
					s64 += float64(v)
				}
				ls := float32(math.Log(s64))
				for j, v := range x {
					e[j] = (v-m)*inv - ls
				}
			} else {
				vecScale(vk, e, e, 1/s)
			}
			storeRow(cv, &a.Y, r, 0, e)
		}
	})
}
