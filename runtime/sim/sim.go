// Package sim is a simulated SM86/SM89 GPU behind tcrt's device seam
// (package runtime/backend): runtime.Open(runtime.Options{Backend: "sim"})
// or TCRT_BACKEND=sim gives a runtime whose GPU kernels run in the sass
// functional simulator, through the same registry, Supports rules, launch
// plans and parameter packing as on a real GPU. Package ops imports it, so
// every program using ops can open it.
//
// The device. By default it models an NVIDIA A10 (sm_86: 72 SMs, 48 KiB of
// shared memory per block and 99 KiB by opt-in, 100 KiB per SM, 65,536
// registers per SM, 6 MiB of L2); with Options.SimArch or TCRT_SIM_ARCH=89
// an NVIDIA L4 (sm_89: 58 SMs, 48 MiB of L2). Device memory is host memory
// mapped at device addresses in the simulator's global memory, allocated
// through the same caching pool as CUDA (backend.Pool); the simulated
// memory size is 4 GiB (a real A10 or L4 has 24 GiB), which also bounds
// what a test can allocate.
//
// Streams and events keep CUDA's ordering and error semantics: a launch
// returns at once and runs in stream order on the stream's worker; a fault
// is reported by the stream's next Synchronize (or by a synchronous op
// call); events order streams and complete in stream order.
//
// Modules load with the real device's selection rule (ptx.Module.Select):
// the cubin for the newest architecture the device runs. The simulator
// compiles no PTX, so a module that has only PTX for this device is refused
// with that reason, and so is a cubin holding instructions the simulator
// does not model (Explain shows both; such kernels give way to others or to
// the host fallback). Parameters are laid out at the offsets the cubin
// records. A launch is checked as the driver checks it: threads per block
// (at most 1024, and the kernel's recorded maximum or required block),
// static plus dynamic shared memory within the opt-in maximum, registers ×
// threads within the SM's register file.
//
// A fault in a kernel (an out-of-bounds or misaligned access, a barrier
// deadlock, an instruction the simulator does not model, a runaway loop)
// becomes an error wrapping tile.ErrDevice that names the kernel, the CTA,
// warp and lane, the instruction and the address.
//
// Where it differs from hardware: there is no timing (Elapsed measures
// host time, and benchmarks report simulated instruction counts, not
// throughput); CTAs run in an unspecified order on GOMAXPROCS workers, so
// unordered atomics still vary in order; launches on different streams do
// not overlap (the device runs one at a time); and a fault is not sticky:
// on real CUDA an illegal address poisons the context, here the runtime
// stays usable and later launches run. Memory a faulting kernel wrote
// before its fault stays written, as on hardware.
package sim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tcrt-go/tcrt/kernels/ptx"
	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
	sasssim "github.com/tcrt-go/tcrt/sass/sim"
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

func devices() ([]backend.Device, error) {
	var out []backend.Device
	for _, a := range Archs() {
		out = append(out, device(a))
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

// Backend is an opened simulated device.
type Backend struct {
	dev  backend.Device
	mem  *sasssim.Memory
	pool *backend.Pool

	// mu serialises launches against each other and against allocation
	// and host copies: the simulator's memory map must not change during a
	// launch, and a launch's bytes are not read or written by the host
	// meanwhile.
	mu sync.Mutex

	launches  atomic.Int64
	warpInsts atomic.Int64
	thrInsts  atomic.Int64
}

// Open opens a simulated device of compute capability opts.Arch (86 when
// 0).
func Open(opts backend.Options) (backend.Backend, error) {
	arch := opts.Arch
	if arch == 0 {
		arch = 86
	}
	if _, ok := parts[arch]; !ok {
		return nil, fmt.Errorf("tcrt: open: backend sim: architecture %d is not modelled (want %v): %w", arch, Archs(), backend.ErrNoDevice)
	}
	b := &Backend{dev: device(arch), mem: sasssim.NewMemory()}
	limit := int64(MemoryBytes)
	if opts.MemoryLimit > 0 {
		limit = min(limit, opts.MemoryLimit)
	}
	b.pool = backend.NewPool(allocator{b}, limit)
	return b, nil
}

// Kind is backend.Sim.
func (b *Backend) Kind() backend.Kind { return backend.Sim }

// Device describes the simulated part.
func (b *Backend) Device() backend.Device { return b.dev }

// PoolStats returns the pool's numbers.
func (b *Backend) PoolStats() backend.PoolStats { return b.pool.Stats() }

// TrimPool returns cached segments.
func (b *Backend) TrimPool() (int64, error) { return b.pool.Trim() }

// Close releases the device memory.
func (b *Backend) Close() error { return b.pool.Close() }

// Counters returns what the device has executed so far.
func (b *Backend) Counters() backend.Counters {
	return backend.Counters{Launches: b.launches.Load(), WarpInstructions: b.warpInsts.Load(), ThreadInstructions: b.thrInsts.Load()}
}

// allocator gives the pool segments of host memory mapped into the
// simulator's address space.
type allocator struct{ b *Backend }

var segments atomic.Int64

func (a allocator) AllocSegment(n int64) (uint64, error) {
	if n <= 0 || n > MemoryBytes {
		return 0, fmt.Errorf("tcrt: sim: a %d-byte segment exceeds the simulated device memory: %w", n, backend.ErrOutOfMemory)
	}
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	addr, err := a.b.mem.Alloc("seg"+strconv.FormatInt(segments.Add(1), 10), int(n))
	if err != nil {
		return 0, fmt.Errorf("tcrt: sim: %v: %w", err, backend.ErrOutOfMemory)
	}
	return addr, nil
}

func (a allocator) FreeSegment(base uint64, n int64) error {
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	_, err := a.b.mem.Unmap(base)
	return err
}

func (a allocator) Synchronize() error {
	// Launches hold mu while they run: taking it waits for the one running.
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	return nil
}

// memory is one buffer: a pool block and its bytes in the simulator's
// memory (the segment's slice, which lives as long as the block).
type memory struct {
	b      *Backend
	blk    *backend.PoolBlock
	data   []byte
	staged atomic.Pointer[[]byte]
}

// Alloc returns n zeroed bytes of device memory.
func (b *Backend) Alloc(n int) (backend.Memory, error) {
	if n <= 0 {
		return nil, fmt.Errorf("tcrt: sim: alloc of %d bytes: %w", n, backend.ErrArgument)
	}
	blk, err := b.pool.Alloc(int64(n))
	if err != nil {
		return nil, err
	}
	name, off, ok := b.mem.Locate(blk.Addr())
	if !ok {
		blk.Release()
		return nil, fmt.Errorf("tcrt: sim: pool block at %#x is in no mapped segment: %w", blk.Addr(), backend.ErrDevice)
	}
	m := &memory{b: b, blk: blk, data: b.mem.Bytes(name)[off : off+uint64(n) : off+uint64(n)]}
	b.mu.Lock()
	clear(m.data)
	b.mu.Unlock()
	return m, nil
}

func (m *memory) Host() []byte {
	if p := m.staged.Load(); p != nil {
		return *p
	}
	return nil
}

func (m *memory) SetStaged(b []byte) {
	if b == nil {
		m.staged.Store(nil)
		return
	}
	m.staged.Store(&b)
}

func (m *memory) DevicePtr() uint64 { return m.blk.Addr() }

func (m *memory) Write(_ context.Context, off int, src []byte) error {
	if off < 0 || off > len(m.data) || len(src) > len(m.data)-off {
		return fmt.Errorf("tcrt: sim: write of %d bytes at %d into %d: %w", len(src), off, len(m.data), backend.ErrBounds)
	}
	m.b.mu.Lock()
	defer m.b.mu.Unlock()
	copy(m.data[off:], src)
	return nil
}

func (m *memory) Read(_ context.Context, off int, dst []byte) error {
	if off < 0 || off > len(m.data) || len(dst) > len(m.data)-off {
		return fmt.Errorf("tcrt: sim: read of %d bytes at %d from %d: %w", len(dst), off, len(m.data), backend.ErrBounds)
	}
	m.b.mu.Lock()
	defer m.b.mu.Unlock()
	copy(dst, m.data[off:])
	return nil
}

func (m *memory) Free() error {
	m.blk.Release()
	return nil
}

// stream issues host tasks and launches in order through a host queue.
type stream struct {
	b *Backend
	q *backend.Queue
}

// NewStream returns a stream.
func (b *Backend) NewStream() (backend.Stream, error) {
	return &stream{b: b, q: backend.NewQueue()}, nil
}

func (s *stream) Enqueue(fn func() error) error  { return s.q.Enqueue(fn) }
func (s *stream) Record() (backend.Event, error) { return s.q.Record() }
func (s *stream) Wait(ev backend.Event) error    { return s.q.Wait(ev) }
func (s *stream) Sync(ctx context.Context) error { return s.q.Sync(ctx) }
func (s *stream) Close() error                   { return s.q.Close() }
func (s *stream) LaunchGPU(g backend.Launch) error {
	return s.q.Enqueue(func() error { return s.b.launch(g) })
}
func (s *stream) IssueGPU(g backend.Launch) error { return s.b.launch(g) }

// module is a loaded image: its kernels decoded for simulation, or why it
// cannot load.
type module struct {
	keep    []byte
	err     error
	arch    int
	kernels map[string]*kernel
}

type kernel struct {
	name    string
	info    cubin.KernelInfo
	sim     *sasssim.Simulator
	banks   map[uint8][]byte
	paramSz int
}

// CanLoad reports whether m has an image this device runs, and why not.
func (b *Backend) CanLoad(m *ptx.Module) error {
	_, err := b.module(m)
	return err
}

func (b *Backend) module(m *ptx.Module) (*module, error) {
	img, err := m.Select(b.dev.SM())
	if err != nil {
		return nil, err
	}
	if img.Kind != ptx.KindCubin {
		return nil, fmt.Errorf("module %s: %s; the simulated device compiles no PTX and needs an sm_%d cubin: %w",
			m.Name, img.Reason, b.dev.SM(), backend.ErrUnsupported)
	}
	// decoded modules are shared by every simulated device of the process:
	// images are immutable (embedded), keyed by their bytes' identity
	key := moduleKey{name: m.Name, sm: img.SM, data: unsafe.SliceData(img.Data), n: len(img.Data)}
	modules.mu.Lock()
	defer modules.mu.Unlock()
	if mod := modules.m[key]; mod != nil {
		return mod, mod.err
	}
	mod := loadCubin(m.Name, img)
	mod.keep = img.Data // holds the bytes, so their address identifies them while cached
	if modules.m == nil {
		modules.m = map[moduleKey]*module{}
	}
	modules.m[key] = mod
	return mod, mod.err
}

type moduleKey struct {
	name string
	sm   int
	data *byte
	n    int
}

// modules caches decoded images across devices.
var modules struct {
	mu sync.Mutex
	m  map[moduleKey]*module
}

// loadCubin reads a cubin and decodes every kernel for the simulator.
func loadCubin(name string, img ptx.Image) *module {
	mod := &module{arch: img.SM, kernels: map[string]*kernel{}}
	c, err := cubin.Read(img.Data)
	if err != nil {
		mod.err = fmt.Errorf("module %s: sm_%d cubin: %v: %w", name, img.SM, err, backend.ErrUnsupported)
		return mod
	}
	// global constant banks (.nv.constant<N>, N > 0) and each kernel's own
	// (.nv.constant<N>.<kernel>: ptxas's bank 2 of switch tables and
	// constants, as in the project's sg kernels); a kernel's bank 0
	// (.nv.constant0.<kernel>) is its parameter window
	banks := map[uint8][]byte{}
	own := map[string]map[uint8][]byte{}
	for _, s := range c.Sections {
		rest, ok := strings.CutPrefix(s.Name, ".nv.constant")
		if !ok {
			continue
		}
		num, kname, _ := strings.Cut(rest, ".")
		n, err := strconv.Atoi(num)
		if err != nil || n <= 0 || n >= 18 {
			continue
		}
		if kname == "" {
			banks[uint8(n)] = s.Data
			continue
		}
		if own[kname] == nil {
			own[kname] = map[uint8][]byte{}
		}
		own[kname][uint8(n)] = s.Data
	}
	kernelBanks := func(name string) map[uint8][]byte {
		if own[name] == nil {
			return banks
		}
		m := maps.Clone(banks)
		maps.Copy(m, own[name])
		return m
	}
	var bad []string
	for _, ki := range c.Kernels {
		p, err := sass.Decode(ki.Kernel.Code)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", ki.Kernel.Name, err))
			continue
		}
		s, err := sasssim.New(p)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", ki.Kernel.Name, err))
			continue
		}
		if u := s.Unsupported(); len(u) > 0 {
			first := -1
			for i := range u {
				if first < 0 || i < first {
					first = i
				}
			}
			bad = append(bad, fmt.Sprintf("%s: %d instructions not modelled (first, #%d: %v)", ki.Kernel.Name, len(u), first, u[first]))
			continue
		}
		size := 0
		for i, prm := range ki.Kernel.Params {
			size = max(size, ki.ParamOffsets[i]+prm.Size)
		}
		mod.kernels[ki.Kernel.Name] = &kernel{name: ki.Kernel.Name, info: ki, sim: s, banks: kernelBanks(ki.Kernel.Name), paramSz: size}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		more := ""
		if len(bad) > 1 {
			more = fmt.Sprintf(" (and %d more kernels)", len(bad)-1)
		}
		mod.err = fmt.Errorf("module %s: the simulator cannot run its sm_%d cubin: %s%s: %w", name, img.SM, bad[0], more, backend.ErrUnsupported)
	}
	return mod
}

// ErrLaunch is wrapped (with backend.ErrArgument) by launches the driver
// would refuse.
var ErrLaunch = errors.New("invalid launch")

// launch checks g as the driver does and runs it to completion.
func (b *Backend) launch(g backend.Launch) error {
	mod, err := b.module(g.Module)
	if err != nil {
		return fmt.Errorf("tcrt: sim: launch %s: %w", g.Func, err)
	}
	k := mod.kernels[g.Func]
	if k == nil {
		return fmt.Errorf("tcrt: sim: launch %s: module %s has no such kernel: %w", g.Func, g.Module.Name, backend.ErrArgument)
	}
	if err := b.checkLaunch(k, g); err != nil {
		return fmt.Errorf("tcrt: sim: launch %s: %w (%w)", g.Func, err, backend.ErrArgument)
	}
	params := make([]byte, k.paramSz)
	for i, prm := range k.info.Kernel.Params {
		v := g.Params[i]
		off := k.info.ParamOffsets[i]
		for j := 0; j < prm.Size && j < 8; j++ {
			params[off+j] = byte(v >> (8 * j))
		}
	}
	cfg := sasssim.Config{Grid: g.Grid, Block: g.Block, SharedBytes: k.info.Kernel.SharedStatic + g.SharedBytes,
		Params: params, Banks: k.banks, Memory: b.mem}
	b.mu.Lock()
	st, err := k.sim.Launch(cfg)
	b.mu.Unlock()
	b.launches.Add(1)
	b.warpInsts.Add(st.WarpInstructions)
	b.thrInsts.Add(st.ThreadInstructions)
	if err != nil {
		return b.fault(k, g, err)
	}
	return nil
}

// fault turns a simulator error into a device error naming the kernel and
// the place, and the address's buffer offset when it falls in one.
func (b *Backend) fault(k *kernel, g backend.Launch, err error) error {
	var f *sasssim.Fault
	if errors.As(err, &f) {
		return fmt.Errorf("tcrt: sim: kernel %s (module %s) faulted in CTA (%d,%d,%d), warp %d, lane %d, instruction %d `%s`: %v: %w",
			k.name, g.Module.Name, f.CTA[0], f.CTA[1], f.CTA[2], f.Warp, f.Lane, f.Index, f.Text, simDetail(f), backend.ErrDevice)
	}
	return fmt.Errorf("tcrt: sim: kernel %s (module %s): %v: %w", k.name, g.Module.Name, err, backend.ErrDevice)
}

func simDetail(f *sasssim.Fault) string {
	if f.Detail == "" {
		return f.Kind.Error()
	}
	return f.Kind.Error() + ": " + f.Detail
}

// checkLaunch applies the driver's launch checks.
func (b *Backend) checkLaunch(k *kernel, g backend.Launch) error {
	if len(g.Params) != len(k.info.Kernel.Params) {
		return fmt.Errorf("%d parameters given, the kernel takes %d: %w", len(g.Params), len(k.info.Kernel.Params), ErrLaunch)
	}
	threads := 1
	for i := range 3 {
		if g.Block[i] < 1 || g.Grid[i] < 1 {
			return fmt.Errorf("grid %v block %v: %w", g.Grid, g.Block, ErrLaunch)
		}
		threads *= g.Block[i]
		if mt := k.info.Kernel.MaxThreads[i]; mt > 0 && g.Block[i] > mt {
			return fmt.Errorf("block %v exceeds the kernel's maximum %v: %w", g.Block, k.info.Kernel.MaxThreads, ErrLaunch)
		}
		if rt := k.info.Kernel.ReqThreads[i]; rt > 0 && g.Block[i] != rt {
			return fmt.Errorf("block %v is not the kernel's required %v: %w", g.Block, k.info.Kernel.ReqThreads, ErrLaunch)
		}
	}
	if g.Grid[1] > 65535 || g.Grid[2] > 65535 || g.Block[2] > 64 {
		return fmt.Errorf("grid %v block %v beyond the device's limits: %w", g.Grid, g.Block, ErrLaunch)
	}
	if threads > b.dev.MaxThreadsPerBlock {
		return fmt.Errorf("block %v has %d threads, more than %d: %w", g.Block, threads, b.dev.MaxThreadsPerBlock, ErrLaunch)
	}
	shared := k.info.Kernel.SharedStatic + g.SharedBytes
	if g.SharedBytes < 0 || shared > b.dev.SharedPerBlockOptin {
		return fmt.Errorf("%d bytes of shared memory (%d static), more than the opt-in maximum %d: %w", shared, k.info.Kernel.SharedStatic, b.dev.SharedPerBlockOptin, ErrLaunch)
	}
	// registers are allocated per warp in units of 256
	warps := (threads + 31) / 32
	perWarp := (max(k.info.Kernel.Registers, 1)*32 + 255) / 256 * 256
	if warps*perWarp > b.dev.RegistersPerBlock {
		return fmt.Errorf("%d registers a thread × %d threads exceed the %d registers of an SM: %w", k.info.Kernel.Registers, threads, b.dev.RegistersPerBlock, ErrLaunch)
	}
	return nil
}
