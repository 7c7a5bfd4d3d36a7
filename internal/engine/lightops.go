package engine

import (
	"unsafe"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/tile"
)

// Shared pieces of the light ops' registrations (norm.go, rope.go, act.go,
// softmax.go, sample.go, pooling.go). Every light op's arguments hold row
// views as Matrix values (Buf, Offset, Rows, Cols, LD; BatchStride and
// Trans unused), already validated by the ops package; CPU kernels view
// them as fallback.Matrix.

// refAndFast registers a light op's usual pair of CPU kernels:
// "cpu.<op>.reference" (preference 0, the oracle) and "cpu.<op>.fast"
// (preference 100).
func refAndFast[A any](op Op[A], fastDoc string, ref, fast func(a *A, threads int) error) {
	for _, k := range []struct {
		name, doc string
		pref      int
		run       func(a *A, threads int) error
	}{
		{"cpu." + op.name + ".fast", fastDoc, 100, fast},
		{"cpu." + op.name + ".reference", "plain element loops, float64 sums (the oracle); force it with TCRT_KERNEL=cpu." + op.name + ".reference", 0, ref},
	} {
		run := k.run
		RegisterKernel(op, TypedKernel[A]{
			Name: k.name, Arch: Arch{ISA: ISACPU}, Preference: k.pref, Doc: k.doc,
			Launch: CPUKernel(func(l *Launch, a *A) error { return run(a, l.Threads) }),
		})
	}
}

// hostRows views a validated row view's host memory.
func hostRows(m Matrix) fallback.Matrix {
	if m.Rows == 0 { // the offset may lie past the buffer's end
		return fallback.Matrix{DType: m.Buf.DType(), Cols: m.Cols, LD: m.LD}
	}
	h := hostMatrix(m)
	h.BatchStride, h.Trans = 0, false
	return h
}

// hostVec decodes an optional vector buffer (f32, f16 or bf16) to float32:
// an f32 buffer's host memory itself (the kernels only read it), others
// decoded into a new slice.
func hostVec(b *Buffer) []float32 {
	if b == nil {
		return nil
	}
	if b.DType() == tile.F32 {
		return fallback.F32s(b.Host())[:b.Len()]
	}
	v := make([]float32, b.Len())
	fallback.DecodeRow(b.DType(), v, b.Host())
	return v
}

// hostS32 views an s32 buffer's host bytes as int32s.
func hostS32(b *Buffer) []int32 {
	h := b.Host()
	if len(h) < 4 {
		return nil
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(&h[0])), b.Len())
}

// lightFastDoc is the common description of the light ops' fast paths.
const lightFastDoc = "rows converted once with the matmul path's vector converters, float32 arithmetic in cache, rows across the helper pool"

// The light ops' vocabulary (defined in fallback, aliased here and in ops).
type (
	// ActFunc is an activation function (fallback.ActFunc).
	ActFunc = fallback.ActFunc
	// EltOp is an element-wise op (fallback.EltOp).
	EltOp = fallback.EltOp
	// NormKind is RMS or layer normalisation (fallback.NormKind).
	NormKind = fallback.NormKind
	// RoPEScaling is a rotary embedding's frequency scaling (fallback.RoPEScaling).
	RoPEScaling = fallback.RoPEScaling
	// RoPEScalingKind names the scaling rule (fallback.RoPEScalingKind).
	RoPEScalingKind = fallback.RoPEScalingKind
	// PoolMode is an embedding pooling (fallback.PoolMode).
	PoolMode = fallback.PoolMode
)
