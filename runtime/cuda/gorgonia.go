//go:build cuda

package cuda

// The gorgonia.org/cu driver (build tag cuda): the Driver interface over
// cu v0.9.6, plus a cgo shim for the calls cu lacks or wraps in a way tcrt
// cannot use (error names, pinned host memory, module loading with JIT
// logs, function attributes, launching with 8-byte parameter slots,
// occupancy). It links libcuda at build time, and importing cu runs its
// init, which calls cuInit and exits the process when that fails.

/*
#cgo LDFLAGS: -lcuda
#include <cuda.h>
#include <stdint.h>
#include <stdlib.h>

static const char* tcrt_error_name(int r) {
	const char* s = NULL;
	if (cuGetErrorName((CUresult)r, &s) != CUDA_SUCCESS || s == NULL) return "CUDA_ERROR_UNRECOGNIZED";
	return s;
}

static const char* tcrt_error_string(int r) {
	const char* s = NULL;
	if (cuGetErrorString((CUresult)r, &s) != CUDA_SUCCESS || s == NULL) return "unrecognized error code";
	return s;
}

static int tcrt_host_alloc(size_t n, void** p) { return cuMemHostAlloc(p, n, CU_MEMHOSTALLOC_PORTABLE); }
static int tcrt_host_free(void* p) { return cuMemFreeHost(p); }

static int tcrt_module_load(const void* image, CUmodule* mod, char* info, char* err, size_t logn) {
	CUjit_option opts[4] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
		CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
	void* vals[4] = {info, (void*)(uintptr_t)logn, err, (void*)(uintptr_t)logn};
	return cuModuleLoadDataEx(mod, image, 4, opts, vals);
}

static int tcrt_module_unload(CUmodule m) { return cuModuleUnload(m); }

static int tcrt_module_function(CUmodule m, const char* name, CUfunction* f) {
	return cuModuleGetFunction(f, m, name);
}

static int tcrt_func_get(CUfunction f, int a, int* v) { return cuFuncGetAttribute(v, (CUfunction_attribute)a, f); }
static int tcrt_func_set(CUfunction f, int a, int v) { return cuFuncSetAttribute(f, (CUfunction_attribute)a, v); }

static int tcrt_occupancy(CUfunction f, int block, size_t smem, int* n) {
	return cuOccupancyMaxActiveBlocksPerMultiprocessor(n, f, block, smem);
}

// tcrt_launch passes parameter i as a pointer to slots[i]: every parameter
// lives in an 8-byte slot. The driver copies the values before returning.
static int tcrt_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned smem, CUstream s,
		unsigned long long* slots, int n) {
	void* ptrs[64];
	if (n < 0 || n > 64) return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < n; i++) ptrs[i] = &slots[i];
	return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, smem, s, n ? ptrs : NULL, NULL);
}
*/
import "C"

import (
	"fmt"
	"reflect"
	"sync"
	"unsafe"

	cu "gorgonia.org/cu"

	"github.com/tcrt-go/tcrt/runtime/cuda/driver"
)

func init() {
	defaultDriver = func(string) (driver.Driver, error) { return gorgoniaDriver, nil }
	DriverName = "gorgonia.org/cu (-tags cuda, linked at build time)"
}

// handles maps the driver interface's integer handles to cu's values.
type handles[T any] struct {
	mu   sync.Mutex
	next uintptr
	m    map[uintptr]T
}

func (h *handles[T]) put(v T) uintptr {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[uintptr]T{}
	}
	h.next++
	h.m[h.next] = v
	return h.next
}

func (h *handles[T]) get(k uintptr) (T, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.m[k]
	return v, ok
}

func (h *handles[T]) drop(k uintptr) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.m, k)
}

type gorgonia struct {
	ctxs    handles[cu.CUContext]
	streams handles[cu.Stream]
	events  handles[cu.Event]
	mods    handles[C.CUmodule]
	fns     handles[C.CUfunction]
}

var gorgoniaDriver = &gorgonia{}

var errBadHandle = &driver.Error{Code: driver.ErrorInvalidHandle, Name: driver.CodeName(driver.ErrorInvalidHandle), Text: driver.CodeString(driver.ErrorInvalidHandle)}

func badHandle(call string) error { e := *errBadHandle; e.Call = call; return &e }

// gerr maps cu's error (an int kind) to a *driver.Error.
func (g *gorgonia) gerr(call string, err error) error {
	if err == nil {
		return nil
	}
	if v := reflect.ValueOf(err); v.Kind() == reflect.Int {
		return driver.NewError(g, call, driver.Result(v.Int()))
	}
	return &driver.Error{Call: call, Code: driver.ErrorUnknown, Name: "CUDA_ERROR_UNKNOWN", Text: err.Error()}
}

func (g *gorgonia) rerr(call string, r C.int) error {
	return driver.NewError(g, call, driver.Result(r))
}

func (g *gorgonia) Name() string          { return "gorgonia.org/cu" }
func (g *gorgonia) Version() (int, error) { return cu.Version(), nil }

func (g *gorgonia) DeviceCount() (int, error) {
	n, err := cu.NumDevices()
	return n, g.gerr("cuDeviceGetCount", err)
}

func (g *gorgonia) DeviceGet(ordinal int) (driver.Device, error) {
	d, err := cu.GetDevice(ordinal)
	return driver.Device(d), g.gerr("cuDeviceGet", err)
}

func (g *gorgonia) DeviceName(d driver.Device) (string, error) {
	n, err := cu.Device(d).Name()
	return n, g.gerr("cuDeviceGetName", err)
}

func (g *gorgonia) DeviceTotalMem(d driver.Device) (int64, error) {
	n, err := cu.Device(d).TotalMem()
	return n, g.gerr("cuDeviceTotalMem", err)
}

func (g *gorgonia) DeviceAttribute(d driver.Device, a driver.Attribute) (int, error) {
	v, err := cu.Device(d).Attribute(cu.DeviceAttribute(a))
	return v, g.gerr("cuDeviceGetAttribute", err)
}

func (g *gorgonia) PrimaryCtxRetain(d driver.Device) (driver.Context, error) {
	c, err := cu.Device(d).RetainPrimaryCtx()
	if err != nil {
		return 0, g.gerr("cuDevicePrimaryCtxRetain", err)
	}
	return driver.Context(g.ctxs.put(c)), nil
}

func (g *gorgonia) PrimaryCtxRelease(d driver.Device) error {
	return g.gerr("cuDevicePrimaryCtxRelease", cu.Device(d).ReleasePrimaryCtx())
}

func (g *gorgonia) CtxSetCurrent(c driver.Context) error {
	ctx, ok := g.ctxs.get(uintptr(c))
	if !ok {
		return badHandle("cuCtxSetCurrent")
	}
	return g.gerr("cuCtxSetCurrent", cu.SetCurrentContext(ctx))
}

func (g *gorgonia) CtxSynchronize() error { return g.gerr("cuCtxSynchronize", cu.Synchronize()) }

func (g *gorgonia) MemAlloc(n int64) (driver.DevicePtr, error) {
	p, err := cu.MemAlloc(n)
	return driver.DevicePtr(p), g.gerr("cuMemAlloc", err)
}

func (g *gorgonia) MemFree(p driver.DevicePtr) error {
	return g.gerr("cuMemFree", cu.MemFree(cu.DevicePtr(p)))
}

func (g *gorgonia) MemsetD8(p driver.DevicePtr, v byte, n int64) error {
	return g.gerr("cuMemsetD8", cu.MemsetD8(cu.DevicePtr(p), v, n))
}

func (g *gorgonia) MemHostAlloc(n int) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	return p, g.rerr("cuMemHostAlloc", C.tcrt_host_alloc(C.size_t(n), &p))
}

func (g *gorgonia) MemFreeHost(p unsafe.Pointer) error {
	return g.rerr("cuMemFreeHost", C.tcrt_host_free(p))
}

func (g *gorgonia) MemcpyHtoD(dst driver.DevicePtr, src unsafe.Pointer, n int64) error {
	return g.gerr("cuMemcpyHtoD", cu.MemcpyHtoD(cu.DevicePtr(dst), src, n))
}

func (g *gorgonia) MemcpyDtoH(dst unsafe.Pointer, src driver.DevicePtr, n int64) error {
	return g.gerr("cuMemcpyDtoH", cu.MemcpyDtoH(dst, cu.DevicePtr(src), n))
}

// stream is s's cu value (0: the default stream).
func (g *gorgonia) stream(s driver.Stream) (cu.Stream, bool) {
	if s == 0 {
		return cu.Stream{}, true
	}
	return g.streams.get(uintptr(s))
}

func (g *gorgonia) MemcpyHtoDAsync(dst driver.DevicePtr, src unsafe.Pointer, n int64, s driver.Stream) error {
	cs, ok := g.stream(s)
	if !ok {
		return badHandle("cuMemcpyHtoDAsync")
	}
	return g.gerr("cuMemcpyHtoDAsync", cu.MemcpyHtoDAsync(cu.DevicePtr(dst), src, n, cs))
}

func (g *gorgonia) MemcpyDtoHAsync(dst unsafe.Pointer, src driver.DevicePtr, n int64, s driver.Stream) error {
	cs, ok := g.stream(s)
	if !ok {
		return badHandle("cuMemcpyDtoHAsync")
	}
	return g.gerr("cuMemcpyDtoHAsync", cu.MemcpyDtoHAsync(dst, cu.DevicePtr(src), n, cs))
}

func (g *gorgonia) MemcpyDtoDAsync(dst, src driver.DevicePtr, n int64, s driver.Stream) error {
	cs, ok := g.stream(s)
	if !ok {
		return badHandle("cuMemcpyDtoDAsync")
	}
	return g.gerr("cuMemcpyDtoDAsync", cu.MemcpyDtoDAsync(cu.DevicePtr(dst), cu.DevicePtr(src), n, cs))
}

func (g *gorgonia) StreamCreate() (driver.Stream, error) {
	s, err := cu.MakeStream(cu.DefaultStream)
	if err != nil {
		return 0, g.gerr("cuStreamCreate", err)
	}
	return driver.Stream(g.streams.put(s)), nil
}

func (g *gorgonia) StreamDestroy(s driver.Stream) error {
	cs, ok := g.streams.get(uintptr(s))
	if !ok {
		return badHandle("cuStreamDestroy")
	}
	g.streams.drop(uintptr(s))
	return g.gerr("cuStreamDestroy", cs.Destroy())
}

func (g *gorgonia) StreamSynchronize(s driver.Stream) error {
	cs, ok := g.stream(s)
	if !ok {
		return badHandle("cuStreamSynchronize")
	}
	return g.gerr("cuStreamSynchronize", cs.Synchronize())
}

func (g *gorgonia) StreamWaitEvent(s driver.Stream, e driver.Event) error {
	cs, ok := g.stream(s)
	ce, ok2 := g.events.get(uintptr(e))
	if !ok || !ok2 {
		return badHandle("cuStreamWaitEvent")
	}
	return g.gerr("cuStreamWaitEvent", cs.Wait(ce, 0))
}

func (g *gorgonia) EventCreate(flags int) (driver.Event, error) {
	e, err := cu.MakeEvent(cu.EventFlags(flags))
	if err != nil {
		return 0, g.gerr("cuEventCreate", err)
	}
	return driver.Event(g.events.put(e)), nil
}

func (g *gorgonia) EventDestroy(e driver.Event) error {
	ce, ok := g.events.get(uintptr(e))
	if !ok {
		return badHandle("cuEventDestroy")
	}
	g.events.drop(uintptr(e))
	return g.gerr("cuEventDestroy", cu.DestroyEvent(&ce))
}

func (g *gorgonia) EventRecord(e driver.Event, s driver.Stream) error {
	ce, ok := g.events.get(uintptr(e))
	cs, ok2 := g.stream(s)
	if !ok || !ok2 {
		return badHandle("cuEventRecord")
	}
	return g.gerr("cuEventRecord", ce.Record(cs))
}

func (g *gorgonia) EventQuery(e driver.Event) error {
	ce, ok := g.events.get(uintptr(e))
	if !ok {
		return badHandle("cuEventQuery")
	}
	return g.gerr("cuEventQuery", ce.Query())
}

func (g *gorgonia) EventSynchronize(e driver.Event) error {
	ce, ok := g.events.get(uintptr(e))
	if !ok {
		return badHandle("cuEventSynchronize")
	}
	return g.gerr("cuEventSynchronize", ce.Synchronize())
}

func (g *gorgonia) EventElapsedTime(start, end driver.Event) (float32, error) {
	s, ok := g.events.get(uintptr(start))
	e, ok2 := g.events.get(uintptr(end))
	if !ok || !ok2 {
		return 0, badHandle("cuEventElapsedTime")
	}
	ms, err := s.Elapsed(e)
	return float32(ms), g.gerr("cuEventElapsedTime", err)
}

// jitLogBytes is the size of each JIT log buffer.
const jitLogBytes = 16 << 10

func (g *gorgonia) ModuleLoadData(image []byte) (driver.Module, driver.JITLog, error) {
	buf := C.CBytes(append(append([]byte(nil), image...), 0)) // PTX must end in NUL
	defer C.free(buf)
	logs := (*C.char)(C.calloc(2, jitLogBytes))
	defer C.free(unsafe.Pointer(logs))
	errLog := (*C.char)(unsafe.Add(unsafe.Pointer(logs), jitLogBytes))
	var mod C.CUmodule
	r := C.tcrt_module_load(buf, &mod, logs, errLog, jitLogBytes-1)
	log := driver.JITLog{Info: C.GoString(logs), Error: C.GoString(errLog)}
	if err := g.rerr("cuModuleLoadDataEx", r); err != nil {
		err.(*driver.Error).Log = log.Error
		return 0, log, err
	}
	return driver.Module(g.mods.put(mod)), log, nil
}

func (g *gorgonia) ModuleUnload(m driver.Module) error {
	mod, ok := g.mods.get(uintptr(m))
	if !ok {
		return badHandle("cuModuleUnload")
	}
	g.mods.drop(uintptr(m))
	return g.rerr("cuModuleUnload", C.tcrt_module_unload(mod))
}

func (g *gorgonia) ModuleGetFunction(m driver.Module, name string) (driver.Function, error) {
	mod, ok := g.mods.get(uintptr(m))
	if !ok {
		return 0, badHandle("cuModuleGetFunction")
	}
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var f C.CUfunction
	if err := g.rerr("cuModuleGetFunction", C.tcrt_module_function(mod, cs, &f)); err != nil {
		err.(*driver.Error).Detail = fmt.Sprintf("function %q", name)
		return 0, err
	}
	return driver.Function(g.fns.put(f)), nil
}

func (g *gorgonia) FuncGetAttribute(f driver.Function, a driver.FuncAttribute) (int, error) {
	fn, ok := g.fns.get(uintptr(f))
	if !ok {
		return 0, badHandle("cuFuncGetAttribute")
	}
	var v C.int
	return int(v), g.rerr("cuFuncGetAttribute", C.tcrt_func_get(fn, C.int(a), &v))
}

func (g *gorgonia) FuncSetAttribute(f driver.Function, a driver.FuncAttribute, v int) error {
	fn, ok := g.fns.get(uintptr(f))
	if !ok {
		return badHandle("cuFuncSetAttribute")
	}
	return g.rerr("cuFuncSetAttribute", C.tcrt_func_set(fn, C.int(a), C.int(v)))
}

func (g *gorgonia) LaunchKernel(f driver.Function, grid, block [3]uint32, sharedBytes uint32, s driver.Stream, params []uint64) error {
	fn, ok := g.fns.get(uintptr(f))
	cs, ok2 := g.stream(s)
	if !ok || !ok2 {
		return badHandle("cuLaunchKernel")
	}
	var slots *C.ulonglong
	if len(params) > 0 {
		slots = (*C.ulonglong)(unsafe.Pointer(unsafe.SliceData(params)))
	}
	r := C.tcrt_launch(fn, C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]),
		C.uint(block[0]), C.uint(block[1]), C.uint(block[2]), C.uint(sharedBytes),
		C.CUstream(unsafe.Pointer(cs.C())), slots, C.int(len(params)))
	return g.rerr("cuLaunchKernel", r)
}

func (g *gorgonia) OccupancyMaxActiveBlocks(f driver.Function, blockSize, dynamicShared int) (int, error) {
	fn, ok := g.fns.get(uintptr(f))
	if !ok {
		return 0, badHandle("cuOccupancyMaxActiveBlocksPerMultiprocessor")
	}
	var n C.int
	return int(n), g.rerr("cuOccupancyMaxActiveBlocksPerMultiprocessor", C.tcrt_occupancy(fn, C.int(blockSize), C.size_t(dynamicShared), &n))
}

func (g *gorgonia) ErrorName(code driver.Result) string {
	return C.GoString(C.tcrt_error_name(C.int(code)))
}

func (g *gorgonia) ErrorString(code driver.Result) string {
	return C.GoString(C.tcrt_error_string(C.int(code)))
}
