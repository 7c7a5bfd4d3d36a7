package ops_test

import (
	"errors"
	"os"
	"testing"

	"github.com/tcrt-go/tcrt/runtime"
)

// The float8 PTX kernels on a GPU (the bodies are in gpu_f8_test.go). They
// skip without a usable GPU unless TCRT_REQUIRE_GPU=1; see
// scripts/gpu-run.sh.

func TestCUDAF8Ops(t *testing.T) { testF8Ops(t, openF8CUDA(t), f8Shapes) }

func TestCUDAF8ScaleErrors(t *testing.T) { testF8ScaleErrors(t, openF8CUDA(t)) }

func TestCUDAF8Fallbacks(t *testing.T) { testF8Fallbacks(t, openF8CUDA(t)) }

// openF8CUDA opens CUDA, skipping without a usable GPU.
func openF8CUDA(t *testing.T) *runtime.Runtime {
	t.Helper()
	rt, err := runtime.Open(runtime.Options{Backend: runtime.BackendCUDA})
	if err != nil {
		if errors.Is(err, runtime.ErrNoDevice) && os.Getenv("TCRT_REQUIRE_GPU") != "1" {
			t.Skip("no usable CUDA device:", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}
