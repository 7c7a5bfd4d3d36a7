package engine

import "github.com/tcrt-go/tcrt/fallback"

// The ops of embedding pooling and L2 normalisation.
var (
	OpPool        = Op[PoolArgs]{"pool"}
	OpL2Normalize = Op[L2NormArgs]{"l2normalize"}
)

// PoolArgs is a validated pooling of a varlen batch (see
// fallback.PoolArgs).
type PoolArgs struct {
	Mode      PoolMode
	X, Y      Matrix
	Lengths   []int
	Normalize bool
	Eps       float32
}

// L2NormArgs is a validated row L2 normalisation.
type L2NormArgs struct {
	X, Y Matrix
	Eps  float32
}

// HostPoolArgs converts a CPU-backend call into the fallback's form.
func HostPoolArgs(a *PoolArgs, threads int) *fallback.PoolArgs {
	return &fallback.PoolArgs{Mode: a.Mode, X: hostRows(a.X), Y: hostRows(a.Y), Lengths: a.Lengths, Normalize: a.Normalize, Eps: a.Eps, Threads: threads}
}

// HostL2NormArgs converts a CPU-backend call into the fallback's form.
func HostL2NormArgs(a *L2NormArgs, threads int) *fallback.L2NormArgs {
	return &fallback.L2NormArgs{X: hostRows(a.X), Y: hostRows(a.Y), Eps: a.Eps, Threads: threads}
}

func init() {
	refAndFast(OpPool, "float32 sums over converted rows, sequences across the helper pool",
		func(a *PoolArgs, th int) error { fallback.PoolRef(HostPoolArgs(a, th)); return nil },
		func(a *PoolArgs, th int) error { fallback.PoolFast(HostPoolArgs(a, th)); return nil })
	refAndFast(OpL2Normalize, lightFastDoc,
		func(a *L2NormArgs, th int) error { fallback.L2NormRef(HostL2NormArgs(a, th)); return nil },
		func(a *L2NormArgs, th int) error { fallback.L2NormFast(HostL2NormArgs(a, th)); return nil })
}
