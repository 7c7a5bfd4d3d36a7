// Command gencubin writes the sm86attn module's cubins (go generate
// ./kernels/sm86attn): cubin/sm86attn.sm_86.cubin and .sm_89.cubin, every
// variant of the generator. The output is deterministic.
package main

import (
	"fmt"
	"os"

	"github.com/tcrt-go/tcrt/kernels/internal/sasskit"
	"github.com/tcrt-go/tcrt/kernels/sm86attn"
	"github.com/tcrt-go/tcrt/kernels/sm86attn/gen"
)

func main() {
	if err := sasskit.WriteCubins("cubin", sm86attn.ModuleName, []int{86, 89}, gen.ModuleCubin); err != nil {
		fmt.Fprintln(os.Stderr, "gencubin:", err)
		os.Exit(1)
	}
}
