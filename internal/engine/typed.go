package engine

import (
	"context"

	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/tile"
)

// Typed registration: the seam between the untyped registry (Kernel, whose
// Supports and Launch see the arguments as any, so that Explain, forcing,
// the host fallback and listings handle every op alike) and the kernels,
// which see their op's argument struct. This file is the one place that
// asserts an argument struct's type (TestNoArgsAssertions checks it).

// Op is an operation whose calls carry an *A. Each op has one value
// (OpMatMul, OpRMSNorm …); its name is the registry's op string.
type Op[A any] struct{ name string }

// Name is the op's registry name, e.g. "matmul": what Explain prints,
// Kernel.Op holds and Options.Kernel forcing is keyed by.
func (o Op[A]) Name() string { return o.name }

// TypedKernel is one implementation of an op whose calls carry an *A: a
// Kernel whose Supports and Launch receive the arguments typed.
type TypedKernel[A any] struct {
	// Name, Arch, Preference and Doc are Kernel's.
	Name       string
	Arch       Arch
	Preference int
	Doc        string
	// Supports returns nil if the kernel can run the call, else why not;
	// nil means every call.
	Supports func(a *A) error
	// Launch enqueues the call as Kernel.Launch does; a is l.Args.
	Launch func(ctx context.Context, l *Launch, a *A) error
}

// RegisterKernel registers k as a kernel of op (see register). Calls whose
// arguments are not an *A are refused with an error wrapping ErrArgument.
func RegisterKernel[A any](op Op[A], k TypedKernel[A]) {
	var launch func(context.Context, *Launch) error
	if k.Launch != nil { // register refuses a kernel without one
		launch = func(ctx context.Context, l *Launch) error {
			a, err := argsOf[A](op.name, l.Args)
			if err != nil {
				return err
			}
			return k.Launch(ctx, l, a)
		}
	}
	register(Kernel{
		Name: k.Name, Op: op.name, Arch: k.Arch, Preference: k.Preference, Doc: k.Doc,
		Supports: func(args any) error {
			a, err := argsOf[A](op.name, args)
			if err != nil || k.Supports == nil {
				return err
			}
			return k.Supports(a)
		},
		Launch: launch,
	})
}

// argsOf is args as an *A, or an error wrapping ErrArgument naming what
// they are instead.
func argsOf[A any](op string, args any) (*A, error) {
	a, ok := args.(*A)
	if !ok {
		return nil, tile.Errorf(ErrArgument, op, "args", "%T; want %T", args, a)
	}
	if a == nil {
		return nil, tile.Errorf(ErrArgument, op, "args", "nil %T", a)
	}
	return a, nil
}

// CPUKernel adapts a synchronous host function into a TypedKernel.Launch
// that enqueues it on the stream. A synchronous launch (nil stream) on an
// idle CPU stream runs it on the caller's goroutine instead, with the same
// ordering and error reporting.
func CPUKernel[A any](fn func(l *Launch, a *A) error) func(context.Context, *Launch, *A) error {
	// Made once per kernel, so that a launch makes no closure: the task
	// finds its arguments in the Launch.
	cpu := func(l *Launch) error {
		a, err := argsOf[A](l.Kernel.Op, l.Args)
		if err != nil {
			return err
		}
		return fn(l, a)
	}
	return func(ctx context.Context, l *Launch, _ *A) error {
		if l.task == nil { // a Launch made by hand (the host fallback's)
			l.bind()
		}
		l.cpu = cpu
		task := l.task
		if cs, ok := l.Stream.impl.(*backend.Queue); ok && l.sync {
			if ran, err := cs.RunInline(task); ran {
				l.inlined = true
				return err
			}
		}
		if _, ok := l.Stream.impl.(*backend.Queue); ok && l.sync {
			// not idle: earlier work's errors are not this call's
			if err := l.Stream.setAsideErrors(ctx); err != nil {
				return err
			}
		}
		return l.Stream.Enqueue(task)
	}
}
