// Command gencubin writes the sm86attn module's cubins (go generate
// ./kernels/sm86attn): cubin/sm86attn.sm_86.cubin and .sm_89.cubin, every
// variant of the generator. The output is deterministic.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tcrt-go/tcrt/kernels/sm86attn"
	"github.com/tcrt-go/tcrt/kernels/sm86attn/gen"
)

func main() {
	for _, arch := range []int{86, 89} {
		b, err := gen.ModuleCubin(arch)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		path := filepath.Join("cubin", fmt.Sprintf("%s.sm_%d.cubin", sm86attn.ModuleName, arch))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
