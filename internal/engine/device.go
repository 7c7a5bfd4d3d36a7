package engine

import "github.com/tcrt-go/tcrt/runtime/backend"

// BackendKind names a backend (see package runtime/backend).
type BackendKind = backend.Kind

// Backends.
const (
	BackendAuto BackendKind = backend.Auto // the best GPU backend that opens, else CPU
	BackendCPU  BackendKind = backend.CPU
	BackendCUDA BackendKind = backend.CUDA // -tags cuda
	BackendSim  BackendKind = backend.Sim  // the simulated SM86/SM89 GPU (runtime/sim)
)

// Device describes the device a runtime runs on (see backend.Device).
type Device = backend.Device
