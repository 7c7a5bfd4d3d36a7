package ops

// The GPU backends register themselves with the runtime when linked in:
// the simulated SM86/SM89 device always, CUDA with -tags cuda (the package
// is empty without it).
import (
	_ "github.com/tcrt-go/tcrt/runtime/cuda"
	_ "github.com/tcrt-go/tcrt/runtime/sim"
)
