//go:build cuda

package cuda

// The cgo shim: the few driver calls gorgonia.org/cu v0.9.6 lacks or wraps
// in a way tcrt cannot use (error names, the opt-in shared-memory limit,
// pinned host memory, module loading with JIT logs, launching with 8-byte
// parameter slots). Every function here must be called on the device's
// worker thread, like every other driver call.

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

static int tcrt_device_attr(int dev, int attr, int* v) {
	return cuDeviceGetAttribute(v, (CUdevice_attribute)attr, (CUdevice)dev);
}

static int tcrt_host_alloc(size_t n, void** p) {
	return cuMemHostAlloc(p, n, CU_MEMHOSTALLOC_PORTABLE);
}

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

static int tcrt_func_set_smem(CUfunction f, int bytes) {
	return cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
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
	"unsafe"

	cu "gorgonia.org/cu"
)

// Device attributes cu v0.9.6 does not name.
const attrMaxSharedPerBlockOptin = C.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN

// cudaErrorName is CUDA's name for a result code (CUDA_ERROR_OUT_OF_MEMORY).
func cudaErrorName(code int) string { return C.GoString(C.tcrt_error_name(C.int(code))) }

// cudaErrorString is the driver's description of a result code.
func cudaErrorString(code int) string { return C.GoString(C.tcrt_error_string(C.int(code))) }

func shimDeviceAttr(dev, attr int) (int, error) {
	var v C.int
	if r := C.tcrt_device_attr(C.int(dev), C.int(attr), &v); r != 0 {
		return 0, codeError("device attribute", int(r))
	}
	return int(v), nil
}

// pinnedAlloc returns n bytes of page-locked host memory.
func pinnedAlloc(n int) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if r := C.tcrt_host_alloc(C.size_t(n), &p); r != 0 {
		return nil, codeError("pinned host alloc", int(r))
	}
	return p, nil
}

func pinnedFree(p unsafe.Pointer) error {
	if r := C.tcrt_host_free(p); r != 0 {
		return codeError("pinned host free", int(r))
	}
	return nil
}

// cuModule and cuFunction are the driver's handles.
type (
	cuModule   = C.CUmodule
	cuFunction = C.CUfunction
)

// jitLogBytes is the size of each JIT log buffer.
const jitLogBytes = 16 << 10

// moduleLoad loads a cubin or PTX image; on failure the error carries the
// driver JIT's error log.
func moduleLoad(image []byte) (cuModule, string, error) {
	buf := C.CBytes(append(append([]byte(nil), image...), 0)) // PTX must end in NUL
	defer C.free(buf)
	logs := (*C.char)(C.calloc(2, jitLogBytes))
	defer C.free(unsafe.Pointer(logs))
	errLog := (*C.char)(unsafe.Add(unsafe.Pointer(logs), jitLogBytes))
	var mod C.CUmodule
	r := C.tcrt_module_load(buf, &mod, logs, errLog, jitLogBytes-1)
	info := C.GoString(logs)
	if r != 0 {
		err := codeError("module load", int(r))
		if el := C.GoString(errLog); el != "" {
			err = fmt.Errorf("%w\nJIT log:\n%s", err, el)
		}
		return nil, info, err
	}
	return mod, info, nil
}

func moduleUnload(m cuModule) error {
	if r := C.tcrt_module_unload(m); r != 0 {
		return codeError("module unload", int(r))
	}
	return nil
}

func moduleFunction(m cuModule, name string) (cuFunction, error) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var f C.CUfunction
	if r := C.tcrt_module_function(m, cs, &f); r != 0 {
		return nil, fmt.Errorf("function %q: %w", name, codeError("module get function", int(r)))
	}
	return f, nil
}

func funcSetSharedBytes(f cuFunction, n int) error {
	if r := C.tcrt_func_set_smem(f, C.int(n)); r != 0 {
		return codeError("set max dynamic shared memory", int(r))
	}
	return nil
}

// launch launches f on stream s with params in 8-byte slots.
func launch(f cuFunction, g GPULaunch, s cu.Stream) error {
	var slots *C.ulonglong
	if len(g.Params) > 0 {
		slots = (*C.ulonglong)(unsafe.Pointer(unsafe.SliceData(g.Params)))
	}
	r := C.tcrt_launch(f, C.uint(g.Grid[0]), C.uint(g.Grid[1]), C.uint(g.Grid[2]),
		C.uint(g.Block[0]), C.uint(g.Block[1]), C.uint(g.Block[2]), C.uint(g.SharedBytes),
		C.CUstream(unsafe.Pointer(s.C())), slots, C.int(len(g.Params)))
	if r != 0 {
		return fmt.Errorf("kernel %s: %w", g.Func, codeError("launch", int(r)))
	}
	return nil
}
