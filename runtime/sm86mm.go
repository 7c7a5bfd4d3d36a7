package runtime

import (
	"context"
	"fmt"
	"strings"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/kernels/ptx"
	"github.com/tcrt-go/tcrt/kernels/sm86mm"
	"github.com/tcrt-go/tcrt/tile"
)

// The hand-scheduled SM86/SM89 SASS matmul (kernels/sm86mm), registered
// for the CUDA backend by cuda_sm86mm.go (-tags cuda). This file holds its
// selection rule and launch plan, which build without cuda so that the
// CPU-side tests can check them. Nothing here has run on a GPU.
//
// Supports (sm86mmSupports) accepts a call when:
//   - A and B are both f16 or both bf16, either one transposed or not
//     (A stored M x K, or K x M with A.Trans; B stored K x N, or N x K with
//     B.Trans: the NN, TN, NT and TT kernels);
//   - D is f32, f16 or bf16; C (read when Beta != 0) has D's type; the
//     bias is nil or f32; no float8 scales;
//   - lda and ldb multiples of 8 and the A and B offsets multiples of 8
//     elements (the 16-byte LDGSTS copies); K a positive multiple of 8
//     when an operand is copied along K (A plain or B transposed: every
//     layout but TN, whose copies run along M and N and which takes any K);
//   - an operand copied along M or N (B plain, A transposed) has
//     roundUp(N, 8) (roundUp(M, 8)) readable elements in every stored row
//     (ld >= that, and the last row's read stays inside the buffer): a
//     copy that starts below N (M) reads up to 7 elements past it, which
//     reach only columns (rows) the kernel never stores;
//   - the element offsets the kernel forms in 32 bits fit: stored rows*ld
//     of A, B, C and D below 2^31.
//
// Tile rule (sm86mmPlan): M <= 64 takes the 64x128 small-M tile; else N
// <= 64 takes 128x64; else 128x128. Split-K: when the activation is none,
// D is f32, K >= 1024 and the tile grid fills fewer than half the device's
// SMs, K is cut into s = min(ceil(SMs / CTAs), K/256, 16) chunks of kc =
// roundUp(ceil(K/s), 32): the plain kernel computes the first chunk with
// beta*C and bias (so D needs no zeroing), then the split kernel's CTAs
// (grid z = the other chunks) add alpha times their partial products with
// RED.E.ADD.F32 (so the sum's order, and its last bits, vary from run to
// run). An activation cannot follow the reduction in-kernel, so calls with
// one are never split.

// sm86mmTiles are kernels/sm86mm's tiles by Tile value: TM, TN, threads,
// dynamic shared bytes (TestSM86MatMulTables checks them against the
// package).
var sm86mmTiles = [3]struct{ TM, TN, Threads, Shared int }{
	{128, 128, 256, 64 << 10},
	{128, 64, 128, 48 << 10},
	{64, 128, 128, 48 << 10},
}

// sm86mmPlanT is how one call runs.
type sm86mmPlanT struct {
	Tile   int // kernels/sm86mm Tile value
	Splits int // K chunks, 1 = no split
	KC     int // chunk length (split only)
}

func sm86mmPlan(a *MatMulArgs, sms int) sm86mmPlanT {
	p := sm86mmPlanT{Tile: 0, Splits: 1}
	switch {
	case a.M <= 64:
		p.Tile = 2
	case a.N <= 64:
		p.Tile = 1
	}
	t := sm86mmTiles[p.Tile]
	ctas := ((a.M + t.TM - 1) / t.TM) * ((a.N + t.TN - 1) / t.TN)
	_, _, td := a.DTypes()
	if a.Act == fallback.ActNone && td == tile.F32 && a.K >= 1024 && 2*ctas < sms {
		s := min((sms+ctas-1)/ctas, a.K/256, 16)
		if s > 1 {
			kc := ((a.K+s-1)/s + 31) / 32 * 32
			p.Splits, p.KC = (a.K+kc-1)/kc, kc
		}
	}
	return p
}

func sm86mmSupports(args any) error {
	a, ok := args.(*MatMulArgs)
	if !ok {
		return fmt.Errorf("arguments are %T, not *MatMulArgs", args)
	}
	ta, tb, td := a.DTypes()
	if ta != tb || (ta != tile.F16 && ta != tile.BF16) {
		return fmt.Errorf("needs A and B both f16 or both bf16, have %v and %v", ta, tb)
	}
	if td != tile.F32 && td != tile.F16 && td != tile.BF16 {
		return fmt.Errorf("output element type %v not supported (f32, f16, bf16)", td)
	}
	if a.Beta != 0 && a.C.Buf != nil && a.C.Buf.DType() != td {
		return fmt.Errorf("C must have D's element type %v, has %v", td, a.C.Buf.DType())
	}
	if a.Bias != nil && a.Bias.DType() != tile.F32 {
		return fmt.Errorf("bias must be f32, is %v", a.Bias.DType())
	}
	if a.ScaleA != nil || a.ScaleB != nil {
		return fmt.Errorf("float8 scales not supported")
	}
	if !a.Act.Valid() {
		return fmt.Errorf("activation %v not supported", a.Act)
	}
	if a.M < 1 || a.N < 1 || a.K < 1 || (a.K%8 != 0 && (!a.A.Trans || a.B.Trans)) {
		return fmt.Errorf("K=%d: needs a positive multiple of 8 (16-byte copies along K)", a.K)
	}
	if a.A.LD%8 != 0 || a.B.LD%8 != 0 || a.A.Offset%8 != 0 || a.B.Offset%8 != 0 {
		return fmt.Errorf("lda=%d ldb=%d offsets %d, %d: need multiples of 8 elements (16-byte copies)", a.A.LD, a.B.LD, a.A.Offset, a.B.Offset)
	}
	// operands copied along M or N: rows padded to 8 readable elements
	for _, o := range []struct {
		name, dim string
		m         Matrix
		ext       int
	}{{"A", "M", a.A, a.M}, {"B", "N", a.B, a.N}} {
		if (o.name == "A") != o.m.Trans {
			continue // copied along K
		}
		e8 := (o.ext + 7) / 8 * 8
		if o.m.LD < e8 {
			return fmt.Errorf("ld%s=%d: needs at least %s rounded up to 8 (%d)", strings.ToLower(o.name), o.m.LD, o.dim, e8)
		}
		for b := 0; b < a.Batch; b++ {
			if end := o.m.Offset + b*o.m.BatchStride + (o.m.Rows-1)*o.m.LD + e8; end > o.m.Buf.Len() {
				return fmt.Errorf("%s's last row needs %d readable elements (%s rounded up to 8); the buffer ends %d early", o.name, e8, o.dim, end-o.m.Buf.Len())
			}
		}
	}
	lim := 1 << 31
	if a.A.Rows*a.A.LD >= lim || a.B.Rows*a.B.LD >= lim || a.M*a.D.LD >= lim || (a.C.Buf != nil && a.M*a.C.LD >= lim) {
		return fmt.Errorf("matrices too large for the kernel's 32-bit element offsets")
	}
	return nil
}

// sm86mmKernel is the registry entry; module returns the embedded module
// (kernels/sm86mm.Module, from the cuda-tagged file) and name a kernel's
// symbol for (tile, input, output, split, A transposed, B transposed).
func sm86mmKernel(module func() *ptx.Module, name func(t int, in, out tile.DType, split, transA, transB bool) string) Kernel {
	return Kernel{
		Name:       "sass.matmul.sm86mm",
		Op:         OpMatMul,
		Arch:       Arch{ISA: ISASASS, MinSM: 86, MaxSM: 89, Module: module()},
		Preference: 200,
		Doc:        "hand-scheduled SASS (kernels/sm86mm): LDGSTS ring, LDSM, HMMA.16816.F32; 128x128 / 128x64 / 64x128 tiles, NN/NT/TN/TT, split-K (unverified on a GPU)",
		Supports:   sm86mmSupports,
		Launch: func(ctx context.Context, l *Launch) error {
			return sm86mmLaunch(l, module(), name)
		},
	}
}

func sm86mmLaunch(l *Launch, m *ptx.Module, name func(int, tile.DType, tile.DType, bool, bool, bool) string) error {
	a := l.Args.(*MatMulArgs)
	ta, _, td := a.DTypes()
	p := sm86mmPlan(a, l.Runtime.Device().SMs)
	t := sm86mmTiles[p.Tile]
	ptrOf := func(mx Matrix, b int) (uint64, error) {
		if mx.Buf == nil {
			return 0, nil
		}
		base, err := DevicePtr(mx.Buf)
		if err != nil {
			return 0, err
		}
		return base + uint64((mx.Offset+b*mx.BatchStride)*mx.Buf.DType().Size()), nil
	}
	var bias uint64
	if a.Bias != nil {
		var err error
		if bias, err = DevicePtr(a.Bias); err != nil {
			return err
		}
	}
	for b := 0; b < a.Batch; b++ {
		var ps [5]uint64
		for i, mx := range []Matrix{a.D, a.A, a.B, a.C} {
			v, err := ptrOf(mx, b)
			if err != nil {
				return err
			}
			ps[i] = v
		}
		beta, cp, ldc := a.Beta, ps[3], a.C.LD
		if a.C.Buf == nil {
			beta, cp, ldc = 0, 0, 0
		}
		params := func(K, kc, koff int, beta float32, cp, bias uint64) []uint64 {
			return []uint64{ptx.Ptr(ps[0]), ptx.Ptr(ps[1]), ptx.Ptr(ps[2]),
				ptx.U32(uint32(a.M)), ptx.U32(uint32(a.N)), ptx.U32(uint32(K)),
				ptx.U32(uint32(a.A.LD)), ptx.U32(uint32(a.B.LD)), ptx.U32(uint32(a.D.LD)),
				ptx.F32(a.Alpha), ptx.F32(beta), ptx.U32(uint32(ldc)), ptx.U32(uint32(a.Act)),
				ptx.Ptr(cp), ptx.Ptr(bias), ptx.U32(uint32(kc)), ptx.U32(uint32(koff))}
		}
		grid := [3]int{(a.N + t.TN - 1) / t.TN, (a.M + t.TM - 1) / t.TM, 1}
		k0 := a.K
		if p.Splits > 1 {
			k0 = p.KC
		}
		g := &GPULaunch{Module: m, Func: name(p.Tile, ta, td, false, a.A.Trans, a.B.Trans), Grid: grid, Block: [3]int{t.Threads},
			SharedBytes: t.Shared, Params: params(k0, 0, 0, beta, cp, bias)}
		if err := LaunchGPU(l.Stream, g); err != nil {
			return err
		}
		if p.Splits > 1 {
			grid[2] = p.Splits - 1
			g := &GPULaunch{Module: m, Func: name(p.Tile, ta, td, true, a.A.Trans, a.B.Trans), Grid: grid, Block: [3]int{t.Threads},
				SharedBytes: t.Shared, Params: params(a.K, p.KC, p.KC, 0, 0, 0)}
			if err := LaunchGPU(l.Stream, g); err != nil {
				return err
			}
		}
	}
	return nil
}

// Registers the hand-scheduled SM86/SM89 matmul (rule and plan in
// sm86mm.go). Unverified on a GPU: no run has loaded these cubins.
func init() {
	Register(sm86mmKernel(sm86mm.Module, sm86mmName))
}

// sm86mmName is the kernel symbol for a tile, input and output type and
// operand layout.
func sm86mmName(t int, in, out tile.DType, split, transA, transB bool) string {
	return sm86mmConfig(t, in, out, split, transA, transB).Name()
}

func sm86mmConfig(t int, in, out tile.DType, split, transA, transB bool) sm86mm.Config {
	c := sm86mm.Config{Tile: sm86mm.Tile(t), SplitK: split, TransA: transA, TransB: transB}
	if in == tile.BF16 {
		c.In = sm86mm.BF16
	}
	switch out {
	case tile.F16:
		c.Out = sm86mm.OutF16
	case tile.BF16:
		c.Out = sm86mm.OutBF16
	}
	return c
}
