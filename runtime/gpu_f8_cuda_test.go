//go:build cuda

package runtime_test

import (
	"testing"

	"github.com/tcrt-go/tcrt/runtime"
)

// The float8 PTX kernels on a GPU (the bodies are in gpu_f8_test.go). They
// need a GPU (cu's init exits without one); see scripts/gpu-run.sh.

func TestCUDAF8Ops(t *testing.T) { testF8Ops(t, openF8(t, runtime.BackendCUDA), f8Shapes) }

func TestCUDAF8ScaleErrors(t *testing.T) { testF8ScaleErrors(t, openF8(t, runtime.BackendCUDA)) }

func TestCUDAF8Fallbacks(t *testing.T) { testF8Fallbacks(t, openF8(t, runtime.BackendCUDA)) }
