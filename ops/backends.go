package ops

// The GPU backends register themselves with the runtime when linked in:
// CUDA (runtime/cuda; the default build loads libcuda.so.1 at run time,
// -tags cuda links gorgonia.org/cu) and the simulated SM86/SM89 device
// (runtime/sim, the CUDA backend over a simulator driver).
import (
	_ "github.com/tcrt-go/tcrt/runtime/cuda"
	_ "github.com/tcrt-go/tcrt/runtime/sim"
)
