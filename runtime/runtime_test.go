package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/tcrt-go/tcrt/runtime"
	_ "github.com/tcrt-go/tcrt/runtime/sim" // the simulated GPU, as package ops links it
)

// facadeBackends are the backends the facade tests run on: the CPU and the
// simulated GPU (device memory the host cannot address).
var facadeBackends = []runtime.BackendKind{runtime.BackendCPU, runtime.BackendSim}

func open(t *testing.T, k runtime.BackendKind) *runtime.Runtime {
	t.Helper()
	rt, err := runtime.Open(runtime.Options{Backend: k})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// TestBufferRoundTrip writes fresh random bits through every host path of
// the facade (WriteRaw, Write, WriteFloat32At) into buffers of odd lengths
// and reads them back into poisoned slices, bit for bit.
func TestBufferRoundTrip(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range facadeBackends {
		rt := open(t, k)
		for _, n := range []int{1, 7, 129, 1000} {
			b, err := rt.Alloc(runtime.F32, n)
			if err != nil {
				t.Fatal(err)
			}
			src := make([]uint32, n)
			for i := range src {
				src[i] = rng.Uint32()
			}
			if err := runtime.WriteRaw(ctx, b, src); err != nil {
				t.Fatal(err)
			}
			got := make([]uint32, n)
			for i := range got {
				got[i] = 0x7fc0dead // a NaN no write produces
			}
			if err := runtime.ReadRaw(ctx, b, got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, src) {
				t.Fatalf("%s n=%d: ReadRaw differs from WriteRaw", k, n)
			}
			// float32 at an element offset: the tail of the buffer
			off := n / 2
			vals := make([]float32, n-off)
			for i := range vals {
				vals[i] = float32(rng.NormFloat64())
			}
			vals[0] = float32(math.Copysign(0, -1))
			if err := b.WriteFloat32At(ctx, off, vals); err != nil {
				t.Fatal(err)
			}
			back := make([]float32, n-off)
			for i := range back {
				back[i] = float32(math.NaN())
			}
			if err := b.ReadFloat32At(ctx, off, back); err != nil {
				t.Fatal(err)
			}
			for i := range back {
				if math.Float32bits(back[i]) != math.Float32bits(vals[i]) {
					t.Fatalf("%s n=%d: element %d: %v, want %v", k, n, off+i, back[i], vals[i])
				}
			}
			// raw bytes: the head is unchanged by the offset write
			head := make([]byte, 4*off)
			if err := b.Read(ctx, 0, head); err != nil {
				t.Fatal(err)
			}
			for i := range off {
				if w := src[i]; uint32(head[4*i])|uint32(head[4*i+1])<<8|uint32(head[4*i+2])<<16|uint32(head[4*i+3])<<24 != w {
					t.Fatalf("%s n=%d: element %d changed by a write from %d", k, n, i, off)
				}
			}
			if b.Len() != n || b.Bytes() != 4*n || b.DType() != runtime.F32 || b.Rank() != 1 || b.Dim(0) != n {
				t.Fatalf("%s: buffer of %d: Len %d Bytes %d DType %v Rank %d", k, n, b.Len(), b.Bytes(), b.DType(), b.Rank())
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestHandleIdentity checks that one engine object has one handle: what
// Alloc, NewStream and DefaultStream return is what the accessors give
// back, so == works.
func TestHandleIdentity(t *testing.T) {
	for _, k := range facadeBackends {
		rt := open(t, k)
		a, errA := rt.Alloc(runtime.BF16, 3, 5)
		b, errB := rt.Alloc(runtime.BF16, 3, 5)
		s, errS := rt.NewStream()
		if err := errors.Join(errA, errB, errS); err != nil {
			t.Fatal(err)
		}
		d1, d2 := rt.DefaultStream(), rt.DefaultStream()
		switch {
		case a == b:
			t.Fatalf("%s: two buffers share a handle", k)
		case a.Runtime() != rt || b.Runtime() != rt:
			t.Fatalf("%s: Buffer.Runtime is not the runtime Open returned", k)
		case s.Runtime() != rt || rt.DefaultStream().Runtime() != rt:
			t.Fatalf("%s: Stream.Runtime is not the runtime Open returned", k)
		case d1 != d2 || d1 == s:
			t.Fatalf("%s: DefaultStream's handle changes, or is a new stream's", k)
		}
		other := open(t, k)
		if other.DefaultStream() == rt.DefaultStream() || other == rt {
			t.Fatalf("%s: two runtimes share handles", k)
		}
	}
}

// TestStreamsAndEvents orders work on two streams with an event, reports
// an enqueued error once from Synchronize, and times the work.
func TestStreamsAndEvents(t *testing.T) {
	ctx := context.Background()
	for _, k := range facadeBackends {
		rt := open(t, k)
		s1, err1 := rt.NewStream()
		s2, err2 := rt.NewStream()
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		var order []int
		release := make(chan struct{})
		start, errStart := s1.Record()
		errQ := s1.Enqueue(func() error { <-release; order = append(order, 1); return nil })
		ev, errEv := s1.Record()
		errW := s2.WaitEvent(ev)
		errQ2 := s2.Enqueue(func() error { order = append(order, 2); return nil })
		boom := fmt.Errorf("boom")
		errQ3 := s2.Enqueue(func() error { return boom })
		end, errEnd := s2.Record()
		if err := errors.Join(errStart, errQ, errEv, errW, errQ2, errQ3, errEnd); err != nil {
			t.Fatal(err)
		}
		if ev.Done() {
			t.Fatalf("%s: the event completed before the work ahead of it", k)
		}
		close(release)
		if err := s2.Synchronize(ctx); !errors.Is(err, boom) {
			t.Fatalf("%s: Synchronize: %v, want the enqueued error", k, err)
		}
		if err := s2.Synchronize(ctx); err != nil {
			t.Fatalf("%s: the error was reported twice: %v", k, err)
		}
		if err := ev.Wait(ctx); err != nil || !ev.Done() || !reflect.DeepEqual(order, []int{1, 2}) {
			t.Fatalf("%s: Wait %v, Done %v, order %v; want [1 2]", k, err, ev.Done(), order)
		}
		if d, err := runtime.Elapsed(start, end); err != nil || d < 0 {
			t.Fatalf("%s: Elapsed %v, %v", k, d, err)
		}
		if err := errors.Join(s1.Close(), s2.Close(), rt.Synchronize(ctx)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNilHandles calls every method of nil handles and of zero handles not
// made by the runtime: none panics, every error wraps ErrArgument or
// ErrClosed, every other result is zero (Closed is true).
func TestNilHandles(t *testing.T) {
	errType := reflect.TypeFor[error]()
	ctxType := reflect.TypeFor[context.Context]()
	for _, v := range []any{
		(*runtime.Runtime)(nil), (*runtime.Buffer)(nil), (*runtime.Stream)(nil), (*runtime.Event)(nil),
		&runtime.Runtime{}, &runtime.Buffer{}, &runtime.Stream{}, &runtime.Event{},
	} {
		recv := reflect.ValueOf(v)
		if recv.NumMethod() == 0 {
			t.Fatalf("%T has no methods", v)
		}
		for i := range recv.NumMethod() {
			name := fmt.Sprintf("%T.%s", v, recv.Type().Method(i).Name)
			fn := recv.Method(i)
			in := make([]reflect.Value, fn.Type().NumIn())
			for j := range in {
				if pt := fn.Type().In(j); pt == ctxType {
					in[j] = reflect.ValueOf(context.Background())
				} else {
					in[j] = reflect.Zero(pt)
				}
			}
			var out []reflect.Value
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s panicked: %v", name, r)
					}
				}()
				if fn.Type().IsVariadic() {
					out = fn.CallSlice(in)
				} else {
					out = fn.Call(in)
				}
			}()
			for k, o := range out {
				switch {
				case fn.Type().Out(k) == errType:
					if err, _ := o.Interface().(error); !errors.Is(err, runtime.ErrArgument) && !errors.Is(err, runtime.ErrClosed) {
						t.Errorf("%s: error %v; want one wrapping ErrArgument or ErrClosed", name, err)
					}
				case !o.IsZero() && recv.Type().Method(i).Name != "Closed":
					t.Errorf("%s: result %d is %v; want the zero value", name, k, o)
				}
			}
		}
	}
	ctx := context.Background()
	if _, err := runtime.Elapsed(nil, &runtime.Event{}); !errors.Is(err, runtime.ErrArgument) {
		t.Errorf("Elapsed(nil, zero event): %v", err)
	}
	if err := runtime.WriteRaw(ctx, nil, []float32{1}); !errors.Is(err, runtime.ErrArgument) {
		t.Errorf("WriteRaw(nil buffer): %v", err)
	}
	if err := runtime.ReadRaw(ctx, &runtime.Buffer{}, []float32{1}); !errors.Is(err, runtime.ErrArgument) && !errors.Is(err, runtime.ErrClosed) {
		t.Errorf("ReadRaw(zero buffer): %v", err)
	}
}

// TestClosedHandles checks that closed buffers, streams and runtimes give
// ErrClosed and write nothing.
func TestClosedHandles(t *testing.T) {
	ctx := context.Background()
	for _, k := range facadeBackends {
		rt, err := runtime.Open(runtime.Options{Backend: k})
		if err != nil {
			t.Fatal(err)
		}
		b, errB := rt.FromFloat32(ctx, runtime.F32, []float32{1, 2, 3})
		kept, errK := rt.FromFloat32(ctx, runtime.F32, []float32{4, 5, 6})
		s, errS := rt.NewStream()
		if err := errors.Join(errB, errK, errS); err != nil {
			t.Fatal(err)
		}
		if err := b.Close(); err != nil || !b.Closed() {
			t.Fatalf("%s: Close %v, Closed %v", k, err, b.Closed())
		}
		if err := b.WriteFloat32(ctx, []float32{9}); !errors.Is(err, runtime.ErrClosed) {
			t.Fatalf("%s: write to a closed buffer: %v", k, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Record(); !errors.Is(err, runtime.ErrClosed) {
			t.Fatalf("%s: Record on a closed stream: %v", k, err)
		}
		if err := rt.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := rt.Alloc(runtime.F32, 1); !errors.Is(err, runtime.ErrClosed) {
			t.Fatalf("%s: Alloc on a closed runtime: %v", k, err)
		}
		if _, err := rt.NewStream(); !errors.Is(err, runtime.ErrClosed) {
			t.Fatalf("%s: NewStream on a closed runtime: %v", k, err)
		}
		got := []float32{7}
		if err := kept.ReadFloat32(ctx, got); !errors.Is(err, runtime.ErrClosed) || got[0] != 7 {
			t.Fatalf("%s: read from a buffer of a closed runtime: %v, dst %v", k, err, got)
		}
		if err := rt.Close(); err != nil {
			t.Fatalf("%s: second Close: %v", k, err)
		}
	}
}
