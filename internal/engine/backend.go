package engine

import (
	"fmt"

	"github.com/tcrt-go/tcrt/runtime/backend"
)

// DevicePtr returns the device address of b's memory, for GPU kernels'
// parameters. On the CPU backend the error wraps ErrUnsupported.
func DevicePtr(b *Buffer) (uint64, error) {
	if err := b.Check(nil, "device pointer", "buffer"); err != nil {
		return 0, err
	}
	m, ok := b.memory().(backend.DeviceMemory)
	if !ok {
		return 0, fmt.Errorf("tcrt: device pointer: a %s buffer has no device address: %w", b.rt.be.Kind(), ErrUnsupported)
	}
	return m.DevicePtr(), nil
}

// GPULaunch is one launch of a kernel from an embedded GPU module (see
// backend.Launch).
type GPULaunch = backend.Launch

// LaunchGPUAfter enqueues on s one host task that runs, after the stream's
// earlier work has finished, pre, then (when pre succeeds) issues the
// launches gs in order in its place in stream order, then post. So kernels
// can depend on a check of device data (scale values) made on the host:
// when pre fails, nothing is launched and pre's error is the one the
// stream's next Synchronize reports. Each launch is checked as LaunchGPU
// checks it, before anything is enqueued; pre and post may be nil. It
// costs a round trip to the host.
func LaunchGPUAfter(s *Stream, gs []*GPULaunch, pre, post func() error) error {
	if len(gs) == 0 {
		return fmt.Errorf("tcrt: launch gpu kernel: argument launches: none given: %w", ErrArgument)
	}
	ls := make([]GPULaunch, len(gs))
	var st backend.GPUStream
	for i, g := range gs {
		gl, gst, err := prepareGPULaunch(s, g)
		if err != nil {
			return err
		}
		ls[i], st = gl, gst
	}
	return st.Enqueue(func() error {
		if pre != nil {
			if err := pre(); err != nil {
				return err
			}
		}
		for _, gl := range ls {
			if err := st.IssueGPU(gl); err != nil {
				return err
			}
		}
		if post != nil {
			return post()
		}
		return nil
	})
}

// LaunchGPU enqueues g on s. It fails with ErrArgument for a malformed
// launch and with ErrUnsupported on a backend without GPU streams; errors
// from the launch itself (a module that does not load, a fault) are
// reported by the stream's next Synchronize.
func LaunchGPU(s *Stream, g *GPULaunch) error {
	gl, gs, err := prepareGPULaunch(s, g)
	if err != nil {
		return err
	}
	return gs.LaunchGPU(gl)
}

// prepareGPULaunch checks g for s as LaunchGPU does and returns the launch
// normalised (0 counts as 1, its own copy of the parameters) with the
// stream's GPU side.
func prepareGPULaunch(s *Stream, g *GPULaunch) (GPULaunch, backend.GPUStream, error) {
	const op = "launch gpu kernel"
	if err := s.check(op); err != nil {
		return GPULaunch{}, nil, err
	}
	if g == nil || g.Module == nil || g.Func == "" {
		return GPULaunch{}, nil, fmt.Errorf("tcrt: %s: argument launch: needs a module and a function name: %w", op, ErrArgument)
	}
	gl := *g
	threads := 1
	for i := range 3 {
		gl.Grid[i], gl.Block[i] = max(gl.Grid[i], 1), max(gl.Block[i], 1)
		if g.Grid[i] < 0 || g.Block[i] < 0 {
			return GPULaunch{}, nil, fmt.Errorf("tcrt: %s %s: argument launch: negative grid %v or block %v: %w", op, g.Func, g.Grid, g.Block, ErrArgument)
		}
		threads *= gl.Block[i]
	}
	if threads > 1024 {
		return GPULaunch{}, nil, fmt.Errorf("tcrt: %s %s: argument launch: block %v has %d threads, more than 1024: %w", op, g.Func, g.Block, threads, ErrArgument)
	}
	if dev := s.rt.be.Device(); g.SharedBytes < 0 || (dev.SharedPerBlockOptin > 0 && g.SharedBytes > dev.SharedPerBlockOptin) {
		return GPULaunch{}, nil, fmt.Errorf("tcrt: %s %s: argument launch: %d bytes of shared memory; the device allows %d: %w", op, g.Func, g.SharedBytes, dev.SharedPerBlockOptin, ErrArgument)
	}
	gs, ok := s.impl.(backend.GPUStream)
	if !ok {
		return GPULaunch{}, nil, fmt.Errorf("tcrt: %s %s: the %s backend has no GPU streams: %w", op, g.Func, s.rt.be.Kind(), ErrUnsupported)
	}
	gl.Params = append([]uint64(nil), g.Params...)
	return gl, gs, nil
}

// CUDADevices lists the GPUs the driver reports, with their attributes. In a
// binary built without -tags cuda the error wraps ErrNoDevice.
func CUDADevices() ([]Device, error) {
	r, ok := backend.Lookup(BackendCUDA)
	if !ok || r.Devices == nil {
		return nil, fmt.Errorf("tcrt: cuda devices: package runtime/cuda is not linked in (import package ops): %w", ErrNoDevice)
	}
	return r.Devices()
}
