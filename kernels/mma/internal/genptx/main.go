// Command genptx writes the module's PTX (mma.ptx) from the generator and
// assembles the embedded cubins with ptxas (-O3) for the compute
// capabilities of mma.CubinSMs. Run by go generate ./kernels/mma (needs
// ptxas on PATH or under $TCRT_CUDA_HOME/bin; scripts/cuda-tools.sh).
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/tcrt-go/tcrt/internal/cudatools"
	"github.com/tcrt-go/tcrt/kernels/mma"
	"github.com/tcrt-go/tcrt/kernels/mma/gen"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "genptx:", err)
		os.Exit(1)
	}
}

func run() error {
	if err := os.WriteFile("mma.ptx", gen.ModulePTX(), 0o644); err != nil {
		return err
	}
	if len(os.Args) > 1 && os.Args[1] == "-ptxonly" {
		return nil
	}
	as := cudatools.Path("ptxas")
	if as == "" {
		return fmt.Errorf("ptxas not found (scripts/cuda-tools.sh installs it)")
	}
	for _, sm := range mma.CubinSMs {
		out := filepath.Join("cubin", fmt.Sprintf("mma.sm_%d.cubin", sm))
		if msg, err := exec.Command(as, fmt.Sprintf("-arch=sm_%d", sm), "-O3", "mma.ptx", "-o", out).CombinedOutput(); err != nil {
			return fmt.Errorf("ptxas sm_%d: %v\n%s", sm, err, msg)
		}
	}
	return nil
}
