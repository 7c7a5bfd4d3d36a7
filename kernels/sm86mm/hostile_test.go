package sm86mm

import (
	"math"
	"testing"
)

// TestHostilePlan: Choose, Plan and Geometry.Grid answer, without
// panicking, for extents and split counts that are zero, negative or huge
// and device SM counts below one (the engine plans only what its Supports
// rule accepts; a caller of this package may not).
func TestHostilePlan(t *testing.T) {
	dims := []int{math.MinInt, -1, 0, 1, 1000, 1 << 40}
	for _, sms := range []int{-1, 0, 1, 84} {
		for _, m := range dims {
			for _, k := range dims {
				_ = Choose(m, m, k, sms, true)
				for _, s := range []int{-1, 0, 1, 2, 17, math.MaxInt} {
					info, ls := Plan(Problem{M: m, N: m, K: k, Splits: s}, sms)
					if info.Splits < 1 || len(ls) == 0 {
						t.Errorf("Plan(M=N=%d, K=%d, splits %d, %d SMs) = %+v, %d launches", m, k, s, sms, info, len(ls))
					}
				}
			}
		}
	}
	if g := (Geometry{}).Grid(10, 10, 1); g != [3]int{} {
		t.Errorf("the zero Geometry's grid is %v", g)
	}
}
