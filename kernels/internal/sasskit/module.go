package sasskit

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
)

// WriteCubins is go generate's writer of a module's cubins: for each
// architecture of archs it writes build(arch) to dir/<name>.sm_<arch>.cubin.
// A nil result with no error means the module has no cubin for that
// architecture: a file left from before is removed, so none is stale.
func WriteCubins(dir, name string, archs []int, build func(arch int) ([]byte, error)) error {
	for _, arch := range archs {
		path := filepath.Join(dir, fmt.Sprintf("%s.sm_%d.cubin", name, arch))
		b, err := build(arch)
		if err != nil {
			return fmt.Errorf("%s sm_%d: %w", name, arch, err)
		}
		if b == nil {
			if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				return err
			}
			continue
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Kernels generates every variant of cs with gen and returns the cubin
// description of each, in order: what a module's cubin holds.
func Kernels[C interface{ Name() string }, P interface{ Kernel() (cubin.Kernel, error) }](cs []C, gen func(C) (P, error)) ([]cubin.Kernel, error) {
	var ks []cubin.Kernel
	for _, c := range cs {
		p, err := gen(c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name(), err)
		}
		k, err := p.Kernel()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name(), err)
		}
		ks = append(ks, k)
	}
	return ks, nil
}

// Kernel is k, the cubin description of a generated kernel, with its
// code: insts encoded.
func Kernel(insts sass.Program, k cubin.Kernel) (cubin.Kernel, error) {
	code, err := sass.Encode(insts)
	if err != nil {
		return cubin.Kernel{}, err
	}
	k.Code = code
	return k, nil
}
