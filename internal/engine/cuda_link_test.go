package engine

// The CUDA backend registers itself from package runtime/cuda; link it into
// the test binary (package ops imports it for programs). Without a usable
// GPU the CUDA tests skip (TCRT_REQUIRE_GPU=1 makes them fail instead).
import _ "github.com/tcrt-go/tcrt/runtime/cuda"
