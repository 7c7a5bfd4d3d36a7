// Package sim is a simulated SM86/SM89 GPU: a driver (the
// runtime/cuda/driver interface) over the sass functional simulator, under
// tcrt's one CUDA backend (package runtime/cuda).
// runtime.Open(runtime.Options{Backend: "sim"}) or TCRT_BACKEND=sim gives a
// runtime whose GPU kernels run in the simulator, through the same
// registry, Supports rules, launch plans and parameter packing as on a
// real GPU, and through the same backend code as CUDA: the device worker,
// streams, events, staged host copies, the pool, module selection and the
// mapping of result codes to errors. Package ops imports it, so every
// program using ops can open it.
//
// The device. By default it models an NVIDIA A10 (sm_86: 72 SMs, 48 KiB of
// shared memory per block and 99 KiB by opt-in, 100 KiB per SM, 65,536
// registers per SM, 6 MiB of L2); with Options.SimArch or TCRT_SIM_ARCH=89
// an NVIDIA L4 (sm_89: 58 SMs, 48 MiB of L2). Device memory is host memory
// mapped at device addresses in the simulator's global memory, allocated
// through the CUDA backend's caching pool (backend.Pool); the simulated
// memory size is 4 GiB (a real A10 or L4 has 24 GiB), which also bounds
// what a test can allocate.
//
// Streams and events keep CUDA's ordering and error semantics: the driver
// runs each stream's copies, kernels and event records in order on the
// stream's own goroutine, so a launch or an async copy returns at once; a
// fault is reported by the stream's next event (and so its next
// Synchronize, or a synchronous op call); events order streams and
// complete in stream order.
//
// Modules load with the real device's selection rule (backend.Module.Select):
// the cubin for the newest architecture the device runs. The simulator
// compiles no PTX (Device.JIT is false), so a module that has only PTX for
// this device is refused with that reason, and the driver refuses a cubin
// holding instructions the simulator does not model, with the reason in its
// load log (Explain shows both; such kernels give way to others or to the
// host fallback). Parameters are laid out at the offsets the cubin
// records. A launch is checked as the driver checks it: threads per block
// (at most 1024, and the kernel's recorded maximum or required block),
// dynamic shared memory within the function's limit (above 48 KiB only
// after the backend opts in, up to the opt-in maximum), registers × threads
// within the SM's register file.
//
// A fault in a kernel (an out-of-bounds or misaligned access, a barrier
// deadlock, an instruction the simulator does not model, a runaway loop)
// becomes the result code CUDA reports (CUDA_ERROR_ILLEGAL_ADDRESS, …), an
// error wrapping tile.ErrDevice that names the kernel, the CTA, warp and
// lane, the instruction and the address.
//
// Where it differs from hardware: there is no timing (Elapsed measures
// host time, and benchmarks report simulated instruction counts, not
// throughput); CTAs run in an unspecified order on GOMAXPROCS workers, so
// unordered atomics still vary in order; launches on different streams do
// not overlap (the device runs one at a time); and a fault is not sticky:
// on real CUDA an illegal address poisons the context, here it is reported
// once and later launches run. Memory a faulting kernel wrote before its
// fault stays written, as on hardware. Runtimes opened on one architecture
// share its device (memory, counters), as CUDA runtimes share a GPU.
package sim

import (
	"slices"

	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/runtime/cuda"
	"github.com/tcrt-go/tcrt/runtime/cuda/driver"
	"github.com/tcrt-go/tcrt/sass/cubin"
)

// MemoryBytes is the simulated device memory.
const MemoryBytes = 4 << 30

// parts are the devices the simulator models, by compute capability.
var parts = map[int]backend.Device{
	86: {Name: "simulated NVIDIA A10", Major: 8, Minor: 6, SMs: 72, L2CacheBytes: 6 << 20,
		ClockKHz: 1695000, MemClockKHz: 6251000, MemBusWidth: 384},
	89: {Name: "simulated NVIDIA L4", Major: 8, Minor: 9, SMs: 58, L2CacheBytes: 48 << 20,
		ClockKHz: 2040000, MemClockKHz: 6251000, MemBusWidth: 192},
}

// Archs lists the compute capabilities the simulator models.
func Archs() []int {
	out := make([]int, 0, len(parts))
	for a := range parts {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

func init() {
	backend.Register(backend.Registration{Kind: backend.Sim, Open: Open, Devices: devices})
}

// devices lists one device per modelled architecture, as the backend
// reads them from the simulator's driver.
func devices() ([]backend.Device, error) {
	var out []backend.Device
	for _, a := range Archs() {
		drv, err := Driver(a)
		if err != nil {
			return nil, err
		}
		ds, err := cuda.Devices(config(drv, backend.Options{}))
		if err != nil {
			return nil, err
		}
		out = append(out, ds...)
	}
	return out, nil
}

func device(arch int) backend.Device {
	d := parts[arch]
	d.Backend = backend.Sim
	d.Vendor = "tcrt"
	d.MemoryBytes = MemoryBytes
	d.SharedPerBlock = 48 << 10
	d.SharedPerBlockOptin = cubin.MaxSharedBytes
	d.SharedPerSM = 100 << 10
	d.RegistersPerSM = 65536
	d.RegistersPerBlock = 65536
	d.MaxThreadsPerBlock = 1024
	d.Simulated = true
	return d
}

// Open opens the CUDA backend on the simulated device of compute
// capability opts.Arch (86 when 0).
func Open(opts backend.Options) (backend.Backend, error) {
	arch := opts.Arch
	if arch == 0 {
		arch = 86
	}
	drv, err := Driver(arch)
	if err != nil {
		return nil, err
	}
	opts.Device = 0 // the simulator models one device per architecture
	return cuda.Open(config(drv, opts))
}

// config is the CUDA backend's configuration for the simulated device.
func config(drv driver.Driver, opts backend.Options) cuda.Config {
	return cuda.Config{Driver: drv, Kind: backend.Sim, Vendor: "tcrt", NoJIT: true, Simulated: true, Options: opts}
}
