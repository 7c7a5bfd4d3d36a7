package ops

// The GPU backends register themselves with the runtime when linked in:
// CUDA with -tags cuda (the package is empty without it).
import _ "github.com/tcrt-go/tcrt/runtime/cuda"
