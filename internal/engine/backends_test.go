package engine_test

// The tests open the simulated GPU and the CUDA backend's fakes: link the
// backends as package ops does.
import (
	_ "github.com/tcrt-go/tcrt/runtime/cuda"
	_ "github.com/tcrt-go/tcrt/runtime/sim"
)
