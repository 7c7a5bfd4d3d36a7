package engine_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/tcrt-go/tcrt/internal/engine"
	"github.com/tcrt-go/tcrt/tile"
)

// TestTransferPartialElement: a write or read of bytes that are not whole
// elements is ErrArgument (a malformed request, checked before the bounds),
// whatever the offset; a whole-element request past the end is ErrBounds;
// nothing is written either way.
func TestTransferPartialElement(t *testing.T) {
	for _, k := range []engine.BackendKind{engine.BackendCPU, engine.BackendSim} {
		rt := open(t, engine.Options{Backend: k})
		ctx := context.Background()
		b, err := rt.Alloc(tile.F32, 4)
		if err != nil {
			t.Fatal(err)
		}
		want := bytes.Repeat([]byte{0x5a}, 16)
		if err := b.Write(ctx, 0, want); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			off, n int
			want   error
		}{{0, 3, engine.ErrArgument}, {3, 3, engine.ErrArgument}, {4, 3, engine.ErrArgument}, {0, 17, engine.ErrArgument},
			{1, 16, engine.ErrBounds}, {4, 4, engine.ErrBounds}, {5, 0, engine.ErrBounds}} {
			if err := b.Write(ctx, c.off, make([]byte, c.n)); !errors.Is(err, c.want) {
				t.Errorf("%s: write %d bytes at %d: %v; want %v", k, c.n, c.off, err, c.want)
			}
			if err := b.Read(ctx, c.off, make([]byte, c.n)); !errors.Is(err, c.want) {
				t.Errorf("%s: read %d bytes at %d: %v; want %v", k, c.n, c.off, err, c.want)
			}
		}
		got := make([]byte, 16)
		if err := b.Read(ctx, 0, got); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: the buffer changed: %x, %v", k, got, err)
		}
	}
}
