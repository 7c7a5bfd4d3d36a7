package fallback

import "math"

// PoolMode selects how Pool reduces a sequence's tokens.
type PoolMode uint8

const (
	// PoolMean averages the sequence's tokens.
	PoolMean PoolMode = iota
	// PoolCLS takes the sequence's first token.
	PoolCLS
	// PoolLast takes the sequence's last token.
	PoolLast
	numPoolModes
)

// Valid reports whether m is a defined mode.
func (m PoolMode) Valid() bool { return m < numPoolModes }

// PoolArgs pools the tokens of a varlen batch: X holds the tokens of every
// sequence one after another (sequence i is Lengths[i] rows, every length
// positive, summing to X.Rows), Y one row per sequence (len(Lengths) rows).
// Normalize divides each result by max(‖y‖₂, Eps).
type PoolArgs struct {
	Mode      PoolMode
	X, Y      Matrix
	Lengths   []int
	Normalize bool
	Eps       float32
	Threads   int
}

// L2NormArgs is y = x / max(‖x‖₂, Eps) per row; Y may be the same memory as X.
type L2NormArgs struct {
	X, Y    Matrix
	Eps     float32
	Threads int
}

// PoolRef is the reference: float64 sums and norms.
func PoolRef(a *PoolArgs) {
	start := 0
	n := a.X.Cols
	for s, l := range a.Lengths {
		acc := make([]float64, n)
		switch a.Mode {
		case PoolMean:
			for t := start; t < start+l; t++ {
				for j, v := range refRow(&a.X, t, 0, n) {
					acc[j] += float64(v)
				}
			}
			for j := range acc {
				acc[j] /= float64(l)
			}
		default:
			t := start
			if a.Mode == PoolLast {
				t = start + l - 1
			}
			for j, v := range refRow(&a.X, t, 0, n) {
				acc[j] = float64(v)
			}
		}
		out := make([]float32, n)
		scale := 1.0
		if a.Normalize {
			scale = 1 / math.Max(norm64(acc), float64(a.Eps))
		}
		for j := range out {
			out[j] = float32(acc[j] * scale)
		}
		refStore(&a.Y, s, 0, out)
		start += l
	}
}

func norm64(v []float64) float64 {
	var ss float64
	for _, x := range v {
		ss += x * x
	}
	return math.Sqrt(ss)
}

// L2NormRef is the reference.
func L2NormRef(a *L2NormArgs) {
	for r := 0; r < a.X.Rows; r++ {
		x := refRow(&a.X, r, 0, a.X.Cols)
		var ss float64
		for _, v := range x {
			ss += float64(v) * float64(v)
		}
		inv := 1 / math.Max(math.Sqrt(ss), float64(a.Eps))
		for j, v := range x {
			x[j] = float32(float64(v) * inv)
		}
		refStore(&a.Y, r, 0, x)
	}
}

// l2Scale returns 1/max(‖v‖, eps) in float32.
func l2Scale(vk *lightKernels, v []float32, eps float32) float32 {
	return float32(1 / math.Max(math.Sqrt(float64(vecSumSq(vk, v))), float64(eps)))
}

// L2NormFast is the fast path: rows converted once, rows across the pool.
func L2NormFast(a *L2NormArgs) {
	n := a.X.Cols
	cv, vk := lightCvt(), lightVec()
	forRows(a.X.Rows, n, a.Threads, 2*n, func(lo, hi int, buf []float32) {
		xb, ob := buf[:n], buf[n:2*n]
		for r := lo; r < hi; r++ {
			x := loadRow(cv, &a.X, r, 0, n, xb)
			o := ob[:len(x)]
			vecScale(vk, o, x, l2Scale(vk, x, a.Eps))
			storeRow(cv, &a.Y, r, 0, o)
		}
	})
}

// PoolFast is the fast path: float32 sums over converted rows, sequences
// across the pool (a sequence's rows are summed by one goroutine).
func PoolFast(a *PoolArgs) {
	n := a.X.Cols
	cv, vk := lightCvt(), lightVec()
	starts := make([]int, len(a.Lengths))
	for i, t := 1, 0; i < len(starts); i++ {
		t += a.Lengths[i-1]
		starts[i] = t
	}
	avg := max(1, a.X.Rows/max(1, len(a.Lengths)))
	forRows(len(a.Lengths), n*avg, a.Threads, 2*n, func(lo, hi int, buf []float32) {
		xb, acc := buf[:n], buf[n:2*n]
		for s := lo; s < hi; s++ {
			st, l := starts[s], a.Lengths[s]
			switch a.Mode {
			case PoolMean:
				clear(acc)
				for t := st; t < st+l; t++ {
					x := loadRow(cv, &a.X, t, 0, n, xb)
					x = x[:len(acc)]
					for j, v := range x {
						acc[j] += v
					}
				}
				inv := 1 / float32(l)
				for j := range acc {
					acc[j] *= inv
				}
			default:
				t := st
				if a.Mode == PoolLast {
					t = st + l - 1
				}
				copy(acc, loadRow(cv, &a.X, t, 0, n, xb))
			}
			if a.Normalize {
				vecScale(vk, acc, acc, l2Scale(vk, acc, a.Eps))
			}
			storeRow(cv, &a.Y, s, 0, acc)
		}
	})
}
