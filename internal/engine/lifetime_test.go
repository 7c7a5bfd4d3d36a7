package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/tile"
)

// TestStreamUseDefersFree: work enqueued by hand that holds a buffer with
// Stream.Use keeps its memory past Close (marked closed at once, freed when
// the work is done); new calls on the closed buffer are ErrClosed; Use of
// a closed buffer is ErrClosed.
func TestStreamUseDefersFree(t *testing.T) {
	for _, k := range []engine.BackendKind{engine.BackendCPU, engine.BackendSim} {
		rt := open(t, engine.Options{Backend: k})
		ctx := context.Background()
		b, err := rt.Alloc(tile.F32, 256)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.WriteFloat32(ctx, []float32{7}); err != nil {
			t.Fatal(err)
		}
		s, err := rt.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		got := make(chan int, 1)
		if err := s.Enqueue(func() error {
			<-release
			n := 0
			if h := b.Host(); h != nil { // the CPU: host memory
				n = len(h)
			} else if b.Bytes() > 0 { // a device: the memory must still be there to read
				n = b.Bytes()
			}
			got <- n
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.Use(b); err != nil {
			t.Fatal(err)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if !b.Closed() {
			t.Fatalf("%s: Close did not mark the buffer closed", k)
		}
		if err := b.WriteFloat32(ctx, []float32{1}); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("%s: write after Close: %v; want ErrClosed", k, err)
		}
		if err := s.Use(b); !errors.Is(err, engine.ErrClosed) {
			t.Errorf("%s: Use of a closed buffer: %v; want ErrClosed", k, err)
		}
		if st := rt.Stats(); st.LiveBuffers != 1 || st.Frees != 0 {
			t.Errorf("%s: the held buffer was freed at Close: %+v", k, st)
		}
		close(release)
		if err := s.Synchronize(ctx); err != nil {
			t.Fatal(err)
		}
		if n := <-got; k == engine.BackendCPU && n != 1024 {
			t.Errorf("%s: the work saw %d host bytes; want 1024", k, n)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if st := rt.Stats(); st.LiveBuffers != 0 || st.Frees != 1 {
			t.Errorf("%s: after the holder finished: %+v; want the buffer freed", k, st)
		}
	}
}
