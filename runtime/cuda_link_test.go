//go:build cuda

package runtime

// The CUDA backend registers itself from package runtime/cuda; link it into
// the -tags cuda test binary (package ops imports it for programs).
import _ "github.com/tcrt-go/tcrt/runtime/cuda"
