// Command gencubin writes the sm86mm module's cubins (go generate
// ./kernels/sm86mm): cubin/sm86mm.sm_86.cubin and .sm_89.cubin, every
// variant of the generator. The output is deterministic.
package main

import (
	"fmt"
	"os"

	"github.com/tcrt-go/tcrt/kernels/internal/sasskit"
	"github.com/tcrt-go/tcrt/kernels/sm86mm"
	"github.com/tcrt-go/tcrt/kernels/sm86mm/gen"
)

func main() {
	if err := sasskit.WriteCubins("cubin", sm86mm.ModuleName, []int{86, 89}, gen.ModuleCubin); err != nil {
		fmt.Fprintln(os.Stderr, "gencubin:", err)
		os.Exit(1)
	}
}
