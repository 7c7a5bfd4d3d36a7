package engine

import "github.com/tcrt-go/tcrt/fallback"

// OpSoftmax is softmax and log-softmax.
var OpSoftmax = Op[SoftmaxArgs]{"softmax"}

// SoftmaxArgs is a validated softmax over the last dimension (see
// fallback.SoftmaxArgs).
type SoftmaxArgs struct {
	X, Y        Matrix
	Temperature float32
	Log         bool
}

// HostSoftmaxArgs converts a CPU-backend call into the fallback's form.
func HostSoftmaxArgs(a *SoftmaxArgs, threads int) *fallback.SoftmaxArgs {
	return hostSoftmaxInto(new(hostCall[fallback.SoftmaxArgs]), a, threads)
}

// hostSoftmaxInto is HostSoftmaxArgs into c.
func hostSoftmaxInto(c *hostCall[fallback.SoftmaxArgs], a *SoftmaxArgs, threads int) *fallback.SoftmaxArgs {
	c.h = fallback.SoftmaxArgs{X: hostRows(a.X), Y: hostRows(a.Y), Temperature: a.Temperature, Log: a.Log, Threads: threads}
	return &c.h
}

func init() {
	refAndFast(OpSoftmax, "max, exponentials and sum on a float32 row in cache; "+lightFastDoc,
		func(a *SoftmaxArgs, th int) error {
			return withHost(&hostSoftmaxes, a, th, hostSoftmaxInto, func(h *fallback.SoftmaxArgs) error { fallback.SoftmaxRef(h); return nil })
		},
		func(a *SoftmaxArgs, th int) error {
			return withHost(&hostSoftmaxes, a, th, hostSoftmaxInto, func(h *fallback.SoftmaxArgs) error { fallback.SoftmaxFast(h); return nil })
		})
}
