package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/tcrt-go/tcrt/kernels/sm86mm"
	"github.com/tcrt-go/tcrt/tile"
)

// The hand-scheduled SM86/SM89 SASS matmul (kernels/sm86mm), registered
// for every SM86/SM89 device, real (CUDA) or simulated. This file holds its
// selection rule and turns a call into kernels/sm86mm's Problem. Nothing
// here has run on a GPU.
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
// The tile, split-K and launch plan is kernels/sm86mm's (Plan), the one
// copy the simulator tests call too.

func sm86mmSupports(a *MatMulArgs) error {
	ta, tb, td := a.DTypes()
	if ta != tb || (ta != tile.F16 && ta != tile.BF16) {
		return fmt.Errorf("needs A and B both f16 or both bf16, have %v and %v", ta, tb)
	}
	if td != tile.F32 && td != tile.F16 && td != tile.BF16 {
		return fmt.Errorf("output element type %v not supported (f32, f16, bf16)", td)
	}
	if a.Beta != 0 && a.C.Buf != nil && a.C.Buf.DType() != td {
		return fmt.Errorf("c must have D's element type %v, has %v", td, a.C.Buf.DType())
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
		return fmt.Errorf("k=%d: needs a positive multiple of 8 (16-byte copies along K)", a.K)
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

// sm86mmKernel is the registry entry.
func sm86mmKernel() TypedKernel[MatMulArgs] {
	return TypedKernel[MatMulArgs]{
		Name:       "sass.matmul.sm86mm",
		Arch:       Arch{ISA: ISASASS, MinSM: 86, MaxSM: 89, Module: sm86mm.Module()},
		Preference: 200,
		Doc:        "hand-scheduled SASS (kernels/sm86mm): LDGSTS ring, LDSM, HMMA.16816.F32; 128x128 / 128x64 / 64x128 tiles, NN/NT/TN/TT, split-K (unverified on a GPU)",
		Supports:   sm86mmSupports,
		Launch:     sm86mmLaunch,
	}
}

// sm86mmProblem is batch b of a in the plan's terms.
func sm86mmProblem(a *MatMulArgs, b int) (sm86mm.Problem, error) {
	ta, _, td := a.DTypes()
	p := sm86mm.Problem{M: a.M, N: a.N, K: a.K, In: ta, Out: td, TransA: a.A.Trans, TransB: a.B.Trans,
		LDA: a.A.LD, LDB: a.B.LD, LDD: a.D.LD, Alpha: a.Alpha, Beta: a.Beta, Act: a.Act}
	ptrOf := func(mx Matrix) (uint64, error) {
		if mx.Buf == nil {
			return 0, nil
		}
		base, err := DevicePtr(mx.Buf)
		if err != nil {
			return 0, err
		}
		return base + uint64((mx.Offset+b*mx.BatchStride)*mx.Buf.DType().Size()), nil
	}
	var err error
	for _, o := range []struct {
		m   Matrix
		dst *uint64
	}{{a.D, &p.D}, {a.A, &p.A}, {a.B, &p.B}} {
		if *o.dst, err = ptrOf(o.m); err != nil {
			return p, err
		}
	}
	if a.C.Buf != nil && a.Beta != 0 {
		if p.C, err = ptrOf(a.C); err != nil {
			return p, err
		}
		p.LDC = a.C.LD
	} else {
		p.Beta = 0
	}
	if a.Bias != nil {
		if p.Bias, err = DevicePtr(a.Bias); err != nil {
			return p, err
		}
	}
	return p, nil
}

func sm86mmLaunch(_ context.Context, l *Launch, a *MatMulArgs) error {
	m := sm86mm.Module()
	for b := 0; b < a.Batch; b++ {
		p, err := sm86mmProblem(a, b)
		if err != nil {
			return err
		}
		_, ls := sm86mm.Plan(p, l.Runtime.Device().SMs)
		for _, k := range ls {
			g := &GPULaunch{Module: m, Func: k.Func, Grid: k.Grid, Block: k.Block, SharedBytes: k.SharedBytes, Params: k.Params}
			if err := LaunchGPU(l.Stream, g); err != nil {
				return err
			}
		}
	}
	return nil
}

// Registers the hand-scheduled SM86/SM89 matmul. Unverified on a GPU: no
// run has loaded these cubins.
func init() {
	RegisterKernel(OpMatMul, sm86mmKernel())
}
