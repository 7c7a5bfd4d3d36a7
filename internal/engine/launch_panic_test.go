package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tcrt-go/tcrt/tile"
)

type panicArgs struct{ X *Buffer }

func (a *panicArgs) Operands() (o Operands) {
	o.Buffer("X", a.X, true, false)
	return
}

var opTestPanic = Op[panicArgs]{"test.launch-panic"}

func init() {
	RegisterKernel(opTestPanic, TypedKernel[panicArgs]{Name: "cpu.test.launch-panic", Arch: Arch{ISA: ISACPU},
		Launch: func(ctx context.Context, l *Launch, a *panicArgs) error {
			var s []byte
			_ = s[a.X.Len()] // index out of range
			return nil
		}})
}

// TestLaunchPanicReleasesBuffers: a kernel that panics on the caller's
// goroutine returns ErrDevice, its buffers are released, and Close neither
// hangs nor leaks them.
func TestLaunchPanicReleasesBuffers(t *testing.T) {
	rt, err := Open(Options{Backend: BackendCPU})
	if err != nil {
		t.Fatal(err)
	}
	x, err := rt.Alloc(tile.F32, 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Run(context.Background(), nil, opTestPanic.name, &panicArgs{X: x}); !errors.Is(err, ErrDevice) {
		t.Fatalf("Run of a panicking kernel: %v, want ErrDevice", err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	_ = rt.Synchronize(context.Background()) // the release runs after the stream's work
	if s := rt.Stats(); s.LiveBuffers != 0 {
		t.Fatalf("%d buffers still live after Close: the launch kept its hold", s.LiveBuffers)
	}
	done := make(chan error, 1)
	go func() { done <- rt.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Runtime.Close hangs after a kernel panicked")
	}
}

// noOperandsArgs does not list its buffers (it is no Args).
type noOperandsArgs struct{ X *Buffer }

var opTestNoOperands = Op[noOperandsArgs]{"test.no-operands"}

func init() {
	RegisterKernel(opTestNoOperands, TypedKernel[noOperandsArgs]{Name: "cpu.test.no-operands", Arch: Arch{ISA: ISACPU},
		Launch: CPUKernel(func(*Launch, *noOperandsArgs) error { return nil })})
}

// TestArgsMustListOperands: arguments of a registered op that do not list
// their buffers (Args) are refused, since the launch would hold none.
func TestArgsMustListOperands(t *testing.T) {
	rt, err := Open(Options{Backend: BackendCPU})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	x, err := rt.Alloc(tile.F32, 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Run(context.Background(), nil, opTestNoOperands.name, &noOperandsArgs{x}); !errors.Is(err, ErrArgument) {
		t.Errorf("Run with arguments that list no operands: %v; want ErrArgument", err)
	}
	if err := rt.Run(context.Background(), nil, opTestPanic.name, &panicArgs{X: nil}); !errors.Is(err, ErrArgument) {
		t.Errorf("Run with a nil required operand: %v; want ErrArgument", err)
	}
}
