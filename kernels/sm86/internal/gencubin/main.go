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
	"path/filepath"

	"github.com/tcrt-go/tcrt/kernels/sm86"
	"github.com/tcrt-go/tcrt/kernels/sm86/gen"
)

func main() {
	for _, arch := range sm86.Archs {
		path := filepath.Join("cubin", fmt.Sprintf("sass.sm_%d.cubin", arch))
		b, err := gen.Cubin(arch)
		if errors.Is(err, sm86.ErrNotEncodable) {
			// no cubin rather than a stale one
			fmt.Fprintln(os.Stderr, "gencubin: skipping:", err)
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				fmt.Fprintln(os.Stderr, "gencubin:", err)
				os.Exit(1)
			}
			continue
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gencubin:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gencubin:", err)
			os.Exit(1)
		}
	}
}
