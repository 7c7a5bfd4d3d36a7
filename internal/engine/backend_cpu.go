package engine

import (
	"context"
	"fmt"
	"math"
	goruntime "runtime"
	"unsafe"

	"github.com/klauspost/cpuid/v2"

	"github.com/tcrt-go/tcrt/internal/hostmem"
	"github.com/tcrt-go/tcrt/runtime/backend"
)

// cpuBackend runs everything on the host: memory is Go memory, streams are
// worker goroutines executing their queues in order.
type cpuBackend struct {
	dev Device
}

// cpuFeatureNames lists the cpuid features reported in Device.Features, in
// order.
var cpuFeatureNames = []struct {
	id   cpuid.FeatureID
	name string
}{
	{cpuid.SSE4, "SSE4.1"}, {cpuid.AVX, "AVX"}, {cpuid.AVX2, "AVX2"}, {cpuid.FMA3, "FMA3"},
	{cpuid.F16C, "F16C"}, {cpuid.AVX512F, "AVX512F"}, {cpuid.AVX512BW, "AVX512BW"},
	{cpuid.AVX512DQ, "AVX512DQ"}, {cpuid.AVX512VL, "AVX512VL"}, {cpuid.AVX512BF16, "AVX512BF16"},
	{cpuid.AVX512FP16, "AVX512FP16"}, {cpuid.AVX512VNNI, "AVX512VNNI"}, {cpuid.AMXBF16, "AMXBF16"},
	{cpuid.ASIMD, "ASIMD"}, {cpuid.SVE, "SVE"},
}

func newCPUBackend(threads int) *cpuBackend {
	c := cpuid.CPU
	d := Device{
		Backend:   BackendCPU,
		Name:      c.BrandName,
		Vendor:    c.VendorString,
		Cores:     goruntime.NumCPU(), // usable by this process; cpuid's count is the host's
		Threads:   threads,
		L1DBytes:  c.Cache.L1D,
		L2Bytes:   c.Cache.L2,
		L3Bytes:   c.Cache.L3,
		CacheLine: c.CacheLine,
	}
	if d.Name == "" {
		d.Name = goruntime.GOARCH
	}
	if d.Vendor == "" {
		d.Vendor = "unknown"
	}
	d.L1DBytes, d.L2Bytes, d.L3Bytes = max(d.L1DBytes, 0), max(d.L2Bytes, 0), max(d.L3Bytes, 0)
	for _, f := range cpuFeatureNames {
		if c.Supports(f.id) {
			d.Features = append(d.Features, f.name)
		}
	}
	return &cpuBackend{dev: d}
}

func (b *cpuBackend) Kind() BackendKind { return BackendCPU }
func (b *cpuBackend) Device() Device    { return b.dev }
func (b *cpuBackend) Close() error      { return nil }

// hostAlign is the alignment of CPU buffers: a cache line, and enough for
// 64-byte vector loads.
const hostAlign = 64

type hostMemory struct{ b []byte }

// Alloc returns n zeroed bytes of Go memory, or ErrOutOfMemory when the
// host cannot back them (hostmem.Bytes: above HostMemory, or a mapping the
// system refuses), whatever the runtime's MemoryLimit: a make the host
// cannot back would end the process.
func (b *cpuBackend) Alloc(n int) (backend.Memory, error) {
	raw, err := alignedBytes(n)
	if err != nil {
		return nil, err
	}
	return &hostMemory{b: raw}, nil
}

// alignedBytes returns n zeroed bytes starting at a hostAlign-aligned
// address, as every buffer's host bytes do (kernels may rely on it: 8-byte
// atomics, 64-byte vector loads).
func alignedBytes(n int) ([]byte, error) {
	if n < 0 || n > math.MaxInt-hostAlign {
		return nil, fmt.Errorf("tcrt: alloc: %d bytes: %w", n, ErrOutOfMemory)
	}
	raw, err := hostmem.Bytes(n+hostAlign, n+hostAlign, HostMemory())
	if err != nil {
		return nil, err
	}
	off := 0
	if mis := int(uintptr(unsafe.Pointer(unsafe.SliceData(raw))) % hostAlign); mis != 0 {
		off = hostAlign - mis
	}
	return raw[off : off+n : off+n], nil
}

func (m *hostMemory) Host() []byte { return m.b }
func (m *hostMemory) Write(_ context.Context, off int, src []byte) error {
	copy(m.b[off:], src)
	return nil
}
func (m *hostMemory) Read(_ context.Context, off int, dst []byte) error {
	copy(dst, m.b[off:])
	return nil
}
func (m *hostMemory) Free() error { m.b = nil; return nil }

func (b *cpuBackend) NewStream() (backend.Stream, error) { return backend.NewQueue(), nil }
