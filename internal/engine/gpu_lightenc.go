package engine

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/kernels/ptx"
)

// GPU kernels of the encoder side of the light ops (kernels/ptx, module
// Light): the GELU activations with the CPU's bits (tcrt_act), LayerNorm
// with its fused residual add (tcrt_layernorm), softmax and log-softmax
// (tcrt_softmax), L2 normalisation (tcrt_l2norm), each row kernel one
// block a row (grid.x bounds the rows at 2^31−1), the element-wise ops
// with the CPU's bytes (tcrt_elementwise), and pooling (tcrt_pool: the
// CPU's bytes unless normalised). SiLU keeps ptx.silu_mul.

// lightActCode is tcrt_act's function code of each activation.
var lightActCode = map[fallback.ActFunc]uint32{fallback.FnSiLU: 0, fallback.FnGELU: 1, fallback.FnGELUTanh: 2}

// lightEltCode is tcrt_elementwise's op code of each element-wise op.
var lightEltCode = map[fallback.EltOp]uint32{fallback.EltAdd: 0, fallback.EltMul: 1, fallback.EltScale: 2}

// lightPoolCode is tcrt_pool's mode code of each pooling.
var lightPoolCode = map[fallback.PoolMode]uint32{fallback.PoolMean: 0, fallback.PoolCLS: 1, fallback.PoolLast: 2}

// maxGridRows is the most rows a one-block-a-row kernel takes (grid.x).
const maxGridRows = 1<<31 - 1

func init() {
	arch := Arch{ISA: ISAPTX, MinSM: 80, Module: ptx.Light()}
	RegisterKernel(OpActivation, TypedKernel[ActArgs]{
		Name: "ptx.activation", Arch: arch, Preference: 100,
		Doc:      "PTX: grid-stride GELU or tanh GELU (times the gate) with the CPU fast path's operations and bits",
		Supports: gpuActSupports,
		Launch:   gpuActLaunch,
	})
	RegisterKernel(OpLayerNorm, TypedKernel[NormArgs]{
		Name: "ptx.layernorm", Arch: arch, Preference: 100,
		Doc:      "PTX: one 256-thread block a row, three passes (mean with the residual added and stored, variance, output), rsqrt.approx",
		Supports: gpuLayerNormSupports,
		Launch:   gpuLayerNormLaunch,
	})
	RegisterKernel(OpSoftmax, TypedKernel[SoftmaxArgs]{
		Name: "ptx.softmax", Arch: arch, Preference: 100,
		Doc:      "PTX: one 256-thread block a row, three passes (maximum, Σ ex2.approx, outputs)",
		Supports: gpuRowsSupports(func(a *SoftmaxArgs) int { return a.X.Rows }),
		Launch:   gpuSoftmaxLaunch,
	})
	RegisterKernel(OpElementwise, TypedKernel[EltArgs]{
		Name: "ptx.elementwise", Arch: arch, Preference: 100,
		Doc:      "PTX: grid-stride add, mul (z one row or every row) or scale, one float32 operation a value: the CPU's bytes",
		Supports: gpuEltSupports,
		Launch:   gpuEltLaunch,
	})
	RegisterKernel(OpPool, TypedKernel[PoolArgs]{
		Name: "ptx.pool", Arch: arch, Preference: 100,
		Doc:      "PTX: one 256-thread block a sequence (mean in token order, CLS or last; the CPU's bytes), then the L2 norm as ptx.l2normalize; sequence offsets uploaded per call",
		Supports: gpuPoolSupports,
		Launch:   gpuPoolLaunch,
	})
	RegisterKernel(OpL2Normalize, TypedKernel[L2NormArgs]{
		Name: "ptx.l2normalize", Arch: arch, Preference: 100,
		Doc:      "PTX: one 256-thread block a row, two passes (Σx², outputs), sqrt.rn and rcp.rn",
		Supports: gpuRowsSupports(func(a *L2NormArgs) int { return a.X.Rows }),
		Launch:   gpuL2NormLaunch,
	})
}

func gpuActSupports(a *ActArgs) error {
	if a.Func == fallback.FnSiLU {
		return fmt.Errorf("SiLU runs on ptx.silu_mul")
	}
	if _, ok := lightActCode[a.Func]; !ok {
		return fmt.Errorf("%v has no GPU kernel", a.Func)
	}
	return nil
}

// gpuRowsSupports refuses more rows than a one-block-a-row grid holds.
func gpuRowsSupports[A any](rows func(*A) int) func(*A) error {
	return func(a *A) error {
		if n := rows(a); n > maxGridRows {
			return fmt.Errorf("%d rows exceed the grid", n)
		}
		return nil
	}
}

func gpuActLaunch(_ context.Context, l *Launch, a *ActArgs) error {
	if a.A.Rows == 0 {
		return nil
	}
	pa, err := rowPtr(&a.A)
	if err != nil {
		return err
	}
	py, err := rowPtr(&a.Y)
	if err != nil {
		return err
	}
	pb, err := rowPtr(a.B)
	if err != nil {
		return err
	}
	tb, ldb := ptx.LightF32, 0
	if a.B != nil {
		tb, ldb = lightTypeCode[a.B.Buf.DType()], a.B.LD
	}
	return LaunchGPU(l.Stream, &GPULaunch{
		Module: ptx.Light(), Func: ptx.LightAct,
		Grid: rowGrid(a.A.Rows, a.A.Cols), Block: [3]int{256, 1, 1},
		Params: []uint64{ptx.Ptr(pa), ptx.Ptr(pb), ptx.Ptr(py),
			ptx.U64(uint64(a.A.Rows)), ptx.U64(uint64(a.A.Cols)), ptx.U64(uint64(a.A.LD)), ptx.U64(uint64(ldb)), ptx.U64(uint64(a.Y.LD)),
			ptx.U32(lightTypeCode[a.A.Buf.DType()]), ptx.U32(tb), ptx.U32(lightTypeCode[a.Y.Buf.DType()]), ptx.U32(lightActCode[a.Func])},
	})
}

// vecPtr is a weight or bias vector's device address and type code (0
// and f32 for none) and whether it is given.
func vecPtr(b *Buffer) (p uint64, t, has uint32, err error) {
	if b == nil {
		return 0, ptx.LightF32, 0, nil
	}
	p, err = DevicePtr(b)
	return p, lightTypeCode[b.DType()], 1, err
}

func gpuLayerNormSupports(a *NormArgs) error {
	if a.Kind != fallback.NormLayer {
		return fmt.Errorf("RMS normalisation runs on ptx.rmsnorm")
	}
	if a.X.Rows > maxGridRows {
		return fmt.Errorf("%d rows exceed the grid", a.X.Rows)
	}
	return nil
}

func gpuLayerNormLaunch(_ context.Context, l *Launch, a *NormArgs) error {
	if a.X.Rows == 0 {
		return nil
	}
	px, err := rowPtr(&a.X)
	if err != nil {
		return err
	}
	py, err := rowPtr(&a.Y)
	if err != nil {
		return err
	}
	pr, err := rowPtr(a.Residual)
	if err != nil {
		return err
	}
	tr, ldr, hasRes := ptx.LightF32, 0, uint32(0)
	if a.Residual != nil {
		tr, ldr, hasRes = lightTypeCode[a.Residual.Buf.DType()], a.Residual.LD, 1
	}
	pw, tw, hasW, err := vecPtr(a.Weight)
	if err != nil {
		return err
	}
	pb, tb, hasB, err := vecPtr(a.Bias)
	if err != nil {
		return err
	}
	return LaunchGPU(l.Stream, &GPULaunch{
		Module: ptx.Light(), Func: ptx.LightLayerNorm,
		Grid: [3]int{a.X.Rows, 1, 1}, Block: [3]int{ptx.LightNormBlock, 1, 1},
		Params: []uint64{ptx.Ptr(px), ptx.Ptr(pr), ptx.Ptr(py), ptx.Ptr(pw), ptx.Ptr(pb),
			ptx.U64(uint64(a.X.Rows)), ptx.U64(uint64(a.X.Cols)), ptx.U64(uint64(a.X.LD)), ptx.U64(uint64(ldr)), ptx.U64(uint64(a.Y.LD)),
			ptx.F32(a.Eps), ptx.U32(hasRes), ptx.U32(hasW), ptx.U32(hasB),
			ptx.U32(lightTypeCode[a.X.Buf.DType()]), ptx.U32(tr), ptx.U32(lightTypeCode[a.Y.Buf.DType()]), ptx.U32(tw), ptx.U32(tb)},
	})
}

func gpuSoftmaxLaunch(_ context.Context, l *Launch, a *SoftmaxArgs) error {
	if a.X.Rows == 0 {
		return nil
	}
	px, err := rowPtr(&a.X)
	if err != nil {
		return err
	}
	py, err := rowPtr(&a.Y)
	if err != nil {
		return err
	}
	var log uint32
	if a.Log {
		log = 1
	}
	return LaunchGPU(l.Stream, &GPULaunch{
		Module: ptx.Light(), Func: ptx.LightSoftmax,
		Grid: [3]int{a.X.Rows, 1, 1}, Block: [3]int{ptx.LightNormBlock, 1, 1},
		Params: []uint64{ptx.Ptr(px), ptx.Ptr(py),
			ptx.U64(uint64(a.X.Rows)), ptx.U64(uint64(a.X.Cols)), ptx.U64(uint64(a.X.LD)), ptx.U64(uint64(a.Y.LD)),
			ptx.F32(float32(math.Log2E / float64(a.Temperature))), ptx.F32(1 / a.Temperature),
			ptx.U32(log), ptx.U32(lightTypeCode[a.X.Buf.DType()]), ptx.U32(lightTypeCode[a.Y.Buf.DType()])},
	})
}

func gpuL2NormLaunch(_ context.Context, l *Launch, a *L2NormArgs) error {
	if a.X.Rows == 0 {
		return nil
	}
	px, err := rowPtr(&a.X)
	if err != nil {
		return err
	}
	py, err := rowPtr(&a.Y)
	if err != nil {
		return err
	}
	return LaunchGPU(l.Stream, &GPULaunch{
		Module: ptx.Light(), Func: ptx.LightL2Norm,
		Grid: [3]int{a.X.Rows, 1, 1}, Block: [3]int{ptx.LightNormBlock, 1, 1},
		Params: []uint64{ptx.Ptr(px), ptx.Ptr(py),
			ptx.U64(uint64(a.X.Rows)), ptx.U64(uint64(a.X.Cols)), ptx.U64(uint64(a.X.LD)), ptx.U64(uint64(a.Y.LD)),
			ptx.F32(a.Eps), ptx.U32(lightTypeCode[a.X.Buf.DType()]), ptx.U32(lightTypeCode[a.Y.Buf.DType()])},
	})
}

func gpuPoolSupports(a *PoolArgs) error {
	if _, ok := lightPoolCode[a.Mode]; !ok {
		return fmt.Errorf("%v has no GPU kernel", a.Mode)
	}
	if n := len(a.Lengths); n > maxGridRows {
		return fmt.Errorf("%d sequences exceed the grid", n)
	}
	return nil
}

func gpuEltSupports(a *EltArgs) error {
	if _, ok := lightEltCode[a.Op]; !ok {
		return fmt.Errorf("%v has no GPU kernel", a.Op)
	}
	return nil
}

func gpuEltLaunch(_ context.Context, l *Launch, a *EltArgs) error {
	if a.X.Rows == 0 {
		return nil
	}
	px, err := rowPtr(&a.X)
	if err != nil {
		return err
	}
	py, err := rowPtr(&a.Y)
	if err != nil {
		return err
	}
	pz, err := rowPtr(a.Z)
	if err != nil {
		return err
	}
	tz, ldz, zrows := ptx.LightF32, 0, 1
	if a.Z != nil {
		tz, ldz, zrows = lightTypeCode[a.Z.Buf.DType()], a.Z.LD, a.Z.Rows
	}
	return LaunchGPU(l.Stream, &GPULaunch{
		Module: ptx.Light(), Func: ptx.LightElementwise,
		Grid: rowGrid(a.X.Rows, a.X.Cols), Block: [3]int{256, 1, 1},
		Params: []uint64{ptx.Ptr(px), ptx.Ptr(pz), ptx.Ptr(py),
			ptx.U64(uint64(a.X.Rows)), ptx.U64(uint64(a.X.Cols)), ptx.U64(uint64(a.X.LD)), ptx.U64(uint64(ldz)), ptx.U64(uint64(a.Y.LD)),
			ptx.U64(uint64(zrows)), ptx.F32(a.Alpha), ptx.U32(lightEltCode[a.Op]),
			ptx.U32(lightTypeCode[a.X.Buf.DType()]), ptx.U32(tz), ptx.U32(lightTypeCode[a.Y.Buf.DType()])},
	})
}

func gpuPoolLaunch(ctx context.Context, l *Launch, a *PoolArgs) error {
	if len(a.Lengths) == 0 {
		return nil
	}
	px, err := rowPtr(&a.X)
	if err != nil {
		return err
	}
	py, err := rowPtr(&a.Y)
	if err != nil {
		return err
	}
	starts := make([]uint64, len(a.Lengths)+1)
	for i, n := range a.Lengths {
		starts[i+1] = starts[i] + uint64(n)
	}
	tmp := &scratch{rt: l.Runtime}
	ps, err := tmp.upload(ctx, asBytes(starts))
	if err != nil {
		return errors.Join(err, tmp.release())
	}
	var norm uint32
	if a.Normalize {
		norm = 1
	}
	err = LaunchGPU(l.Stream, &GPULaunch{
		Module: ptx.Light(), Func: ptx.LightPool,
		Grid: [3]int{len(a.Lengths), 1, 1}, Block: [3]int{ptx.LightNormBlock, 1, 1},
		Params: []uint64{ptx.Ptr(px), ptx.Ptr(py), ptx.Ptr(ps),
			ptx.U64(uint64(len(a.Lengths))), ptx.U64(uint64(a.X.Cols)), ptx.U64(uint64(a.X.LD)), ptx.U64(uint64(a.Y.LD)),
			ptx.U32(lightPoolCode[a.Mode]), ptx.U32(norm), ptx.F32(a.Eps),
			ptx.U32(lightTypeCode[a.X.Buf.DType()]), ptx.U32(lightTypeCode[a.Y.Buf.DType()])},
	})
	if err != nil {
		return errors.Join(err, tmp.release())
	}
	return l.Stream.Enqueue(tmp.release)
}
