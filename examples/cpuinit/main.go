// Command cpuinit opens the CPU backend and exits: run it with
// GODEBUG=inittrace=1 to see what this module's packages cost a CPU-only
// program at start-up.
package main

import (
	"fmt"
	"os"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
)

func main() {
	rt, err := runtime.Open(runtime.Options{Backend: runtime.BackendCPU})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer rt.Close()
	_ = ops.DefaultMatMulOptions()
	fmt.Println(rt.Device().Backend)
}
