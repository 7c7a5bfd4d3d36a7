//go:build cuda

package cuda

import (
	"errors"

	"github.com/tcrt-go/tcrt/runtime/backend"
)

// Names from the seam, so the backend reads as it did inside runtime.
type (
	Device      = backend.Device
	Options     = backend.Options
	BackendKind = backend.Kind
	GPULaunch   = backend.Launch
)

const BackendCUDA = backend.CUDA

var (
	ErrNoDevice    = backend.ErrNoDevice
	ErrOutOfMemory = backend.ErrOutOfMemory
	ErrClosed      = backend.ErrClosed
	ErrUnsupported = backend.ErrUnsupported
	ErrArgument    = backend.ErrArgument
	ErrBounds      = backend.ErrBounds
	ErrDevice      = backend.ErrDevice
)

func init() {
	backend.Register(backend.Registration{Kind: backend.CUDA, Open: openCUDA, Devices: listCUDADevices, Auto: true, Priority: 100})
}

var _ = errors.Is
