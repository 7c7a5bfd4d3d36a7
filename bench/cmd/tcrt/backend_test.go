//go:build !nocuda && !cuda

package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The command run as a subprocess: the test binary re-executes itself with
// TCRT_CMD_MAIN=1 and runs main with the arguments in TCRT_CMD_ARGS, so
// the exit status and output are the command's own.
func TestMain(m *testing.M) {
	if os.Getenv("TCRT_CMD_MAIN") == "1" {
		os.Args = append(os.Args[:1], strings.Fields(os.Getenv("TCRT_CMD_ARGS"))...)
		main()
		return
	}
	os.Exit(m.Run())
}

// command runs the tcrt command with args and extra environment; it
// returns the exit status, stdout and stderr.
func command(t *testing.T, args string, env ...string) (int, string, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "TCRT_CMD_MAIN=1", "TCRT_CMD_ARGS="+args, "TCRT_BACKEND=", "TCRT_CUDA_LIB=", "TCRT_KERNEL=")
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// gpuHere reports whether the default driver opened a GPU (a GPU host):
// then the CPU-only expectations do not hold.
func gpuHere(t *testing.T) bool {
	code, out, _ := command(t, "-ops quantize -size small", "TCRT_BACKEND=cuda")
	return code == 0 && strings.Contains(out, "device: cuda")
}

// TestBackendSelection: without a usable CUDA driver, auto runs every op on
// the CPU and -explain says why in one line; asking for CUDA fails with the
// driver's reason and a non-zero status, never a panic.
func TestBackendSelection(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every op (-size small) in a subprocess")
	}
	testBackendSelection(t, "all")
}

// TestBackendSelectionShort is TestBackendSelection on one op.
func TestBackendSelectionShort(t *testing.T) { testBackendSelection(t, "quantize") }

func testBackendSelection(t *testing.T, ops string) {
	if gpuHere(t) {
		t.Skip("this host has a usable CUDA GPU")
	}
	code, out, errs := command(t, "-ops "+ops+" -size small -explain", "TCRT_BACKEND=auto")
	first := strings.SplitN(out, "\n", 3)
	if code != 0 || len(first) < 2 || !strings.HasPrefix(first[0], "device: cpu") ||
		!strings.HasPrefix(first[1], "backend: cpu (auto: GPU not used: cuda: ") || !strings.Contains(first[1], "libcuda.so.1") {
		t.Fatalf("auto: status %d\nstdout:\n%.2000s\nstderr:\n%s", code, out, errs)
	}
	// the same binary, pointed at a library that does not exist
	code, out, errs = command(t, "-ops quantize -size small -explain", "TCRT_CUDA_LIB=/nonexistent")
	if code != 0 || !strings.Contains(out, "backend: cpu (auto: GPU not used: cuda: cuda driver: cannot load /nonexistent") {
		t.Fatalf("TCRT_CUDA_LIB=/nonexistent: status %d\nstdout:\n%.2000s\nstderr:\n%s", code, out, errs)
	}
	code, out, errs = command(t, "-ops quantize -size small", "TCRT_BACKEND=cuda")
	if code != 1 || !strings.Contains(errs, "libcuda.so.1") || strings.Contains(errs, "panic") || out != "" {
		t.Fatalf("TCRT_BACKEND=cuda: status %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	// the flag wins over the environment
	code, out, errs = command(t, "-ops quantize -size small -backend cpu", "TCRT_BACKEND=cuda")
	if code != 0 || !strings.HasPrefix(out, "device: cpu") {
		t.Fatalf("-backend cpu with TCRT_BACKEND=cuda: status %d\nstdout:\n%.2000s\nstderr:\n%s", code, out, errs)
	}
	const libm = "/lib/x86_64-linux-gnu/libm.so.6"
	if _, err := os.Stat(libm); err != nil {
		t.Skip(err)
	}
	code, _, errs = command(t, "-ops quantize -size small", "TCRT_BACKEND=cuda", "TCRT_CUDA_LIB="+libm)
	if code != 1 || !strings.Contains(errs, libm+": symbol cuInit missing") {
		t.Fatalf("TCRT_CUDA_LIB=%s: status %d\nstderr:\n%s", libm, code, errs)
	}
}
