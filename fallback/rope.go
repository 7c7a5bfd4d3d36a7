package fallback

import (
	"math"

	"github.com/tcrt-go/tcrt/tile"
)

// RoPEScalingKind selects how rotary frequencies are stretched for
// contexts longer than the model was trained on.
type RoPEScalingKind uint8

const (
	// RoPENoScaling uses inv_freq_i = θ^(−2i/d).
	RoPENoScaling RoPEScalingKind = iota
	// RoPELinear divides every frequency by Factor (position interpolation).
	RoPELinear
	// RoPELlama3 is Llama 3.1's rule: wavelengths below
	// OriginalMaxPosition/HighFreqFactor keep their frequency, those above
	// OriginalMaxPosition/LowFreqFactor are divided by Factor, and those
	// between blend the two with smooth = (OriginalMaxPosition/λ −
	// LowFreqFactor)/(HighFreqFactor − LowFreqFactor).
	RoPELlama3
	// RoPEYaRN blends interpolated (÷Factor) and original frequencies with
	// a linear ramp between the dimensions whose wavelengths complete
	// BetaFast and BetaSlow turns in OriginalMaxPosition, and multiplies
	// cos and sin by the attention factor 0.1·ln(Factor) + 1.
	RoPEYaRN
	numRoPEScalings
)

// Valid reports whether k is a defined scaling.
func (k RoPEScalingKind) Valid() bool { return k < numRoPEScalings }

// RoPEScaling is the frequency scaling of a rotary embedding.
type RoPEScaling struct {
	Kind                          RoPEScalingKind
	Factor                        float64
	LowFreqFactor, HighFreqFactor float64 // Llama 3.1
	OriginalMaxPosition           int     // Llama 3.1 and YaRN
	BetaFast, BetaSlow            float64 // YaRN (0: 32 and 1)
}

// RoPEFreqs returns the rotDim/2 inverse frequencies of a rotary
// embedding of base theta and the factor cos and sin are multiplied by
// (1 but for YaRN); RoPETableOf keeps them per parameter set.
func RoPEFreqs(theta float64, rotDim int, s RoPEScaling) (inv []float64, mscale float64) {
	inv = make([]float64, max(rotDim/2, 0))
	for i := range inv {
		inv[i] = math.Pow(theta, -float64(2*i)/float64(rotDim))
	}
	mscale = 1
	switch s.Kind {
	case RoPELinear:
		for i := range inv {
			inv[i] /= s.Factor
		}
	case RoPELlama3:
		orig := float64(s.OriginalMaxPosition)
		lowWave, highWave := orig/s.LowFreqFactor, orig/s.HighFreqFactor
		for i, f := range inv {
			wave := 2 * math.Pi / f
			switch {
			case wave < highWave:
			case wave > lowWave:
				inv[i] = f / s.Factor
			default:
				smooth := (orig/wave - s.LowFreqFactor) / (s.HighFreqFactor - s.LowFreqFactor)
				inv[i] = (1-smooth)*f/s.Factor + smooth*f
			}
		}
	case RoPEYaRN:
		bf, bs := s.BetaFast, s.BetaSlow
		if bf == 0 {
			bf = 32
		}
		if bs == 0 {
			bs = 1
		}
		orig := float64(s.OriginalMaxPosition)
		// The dimension index whose wavelength turns `turns` times in orig.
		dimOf := func(turns float64) float64 {
			return float64(rotDim) * math.Log(orig/(turns*2*math.Pi)) / (2 * math.Log(theta))
		}
		lo := max(math.Floor(dimOf(bf)), 0)
		hi := min(math.Ceil(dimOf(bs)), float64(rotDim-1))
		if hi == lo {
			hi += 0.001
		}
		for i, f := range inv {
			ramp := min(max((float64(i)-lo)/(hi-lo), 0), 1)
			extrap := 1 - ramp // 1: keep the original frequency
			inv[i] = f/s.Factor*(1-extrap) + f*extrap
		}
		if s.Factor > 1 {
			mscale = 0.1*math.Log(s.Factor) + 1
		}
	}
	return inv, mscale
}

// RoPEArgs is a rotary embedding of Q (and K, when set) in place or into
// QOut (KOut): rows are tokens, each HeadsQ (HeadsK) heads of HeadDim
// elements. The first RotaryDim elements of each head are rotated by the
// token's position Pos[t] times InvFreq; the rest are copied. NeoX layout
// pairs element i with i + RotaryDim/2; Interleaved (GPT-J) pairs 2i with
// 2i+1. cos and sin are computed in float64 from float64(pos)·inv_freq,
// multiplied by MScale and rounded to float32; the rotation is float32.
// Every position must be in [0, MaxPosition): the kernels check them all
// before writing anything.
type RoPEArgs struct {
	Q, QOut            Matrix
	K, KOut            *Matrix
	HeadsQ, HeadsK     int
	HeadDim, RotaryDim int
	Interleaved        bool
	Pos                []int32
	MaxPosition        int
	InvFreq            []float64
	MScale             float64
	// Table, when set, is InvFreq's and MScale's cached table
	// (RoPETableOf): the fast path takes cos and sin from it, the
	// reference computes its own.
	Table   *RoPETable
	Threads int
}

// CheckPositions returns an error wrapping tile.ErrBounds if a position
// is outside [0, max).
func CheckPositions(op string, pos []int32, maxPos int) error {
	for t, p := range pos {
		if p < 0 || int(p) >= maxPos {
			return tile.Errorf(tile.ErrBounds, op, "Positions", "token %d has position %d, outside [0, %d)", t, p, maxPos)
		}
	}
	return nil
}

// ropeCosSin fills c and s with the token's cos and sin.
func (a *RoPEArgs) ropeCosSin(pos int32, c, s []float32) {
	ropeCosSinInto(a.InvFreq, a.MScale, pos, c, s)
}

// ropeCosSinInto fills c and s with position pos's cos and sin: the one
// function behind every cos/sin value, cached or not.
func ropeCosSinInto(inv []float64, mscale float64, pos int32, c, s []float32) {
	for i, f := range inv {
		sn, cs := math.Sincos(float64(pos) * f)
		c[i], s[i] = float32(cs*mscale), float32(sn*mscale)
	}
}

// cosSin returns the token's cos and sin: from Table when it is set, else
// computed into c and s.
func (a *RoPEArgs) cosSin(pos int32, c, s []float32) ([]float32, []float32) {
	if a.Table != nil {
		return a.Table.cosSin(pos, c, s)
	}
	a.ropeCosSin(pos, c, s)
	return c, s
}

// ropePair returns the indices of the two elements of pair i in a head.
func (a *RoPEArgs) ropePair(i int) (int, int) {
	if a.Interleaved {
		return 2 * i, 2*i + 1
	}
	return i, i + a.RotaryDim/2
}

// RoPERef is the reference: element loads and stores, pair by pair.
func RoPERef(a *RoPEArgs) error {
	if err := CheckPositions("rope", a.Pos, a.MaxPosition); err != nil {
		return err
	}
	half := a.RotaryDim / 2
	c, s := make([]float32, half), make([]float32, half)
	do := func(x, y *Matrix, heads int) {
		for t := 0; t < x.Rows; t++ {
			a.ropeCosSin(a.Pos[t], c, s)
			for h := 0; h < heads; h++ {
				row := refRow(x, t, h*a.HeadDim, (h+1)*a.HeadDim)
				out := append([]float32(nil), row...)
				for i := 0; i < half; i++ {
					i0, i1 := a.ropePair(i)
					x0, x1 := row[i0], row[i1]
					out[i0] = x0*c[i] - x1*s[i]
					out[i1] = x1*c[i] + x0*s[i]
				}
				refStore(y, t, h*a.HeadDim, out)
			}
		}
	}
	do(&a.Q, &a.QOut, a.HeadsQ)
	if a.K != nil {
		do(a.K, a.KOut, a.HeadsK)
	}
	return nil
}

// RoPEFast is the fast path: cos and sin once per token for all heads of q
// and k, whole rows converted, tokens across the pool. It writes what
// RoPERef writes.
func RoPEFast(a *RoPEArgs) error {
	if err := CheckPositions("rope", a.Pos, a.MaxPosition); err != nil {
		return err
	}
	cv, vk, fk := lightCvt(), lightVec(), lightFusedK()
	half := a.RotaryDim / 2
	nq := a.Q.Cols
	nk := 0
	if a.K != nil {
		nk = a.K.Cols
	}
	n := max(nq, nk)
	forRowsOf(&ropeRows, a.Q.Rows, nq+nk, a.Threads, 2*n+2*half, ropeState{a, cv, vk, fk, half, n}, func(st *ropeState, lo, hi int, buf []float32) {
		a, cv, vk, fk, half, n := st.a, st.cv, st.vk, st.fk, st.half, st.n
		xb, ob := buf[:n], buf[n:2*n]
		c, s := buf[2*n:2*n+half], buf[2*n+half:2*n+2*half]
		for t := lo; t < hi; t++ {
			c, s := a.cosSin(a.Pos[t], c, s)
			if !a.rotateFused(fk, &a.Q, &a.QOut, t, a.HeadsQ, c, s) {
				a.rotateRow(cv, vk, &a.Q, &a.QOut, t, a.HeadsQ, c, s, xb, ob)
			}
			if a.K != nil && !a.rotateFused(fk, a.K, a.KOut, t, a.HeadsK, c, s) {
				a.rotateRow(cv, vk, a.K, a.KOut, t, a.HeadsK, c, s, xb, ob)
			}
		}
	})
	return nil
}

func (a *RoPEArgs) rotateRow(cv *converters, vk *lightKernels, x, y *Matrix, t, heads int, c, s, xb, ob []float32) {
	n := heads * a.HeadDim
	row := loadRow(cv, x, t, 0, n, xb)
	out := ob[:n]
	copy(out, row)
	half := a.RotaryDim / 2
	c, s = c[:half], s[:half]
	for h := 0; h < heads; h++ {
		hx := row[h*a.HeadDim : (h+1)*a.HeadDim]
		ho := out[h*a.HeadDim : (h+1)*a.HeadDim]
		if a.Interleaved {
			for i := range c {
				x0, x1 := hx[2*i], hx[2*i+1]
				ho[2*i] = x0*c[i] - x1*s[i]
				ho[2*i+1] = x1*c[i] + x0*s[i]
			}
			continue
		}
		vecRot(vk, ho[:half], ho[half:2*half], hx[:half], hx[half:2*half], c, s)
	}
	storeRow(cv, y, t, 0, out)
}

// RoPECosSin returns the cos and sin the kernels use, per token: RotaryDim/2
// cos values, then RotaryDim/2 sin values (for GPU kernels, which rotate
// with the host's table and so write the CPU kernels' bits).
func RoPECosSin(a *RoPEArgs) []float32 {
	half := a.RotaryDim / 2
	out := make([]float32, len(a.Pos)*2*half)
	for t, p := range a.Pos {
		row := out[t*2*half : (t+1)*2*half]
		c, s := a.cosSin(p, row[:half], row[half:])
		copy(row[:half], c) // no-ops where they are row's own halves
		copy(row[half:], s)
	}
	return out
}

// ropeState is the state of ropeRows's row function.
type ropeState struct {
	a       *RoPEArgs
	cv      *converters
	vk      *lightKernels
	fk      *lightFused
	half, n int
}

var ropeRows rowTasks[ropeState]
