package runtime_test

import (
	"context"
	"fmt"

	"github.com/tcrt-go/tcrt/runtime"
)

// ExampleOpen opens the CPU backend, allocates a buffer and reads it back.
func ExampleOpen() {
	rt, err := runtime.Open(runtime.Options{Backend: runtime.BackendCPU})
	if err != nil {
		panic(err)
	}
	defer rt.Close()
	buf, _ := rt.Alloc(runtime.BF16, 3)
	defer buf.Close()
	ctx := context.Background()
	buf.WriteFloat32(ctx, []float32{1, 1.00390625, 3.14159})
	out := make([]float32, 3)
	buf.ReadFloat32(ctx, out)
	fmt.Println(rt.Backend(), out)
	// Output: cpu [1 1 3.140625]
}

// ExampleStream enqueues work asynchronously and times it with events.
func ExampleStream() {
	rt, _ := runtime.Open(runtime.Options{Backend: runtime.BackendCPU})
	defer rt.Close()
	s, _ := rt.NewStream()
	defer s.Close()
	start, _ := s.Record()
	n := 0
	s.Enqueue(func() error { n += 41; return nil })
	s.Enqueue(func() error { n++; return nil })
	end, _ := s.Record()
	if err := s.Synchronize(context.Background()); err != nil {
		panic(err)
	}
	_, err := runtime.Elapsed(start, end)
	fmt.Println(n, err)
	// Output: 42 <nil>
}
