package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/tcrt-go/tcrt/kernels/ptx"
)

// backend is what a runtime needs from a device: memory, streams and events.
// The CPU backend is always built; the CUDA backend only with -tags cuda.
type backend interface {
	kind() BackendKind
	device() Device
	// alloc returns zeroed device memory of n bytes.
	alloc(n int) (memory, error)
	newStream() (streamImpl, error)
	close() error
}

// memory is one allocation.
type memory interface {
	// host returns the bytes when the memory is host-addressable (CPU
	// backend), else nil.
	host() []byte
	// write copies src to offset off; read copies from offset off to dst.
	// Both are synchronous.
	write(ctx context.Context, off int, src []byte) error
	read(ctx context.Context, off int, dst []byte) error
	free() error
}

// streamImpl is a backend's ordered queue of work.
type streamImpl interface {
	// enqueue appends fn; fn runs after everything enqueued before it.
	enqueue(fn func() error) error
	// record enqueues an event marker.
	record() (eventImpl, error)
	// wait makes later work wait for ev.
	wait(ev eventImpl) error
	// sync waits until all enqueued work has finished (or ctx ends) and
	// returns the first error that work reported since the last sync.
	sync(ctx context.Context) error
	close() error
}

// eventImpl is a point in a stream's work.
type eventImpl interface {
	// wait blocks until the event has completed or ctx ends.
	wait(ctx context.Context) error
	done() bool
	// elapsed is the time from start (an event of the same backend) to
	// this event; both have completed.
	elapsed(start eventImpl) (time.Duration, error)
}

// deviceMemory is memory with a device address (the CUDA backend's).
type deviceMemory interface {
	devicePtr() uint64
}

// DevicePtr returns the device address of b's memory, for GPU kernels'
// parameters. On the CPU backend the error wraps ErrUnsupported.
func DevicePtr(b *Buffer) (uint64, error) {
	if err := b.Check(nil, "device pointer", "buffer"); err != nil {
		return 0, err
	}
	m, ok := b.memory().(deviceMemory)
	if !ok {
		return 0, fmt.Errorf("tcrt: device pointer: a %s buffer has no device address: %w", b.rt.be.kind(), ErrUnsupported)
	}
	return m.devicePtr(), nil
}

// GPULaunch is one launch of a kernel from an embedded GPU module.
type GPULaunch struct {
	// Module is the kernel's module; the backend loads it once per device,
	// choosing its cubin or PTX with Module.Select.
	Module *ptx.Module
	// Func is the kernel's entry name in the module.
	Func string
	// Grid and Block are the launch shape; 0 counts as 1.
	Grid, Block [3]int
	// SharedBytes is the dynamic shared memory; above 48 KiB the backend
	// opts the function in first.
	SharedBytes int
	// Params holds one 8-byte slot per kernel parameter (see package ptx).
	Params []uint64
}

// gpuStream is a stream that can launch GPU kernels.
type gpuStream interface {
	launchGPU(g GPULaunch) error
	// enqueue appends a host task (streamImpl's).
	enqueue(fn func() error) error
	// issueGPU issues g at once; only work running on the stream may call
	// it, so that stream order holds.
	issueGPU(g GPULaunch) error
}

// LaunchGPUAfter enqueues on s one host task that runs, after the stream's
// earlier work has finished, pre, then (when pre succeeds) issues g in its
// place in stream order, then post. So a kernel can depend on a check of
// device data (scale values) made on the host: when pre fails, g is not
// launched and pre's error is the one the stream's next Synchronize
// reports. g is checked as LaunchGPU checks it, before anything is
// enqueued; pre and post may be nil. It costs a round trip to the host.
func LaunchGPUAfter(s *Stream, g *GPULaunch, pre, post func() error) error {
	gl, gs, err := prepareGPULaunch(s, g)
	if err != nil {
		return err
	}
	return gs.enqueue(func() error {
		if pre != nil {
			if err := pre(); err != nil {
				return err
			}
		}
		if err := gs.issueGPU(gl); err != nil {
			return err
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
	return gs.launchGPU(gl)
}

// prepareGPULaunch checks g for s as LaunchGPU does and returns the launch
// normalised (0 counts as 1, its own copy of the parameters) with the
// stream's GPU side.
func prepareGPULaunch(s *Stream, g *GPULaunch) (GPULaunch, gpuStream, error) {
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
	if dev := s.rt.be.device(); g.SharedBytes < 0 || (dev.SharedPerBlockOptin > 0 && g.SharedBytes > dev.SharedPerBlockOptin) {
		return GPULaunch{}, nil, fmt.Errorf("tcrt: %s %s: argument launch: %d bytes of shared memory; the device allows %d: %w", op, g.Func, g.SharedBytes, dev.SharedPerBlockOptin, ErrArgument)
	}
	gs, ok := s.impl.(gpuStream)
	if !ok {
		return GPULaunch{}, nil, fmt.Errorf("tcrt: %s %s: the %s backend has no GPU streams: %w", op, g.Func, s.rt.be.kind(), ErrUnsupported)
	}
	gl.Params = append([]uint64(nil), g.Params...)
	return gl, gs, nil
}

// cudaDevices is set by the CUDA backend's init (-tags cuda); nil otherwise.
var cudaDevices func() ([]Device, error)

// CUDADevices lists the GPUs the driver reports, with their attributes. In a
// binary built without -tags cuda the error wraps ErrNoDevice.
func CUDADevices() ([]Device, error) {
	if cudaDevices == nil {
		return nil, fmt.Errorf("tcrt: cuda devices: this binary was built without -tags cuda: %w", ErrNoDevice)
	}
	return cudaDevices()
}
