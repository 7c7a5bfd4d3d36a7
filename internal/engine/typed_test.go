package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/tile"
)

// argsAssertion is a type assertion to an argument struct, as a kernel
// written against the untyped registry makes.
var argsAssertion = regexp.MustCompile(`\.\(\*\w*Args\)`)

// TestNoArgsAssertions: no source file of this package but the adapter
// (typed.go) asserts an argument struct's type; kernels receive theirs
// typed (RegisterKernel).
func TestNoArgsAssertions(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("listing the package's sources: %v (%d files)", err, len(files))
	}
	for _, f := range files {
		if f == "typed.go" {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			if m := argsAssertion.FindString(line); m != "" {
				t.Errorf("%s:%d: type assertion %s outside the adapter (typed.go): register the kernel with RegisterKernel", f, i+1, m)
			}
		}
	}
	if !argsAssertion.MatchString("a := l.Args.(*" + "MatMulArgs)") { // split, or this file would match
		t.Fatal("the pattern misses an assertion")
	}
}

// TestTypedKernelWrongArgs: a typed kernel given another op's arguments
// refuses them with an error wrapping ErrArgument, in Supports and in
// Launch, and never runs.
func TestTypedKernelWrongArgs(t *testing.T) {
	ks := Kernels(OpMatMul.Name())
	if len(ks) == 0 {
		t.Fatal("no matmul kernels registered")
	}
	for _, args := range []any{nil, &NormArgs{}, (*MatMulArgs)(nil), MatMulArgs{}} {
		for _, k := range ks {
			if err := k.Supports(args); !errors.Is(err, ErrArgument) {
				t.Errorf("%s: Supports(%T): %v; want ErrArgument", k.Name, args, err)
			}
			var ae *tile.ArgError
			if err := k.Supports(args); !errors.As(err, &ae) || ae.Arg != "args" || ae.Op != OpMatMul.Name() {
				t.Errorf("%s: Supports(%T): %v; want an ArgError naming matmul's args", k.Name, args, err)
			}
			if k.Arch.ISA != ISACPU {
				continue // device kernels need a device stream
			}
			l := &Launch{Kernel: k, Args: args}
			if err := k.Launch(context.Background(), l); !errors.Is(err, ErrArgument) {
				t.Errorf("%s: Launch(%T): %v; want ErrArgument", k.Name, args, err)
			}
		}
	}
}
