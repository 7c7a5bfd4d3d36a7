//go:build cuda

package cuda

/*
#include <cuda.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"reflect"
)

// cudaError is a driver failure: the call, CUDA's own name and text for the
// result code, and the runtime sentinel it maps to (errors.Is works with
// ErrOutOfMemory, ErrNoDevice, ErrUnsupported, ErrArgument, ErrClosed or
// ErrDevice).
type cudaError struct {
	op       string
	code     int
	name     string
	text     string
	sentinel error
}

func (e *cudaError) Error() string {
	return fmt.Sprintf("tcrt: cuda: %s: %s (%d): %s", e.op, e.name, e.code, e.text)
}

func (e *cudaError) Unwrap() error { return e.sentinel }

// cudaSentinels maps result codes to sentinels; anything else is ErrDevice.
var cudaSentinels = map[int]error{
	C.CUDA_ERROR_OUT_OF_MEMORY:                  ErrOutOfMemory,
	C.CUDA_ERROR_NO_DEVICE:                      ErrNoDevice,
	C.CUDA_ERROR_INVALID_DEVICE:                 ErrNoDevice,
	C.CUDA_ERROR_NOT_INITIALIZED:                ErrNoDevice,
	C.CUDA_ERROR_STUB_LIBRARY:                   ErrNoDevice,
	C.CUDA_ERROR_DEVICE_UNAVAILABLE:             ErrNoDevice,
	C.CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:         ErrNoDevice,
	C.CUDA_ERROR_DEINITIALIZED:                  ErrClosed,
	C.CUDA_ERROR_CONTEXT_IS_DESTROYED:           ErrClosed,
	C.CUDA_ERROR_INVALID_VALUE:                  ErrArgument,
	C.CUDA_ERROR_NOT_SUPPORTED:                  ErrUnsupported,
	C.CUDA_ERROR_NO_BINARY_FOR_GPU:              ErrUnsupported,
	C.CUDA_ERROR_INVALID_PTX:                    ErrUnsupported,
	C.CUDA_ERROR_UNSUPPORTED_PTX_VERSION:        ErrUnsupported,
	C.CUDA_ERROR_JIT_COMPILER_NOT_FOUND:         ErrUnsupported,
	C.CUDA_ERROR_JIT_COMPILATION_DISABLED:       ErrUnsupported,
	C.CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: ErrUnsupported,
}

// codeError maps a raw result code.
func codeError(op string, code int) error {
	s, ok := cudaSentinels[code]
	if !ok {
		s = ErrDevice
	}
	return &cudaError{op: op, code: code, name: cudaErrorName(code), text: cudaErrorString(code), sentinel: s}
}

// cudaErr maps an error from gorgonia.org/cu (its result type is an int
// kind) or passes an error of tcrt's through.
func cudaErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var ce *cudaError
	if errors.As(err, &ce) {
		return err
	}
	if v := reflect.ValueOf(err); v.Kind() == reflect.Int {
		return codeError(op, int(v.Int()))
	}
	return fmt.Errorf("tcrt: cuda: %s: %w (%w)", op, err, ErrDevice)
}
