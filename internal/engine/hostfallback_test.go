package engine

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/tile"
)

// fakeGPU is a GPU backend whose memory is not host-addressable
// (host() is nil unless staged), to test the host fallback on a CPU.
type fakeGPU struct{}

type fakeGPUMem struct {
	mu     sync.Mutex
	data   []byte
	staged []byte
	writes [][2]int
}

func (fakeGPU) Kind() BackendKind { return fakeGPUKind }
func (fakeGPU) Device() Device {
	return Device{Backend: fakeGPUKind, Name: "fake", Major: 8, Minor: 6, SMs: 1, SharedPerBlockOptin: 99 << 10}
}
func (fakeGPU) Alloc(n int) (backend.Memory, error) { return &fakeGPUMem{data: make([]byte, n)}, nil }
func (fakeGPU) NewStream() (backend.Stream, error)  { return backend.NewQueue(), nil }
func (fakeGPU) Close() error                        { return nil }
func (m *fakeGPUMem) Host() []byte                  { m.mu.Lock(); defer m.mu.Unlock(); return m.staged }
func (m *fakeGPUMem) SetStaged(b []byte)            { m.mu.Lock(); m.staged = b; m.mu.Unlock() }
func (m *fakeGPUMem) Free() error                   { return nil }
func (m *fakeGPUMem) DevicePtr() uint64             { return 0x1000 }
func (m *fakeGPUMem) Read(_ context.Context, off int, dst []byte) error {
	copy(dst, m.data[off:])
	return nil
}
func (m *fakeGPUMem) Write(_ context.Context, off int, src []byte) error {
	m.mu.Lock()
	m.writes = append(m.writes, [2]int{off, off + len(src)})
	m.mu.Unlock()
	copy(m.data[off:], src)
	return nil
}

// fakeGPUKind is the fake GPU's backend name, registered once.
const fakeGPUKind BackendKind = "fakegpu"

var registerFakeGPU sync.Once

func openFakeGPU(t *testing.T) *Runtime {
	t.Helper()
	registerFakeGPU.Do(func() {
		backend.Register(backend.Registration{Kind: fakeGPUKind, Open: func(backend.Options) (backend.Backend, error) { return fakeGPU{}, nil }})
	})
	rt, err := Open(Options{Backend: fakeGPUKind})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func TestHostFallbackMatMul(t *testing.T) {
	ctx := context.Background()
	gpu := openFakeGPU(t)
	cpu, err := Open(Options{Backend: BackendCPU})
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	const m, n, k = 7, 129, 5
	rng := rand.New(rand.NewPCG(3, 4))
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = rng.Float32()*2 - 1
	}
	for i := range b {
		b[i] = rng.Float32()*2 - 1
	}
	run := func(rt *Runtime) ([]float32, *Buffer, *Buffer) {
		ba, _ := rt.Alloc(tile.F32, m, k)
		bb, _ := rt.Alloc(tile.F32, k, n)
		bd, _ := rt.Alloc(tile.F32, m, n)
		if err := ba.WriteFloat32(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := bb.WriteFloat32(ctx, b); err != nil {
			t.Fatal(err)
		}
		args := &MatMulArgs{M: m, N: n, K: k, Batch: 1, Alpha: 1,
			A: Matrix{Buf: ba, Rows: m, Cols: k, LD: k, BatchStride: m * k},
			B: Matrix{Buf: bb, Rows: k, Cols: n, LD: n, BatchStride: k * n},
			D: Matrix{Buf: bd, Rows: m, Cols: n, LD: n, BatchStride: m * n}}
		if rt == gpu {
			e := rt.Explain(OpMatMul.name, args)
			c := e.Chosen()
			if c == nil || !strings.HasPrefix(c.Name, hostFallbackPrefix) {
				t.Fatalf("fake GPU chose %v:\n%s", c, e)
			}
			if !strings.Contains(e.String(), "CPU kernel; the fakegpu device is a GPU") {
				t.Errorf("explanation does not reject the CPU kernels:\n%s", e)
			}
		}
		if err := rt.Run(ctx, nil, OpMatMul.name, args); err != nil {
			t.Fatal(err)
		}
		d := make([]float32, m*n)
		if err := bd.ReadFloat32(ctx, d); err != nil {
			t.Fatal(err)
		}
		return d, ba, bb
	}
	want, _, _ := run(cpu)
	got, ga, gb := run(gpu)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("D[%d] = %g through the host fallback, %g on the CPU", i, got[i], want[i])
		}
	}
	for _, buf := range []*Buffer{ga, gb} {
		fm := buf.memory().(*fakeGPUMem)
		if len(fm.writes) != 1 || fm.staged != nil {
			t.Errorf("input written %d times (want once, by WriteFloat32), staged %v", len(fm.writes), fm.staged != nil)
		}
	}
}

func TestDirtyRanges(t *testing.T) {
	was := make([]byte, 10000)
	now := make([]byte, 10000)
	if r := dirtyRanges(was, now, 4096); len(r) != 0 {
		t.Fatalf("clean: %v", r)
	}
	now[0], now[4096], now[9999] = 1, 1, 1
	r := dirtyRanges(was, now, 4096)
	if len(r) != 1 || r[0] != [2]int{0, 10000} {
		t.Fatalf("adjacent chunks not merged: %v", r)
	}
	now[4096] = 0
	r = dirtyRanges(was, now, 4096)
	if len(r) != 2 || r[0] != [2]int{0, 4096} || r[1] != [2]int{8192, 10000} {
		t.Fatalf("ranges %v", r)
	}
}

// TestBufferRefs: the buffers of a call are its operands' distinct open
// buffers, in operand order; arguments that list none have none.
func TestBufferRefs(t *testing.T) {
	rt, err := Open(Options{Backend: BackendCPU})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	x, _ := rt.Alloc(tile.F32, 4)
	y, _ := rt.Alloc(tile.F32, 4)
	z, _ := rt.Alloc(tile.F32, 4)
	c, _ := rt.Alloc(tile.F32, 4)
	c.Close()
	a := &NormArgs{X: Matrix{Buf: y}, Y: Matrix{Buf: x}, Residual: &Matrix{Buf: x}, Weight: z, Bias: c}
	got := bufferRefs(a)
	if len(got) != 3 || got[0] != x || got[1] != y || got[2] != z {
		t.Fatalf("bufferRefs = %v, want [x y z]", got)
	}
	if got := argBuffers(nil, a); len(got) != 4 || got[3] != c {
		t.Fatalf("argBuffers = %v, want [x y z c]", got)
	}
	for _, args := range []any{nil, struct{ B *Buffer }{x}, (*NormArgs)(nil)} {
		if got := bufferRefs(args); len(got) != 0 {
			t.Fatalf("%T: %v", args, got)
		}
	}
}
