package cuda

import (
	"errors"
	"fmt"

	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/runtime/cuda/driver"
)

// Error is a failed driver call as the backend reports it: what the
// backend was doing, the driver's error (errors.As finds the
// *driver.Error, with its code, name, text and log) and the sentinel the
// code maps to (errors.Is works with ErrOutOfMemory, ErrNoDevice,
// ErrUnsupported, ErrArgument, ErrClosed or ErrDevice).
type Error struct {
	Op       string
	Err      *driver.Error
	Sentinel error
}

func (e *Error) Error() string { return "tcrt: cuda: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the driver's error and the sentinel.
func (e *Error) Unwrap() []error { return []error{e.Err, e.Sentinel} }

// sentinels maps result codes to sentinels; anything else is ErrDevice.
var sentinels = map[driver.Result]error{
	driver.ErrorOutOfMemory:           backend.ErrOutOfMemory,
	driver.ErrorNoDevice:              backend.ErrNoDevice,
	driver.ErrorInvalidDevice:         backend.ErrNoDevice,
	driver.ErrorNotInitialized:        backend.ErrNoDevice,
	driver.ErrorStubLibrary:           backend.ErrNoDevice,
	driver.ErrorDeviceUnavailable:     backend.ErrNoDevice,
	driver.ErrorSystemDriverMismatch:  backend.ErrNoDevice,
	driver.ErrorDeinitialized:         backend.ErrClosed,
	driver.ErrorContextIsDestroyed:    backend.ErrClosed,
	driver.ErrorInvalidValue:          backend.ErrArgument,
	driver.ErrorNotFound:              backend.ErrArgument,
	driver.ErrorLaunchOutOfResources:  backend.ErrArgument,
	driver.ErrorNotSupported:          backend.ErrUnsupported,
	driver.ErrorInvalidImage:          backend.ErrUnsupported,
	driver.ErrorNoBinaryForGPU:        backend.ErrUnsupported,
	driver.ErrorInvalidPTX:            backend.ErrUnsupported,
	driver.ErrorUnsupportedPTXVersion: backend.ErrUnsupported,
	driver.ErrorJITCompilerNotFound:   backend.ErrUnsupported,
	driver.ErrorJITCompilationOff:     backend.ErrUnsupported,
	driver.ErrorCompatNotSupported:    backend.ErrUnsupported,
}

// Sentinel is the tile sentinel a result code maps to.
func Sentinel(code driver.Result) error {
	if s, ok := sentinels[code]; ok {
		return s
	}
	return backend.ErrDevice
}

// cudaErr maps a driver error; errors the backend made already pass
// through, others wrap ErrDevice.
func cudaErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var ce *Error
	if errors.As(err, &ce) {
		return err
	}
	var de *driver.Error
	if errors.As(err, &de) {
		return &Error{Op: op, Err: de, Sentinel: Sentinel(de.Code)}
	}
	return fmt.Errorf("tcrt: cuda: %s: %w (%w)", op, err, backend.ErrDevice)
}

func joinErrs(errs []error) error {
	var out []error
	for _, e := range errs {
		if e != nil {
			out = append(out, e)
		}
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	return fmt.Errorf("%w (and %d more errors: %v)", out[0], len(out)-1, out[1:])
}
