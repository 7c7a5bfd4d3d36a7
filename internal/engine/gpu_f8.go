package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/tcrt-go/tcrt/fallback"
	"github.com/tcrt-go/tcrt/kernels/ptx"
	"github.com/tcrt-go/tcrt/runtime/backend"
	"github.com/tcrt-go/tcrt/tile"
)

// GPU kernels of the float8 family (kernels/ptx, module F8): quantise and
// dequantise, f32 on the wide side, per tensor or per row, with given
// scales. What they do not cover Supports rejects with a reason, so the
// host fallback (host.cpu.*) runs it and Explain says why: f16/bf16
// data, the other granularities, scales computed from the amax and the Amax
// output (both need a reduction the PTX does not do), and per-tensor
// buffers not aligned as the kernels' vector loads need.
//
// Scale values in device memory are data only a kernel sees, and the CPU
// kernels reject a scale that is not positive and finite before writing
// anything. To report the same error, a call with a scales buffer (given
// Scales, a dequantisation's ScaleInv) reads it in a host task after the
// stream's earlier work, checks it with fallback.CheckScales and only then
// issues the kernel in its place (LaunchGPUAfter): one round trip to the
// host a call. The same task writes a quantisation's ScaleInv output
// (1/scale in float32, as the CPU kernels compute it). A per-tensor
// quantisation with a given Scale and no ScaleInv, and a per-tensor
// dequantisation without ScaleInv, need no check: their scale is a
// constant held in device memory per runtime, and they are a single launch.

func init() {
	arch := Arch{ISA: ISAPTX, MinSM: 80, Module: ptx.F8()}
	RegisterKernel(OpQuantize, TypedKernel[QuantizeArgs]{
		Name: "ptx.quantize", Arch: arch, Preference: 100,
		Doc:      "PTX tcrt_f8_quantize: f32 in, given scales per tensor or per row, integer RNE encode; scales buffers checked on the host first",
		Supports: ptxQuantizeSupports,
		Launch:   ptxQuantizeLaunch,
	})
	RegisterKernel(OpDequantize, TypedKernel[DequantizeArgs]{
		Name: "ptx.dequantize", Arch: arch, Preference: 100,
		Doc:      "PTX tcrt_f8_dequantize: f32 out, per tensor or per row; ScaleInv checked on the host first",
		Supports: ptxDequantizeSupports,
		Launch:   ptxDequantizeLaunch,
	})
}

// f8Gran says whether the F8 kernels cover granularity g.
func f8Gran(g Granularity) error {
	if g == fallback.PerTensor || g == fallback.PerRow {
		return nil
	}
	return fmt.Errorf("%v scales: the PTX kernels cover per tensor and per row only", g)
}

// f8ScaleBuf checks a scales buffer (nil is fine) holds the f32 values of
// granularity g, one per block, as the kernels read them.
func f8ScaleBuf(b *Buffer, arg string, g Granularity, rows, cols int) error {
	if b == nil {
		return nil
	}
	if d := b.DType(); d != tile.F32 {
		return fmt.Errorf("%s is %v; the PTX kernels use f32 scales", arg, d)
	}
	sr, sc := g.ScaleGrid(rows, cols)
	if b.Len() != sr*sc {
		return fmt.Errorf("%s holds %d values; %v scales of %d×%d are %d", arg, b.Len(), g, rows, cols, sr*sc)
	}
	return nil
}

// f8Aligned checks b's device address is a multiple of align bytes (per
// tensor, the kernels load and store 4 elements at a time).
func f8Aligned(b *Buffer, arg string, align uint64) error {
	p, err := DevicePtr(b)
	if err != nil {
		return fmt.Errorf("%s: %v", arg, err)
	}
	if p%align != 0 {
		return fmt.Errorf("%s at %#x is not %d-byte aligned, as the per-tensor kernel needs", arg, p, align)
	}
	return nil
}

func ptxQuantizeSupports(a *QuantizeArgs) error {
	if d := a.X.DType(); d != tile.F32 {
		return fmt.Errorf("x is %v; the PTX kernel reads f32 only", d)
	}
	if d := a.Q.DType(); !tile.IsFloat8(d) {
		return fmt.Errorf("q is %v; the PTX kernel writes e4m3 or e5m2", d)
	}
	if err := f8Gran(a.Gran); err != nil {
		return err
	}
	if !a.Given {
		return fmt.Errorf("scales computed from the amax need a reduction; the PTX kernel takes given scales only")
	}
	if a.Amax != nil {
		return fmt.Errorf("the Amax output needs a reduction the PTX kernel does not do")
	}
	if a.Mode != tile.Saturate && a.Mode != tile.NonSaturating {
		return fmt.Errorf("overflow mode %v has no PTX kernel", a.Mode)
	}
	if err := f8ScaleBuf(a.Scales, "Scales", a.Gran, a.Rows, a.Cols); err != nil {
		return err
	}
	if a.Scales == nil && a.Gran != fallback.PerTensor {
		return fmt.Errorf("%v scales given without a Scales buffer", a.Gran)
	}
	if err := f8ScaleBuf(a.ScaleInv, "ScaleInv", a.Gran, a.Rows, a.Cols); err != nil {
		return err
	}
	if a.Gran == fallback.PerTensor {
		if err := f8Aligned(a.X, "x", 16); err != nil {
			return err
		}
		return f8Aligned(a.Q, "q", 4)
	}
	return nil
}

func ptxDequantizeSupports(a *DequantizeArgs) error {
	if d := a.Y.DType(); d != tile.F32 {
		return fmt.Errorf("y is %v; the PTX kernel writes f32 only", d)
	}
	if d := a.Q.DType(); !tile.IsFloat8(d) {
		return fmt.Errorf("q is %v; the PTX kernel reads e4m3 or e5m2", d)
	}
	if err := f8Gran(a.Gran); err != nil {
		return err
	}
	if err := f8ScaleBuf(a.ScaleInv, "ScaleInv", a.Gran, a.Rows, a.Cols); err != nil {
		return err
	}
	if a.ScaleInv == nil && a.Gran != fallback.PerTensor {
		return fmt.Errorf("%v dequantisation without ScaleInv", a.Gran)
	}
	if a.Gran == fallback.PerTensor {
		if err := f8Aligned(a.Q, "q", 4); err != nil {
			return err
		}
		return f8Aligned(a.Y, "y", 16)
	}
	return nil
}

// f8Flags are the F8 kernels' flags for format q, mode and granularity.
func f8Flags(q tile.DType, mode tile.OverflowMode, g Granularity) uint32 {
	var f uint32
	if q == tile.E5M2 {
		f |= ptx.F8E5M2
	}
	if mode == tile.NonSaturating {
		f |= ptx.F8NonSaturating
	}
	if g == fallback.PerRow {
		f |= ptx.F8PerRow
	}
	return f
}

// f8GPULaunch is one launch of an F8 kernel.
func f8GPULaunch(rt *Runtime, fn string, dst, src, scales uint64, rows, cols int, flags uint32) *GPULaunch {
	grid := ptx.F8Grid(int64(rows), int64(cols), flags&ptx.F8PerRow != 0, rt.Device().SMs)
	return &GPULaunch{Module: ptx.F8(), Func: fn, Grid: [3]int{grid}, Block: [3]int{ptx.F8Block},
		Params: []uint64{ptx.Ptr(dst), ptx.Ptr(src), ptx.Ptr(scales), ptx.U64(uint64(rows)), ptx.U64(uint64(cols)), ptx.U32(flags)}}
}

// f8ReadScales reads b's float32 values from the device (in a host task,
// after the stream's earlier work) and checks them as the CPU kernels do.
func f8ReadScales(b *Buffer, op, arg string) ([]float32, error) {
	m := b.memory()
	if m == nil {
		return nil, fmt.Errorf("tcrt: %s: %s: buffer closed: %w", op, arg, ErrClosed)
	}
	raw := make([]byte, b.Bytes())
	if err := m.Read(context.Background(), 0, raw); err != nil {
		return nil, fmt.Errorf("tcrt: %s: reading %s: %w", op, arg, err)
	}
	s := make([]float32, len(raw)/4)
	for i := range s {
		s[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	if err := fallback.CheckScales(op, arg, s); err != nil {
		return nil, err
	}
	return s, nil
}

// f8WriteInv writes 1/s for each scale into b (a quantisation's ScaleInv).
func f8WriteInv(b *Buffer, scales []float32) error {
	m := b.memory()
	if m == nil {
		return fmt.Errorf("tcrt: quantize: ScaleInv: buffer closed: %w", ErrClosed)
	}
	raw := make([]byte, 4*len(scales))
	for i, s := range scales {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(1/s))
	}
	return m.Write(context.Background(), 0, raw)
}

func ptxQuantizeLaunch(_ context.Context, l *Launch, a *QuantizeArgs) error {
	p, err := sgPtrs(a.Q, a.X)
	if err != nil {
		return err
	}
	rt, flags := l.Runtime, f8Flags(a.Q.DType(), a.Mode, a.Gran)
	if a.Scales == nil { // per tensor, a.Scale given
		if err := fallback.CheckScales(OpQuantize.name, "Scales", []float32{a.Scale}); err != nil {
			return l.Stream.Enqueue(func() error { return err }) // reported as the CPU kernel reports it
		}
		c, err := f8ConstFor(rt, a.Scale)
		if err != nil {
			return err
		}
		g := f8GPULaunch(rt, ptx.F8Quantize, p[0], p[1], c.addr, a.Rows, a.Cols, flags)
		if a.ScaleInv == nil {
			return c.run(l.Stream, g)
		}
		inv := a.ScaleInv
		return c.runAfter(l.Stream, g, nil, func() error { return f8WriteInv(inv, []float32{a.Scale}) })
	}
	ps, err := DevicePtr(a.Scales)
	if err != nil {
		return err
	}
	var scales []float32
	pre := func() error {
		var err error
		scales, err = f8ReadScales(a.Scales, OpQuantize.name, "Scales")
		return err
	}
	var post func() error
	if inv := a.ScaleInv; inv != nil {
		post = func() error { return f8WriteInv(inv, scales) }
	}
	return LaunchGPUAfter(l.Stream, []*GPULaunch{f8GPULaunch(rt, ptx.F8Quantize, p[0], p[1], ps, a.Rows, a.Cols, flags)}, pre, post)
}

func ptxDequantizeLaunch(_ context.Context, l *Launch, a *DequantizeArgs) error {
	p, err := sgPtrs(a.Y, a.Q)
	if err != nil {
		return err
	}
	rt, flags := l.Runtime, f8Flags(a.Q.DType(), tile.Saturate, a.Gran)
	if a.ScaleInv == nil { // per tensor, scale 1 (ops checked it)
		c, err := f8ConstFor(rt, 1)
		if err != nil {
			return err
		}
		return c.run(l.Stream, f8GPULaunch(rt, ptx.F8Dequantize, p[0], p[1], c.addr, a.Rows, a.Cols, flags))
	}
	ps, err := DevicePtr(a.ScaleInv)
	if err != nil {
		return err
	}
	pre := func() error {
		_, err := f8ReadScales(a.ScaleInv, OpDequantize.name, "ScaleInv")
		return err
	}
	return LaunchGPUAfter(l.Stream, []*GPULaunch{f8GPULaunch(rt, ptx.F8Dequantize, p[0], p[1], ps, a.Rows, a.Cols, flags)}, pre, nil)
}

// f8ConstCount is the number of distinct scale constants a runtime keeps
// in device memory; a call needing another one allocates it for itself.
const f8ConstCount = 1024

// f8Consts are a runtime's scale constants: 4-byte float32 slots written
// once, before their first launch, and never changed, so launches on any
// stream may read them with no ordering.
type f8Consts struct {
	mu   sync.Mutex
	mem  backend.Memory
	base uint64
	at   map[uint32]uint64 // value bits → device address
}

var f8ConstTable struct {
	mu sync.Mutex
	m  map[*Runtime]*f8Consts
}

// f8Const is a device address holding a scale; free, when set, releases a
// one-call allocation once the launch using it has finished.
type f8Const struct {
	addr uint64
	free backend.Memory
}

// run launches g on s, then releases a one-call constant.
func (c f8Const) run(s *Stream, g *GPULaunch) error {
	if err := LaunchGPU(s, g); err != nil || c.free == nil {
		if err != nil && c.free != nil {
			_ = c.free.Free()
		}
		return err
	}
	return s.Enqueue(c.free.Free) // after the kernel: host tasks wait for the device
}

// runAfter is LaunchGPUAfter, then releases a one-call constant.
func (c f8Const) runAfter(s *Stream, g *GPULaunch, pre, post func() error) error {
	if err := LaunchGPUAfter(s, []*GPULaunch{g}, pre, post); err != nil {
		if c.free != nil {
			_ = c.free.Free()
		}
		return err
	}
	if c.free == nil {
		return nil
	}
	m := c.free
	return s.Enqueue(m.Free) // after the kernel: host tasks wait for the device
}

// f8ConstFor returns a device address holding v for rt.
func f8ConstFor(rt *Runtime, v float32) (f8Const, error) {
	t := &f8ConstTable
	t.mu.Lock()
	cs := t.m[rt]
	if cs == nil {
		for r := range t.m {
			if r.closed.Load() {
				delete(t.m, r)
			}
		}
		if t.m == nil {
			t.m = map[*Runtime]*f8Consts{}
		}
		cs = &f8Consts{at: map[uint32]uint64{}}
		t.m[rt] = cs
	}
	t.mu.Unlock()

	bits := math.Float32bits(v)
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], bits)
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if a, ok := cs.at[bits]; ok {
		return f8Const{addr: a}, nil
	}
	if cs.mem == nil {
		m, err := rt.be.Alloc(4 * f8ConstCount)
		if err != nil {
			return f8Const{}, err
		}
		dm, ok := m.(backend.DeviceMemory)
		if !ok {
			_ = m.Free()
			return f8Const{}, fmt.Errorf("tcrt: float8: scale constants need device memory: %w", ErrUnsupported)
		}
		cs.mem, cs.base = m, dm.DevicePtr()
	}
	if n := len(cs.at); n < f8ConstCount {
		// Synchronous: the value is on the device before any launch sees
		// its address.
		if err := cs.mem.Write(context.Background(), 4*n, b[:]); err != nil {
			return f8Const{}, err
		}
		a := cs.base + 4*uint64(n)
		cs.at[bits] = a
		return f8Const{addr: a}, nil
	}
	m, err := rt.be.Alloc(4)
	if err != nil {
		return f8Const{}, err
	}
	dm, ok := m.(backend.DeviceMemory)
	if !ok {
		_ = m.Free()
		return f8Const{}, fmt.Errorf("tcrt: float8: scale constants need device memory: %w", ErrUnsupported)
	}
	if err := m.Write(context.Background(), 0, b[:]); err != nil {
		_ = m.Free()
		return f8Const{}, err
	}
	return f8Const{addr: dm.DevicePtr(), free: m}, nil
}
