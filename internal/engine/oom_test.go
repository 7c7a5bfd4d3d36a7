package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/sass/sim"
	"github.com/tcrt-go/tcrt/tile"
)

// oomChild is set in the environment of the child process
// TestAllocBeyondHostIsAnError runs under ulimit -v.
const oomChild = "TCRT_TEST_OOM_CHILD"

// TestAllocBeyondHostIsAnError: under an address-space limit of 4 GiB
// (ulimit -v 4194304), allocations the host cannot back are
// ErrOutOfMemory, not a fatal error of the Go runtime: a 3.5 GiB and an
// 8 GiB buffer on runtimes opened with MemoryLimit MaxInt64 (which disables
// the runtime's own check) on the CPU and the simulated device, and 8 GiB
// of the simulator's own memory (sim.NewMemory().Alloc). Afterwards the
// process still allocates and uses a small buffer. The allocations run in a
// child process, so the limit does not touch the test binary.
func TestAllocBeyondHostIsAnError(t *testing.T) {
	if os.Getenv(oomChild) == "1" {
		oomChildMain(t)
		return
	}
	if goruntime.GOOS != "linux" {
		t.Skip("needs ulimit -v (Linux)")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(sh, "-c", `ulimit -v 4194304 && exec "$0" -test.run='^TestAllocBeyondHostIsAnError$' -test.v`, os.Args[0])
	cmd.Env = append(os.Environ(), oomChild+"=1", "GOMAXPROCS=2")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "oom-child: done") {
		t.Fatalf("child under ulimit -v 4 GiB: %v\n%s", err, out)
	}
}

func oomChildMain(t *testing.T) {
	ctx := context.Background()
	for _, k := range []engine.BackendKind{engine.BackendCPU, engine.BackendSim} {
		rt, err := engine.Open(engine.Options{Backend: k, MemoryLimit: math.MaxInt64})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{7 << 29, 8 << 30} {
			if b, err := rt.Alloc(tile.U8, n); !errors.Is(err, engine.ErrOutOfMemory) {
				t.Errorf("%s: Alloc(%d bytes) under ulimit -v 4 GiB: %v; want ErrOutOfMemory", k, n, err)
				if b != nil {
					b.Close()
				}
			}
		}
		b, err := rt.Alloc(tile.F32, 1000)
		if err != nil {
			t.Fatalf("%s: a small buffer after the refusals: %v", k, err)
		}
		if err := b.WriteFloat32(ctx, []float32{1, 2, 3}); err != nil {
			t.Fatal(err)
		}
		b.Close()
		rt.Close()
	}
	if _, err := sim.NewMemory().Alloc("x", 8<<30); !errors.Is(err, tile.ErrOutOfMemory) {
		t.Errorf("sim.NewMemory().Alloc(8 GiB): %v; want ErrOutOfMemory", err)
	}
	fmt.Println("oom-child: done")
}
