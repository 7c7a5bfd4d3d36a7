package sim_test

// Tests of the CUDA backend (package runtime/cuda) over the simulator's
// driver: what runs on a real GPU above the driver layer, here in plain go
// test.

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/runtime/cuda"
	"github.com/tcrt-go/tcrt/runtime/cuda/driver"
	"github.com/tcrt-go/tcrt/runtime/sim"
	"github.com/tcrt-go/tcrt/tile"
)

func openBackend(t *testing.T, arch int) backend.Backend {
	t.Helper()
	be, err := sim.Open(backend.Options{Arch: arch})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := be.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return be
}

// TestStagedCopies: host copies larger than the two 8 MiB pinned staging
// chunks, at odd offsets and sizes, round-trip exactly; a cancelled copy
// stops with the context's error.
func TestStagedCopies(t *testing.T) {
	ctx := context.Background()
	be := openBackend(t, 86)
	const n = 20<<20 + 7
	m, err := be.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	// fresh memory reads as zeros
	zero := make([]byte, 4096)
	for i := range zero {
		zero[i] = 0xAA
	}
	if err := m.Read(ctx, n-4096, zero); err != nil || !bytes.Equal(zero, make([]byte, 4096)) {
		t.Fatalf("fresh memory: %v", err)
	}
	src := make([]byte, n-3)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	if err := m.Write(ctx, 3, src); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(src))
	for i := range got {
		got[i] = 0xFF
	}
	if err := m.Read(ctx, 3, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, src) {
		t.Fatal("20 MiB round trip differs")
	}
	part := make([]byte, 9<<20+1)
	if err := m.Read(ctx, 8<<20, part); err != nil || !bytes.Equal(part, src[8<<20-3:][:len(part)]) {
		t.Fatalf("partial read across chunks: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := m.Write(cctx, 0, src); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled write: %v", err)
	}
	if err := m.Read(cctx, 0, got); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled read: %v", err)
	}
	for _, c := range []struct{ off, n int }{{-1, 1}, {n, 1}, {n - 1, 2}, {1 << 62, 1}} {
		if err := m.Write(ctx, c.off, make([]byte, c.n)); !errors.Is(err, runtime.ErrBounds) {
			t.Errorf("write %d at %d: %v", c.n, c.off, err)
		}
		if err := m.Read(ctx, c.off, make([]byte, c.n)); !errors.Is(err, runtime.ErrBounds) {
			t.Errorf("read %d at %d: %v", c.n, c.off, err)
		}
	}
	if _, err := be.Alloc(0); !errors.Is(err, runtime.ErrArgument) {
		t.Fatalf("alloc 0: %v", err)
	}
	if _, err := be.Alloc(8 << 30); !errors.Is(err, runtime.ErrOutOfMemory) {
		t.Fatalf("alloc 8 GiB on a 4 GiB device: %v", err)
	}
}

// TestStreamOrder: work on one stream runs in order, an event orders a
// second stream after it, and events time and complete.
func TestStreamOrder(t *testing.T) {
	ctx := context.Background()
	rt := open(t, 86)
	out, err := rt.Alloc(tile.U32, 1024)
	if err != nil {
		t.Fatal(err)
	}
	po, _ := engine.DevicePtr(engine.Handles.Buffer(out))
	s1, err := rt.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	s2, err := rt.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	m := copyModule(t, "order", 16, [3]int{}, false)
	start, err := s1.Record()
	if err != nil {
		t.Fatal(err)
	}
	if err := engine.LaunchGPU(engine.Handles.Stream(s1), &engine.GPULaunch{Module: m, Func: "k", Grid: [3]int{1}, Block: [3]int{512}, Params: []uint64{po}}); err != nil {
		t.Fatal(err)
	}
	end, err := s1.Record()
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.WaitEvent(end); err != nil {
		t.Fatal(err)
	}
	// a host task on s2 runs after the kernel on s1 finished
	seen := make([]byte, 4*512)
	if err := s2.Enqueue(func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s2.Synchronize(ctx); err != nil {
		t.Fatal(err)
	}
	if !end.Done() || !start.Done() {
		t.Fatal("events not done after the waiting stream synchronized")
	}
	if d, err := runtime.Elapsed(start, end); err != nil || d < 0 {
		t.Fatalf("elapsed %v, %v", d, err)
	}
	if err := out.Read(ctx, 0, seen); err != nil {
		t.Fatal(err)
	}
	for i := range 512 {
		if v := uint32(seen[4*i]) | uint32(seen[4*i+1])<<8 | uint32(seen[4*i+2])<<16 | uint32(seen[4*i+3])<<24; v != uint32(i) {
			t.Fatalf("out[%d] = %d", i, v)
		}
	}
	// events of another device are refused
	other := open(t, 89)
	os2, err := other.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer os2.Close()
	if err := os2.WaitEvent(end); err == nil {
		t.Fatal("a stream waited on another device's event")
	}
}

// TestWorkInFlight: while the device has not reached an event, Done is
// false and a Synchronize with a deadline returns it; the work then
// completes and reports nothing.
func TestWorkInFlight(t *testing.T) {
	ctx := context.Background()
	rt := open(t, 89)
	out, err := rt.Alloc(tile.U32, 64)
	if err != nil {
		t.Fatal(err)
	}
	po, _ := engine.DevicePtr(engine.Handles.Buffer(out))
	m := copyModule(t, "held", 16, [3]int{}, false)
	s, err := rt.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hold := make(chan struct{})
	sim.SetHold(89, hold)
	defer sim.SetHold(89, nil)
	if err := engine.LaunchGPU(engine.Handles.Stream(s), &engine.GPULaunch{Module: m, Func: "k", Grid: [3]int{1}, Block: [3]int{64}, Params: []uint64{po}}); err != nil {
		t.Fatal(err)
	}
	ev, err := s.Record()
	if err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := ev.Wait(tctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait on held work: %v", err)
	}
	if ev.Done() {
		t.Fatal("event done while the device is held")
	}
	tctx2, cancel2 := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel2()
	if err := s.Synchronize(tctx2); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("synchronize on held work: %v", err)
	}
	sim.SetHold(89, nil)
	close(hold)
	if err := s.Synchronize(ctx); err != nil {
		t.Fatal(err)
	}
	if !ev.Done() {
		t.Fatal("event not done")
	}
	got := make([]uint32, 64)
	if err := runtime.ReadRaw(ctx, out, got); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != uint32(i) {
			t.Fatalf("out[%d] = %d", i, v)
		}
	}
}

// TestFaultMapping: an out-of-bounds store is CUDA's illegal address,
// wrapping ErrDevice and naming the kernel and the place; it is reported
// once and the device stays usable.
func TestFaultMapping(t *testing.T) {
	ctx := context.Background()
	rt := open(t, 86)
	out, err := rt.Alloc(tile.U32, 64)
	if err != nil {
		t.Fatal(err)
	}
	po, _ := engine.DevicePtr(engine.Handles.Buffer(out))
	m := copyModule(t, "faulty", 16, [3]int{}, false)
	s := rt.DefaultStream()
	launch := func(p uint64) error {
		if err := engine.LaunchGPU(engine.Handles.Stream(s), &engine.GPULaunch{Module: m, Func: "k", Grid: [3]int{1}, Block: [3]int{64}, Params: []uint64{p}}); err != nil {
			return err
		}
		return s.Synchronize(ctx)
	}
	err = launch(0x100)
	var de *driver.Error
	if !errors.Is(err, runtime.ErrDevice) || !errors.As(err, &de) || de.Code != driver.ErrorIllegalAddress ||
		!strings.Contains(err.Error(), "kernel k faulted in CTA (0,0,0), warp 0, lane 0") {
		t.Fatalf("out-of-bounds store: %v", err)
	}
	if err := s.Synchronize(ctx); err != nil {
		t.Fatalf("the fault was reported twice: %v", err)
	}
	if err := launch(po); err != nil {
		t.Fatal(err)
	}
}

// TestLoadLogs: images the driver refuses carry its log text.
func TestLoadLogs(t *testing.T) {
	be := openBackend(t, 86)
	ml := be.(backend.ModuleLoader)
	for _, c := range []struct {
		img  []byte
		code driver.Result
		log  string
	}{
		{[]byte("not an ELF"), driver.ErrorInvalidImage, "neither a cubin"},
		{[]byte("\x7fELF truncated"), driver.ErrorInvalidImage, "tcrt simulator: cubin:"},
		{[]byte(".version 7.0\n.target sm_86\n"), driver.ErrorJITCompilerNotFound, "compiles no PTX"},
	} {
		m := &backend.Module{Name: "bad " + string(c.img), Cubins: map[int][]byte{86: c.img}}
		err := ml.CanLoad(m)
		var de *driver.Error
		if !errors.Is(err, runtime.ErrUnsupported) || !errors.As(err, &de) || de.Code != c.code ||
			!strings.Contains(de.Log, c.log) || !strings.Contains(err.Error(), "driver log:") {
			t.Errorf("%q: %v", c.img, err)
		}
		// the refusal is kept: a second check answers the same
		if err2 := ml.CanLoad(m); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("%q: second load %v", c.img, err2)
		}
	}
	if err := ml.CanLoad(nil); !errors.Is(err, runtime.ErrArgument) {
		t.Errorf("nil module: %v", err)
	}
}

// TestSharedOptIn: above 48 KiB of dynamic shared memory the backend opts
// the function in first, as a real driver requires.
func TestSharedOptIn(t *testing.T) {
	ctx := context.Background()
	rt := open(t, 86)
	out, err := rt.Alloc(tile.U32, 64)
	if err != nil {
		t.Fatal(err)
	}
	po, _ := engine.DevicePtr(engine.Handles.Buffer(out))
	m := copyModule(t, "shared", 16, [3]int{}, false)
	s := rt.DefaultStream()
	for _, sh := range []int{0, 48 << 10, 64 << 10, 96 << 10} {
		if err := engine.LaunchGPU(engine.Handles.Stream(s), &engine.GPULaunch{Module: m, Func: "k", Grid: [3]int{2}, Block: [3]int{64}, SharedBytes: sh, Params: []uint64{po}}); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(ctx); err != nil {
			t.Fatalf("%d bytes of dynamic shared memory: %v", sh, err)
		}
	}
}

// TestDriverDirect drives the simulator's driver without the backend: the
// checks a real driver makes that the backend never provokes.
func TestDriverDirect(t *testing.T) {
	drv, err := sim.Driver(86)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.Driver(75); !errors.Is(err, runtime.ErrNoDevice) {
		t.Fatalf("sm_75: %v", err)
	}
	code := func(err error) driver.Result {
		var de *driver.Error
		if !errors.As(err, &de) {
			return driver.Success
		}
		return de.Code
	}
	if _, err := drv.DeviceGet(1); code(err) != driver.ErrorInvalidDevice {
		t.Fatalf("device 1: %v", err)
	}
	if _, err := drv.DeviceAttribute(0, 9999); code(err) != driver.ErrorInvalidValue {
		t.Fatalf("unknown attribute: %v", err)
	}
	if err := drv.CtxSetCurrent(42); code(err) != driver.ErrorInvalidContext {
		t.Fatalf("bad context: %v", err)
	}
	ctx, err := drv.PrimaryCtxRetain(0)
	if err != nil {
		t.Fatal(err)
	}
	defer drv.PrimaryCtxRelease(0)
	if err := drv.CtxSetCurrent(ctx); err != nil {
		t.Fatal(err)
	}
	mod, _, err := drv.ModuleLoadData(copyModule(t, "direct", 32, [3]int{}, false).Cubins[86])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drv.ModuleGetFunction(mod, "nosuch"); code(err) != driver.ErrorNotFound {
		t.Fatalf("missing function: %v", err)
	}
	f, err := drv.ModuleGetFunction(mod, "k")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := drv.FuncGetAttribute(f, driver.FuncNumRegs); err != nil || n != 32 {
		t.Fatalf("registers %d, %v", n, err)
	}
	if n, err := drv.FuncGetAttribute(f, driver.FuncMaxDynamicSharedMem); err != nil || n != 48<<10 {
		t.Fatalf("default dynamic shared limit %d, %v", n, err)
	}
	p, err := drv.MemAlloc(4096)
	if err != nil {
		t.Fatal(err)
	}
	defer drv.MemFree(p)
	st, err := drv.StreamCreate()
	if err != nil {
		t.Fatal(err)
	}
	defer drv.StreamDestroy(st)
	one := [3]uint32{1, 1, 1}
	if err := drv.LaunchKernel(f, one, [3]uint32{64, 1, 1}, 64<<10, st, []uint64{uint64(p)}); code(err) != driver.ErrorInvalidValue {
		t.Fatalf("64 KiB without opting in: %v", err)
	}
	if err := drv.FuncSetAttribute(f, driver.FuncMaxDynamicSharedMem, 200<<10); code(err) != driver.ErrorInvalidValue {
		t.Fatalf("opt in to 200 KiB: %v", err)
	}
	if err := drv.FuncSetAttribute(f, driver.FuncMaxDynamicSharedMem, 64<<10); err != nil {
		t.Fatal(err)
	}
	if err := drv.LaunchKernel(f, one, [3]uint32{64, 1, 1}, 64<<10, st, []uint64{uint64(p)}); err != nil {
		t.Fatal(err)
	}
	if err := drv.LaunchKernel(f, [3]uint32{1, 70000, 1}, one, 0, st, []uint64{uint64(p)}); code(err) != driver.ErrorInvalidValue {
		t.Fatalf("grid.y 70000: %v", err)
	}
	if err := drv.StreamSynchronize(st); err != nil {
		t.Fatal(err)
	}
	// 32 registers: 2048 threads' worth of the register file, but an SM
	// holds 1536 threads; 64 KiB of shared memory fits one block in 100 KiB
	if n, err := drv.OccupancyMaxActiveBlocks(f, 256, 0); err != nil || n != 6 {
		t.Fatalf("occupancy at 256 threads: %d, %v", n, err)
	}
	if n, err := drv.OccupancyMaxActiveBlocks(f, 256, 64<<10); err != nil || n != 1 {
		t.Fatalf("occupancy with 64 KiB: %d, %v", n, err)
	}
	if _, err := drv.OccupancyMaxActiveBlocks(f, 0, 0); code(err) != driver.ErrorInvalidValue {
		t.Fatalf("occupancy of an empty block: %v", err)
	}
	// copies check their spans when issued
	if err := drv.MemcpyDtoDAsync(p, p+4000, 200, st); code(err) != driver.ErrorInvalidValue {
		t.Fatalf("copy past the allocation: %v", err)
	}
	if err := drv.MemsetD8(p+1<<40, 0, 1); code(err) != driver.ErrorInvalidValue {
		t.Fatalf("memset of unmapped memory: %v", err)
	}
	if err := drv.MemFree(p + 8); code(err) != driver.ErrorInvalidValue {
		t.Fatalf("free inside an allocation: %v", err)
	}
	// events
	nt, err := drv.EventCreate(driver.EventDisableTiming)
	if err != nil {
		t.Fatal(err)
	}
	defer drv.EventDestroy(nt)
	ev, err := drv.EventCreate(driver.EventDefault)
	if err != nil {
		t.Fatal(err)
	}
	if err := drv.EventQuery(ev); err != nil {
		t.Fatalf("an event never recorded is complete: %v", err)
	}
	if err := drv.EventRecord(ev, st); err != nil {
		t.Fatal(err)
	}
	if err := drv.EventRecord(nt, st); err != nil {
		t.Fatal(err)
	}
	if err := drv.EventSynchronize(ev); err != nil {
		t.Fatal(err)
	}
	if _, err := drv.EventElapsedTime(ev, nt); code(err) != driver.ErrorInvalidHandle {
		t.Fatalf("elapsed to an untimed event: %v", err)
	}
	if ms, err := drv.EventElapsedTime(ev, ev); err != nil || ms != 0 {
		t.Fatalf("elapsed %v, %v", ms, err)
	}
	if err := drv.EventDestroy(ev); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"query":   drv.EventQuery(ev),
		"record":  drv.EventRecord(ev, st),
		"wait":    drv.StreamWaitEvent(st, ev),
		"destroy": drv.EventDestroy(ev),
		"stream":  drv.StreamSynchronize(12345),
		"unload":  drv.ModuleUnload(12345),
		"freehst": drv.MemFreeHost(nil),
	} {
		if c := code(err); c != driver.ErrorInvalidHandle && c != driver.ErrorInvalidValue {
			t.Errorf("%s of a bad handle: %v", name, err)
		}
	}
	if err := drv.ModuleUnload(mod); err != nil {
		t.Fatal(err)
	}
	if _, err := drv.FuncGetAttribute(f, driver.FuncNumRegs); code(err) != driver.ErrorInvalidHandle {
		t.Fatalf("function of an unloaded module: %v", err)
	}
	if got := cuda.Sentinel(driver.ErrorLaunchFailed); got != runtime.ErrDevice {
		t.Fatalf("launch failure maps to %v", got)
	}
}

// TestEventOutlivesGC: a driver event is destroyed when its Go value is
// collected; one being waited on must not be, however often the GC runs
// during the wait.
func TestEventOutlivesGC(t *testing.T) {
	ctx := context.Background()
	rt := open(t, 89)
	s, err := rt.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 3 {
		hold := make(chan struct{})
		sim.SetHold(89, hold)
		go func() {
			for range 10 {
				time.Sleep(2 * time.Millisecond)
				goruntime.GC()
			}
			sim.SetHold(89, nil)
			close(hold)
		}()
		// nothing but the wait holds the event
		err := func() error {
			ev, err := s.Record()
			if err != nil {
				return err
			}
			return ev.Wait(ctx)
		}()
		if err != nil {
			t.Fatalf("wait across GCs: %v", err)
		}
	}
}
