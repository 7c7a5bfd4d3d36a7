package sim

import (
	"encoding/binary"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tcrt-go/tcrt/internal/hostmem"
)

// Memory is the simulator's global memory: named byte regions at 64-bit
// addresses. A region may be backed by a caller's slice (Map: a runtime's
// host buffer, read and written in place) or allocated (Alloc). An access
// must fall wholly inside one region, or the simulator reports
// ErrOutOfBounds. Atomics and reductions on a Memory are serialised by
// its lock. A Memory may be shared by consecutive launches but not used by
// two launches at once.
type Memory struct {
	mu      sync.Mutex
	regions []*memRegion // sorted by base
	next    uint64
}

type memRegion struct {
	name      string
	base, end uint64
	data      []byte
}

// NewMemory returns an empty memory whose allocations start at 0x7f0000000000.
func NewMemory() *Memory { return &Memory{next: 0x7f0000000000} }

// Map makes data the region name at address base (any address but 0; the
// region may not overlap another, nor the generic address space's shared
// and local windows at 0x7ffe00000000 and 0x7fff00000000, 16 MiB each).
// The simulator reads and writes data in place.
func (m *Memory) Map(name string, base uint64, data []byte) error {
	if m == nil {
		return fmt.Errorf("%w: a nil *Memory (make one with NewMemory)", ErrConfig)
	}
	if len(data) == 0 || base == 0 || base+uint64(len(data)) < base {
		return fmt.Errorf("%w: region %q at %#x, %d bytes", ErrConfig, name, base, len(data))
	}
	if windowsOverlap(base, base+uint64(len(data))) {
		return fmt.Errorf("%w: region %q at %#x, %d bytes, overlaps the generic shared or local window", ErrConfig, name, base, len(data))
	}
	r := &memRegion{name: name, base: base, end: base + uint64(len(data)), data: data}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range m.regions {
		if r.base < o.end && o.base < r.end {
			return fmt.Errorf("%w: region %q overlaps %q", ErrConfig, name, o.name)
		}
		if o.name == name {
			return fmt.Errorf("%w: region %q mapped twice", ErrConfig, name)
		}
	}
	m.regions = append(m.regions, r)
	sort.Slice(m.regions, func(i, j int) bool { return m.regions[i].base < m.regions[j].base })
	if r.end > m.next {
		m.next = r.end
	}
	return nil
}

// maxAlloc bounds one Alloc (64 GiB): beyond it make would fail.
const maxAlloc = 1 << 36

// Alloc allocates a zeroed region of size bytes, 256-byte aligned, after
// every region mapped so far, and returns its address. A gap of 256
// bytes separates regions, so a small overrun faults.
func (m *Memory) Alloc(name string, size int) (uint64, error) {
	if m == nil {
		return 0, fmt.Errorf("%w: a nil *Memory (make one with NewMemory)", ErrConfig)
	}
	if size <= 0 || size > maxAlloc {
		return 0, fmt.Errorf("%w: region %q of %d bytes (1 to %d)", ErrConfig, name, size, maxAlloc)
	}
	// a capacity rounded up to 16 bytes gives a 16-byte aligned host
	// slice (Go aligns a block to its size class; a block under 16 bytes
	// may otherwise sit at any byte), so word accesses take the atomic path.
	// hostmem makes a request the host cannot back an error, not the
	// end of the process.
	data, err := hostmem.Bytes(size, (size+15)&^15, 0)
	if err != nil {
		return 0, fmt.Errorf("sass sim: region %q: %w", name, err)
	}
	m.mu.Lock()
	base := (m.next + 256 + 255) &^ 255
	m.mu.Unlock()
	return base, m.Map(name, base, data)
}

// Bytes returns the bytes of the region name (nil if there is none).
func (m *Memory) Bytes(name string) []byte {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.regions {
		if r.name == name {
			return r.data
		}
	}
	return nil
}

// Addr returns the address of the region name (0 if there is none).
func (m *Memory) Addr(name string) uint64 {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.regions {
		if r.name == name {
			return r.base
		}
	}
	return 0
}

// Locate names the region holding addr and the offset in it.
func (m *Memory) Locate(addr uint64) (name string, offset uint64, ok bool) {
	if m == nil {
		return "", 0, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.find(addr); r != nil {
		return r.name, addr - r.base, true
	}
	return "", 0, false
}

// find returns the region holding addr (lock not needed while a launch
// runs: regions do not change then).
func (m *Memory) find(addr uint64) *memRegion {
	rs := m.regions
	i := sort.Search(len(rs), func(i int) bool { return rs[i].end > addr })
	if i < len(rs) && rs[i].base <= addr {
		return rs[i]
	}
	return nil
}

// memCache speeds up region lookups for one warp.
type memCache struct {
	m    *Memory
	last *memRegion
}

// slice returns the n bytes at addr, or nil when they are not wholly in a
// region.
func (c *memCache) slice(addr uint64, n int) []byte {
	r := c.last
	if r == nil || addr < r.base || addr >= r.end {
		r = c.m.find(addr)
		if r == nil {
			return nil
		}
		c.last = r
	}
	off := addr - r.base
	if off+uint64(n) > uint64(len(r.data)) {
		return nil
	}
	return r.data[off : off+uint64(n)]
}

// Unmap removes the region at base and returns its bytes; it fails with
// ErrConfig when no region starts there. Like Map, it must not run
// while a launch uses the Memory.
func (m *Memory) Unmap(base uint64) ([]byte, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: a nil *Memory (make one with NewMemory)", ErrConfig)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, r := range m.regions {
		if r.base == base {
			m.regions = append(m.regions[:i], m.regions[i+1:]...)
			return r.data, nil
		}
	}
	return nil, fmt.Errorf("%w: no region at %#x", ErrConfig, base)
}

// Global words are read and written with atomic instructions where the
// host allows it, so that a plain load racing with another CTA's atomic
// (the current-value read of a compare-and-swap loop, legal on hardware,
// where aligned words are single-copy atomic) is not a data race in Go. On
// amd64 and arm64 these compile to plain moves. A big-endian host, or a
// mapped slice whose host address is not aligned (Map takes any slice),
// takes the byte path under unalignedMu, which keeps that path race-free
// too.
var littleHost = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

var unalignedMu sync.Mutex

func aligned(b []byte, n uintptr) bool {
	return littleHost && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%n == 0
}

func loadWord(b []byte) uint32 {
	if aligned(b, 4) {
		return atomic.LoadUint32((*uint32)(unsafe.Pointer(unsafe.SliceData(b))))
	}
	unalignedMu.Lock()
	defer unalignedMu.Unlock()
	return binary.LittleEndian.Uint32(b)
}

func storeWord(b []byte, v uint32) {
	if aligned(b, 4) {
		atomic.StoreUint32((*uint32)(unsafe.Pointer(unsafe.SliceData(b))), v)
		return
	}
	unalignedMu.Lock()
	binary.LittleEndian.PutUint32(b, v)
	unalignedMu.Unlock()
}

func loadDword(b []byte) uint64 {
	if aligned(b, 8) {
		return atomic.LoadUint64((*uint64)(unsafe.Pointer(unsafe.SliceData(b))))
	}
	unalignedMu.Lock()
	defer unalignedMu.Unlock()
	return binary.LittleEndian.Uint64(b)
}

func storeDword(b []byte, v uint64) {
	if aligned(b, 8) {
		atomic.StoreUint64((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), v)
		return
	}
	unalignedMu.Lock()
	binary.LittleEndian.PutUint64(b, v)
	unalignedMu.Unlock()
}
