//go:build !nocuda

package cuda_test

// The purego driver and the backend over it, against testdata/fakecuda.c:
// a stand-in libcuda compiled here with the system C compiler. It checks
// what the stub library cannot: that every entry point is called with its
// arguments in the right places (11-argument launches included), that out
// parameters, strings and the JIT log buffers travel, and that every call
// needing the context comes from the thread it is current on.

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/ebitengine/purego"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/runtime/cuda"
	"github.com/tcrt-go/tcrt/runtime/cuda/driver"
	"github.com/tcrt-go/tcrt/tile"
)

// fakeLib builds the fake driver, or returns $TCRT_FAKE_CUDA: the fake
// already built as libcuda.so.1 on LD_LIBRARY_PATH, which is how the
// -tags cuda build (gorgonia.org/cu, linked at build time) runs against it.
func fakeLib(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TCRT_FAKE_CUDA"); p != "" {
		return p
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the fake driver:", err)
	}
	lib := filepath.Join(t.TempDir(), "libfakecuda.so")
	out, err := exec.Command(cc, "-shared", "-fPIC", "-O1", "-o", lib, filepath.Join("testdata", "fakecuda.c")).CombinedOutput()
	if err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	return lib
}

// callsWithoutContext reads the fake's count of calls made on a thread
// without the context current.
func callsWithoutContext(t *testing.T, lib string) int32 {
	t.Helper()
	h, err := purego.Dlopen(lib, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	var f func() int32
	purego.RegisterLibFunc(&f, h, "tcrt_fake_calls_without_context")
	return f()
}

func TestFakeDriver(t *testing.T) {
	lib := fakeLib(t)
	ctx := context.Background()
	t.Setenv("TCRT_BACKEND", "")
	rt, err := runtime.Open(runtime.Options{Backend: runtime.BackendCUDA, CUDALib: lib})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the backend's driver: %s", cuda.DriverName)
	d := rt.Device()
	if d.Name != "fake GPU" || d.SM() != 86 || d.SMs != 7 || d.MemoryBytes != 1<<30 || d.SharedPerBlockOptin != 101376 ||
		d.ClockKHz != 13000 || d.MemClockKHz != 36000 || d.MemBusWidth != 37000 || !d.JIT || d.Simulated || d.Backend != runtime.BackendCUDA {
		t.Fatalf("device %+v", d)
	}
	// host copies through the pinned chunks
	const n = 20<<20 + 5
	buf, err := rt.Alloc(tile.U8, n)
	if err != nil {
		t.Fatal(err)
	}
	src := make([]byte, n)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	if err := buf.Write(ctx, 0, src); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, n)
	if err := buf.Read(ctx, 0, got); err != nil || !bytes.Equal(got, src) {
		t.Fatalf("round trip: %v", err)
	}
	// a launch with every argument recognisable; above 48 KiB of shared
	// memory the backend must opt in first (the fake refuses otherwise)
	out, err := rt.Alloc(tile.U64, 10)
	if err != nil {
		t.Fatal(err)
	}
	po, _ := engine.DevicePtr(engine.Handles.Buffer(out))
	mod := &backend.Module{Name: "fake", Cubins: map[int][]byte{86: []byte("FAKE image")}}
	s, err := rt.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	start, err := s.Record()
	if err != nil {
		t.Fatal(err)
	}
	g := &engine.GPULaunch{Module: mod, Func: "probe", Grid: [3]int{3, 5, 7}, Block: [3]int{32, 2, 1}, SharedBytes: 64 << 10,
		Params: []uint64{po, 0x1122334455667788, 0xdeadbeef}}
	if err := engine.LaunchGPU(engine.Handles.Stream(s), g); err != nil {
		t.Fatal(err)
	}
	end, err := s.Record()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(ctx); err != nil {
		t.Fatal(err)
	}
	probe := make([]uint64, 10)
	if err := runtime.ReadRaw(ctx, out, probe); err != nil {
		t.Fatal(err)
	}
	want := []uint64{0x1122334455667788, 0xdeadbeef, 3, 5, 7, 32, 2, 1, 64 << 10, 1}
	for i := range want {
		if probe[i] != want[i] {
			t.Fatalf("the kernel saw %#x, want %#x", probe, want)
		}
	}
	if el, err := runtime.Elapsed(start, end); err != nil || el < 0 {
		t.Fatalf("elapsed %v, %v", el, err)
	}
	// a missing function and a refused image, with the driver's log
	if err := engine.LaunchGPU(engine.Handles.Stream(s), &engine.GPULaunch{Module: mod, Func: "nosuch", Params: []uint64{po}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(ctx); !errors.Is(err, runtime.ErrArgument) || !strings.Contains(err.Error(), "CUDA_ERROR_NOT_FOUND (500): named symbol not found") {
		t.Fatalf("missing function: %v", err)
	}
	bad := &backend.Module{Name: "junk", Cubins: map[int][]byte{86: []byte("junk")}}
	if err := engine.LaunchGPU(engine.Handles.Stream(s), &engine.GPULaunch{Module: bad, Func: "probe", Params: []uint64{po}}); err != nil {
		t.Fatal(err)
	}
	err = s.Synchronize(ctx)
	var de *driver.Error
	if !errors.Is(err, runtime.ErrUnsupported) || !errors.As(err, &de) || de.Log != "fake: the image does not start with FAKE" ||
		!strings.Contains(err.Error(), "CUDA_ERROR_INVALID_IMAGE") {
		t.Fatalf("bad image: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := buf.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if n := callsWithoutContext(t, lib); n != 0 {
		t.Fatalf("%d driver calls came from a thread without the context current", n)
	}
}

// TestFakeDriverDirect calls the purego driver's remaining entry points.
func TestFakeDriverDirect(t *testing.T) {
	lib := fakeLib(t)
	drv, err := driver.Load(lib)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := drv.Version(); err != nil || v != 12020 || !strings.Contains(drv.Name(), "purego") {
		t.Fatalf("version %d, %v (%s)", v, err, drv.Name())
	}
	if drv.ErrorName(999) != "CUDA_ERROR_UNKNOWN" || drv.ErrorString(1) != "invalid argument" {
		t.Fatal("error names: the driver's, else tcrt's table")
	}
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	if _, err := drv.MemAlloc(16); !driver.IsCode(err, driver.ErrorInvalidContext) {
		t.Fatalf("alloc without a context: %v", err)
	}
	c, err := drv.PrimaryCtxRetain(0)
	if err != nil {
		t.Fatal(err)
	}
	defer drv.PrimaryCtxRelease(0)
	if err := drv.CtxSetCurrent(c); err != nil {
		t.Fatal(err)
	}
	defer drv.CtxSetCurrent(0)
	mod, log, err := drv.ModuleLoadData([]byte("FAKE"))
	if err != nil || log.Info != "fake: info log" {
		t.Fatalf("load: %v, log %+v", err, log)
	}
	defer drv.ModuleUnload(mod)
	f, err := drv.ModuleGetFunction(mod, "probe")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := drv.FuncGetAttribute(f, driver.FuncNumRegs); err != nil || n != 40 {
		t.Fatalf("registers %d, %v", n, err)
	}
	if n, err := drv.OccupancyMaxActiveBlocks(f, 256, 64<<10); err != nil || n != 5 {
		t.Fatalf("occupancy %d, %v", n, err)
	}
	p, err := drv.MemAlloc(64)
	if err != nil {
		t.Fatal(err)
	}
	defer drv.MemFree(p)
	host := []byte("0123456789abcdef")
	back := make([]byte, 16)
	if err := drv.MemcpyHtoD(p, ptr(host), 16); err != nil {
		t.Fatal(err)
	}
	if err := drv.MemsetD8(p+4, 'x', 4); err != nil {
		t.Fatal(err)
	}
	if err := drv.MemcpyDtoH(ptr(back), p, 16); err != nil || string(back) != "0123xxxx89abcdef" {
		t.Fatalf("copies: %q, %v", back, err)
	}
	st, err := drv.StreamCreate()
	if err != nil {
		t.Fatal(err)
	}
	if err := drv.MemcpyDtoDAsync(p+16, p, 16, st); err != nil {
		t.Fatal(err)
	}
	ev, err := drv.EventCreate(driver.EventDisableTiming)
	if err != nil {
		t.Fatal(err)
	}
	if err := drv.EventRecord(ev, st); err != nil {
		t.Fatal(err)
	}
	if err := drv.StreamWaitEvent(st, ev); err != nil {
		t.Fatal(err)
	}
	if err := drv.EventSynchronize(ev); err != nil {
		t.Fatal(err)
	}
	if _, err := drv.EventElapsedTime(ev, ev); !driver.IsCode(err, driver.ErrorInvalidHandle) {
		t.Fatalf("elapsed of an untimed event: %v", err)
	}
	if err := drv.StreamSynchronize(st); err != nil {
		t.Fatal(err)
	}
	if err := drv.EventDestroy(ev); err != nil {
		t.Fatal(err)
	}
	if err := drv.StreamDestroy(st); err != nil {
		t.Fatal(err)
	}
	if err := drv.CtxSynchronize(); err != nil {
		t.Fatal(err)
	}
}

// TestFakeLoadSteps: the load steps after the symbols, each failing in
// its own copy of the fake (Load keeps one result per path).
func TestFakeLoadSteps(t *testing.T) {
	if os.Getenv("TCRT_FAKE_CUDA") != "" {
		t.Skip("uses copies of the fake built here")
	}
	lib := fakeLib(t)
	data, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		env, val string
		step     driver.Step
		want     string
	}{
		{"FAKE_CUDA_INIT", "100", driver.StepInit, "cuInit: CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected"},
		{"FAKE_CUDA_VERSION", "11000", driver.StepVersion, "driver 11.0 is older than 11.1"},
		{"FAKE_CUDA_DEVICES", "0", driver.StepNoDevice, "the driver reports no CUDA device"},
	} {
		p := filepath.Join(t.TempDir(), "libcuda-"+c.env+".so")
		if err := os.WriteFile(p, data, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv(c.env, c.val)
		_, err := driver.Load(p)
		var le *driver.LoadError
		if !errors.As(err, &le) || le.Step != c.step || !errors.Is(err, runtime.ErrNoDevice) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%s: %v", c.env, c.val, err)
		}
		t.Setenv(c.env, "")
	}
}
