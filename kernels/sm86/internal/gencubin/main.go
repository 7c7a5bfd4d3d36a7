// Command gencubin writes the sm86 package's cubins (go generate
// ./kernels/sm86): cubin/sass.sm_86.cubin and cubin/sass.sm_89.cubin, from
// the kernel generators. The output depends only on the generators. An
// architecture the model cannot encode yet (sm86.ErrNotEncodable) gets no
// file.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/tcrt-go/tcrt/kernels/internal/sasskit"
	"github.com/tcrt-go/tcrt/kernels/sm86"
	"github.com/tcrt-go/tcrt/kernels/sm86/gen"
)

func main() {
	build := func(arch int) ([]byte, error) {
		b, err := gen.Cubin(arch)
		if errors.Is(err, sm86.ErrNotEncodable) {
			// no cubin rather than a stale one
			fmt.Fprintln(os.Stderr, "gencubin: skipping:", err)
			return nil, nil
		}
		return b, err
	}
	if err := sasskit.WriteCubins("cubin", "sass", sm86.Archs, build); err != nil {
		fmt.Fprintln(os.Stderr, "gencubin:", err)
		os.Exit(1)
	}
}
