package sim

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/runtime/cuda/driver"
	"github.com/tcrt-go/tcrt/sass"
	"github.com/tcrt-go/tcrt/sass/cubin"
	sasssim "github.com/tcrt-go/tcrt/sass/sim"
)

// simDriver is the CUDA driver API over the simulator: one device of one
// architecture. Streams are asynchronous, as on hardware: every stream has
// a goroutine that runs its copies, kernels and event records in order,
// so the backend's polling, staging and cross-stream waits run as they do
// on a GPU. Calls that the driver runs on the legacy default stream
// (cuMemsetD8, cuMemcpyHtoD, cuMemFree…) first wait for every stream.
type simDriver struct {
	arch int
	info backend.Device

	// memMu guards the simulator's memory map and bytes; a kernel holds it
	// while it runs, so launches on different streams do not overlap.
	memMu sync.Mutex
	mem   *sasssim.Memory
	used  int64 // bytes allocated

	mu      sync.Mutex // guards the tables and ctxRefs
	ctxRefs int
	next    uintptr
	streams map[driver.Stream]*simStream
	events  map[driver.Event]*simEvent
	mods    map[driver.Module]*simModule
	fns     map[driver.Function]*simFunction
	host    map[unsafe.Pointer][]byte

	launches, warpInsts, thrInsts atomic.Int64

	// hold, when set, makes every stream operation submitted meanwhile wait
	// for the channel to close first (tests: work still in flight).
	hold atomic.Pointer[chan struct{}]
}

var drivers struct {
	mu sync.Mutex
	m  map[int]*simDriver
}

// Driver returns the simulator's driver for compute capability arch (86 or
// 89): one per architecture per process, shared by every runtime opened on
// it.
func Driver(arch int) (driver.Driver, error) {
	if _, ok := parts[arch]; !ok {
		return nil, fmt.Errorf("tcrt: open: backend sim: architecture %d is not modelled (want %v): %w", arch, Archs(), backend.ErrNoDevice)
	}
	drivers.mu.Lock()
	defer drivers.mu.Unlock()
	if d := drivers.m[arch]; d != nil {
		return d, nil
	}
	d := &simDriver{arch: arch, info: device(arch), mem: sasssim.NewMemory(),
		streams: map[driver.Stream]*simStream{}, events: map[driver.Event]*simEvent{},
		mods: map[driver.Module]*simModule{}, fns: map[driver.Function]*simFunction{}, host: map[unsafe.Pointer][]byte{}}
	if drivers.m == nil {
		drivers.m = map[int]*simDriver{}
	}
	drivers.m[arch] = d
	return d, nil
}

func (d *simDriver) fail(call string, code driver.Result, format string, a ...any) error {
	return &driver.Error{Call: call, Code: code, Name: driver.CodeName(code), Text: driver.CodeString(code), Detail: fmt.Sprintf(format, a...)}
}

func (d *simDriver) Name() string                        { return fmt.Sprintf("tcrt simulator (sm_%d)", d.arch) }
func (d *simDriver) Version() (int, error)               { return 11080, nil }
func (d *simDriver) DeviceCount() (int, error)           { return 1, nil }
func (d *simDriver) ErrorName(code driver.Result) string { return driver.CodeName(code) }
func (d *simDriver) ErrorString(code driver.Result) string {
	return driver.CodeString(code)
}

func (d *simDriver) DeviceGet(ordinal int) (driver.Device, error) {
	if ordinal != 0 {
		return 0, d.fail("cuDeviceGet", driver.ErrorInvalidDevice, "ordinal %d: the simulator has one device", ordinal)
	}
	return 0, nil
}

func (d *simDriver) checkDev(call string, dev driver.Device) error {
	if dev != 0 {
		return d.fail(call, driver.ErrorInvalidDevice, "device %d", dev)
	}
	return nil
}

func (d *simDriver) DeviceName(dev driver.Device) (string, error) {
	return d.info.Name, d.checkDev("cuDeviceGetName", dev)
}

func (d *simDriver) DeviceTotalMem(dev driver.Device) (int64, error) {
	return d.info.MemoryBytes, d.checkDev("cuDeviceTotalMem", dev)
}

// attrs reads the modelled part's attributes.
var attrs = map[driver.Attribute]func(*backend.Device) int{
	driver.AttrComputeCapabilityMajor:     func(v *backend.Device) int { return v.Major },
	driver.AttrComputeCapabilityMinor:     func(v *backend.Device) int { return v.Minor },
	driver.AttrMultiprocessorCount:        func(v *backend.Device) int { return v.SMs },
	driver.AttrMaxSharedPerBlock:          func(v *backend.Device) int { return v.SharedPerBlock },
	driver.AttrMaxSharedPerBlockOptin:     func(v *backend.Device) int { return v.SharedPerBlockOptin },
	driver.AttrMaxSharedPerMultiprocessor: func(v *backend.Device) int { return v.SharedPerSM },
	driver.AttrMaxRegistersPerSM:          func(v *backend.Device) int { return v.RegistersPerSM },
	driver.AttrMaxRegistersPerBlock:       func(v *backend.Device) int { return v.RegistersPerBlock },
	driver.AttrMaxThreadsPerBlock:         func(v *backend.Device) int { return v.MaxThreadsPerBlock },
	driver.AttrL2CacheSize:                func(v *backend.Device) int { return v.L2CacheBytes },
	driver.AttrClockRate:                  func(v *backend.Device) int { return v.ClockKHz },
	driver.AttrMemoryClockRate:            func(v *backend.Device) int { return v.MemClockKHz },
	driver.AttrGlobalMemoryBusWidth:       func(v *backend.Device) int { return v.MemBusWidth },
}

func (d *simDriver) DeviceAttribute(dev driver.Device, a driver.Attribute) (int, error) {
	if err := d.checkDev("cuDeviceGetAttribute", dev); err != nil {
		return 0, err
	}
	f, ok := attrs[a]
	if !ok {
		return 0, d.fail("cuDeviceGetAttribute", driver.ErrorInvalidValue, "attribute %d is not modelled", a)
	}
	return f(&d.info), nil
}

// primaryCtx is the one context's handle.
const primaryCtx driver.Context = 1

func (d *simDriver) PrimaryCtxRetain(dev driver.Device) (driver.Context, error) {
	if err := d.checkDev("cuDevicePrimaryCtxRetain", dev); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ctxRefs++
	return primaryCtx, nil
}

func (d *simDriver) PrimaryCtxRelease(dev driver.Device) error {
	if err := d.checkDev("cuDevicePrimaryCtxRelease", dev); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctxRefs == 0 {
		return d.fail("cuDevicePrimaryCtxRelease", driver.ErrorInvalidContext, "the primary context is not retained")
	}
	d.ctxRefs--
	return nil
}

func (d *simDriver) CtxSetCurrent(c driver.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c != 0 && (c != primaryCtx || d.ctxRefs == 0) {
		return d.fail("cuCtxSetCurrent", driver.ErrorInvalidContext, "context %#x", c)
	}
	return nil
}

// needCtx fails calls made while no context is retained.
func (d *simDriver) needCtx(call string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctxRefs == 0 {
		return d.fail(call, driver.ErrorInvalidContext, "no context is current")
	}
	return nil
}

// idle waits until every stream has run all it was given.
func (d *simDriver) idle() {
	d.mu.Lock()
	ss := slices.Collect(maps.Values(d.streams))
	d.mu.Unlock()
	for _, s := range ss {
		s.idle()
	}
}

// CtxSynchronize waits for every stream. Faults are reported by the events
// and stream synchronizations of their stream, not here.
func (d *simDriver) CtxSynchronize() error {
	if err := d.needCtx("cuCtxSynchronize"); err != nil {
		return err
	}
	d.idle()
	return nil
}

var segments atomic.Int64

func (d *simDriver) MemAlloc(n int64) (driver.DevicePtr, error) {
	if err := d.needCtx("cuMemAlloc"); err != nil {
		return 0, err
	}
	if n <= 0 {
		return 0, d.fail("cuMemAlloc", driver.ErrorInvalidValue, "%d bytes", n)
	}
	d.memMu.Lock()
	defer d.memMu.Unlock()
	if n > d.info.MemoryBytes-d.used {
		return 0, d.fail("cuMemAlloc", driver.ErrorOutOfMemory, "%d bytes with %d of the simulated %d in use", n, d.used, d.info.MemoryBytes)
	}
	addr, err := d.mem.Alloc("seg"+strconv.FormatInt(segments.Add(1), 10), int(n))
	if err != nil {
		return 0, d.fail("cuMemAlloc", driver.ErrorOutOfMemory, "%v", err)
	}
	d.used += n
	return driver.DevicePtr(addr), nil
}

func (d *simDriver) MemFree(p driver.DevicePtr) error {
	if err := d.needCtx("cuMemFree"); err != nil {
		return err
	}
	d.idle()
	d.memMu.Lock()
	defer d.memMu.Unlock()
	if name, off, ok := d.mem.Locate(uint64(p)); !ok || off != 0 {
		return d.fail("cuMemFree", driver.ErrorInvalidValue, "%#x is not an allocation's base", p)
	} else {
		d.used -= int64(len(d.mem.Bytes(name)))
	}
	_, err := d.mem.Unmap(uint64(p))
	if err != nil {
		return d.fail("cuMemFree", driver.ErrorInvalidValue, "%v", err)
	}
	return nil
}

// span returns n device bytes at p; memMu is held.
func (d *simDriver) span(call string, p driver.DevicePtr, n int64) ([]byte, error) {
	name, off, ok := d.mem.Locate(uint64(p))
	if !ok {
		return nil, d.fail(call, driver.ErrorInvalidValue, "device address %#x is not allocated", p)
	}
	b := d.mem.Bytes(name)[off:]
	if n < 0 || n > int64(len(b)) {
		return nil, d.fail(call, driver.ErrorInvalidValue, "%d bytes at %#x run past its allocation (%d bytes left)", n, p, len(b))
	}
	return b[:n:n], nil
}

// checkSpan checks a span now, for an operation that runs later.
func (d *simDriver) checkSpan(call string, p driver.DevicePtr, n int64) error {
	d.memMu.Lock()
	defer d.memMu.Unlock()
	_, err := d.span(call, p, n)
	return err
}

// withSpan runs fn on n device bytes at p with memMu held.
func (d *simDriver) withSpan(call string, p driver.DevicePtr, n int64, fn func([]byte)) error {
	d.memMu.Lock()
	defer d.memMu.Unlock()
	b, err := d.span(call, p, n)
	if err != nil {
		return err
	}
	fn(b)
	return nil
}

func hostBytes(p unsafe.Pointer, n int64) []byte {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(p), n)
}

func (d *simDriver) MemsetD8(p driver.DevicePtr, v byte, n int64) error {
	if err := d.needCtx("cuMemsetD8"); err != nil {
		return err
	}
	d.idle()
	return d.withSpan("cuMemsetD8", p, n, func(b []byte) {
		for i := range b {
			b[i] = v
		}
	})
}

func (d *simDriver) MemHostAlloc(n int) (unsafe.Pointer, error) {
	if n <= 0 {
		return nil, d.fail("cuMemHostAlloc", driver.ErrorInvalidValue, "%d bytes", n)
	}
	b := make([]byte, n)
	p := unsafe.Pointer(&b[0])
	d.mu.Lock()
	d.host[p] = b
	d.mu.Unlock()
	return p, nil
}

func (d *simDriver) MemFreeHost(p unsafe.Pointer) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.host[p]; !ok {
		return d.fail("cuMemFreeHost", driver.ErrorInvalidValue, "%p is not pinned memory of this driver", p)
	}
	delete(d.host, p)
	return nil
}

func (d *simDriver) MemcpyHtoD(dst driver.DevicePtr, src unsafe.Pointer, n int64) error {
	if err := d.needCtx("cuMemcpyHtoD"); err != nil {
		return err
	}
	d.idle()
	return d.withSpan("cuMemcpyHtoD", dst, n, func(b []byte) { copy(b, hostBytes(src, n)) })
}

func (d *simDriver) MemcpyDtoH(dst unsafe.Pointer, src driver.DevicePtr, n int64) error {
	if err := d.needCtx("cuMemcpyDtoH"); err != nil {
		return err
	}
	d.idle()
	return d.withSpan("cuMemcpyDtoH", src, n, func(b []byte) { copy(hostBytes(dst, n), b) })
}

func (d *simDriver) MemcpyHtoDAsync(dst driver.DevicePtr, src unsafe.Pointer, n int64, s driver.Stream) error {
	const call = "cuMemcpyHtoDAsync"
	if err := d.checkSpan(call, dst, n); err != nil {
		return err
	}
	h := hostBytes(src, n)
	return d.submit(call, s, func(*simStream) {
		_ = d.withSpan(call, dst, n, func(b []byte) { copy(b, h) })
	})
}

func (d *simDriver) MemcpyDtoHAsync(dst unsafe.Pointer, src driver.DevicePtr, n int64, s driver.Stream) error {
	const call = "cuMemcpyDtoHAsync"
	if err := d.checkSpan(call, src, n); err != nil {
		return err
	}
	h := hostBytes(dst, n)
	return d.submit(call, s, func(*simStream) {
		_ = d.withSpan(call, src, n, func(b []byte) { copy(h, b) })
	})
}

func (d *simDriver) MemcpyDtoDAsync(dst, src driver.DevicePtr, n int64, s driver.Stream) error {
	const call = "cuMemcpyDtoDAsync"
	if err := d.checkSpan(call, dst, n); err != nil {
		return err
	}
	if err := d.checkSpan(call, src, n); err != nil {
		return err
	}
	return d.submit(call, s, func(*simStream) {
		d.memMu.Lock()
		defer d.memMu.Unlock()
		a, err1 := d.span(call, dst, n)
		b, err2 := d.span(call, src, n)
		if err1 == nil && err2 == nil {
			copy(a, b)
		}
	})
}

// simStream runs its operations in order on its own goroutine.
type simStream struct {
	mu     sync.Mutex
	cond   *sync.Cond
	ops    []func(*simStream)
	busy   bool
	closed bool
	fault  *driver.Error // of a kernel, until an event or a synchronize reports it
}

func newSimStream() *simStream {
	s := &simStream{}
	s.cond = sync.NewCond(&s.mu)
	go s.run()
	return s
}

func (s *simStream) run() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		for len(s.ops) == 0 && !s.closed {
			s.cond.Wait()
		}
		if len(s.ops) == 0 {
			return
		}
		op := s.ops[0]
		s.ops[0] = nil
		s.ops = s.ops[1:]
		s.busy = true
		s.mu.Unlock()
		op(s)
		s.mu.Lock()
		s.busy = false
		s.cond.Broadcast()
	}
}

func (s *simStream) push(op func(*simStream)) {
	s.mu.Lock()
	s.ops = append(s.ops, op)
	s.cond.Broadcast()
	s.mu.Unlock()
}

func (s *simStream) idle() {
	s.mu.Lock()
	for s.busy || len(s.ops) > 0 {
		s.cond.Wait()
	}
	s.mu.Unlock()
}

// takeFault returns and clears the stream's pending fault, as the error of
// call.
func (s *simStream) takeFault(call string) error {
	s.mu.Lock()
	f := s.fault
	s.fault = nil
	s.mu.Unlock()
	if f == nil {
		return nil
	}
	e := *f
	e.Call = call
	return &e
}

// stream resolves a handle; 0, the legacy default stream, is nil.
func (d *simDriver) stream(call string, h driver.Stream) (*simStream, error) {
	if h == 0 {
		return nil, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.streams[h]
	if s == nil {
		return nil, d.fail(call, driver.ErrorInvalidHandle, "stream %#x", h)
	}
	return s, nil
}

// submit runs op on stream h, or, on the legacy default stream, now after
// every stream has finished.
func (d *simDriver) submit(call string, h driver.Stream, op func(*simStream)) error {
	if err := d.needCtx(call); err != nil {
		return err
	}
	s, err := d.stream(call, h)
	if err != nil {
		return err
	}
	if s == nil {
		d.idle()
		op(d.legacy())
		return nil
	}
	if h := d.hold.Load(); h != nil {
		inner := op
		op = func(s *simStream) { <-*h; inner(s) }
	}
	s.push(op)
	return nil
}

// legacy is a stand-in stream for work on the default stream (its faults
// are dropped: the backend never launches there).
func (d *simDriver) legacy() *simStream { return &simStream{} }

func (d *simDriver) handle() uintptr {
	d.next++
	return d.next
}

func (d *simDriver) StreamCreate() (driver.Stream, error) {
	if err := d.needCtx("cuStreamCreate"); err != nil {
		return 0, err
	}
	s := newSimStream()
	d.mu.Lock()
	defer d.mu.Unlock()
	h := driver.Stream(d.handle())
	d.streams[h] = s
	return h, nil
}

func (d *simDriver) StreamDestroy(h driver.Stream) error {
	s, err := d.stream("cuStreamDestroy", h)
	if err != nil || s == nil {
		if s == nil && err == nil {
			err = d.fail("cuStreamDestroy", driver.ErrorInvalidHandle, "the default stream")
		}
		return err
	}
	d.mu.Lock()
	delete(d.streams, h)
	d.mu.Unlock()
	s.mu.Lock()
	s.closed = true // the goroutine drains what is queued, then ends
	s.cond.Broadcast()
	s.mu.Unlock()
	return nil
}

func (d *simDriver) StreamSynchronize(h driver.Stream) error {
	s, err := d.stream("cuStreamSynchronize", h)
	if err != nil {
		return err
	}
	if s == nil {
		d.idle()
		return nil
	}
	s.idle()
	return s.takeFault("cuStreamSynchronize")
}

func (d *simDriver) StreamWaitEvent(h driver.Stream, eh driver.Event) error {
	e, err := d.event("cuStreamWaitEvent", eh)
	if err != nil {
		return err
	}
	e.mu.Lock()
	done := e.done // the most recent record when the wait is issued
	e.mu.Unlock()
	return d.submit("cuStreamWaitEvent", h, func(*simStream) {
		if done != nil {
			<-done
		}
	})
}

// simEvent is an event: done closes when its latest record is reached.
type simEvent struct {
	mu     sync.Mutex
	timing bool
	done   chan struct{} // nil: never recorded
	when   time.Time
	err    error // the fault the record took from its stream
}

func (d *simDriver) event(call string, h driver.Event) (*simEvent, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.events[h]
	if e == nil {
		return nil, d.fail(call, driver.ErrorInvalidHandle, "event %#x", h)
	}
	return e, nil
}

func (d *simDriver) EventCreate(flags int) (driver.Event, error) {
	if err := d.needCtx("cuEventCreate"); err != nil {
		return 0, err
	}
	if flags&^(driver.EventDisableTiming|1) != 0 {
		return 0, d.fail("cuEventCreate", driver.ErrorInvalidValue, "flags %#x", flags)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	h := driver.Event(d.handle())
	d.events[h] = &simEvent{timing: flags&driver.EventDisableTiming == 0}
	return h, nil
}

func (d *simDriver) EventDestroy(h driver.Event) error {
	if _, err := d.event("cuEventDestroy", h); err != nil {
		return err
	}
	d.mu.Lock()
	delete(d.events, h)
	d.mu.Unlock()
	return nil
}

func (d *simDriver) EventRecord(h driver.Event, sh driver.Stream) error {
	e, err := d.event("cuEventRecord", h)
	if err != nil {
		return err
	}
	done := make(chan struct{})
	e.mu.Lock()
	e.done, e.err = done, nil
	e.mu.Unlock()
	return d.submit("cuEventRecord", sh, func(s *simStream) {
		fault := s.takeFault("cuEventQuery")
		e.mu.Lock()
		if e.done == done { // not recorded again meanwhile
			e.when, e.err = time.Now(), fault
		}
		e.mu.Unlock()
		close(done)
	})
}

// state is the event's latest record's channel and, once reached, its
// fault.
func (e *simEvent) state() (chan struct{}, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.done, e.err
}

func (d *simDriver) EventQuery(h driver.Event) error {
	e, err := d.event("cuEventQuery", h)
	if err != nil {
		return err
	}
	done, _ := e.state()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		_, ferr := e.state()
		return ferr
	default:
		return d.fail("cuEventQuery", driver.ErrorNotReady, "")
	}
}

func (d *simDriver) EventSynchronize(h driver.Event) error {
	e, err := d.event("cuEventSynchronize", h)
	if err != nil {
		return err
	}
	done, _ := e.state()
	if done == nil {
		return nil
	}
	<-done
	_, ferr := e.state()
	return ferr
}

func (d *simDriver) EventElapsedTime(start, end driver.Event) (float32, error) {
	const call = "cuEventElapsedTime"
	s, err := d.event(call, start)
	if err != nil {
		return 0, err
	}
	e, err := d.event(call, end)
	if err != nil {
		return 0, err
	}
	var when [2]time.Time
	for i, ev := range []*simEvent{s, e} {
		ev.mu.Lock()
		timing, done, w := ev.timing, ev.done, ev.when
		ev.mu.Unlock()
		if !timing {
			return 0, d.fail(call, driver.ErrorInvalidHandle, "an event created with timing disabled")
		}
		if done == nil {
			return 0, d.fail(call, driver.ErrorInvalidHandle, "an event never recorded")
		}
		select {
		case <-done:
		default:
			return 0, d.fail(call, driver.ErrorNotReady, "")
		}
		when[i] = w
	}
	return float32(when[1].Sub(when[0]).Seconds() * 1e3), nil
}

// simModule is a loaded image: its kernels decoded for simulation.
type simModule struct {
	keep    []byte
	arch    int
	kernels map[string]*kernel
	log     string // the load's log: why kernels could not be decoded
}

type kernel struct {
	name    string
	info    cubin.KernelInfo
	sim     *sasssim.Simulator
	banks   map[uint8][]byte
	paramSz int
}

type simFunction struct {
	modH       driver.Module
	k          *kernel
	maxDynamic int // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
}

type moduleKey struct {
	arch int
	data *byte
	n    int
}

// decoded caches decoded images across devices: images are immutable
// (embedded), keyed by their bytes' identity.
var decoded struct {
	mu sync.Mutex
	m  map[moduleKey]*simModule
}

// ModuleLoadData loads an sm_86 or sm_89 cubin the device runs. PTX is
// refused (the simulator compiles none); so is an image that is not a
// cubin, one for another architecture and one holding an instruction the
// simulator does not model. Each refusal writes its reason to the log.
func (d *simDriver) ModuleLoadData(image []byte) (driver.Module, driver.JITLog, error) {
	const call = "cuModuleLoadDataEx"
	if err := d.needCtx(call); err != nil {
		return 0, driver.JITLog{}, err
	}
	refuse := func(code driver.Result, format string, a ...any) (driver.Module, driver.JITLog, error) {
		log := driver.JITLog{Error: "tcrt simulator: " + fmt.Sprintf(format, a...)}
		e := d.fail(call, code, "").(*driver.Error)
		e.Log = log.Error
		return 0, log, e
	}
	if !bytes.HasPrefix(image, []byte("\x7fELF")) {
		if bytes.Contains(image, []byte(".version")) || bytes.Contains(image, []byte(".target")) {
			return refuse(driver.ErrorJITCompilerNotFound, "the simulated device compiles no PTX; it needs an sm_%d cubin", d.arch)
		}
		return refuse(driver.ErrorInvalidImage, "the image is neither a cubin (no ELF header) nor PTX")
	}
	key := moduleKey{arch: d.arch, data: unsafe.SliceData(image), n: len(image)}
	decoded.mu.Lock()
	mod := decoded.m[key]
	if mod == nil {
		var err error
		mod, err = decode(image, d.arch)
		if err != nil {
			decoded.mu.Unlock()
			return refuse(driver.ErrorInvalidImage, "%v", err)
		}
		mod.keep = image // holds the bytes, so their address identifies them while cached
		if decoded.m == nil {
			decoded.m = map[moduleKey]*simModule{}
		}
		decoded.m[key] = mod
	}
	decoded.mu.Unlock()
	if mod.arch/10 != d.arch/10 || mod.arch > d.arch {
		return refuse(driver.ErrorNoBinaryForGPU, "an sm_%d cubin does not run on sm_%d", mod.arch, d.arch)
	}
	if mod.log != "" {
		return refuse(driver.ErrorNoBinaryForGPU, "%s", mod.log)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	h := driver.Module(d.handle())
	d.mods[h] = mod
	return h, driver.JITLog{}, nil
}

// decode reads a cubin and decodes every kernel for the simulator; a
// kernel it cannot run is described in the module's log.
func decode(image []byte, arch int) (*simModule, error) {
	c, err := cubin.Read(image)
	if err != nil {
		return nil, fmt.Errorf("cubin: %v", err)
	}
	mod := &simModule{arch: c.Arch, kernels: map[string]*kernel{}}
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
		mod.log = fmt.Sprintf("the simulator cannot run this sm_%d cubin: %s%s", c.Arch, bad[0], more)
	}
	return mod, nil
}

func (d *simDriver) ModuleUnload(h driver.Module) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mods[h] == nil {
		return d.fail("cuModuleUnload", driver.ErrorInvalidHandle, "module %#x", h)
	}
	delete(d.mods, h)
	for fh, f := range d.fns {
		if f.modH == h {
			delete(d.fns, fh)
		}
	}
	return nil
}

func (d *simDriver) ModuleGetFunction(h driver.Module, name string) (driver.Function, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	mod := d.mods[h]
	if mod == nil {
		return 0, d.fail("cuModuleGetFunction", driver.ErrorInvalidHandle, "module %#x", h)
	}
	k := mod.kernels[name]
	if k == nil {
		return 0, d.fail("cuModuleGetFunction", driver.ErrorNotFound, "the module has no such kernel %q", name)
	}
	fh := driver.Function(d.handle())
	d.fns[fh] = &simFunction{modH: h, k: k, maxDynamic: d.info.SharedPerBlock - k.info.Kernel.SharedStatic}
	return fh, nil
}

func (d *simDriver) function(call string, h driver.Function) (*simFunction, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f := d.fns[h]
	if f == nil {
		return nil, d.fail(call, driver.ErrorInvalidHandle, "function %#x", h)
	}
	return f, nil
}

// maxThreads is the most threads a block of f may have.
func (d *simDriver) maxThreads(f *simFunction) int {
	n := d.info.MaxThreadsPerBlock
	if mt := f.k.info.Kernel.MaxThreads; mt[0] > 0 {
		n = min(n, max(mt[0], 1)*max(mt[1], 1)*max(mt[2], 1))
	}
	// registers are allocated per warp in units of 256
	perWarp := (max(f.k.info.Kernel.Registers, 1)*32 + 255) / 256 * 256
	return min(n, d.info.RegistersPerBlock/perWarp*32)
}

func (d *simDriver) FuncGetAttribute(h driver.Function, a driver.FuncAttribute) (int, error) {
	f, err := d.function("cuFuncGetAttribute", h)
	if err != nil {
		return 0, err
	}
	switch a {
	case driver.FuncMaxThreadsPerBlock:
		return d.maxThreads(f), nil
	case driver.FuncSharedSizeBytes:
		return f.k.info.Kernel.SharedStatic, nil
	case driver.FuncNumRegs:
		return f.k.info.Kernel.Registers, nil
	case driver.FuncMaxDynamicSharedMem:
		d.mu.Lock()
		defer d.mu.Unlock()
		return f.maxDynamic, nil
	}
	return 0, d.fail("cuFuncGetAttribute", driver.ErrorInvalidValue, "attribute %d is not modelled", a)
}

func (d *simDriver) FuncSetAttribute(h driver.Function, a driver.FuncAttribute, v int) error {
	const call = "cuFuncSetAttribute"
	f, err := d.function(call, h)
	if err != nil {
		return err
	}
	if a != driver.FuncMaxDynamicSharedMem {
		return d.fail(call, driver.ErrorInvalidValue, "attribute %d is not settable here", a)
	}
	if v < 0 || v+f.k.info.Kernel.SharedStatic > d.info.SharedPerBlockOptin {
		return d.fail(call, driver.ErrorInvalidValue, "%d bytes of dynamic shared memory plus %d static exceed the opt-in maximum %d",
			v, f.k.info.Kernel.SharedStatic, d.info.SharedPerBlockOptin)
	}
	d.mu.Lock()
	f.maxDynamic = v
	d.mu.Unlock()
	return nil
}

// LaunchKernel checks the launch as the driver does, then runs the kernel
// in stream order. A fault is kept on the stream and reported by its next
// event or synchronize, naming the kernel, CTA, warp, lane and
// instruction.
func (d *simDriver) LaunchKernel(h driver.Function, grid, block [3]uint32, sharedBytes uint32, sh driver.Stream, params []uint64) error {
	const call = "cuLaunchKernel"
	f, err := d.function(call, h)
	if err != nil {
		return err
	}
	if err := d.checkLaunch(f, grid, block, int(sharedBytes), len(params)); err != nil {
		return err
	}
	k := f.k
	pb := make([]byte, k.paramSz) // the driver copies the parameters now
	for i, prm := range k.info.Kernel.Params {
		v, off := params[i], k.info.ParamOffsets[i]
		for j := 0; j < prm.Size && j < 8; j++ {
			pb[off+j] = byte(v >> (8 * j))
		}
	}
	cfg := sasssim.Config{SharedBytes: k.info.Kernel.SharedStatic + int(sharedBytes), Params: pb, Banks: k.banks, Memory: d.mem}
	for i := range 3 {
		cfg.Grid[i], cfg.Block[i] = int(grid[i]), int(block[i])
	}
	return d.submit(call, sh, func(s *simStream) {
		d.memMu.Lock()
		st, err := k.sim.Launch(cfg)
		d.memMu.Unlock()
		d.launches.Add(1)
		d.warpInsts.Add(st.WarpInstructions)
		d.thrInsts.Add(st.ThreadInstructions)
		if err == nil {
			return
		}
		fe := d.fault(k, err)
		s.mu.Lock()
		if s.fault == nil {
			s.fault = fe
		}
		s.mu.Unlock()
	})
}

// faultCodes maps simulator faults to the result code CUDA reports.
var faultCodes = []struct {
	kind error
	code driver.Result
}{
	{sasssim.ErrOutOfBounds, driver.ErrorIllegalAddress},
	{sasssim.ErrMisaligned, driver.ErrorMisalignedAddress},
	{sasssim.ErrUnsupported, driver.ErrorIllegalInstruction},
	{sasssim.ErrStepLimit, driver.ErrorLaunchTimeout},
}

// fault describes a simulator error as the driver's error, with where it
// happened.
func (d *simDriver) fault(k *kernel, err error) *driver.Error {
	code := driver.ErrorLaunchFailed
	for _, fc := range faultCodes {
		if errors.Is(err, fc.kind) {
			code = fc.code
			break
		}
	}
	detail := fmt.Sprintf("kernel %s: %v", k.name, err)
	var f *sasssim.Fault
	if errors.As(err, &f) {
		what := f.Kind.Error()
		if f.Detail != "" {
			what += ": " + f.Detail
		}
		detail = fmt.Sprintf("kernel %s faulted in CTA (%d,%d,%d), warp %d, lane %d, instruction %d `%s`: %s",
			k.name, f.CTA[0], f.CTA[1], f.CTA[2], f.Warp, f.Lane, f.Index, f.Text, what)
	}
	return d.fail("cuLaunchKernel", code, "%s", detail).(*driver.Error)
}

// checkLaunch applies the driver's launch checks.
func (d *simDriver) checkLaunch(f *simFunction, grid, block [3]uint32, shared, nparams int) error {
	const call = "cuLaunchKernel"
	kk := f.k.info.Kernel
	if nparams != len(kk.Params) {
		return d.fail(call, driver.ErrorInvalidValue, "%d parameters given, kernel %s takes %d", nparams, kk.Name, len(kk.Params))
	}
	threads := 1
	for i := range 3 {
		if block[i] < 1 || grid[i] < 1 {
			return d.fail(call, driver.ErrorInvalidValue, "grid %v block %v", grid, block)
		}
		threads *= int(block[i])
		if mt := kk.MaxThreads[i]; mt > 0 && int(block[i]) > mt {
			return d.fail(call, driver.ErrorInvalidValue, "block %v exceeds the kernel's maximum %v", block, kk.MaxThreads)
		}
		if rt := kk.ReqThreads[i]; rt > 0 && int(block[i]) != rt {
			return d.fail(call, driver.ErrorInvalidValue, "block %v is not the kernel's required %v", block, kk.ReqThreads)
		}
	}
	if grid[0] > 1<<31-1 || grid[1] > 65535 || grid[2] > 65535 || block[0] > 1024 || block[1] > 1024 || block[2] > 64 {
		return d.fail(call, driver.ErrorInvalidValue, "grid %v block %v beyond the device's limits", grid, block)
	}
	if threads > d.info.MaxThreadsPerBlock {
		return d.fail(call, driver.ErrorInvalidValue, "block %v has %d threads, more than %d", block, threads, d.info.MaxThreadsPerBlock)
	}
	d.mu.Lock()
	maxDyn := f.maxDynamic
	d.mu.Unlock()
	if shared > maxDyn {
		return d.fail(call, driver.ErrorInvalidValue, "%d bytes of dynamic shared memory, more than the function's %d (%d static; opt in with cuFuncSetAttribute)", shared, maxDyn, kk.SharedStatic)
	}
	warps := (threads + 31) / 32
	perWarp := (max(kk.Registers, 1)*32 + 255) / 256 * 256
	if warps*perWarp > d.info.RegistersPerBlock {
		return d.fail(call, driver.ErrorLaunchOutOfResources, "%d registers a thread × %d threads exceed the %d registers of an SM", kk.Registers, threads, d.info.RegistersPerBlock)
	}
	return nil
}

// maxBlocksPerSM and maxThreadsPerSM are sm_86's and sm_89's limits.
var maxBlocksPerSM = map[int]int{86: 16, 89: 24}

const maxThreadsPerSM = 1536

func (d *simDriver) OccupancyMaxActiveBlocks(h driver.Function, blockSize, dynamicShared int) (int, error) {
	const call = "cuOccupancyMaxActiveBlocksPerMultiprocessor"
	f, err := d.function(call, h)
	if err != nil {
		return 0, err
	}
	kk := f.k.info.Kernel
	if blockSize < 1 || blockSize > d.maxThreads(f) || dynamicShared < 0 {
		return 0, d.fail(call, driver.ErrorInvalidValue, "block of %d threads, %d bytes of dynamic shared memory", blockSize, dynamicShared)
	}
	n := min(maxBlocksPerSM[d.arch], maxThreadsPerSM/blockSize)
	warps := (blockSize + 31) / 32
	perWarp := (max(kk.Registers, 1)*32 + 255) / 256 * 256
	n = min(n, d.info.RegistersPerSM/(warps*perWarp))
	if sh := kk.SharedStatic + dynamicShared; sh > 0 {
		n = min(n, d.info.SharedPerSM/sh)
	}
	return n, nil
}

// Counters is what the device has executed since the process started.
func (d *simDriver) Counters(driver.Device) backend.Counters {
	return backend.Counters{Launches: d.launches.Load(), WarpInstructions: d.warpInsts.Load(), ThreadInstructions: d.thrInsts.Load()}
}
