package engine

// Tests of the CUDA backend on a real GPU. Without a usable GPU and driver
// they skip, unless TCRT_REQUIRE_GPU=1 (scripts/gpu-run.sh sets it on a GPU
// host). scripts/gpu-build.sh builds them into a CGO-free test binary.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tcrt-go/tcrt/kernels/ptx"
	"github.com/tcrt-go/tcrt/tile"
)

func openCUDATest(t testing.TB, opts Options) *Runtime {
	t.Helper()
	opts.Backend = BackendCUDA
	rt, err := Open(opts)
	if err != nil {
		skipNoGPU(t, err)
		t.Fatalf("open cuda: %v", err)
	}
	t.Cleanup(func() {
		if err := rt.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return rt
}

// skipNoGPU skips t when err says there is no usable CUDA device, unless
// TCRT_REQUIRE_GPU=1.
func skipNoGPU(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrNoDevice) && os.Getenv("TCRT_REQUIRE_GPU") != "1" {
		t.Skip("no usable CUDA device:", err)
	}
}

func TestCUDADevices(t *testing.T) {
	devs, err := CUDADevices()
	if err != nil {
		skipNoGPU(t, err)
		t.Fatal(err)
	}
	if len(devs) == 0 {
		t.Fatal("no devices")
	}
	for _, d := range devs {
		t.Log(d)
		if d.Major < 3 || d.SMs <= 0 || d.MemoryBytes <= 0 || d.SharedPerBlock <= 0 || d.SharedPerBlockOptin < d.SharedPerBlock || d.L2CacheBytes <= 0 {
			t.Errorf("implausible attributes: %+v", d)
		}
	}
	rt := openCUDATest(t, Options{})
	if rt.Backend() != BackendCUDA || rt.Device().Name != devs[0].Name {
		t.Fatalf("runtime on %v", rt.Device())
	}
	if _, err := Open(Options{Backend: BackendCUDA, Device: len(devs)}); !errors.Is(err, ErrNoDevice) {
		t.Fatalf("open device %d: %v, want ErrNoDevice", len(devs), err)
	}
}

func TestCUDARoundTrip(t *testing.T) {
	ctx := context.Background()
	rt := openCUDATest(t, Options{})
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 7, 129, 1000, 1 << 20, 8 << 20, 2*(8<<20) + 3, 5*(8<<20)/2 + 1} { // around the backend's 8 MiB staging chunk
		b, err := rt.Alloc(tile.U8, n)
		if err != nil {
			t.Fatal(err)
		}
		zero := make([]byte, n)
		got := make([]byte, n)
		if err := b.Read(ctx, 0, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, zero) {
			t.Fatalf("%d bytes: fresh buffer not zeroed", n)
		}
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		if err := b.Write(ctx, 0, src); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			got[i] = 0xAA
		}
		if err := b.Read(ctx, 0, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, src) {
			t.Fatalf("%d bytes: round trip differs", n)
		}
		if n > 10 {
			part := make([]byte, 5)
			if err := b.Read(ctx, 3, part); err != nil || !bytes.Equal(part, src[3:8]) {
				t.Fatalf("%d bytes: read at offset: %v", n, err)
			}
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCUDAPool(t *testing.T) {
	rt := openCUDATest(t, Options{MemoryLimit: 256 << 20})
	a, err := rt.Alloc(tile.F32, 1000)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	b, err := rt.Alloc(tile.F32, 900)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s := rt.PoolStats()
	if s.CacheHits < 1 || s.Segments != 1 || s.LimitBytes != 256<<20 {
		t.Fatalf("pool %+v", s)
	}
	if _, err := rt.Alloc(tile.U8, 300<<20); !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("alloc above the limit: %v", err)
	}
	rt2 := openCUDATest(t, Options{})
	free := rt2.Device().MemoryBytes
	_, err = rt2.Alloc(tile.U8, int(free+(1<<30)))
	if !errors.Is(err, ErrOutOfMemory) || !strings.Contains(err.Error(), "CUDA_ERROR_OUT_OF_MEMORY") {
		t.Fatalf("alloc beyond the device: %v", err)
	}
	t.Log(err)
	if _, err := rt.TrimPool(); err != nil {
		t.Fatal(err)
	}
}

// f8Ref is the CPU reference of tcrt_f8_quantize for one element.
func f8Ref(x, scale float32, e5m2, nonsat bool) uint8 {
	if x != x {
		return uint8(math.Float32bits(x)>>24)&0x80 | 0x7F
	}
	mode := tile.Saturate
	if nonsat {
		mode = tile.NonSaturating
	}
	v := x * scale
	if e5m2 {
		return tile.F32ToE5M2(v, mode)
	}
	return tile.F32ToE4M3(v, mode)
}

func f8Input(rng *rand.Rand, n int) []float32 {
	specials := []float32{0, float32(math.Copysign(0, -1)), 448, 464, -464, 480, 57344, 61440, 1e-9, -1e-9, 2e-3, float32(math.Inf(1)),
		float32(math.Inf(-1)), float32(math.NaN()), -float32(math.NaN()), 1e30}
	x := make([]float32, n)
	for i := range x {
		switch rng.IntN(8) {
		case 0:
			x[i] = specials[rng.IntN(len(specials))]
		case 1:
			x[i] = math.Float32frombits(rng.Uint32())
		default:
			x[i] = float32(rng.NormFloat64() * math.Pow(2, float64(rng.IntN(40)-20)))
		}
	}
	return x
}

func TestCUDAF8(t *testing.T) {
	ctx := context.Background()
	rt := openCUDATest(t, Options{})
	rng := rand.New(rand.NewPCG(7, 8))
	img, err := ptx.F8().Select(rt.Device().SM())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("F8 module: %s (%s)", img.Kind, img.Reason)
	for _, shape := range [][2]int{{1, 1}, {1, 7}, {7, 129}, {129, 1000}, {1000, 1003}} {
		rows, cols := shape[0], shape[1]
		n := rows * cols
		x := f8Input(rng, n)
		for _, flags := range []uint32{0, ptx.F8E5M2, ptx.F8NonSaturating, ptx.F8E5M2 | ptx.F8NonSaturating, ptx.F8PerRow, ptx.F8PerRow | ptx.F8E5M2} {
			perRow := flags&ptx.F8PerRow != 0
			nscale := 1
			if perRow {
				nscale = rows
			}
			scales := make([]float32, nscale)
			for i := range scales {
				scales[i] = float32(math.Ldexp(1+rng.Float64(), rng.IntN(8)-4))
			}
			name := fmt.Sprintf("%dx%d/flags%d", rows, cols, flags)
			src, _ := rt.Alloc(tile.F32, n)
			dst, _ := rt.Alloc(tile.U8, n)
			sc, _ := rt.Alloc(tile.F32, nscale)
			back, _ := rt.Alloc(tile.F32, n)
			must(t, WriteRaw(ctx, src, x))
			must(t, WriteRaw(ctx, sc, scales))
			poison := bytes.Repeat([]byte{0xFF}, n)
			must(t, dst.Write(ctx, 0, poison))
			must(t, back.Write(ctx, 0, bytes.Repeat([]byte{0xFF}, 4*n)))
			launchF8(t, rt, ptx.F8Quantize, dst, src, sc, rows, cols, flags)
			got := make([]uint8, n)
			must(t, ReadRaw(ctx, dst, got))
			for i := range got {
				s := scales[0]
				if perRow {
					s = scales[i/cols]
				}
				want := f8Ref(x[i], s, flags&ptx.F8E5M2 != 0, flags&ptx.F8NonSaturating != 0)
				if got[i] != want {
					t.Fatalf("%s: quantize[%d] of %g·%g = %#02x, want %#02x", name, i, x[i], s, got[i], want)
				}
			}
			launchF8(t, rt, ptx.F8Dequantize, back, dst, sc, rows, cols, flags)
			y := make([]float32, n)
			must(t, ReadRaw(ctx, back, y))
			for i := range y {
				s := scales[0]
				if perRow {
					s = scales[i/cols]
				}
				d := tile.E4M3ToF32(got[i])
				if flags&ptx.F8E5M2 != 0 {
					d = tile.E5M2ToF32(got[i])
				}
				want := d * s
				if y[i] != want && !(y[i] != y[i] && want != want) {
					t.Fatalf("%s: dequantize[%d] of %#02x·%g = %g, want %g", name, i, got[i], s, y[i], want)
				}
			}
			for _, b := range []*Buffer{src, dst, sc, back} {
				b.Close()
			}
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func launchF8(t testing.TB, rt *Runtime, fn string, dst, src, sc *Buffer, rows, cols int, flags uint32) {
	t.Helper()
	g := f8Launch(t, rt, fn, dst, src, sc, rows, cols, flags)
	must(t, LaunchGPU(rt.DefaultStream(), g))
	must(t, rt.DefaultStream().Synchronize(context.Background()))
}

func f8Launch(t testing.TB, rt *Runtime, fn string, dst, src, sc *Buffer, rows, cols int, flags uint32) *GPULaunch {
	pd, err := DevicePtr(dst)
	must(t, err)
	ps, err := DevicePtr(src)
	must(t, err)
	pc, err := DevicePtr(sc)
	must(t, err)
	grid := ptx.F8Grid(int64(rows), int64(cols), flags&ptx.F8PerRow != 0, rt.Device().SMs)
	return &GPULaunch{Module: ptx.F8(), Func: fn, Grid: [3]int{grid}, Block: [3]int{ptx.F8Block},
		Params: []uint64{ptx.Ptr(pd), ptx.Ptr(ps), ptx.Ptr(pc), ptx.U64(uint64(rows)), ptx.U64(uint64(cols)), ptx.U32(flags)}}
}

func TestCUDALaunchErrors(t *testing.T) {
	rt := openCUDATest(t, Options{})
	s := rt.DefaultStream()
	if err := LaunchGPU(s, &GPULaunch{Module: ptx.F8(), Func: "x", Block: [3]int{2048}}); !errors.Is(err, ErrArgument) {
		t.Fatalf("2048 threads: %v", err)
	}
	must(t, LaunchGPU(s, &GPULaunch{Module: ptx.F8(), Func: "no_such_kernel"}))
	err := s.Synchronize(context.Background())
	if err == nil || !strings.Contains(err.Error(), "CUDA_ERROR_NOT_FOUND") {
		t.Fatalf("unknown function: %v", err)
	}
	// The stream stays usable.
	must(t, s.Synchronize(context.Background()))
}

func TestCUDAEventsAndCancel(t *testing.T) {
	ctx := context.Background()
	rt := openCUDATest(t, Options{})
	s, err := rt.NewStream()
	must(t, err)
	defer s.Close()
	const rows, cols = 4096, 4096
	src, _ := rt.Alloc(tile.F32, rows*cols)
	dst, _ := rt.Alloc(tile.U8, rows*cols)
	sc, _ := rt.Alloc(tile.F32, 1)
	must(t, WriteRaw(ctx, sc, []float32{1}))
	start, err := s.Record()
	must(t, err)
	g := f8Launch(t, rt, ptx.F8Quantize, dst, src, sc, rows, cols, 0)
	for range 20 {
		must(t, LaunchGPU(s, g))
	}
	end, err := s.Record()
	must(t, err)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Synchronize(cctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("synchronize with a cancelled context: %v", err)
	}
	tctx, tcancel := context.WithTimeout(ctx, time.Microsecond)
	_ = s.Synchronize(tctx) // may or may not time out; must not hang or fail otherwise
	tcancel()
	must(t, s.Synchronize(ctx))
	d, err := Elapsed(start, end)
	must(t, err)
	if d <= 0 {
		t.Fatalf("elapsed %v", d)
	}
	t.Logf("20 quantizes of %d elements: %v", rows*cols, d)
	// Events order streams.
	s2, err := rt.NewStream()
	must(t, err)
	defer s2.Close()
	must(t, s2.WaitEvent(end))
	must(t, s2.Synchronize(ctx))
	if !end.Done() {
		t.Fatal("event not done after a stream waiting on it synchronized")
	}
}

func TestCUDAHostFallback(t *testing.T) {
	ctx := context.Background()
	rt := openCUDATest(t, Options{})
	const m, n, k = 7, 129, 33
	rng := rand.New(rand.NewPCG(9, 10))
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = rng.Float32()*2 - 1
	}
	for i := range b {
		b[i] = rng.Float32()*2 - 1
	}
	ba, _ := rt.Alloc(tile.F32, m, k)
	bb, _ := rt.Alloc(tile.F32, k, n)
	bd, _ := rt.Alloc(tile.F32, m, n)
	must(t, ba.WriteFloat32(ctx, a))
	must(t, bb.WriteFloat32(ctx, b))
	args := &MatMulArgs{M: m, N: n, K: k, Batch: 1, Alpha: 1,
		A: Matrix{Buf: ba, Rows: m, Cols: k, LD: k, BatchStride: m * k},
		B: Matrix{Buf: bb, Rows: k, Cols: n, LD: n, BatchStride: k * n},
		D: Matrix{Buf: bd, Rows: m, Cols: n, LD: n, BatchStride: m * n}}
	e := rt.Explain(OpMatMul.name, args)
	t.Log(e)
	must(t, rt.Run(ctx, nil, OpMatMul.name, args))
	got := make([]float32, m*n)
	must(t, bd.ReadFloat32(ctx, got))
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var want float64
			for p := 0; p < k; p++ {
				want += float64(a[i*k+p]) * float64(b[p*n+j])
			}
			if math.Abs(float64(got[i*n+j])-want) > 1e-4 {
				t.Fatalf("D[%d,%d] = %g, want %g", i, j, got[i*n+j], want)
			}
		}
	}
}

// BenchmarkCUDAF8/<kernel>/<layout>/<format>/<rows>x<cols>/cuda reports GB/s
// (bytes read plus written), timed with device events.
func BenchmarkCUDAF8(b *testing.B) {
	rt := openCUDATest(b, Options{})
	ctx := context.Background()
	for _, sh := range [][2]int{{8192, 8192}, {16384, 4096}} {
		rows, cols := sh[0], sh[1]
		n := rows * cols
		f32, _ := rt.Alloc(tile.F32, n)
		u8, _ := rt.Alloc(tile.U8, n)
		sc, _ := rt.Alloc(tile.F32, rows)
		ones := make([]float32, rows)
		for i := range ones {
			ones[i] = 1
		}
		must(b, WriteRaw(ctx, sc, ones))
		for _, kc := range []struct {
			name     string
			fn       string
			dst, src *Buffer
		}{{"quantize", ptx.F8Quantize, u8, f32}, {"dequantize", ptx.F8Dequantize, f32, u8}} {
			for _, lay := range []struct {
				name  string
				flags uint32
			}{{"tensor", 0}, {"row", ptx.F8PerRow}} {
				for _, f := range []struct {
					name  string
					flags uint32
				}{{"e4m3", 0}, {"e5m2", ptx.F8E5M2}} {
					name := fmt.Sprintf("%s/%s/%s/%dx%d/cuda", kc.name, lay.name, f.name, rows, cols)
					b.Run(name, func(b *testing.B) {
						g := f8Launch(b, rt, kc.fn, kc.dst, kc.src, sc, rows, cols, lay.flags|f.flags)
						benchGPU(b, rt, func(s *Stream) error { return LaunchGPU(s, g) }, 5*int64(n))
					})
				}
			}
		}
		f32.Close()
		u8.Close()
		sc.Close()
	}
}

// benchGPU times b.N calls of launch between two events and reports GB/s
// for bytes moved per call.
func benchGPU(b *testing.B, rt *Runtime, launch func(*Stream) error, bytesPerCall int64) {
	ctx := context.Background()
	s := rt.DefaultStream()
	must(b, launch(s)) // warm up, load the module
	must(b, s.Synchronize(ctx))
	b.ResetTimer()
	start, err := s.Record()
	must(b, err)
	for i := 0; i < b.N; i++ {
		must(b, launch(s))
	}
	end, err := s.Record()
	must(b, err)
	must(b, s.Synchronize(ctx))
	d, err := Elapsed(start, end)
	must(b, err)
	b.ReportMetric(float64(bytesPerCall)*float64(b.N)/d.Seconds()/1e9, "GB/s")
}
