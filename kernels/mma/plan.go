package mma

import (
	"fmt"
	"math"
	"slices"

	"github.com/tcrt-go/tcrt/kernels/ptx"
	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/tile"
)

// Device is what a launch plan needs to know of the GPU.
type Device struct {
	// SM is the compute capability, as 80 for 8.0.
	SM int
	// SMs is the multiprocessor count.
	SMs int
	// SharedOptin is the opt-in dynamic shared memory limit per block in
	// bytes; 0 takes SharedOptin(SM).
	SharedOptin int
}

// sharedOptin is cudaDevAttrMaxSharedMemoryPerBlockOptin by compute
// capability (the CUDA programming guide's table), for the GPUs this
// module targets; later ones take the last entry of their major version.
var sharedOptin = map[int]int{
	80: 163 << 10, 86: 99 << 10, 87: 163 << 10, 89: 99 << 10, 90: 227 << 10,
	100: 227 << 10, 120: 99 << 10,
}

// SharedOptin returns the opt-in shared memory per block of compute
// capability sm (48 KiB when unknown).
func SharedOptin(sm int) int {
	if v, ok := sharedOptin[sm]; ok {
		return v
	}
	best := 0
	for s := range sharedOptin {
		if s/10 == sm/10 && s <= sm && s > best {
			best = s
		}
	}
	if best == 0 {
		return 48 << 10
	}
	return sharedOptin[best]
}

// MatMul is one matmul for a plan, in plain values:
//
//	D = act(Alpha·op(A)·op(B) + Beta·C + Bias)
//
// A is M x K row-major (LDA elements a row) or, with TransA, K x M; B is
// K x N or, with TransB, N x K; C and D are M x N (LDC, LDD). The addresses
// are device addresses of element (0, 0); C is read only when Beta != 0
// (0: none); Bias is 0 or N f32 values.
type MatMul struct {
	M, N, K            int
	In                 tile.DType // one of Inputs
	Out                tile.DType // one of Outputs
	TransA, TransB     bool
	A, B, C, D, Bias   uint64
	LDA, LDB, LDC, LDD int
	Alpha, Beta        float32
	Act                tile.Activation
	// ScaleA and ScaleB (float8 inputs only; 0: none) are device addresses
	// of f32 scales: one value (mode ScaleTensor) or one a row of op(A) /
	// column of op(B) (ScaleVector). D = act(alpha·sA·sB·Σ + …).
	ScaleA, ScaleB         uint64
	ScaleAMode, ScaleBMode ScaleMode
}

// ScaleMode says how a float8 operand's scale is given.
type ScaleMode int

// Scale modes.
const (
	ScaleNone ScaleMode = iota
	ScaleTensor
	ScaleVector
)

// Launch is one kernel launch of a plan: the device seam's launch
// description, with Params in ParamNames order (AttnParamNames,
// CombineParamNames for the attention kernels). Plans leave Module nil;
// the caller launches in this package's Module.
type Launch = backend.Launch

// Plan is how a matmul runs: the tile, the K split and the launches (in
// stream order).
type Plan struct {
	Tile     Tile
	Splits   int // K chunks; 1 = no split
	KC       int // chunk length when split
	Launches []Launch
}

// ChooseTile is the tile rule. M <= 64 takes 64x128 (small M, decode
// shapes); else N <= 64 takes 128x64; else 256x128 when the device's
// opt-in shared memory holds its 144 KiB (sm_80, sm_87, sm_90 and later
// data-centre parts, not sm_86/sm_89) and its grid still fills every SM at
// least once; else 128x128.
func ChooseTile(dev Device, m, n int) Tile {
	switch {
	case m <= 64:
		return T64x128
	case n <= 64:
		return T128x64
	}
	big := T256x128.Geometry()
	if big.SharedBytes() <= dev.optin() && ceilDiv(m, big.TM)*ceilDiv(n, big.TN) >= dev.SMs {
		return T256x128
	}
	return T128x128
}

func (d Device) optin() int {
	if d.SharedOptin > 0 {
		return d.SharedOptin
	}
	return SharedOptin(d.SM)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// ChooseSplit is the split-K rule: when the activation is none, D is f32,
// K >= 1024 and the tile grid fills fewer than half the SMs, K is cut into
// s = min(ceil(SMs/CTAs), K/256, 16) chunks of kc = roundUp(ceil(K/s), BK)
// (so every chunk but the last starts on a stage boundary). It returns
// (1, 0) for no split, and for a nil p, an unknown tile or extents that
// are not positive.
func ChooseSplit(dev Device, p *MatMul, t Tile) (splits, kc int) {
	g := t.Geometry()
	if p == nil || g.TM == 0 || p.M < 1 || p.N < 1 {
		return 1, 0
	}
	ctas := ceilDiv(p.M, g.TM) * ceilDiv(p.N, g.TN)
	if p.Act != tile.ActNone || p.Out != tile.F32 || p.K < 1024 || 2*ctas >= dev.SMs {
		return 1, 0
	}
	s := min(ceilDiv(dev.SMs, ctas), p.K/256, 16)
	if s <= 1 {
		return 1, 0
	}
	kc = ceilDiv(ceilDiv(p.K, s), BK) * BK
	return ceilDiv(p.K, kc), kc
}

// Check returns an error wrapping tile.ErrUnsupported when the kernels
// cannot run p: A and B need 16-byte aligned addresses and lda, ldb
// multiples of 8 (the 16-byte cp.async copies); M, N, K positive; the
// element offsets the kernels form in 32 bits (row·ld + column, rows up to
// one tile past the extent) below 2^31; C and D element-aligned; a known
// activation. A nil p is an error wrapping tile.ErrArgument.
func Check(p *MatMul) error {
	if p == nil {
		return fmt.Errorf("tcrt: mma matmul: nil problem: %w", tile.ErrArgument)
	}
	bad := func(f string, a ...any) error {
		return fmt.Errorf("tcrt: mma matmul: %s: %w", fmt.Sprintf(f, a...), tile.ErrUnsupported)
	}
	if p.M < 1 || p.N < 1 || p.K < 1 {
		return bad("M=%d N=%d K=%d: need positive extents", p.M, p.N, p.K)
	}
	if p.LDA%8 != 0 || p.LDB%8 != 0 || p.A%16 != 0 || p.B%16 != 0 {
		return bad("lda=%d ldb=%d, A at %#x, B at %#x: need multiples of 8 elements and 16-byte aligned operands", p.LDA, p.LDB, p.A, p.B)
	}
	if !slices.Contains(Inputs(), p.In) || OutCode(p.Out) < 0 {
		return bad("element types %v -> %v", p.In, p.Out)
	}
	for _, s := range []struct {
		m    ScaleMode
		addr uint64
	}{{p.ScaleAMode, p.ScaleA}, {p.ScaleBMode, p.ScaleB}} {
		if s.m < ScaleNone || s.m > ScaleVector || (s.m != ScaleNone && (!tile.IsFloat8(p.In) || s.addr == 0 || s.addr%4 != 0)) {
			return bad("scale mode %d at %#x: scales need float8 inputs and a 4-byte aligned address", s.m, s.addr)
		}
	}
	if !p.Act.Valid() {
		return bad("activation %v", p.Act)
	}
	os := uint64(p.Out.Size())
	if p.D%os != 0 || p.C%os != 0 {
		return bad("C at %#x, D at %#x: need %d-byte alignment", p.C, p.D, os)
	}
	ar, br := p.M, p.K
	if p.TransA {
		ar = p.K
	}
	if p.TransB {
		br = p.N
	}
	const pad = 256 // rows past the extent a copy may address (largest tile)
	if (ar+pad)*p.LDA >= math.MaxInt32 || (br+pad)*p.LDB >= math.MaxInt32 || p.M*p.LDD >= math.MaxInt32 || p.M*p.LDC >= math.MaxInt32 {
		return bad("matrices too large for the kernels' 32-bit element offsets")
	}
	return nil
}

// PlanMatMul returns the launches that compute p on dev: the tile of
// ChooseTile, the split of ChooseSplit (two launches: the first K chunk
// with the full epilogue, then the other chunks adding alpha times their
// products with red.global.add.f32, so a split sum's rounding order varies
// from run to run), grid (N tiles, M tiles, chunks), the tile's block and
// shared bytes, and the parameters. The error wraps tile.ErrUnsupported
// (Check, or a device without the shared memory of every tile).
func PlanMatMul(dev Device, p MatMul) (Plan, error) {
	if err := Check(&p); err != nil {
		return Plan{}, err
	}
	if dev.SM < PTXTarget {
		return Plan{}, fmt.Errorf("tcrt: mma matmul: sm_%d: needs sm_%d or newer: %w", dev.SM, PTXTarget, tile.ErrUnsupported)
	}
	t := ChooseTile(dev, p.M, p.N)
	g := t.Geometry()
	if g.SharedBytes() > dev.optin() {
		return Plan{}, fmt.Errorf("tcrt: mma matmul: tile %s needs %d bytes of shared memory, sm_%d allows %d: %w", t, g.SharedBytes(), dev.SM, dev.optin(), tile.ErrUnsupported)
	}
	splits, kc := ChooseSplit(dev, &p, t)
	c := Config{Tile: t, In: p.In, TransA: p.TransA, TransB: p.TransB}
	beta, cp, ldc := p.Beta, p.C, p.LDC
	if beta == 0 || cp == 0 {
		beta, cp, ldc = 0, 0, 0
	}
	params := func(k, kc, koff int, beta float32, cp, bias uint64, ldc int) []uint64 {
		return []uint64{ptx.Ptr(p.D), ptx.Ptr(p.A), ptx.Ptr(p.B),
			ptx.U32(uint32(p.M)), ptx.U32(uint32(p.N)), ptx.U32(uint32(k)),
			ptx.U32(uint32(p.LDA)), ptx.U32(uint32(p.LDB)), ptx.U32(uint32(p.LDD)),
			ptx.F32(p.Alpha), ptx.F32(beta), ptx.U32(uint32(ldc)), ptx.U32(uint32(p.Act)),
			ptx.Ptr(cp), ptx.Ptr(bias), ptx.U32(uint32(kc)), ptx.U32(uint32(koff)), ptx.U32(uint32(OutCode(p.Out))),
			ptx.Ptr(p.ScaleA), ptx.Ptr(p.ScaleB), ptx.U32(uint32(p.ScaleAMode) | uint32(p.ScaleBMode)<<2)}
	}
	grid := [3]int{ceilDiv(p.N, g.TN), ceilDiv(p.M, g.TM), 1}
	block := [3]int{g.Threads(), 1, 1}
	pl := Plan{Tile: t, Splits: splits, KC: kc}
	k0 := p.K
	if splits > 1 {
		k0 = kc
	}
	pl.Launches = append(pl.Launches, Launch{Func: c.Name(), Grid: grid, Block: block, SharedBytes: g.SharedBytes(),
		Params: params(k0, 0, 0, beta, cp, p.Bias, ldc)})
	if splits > 1 {
		grid[2] = splits - 1
		pl.Launches = append(pl.Launches, Launch{Func: c.Name(), Grid: grid, Block: block, SharedBytes: g.SharedBytes(),
			Params: params(p.K, kc, kc, 0, 0, 0, 0)})
	}
	return pl, nil
}
