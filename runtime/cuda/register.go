package cuda

import (
	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/runtime/cuda/driver"
)

// defaultDriver loads the build's driver: purego over the library at path
// (driver.Load) by default, gorgonia.org/cu with -tags cuda.
var defaultDriver = driver.Load

// DriverName names the build's default driver implementation.
var DriverName = "purego (libcuda.so.1 loaded at run time)"

func init() {
	backend.Register(backend.Registration{
		Kind:     backend.CUDA,
		Open:     func(o backend.Options) (backend.Backend, error) { return Open(Config{Options: o}) },
		Devices:  listDevices,
		Auto:     true,
		Priority: 100,
	})
}

func listDevices() ([]backend.Device, error) {
	drv, err := defaultDriver("")
	if err != nil {
		return nil, err
	}
	return Devices(Config{Driver: drv})
}
