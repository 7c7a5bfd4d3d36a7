package ops_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/tcrt-go/tcrt/ops"
	"github.com/tcrt-go/tcrt/runtime"
	"github.com/tcrt-go/tcrt/tile"
)

// gatherCall is a row gather of 8 rows from a 40×16 f32 table; bad puts an
// out-of-range index in it (ErrBounds).
func gatherCall(t *testing.T, rt *runtime.Runtime, rng *rand.Rand, bad bool) (dst *runtime.Buffer, want []byte, run func(ctx context.Context, s *runtime.Stream) error) {
	t.Helper()
	const rows, cols, n = 40, 16, 8
	table := randBytes(rng, 4*rows*cols)
	mem := bufWith(t, rt, tile.F32, table, rows, cols)
	idx := make([]byte, 4*n)
	want = make([]byte, 4*n*cols)
	for i := range n {
		r := rng.IntN(rows)
		binary.LittleEndian.PutUint32(idx[4*i:], uint32(r))
		copy(want[4*cols*i:], table[4*cols*r:4*cols*(r+1)])
	}
	if bad {
		binary.LittleEndian.PutUint32(idx[4*3:], rows+5)
	}
	it := ops.DenseTile(bufWith(t, rt, tile.S32, idx, n, 1))
	dst = alloc(t, rt, tile.F32, n, cols)
	return dst, want, func(ctx context.Context, s *runtime.Stream) error {
		return ops.MGather(ctx, rt, ops.DenseTile(dst), mem, it, &ops.GatherOptions{Stream: s})
	}
}

// TestErrorsBelongToStreams: an async fault is reported by the Synchronize
// of the stream it ran on (once), or by Runtime.Synchronize, and never by
// an unrelated transfer, another stream or a synchronous call; a
// synchronous call reports its own error; work queued after a failed op
// still runs.
func TestErrorsBelongToStreams(t *testing.T) {
	forEachBackend(t, func(t *testing.T, rt *runtime.Runtime) {
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(2, 22))
		other := alloc(t, rt, tile.F32, 64)
		transfers := func(when string) {
			t.Helper()
			if err := other.WriteFloat32(ctx, randF32(rng, 64)); err != nil {
				t.Errorf("%s: an unrelated Write: %v", when, err)
			}
			if err := other.ReadFloat32(ctx, make([]float32, 64)); err != nil {
				t.Errorf("%s: an unrelated Read: %v", when, err)
			}
		}
		s, err := rt.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		s2, err := rt.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()

		// An async fault on s, then a good gather queued after it.
		_, _, bad := gatherCall(t, rt, rng, true)
		gd, gwant, good := gatherCall(t, rt, rng, false)
		if err := bad(ctx, s); err != nil {
			t.Fatalf("async enqueue: %v", err)
		}
		if err := good(ctx, s); err != nil {
			t.Fatalf("async enqueue after it: %v", err)
		}
		transfers("after the async fault")
		if err := s2.Synchronize(ctx); err != nil {
			t.Errorf("another stream's Synchronize: %v", err)
		}
		if err := rt.DefaultStream().Synchronize(ctx); err != nil {
			t.Errorf("the default stream's Synchronize: %v", err)
		}
		if err := s.Synchronize(ctx); !errors.Is(err, ops.ErrBounds) {
			t.Errorf("s.Synchronize: %v; want the gather's ErrBounds", err)
		}
		if err := s.Synchronize(ctx); err != nil {
			t.Errorf("second s.Synchronize: %v; the fault is reported once", err)
		}
		if got := bytesOf(t, gd); !bytes.Equal(got, gwant) {
			t.Error("the op queued after the failed one did not run correctly")
		}

		// Runtime.Synchronize reports it too.
		_, _, bad = gatherCall(t, rt, rng, true)
		if err := bad(ctx, s); err != nil {
			t.Fatal(err)
		}
		transfers("after the second async fault")
		if err := rt.Synchronize(ctx); !errors.Is(err, ops.ErrBounds) {
			t.Errorf("rt.Synchronize: %v; want ErrBounds", err)
		}
		if err := s.Synchronize(ctx); err != nil {
			t.Errorf("s.Synchronize after rt.Synchronize took the error: %v", err)
		}

		// An async fault on the default stream stays its own, past a
		// synchronous call that succeeds.
		_, _, bad = gatherCall(t, rt, rng, true)
		if err := bad(ctx, rt.DefaultStream()); err != nil {
			t.Fatal(err)
		}
		gd, gwant, good = gatherCall(t, rt, rng, false)
		if err := good(ctx, nil); err != nil {
			t.Errorf("a good synchronous call after an async fault on the default stream: %v; want its own (nil)", err)
		}
		if got := bytesOf(t, gd); !bytes.Equal(got, gwant) {
			t.Error("the synchronous gather's output is wrong")
		}
		if err := rt.DefaultStream().Synchronize(ctx); !errors.Is(err, ops.ErrBounds) {
			t.Errorf("the default stream's Synchronize: %v; want the async ErrBounds", err)
		}

		// A failing synchronous call reports its own error, and only once.
		bd, _, bad := gatherCall(t, rt, rng, true)
		poison(t, bd)
		before := bytesOf(t, bd)
		if err := bad(ctx, nil); !errors.Is(err, ops.ErrBounds) {
			t.Errorf("a failing synchronous gather: %v; want ErrBounds", err)
		}
		if !bytes.Equal(bytesOf(t, bd), before) {
			t.Error("the failing gather wrote its output")
		}
		if err := rt.Synchronize(ctx); err != nil {
			t.Errorf("rt.Synchronize after the synchronous failure: %v; it was reported by the call", err)
		}
	})
}
