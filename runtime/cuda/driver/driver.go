// Package driver is the layer under tcrt's CUDA backend: one Go interface,
// Driver, over the CUDA driver API entry points the backend uses, and its
// default implementation, which loads libcuda.so.1 at run time with
// github.com/ebitengine/purego (no cgo; Load).
//
// Three implementations exist: Load's (the default build, CGO-free), the
// gorgonia.org/cu one in package runtime/cuda (build tag cuda, cgo, linked
// against libcuda at build time), and the simulated SM86/SM89 device in
// package runtime/sim, so the backend above this interface runs in plain
// go test.
//
// Conventions. Every method mirrors one driver call and returns nil or an
// *Error carrying the call's name and CUDA's result code, name and text.
// The driver's current context is per OS thread: callers make a context
// current with CtxSetCurrent on a locked OS thread and issue every call
// that needs it from that thread (the backend keeps one locked worker
// goroutine per device). Handles are the driver's opaque values.
package driver

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/tcrt-go/tcrt/tile"
)

// Handles the driver hands out.
type (
	Device    int32   // CUdevice: an ordinal
	Context   uintptr // CUcontext
	Module    uintptr // CUmodule
	Function  uintptr // CUfunction
	Stream    uintptr // CUstream; 0 is the legacy default stream
	Event     uintptr // CUevent
	DevicePtr uint64  // CUdeviceptr
)

// Attribute is a CUdevice_attribute.
type Attribute int32

// The device attributes the backend reads (cuda.h values).
const (
	AttrMaxThreadsPerBlock         Attribute = 1
	AttrMaxSharedPerBlock          Attribute = 8
	AttrMaxRegistersPerBlock       Attribute = 12
	AttrClockRate                  Attribute = 13
	AttrMultiprocessorCount        Attribute = 16
	AttrMemoryClockRate            Attribute = 36
	AttrGlobalMemoryBusWidth       Attribute = 37
	AttrL2CacheSize                Attribute = 38
	AttrComputeCapabilityMajor     Attribute = 75
	AttrComputeCapabilityMinor     Attribute = 76
	AttrMaxSharedPerMultiprocessor Attribute = 81
	AttrMaxRegistersPerSM          Attribute = 82
	AttrMaxSharedPerBlockOptin     Attribute = 97
)

// FuncAttribute is a CUfunction_attribute.
type FuncAttribute int32

// Function attributes (cuda.h values).
const (
	FuncMaxThreadsPerBlock  FuncAttribute = 0
	FuncSharedSizeBytes     FuncAttribute = 1 // static shared memory
	FuncNumRegs             FuncAttribute = 4
	FuncMaxDynamicSharedMem FuncAttribute = 8
)

// Event flags (CUevent_flags).
const (
	EventDefault       = 0
	EventDisableTiming = 2
)

// MinVersion is the oldest driver (cuDriverGetVersion, 1000·major +
// 10·minor) the backend accepts: 11.1, the first to run sm_86 cubins and
// the PTX ISA 7.0 of tcrt's PTX modules.
const MinVersion = 11010

// JITLog is what the driver's compiler and loader wrote during a module
// load (CU_JIT_INFO_LOG_BUFFER and CU_JIT_ERROR_LOG_BUFFER).
type JITLog struct {
	Info, Error string
}

// Driver is the CUDA driver API as the backend uses it. Implementations are
// safe for concurrent use to the extent the driver is; methods that act in
// the current context must be called on the thread it is current on.
type Driver interface {
	// Name says which implementation this is and what it loaded
	// ("libcuda.so.1 (purego)").
	Name() string
	// Version is cuDriverGetVersion.
	Version() (int, error)

	DeviceCount() (int, error)
	DeviceGet(ordinal int) (Device, error)
	DeviceName(d Device) (string, error)
	DeviceTotalMem(d Device) (int64, error)
	DeviceAttribute(d Device, a Attribute) (int, error)

	PrimaryCtxRetain(d Device) (Context, error)
	PrimaryCtxRelease(d Device) error
	CtxSetCurrent(c Context) error
	CtxSynchronize() error

	MemAlloc(n int64) (DevicePtr, error)
	MemFree(p DevicePtr) error
	MemsetD8(p DevicePtr, v byte, n int64) error
	// MemHostAlloc returns n bytes of page-locked (portable) host memory.
	MemHostAlloc(n int) (unsafe.Pointer, error)
	MemFreeHost(p unsafe.Pointer) error
	MemcpyHtoD(dst DevicePtr, src unsafe.Pointer, n int64) error
	MemcpyDtoH(dst unsafe.Pointer, src DevicePtr, n int64) error
	MemcpyHtoDAsync(dst DevicePtr, src unsafe.Pointer, n int64, s Stream) error
	MemcpyDtoHAsync(dst unsafe.Pointer, src DevicePtr, n int64, s Stream) error
	MemcpyDtoDAsync(dst, src DevicePtr, n int64, s Stream) error

	StreamCreate() (Stream, error)
	StreamDestroy(s Stream) error
	StreamSynchronize(s Stream) error
	StreamWaitEvent(s Stream, e Event) error

	EventCreate(flags int) (Event, error)
	EventDestroy(e Event) error
	EventRecord(e Event, s Stream) error
	// EventQuery returns nil when e has completed and an *Error with code
	// ErrorNotReady while it has not.
	EventQuery(e Event) error
	EventSynchronize(e Event) error
	// EventElapsedTime is the time from start to end in milliseconds.
	EventElapsedTime(start, end Event) (float32, error)

	// ModuleLoadData loads a cubin or PTX image (PTX need not end in NUL:
	// implementations terminate it). The log is returned on failure too,
	// and a failure's *Error carries it in Log.
	ModuleLoadData(image []byte) (Module, JITLog, error)
	ModuleUnload(m Module) error
	ModuleGetFunction(m Module, name string) (Function, error)
	FuncGetAttribute(f Function, a FuncAttribute) (int, error)
	FuncSetAttribute(f Function, a FuncAttribute, v int) error
	// LaunchKernel launches f; params holds one 8-byte slot per kernel
	// parameter (parameter i is passed as a pointer to params[i]). The
	// driver copies the values before it returns.
	LaunchKernel(f Function, grid, block [3]uint32, sharedBytes uint32, s Stream, params []uint64) error
	// OccupancyMaxActiveBlocks is
	// cuOccupancyMaxActiveBlocksPerMultiprocessor.
	OccupancyMaxActiveBlocks(f Function, blockSize, dynamicShared int) (int, error)

	ErrorName(code Result) string
	ErrorString(code Result) string
}

// Result is a CUresult.
type Result int32

// The result codes tcrt names (cuda.h values).
const (
	Success                    Result = 0
	ErrorInvalidValue          Result = 1
	ErrorOutOfMemory           Result = 2
	ErrorNotInitialized        Result = 3
	ErrorDeinitialized         Result = 4
	ErrorStubLibrary           Result = 34
	ErrorDeviceUnavailable     Result = 46
	ErrorNoDevice              Result = 100
	ErrorInvalidDevice         Result = 101
	ErrorInvalidImage          Result = 200
	ErrorInvalidContext        Result = 201
	ErrorNoBinaryForGPU        Result = 209
	ErrorInvalidPTX            Result = 218
	ErrorJITCompilerNotFound   Result = 221
	ErrorUnsupportedPTXVersion Result = 222
	ErrorJITCompilationOff     Result = 223
	ErrorInvalidHandle         Result = 400
	ErrorNotFound              Result = 500
	ErrorNotReady              Result = 600
	ErrorIllegalAddress        Result = 700
	ErrorLaunchOutOfResources  Result = 701
	ErrorLaunchTimeout         Result = 702
	ErrorContextIsDestroyed    Result = 709
	ErrorIllegalInstruction    Result = 715
	ErrorMisalignedAddress     Result = 716
	ErrorLaunchFailed          Result = 719
	ErrorNotSupported          Result = 801
	ErrorSystemDriverMismatch  Result = 803
	ErrorCompatNotSupported    Result = 804
	ErrorUnknown               Result = 999
)

// codeText is cuda.h's name and the driver's description of each code
// above, for drivers without cuGetErrorName (the simulator) and for codes
// a real driver does not name.
var codeText = map[Result][2]string{
	Success:                    {"CUDA_SUCCESS", "no error"},
	ErrorInvalidValue:          {"CUDA_ERROR_INVALID_VALUE", "invalid argument"},
	ErrorOutOfMemory:           {"CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
	ErrorNotInitialized:        {"CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
	ErrorDeinitialized:         {"CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
	ErrorStubLibrary:           {"CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
	ErrorDeviceUnavailable:     {"CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA-capable device(s) is/are busy or unavailable"},
	ErrorNoDevice:              {"CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
	ErrorInvalidDevice:         {"CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
	ErrorInvalidImage:          {"CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
	ErrorInvalidContext:        {"CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
	ErrorNoBinaryForGPU:        {"CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
	ErrorInvalidPTX:            {"CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
	ErrorJITCompilerNotFound:   {"CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "PTX JIT compiler library not found"},
	ErrorUnsupportedPTXVersion: {"CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain."},
	ErrorJITCompilationOff:     {"CUDA_ERROR_JIT_COMPILATION_DISABLED", "PTX JIT compilation was disabled"},
	ErrorInvalidHandle:         {"CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
	ErrorNotFound:              {"CUDA_ERROR_NOT_FOUND", "named symbol not found"},
	ErrorNotReady:              {"CUDA_ERROR_NOT_READY", "device not ready"},
	ErrorIllegalAddress:        {"CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
	ErrorLaunchOutOfResources:  {"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
	ErrorLaunchTimeout:         {"CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
	ErrorContextIsDestroyed:    {"CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed"},
	ErrorIllegalInstruction:    {"CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction was encountered"},
	ErrorMisalignedAddress:     {"CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"},
	ErrorLaunchFailed:          {"CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
	ErrorNotSupported:          {"CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
	ErrorSystemDriverMismatch:  {"CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "system has unsupported display driver / cuda driver combination"},
	ErrorCompatNotSupported:    {"CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "forward compatibility was attempted on non supported HW"},
	ErrorUnknown:               {"CUDA_ERROR_UNKNOWN", "unknown error"},
}

// CodeName is cuda.h's name for code, "CUDA_ERROR_UNRECOGNIZED" when tcrt
// does not know it.
func CodeName(code Result) string {
	if t, ok := codeText[code]; ok {
		return t[0]
	}
	return "CUDA_ERROR_UNRECOGNIZED"
}

// CodeString is the driver's description of code, as far as tcrt knows it.
func CodeString(code Result) string {
	if t, ok := codeText[code]; ok {
		return t[1]
	}
	return "unrecognized error code"
}

// Error is a failed driver call.
type Error struct {
	Call string // the entry point, "cuLaunchKernel"
	Code Result
	Name string // CUDA's name for Code, "CUDA_ERROR_INVALID_VALUE"
	Text string // the driver's description of Code
	// Detail is what the implementation knows beyond the code (the
	// simulator says which check failed or where a kernel faulted; a real
	// driver says nothing more).
	Detail string
	// Log is the JIT log of a failed module load.
	Log string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %s (%d): %s", e.Call, e.Name, e.Code, e.Text)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if l := strings.TrimSpace(e.Log); l != "" {
		s += "\ndriver log:\n" + l
	}
	return s
}

// NewError is the *Error for code from call, named by d (nil when code is
// Success).
func NewError(d Driver, call string, code Result) error {
	if code == Success {
		return nil
	}
	return &Error{Call: call, Code: code, Name: d.ErrorName(code), Text: d.ErrorString(code)}
}

// IsCode reports whether err is an *Error with the given code.
func IsCode(err error, code Result) bool {
	e, ok := err.(*Error)
	return ok && e.Code == code
}

// Step names what Load was doing when it failed.
type Step string

// The steps of Load, in order.
const (
	StepLibrary  Step = "load library"
	StepSymbol   Step = "resolve symbol"
	StepInit     Step = "cuInit"
	StepVersion  Step = "driver version"
	StepNoDevice Step = "count devices"
)

// LoadError is why the CUDA driver could not be used: the step, the
// library path, the missing symbol (StepSymbol) and the cause. It wraps
// tile.ErrNoDevice, and the cause (an *Error for StepInit).
type LoadError struct {
	Step   Step
	Path   string
	Symbol string
	Err    error
}

func (e *LoadError) Error() string {
	switch e.Step {
	case StepSymbol:
		return fmt.Sprintf("cuda driver: %s: symbol %s missing: %v", e.Path, e.Symbol, e.Err)
	case StepInit:
		return fmt.Sprintf("cuda driver: %s: %v", e.Path, e.Err)
	case StepLibrary: // dlerror's text starts with the path
		return fmt.Sprintf("cuda driver: cannot load %s: %s", e.Path, strings.TrimPrefix(fmt.Sprint(e.Err), e.Path+": "))
	}
	return fmt.Sprintf("cuda driver: %s: %s: %v", e.Path, e.Step, e.Err)
}

// Unwrap returns the cause and tile.ErrNoDevice.
func (e *LoadError) Unwrap() []error { return []error{e.Err, tile.ErrNoDevice} }
