//go:build !nocuda && !cuda

package cuda_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/runtime/cuda"
	"github.com/tcrt-go/tcrt/runtime/cuda/driver"
)

// libm is a real shared library that is not the CUDA driver.
const libm = "/lib/x86_64-linux-gnu/libm.so.6"

// TestOpenFails: when the driver cannot be used the backend returns the
// typed error, naming the step; nothing panics or exits.
func TestOpenFails(t *testing.T) {
	for _, c := range []struct {
		lib, want string
		step      driver.Step
	}{
		{"/nonexistent/libcuda.so.1", "/nonexistent/libcuda.so.1", driver.StepLibrary},
		{libm, "symbol cuInit missing", driver.StepSymbol},
	} {
		if _, err := os.Stat(c.lib); err != nil && c.step != driver.StepLibrary {
			t.Logf("skipping %s: %v", c.lib, err)
			continue
		}
		_, err := cuda.Open(cuda.Config{Options: backend.Options{CUDALib: c.lib}})
		var le *driver.LoadError
		if !errors.As(err, &le) || le.Step != c.step || !errors.Is(err, runtime.ErrNoDevice) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.lib, err)
		}
	}
}

// TestAutoFallback: auto selection opens the CPU when CUDA cannot open
// and says why in one line; asking for CUDA returns the error.
func TestAutoFallback(t *testing.T) {
	t.Setenv("TCRT_BACKEND", "")
	t.Setenv("TCRT_CUDA_LIB", "")
	rt, err := runtime.Open(runtime.Options{CUDALib: "/nonexistent/libcuda.so.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	why := rt.BackendReason()
	if rt.Backend() != runtime.BackendCPU || strings.Contains(why, "\n") ||
		!strings.Contains(why, "GPU not used: cuda:") || !strings.Contains(why, "/nonexistent/libcuda.so.1") {
		t.Fatalf("backend %s, reason %q", rt.Backend(), why)
	}
	e := engine.Handles.Runtime(rt).Explain(engine.OpMatMul.Name(), nil)
	if e.Backend != why {
		t.Fatalf("Explain's backend line %q, want %q", e.Backend, why)
	}
	// the environment names the library too
	t.Setenv("TCRT_CUDA_LIB", libm)
	_, err = runtime.Open(runtime.Options{Backend: runtime.BackendCUDA})
	var le *driver.LoadError
	if !errors.As(err, &le) || le.Step != driver.StepSymbol || le.Path != libm {
		if _, serr := os.Stat(libm); serr == nil {
			t.Fatalf("TCRT_CUDA_LIB=%s: %v", libm, err)
		}
	}
	// the default library
	t.Setenv("TCRT_CUDA_LIB", "")
	rt2, err := runtime.Open(runtime.Options{Backend: runtime.BackendCUDA})
	if err == nil {
		defer rt2.Close()
		t.Skipf("this host has a usable GPU: %v", rt2.Device())
	}
	if !errors.Is(err, runtime.ErrNoDevice) || !strings.Contains(err.Error(), "libcuda.so.1") {
		t.Fatalf("cuda without a driver: %v", err)
	}
}

func TestDriverName(t *testing.T) {
	if !strings.Contains(cuda.DriverName, "purego") && !strings.Contains(cuda.DriverName, "gorgonia") {
		t.Fatalf("DriverName %q", cuda.DriverName)
	}
}
