//go:build !nocuda

package driver_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/runtime/cuda/driver"
	"github.com/tcrt-go/tcrt/tile"
)

// loadErr loads path and returns its *LoadError, failing when Load
// succeeds or fails otherwise.
func loadErr(t *testing.T, path string) *driver.LoadError {
	t.Helper()
	d, err := driver.Load(path)
	if err == nil {
		t.Skipf("%s loaded (%s): this host has a working CUDA driver", path, d.Name())
	}
	var le *driver.LoadError
	if !errors.As(err, &le) {
		t.Fatalf("Load(%q): %T %v, want a *LoadError", path, err, err)
	}
	if !errors.Is(err, tile.ErrNoDevice) {
		t.Fatalf("Load(%q): %v does not wrap ErrNoDevice", path, err)
	}
	if le.Path != path {
		t.Fatalf("Load(%q): path %q", path, le.Path)
	}
	return le
}

func TestLoadMissingLibrary(t *testing.T) {
	le := loadErr(t, "/nonexistent/libcuda.so.1")
	if le.Step != driver.StepLibrary || !strings.Contains(le.Error(), "/nonexistent/libcuda.so.1") {
		t.Fatalf("%v: step %q", le, le.Step)
	}
}

// TestLoadNotCUDA: a real shared library that is not the driver fails at
// the first entry point, by name.
func TestLoadNotCUDA(t *testing.T) {
	lib := "/lib/x86_64-linux-gnu/libm.so.6"
	if _, err := os.Stat(lib); err != nil {
		t.Skip(err)
	}
	le := loadErr(t, lib)
	first := driver.Symbols()[0]
	if le.Step != driver.StepSymbol || le.Symbol != first || !strings.Contains(le.Error(), "symbol "+first+" missing") {
		t.Fatalf("%v: step %q symbol %q, want %s", le, le.Step, le.Symbol, first)
	}
}

// TestLoadStub: the CUDA toolkit's stub libcuda.so has every entry point;
// its cuInit fails, and the error carries the driver's name and text.
func TestLoadStub(t *testing.T) {
	home := os.Getenv("TCRT_CUDA_HOME")
	if home == "" {
		t.Skip("TCRT_CUDA_HOME is not set (source the CUDA tools' env)")
	}
	stub := filepath.Join(home, "lib", "stubs", "libcuda.so")
	if _, err := os.Stat(stub); err != nil {
		t.Skip(err)
	}
	le := loadErr(t, stub)
	var de *driver.Error
	if le.Step != driver.StepInit || !errors.As(le, &de) || de.Call != "cuInit" || !strings.HasPrefix(de.Name, "CUDA_ERROR_") || de.Text == "" {
		t.Fatalf("%v: step %q, cause %#v", le, le.Step, de)
	}
	t.Log(le)
	// the result is kept: a second Load answers the same without reloading
	if _, err := driver.Load(stub); err == nil || err.Error() != le.Error() {
		t.Fatalf("second load: %v", err)
	}
}

func TestCodeText(t *testing.T) {
	if driver.CodeName(driver.ErrorOutOfMemory) != "CUDA_ERROR_OUT_OF_MEMORY" || driver.CodeString(driver.ErrorNotReady) != "device not ready" {
		t.Fatal("code table")
	}
	if driver.CodeName(12345) != "CUDA_ERROR_UNRECOGNIZED" || driver.CodeString(12345) != "unrecognized error code" {
		t.Fatal("unknown code")
	}
	e := &driver.Error{Call: "cuModuleLoadDataEx", Code: driver.ErrorInvalidPTX, Name: "CUDA_ERROR_INVALID_PTX", Text: "a PTX JIT compilation failed", Log: "ptxas fatal: x\n"}
	if got := e.Error(); got != "cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX (218): a PTX JIT compilation failed\ndriver log:\nptxas fatal: x" {
		t.Fatalf("%q", got)
	}
	if !driver.IsCode(e, driver.ErrorInvalidPTX) || driver.IsCode(errors.New("x"), driver.ErrorInvalidPTX) {
		t.Fatal("IsCode")
	}
}
