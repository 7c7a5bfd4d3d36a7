package ops

import (
	"context"
	"fmt"

	"github.com/tcrt-go/tcrt/internal/callargs"
	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
)

// Call is a prepared op: its arguments validated and its kernel selected
// once, by one of the …Plan functions (MatMulPlan, AttentionPlan, …), so
// that each Run only launches. A Call keeps the views, buffers, stream and
// options it was planned with (a KV cache's lengths and block table as
// they were then: plan again after appending). Closing a buffer, the stream
// or the runtime it names makes later Runs fail with ErrClosed.
type Call struct {
	op string
	p  engine.Prepared // zero for a call that runs nothing
}

func init() {
	callargs.Of = func(c any) (any, bool) {
		call, ok := c.(*Call)
		if !ok || call == nil || call.p.Kernel() == nil {
			return nil, false
		}
		return call.p.Args(), true
	}
}

// newCall prepares args for op (nil args: a call that runs nothing),
// passing on err from the validation that built them.
func newCall[A any](rt *runtime.Runtime, s *runtime.Stream, op string, args *A, err error) (*Call, error) {
	if err != nil {
		return nil, err
	}
	c := &Call{op: op}
	if args == nil {
		return c, nil
	}
	if c.p, err = ert(rt).Prepare(estream(s), op, args); err != nil {
		return nil, err
	}
	return c, nil
}

// Run launches the call with its op's stream rule: on the Options' stream
// when one was given (asynchronous: errors come from its Synchronize), else
// synchronously on the default stream.
func (c *Call) Run(ctx context.Context) error {
	if c == nil || c.op == "" {
		return fmt.Errorf("tcrt: run: nil or zero Call (make one with a …Plan function): %w", ErrArgument)
	}
	if c.p.Kernel() == nil {
		if ctx == nil {
			return fmt.Errorf("tcrt: %s: argument ctx: nil: %w", c.op, ErrArgument)
		}
		return nil
	}
	return c.p.Launch(ctx)
}

// Explain lists every kernel considered for the call and why the one its
// Plan selected was taken and the others were not (an explanation with no
// candidates for a call that runs nothing, or a nil Call).
func (c *Call) Explain() Explanation {
	if c == nil {
		return Explanation{}
	}
	if c.p.Kernel() == nil {
		return Explanation{Op: c.op}
	}
	return publicExplanation(c.p.Explain())
}
