package engine

import "github.com/tcrt-go/tcrt/fallback"

// The normalisation ops.
var (
	OpRMSNorm    = Op[NormArgs]{"rmsnorm"}
	OpAddRMSNorm = Op[NormArgs]{"add_rmsnorm"}
	OpLayerNorm  = Op[NormArgs]{"layernorm"}
)

// NormArgs is a validated row normalisation (all three ops): Y = norm(X)·w
// (+ b), or with Residual, Residual += X then Y = norm(Residual) (see
// fallback.NormArgs). X, Y and Residual are Rows × Cols views; Weight and
// Bias are nil or Cols values of f32, f16 or bf16. Kernels receive it
// typed (RegisterKernel).
type NormArgs struct {
	Kind         NormKind
	X, Y         Matrix
	Residual     *Matrix
	Weight, Bias *Buffer
	Eps          float32
	Gemma        bool
}

// HostNormArgs converts a CPU-backend call into the fallback's form.
func HostNormArgs(a *NormArgs, threads int) *fallback.NormArgs {
	return hostNormInto(new(hostCall[fallback.NormArgs]), a, threads)
}

// hostNormInto is HostNormArgs into c.
func hostNormInto(c *hostCall[fallback.NormArgs], a *NormArgs, threads int) *fallback.NormArgs {
	c.h = fallback.NormArgs{
		Kind: a.Kind, X: hostRows(a.X), Y: hostRows(a.Y), Residual: c.rows(0, a.Residual),
		Weight: hostVec(a.Weight), Bias: hostVec(a.Bias), Eps: a.Eps, Gemma: a.Gemma, Threads: threads,
	}
	return &c.h
}

func init() {
	for _, op := range []Op[NormArgs]{OpRMSNorm, OpAddRMSNorm, OpLayerNorm} {
		refAndFast(op, "one pass over each row (residual added, stored and normalised while in cache); "+lightFastDoc,
			func(a *NormArgs, th int) error {
				return withHost(&hostNorms, a, th, hostNormInto, func(h *fallback.NormArgs) error { fallback.NormRef(h); return nil })
			},
			func(a *NormArgs, th int) error {
				return withHost(&hostNorms, a, th, hostNormInto, func(h *fallback.NormArgs) error { fallback.NormFast(h); return nil })
			})
	}
}
