//go:build !nocuda

package driver

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// DefaultLibrary is the library Load opens when given no path: the NVIDIA
// driver's soname, found by the dynamic loader's search.
const DefaultLibrary = "libcuda.so.1"

// libFuncs are the driver's entry points, typed for purego. Every one
// returns a CUresult. The table below lists each with its exported name
// (the _v2 names are what cuda.h's macros select).
type libFuncs struct {
	init                    func(flags uint32) Result
	driverGetVersion        func(v *int32) Result
	deviceGetCount          func(n *int32) Result
	deviceGet               func(d *int32, ordinal int32) Result
	deviceGetName           func(name []byte, n int32, d int32) Result
	deviceTotalMem          func(b *uint64, d int32) Result
	deviceGetAttribute      func(v *int32, a int32, d int32) Result
	primaryCtxRetain        func(c *uintptr, d int32) Result
	primaryCtxRelease       func(d int32) Result
	ctxSetCurrent           func(c uintptr) Result
	ctxSynchronize          func() Result
	memAlloc                func(p *uint64, n uint64) Result
	memFree                 func(p uint64) Result
	memsetD8                func(p uint64, v uint8, n uint64) Result
	memHostAlloc            func(p *unsafe.Pointer, n uint64, flags uint32) Result
	memFreeHost             func(p unsafe.Pointer) Result
	memcpyHtoD              func(dst uint64, src unsafe.Pointer, n uint64) Result
	memcpyDtoH              func(dst unsafe.Pointer, src uint64, n uint64) Result
	memcpyHtoDAsync         func(dst uint64, src unsafe.Pointer, n uint64, s uintptr) Result
	memcpyDtoHAsync         func(dst unsafe.Pointer, src uint64, n uint64, s uintptr) Result
	memcpyDtoDAsync         func(dst, src uint64, n uint64, s uintptr) Result
	streamCreate            func(s *uintptr, flags uint32) Result
	streamDestroy           func(s uintptr) Result
	streamSynchronize       func(s uintptr) Result
	streamWaitEvent         func(s uintptr, e uintptr, flags uint32) Result
	eventCreate             func(e *uintptr, flags uint32) Result
	eventDestroy            func(e uintptr) Result
	eventRecord             func(e uintptr, s uintptr) Result
	eventQuery              func(e uintptr) Result
	eventSynchronize        func(e uintptr) Result
	eventElapsedTime        func(ms *float32, start, end uintptr) Result
	moduleLoadDataEx        func(m *uintptr, image []byte, n uint32, opts []int32, vals []uintptr) Result
	moduleUnload            func(m uintptr) Result
	moduleGetFunction       func(f *uintptr, m uintptr, name string) Result
	funcGetAttribute        func(v *int32, a int32, f uintptr) Result
	funcSetAttribute        func(f uintptr, a int32, v int32) Result
	launchKernel            func(f uintptr, gx, gy, gz, bx, by, bz, smem uint32, s uintptr, params []uintptr, extra uintptr) Result
	occupancyMaxActiveBlock func(n *int32, f uintptr, block int32, smem uint64) Result
	getErrorName            func(code Result, s **byte) Result
	getErrorString          func(code Result, s **byte) Result
}

// symbols binds each entry point to its exported name, in the order Load
// resolves them (so the first missing one is reported).
func (l *libFuncs) symbols() []struct {
	name string
	fn   any
} {
	return []struct {
		name string
		fn   any
	}{
		{"cuInit", &l.init}, {"cuDriverGetVersion", &l.driverGetVersion},
		{"cuGetErrorName", &l.getErrorName}, {"cuGetErrorString", &l.getErrorString},
		{"cuDeviceGetCount", &l.deviceGetCount}, {"cuDeviceGet", &l.deviceGet},
		{"cuDeviceGetName", &l.deviceGetName}, {"cuDeviceTotalMem_v2", &l.deviceTotalMem},
		{"cuDeviceGetAttribute", &l.deviceGetAttribute},
		{"cuDevicePrimaryCtxRetain", &l.primaryCtxRetain}, {"cuDevicePrimaryCtxRelease_v2", &l.primaryCtxRelease},
		{"cuCtxSetCurrent", &l.ctxSetCurrent}, {"cuCtxSynchronize", &l.ctxSynchronize},
		{"cuMemAlloc_v2", &l.memAlloc}, {"cuMemFree_v2", &l.memFree}, {"cuMemsetD8_v2", &l.memsetD8},
		{"cuMemHostAlloc", &l.memHostAlloc}, {"cuMemFreeHost", &l.memFreeHost},
		{"cuMemcpyHtoD_v2", &l.memcpyHtoD}, {"cuMemcpyDtoH_v2", &l.memcpyDtoH},
		{"cuMemcpyHtoDAsync_v2", &l.memcpyHtoDAsync}, {"cuMemcpyDtoHAsync_v2", &l.memcpyDtoHAsync},
		{"cuMemcpyDtoDAsync_v2", &l.memcpyDtoDAsync},
		{"cuStreamCreate", &l.streamCreate}, {"cuStreamDestroy_v2", &l.streamDestroy},
		{"cuStreamSynchronize", &l.streamSynchronize}, {"cuStreamWaitEvent", &l.streamWaitEvent},
		{"cuEventCreate", &l.eventCreate}, {"cuEventDestroy_v2", &l.eventDestroy},
		{"cuEventRecord", &l.eventRecord}, {"cuEventQuery", &l.eventQuery},
		{"cuEventSynchronize", &l.eventSynchronize}, {"cuEventElapsedTime", &l.eventElapsedTime},
		{"cuModuleLoadDataEx", &l.moduleLoadDataEx}, {"cuModuleUnload", &l.moduleUnload},
		{"cuModuleGetFunction", &l.moduleGetFunction},
		{"cuFuncGetAttribute", &l.funcGetAttribute}, {"cuFuncSetAttribute", &l.funcSetAttribute},
		{"cuLaunchKernel", &l.launchKernel},
		{"cuOccupancyMaxActiveBlocksPerMultiprocessor", &l.occupancyMaxActiveBlock},
	}
}

// Symbols lists the entry points Load resolves, in order.
func Symbols() []string {
	var l libFuncs
	var out []string
	for _, s := range l.symbols() {
		out = append(out, s.name)
	}
	return out
}

// lib is the purego Driver over a loaded libcuda.
type lib struct {
	path    string
	version int
	f       libFuncs
}

var loaded struct {
	mu sync.Mutex
	m  map[string]loadResult
}

type loadResult struct {
	d   *lib
	err error
}

// Load opens the CUDA driver library at path (DefaultLibrary when empty)
// with purego, resolves every entry point, calls cuInit(0) and checks the
// driver's version and that it sees a device. Each failure is a *LoadError
// naming its step. The result is kept per path: the library is opened and
// initialized once per process.
func Load(path string) (Driver, error) {
	if path == "" {
		path = DefaultLibrary
	}
	loaded.mu.Lock()
	defer loaded.mu.Unlock()
	if r, ok := loaded.m[path]; ok {
		if r.err != nil {
			return nil, r.err
		}
		return r.d, nil
	}
	d, err := load(path)
	if loaded.m == nil {
		loaded.m = map[string]loadResult{}
	}
	loaded.m[path] = loadResult{d, err}
	if err != nil {
		return nil, err
	}
	return d, nil
}

func load(path string) (d *lib, err error) {
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, &LoadError{Step: StepLibrary, Path: path, Err: err}
	}
	d = &lib{path: path}
	for _, s := range d.f.symbols() {
		p, err := purego.Dlsym(h, s.name)
		if err != nil || p == 0 {
			if err == nil {
				err = errors.New("dlsym returned NULL")
			}
			_ = purego.Dlclose(h)
			return nil, &LoadError{Step: StepSymbol, Path: path, Symbol: s.name, Err: err}
		}
		purego.RegisterFunc(s.fn, p)
	}
	// cuInit's thread does not matter: it initializes the process.
	if err := NewError(d, "cuInit", d.f.init(0)); err != nil {
		return nil, &LoadError{Step: StepInit, Path: path, Err: err}
	}
	v, err := d.Version()
	if err != nil {
		return nil, &LoadError{Step: StepVersion, Path: path, Err: err}
	}
	if v < MinVersion {
		return nil, &LoadError{Step: StepVersion, Path: path,
			Err: fmt.Errorf("driver %s is older than %s, the oldest tcrt's kernels run on", versionString(v), versionString(MinVersion))}
	}
	d.version = v
	n, err := d.DeviceCount()
	if err != nil {
		return nil, &LoadError{Step: StepNoDevice, Path: path, Err: err}
	}
	if n == 0 {
		return nil, &LoadError{Step: StepNoDevice, Path: path, Err: errors.New("the driver reports no CUDA device")}
	}
	return d, nil
}

func versionString(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }

func (d *lib) Name() string { return d.path + " (purego)" }

func (d *lib) err(call string, r Result) error { return NewError(d, call, r) }

func (d *lib) Version() (int, error) {
	var v int32
	return int(v), d.err("cuDriverGetVersion", d.f.driverGetVersion(&v))
}

func (d *lib) DeviceCount() (int, error) {
	var n int32
	return int(n), d.err("cuDeviceGetCount", d.f.deviceGetCount(&n))
}

func (d *lib) DeviceGet(ordinal int) (Device, error) {
	var v int32
	return Device(v), d.err("cuDeviceGet", d.f.deviceGet(&v, int32(ordinal)))
}

func (d *lib) DeviceName(dev Device) (string, error) {
	buf := make([]byte, 256)
	if err := d.err("cuDeviceGetName", d.f.deviceGetName(buf, int32(len(buf)), int32(dev))); err != nil {
		return "", err
	}
	for i, c := range buf {
		if c == 0 {
			return string(buf[:i]), nil
		}
	}
	return string(buf), nil
}

func (d *lib) DeviceTotalMem(dev Device) (int64, error) {
	var b uint64
	return int64(b), d.err("cuDeviceTotalMem_v2", d.f.deviceTotalMem(&b, int32(dev)))
}

func (d *lib) DeviceAttribute(dev Device, a Attribute) (int, error) {
	var v int32
	return int(v), d.err("cuDeviceGetAttribute", d.f.deviceGetAttribute(&v, int32(a), int32(dev)))
}

func (d *lib) PrimaryCtxRetain(dev Device) (Context, error) {
	var c uintptr
	return Context(c), d.err("cuDevicePrimaryCtxRetain", d.f.primaryCtxRetain(&c, int32(dev)))
}

func (d *lib) PrimaryCtxRelease(dev Device) error {
	return d.err("cuDevicePrimaryCtxRelease_v2", d.f.primaryCtxRelease(int32(dev)))
}

func (d *lib) CtxSetCurrent(c Context) error {
	return d.err("cuCtxSetCurrent", d.f.ctxSetCurrent(uintptr(c)))
}

func (d *lib) CtxSynchronize() error { return d.err("cuCtxSynchronize", d.f.ctxSynchronize()) }

func (d *lib) MemAlloc(n int64) (DevicePtr, error) {
	var p uint64
	return DevicePtr(p), d.err("cuMemAlloc_v2", d.f.memAlloc(&p, uint64(n)))
}

func (d *lib) MemFree(p DevicePtr) error { return d.err("cuMemFree_v2", d.f.memFree(uint64(p))) }

func (d *lib) MemsetD8(p DevicePtr, v byte, n int64) error {
	return d.err("cuMemsetD8_v2", d.f.memsetD8(uint64(p), v, uint64(n)))
}

func (d *lib) MemHostAlloc(n int) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	const portable = 1 // CU_MEMHOSTALLOC_PORTABLE
	return p, d.err("cuMemHostAlloc", d.f.memHostAlloc(&p, uint64(n), portable))
}

func (d *lib) MemFreeHost(p unsafe.Pointer) error { return d.err("cuMemFreeHost", d.f.memFreeHost(p)) }

func (d *lib) MemcpyHtoD(dst DevicePtr, src unsafe.Pointer, n int64) error {
	return d.err("cuMemcpyHtoD_v2", d.f.memcpyHtoD(uint64(dst), src, uint64(n)))
}

func (d *lib) MemcpyDtoH(dst unsafe.Pointer, src DevicePtr, n int64) error {
	return d.err("cuMemcpyDtoH_v2", d.f.memcpyDtoH(dst, uint64(src), uint64(n)))
}

func (d *lib) MemcpyHtoDAsync(dst DevicePtr, src unsafe.Pointer, n int64, s Stream) error {
	return d.err("cuMemcpyHtoDAsync_v2", d.f.memcpyHtoDAsync(uint64(dst), src, uint64(n), uintptr(s)))
}

func (d *lib) MemcpyDtoHAsync(dst unsafe.Pointer, src DevicePtr, n int64, s Stream) error {
	return d.err("cuMemcpyDtoHAsync_v2", d.f.memcpyDtoHAsync(dst, uint64(src), uint64(n), uintptr(s)))
}

func (d *lib) MemcpyDtoDAsync(dst, src DevicePtr, n int64, s Stream) error {
	return d.err("cuMemcpyDtoDAsync_v2", d.f.memcpyDtoDAsync(uint64(dst), uint64(src), uint64(n), uintptr(s)))
}

func (d *lib) StreamCreate() (Stream, error) {
	var s uintptr
	return Stream(s), d.err("cuStreamCreate", d.f.streamCreate(&s, 0))
}

func (d *lib) StreamDestroy(s Stream) error {
	return d.err("cuStreamDestroy_v2", d.f.streamDestroy(uintptr(s)))
}

func (d *lib) StreamSynchronize(s Stream) error {
	return d.err("cuStreamSynchronize", d.f.streamSynchronize(uintptr(s)))
}

func (d *lib) StreamWaitEvent(s Stream, e Event) error {
	return d.err("cuStreamWaitEvent", d.f.streamWaitEvent(uintptr(s), uintptr(e), 0))
}

func (d *lib) EventCreate(flags int) (Event, error) {
	var e uintptr
	return Event(e), d.err("cuEventCreate", d.f.eventCreate(&e, uint32(flags)))
}

func (d *lib) EventDestroy(e Event) error {
	return d.err("cuEventDestroy_v2", d.f.eventDestroy(uintptr(e)))
}

func (d *lib) EventRecord(e Event, s Stream) error {
	return d.err("cuEventRecord", d.f.eventRecord(uintptr(e), uintptr(s)))
}

func (d *lib) EventQuery(e Event) error { return d.err("cuEventQuery", d.f.eventQuery(uintptr(e))) }

func (d *lib) EventSynchronize(e Event) error {
	return d.err("cuEventSynchronize", d.f.eventSynchronize(uintptr(e)))
}

func (d *lib) EventElapsedTime(start, end Event) (float32, error) {
	var ms float32
	return ms, d.err("cuEventElapsedTime", d.f.eventElapsedTime(&ms, uintptr(start), uintptr(end)))
}

// jitLogBytes is the size of each JIT log buffer.
const jitLogBytes = 16 << 10

func (d *lib) ModuleLoadData(image []byte) (Module, JITLog, error) {
	img := append(append(make([]byte, 0, len(image)+1), image...), 0) // PTX must end in NUL
	info, errLog := make([]byte, jitLogBytes), make([]byte, jitLogBytes)
	// The option values are pointers the driver writes through: pinned, so
	// they may travel as integers.
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&info[0])
	pin.Pin(&errLog[0])
	opts := []int32{3, 4, 5, 6} // CU_JIT_{INFO,ERROR}_LOG_BUFFER{,_SIZE_BYTES}
	vals := []uintptr{uintptr(unsafe.Pointer(&info[0])), jitLogBytes - 1, uintptr(unsafe.Pointer(&errLog[0])), jitLogBytes - 1}
	var m uintptr
	r := d.f.moduleLoadDataEx(&m, img, uint32(len(opts)), opts, vals)
	log := JITLog{Info: cString(info), Error: cString(errLog)}
	if err := d.err("cuModuleLoadDataEx", r); err != nil {
		err.(*Error).Log = log.Error
		return 0, log, err
	}
	return Module(m), log, nil
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

func (d *lib) ModuleUnload(m Module) error {
	return d.err("cuModuleUnload", d.f.moduleUnload(uintptr(m)))
}

func (d *lib) ModuleGetFunction(m Module, name string) (Function, error) {
	var f uintptr
	if err := d.err("cuModuleGetFunction", d.f.moduleGetFunction(&f, uintptr(m), name)); err != nil {
		err.(*Error).Detail = fmt.Sprintf("function %q", name)
		return 0, err
	}
	return Function(f), nil
}

func (d *lib) FuncGetAttribute(f Function, a FuncAttribute) (int, error) {
	var v int32
	return int(v), d.err("cuFuncGetAttribute", d.f.funcGetAttribute(&v, int32(a), uintptr(f)))
}

func (d *lib) FuncSetAttribute(f Function, a FuncAttribute, v int) error {
	return d.err("cuFuncSetAttribute", d.f.funcSetAttribute(uintptr(f), int32(a), int32(v)))
}

func (d *lib) LaunchKernel(f Function, grid, block [3]uint32, sharedBytes uint32, s Stream, params []uint64) error {
	var ptrs []uintptr
	var pin runtime.Pinner
	defer pin.Unpin()
	if len(params) > 0 {
		pin.Pin(&params[0])
		ptrs = make([]uintptr, len(params))
		for i := range params {
			ptrs[i] = uintptr(unsafe.Pointer(&params[i]))
		}
	}
	r := d.f.launchKernel(uintptr(f), grid[0], grid[1], grid[2], block[0], block[1], block[2], sharedBytes, uintptr(s), ptrs, 0)
	return d.err("cuLaunchKernel", r)
}

func (d *lib) OccupancyMaxActiveBlocks(f Function, blockSize, dynamicShared int) (int, error) {
	var n int32
	r := d.f.occupancyMaxActiveBlock(&n, uintptr(f), int32(blockSize), uint64(dynamicShared))
	return int(n), d.err("cuOccupancyMaxActiveBlocksPerMultiprocessor", r)
}

// ErrorName asks the driver, falling back on tcrt's table.
func (d *lib) ErrorName(code Result) string {
	var s *byte
	if d.f.getErrorName(code, &s) != Success || s == nil {
		return CodeName(code)
	}
	return goString(s)
}

// ErrorString asks the driver, falling back on tcrt's table.
func (d *lib) ErrorString(code Result) string {
	var s *byte
	if d.f.getErrorString(code, &s) != Success || s == nil {
		return CodeString(code)
	}
	return goString(s)
}

// goString copies the NUL-terminated C string at p (driver memory).
func goString(p *byte) string {
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}
