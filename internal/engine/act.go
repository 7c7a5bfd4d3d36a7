package engine

import "github.com/tcrt-go/tcrt/fallback"

// The activation and element-wise ops.
var (
	OpActivation  = Op[ActArgs]{"activation"}
	OpElementwise = Op[EltArgs]{"elementwise"}
)

// ActArgs is a validated activation: Y = f(A), or f(A)·B when B is set
// (see fallback.ActArgs); A, B and Y are Rows × Cols views (the halves of
// a concatenated [a|b] row are two views of one buffer).
type ActArgs struct {
	Func ActFunc
	A, Y Matrix
	B    *Matrix
}

// EltArgs is a validated element-wise op (see fallback.EltArgs).
type EltArgs struct {
	Op    EltOp
	X, Y  Matrix
	Z     *Matrix
	Alpha float32
}

// HostActArgs converts a CPU-backend call into the fallback's form.
func HostActArgs(a *ActArgs, threads int) *fallback.ActArgs {
	return hostActInto(new(hostCall[fallback.ActArgs]), a, threads)
}

// hostActInto is HostActArgs into c.
func hostActInto(c *hostCall[fallback.ActArgs], a *ActArgs, threads int) *fallback.ActArgs {
	c.h = fallback.ActArgs{Func: a.Func, A: hostRows(a.A), Y: hostRows(a.Y), B: c.rows(0, a.B), Threads: threads}
	return &c.h
}

// HostEltArgs converts a CPU-backend call into the fallback's form.
func HostEltArgs(a *EltArgs, threads int) *fallback.EltArgs {
	return hostEltInto(new(hostCall[fallback.EltArgs]), a, threads)
}

// hostEltInto is HostEltArgs into c.
func hostEltInto(c *hostCall[fallback.EltArgs], a *EltArgs, threads int) *fallback.EltArgs {
	c.h = fallback.EltArgs{Op: a.Op, X: hostRows(a.X), Y: hostRows(a.Y), Z: c.rows(0, a.Z), Alpha: a.Alpha, Threads: threads}
	return &c.h
}

func init() {
	refAndFast(OpActivation, "float32 silu/gelu/gelu_tanh over the fast exponential; "+lightFastDoc,
		func(a *ActArgs, th int) error {
			return withHost(&hostActs, a, th, hostActInto, func(h *fallback.ActArgs) error { fallback.ActRef(h); return nil })
		},
		func(a *ActArgs, th int) error {
			return withHost(&hostActs, a, th, hostActInto, func(h *fallback.ActArgs) error { fallback.ActFast(h); return nil })
		})
	refAndFast(OpElementwise, "the same float32 results as the reference; "+lightFastDoc,
		func(a *EltArgs, th int) error {
			return withHost(&hostElts, a, th, hostEltInto, func(h *fallback.EltArgs) error { fallback.EltRef(h); return nil })
		},
		func(a *EltArgs, th int) error {
			return withHost(&hostElts, a, th, hostEltInto, func(h *fallback.EltArgs) error { fallback.EltFast(h); return nil })
		})
}
