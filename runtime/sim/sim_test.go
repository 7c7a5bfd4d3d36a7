package sim_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/runtime/sim"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
	"github.com/tcrt-go/tcrt/tile"
)

func open(t *testing.T, arch int) *runtime.Runtime {
	t.Helper()
	rt, err := runtime.Open(runtime.Options{Backend: runtime.BackendSim, SimArch: arch})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// copyModule is a test module: one kernel storing its thread index to
// out[tid] (out is parameter 0), with the given register count and
// required block.
func copyModule(t *testing.T, name string, regs int, req [3]int, ptxToo bool) *backend.Module {
	t.Helper()
	p, err := sass.Parse(`
S2R R0, SR_TID.X ;
MOV R2, c[0x0][0x160] ;
MOV R3, c[0x0][0x164] ;
IMAD.WIDE.U32 R2, R0, 0x4, R2 ;
STG.E [R2.64], R0 ;
EXIT ;
BRA 0x60 ;
`)
	if err != nil {
		t.Fatal(err)
	}
	code, err := sass.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cubin.Write(86, cubin.Kernel{Name: "k", Code: code, Registers: regs, ReqThreads: req,
		Params: []cubin.Param{{Size: 8, Align: 8}}})
	if err != nil {
		t.Fatal(err)
	}
	m := &backend.Module{Name: name, Cubins: map[int][]byte{86: c}}
	if ptxToo {
		m.PTX, m.PTXTarget = []byte("// not compiled here\n"), 80
	}
	return m
}

func TestDevice(t *testing.T) {
	for _, arch := range sim.Archs() {
		rt := open(t, arch)
		d := rt.Device()
		if d.SM() != arch || !d.GPU() || !d.Simulated || d.JIT || d.SMs == 0 || d.SharedPerBlock != 48<<10 ||
			d.SharedPerBlockOptin != 101376 || d.RegistersPerSM != 65536 || d.Backend != runtime.BackendSim {
			t.Fatalf("sm_%d: device %+v", arch, d)
		}
	}
	reg, ok := backend.Lookup(backend.Sim)
	if !ok {
		t.Fatal("sim is not registered")
	}
	devs, err := reg.Devices()
	if err != nil || len(devs) != len(sim.Archs()) {
		t.Fatalf("devices %v, %v", devs, err)
	}
	for i, d := range devs {
		if d.SM() != sim.Archs()[i] || !reflect.DeepEqual(d, open(t, d.SM()).Device()) {
			t.Fatalf("listed %+v", d)
		}
	}
	if why := open(t, 86).BackendReason(); why != "sim (asked for; driver tcrt simulator (sm_86))" {
		t.Fatalf("reason %q", why)
	}
	if _, err := runtime.Open(runtime.Options{Backend: runtime.BackendSim, SimArch: 75}); !errors.Is(err, runtime.ErrNoDevice) {
		t.Fatalf("sm_75: %v, want ErrNoDevice", err)
	}
	// auto never picks the simulator
	rt, err := runtime.Open(runtime.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if rt.Backend() == runtime.BackendSim {
		t.Fatal("auto opened the simulated device")
	}
}

func TestLaunchAndChecks(t *testing.T) {
	ctx := context.Background()
	rt := open(t, 86)
	out, err := rt.Alloc(tile.U32, 1024)
	if err != nil {
		t.Fatal(err)
	}
	po, _ := engine.DevicePtr(engine.Handles.Buffer(out))
	s := rt.DefaultStream()
	run := func(m *backend.Module, block int) error {
		if err := engine.LaunchGPU(engine.Handles.Stream(s), &engine.GPULaunch{Module: m, Func: "k", Grid: [3]int{1}, Block: [3]int{block}, Params: []uint64{po}}); err != nil {
			return err
		}
		return s.Synchronize(ctx)
	}
	if err := run(copyModule(t, "ok", 16, [3]int{}, false), 256); err != nil {
		t.Fatal(err)
	}
	got := make([]uint32, 1024)
	if err := runtime.ReadRaw(ctx, out, got); err != nil {
		t.Fatal(err)
	}
	for i := range 256 {
		if got[i] != uint32(i) {
			t.Fatalf("out[%d] = %d", i, got[i])
		}
	}
	if c, ok := rt.DeviceCounters(); !ok || c.Launches != 1 || c.WarpInstructions != 8*7-8 {
		t.Fatalf("counters %+v %v", c, ok)
	}
	// 255 registers a thread: 1024 threads need 261,120 registers
	if err := run(copyModule(t, "fat", 255, [3]int{}, false), 1024); !errors.Is(err, runtime.ErrArgument) || !strings.Contains(err.Error(), "registers") {
		t.Fatalf("register-file overflow: %v", err)
	}
	if err := run(copyModule(t, "req", 16, [3]int{128, 1, 1}, false), 64); !errors.Is(err, runtime.ErrArgument) || !strings.Contains(err.Error(), "required") {
		t.Fatalf("required block: %v", err)
	}
	if err := engine.LaunchGPU(engine.Handles.Stream(s), &engine.GPULaunch{Module: copyModule(t, "ok", 16, [3]int{}, false), Func: "nosuch", Params: []uint64{po}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(ctx); !errors.Is(err, runtime.ErrArgument) || !strings.Contains(err.Error(), "no such kernel") {
		t.Fatalf("missing kernel: %v", err)
	}
	if err := engine.LaunchGPU(engine.Handles.Stream(s), &engine.GPULaunch{Module: copyModule(t, "ok", 16, [3]int{}, false), Func: "k"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(ctx); !errors.Is(err, runtime.ErrArgument) || !strings.Contains(err.Error(), "parameters") {
		t.Fatalf("missing parameters: %v", err)
	}
	// too much dynamic shared memory is refused before it is enqueued
	err = engine.LaunchGPU(engine.Handles.Stream(s), &engine.GPULaunch{Module: copyModule(t, "ok", 16, [3]int{}, false), Func: "k", SharedBytes: 200 << 10, Params: []uint64{po}})
	if !errors.Is(err, runtime.ErrArgument) {
		t.Fatalf("200 KiB of shared memory: %v", err)
	}
}

// TestModuleRule: the driver's image rule, with the simulator's refusals.
func TestModuleRule(t *testing.T) {
	be, err := sim.Open(backend.Options{Arch: 86})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	ml := be.(backend.ModuleLoader)
	onlyPTX := &backend.Module{Name: "p", PTX: []byte("x"), PTXTarget: 80}
	if err := ml.CanLoad(onlyPTX); !errors.Is(err, runtime.ErrUnsupported) || !strings.Contains(err.Error(), "compiles no PTX") {
		t.Fatalf("PTX-only module: %v", err)
	}
	if err := ml.CanLoad(copyModule(t, "both", 16, [3]int{}, true)); err != nil {
		t.Fatalf("module with an sm_86 cubin and PTX: %v", err)
	}
	sm90 := &backend.Module{Name: "h", Cubins: map[int][]byte{90: {1}}}
	if err := ml.CanLoad(sm90); !errors.Is(err, runtime.ErrUnsupported) {
		t.Fatalf("sm_90 cubin on sm_86: %v", err)
	}
	bad := &backend.Module{Name: "junk", Cubins: map[int][]byte{86: []byte("not an ELF")}}
	if err := ml.CanLoad(bad); !errors.Is(err, runtime.ErrUnsupported) {
		t.Fatalf("junk cubin: %v", err)
	}
}

// TestMemory: allocation limits, bounds and the pool's segments.
func TestMemory(t *testing.T) {
	ctx := context.Background()
	rt, err := runtime.Open(runtime.Options{Backend: runtime.BackendSim, MemoryLimit: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if _, err := rt.Alloc(tile.U8, 64<<20); !errors.Is(err, runtime.ErrOutOfMemory) {
		t.Fatalf("64 MiB under an 8 MiB limit: %v", err)
	}
	b, err := rt.Alloc(tile.U8, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Write(ctx, 990, make([]byte, 20)); !errors.Is(err, runtime.ErrBounds) {
		t.Fatalf("write past the end: %v", err)
	}
	src := []byte("simulated device memory")
	if err := b.Write(ctx, 7, src); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(src))
	if err := b.Read(ctx, 7, got); err != nil || string(got) != string(src) {
		t.Fatalf("read back %q, %v", got, err)
	}
	if engine.Handles.Buffer(b).Host() != nil {
		t.Fatal("device memory is host-addressable")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if st := rt.PoolStats(); st.Allocs == 0 || st.LiveBlocks != 0 {
		t.Fatalf("pool %+v", st)
	}
	if _, err := rt.TrimPool(); err != nil {
		t.Fatal(err)
	}
}
